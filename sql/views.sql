-- Views over one published run. Set its folder first (DIR/runs/RUN_ID, named in DIR/CURRENT),
-- then read this file (and optional_views.sql for a run written with --table):
--   duckdb -c "SET VARIABLE chunkmill_out = 'out/sample/runs/RUN_ID'" -c ".read sql/views.sql"
CREATE OR REPLACE VIEW documents AS
    SELECT * FROM read_parquet(getvariable('chunkmill_out') || '/documents.parquet');
CREATE OR REPLACE VIEW chunks AS
    SELECT * FROM read_parquet(getvariable('chunkmill_out') || '/chunks.parquet');
CREATE OR REPLACE VIEW rejects AS
    SELECT * FROM read_parquet(getvariable('chunkmill_out') || '/rejects.parquet');
CREATE OR REPLACE VIEW runs AS
    SELECT * FROM read_parquet(getvariable('chunkmill_out') || '/runs.parquet');
