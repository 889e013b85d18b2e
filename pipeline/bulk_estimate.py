"""The token estimate of a whole table of texts at once (the blocks stage's est_tokens).

The Rust core (``chunkmill._core.estimates``) counts every character class of every text in
one pass over its UTF-8 bytes, judges each document's language over all its texts of the
table, and adds the weighted counts in the float operations and order of
``tokens._weighted``: the numbers of ``tokens.estimate_expr`` and ``tokens.estimate`` to the
bit (tests/test_bulk_estimate.py). Its classes and weights are generated from
``tokens`` (tools/gen_estimate.py).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chunkmill.pipeline.block_kinds import CODE_LIKE


def estimates(
    bias: str, texts: pa.Array, kinds: pa.Array, documents: pa.Array
) -> tuple[np.ndarray, np.ndarray]:
    """(characters, estimated tokens) of every row as int32: ``tokens.estimate_expr`` with
    the same arguments, to the bit."""
    from chunkmill import _core  # here: run_job's parser key needs no extension loaded

    data, offsets = _utf8(texts)
    code = pc.fill_null(pc.is_in(kinds, value_set=pa.array(sorted(CODE_LIKE))), False)
    code = np.asarray(code.to_numpy(zero_copy_only=False), np.uint8)
    group = _one_chunk(documents)
    group = pc.dictionary_encode(group).indices.to_numpy(zero_copy_only=False)
    n_chars, est = _core.estimates(
        data, offsets.tobytes(), code.tobytes(), group.astype(np.uint32).tobytes(), bias
    )
    return np.frombuffer(n_chars, np.int32), np.frombuffer(est, np.int32)


def english_documents(texts: pa.Array, documents: pa.Array) -> list[bool]:
    """Per row: whether its document reads as English over all its rows of the table
    (``tokens.english_document_expr``, to the bit)."""
    from chunkmill import _core

    data, offsets = _utf8(texts)
    group = pc.dictionary_encode(_one_chunk(documents)).indices.to_numpy(zero_copy_only=False)
    flags = _core.english_documents(
        data, offsets.tobytes(), group.astype(np.uint32).tobytes(), len(group)
    )
    return np.frombuffer(flags, np.uint8).astype(bool).tolist()


def _one_chunk(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):
        return array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    return array


def _utf8(texts: pa.Array | pa.ChunkedArray) -> tuple[pa.Buffer | bytes, np.ndarray]:
    """(bytes, int64 offsets) of a string array: row i is ``bytes[offsets[i]:offsets[i + 1]]``;
    the bytes are the array's own buffer (no copy)."""
    texts = _one_chunk(texts)
    if texts.null_count:
        raise ValueError("texts must not be null")
    if texts.type != pa.large_string():  # string, or string_view from polars
        texts = texts.cast(pa.large_string())
    _, offset_buffer, data_buffer = texts.buffers()
    offsets = np.frombuffer(offset_buffer, np.int64, len(texts) + 1, texts.offset * 8)
    start = int(offsets[0])
    offsets = offsets - start
    if data_buffer is None:  # every text empty
        return b"", offsets
    return data_buffer.slice(start, int(offsets[-1])), offsets
