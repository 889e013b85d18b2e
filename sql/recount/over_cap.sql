-- Chunks whose embed_text, counted by a real tokenizer (`recounted`), passes the policy's
-- cap ($max_tokens), largest excess first.
WITH
joined AS (
    SELECT c.chunk_id, c.path, c.line_start, c.line_end, c.n_tokens, r.real_tokens
    FROM recounted AS r
    JOIN chunks AS c USING (chunk_id)
),
final AS (
    SELECT
        chunk_id,
        path,
        line_start,
        line_end,
        n_tokens,
        real_tokens,
        round(100.0 * (real_tokens - $max_tokens) / $max_tokens, 1) AS over_pct
    FROM joined
    WHERE real_tokens > $max_tokens
)
SELECT * FROM final ORDER BY real_tokens DESC, chunk_id
