-- The texts to count again with a real tokenizer: every text chunk's embed_text (image
-- chunks are 0 tokens by contract). Read by `mdchunk check/stats --tokenizer`, which counts
-- them and registers the counts as the relation `recounted` (chunk_id, real_tokens) for
-- over_cap.sql and by_folder.sql.
WITH
final AS (
    SELECT chunk_id, embed_text
    FROM chunks
    WHERE chunk_type <> 'image'
)
SELECT * FROM final ORDER BY chunk_id
