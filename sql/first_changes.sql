-- The change set of the first run published into an output folder: every chunk is added.
-- Such a run writes no changes.parquet (it would copy chunks.parquet row for row).
CREATE OR REPLACE VIEW changes AS
    SELECT 'add' AS op, * FROM chunks;
