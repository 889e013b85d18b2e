-- Sections cut into several chunks.
WITH
sections AS (
    SELECT doc_id, section_title, max(parts) AS parts
    FROM chunks
    WHERE is_split
    GROUP BY doc_id, section_title, header_level, breadcrumb[1]
),
final AS (
    SELECT
        (SELECT count(*) FROM chunks WHERE is_split) AS split_chunks,
        (SELECT count(*) FROM sections) AS split_sections,
        (SELECT coalesce(max(parts), 0) FROM sections) AS max_parts,
        (SELECT avg((is_split)::INTEGER) FROM chunks WHERE chunk_type <> 'image') AS share_split
)
SELECT * FROM final
