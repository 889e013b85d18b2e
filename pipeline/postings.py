"""The postings stage: chunks -> (term, chunk, term frequency, chunk length) for BM25.

Terms are runs of letters and digits (Unicode), lower-cased; ``sql/search.sql`` splits
queries with the same pattern, so documents and queries are analysed alike. No stemming,
no stop words: BM25's IDF already discounts common words.
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mdchunk.pipeline import schemas

TERM_PATTERN = r"[\p{L}\p{N}]+"  # also in sql/search.sql


SLICE_CHARS = 4_000_000  # of embed_text per step: a term row per word costs ~20x the text


def postings(chunks: pa.Table) -> pa.Table:
    """The stage, vectorised: one row per distinct term of every chunk's embed_text. Runs
    over slices of chunks (rows never span chunks, so the result is the same), so that a
    30 MB document does not explode into 6 million term rows at once."""
    lengths = pc.cumulative_sum(pc.utf8_length(chunks["embed_text"])).to_pylist()
    parts, start = [], 0
    for i, total in enumerate(lengths):
        if total - (lengths[start - 1] if start else 0) >= SLICE_CHARS or i == len(lengths) - 1:
            parts.append(_postings(chunks.slice(start, i + 1 - start)))
            start = i + 1
    return pa.concat_tables(parts) if parts else _postings(chunks)


def _postings(chunks: pa.Table) -> pa.Table:
    terms = pl.from_arrow(chunks.select(["chunk_id", "embed_text"])).select(
        "chunk_id",
        pl.col("embed_text").str.to_lowercase().str.extract_all(TERM_PATTERN).alias("term"),
    )
    rows = (
        terms.with_columns(doc_len=pl.col("term").list.len().cast(pl.Int32))
        .explode("term")
        .drop_nulls("term")
        .group_by("term", "chunk_id", "doc_len", maintain_order=True)
        .agg(tf=pl.len().cast(pl.Int32))
        .select("term", "chunk_id", "tf", "doc_len")
    )
    return rows.to_arrow().cast(schemas.POSTINGS)
