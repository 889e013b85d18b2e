-- A sample of $n text chunks for recounting embed_text with a real tokenizer: the first $n
-- by chunk_id (a hash, so the sample is spread over the corpus and the same every time).
WITH
final AS (
    SELECT
        chunk_id,
        path,
        CASE WHEN contains(path, '/') THEN split_part(path, '/', 1) ELSE '(top level)' END
            AS folder,
        n_tokens,
        token_source,
        embed_text
    FROM chunks
    WHERE chunk_type <> 'image'
    ORDER BY chunk_id
    LIMIT $n
)
SELECT * FROM final ORDER BY chunk_id
