-- How much went in and came out.
WITH
final AS (
    SELECT
        (SELECT count(*) FROM documents) AS documents,
        (SELECT count(*) FROM blocks) AS blocks,
        (SELECT count(*) FROM chunks) AS chunks,
        (SELECT count(*) FROM rejects) AS rejects,
        (SELECT count(*) FROM chunks WHERE chunk_type <> 'image') AS text_chunks,
        (SELECT count(*) FROM chunks WHERE chunk_type = 'image') AS image_chunks
)
SELECT * FROM final
