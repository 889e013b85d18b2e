-- The $n documents with the most chunks (ties by path), or, when $paths is not empty, those
-- documents whatever their rank (to show one run's top documents in another run).
WITH
per_doc AS (
    SELECT
        path,
        count(*) AS chunks,
        count_if(is_split)::BIGINT AS split_chunks,
        sum(n_tokens)::BIGINT AS tokens,
        max(n_tokens) AS largest
    FROM chunks
    GROUP BY path
),
final AS (
    SELECT * FROM per_doc
    WHERE CASE WHEN len($paths::VARCHAR[]) = 0 THEN true
               ELSE list_contains($paths::VARCHAR[], path) END
    ORDER BY chunks DESC, path
    LIMIT CASE WHEN len($paths::VARCHAR[]) = 0 THEN $n ELSE len($paths::VARCHAR[]) END
)
SELECT * FROM final ORDER BY chunks DESC, path
