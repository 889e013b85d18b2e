-- Token size histogram of text chunks: $bins equal-width bins from 0 to $max_tokens.
WITH
bins AS (
    SELECT range AS bin FROM range($bins)
),
counted AS (
    SELECT least(floor(n_tokens * $bins / $max_tokens), $bins - 1)::BIGINT AS bin, count(*) AS n
    FROM chunks
    WHERE chunk_type <> 'image'
    GROUP BY 1
),
final AS (
    SELECT
        bin,
        (bin * $max_tokens / $bins)::BIGINT AS lo,
        ((bin + 1) * $max_tokens / $bins)::BIGINT AS hi,
        coalesce(n, 0) AS chunks
    FROM bins
    LEFT JOIN counted USING (bin)
)
SELECT * FROM final ORDER BY bin
