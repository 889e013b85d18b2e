-- The texts to count again with a real tokenizer: every chunk's embed_text (an image
-- chunk's is its context header and alt text, embedded like any other). Read by `chunkmill
-- check/stats --tokenizer`, which counts them and registers the counts as the relation
-- `recounted` (chunk_id, real_tokens) for over_cap.sql and by_folder.sql.
WITH
final AS (
    SELECT chunk_id, embed_text
    FROM chunks
)
SELECT * FROM final ORDER BY chunk_id
