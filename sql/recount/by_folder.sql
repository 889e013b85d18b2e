-- Real tokens (`recounted`) against the chunks' own n_tokens, per top folder of the input
-- (the first component of path; '.' for files at the top): a ratio above 1 means n_tokens
-- under-counts that tokenizer there. $max_tokens: the policy's cap.
WITH
joined AS (
    SELECT
        CASE WHEN contains(c.path, '/') THEN split_part(c.path, '/', 1) ELSE '.' END AS folder,
        c.n_tokens,
        r.real_tokens
    FROM recounted AS r
    JOIN chunks AS c USING (chunk_id)
),
final AS (
    SELECT
        folder,
        count(*) AS chunks,
        sum(n_tokens)::BIGINT AS n_tokens,
        sum(real_tokens)::BIGINT AS real_tokens,
        round(sum(real_tokens) / greatest(sum(n_tokens), 1), 3) AS ratio,
        round(max(real_tokens / greatest(n_tokens, 1)), 3) AS max_ratio,
        count(*) FILTER (WHERE real_tokens > $max_tokens) AS over_cap
    FROM joined
    GROUP BY folder
)
SELECT * FROM final ORDER BY folder
