-- Views over one mdchunk output folder. Set the folder first, then read this file:
--   duckdb -c "SET VARIABLE mdchunk_out = 'out/sample'" -c ".read sql/views.sql" -c "FROM chunks LIMIT 5"
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
