"""The postings stage: chunks -> (term, chunk, term frequency, chunk length) for BM25.

Terms are runs of letters, marks and digits (Unicode), lower-cased, except in scripts written
without spaces between words: a run of CJK ideographs, kana, Hangul, Thai, Lao, Khmer or
Myanmar gives its overlapping character bigrams ("インテグ" -> イン, ンテ, テグ; a run of
one character stays one term), as Lucene's CJK analyzer does. ``sql/search.sql`` analyses
queries with the same patterns, so documents and queries meet (a test checks that both give
the same terms). No stemming, no stop words: BM25's IDF already discounts common words.
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mdchunk.pipeline import schemas

# Written out as code point ranges, the same in Rust's regex (polars) and RE2 (DuckDB); the
# same text is in sql/search.sql. Kana includes the prolonged sound mark (ー) and iteration
# marks but not the middle dot (・), which separates words.
BIGRAM_CLASS = (
    r"\x{1100}-\x{11FF}\x{3005}-\x{3007}\x{3041}-\x{309F}\x{30A1}-\x{30FA}\x{30FC}-\x{30FF}"
    r"\x{3130}-\x{318F}\x{31F0}-\x{31FF}\x{3400}-\x{4DBF}\x{4E00}-\x{9FFF}\x{AC00}-\x{D7AF}"
    r"\x{F900}-\x{FAFF}\x{FF66}-\x{FF9F}\x{20000}-\x{2FFFF}"
    r"\x{0E00}-\x{0E7F}\x{0E80}-\x{0EFF}\x{1000}-\x{109F}\x{1780}-\x{17FF}"
)
BIGRAM_RUN = f"[{BIGRAM_CLASS}]+"
TERM_PATTERN = rf"{BIGRAM_RUN}|[\p{{L}}\p{{M}}\p{{N}}]+"  # also in sql/search.sql


# The same runs as TERM_PATTERN on a text with spaces put around every bigram run (what
# sql/search.sql does), found in one pass: a run of letters, marks and digits stops where a
# bigram run begins, as a space put there would stop it (class subtraction, Rust's regex).
_RUN_PATTERN = rf"{BIGRAM_RUN}|[[\p{{L}}\p{{M}}\p{{N}}]--[{BIGRAM_CLASS}]]+"
_BIGRAM_FIRST = f"^[{BIGRAM_CLASS}]"  # a run that starts so is all bigram characters


def runs_expr(text: pl.Expr) -> pl.Expr:
    """The runs of ``text``: bigram-script runs set apart, so that a Latin word touching
    one ("vue文档") ends where the other script begins."""
    return text.str.to_lowercase().str.extract_all(_RUN_PATTERN)


def terms(frame: pl.DataFrame, text: str = "text", key: str = "key") -> pl.DataFrame:
    """(key, term) rows, in order: the terms of every row's ``text``."""
    runs = frame.select(pl.col(key), runs_expr(pl.col(text)).alias("run")).explode("run")
    runs = runs.drop_nulls("run")
    n = pl.col("run").str.len_chars()
    split = (n > 1) & pl.col("run").str.contains(_BIGRAM_FIRST)
    runs = runs.with_columns(
        split=split, off=pl.int_ranges(0, pl.when(split).then(n - 1).otherwise(1))
    )
    runs = runs.explode("off")
    term = pl.when(pl.col("split")).then(pl.col("run").str.slice(pl.col("off"), 2))
    return runs.select(pl.col(key), term.otherwise(pl.col("run")).alias("term"))


SLICE_CHARS = 4_000_000  # of embed_text per step: a term row per word costs ~20x the text


def postings(chunks: pa.Table) -> pa.Table:
    """The stage, vectorised: one row per distinct term of every chunk's embed_text. Runs
    over slices of chunks (rows never span chunks, so the result is the same), so that a
    30 MB document does not explode into millions of term rows at once."""
    lengths = pc.cumulative_sum(pc.utf8_length(chunks["embed_text"])).to_pylist()
    parts, start = [], 0
    for i, total in enumerate(lengths):
        if total - (lengths[start - 1] if start else 0) >= SLICE_CHARS or i == len(lengths) - 1:
            parts.append(_postings(chunks.slice(start, i + 1 - start)))
            start = i + 1
    return pa.concat_tables(parts) if parts else _postings(chunks)


def _postings(chunks: pa.Table) -> pa.Table:
    """Grouped on the chunk's row number (an integer hashes faster than a 32-character id),
    in the order of each (chunk, term)'s first occurrence, as a group_by keeping order gives
    them; doc_len (a chunk's terms) is the sum of its terms' tf: no join of the term rows."""
    frame = pl.from_arrow(chunks.select(["embed_text"])).with_row_index("row")
    found = terms(frame, "embed_text", "row").with_row_index("at")
    rows = (
        found.group_by("row", "term")
        .agg(pl.col("at").first(), tf=pl.len().cast(pl.Int32))
        .sort("at")
        .with_columns(doc_len=pl.col("tf").sum().over("row").cast(pl.Int32))
    )
    ids = pl.from_arrow(chunks["chunk_id"]).gather(rows["row"])
    rows = rows.select("term", chunk_id=ids, tf="tf", doc_len="doc_len")
    return rows.to_arrow().cast(schemas.POSTINGS)
