-- Per top folder of the input (the first path component; files at the top level together):
-- tiny chunks (under $tiny_tokens, and under the policy's $min_tokens), chunks near the cap
-- (at least $near_cap tokens), chunks starting with a heading (the rule of
-- stats/tokens.sql) and the chunks that name their section: whose embed_text starts with a
-- heading, or whose first line (the context header) names the chunk's own section, its last
-- breadcrumb.
-- Text chunks only; the row with folder NULL is the whole run.
WITH
text_chunks AS (
    SELECT
        CASE WHEN contains(path, '/') THEN split_part(path, '/', 1) ELSE '(top level)' END
            AS folder,
        n_tokens,
        regexp_matches(ltrim(text, e'\r\n'), '^ {0,3}#{1,6}([ \t\r\n]|$)')
        OR regexp_matches(ltrim(text, e'\r\n'),
            '^[^\r\n]*[^\s][^\r\n]*(\r\n|\r|\n) {0,3}(=+|-+)[ \t]*(\r\n|\r|\n|$)')
            AS starts_with_heading,
        len(breadcrumb) > 0
        AND contains(split_part(ltrim(embed_text, e'\r\n'), e'\n', 1), breadcrumb[-1])
            AS header_names_section
    FROM chunks
    WHERE chunk_type <> 'image'
),
final AS (
    SELECT
        folder,
        count(*) AS chunks,
        count_if(n_tokens < $tiny_tokens)::BIGINT AS tiny,
        count_if(n_tokens < $min_tokens)::BIGINT AS under_min,
        count_if(n_tokens >= $near_cap)::BIGINT AS near_cap,
        count_if(starts_with_heading)::BIGINT AS heading_start,
        count_if(starts_with_heading OR header_names_section)::BIGINT AS names_section,
        avg((n_tokens < $tiny_tokens)::INTEGER) AS share_tiny,
        avg((n_tokens < $min_tokens)::INTEGER) AS share_under_min,
        avg((n_tokens >= $near_cap)::INTEGER) AS share_near_cap,
        avg(starts_with_heading::INTEGER) AS share_heading_start,
        avg((starts_with_heading OR header_names_section)::INTEGER) AS share_names_section
    FROM text_chunks
    GROUP BY GROUPING SETS ((folder), ())
)
SELECT * FROM final ORDER BY folder NULLS FIRST
