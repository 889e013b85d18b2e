-- Views over one published run. Set its folder first (DIR/runs/RUN_ID, named in DIR/CURRENT),
-- then read this file:
--   duckdb -c "SET VARIABLE mdchunk_out = 'out/sample/runs/RUN_ID'" -c ".read sql/views.sql"
CREATE OR REPLACE VIEW documents AS
    SELECT * FROM read_parquet(getvariable('mdchunk_out') || '/documents.parquet');
CREATE OR REPLACE VIEW blocks AS
    SELECT * FROM read_parquet(getvariable('mdchunk_out') || '/blocks.parquet');
CREATE OR REPLACE VIEW chunks AS
    SELECT * FROM read_parquet(getvariable('mdchunk_out') || '/chunks.parquet');
CREATE OR REPLACE VIEW rejects AS
    SELECT * FROM read_parquet(getvariable('mdchunk_out') || '/rejects.parquet');
CREATE OR REPLACE VIEW postings AS
    SELECT * FROM read_parquet(getvariable('mdchunk_out') || '/postings.parquet');
CREATE OR REPLACE VIEW runs AS
    SELECT * FROM read_parquet(getvariable('mdchunk_out') || '/runs.parquet');
