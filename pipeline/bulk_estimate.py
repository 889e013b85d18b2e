"""The token estimate of a whole table of texts at once (the blocks stage's est_tokens).

The Rust core (``chunkmill._core.estimates``) counts every character class of every text in
one pass over its UTF-8 bytes, judges each document's language over all its texts of the
table, and adds the weighted counts in the order of ``token_estimate.WEIGHTED``: the
numbers, to the bit, of the estimate written in Python that the tests hold it to
(tests/test_bulk_estimate.py). Its classes and
weights are generated from ``token_estimate`` (tools/gen_estimate.py).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def estimates(
    bias: str, texts: pa.Array, kinds: pa.Array, documents: pa.Array
) -> tuple[pa.Array, pa.Array]:
    """(characters, estimated tokens) of every row as int32 arrays:
    estimate of each row, its document's language judged over the document's rows. Buffers in and
    out, no numpy: a worker never loads it (a tenth of a second of its start)."""
    from chunkmill import _core  # here: run_job's parser key needs no extension loaded

    data, offsets = _utf8(texts)
    code = pc.fill_null(pc.is_in(kinds, value_set=pa.array(_core.CODE_LIKE)), False)
    n = len(code)  # an empty table: no buffer at all
    n_chars, est = _core.estimates(
        data, offsets, _bytes(code, pa.uint8()), _bytes(_groups(documents), pa.uint32()), bias
    )
    return _int32(n_chars, n), _int32(est, n)


def english_documents(texts: pa.Array, documents: pa.Array) -> list[bool]:
    """Per row: whether its document reads as English over all its rows of the table
    (the rule of ``token_estimate.FOREIGN_SHARE``)."""
    from chunkmill import _core

    data, offsets = _utf8(texts)
    group = _groups(documents)
    flags = _core.english_documents(data, offsets, _bytes(group, pa.uint32()), len(group))
    return [flag == 1 for flag in flags]


def _groups(documents: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Per row: the number of its document among the table's (first seen first)."""
    return pc.dictionary_encode(_one_chunk(documents)).indices


def _bytes(values: pa.Array | pa.ChunkedArray, kind: pa.DataType) -> bytes:
    """The values as ``kind`` in native order, one after the other."""
    values = _one_chunk(pc.cast(values, kind))
    if values.null_count:
        raise ValueError("values must not be null")
    width = kind.bit_width // 8
    data = values.buffers()[1]
    if data is None:
        return b""
    start = values.offset * width
    return memoryview(data)[start : start + len(values) * width].tobytes()


def _int32(data: bytes, n: int) -> pa.Array:
    return pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(data)])


def _one_chunk(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):
        return array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    return array


def _utf8(texts: pa.Array | pa.ChunkedArray) -> tuple[pa.Buffer | bytes, bytes]:
    """(bytes, int64 offsets as bytes) of a string array: row i is
    ``bytes[offsets[i]:offsets[i + 1]]``; the bytes are the array's own buffer (no copy)."""
    texts = _one_chunk(texts)
    if texts.null_count:
        raise ValueError("texts must not be null")
    if texts.type != pa.large_string():  # string, or string_view from polars
        texts = texts.cast(pa.large_string())
    _, offset_buffer, data_buffer = texts.buffers()
    offsets = pa.Array.from_buffers(
        pa.int64(), len(texts) + 1, [None, offset_buffer], offset=texts.offset
    )
    start = offsets[0].as_py()
    if start:
        offsets = pc.subtract(offsets, pa.scalar(start, pa.int64()))
    if data_buffer is None:  # every text empty
        return b"", _bytes(offsets, pa.int64())
    end = offsets[-1].as_py()
    return data_buffer.slice(start, end), _bytes(offsets, pa.int64())
