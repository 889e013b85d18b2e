-- The views of the optional tables, over a run that wrote them (chunkmill run --table
-- blocks --table postings), after views.sql:
--   duckdb -c "SET VARIABLE chunkmill_out = 'out/sample/published'" -c ".read sql/views.sql" \
--          -c ".read sql/optional_views.sql"
-- chunkmill's own commands make a table the run did not write in memory instead.
CREATE OR REPLACE VIEW blocks AS
    SELECT * FROM read_parquet(getvariable('chunkmill_out') || '/blocks.parquet');
CREATE OR REPLACE VIEW postings AS
    SELECT * FROM read_parquet(getvariable('chunkmill_out') || '/postings.parquet');
