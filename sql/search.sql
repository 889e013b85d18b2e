-- Keyword search ranked by BM25 over the postings table (no extension needed).
-- score(chunk) = sum over query terms t of
--   idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl)),
--   idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))        (Lucene's BM25)
-- Collection statistics (N, avgdl, df) cover every chunk; filters apply after scoring.
-- Parameters: $query, $k1, $b, $limit; filters, NULL for none: $section (case-insensitive
-- text in any breadcrumb or headings element), $level (header_level), $chunk_type,
-- $path (GLOB), $fm_key and $fm_value (front matter key = value).
WITH
query_terms AS (
    SELECT DISTINCT unnest(regexp_extract_all(lower($query), '[\p{L}\p{N}]+')) AS term
),
collection AS (
    SELECT
        (SELECT count(*) FROM chunks) AS n_chunks,
        (SELECT sum(tf) FROM postings) / greatest((SELECT count(*) FROM chunks), 1) AS avgdl
),
matches AS (
    SELECT p.term, p.chunk_id, p.tf, p.doc_len
    FROM postings AS p
    JOIN query_terms USING (term)
),
doc_freq AS (
    SELECT term, count(*) AS df FROM matches GROUP BY term
),
scored AS (
    SELECT
        m.chunk_id,
        sum(
            ln(1 + (c.n_chunks - d.df + 0.5) / (d.df + 0.5))
            * m.tf * ($k1 + 1)
            / (m.tf + $k1 * (1 - $b + $b * m.doc_len / c.avgdl))
        ) AS score
    FROM matches AS m
    JOIN doc_freq AS d USING (term)
    CROSS JOIN collection AS c
    GROUP BY m.chunk_id
),
filtered AS (
    SELECT ch.*, s.score
    FROM scored AS s
    JOIN chunks AS ch USING (chunk_id)
    WHERE ($section::VARCHAR IS NULL
           OR len(list_filter(list_concat(ch.breadcrumb, ch.headings),
                              lambda h: contains(lower(h), lower($section::VARCHAR)))) > 0)
      AND ($level::INTEGER IS NULL OR ch.header_level = $level::INTEGER)
      AND ($chunk_type::VARCHAR IS NULL OR ch.chunk_type = $chunk_type::VARCHAR)
      AND ($path::VARCHAR IS NULL OR ch.path GLOB $path::VARCHAR)
      AND ($fm_key::VARCHAR IS NULL OR ch.front_matter[$fm_key::VARCHAR] = $fm_value::VARCHAR)
),
final AS (
    SELECT
        row_number() OVER (ORDER BY score DESC, chunk_id) AS rank,
        score,
        path,
        breadcrumb,
        line_start,
        line_end,
        chunk_type,
        header_level,
        chunk_id,
        left(trim(regexp_replace(text, '\s+', ' ', 'g')), 160) AS preview
    FROM filtered
)
SELECT * FROM final WHERE rank <= $limit ORDER BY rank
