-- Block-kind mix.
WITH
final AS (
    SELECT kind, count(*) AS blocks, sum(est_tokens)::BIGINT AS est_tokens
    FROM blocks
    GROUP BY kind
)
SELECT * FROM final ORDER BY blocks DESC, kind
