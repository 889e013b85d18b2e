-- Strategy and chunk-type mix.
WITH
final AS (
    SELECT strategy, chunk_type, count(*) AS chunks, avg(n_tokens) AS mean_tokens
    FROM chunks
    GROUP BY strategy, chunk_type
)
SELECT * FROM final ORDER BY chunks DESC, strategy, chunk_type
