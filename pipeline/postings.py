"""The postings stage: chunks -> (term, chunk, term frequency, chunk length) for BM25.

Terms are runs of letters, marks and digits (Unicode), lower-cased, except in scripts written
without spaces between words: a run of CJK ideographs, kana, Hangul, Thai, Lao, Khmer or
Myanmar gives its overlapping character bigrams ("インテグ" -> イン, ンテ, テグ; a run of
one character stays one term), as Lucene's CJK analyzer does. ``sql/search.sql`` analyses
queries with the same classes, so documents and queries meet (a test checks that both give
the same terms). No stemming, no stop words: BM25's IDF already discounts common words.

The Rust core (``chunkmill._core``, rust/core/src/postings.rs) finds the terms: it reads the
texts' Arrow buffers in place and hands back the rows as Arrow buffers, one chunk at a time,
so memory beyond the output is one chunk's terms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from chunkmill.pipeline import schemas
from chunkmill.pipeline.arrow_columns import utf8_buffers, utf8_column

if TYPE_CHECKING:  # polars is imported where it is used, not by a worker's default path
    import polars as pl


def postings(chunks: pa.Table) -> pa.Table:
    """The stage: one row per distinct term of every chunk's embed_text, chunks in order and
    a chunk's terms in the order of their first occurrence; tf counts the term in the chunk,
    doc_len the chunk's terms."""
    parts, base = [], 0
    for texts in chunks["embed_text"].chunks:
        parts.append(_postings(texts, base))
        base += len(texts)
    if not parts:
        return schemas.POSTINGS.empty_table()
    term, row, tf, doc_len = (pa.concat_arrays(list(column)) for column in zip(*parts))
    chunk_id = chunks["chunk_id"].take(row)
    return pa.Table.from_arrays([term, chunk_id, tf, doc_len], schema=schemas.POSTINGS)


def _postings(texts: pa.Array, base: int) -> tuple[pa.Array, ...]:
    """(term, row, tf, doc_len) of one array of texts, row counted from ``base``."""
    from chunkmill import _core  # here: run_job's parser key needs no extension loaded

    term, offsets, row, tf, doc_len = _core.postings(*utf8_buffers(texts))
    n = len(tf) // 4
    rows = _fixed(row, pa.uint32(), n)
    if base:
        rows = pc.add(rows, pa.scalar(base, pa.uint32()))
    return (
        _strings(term, offsets, n),
        rows,
        _fixed(tf, pa.int32(), n),
        _fixed(doc_len, pa.int32(), n),
    )


def terms(frame: pl.DataFrame, text: str = "text", key: str = "key") -> pl.DataFrame:
    """(key, term) rows, in order: every term of every row's ``text`` (a query's terms are
    these of its text)."""
    import polars as pl

    from chunkmill import _core

    texts = frame[text].to_arrow()
    term, offsets, row = _core.terms(*utf8_buffers(texts))
    n = len(row) // 4
    rows = pl.from_arrow(_fixed(row, pa.uint32(), n))
    return pl.DataFrame(
        {key: frame[key].gather(rows), "term": pl.from_arrow(_strings(term, offsets, n))}
    )


def _strings(data: bytes, offsets: bytes, n: int) -> pa.Array:
    """n strings from their UTF-8 bytes and n + 1 int64 offsets."""
    return utf8_column(data, offsets, n).cast(pa.string())


def _fixed(data: bytes, kind: pa.DataType, n: int) -> pa.Array:
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(data)])
