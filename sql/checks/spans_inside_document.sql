-- Every chunk span is a non-empty range inside its document's text.
WITH
spans AS (
    SELECT c.chunk_id, c.path, c.doc_id, unnest(c.spans) AS span
    FROM chunks AS c
),
final AS (
    SELECT s.chunk_id, s.path, s.span.start AS span_start, s.span."end" AS span_end,
           d.n_chars AS document_chars
    FROM spans AS s
    LEFT JOIN documents AS d USING (doc_id)
    WHERE d.doc_id IS NULL
       OR s.span.start < 0
       OR s.span."end" > d.n_chars
       OR s.span.start >= s.span."end"
)
SELECT * FROM final ORDER BY path, span_start
