-- Every document with text after its front matter has chunks (rejected documents are
-- not in documents: they are in rejects, with a reason). Whitespace is what Python's
-- str.isspace() calls whitespace (the parser's test for an empty document): ASCII
-- whitespace, FS..US, NEL and Unicode separators (\p{Z}: NBSP, U+2000..U+200A, U+2028, ...).
WITH
front_matter AS (
    SELECT doc_id, max(char_end) AS fm_end FROM blocks WHERE kind = 'front_matter' GROUP BY doc_id
),
with_body AS (
    SELECT d.doc_id, d.path
    FROM documents AS d
    LEFT JOIN front_matter AS f USING (doc_id)
    WHERE NOT regexp_full_match(
        substr(d.text, coalesce(f.fm_end, 0) + 1),
        '[\t\n\x{0b}\f\r\x{1c}-\x{1f}\x{85}\p{Z}]*')
),
final AS (
    SELECT w.doc_id, w.path FROM with_body AS w ANTI JOIN chunks AS c USING (doc_id)
)
SELECT * FROM final ORDER BY path
