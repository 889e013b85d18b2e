-- Chunks per document (documents with no chunk count as 0).
WITH
per_doc AS (
    SELECT d.doc_id, count(c.chunk_id) AS n
    FROM documents AS d
    LEFT JOIN chunks AS c USING (doc_id)
    GROUP BY d.doc_id
),
final AS (
    SELECT
        min(n) AS min,
        quantile_disc(n, 0.50) AS p50,
        quantile_disc(n, 0.90) AS p90,
        max(n) AS max,
        avg(n) AS mean,
        count_if(n = 0)::BIGINT AS documents_without_chunks
    FROM per_doc
)
SELECT * FROM final
