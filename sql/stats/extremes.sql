-- The $n largest and $n smallest text chunks, with where they are.
WITH
ranked AS (
    SELECT
        path, line_start, line_end, n_tokens, breadcrumb, chunk_id,
        row_number() OVER (ORDER BY n_tokens DESC, chunk_id) AS largest,
        row_number() OVER (ORDER BY n_tokens ASC, chunk_id) AS smallest
    FROM chunks
    WHERE chunk_type <> 'image'
),
final AS (
    SELECT 'largest' AS which, largest AS rank, path, line_start, line_end, n_tokens, breadcrumb
    FROM ranked WHERE largest <= $n
    UNION ALL
    SELECT 'smallest', smallest, path, line_start, line_end, n_tokens, breadcrumb
    FROM ranked WHERE smallest <= $n
)
SELECT * FROM final ORDER BY which, rank
