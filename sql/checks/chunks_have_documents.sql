-- Every chunk belongs to a document that exists.
WITH
final AS (
    SELECT c.chunk_id, c.doc_id, c.path FROM chunks AS c ANTI JOIN documents AS d USING (doc_id)
)
SELECT * FROM final ORDER BY path, chunk_id
