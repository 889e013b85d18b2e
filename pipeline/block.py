"""The blocks stage: documents table -> blocks table (one row per top-level block).

The Rust core (chunkmill._core) parses every document of a batch in one call and hands back
its columns as Arrow buffers; a document it cannot parse, and every document under the
reference parser, goes through ``pipeline.parse`` (markdown-it-py). Lengths and token
estimates are computed for all blocks at once.
"""

from __future__ import annotations

from collections import Counter
from hashlib import sha256 as _sha256
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from chunkmill.pipeline import bulk_estimate, schemas
from chunkmill.pipeline.arrow_columns import utf8_views, validity
from chunkmill.pipeline.parse import DEFAULT_BACKEND, REFERENCE_BACKEND, check_backend, parse

if TYPE_CHECKING:  # polars is imported where it is used, not by a worker's default path
    import polars as pl

_FIELDS = [f.name for f in schemas.BLOCKS if f.name not in ("n_chars", "est_tokens")]
# What the reference parser is asked to fix, and what is a document's own failure (a reject).
NOT_OURS = (KeyboardInterrupt, SystemExit, GeneratorExit)
_PARSE_ERRORS = (RecursionError, MemoryError, ValueError)


def blocks(
    documents: pa.Table,
    bias: str = "balanced",
    parser: str = DEFAULT_BACKEND,
    threads: int = 1,
    counts: Counter | None = None,
) -> tuple[pa.Table, pa.Table]:
    """The stage: documents -> (blocks, rejects). A document that fails to parse is a reject.
    ``threads`` > 1 lets the Rust core parse the documents on that many threads (the same
    blocks). The texts stay UTF-8 views of the table's buffer (no Python string of each).
    ``counts["fallback"]`` counts the documents the Rust core left to the reference parser
    (a run reports them)."""
    check_backend(parser)  # a wrong name is the caller's error, not every document's
    docs = [documents[name].to_pylist() for name in ("doc_id", "path", "format", "mdx")]
    docs.append(utf8_views(documents["text"]))
    rejects: list[dict] = []
    if parser == REFERENCE_BACKEND:
        table = _reference_blocks(list(zip(*docs)), rejects)
    else:
        table = _core_blocks(list(zip(*docs)), rejects, threads, counts)
    rejected = pa.Table.from_pylist(rejects, schema=schemas.REJECTS)
    return _with_estimates_arrow(table, bias), rejected


def _core_blocks(
    docs: list[tuple], rejects: list[dict], threads: int = 1, counts: Counter | None = None
) -> pa.Table:
    """Blocks of ``docs`` (doc_id, path, format, mdx, text) by one call of the Rust core, in
    document order. Its fallback documents go to the reference parser; should the call fail
    as a whole, each document is parsed on its own, so one bad document is one reject."""
    try:
        table, position, fallback = _core_table(docs, threads)
    except NOT_OURS:
        raise
    except BaseException:
        if len(docs) == 1:
            _count(counts, 1)
            return _reference_blocks(docs, rejects)
        return _concat([_core_blocks([doc], rejects, 1, counts) for doc in docs])
    if not fallback:
        return table
    _count(counts, len(fallback))
    parts, positions = [table], [position]
    for i in fallback:
        parts.append(_reference_blocks([docs[i]], rejects))
        positions.append(pa.array([i] * parts[-1].num_rows, pa.uint32()))
    order = pc.sort_indices(pa.chunked_array(positions, pa.uint32()))  # a stable sort
    return _concat(parts).take(order)


def _count(counts: Counter | None, n: int) -> None:
    if counts is not None:
        counts["fallback"] += n


def _core_table(docs: list[tuple], threads: int = 1) -> tuple[pa.Table, pa.Array, list[int]]:
    """The Rust core's blocks of ``docs`` as a BLOCKS table (estimates null), each block's
    document (an index into ``docs``), and the documents left to the reference parser."""
    from chunkmill import _core  # here: run_job's parser key needs no extension loaded

    texts = [doc[4] for doc in docs]
    markdown, mdx = [doc[2] == "markdown" for doc in docs], [doc[3] for doc in docs]
    out = _core.blocks(texts, markdown, mdx, threads)
    table, position = _arrow_table(out, [doc[0] for doc in docs])
    return table, position, out["fallback"]


def estimated_table(out: dict, doc_ids: list[str]) -> pa.Table:
    """The BLOCKS table of the core's columns that carry their estimates (``n_chars`` and
    ``est_tokens`` buffers: ``_core.chunk_pass`` with ``blocks``)."""
    table, _ = _arrow_table(out, doc_ids)
    for name in ("n_chars", "est_tokens"):
        i = table.schema.get_field_index(name)
        values = pa.Array.from_buffers(pa.int32(), len(table), [None, pa.py_buffer(out[name])])
        table = table.set_column(i, table.schema.field(i), values)
    return table


