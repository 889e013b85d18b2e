-- No chunk text leaves a code fence open. Same rule as pipeline/fence.py: a line opens a
-- fence with 3+ backticks or tildes (after any indentation, '>' or a list marker, whose
-- number may be in any script's decimal digits; a backtick fence's info string has no
-- backtick); the fence closes at a line holding only 3+ of the same character, at least as
-- many. The fold carries the open fence ('' = none).
WITH
lines AS (
    SELECT chunk_id, path, line_start, regexp_split_to_array(text, '\r\n|\r|\n') AS lines
    FROM chunks
    WHERE contains(text, '```') OR contains(text, '~~~')
),
folded AS (
    SELECT chunk_id, path, line_start, list_reduce(lines, lambda open, line:
        CASE
            WHEN open = '' THEN coalesce(
                nullif(regexp_extract(line,
                    '^[ \t>]*(?:(?:[-*+]|\p{Nd}{1,9}[.)])[ \t]+)?(~{3,})', 1), ''),
                regexp_extract(line,
                    '^[ \t>]*(?:(?:[-*+]|\p{Nd}{1,9}[.)])[ \t]+)?(`{3,})[^`]*$', 1))
            WHEN regexp_matches(regexp_replace(line, '^[ \t>]*', ''),
                '^' || repeat(left(open, 1), length(open)) || '[' || left(open, 1) || ']*[ \t]*$')
                THEN ''
            ELSE open
        END, '') AS still_open
    FROM lines
),
final AS (
    SELECT chunk_id, path, line_start, still_open FROM folded WHERE still_open <> ''
)
SELECT * FROM final ORDER BY path, line_start
