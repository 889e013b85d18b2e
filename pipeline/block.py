"""The blocks stage: documents table -> blocks table (one row per top-level block).

The per-document loop only decides structure (via ``pipeline.parse``); lengths and token
estimates are computed for all blocks at once with polars expressions.
"""

from __future__ import annotations

import hashlib

import polars as pl
import pyarrow as pa

from mdchunk.pipeline import schemas
from mdchunk.pipeline.parse import Block, Lines, parse
from mdchunk.pipeline.tokens import estimate_expr

_FIELDS = [f.name for f in schemas.BLOCKS if f.name not in ("n_chars", "est_tokens")]


def blocks(documents: pa.Table, bias: str = "balanced") -> tuple[pa.Table, pa.Table]:
    """The stage: documents -> (blocks, rejects). A document that fails to parse is a reject."""
    cols: dict[str, list] = {name: [] for name in _FIELDS}
    rejects: list[dict] = []
    for doc in documents.select(["doc_id", "path", "format", "mdx", "text"]).to_pylist():
        try:
            rows = document_blocks(
                doc["doc_id"], doc["text"], doc["format"] == "markdown", doc["mdx"]
            )
        except (RecursionError, MemoryError, ValueError) as exc:
            rejects.append(
                {
                    "path": doc["path"],
                    "doc_id": doc["doc_id"],
                    "stage": "blocks",
                    "reason": "parse_error",
                    "detail": f"{type(exc).__name__}: {exc}",
                    "n_bytes": None,
                }
            )
            continue
        for name in _FIELDS:
            cols[name].extend(rows[name])
    table = pl.from_arrow(
        schemas.from_columns(
            {**cols, "n_chars": [0] * len(cols["doc_id"]), "est_tokens": [0] * len(cols["doc_id"])},
            schemas.BLOCKS,
        )
    )
    table = with_estimates(table, bias)
    return table.to_arrow().cast(schemas.BLOCKS), pa.Table.from_pylist(
        rejects, schema=schemas.REJECTS
    )


def with_estimates(table: pl.DataFrame, bias: str) -> pl.DataFrame:
    """Vectorised n_chars and est_tokens for every block."""
    return table.with_columns(
        pl.col("text").str.len_chars().cast(pl.Int32).alias("n_chars"),
        estimate_expr(bias, pl.col("text"), pl.col("kind")).alias("est_tokens"),
    )


def document_blocks(doc_id: str, text: str, markdown: bool, is_mdx: bool) -> dict[str, list]:
    """Column lists for one document's blocks."""
    lines, found = parse(text, markdown, is_mdx)
    cols: dict[str, list] = {name: [] for name in _FIELDS}
    path: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for index, b in enumerate(found):
        if b.kind == "heading":
            while path and path[-1][0] >= b.level:
                path.pop()
            path.append((b.level, b.title))
        start, end = lines.starts[b.first], lines.ends[b.last]
        body = text[start:end]
        heading_path = [t for _, t in path]
        row = {
            "doc_id": doc_id,
            "block_index": index,
            "block_id": _block_id(b.kind, body, heading_path, seen),
            "kind": b.kind,
            "level": b.level,
            "heading_path": heading_path,
            "heading_levels": [lvl for lvl, _ in path],
            "text": body,
            "char_start": start,
            "char_end": end,
            "line_start": b.first + 1,
            "line_end": b.last + 1,
            "info": b.info or None,
            "lang": (b.info.split()[0] if b.info else None),
            "alt": b.alt,
            "item_starts": _item_offsets(b, lines, start),
            "n_rows": b.n_rows,
        }
        for name in _FIELDS:
            cols[name].append(row[name])
    return cols


def _item_offsets(b: Block, lines: Lines, start: int) -> list[int] | None:
    if b.kind != "list":
        return None
    return [lines.starts[i] - start for i in b.items]


def _block_id(kind: str, body: str, heading_path: list[str], seen: dict) -> str:
    """Content-derived id: kind, text, heading path, and occurrence among identical blocks.

    Position is left out, so inserting text above a block does not change its id; the
    heading path is in, because it is part of what gets embedded (the breadcrumb).
    """
    path = "\x1f".join(heading_path)
    key = (kind, body, path)
    n = seen.get(key, 0)
    seen[key] = n + 1
    payload = f"{kind}\x00{body}\x00{path}\x00{n}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()[:16]