def _arrow_table(out: dict, doc_ids: list[str]) -> tuple[pa.Table, pa.Array]:
    """The core's columns as a BLOCKS table, without a Python object per block for the
    texts, ids, kinds, offsets and heading paths; and each block's document index."""
    n = out["n"]

    def fixed(name: str, kind: pa.DataType) -> pa.Array:
        return pa.Array.from_buffers(kind, n, [validity(out.get(f"{name}_nulls", b""), n),
                                               pa.py_buffer(out[name])])  # fmt: skip

    def text(name: str) -> pa.Array:
        data, offsets = out[name]
        valid = validity(out[f"{name}_nulls"], n)
        return pa.Array.from_buffers(
            pa.string(), n, [valid, pa.py_buffer(offsets), pa.py_buffer(data)]
        )

    offsets, values = out["item_starts"]
    items = pa.Array.from_buffers(
        pa.list_(pa.int32()),
        n,
        [validity(out["item_starts_nulls"], n), pa.py_buffer(offsets)],
        children=[
            pa.Array.from_buffers(pa.int32(), len(values) // 4, [None, pa.py_buffer(values)])
        ],
    )
    ids = fixed("block_id", pa.binary(16)).cast(pa.string())  # 16 hex digits each
    position = fixed("doc", pa.uint32())
    path = fixed("path", pa.uint32())
    titles = [p[0] for p in out["paths"]]
    levels = [p[1] for p in out["paths"]]
    columns = {
        "doc_id": pa.array(doc_ids, pa.string()).take(position),
        "block_index": fixed("block_index", pa.int32()),
        "block_id": ids,
        "kind": pa.array(out["kinds"], pa.string()).take(fixed("kind", pa.uint8())),
        "level": fixed("level", pa.int8()),
        "heading_path": pa.array(titles, pa.list_(pa.string())).take(path),
        "heading_levels": pa.array(levels, pa.list_(pa.int8())).take(path),
        "text": pa.Array.from_buffers(
            pa.large_string(),
            n,
            [None, pa.py_buffer(out["text_offsets"]), pa.py_buffer(out["text"])],
        ),
        "char_start": fixed("char_start", pa.int64()),
        "char_end": fixed("char_end", pa.int64()),
        "line_start": fixed("line_start", pa.int32()),
        "line_end": fixed("line_end", pa.int32()),
        "info": text("info"),
        "lang": text("lang"),
        "alt": text("alt"),
        "item_starts": items,
        "n_rows": fixed("n_rows", pa.int32()),
        "n_chars": pa.nulls(n, pa.int32()),
        "est_tokens": pa.nulls(n, pa.int32()),
    }
    return pa.table(columns, schema=schemas.BLOCKS), position


def _reference_blocks(docs: list[tuple], rejects: list[dict]) -> pa.Table:
    """Blocks of ``docs`` (doc_id, path, format, mdx, text: a str or its UTF-8 bytes) by the
    reference parser, one document at a time; a document it fails on adds a reject and no
    block."""
    cols: dict[str, list] = {name: [] for name in _FIELDS}
    for doc_id, path, fmt, is_mdx, text in docs:
        text = text if isinstance(text, str) else str(text, "utf-8")
        try:
            document_blocks(doc_id, text, fmt == "markdown", is_mdx, REFERENCE_BACKEND, into=cols)
        except _PARSE_ERRORS as exc:
            rejects.append(
                {
                    "path": path,
                    "doc_id": doc_id,
                    "stage": "blocks",
                    "reason": "parse_error",
                    "detail": f"{type(exc).__name__}: {exc}",
                    "n_bytes": None,
                }
            )
    n = len(cols["doc_id"])
    return schemas.from_columns({**cols, "n_chars": [0] * n, "est_tokens": [0] * n}, schemas.BLOCKS)


def _concat(tables: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(tables) if tables else schemas.empty(schemas.BLOCKS)


def _with_estimates_arrow(table: pa.Table, bias: str) -> pa.Table:
    """``with_estimates`` on an Arrow table of schemas.BLOCKS (no round trip through
    polars: that copied every text twice)."""
    counts = bulk_estimate.estimates(bias, table["text"], table["kind"], table["doc_id"])
    for name, values in zip(("n_chars", "est_tokens"), counts):
        i = table.schema.get_field_index(name)
        table = table.set_column(i, table.schema.field(i), values)
    return table


def with_estimates(table: pl.DataFrame, bias: str) -> pl.DataFrame:
    """n_chars and est_tokens for every block, for all blocks at once (every block of a
    document in the table: a block is judged with its document's language,
    token_estimate.FOREIGN_LETTER), counted in the Rust core (bulk_estimate)."""
    import polars as pl

    arrow = table.select("text", "kind", "doc_id").to_arrow(compat_level=pl.CompatLevel.oldest())
    n_chars, est_tokens = bulk_estimate.estimates(
        bias, arrow["text"], arrow["kind"], arrow["doc_id"]
    )
    return table.with_columns(
        pl.Series("n_chars", n_chars, pl.Int32), pl.Series("est_tokens", est_tokens, pl.Int32)
    )


def document_blocks(
    doc_id: str,
    text: str,
    markdown: bool,
    is_mdx: bool,
    parser: str = DEFAULT_BACKEND,
    into: dict[str, list] | None = None,
) -> dict[str, list]:
    """Column lists for one document's blocks (appended to ``into`` when given). A document
    that fails half-way adds nothing."""
    if parser != REFERENCE_BACKEND:
        cols = _core_document(doc_id, text, markdown, is_mdx)
        if cols is not None:
            return cols if into is None else _extend(into, cols)
    return _reference_document(doc_id, text, markdown, is_mdx, into)


def _core_document(doc_id: str, text: str, markdown: bool, is_mdx: bool) -> dict | None:
    """One document's column lists from the Rust core, or None when it leaves the document
    to the reference parser."""
    doc = (doc_id, "", "markdown" if markdown else "text", is_mdx, text)
    try:
        table, _, fallback = _core_table([doc])
    except NOT_OURS:
        raise
    except BaseException:
        return None
    return None if fallback else {name: table[name].to_pylist() for name in _FIELDS}


def _extend(into: dict[str, list], cols: dict[str, list]) -> dict[str, list]:
    for name in _FIELDS:
        into[name].extend(cols[name])
    return into


def _reference_document(
    doc_id: str, text: str, markdown: bool, is_mdx: bool, into: dict[str, list] | None
) -> dict[str, list]:
    lines, found = parse(text, markdown, is_mdx)
    starts, ends = lines.starts, lines.ends
    char_start = [starts[b.first] for b in found]
    char_end = [ends[b.last] for b in found]
    bodies = [text[a:e] for a, e in zip(char_start, char_end)]
    kinds = [b.kind for b in found]
    paths, levels, keys = _heading_paths(found)
    cols = {
        "doc_id": [doc_id] * len(found),
        "block_index": list(range(len(found))),
        "block_id": _block_ids(kinds, bodies, keys),
        "kind": kinds,
        "level": [b.level for b in found],
        "heading_path": paths,
        "heading_levels": levels,
        "text": bodies,
        "char_start": char_start,
        "char_end": char_end,
        "line_start": [b.first + 1 for b in found],
        "line_end": [b.last + 1 for b in found],
        "info": [b.info or None for b in found],
        "lang": [b.info.split()[0] if b.info else None for b in found],
        "alt": [b.alt for b in found],
        "item_starts": [
            None if b.items is None else [starts[i] - a for i in b.items]
            for b, a in zip(found, char_start)
        ],
        "n_rows": [b.n_rows for b in found],
    }
    return cols if into is None else _extend(into, cols)


def _heading_paths(found) -> tuple[list[list[str]], list[list[int]], list[str]]:
    """The heading path of every block (texts, levels, and the texts joined for its id): the
    headings above it, outermost first, its own included. Blocks between two headings share
    one list."""
    paths, levels, keys = [], [], []
    path: list[tuple[int, str]] = []
    titles: list[str] = []
    lvls: list[int] = []
    key = ""
    for b in found:
        if b.kind == "heading":
            while path and path[-1][0] >= b.level:
                path.pop()
            path.append((b.level, b.title))
            titles = [t for _, t in path]
            lvls = [lvl for lvl, _ in path]
            key = "\x1f".join(titles)
        paths.append(titles)
        levels.append(lvls)
        keys.append(key)
    return paths, levels, keys


def _block_ids(kinds: list[str], bodies: list[str], paths: list[str]) -> list[str]:
    """Content-derived ids: kind, text, heading path (its texts joined by \\x1f), and
    occurrence among identical blocks (text has no NUL: such a document is a reject).

    Position is left out, so inserting text above a block does not change its id; the
    heading path is in, because it is part of what gets embedded (the breadcrumb).
    """
    keys = [f"{k}\x00{t}\x00{p}\x00" for k, t, p in zip(kinds, bodies, paths)]
    if len(set(keys)) == len(keys):  # the common case: every block occurs once
        payloads = [key + "0" for key in keys]
    else:
        seen: dict[str, int] = {}
        payloads = []
        for key in keys:
            n = seen.get(key, 0)
            seen[key] = n + 1
            payloads.append(f"{key}{n}")
    return [_sha256(p.encode("utf-8", "surrogatepass")).hexdigest()[:16] for p in payloads]
