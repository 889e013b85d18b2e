"""What crosses into and out of the core's chunk call, in bulk: a batch's block columns as
buffers the core reads in place (``block_buffers``), and the chunk columns it returns as
the CHUNKS table (``chunks_table``); no Python object per block or per chunk."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from chunkmill.pipeline import schemas
from chunkmill.pipeline.arrow_columns import one_array, utf8_buffers, utf8_column, validity
from chunkmill.pipeline.policy import CHUNKER_VERSION, Policy


def block_buffers(cols: dict) -> tuple:
    """The block columns as the core reads them in place (``_core.chunk_documents``): Arrow
    buffers of numbers in native order and of strings, a null flag per row where a column
    has nulls; no Python object per block."""
    alt, items = cols["alt"], one_array(cols["item_starts"])
    return (
        numbers(cols["block_index"], pa.int32()),
        utf8_buffers(cols["block_id"]),
        utf8_buffers(cols["kind"]),
        numbers(cols["level"], pa.int32(), fill=-1),
        utf8_buffers(cols["text"]),
        numbers(cols["char_start"], pa.int64()),
        numbers(cols["char_end"], pa.int64()),
        numbers(cols["line_start"], pa.int32()),
        (utf8_buffers(alt), null_flags(alt)),
        (
            numbers(items.offsets, pa.int32()),
            numbers(items.values, pa.int32()),
            null_flags(items),
        ),  # fmt: skip
        numbers(cols["tokens"], pa.int32()),
    )


def numbers(values, kind: pa.DataType, fill: int | None = None) -> memoryview:
    """The values of a column of numbers as a buffer of ``kind`` (nulls as ``fill``)."""
    array = one_array(values if isinstance(values, pa.Array | pa.ChunkedArray) else
                      pa.array(values, kind))  # fmt: skip
    if array.type != kind:
        array = array.cast(kind)
    if array.null_count:
        array = pc.fill_null(array, fill)
    data, width = array.buffers()[1], kind.bit_width // 8
    if data is None:
        return memoryview(b"")
    return memoryview(data)[array.offset * width : (array.offset + len(array)) * width]


def null_flags(values) -> memoryview:
    """One byte per row: 1 where ``values`` is null."""
    return numbers(pc.is_null(one_array(values)), pa.uint8())


def chunks_table(out: dict, docs: list[dict], front_matter: list, token_source: str,
                 policy: Policy) -> pa.Table:  # fmt: skip
    """The CHUNKS table of the core's columns (Arrow buffers, as ``chunk_documents`` gives
    them with ``columnar``), no Python object per chunk. What is the same for every chunk of
    a document (its id, path, ``front_matter``) is one value per document, taken per chunk;
    ``token_source`` names the counter that counted ``n_tokens``."""
    n = len(out["chunk_index"]) // 4
    doc = from_buffers(pa.uint32(), n, out["doc"])

    def per_document(values: list, kind: pa.DataType) -> pa.Array:
        return pa.array(values, kind).take(doc)

    def number(name: str, kind: pa.DataType = _INT32, length: int = n) -> pa.Array:
        return from_buffers(kind, length, out[name])

    def text(name: str, length: int = n) -> pa.Array:
        data, offsets = out[name]
        nulls = out.get(f"{name}_nulls")
        valid = None if nulls is None else validity(nulls, length)
        return pa.Array.from_buffers(
            pa.string(), length, [valid, pa.py_buffer(offsets), pa.py_buffer(data)]
        )

    def listed(name: str) -> pa.Array:
        offsets = number(f"{name}_at", length=n + 1)
        return pa.ListArray.from_arrays(offsets, text(name, offsets[-1].as_py()))

    def same(value, kind: pa.DataType) -> pa.Array:
        return pa.repeat(pa.scalar(value, kind), n)

    spans_at = number("spans_at", length=n + 1)
    n_spans = spans_at[-1].as_py()
    starts = number("span_start", pa.int64(), n_spans)
    ends = number("span_end", pa.int64(), n_spans)
    spans = pa.ListArray.from_arrays(
        spans_at, pa.StructArray.from_arrays([starts, ends], fields=list(schemas.SPAN))
    )
    parts = number("parts")
    levels = out["header_level_nulls"]
    columns = {
        "chunk_id": text("chunk_id"),
        "doc_id": per_document([d["doc_id"] for d in docs], pa.string()),
        "path": per_document([d["path"] for d in docs], pa.string()),
        "title": text("title"),
        "chunk_index": number("chunk_index"),
        "chunk_type": text("chunk_type"),
        "name": text("name"),
        "breadcrumb": listed("breadcrumb"),
        "header_level": pa.Array.from_buffers(
            pa.int8(),
            n,
            [validity(levels, n), pa.py_buffer(out["header_level"])],
        ),
        "section_title": text("section_title"),
        "anchor": text("anchor"),
        "url": text("url"),
        "headings": listed("headings"),
        "text": utf8_column(out["text"], out["text_offsets"], n),
        "embed_text": utf8_column(out["embed_text"], out["embed_text_offsets"], n),
        "embed_hash": text("embed_hash"),
        "image_src": text("image_src"),
        "n_tokens": number("n_tokens"),
        "token_source": same(token_source, pa.string()),
        "overlap_tokens": number("overlap_tokens"),
        "block_start": number("block_start"),
        "block_end": number("block_end"),
        "block_ids": listed("block_ids"),
        "spans": spans,
        "char_start": starts.take(spans_at.slice(0, n)),
        "char_end": ends.take(pc.subtract(spans_at.slice(1), 1)),
        "is_slice": from_buffers(pa.uint8(), n, out["is_slice"]).cast(pa.bool_()),
        "line_start": number("line_start"),
        "line_end": number("line_end"),
        "is_split": pc.greater(parts, 1),
        "part": number("part"),
        "parts": parts,
        "strategy": text("strategy"),
        "front_matter": per_document(front_matter, schemas.STR_MAP),
        "chunker_version": same(CHUNKER_VERSION, pa.string()),
        "policy_hash": same(policy.policy_hash, pa.string()),
    }
    return pa.Table.from_arrays([columns[f.name] for f in schemas.CHUNKS], schema=schemas.CHUNKS)


_INT32 = pa.int32()


def from_buffers(kind: pa.DataType, n: int, data: bytes) -> pa.Array:
    """An array of ``n`` fixed-width values from their bytes in native order."""
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(data)])
