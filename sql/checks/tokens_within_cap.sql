-- No chunk's n_tokens exceeds the hard cap ($max_tokens of the policy).
WITH
final AS (
    SELECT chunk_id, path, line_start, n_tokens, $max_tokens AS max_tokens
    FROM chunks
    WHERE n_tokens > $max_tokens
)
SELECT * FROM final ORDER BY n_tokens DESC, chunk_id
