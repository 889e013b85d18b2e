-- Token sizes of text chunks (image chunks, whose n_tokens counts an alt text, are left out).
-- Parameters: $min_tokens, $max_tokens (from the policy that produced the chunks).
-- Percentiles are nearest-rank (quantile_disc): the value at rank ceil(q * n).
WITH
text_chunks AS (
    SELECT n_tokens, text FROM chunks WHERE chunk_type <> 'image'
),
final AS (
    SELECT
        count(*) AS chunks,
        min(n_tokens) AS min,
        quantile_disc(n_tokens, 0.10) AS p10,
        quantile_disc(n_tokens, 0.50) AS p50,
        quantile_disc(n_tokens, 0.90) AS p90,
        quantile_disc(n_tokens, 0.99) AS p99,
        max(n_tokens) AS max,
        avg(n_tokens) AS mean,
        avg((n_tokens < $min_tokens)::INTEGER) AS share_under_min,
        avg((n_tokens = $max_tokens)::INTEGER) AS share_at_cap,
        avg((n_tokens > $max_tokens)::INTEGER) AS share_over_cap,
        -- ATX heading on the first line, or a setext underline on the second
        avg((regexp_matches(ltrim(text, e'\r\n'), '^ {0,3}#{1,6}([ \t\r\n]|$)')
             OR regexp_matches(ltrim(text, e'\r\n'),
                '^[^\r\n]*[^\s][^\r\n]*(\r\n|\r|\n) {0,3}(=+|-+)[ \t]*(\r\n|\r|\n|$)'))::INTEGER)
            AS share_starting_with_heading
    FROM text_chunks
)
SELECT * FROM final
