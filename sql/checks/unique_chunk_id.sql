-- Every chunk_id appears once.
WITH
final AS (
    SELECT chunk_id, count(*) AS copies, min(path) AS path
    FROM chunks
    GROUP BY chunk_id
    HAVING count(*) > 1
)
SELECT * FROM final ORDER BY copies DESC, chunk_id
