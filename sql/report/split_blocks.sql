-- Blocks cut into parts because they alone passed the budget, per block kind: how many
-- blocks of the kind there are, how many were cut, and the number of parts of each cut
-- block (a part is a distinct `block_id@offset` in some chunk's block_ids; overlap repeats
-- a part in two chunks but counts it once). Block ids repeat across documents, so blocks
-- are matched within their document.
WITH
parts AS (
    SELECT DISTINCT doc_id, unnest(block_ids) AS part_id FROM chunks
),
cut AS (
    SELECT doc_id, split_part(part_id, '@', 1) AS block_id, count(*) AS parts
    FROM parts
    WHERE contains(part_id, '@')
    GROUP BY ALL
),
kinds AS (
    SELECT b.kind, count(*) AS blocks, count(c.parts) AS split_blocks,
           list(c.parts ORDER BY c.parts) FILTER (WHERE c.parts IS NOT NULL) AS parts
    FROM blocks AS b
    LEFT JOIN cut AS c USING (doc_id, block_id)
    GROUP BY b.kind
),
final AS (
    SELECT kind, blocks, split_blocks, split_blocks / blocks AS share_split,
           coalesce(parts, []) AS parts, coalesce(list_max(parts), 0) AS max_parts
    FROM kinds
)
SELECT * FROM final ORDER BY split_blocks DESC, blocks DESC, kind
