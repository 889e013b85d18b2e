-- Token size histogram of text chunks per strategy: $bins equal-width bins from 0 to
-- $max_tokens, every (strategy, bin) present. The bins are those of stats/histogram.sql
-- (chunks past $max_tokens count in the last bin), so summed over strategies they equal it.
WITH
strategies AS (
    SELECT DISTINCT strategy FROM chunks WHERE chunk_type <> 'image'
),
bins AS (
    SELECT range AS bin FROM range($bins)
),
counted AS (
    SELECT
        strategy,
        least(floor(n_tokens * $bins / $max_tokens), $bins - 1)::BIGINT AS bin,
        count(*) AS n
    FROM chunks
    WHERE chunk_type <> 'image'
    GROUP BY ALL
),
final AS (
    SELECT
        s.strategy,
        b.bin,
        (b.bin * $max_tokens / $bins)::BIGINT AS lo,
        ((b.bin + 1) * $max_tokens / $bins)::BIGINT AS hi,
        coalesce(c.n, 0) AS chunks
    FROM strategies AS s
    CROSS JOIN bins AS b
    LEFT JOIN counted AS c ON c.strategy = s.strategy AND c.bin = b.bin
)
SELECT * FROM final ORDER BY strategy, bin
