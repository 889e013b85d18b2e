-- Every document with text after its front matter has chunks (rejected documents are
-- not in documents: they are in rejects, with a reason).
WITH
front_matter AS (
    SELECT doc_id, max(char_end) AS fm_end FROM blocks WHERE kind = 'front_matter' GROUP BY doc_id
),
with_body AS (
    SELECT d.doc_id, d.path
    FROM documents AS d
    LEFT JOIN front_matter AS f USING (doc_id)
    WHERE trim(substr(d.text, coalesce(f.fm_end, 0) + 1), e' \t\r\n\f\v') <> ''
),
final AS (
    SELECT w.doc_id, w.path FROM with_body AS w ANTI JOIN chunks AS c USING (doc_id)
)
SELECT * FROM final ORDER BY path
