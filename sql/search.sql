-- Keyword search ranked by BM25 over the postings table (no extension needed).
-- score(chunk) = sum over query terms t of
--   idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl)),
--   idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))        (Lucene's BM25)
-- Collection statistics (N, avgdl, df) cover every chunk; filters apply after scoring.
-- Parameters: $query, $k1, $b, $limit; filters, NULL for none: $section (case-insensitive
-- text in any breadcrumb or headings element), $level (header_level), $chunk_type,
-- $path (GLOB), $fm_key and $fm_value (front matter key = value).
--
-- Query terms are made exactly as pipeline/postings.py makes the terms of chunks: runs of
-- letters, marks and digits, lower-cased; a run of CJK ideographs, kana, Hangul, Thai, Lao,
-- Khmer or Myanmar (the class below, BIGRAM in rust/core/src/postings.rs) gives its
-- overlapping character bigrams, a one-character run itself.
WITH
query_runs AS (
    SELECT unnest(regexp_extract_all(
        regexp_replace(lower($query), '([' || cls || ']+)', ' \1 ', 'g'),
        '[' || cls || ']+|[\p{L}\p{M}\p{N}]+'
    )) AS run, cls
    FROM (SELECT '\x{1100}-\x{11FF}\x{3005}-\x{3007}\x{3041}-\x{309F}\x{30A1}-\x{30FA}'
              || '\x{30FC}-\x{30FF}\x{3130}-\x{318F}\x{31F0}-\x{31FF}\x{3400}-\x{4DBF}'
              || '\x{4E00}-\x{9FFF}\x{AC00}-\x{D7AF}\x{F900}-\x{FAFF}\x{FF66}-\x{FF9F}'
              || '\x{20000}-\x{2FFFF}\x{0E00}-\x{0E7F}\x{0E80}-\x{0EFF}\x{1000}-\x{109F}'
              || '\x{1780}-\x{17FF}' AS cls)
),
query_terms AS (
    SELECT DISTINCT unnest(
        CASE WHEN length(run) > 1 AND regexp_full_match(run, '[' || cls || ']+')
             THEN list_transform(range(1, length(run)), lambda i: substring(run, i, 2))
             ELSE [run] END
    ) AS term
    FROM query_runs
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
        left(trim(regexp_replace(text, '\s+', ' ', 'g')), 160) AS preview,
        url,
        anchor,
        text
    FROM filtered
)
SELECT * FROM final WHERE rank <= $limit ORDER BY rank
