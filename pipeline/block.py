"""The blocks stage: documents table -> blocks table (one row per top-level block).

The per-document loop only decides structure (via ``pipeline.parse``); lengths and token
estimates are computed for all blocks at once with polars expressions.
"""

from __future__ import annotations

from hashlib import sha256 as _sha256

import polars as pl
import pyarrow as pa

from mdchunk.pipeline import bulk_estimate, schemas
from mdchunk.pipeline.parse import DEFAULT_BACKEND, check_backend, parse

_FIELDS = [f.name for f in schemas.BLOCKS if f.name not in ("n_chars", "est_tokens")]


def blocks(
    documents: pa.Table, bias: str = "balanced", parser: str = DEFAULT_BACKEND
) -> tuple[pa.Table, pa.Table]:
    """The stage: documents -> (blocks, rejects). A document that fails to parse is a reject."""
    check_backend(parser)  # a wrong name is the caller's error, not every document's
    cols: dict[str, list] = {name: [] for name in _FIELDS}
    rejects: list[dict] = []
    columns = [documents[name].to_pylist() for name in ("doc_id", "path", "format", "mdx", "text")]
    for doc_id, path, fmt, is_mdx, text in zip(*columns):
        try:
            document_blocks(doc_id, text, fmt == "markdown", is_mdx, parser, into=cols)
        except (RecursionError, MemoryError, ValueError) as exc:
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
    table = schemas.from_columns(
        {**cols, "n_chars": [0] * n, "est_tokens": [0] * n}, schemas.BLOCKS
    )
    return _with_estimates_arrow(table, bias), pa.Table.from_pylist(rejects, schema=schemas.REJECTS)


def _with_estimates_arrow(table: pa.Table, bias: str) -> pa.Table:
    """``with_estimates`` on an Arrow table of schemas.BLOCKS (no round trip through
    polars: that copied every text twice)."""
    counts = bulk_estimate.estimates(bias, table["text"], table["kind"], table["doc_id"])
    for name, values in zip(("n_chars", "est_tokens"), counts):
        i = table.schema.get_field_index(name)
        table = table.set_column(i, table.schema.field(i), pa.array(values, pa.int32()))
    return table


def with_estimates(table: pl.DataFrame, bias: str) -> pl.DataFrame:
    """n_chars and est_tokens for every block, for all blocks at once (every block of a
    document in the table: a block is judged with its document's language,
    tokens.FOREIGN_LETTER). bulk_estimate counts the characters from the texts' bytes with
    numpy: the numbers of ``tokens.estimate_expr``, in a third of its CPU time."""
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
    lines, found = parse(text, markdown, is_mdx, parser)
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
    if into is None:
        return cols
    for name in _FIELDS:
        into[name].extend(cols[name])
    return into


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
