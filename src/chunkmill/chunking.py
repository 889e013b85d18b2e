"""Documents in memory into chunks, with no output folder and no pool.

- ``chunk_text``: one document (a str) -> a list of ``Chunk``.
- ``chunk_texts``: many texts -> the chunks table, on the core's threads.
- ``chunk_table``: a table of documents (pyarrow or polars) -> the chunks table.

Chunk rows are the same whichever entry point makes them: these call the per-batch stages
(``chunkmill.pipeline.batch.process``) that a run calls. ``resolve_policy`` turns what a
caller passes as a policy (a Policy, a policy file, None) into a Policy, as the commands do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunkmill.pipeline.doc_limits import (
    DEFAULT_DOC_MEMORY_MB,
    DEFAULT_MAX_BYTES,
    over_memory,
    usable_cores,
)
from chunkmill.pipeline.policy import Policy, PolicyError
from chunkmill.pipeline.policy import load as load_policy

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa

PolicyLike = Policy | str | Path | None


class RejectedError(ValueError):
    """``chunk_text`` was given a document that the pipeline rejects (for example NUL bytes,
    or text over ``max_bytes``); ``reason`` is the reject code, as in rejects.parquet."""

    def __init__(self, path: str, reason: str, detail: str):
        super().__init__(f"{path}: rejected ({reason}): {detail}")
        self.path, self.reason, self.detail = path, reason, detail


@dataclass(frozen=True)
class Chunk:
    """One chunk: the columns of ``chunks.parquet`` (docs/reference.md, Output), lists as tuples.

    ``text`` is the source-faithful markdown; ``embed_text`` is what to embed (``text`` with
    its context); ``text == document[char_start:char_end]`` unless the chunk re-opens a fence
    or repeats a table header; ``spans`` are the exact source slices it was made of.
    """

    chunk_id: str
    doc_id: str
    path: str
    title: str
    chunk_index: int
    chunk_type: str
    name: str | None
    breadcrumb: tuple[str, ...]
    header_level: int | None
    section_title: str | None
    anchor: str | None
    url: str | None
    headings: tuple[str, ...]
    text: str
    embed_text: str
    embed_hash: str
    image_src: str | None
    n_tokens: int
    token_source: str
    overlap_tokens: int
    block_start: int
    block_end: int
    block_ids: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    char_start: int
    char_end: int
    is_slice: bool
    line_start: int
    line_end: int
    is_split: bool
    part: int
    parts: int
    strategy: str
    front_matter: dict[str, str] | None
    chunker_version: str
    policy_hash: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Chunk:
        """A chunk from one row of the chunks table (as ``pyarrow.Table.to_pylist`` gives)."""
        values = dict(row)
        for name in ("breadcrumb", "headings", "block_ids"):
            values[name] = tuple(values[name] or ())
        values["spans"] = tuple((s["start"], s["end"]) for s in values["spans"] or ())
        fm = values["front_matter"]
        values["front_matter"] = None if fm is None else dict(fm)
        return cls(**{f.name: values[f.name] for f in fields(cls)})


_CHUNK_FIELDS = tuple(f.name for f in fields(Chunk))


def _chunk(values: tuple) -> Chunk:
    """``Chunk(*values)`` without the frozen dataclass's checked assignment of each of its
    36 fields (``chunk_text`` makes one per chunk, in a loop over many documents)."""
    chunk = object.__new__(Chunk)
    chunk.__dict__.update(zip(_CHUNK_FIELDS, values))
    return chunk


_RESOLVED: dict[tuple, Policy] = {}  # (policy, overrides) -> resolved, for calls in a loop


def resolve_policy(policy: PolicyLike = None, **overrides) -> Policy:
    """A Policy from a Policy, a YAML file's path, or None (defaults), with ``overrides``
    (field=value; None values ignored) applied and the tokenizer checked to load.

    The same Policy (or None) with the same overrides gives the same object again without
    checking anew, so a loop of ``chunk_text`` calls does not hash the policy every time;
    a YAML file is read every time (it may have changed)."""
    key = _cache_key(policy, overrides)
    if key is not None and key in _RESOLVED:
        return _RESOLVED[key]
    resolved = _resolve(policy, **overrides)
    if key is not None:
        if len(_RESOLVED) >= 256:
            _RESOLVED.clear()
        _RESOLVED[key] = resolved
    return resolved


def _cache_key(policy: PolicyLike, overrides: dict) -> tuple | None:
    if not (policy is None or isinstance(policy, Policy)):
        return None
    key = (policy, tuple(sorted(overrides.items())))
    try:
        hash(key)
    except TypeError:  # a list given for a tuple field, say: resolved every time
        return None
    return key


def _resolve(policy: PolicyLike = None, **overrides) -> Policy:
    unknown = sorted(set(overrides) - {f.name for f in fields(Policy)})
    if unknown:
        raise PolicyError(f"unknown policy field(s): {', '.join(unknown)}")
    if isinstance(policy, Policy):
        resolved = policy.replace(**overrides)
    else:
        resolved = load_policy(policy, **overrides)
    from chunkmill.pipeline.tokens import make_counter

    try:
        make_counter(resolved.tokenizer, resolved.bias)
    except ImportError as exc:
        raise PolicyError(
            f"tokenizer {resolved.tokenizer!r}: {exc}; install the 'tokenizers' extra "
            "(pip install 'chunkmill[tokenizers]')"
        ) from exc
    except Exception as exc:  # noqa: BLE001 - tokenizers raise plain Exception on a bad file
        raise PolicyError(
            f"tokenizer {resolved.tokenizer!r}: {' '.join(str(exc).split())}"
        ) from exc
    return resolved


def chunk_text(
    text: str,
    *,
    path: str = "document.md",
    policy: PolicyLike = None,
    memory_mb: int | None = DEFAULT_DOC_MEMORY_MB,
    **overrides,
) -> list[Chunk]:
    """Chunk one document held in memory.

    ``path`` decides the format (``.md``/``.mdx``/``.markdown`` markdown, ``.txt`` plain
    text) and the ``doc_id``, as a file at that path relative to a run's INPUT would.
    ``policy`` is a Policy or a YAML file; ``overrides`` set policy fields
    (``max_tokens=512``). Raises RejectedError for a document a run would reject, and
    (reason ``too_much_memory``) for one that could take more than ``memory_mb`` MB to
    chunk, judged from its size and lines before any work (None: no limit; 25 MB of
    headings would take some 10 GB; markdown of 36-byte lines passes up to about 13 MB).

    >>> [c.breadcrumb for c in chunk_text("# A\\n\\nsome text")]
    [('A',)]
    """
    if not isinstance(text, str):
        raise TypeError(f"chunk_text takes a str, got {type(text).__name__}")
    from chunkmill.pipeline import batch, chunk, document

    resolved = resolve_policy(policy, **overrides)
    raw = document.RawDocument(path, "<memory>", text.encode("utf-8", "surrogatepass"))
    too_much = over_memory(raw.data, memory_mb)
    if too_much is not None:
        raise RejectedError(path, "too_much_memory", too_much)
    kind, row = document.decode(raw, resolved.mdx, DEFAULT_MAX_BYTES)
    if kind == "reject":
        raise RejectedError(path, row["reason"], row["detail"])
    # the common case, with no table: the stages' core calls for one document
    utf8 = memoryview(raw.data)[len(document.BOM.encode()) if row["had_bom"] else 0 :]
    done = chunk.document_rows(row, utf8, resolved, batch.counting_of(resolved))
    if done is not None:
        rows, rejects = done
        for reason, detail in rejects:
            raise RejectedError(path, reason, detail)
        return [_chunk(values) for values in rows]
    return _chunk_one(raw, resolved)


def _chunk_one(raw, policy: Policy) -> list[Chunk]:
    """``chunk_text`` by the batch stages, for a batch of one (a real tokenizer; a document
    the core leaves to the reference parser)."""
    from chunkmill.pipeline.batch import Batch, process

    tables, _ = process(Batch([raw]), policy, DEFAULT_MAX_BYTES, tables=())
    for reject in tables["rejects"].to_pylist():
        raise RejectedError(raw.path, reject["reason"], reject["detail"])
    return [Chunk.from_row(row) for row in tables["chunks"].to_pylist()]


def chunk_table(
    table: pa.Table | pl.DataFrame,
    *,
    text_column: str = "text",
    id_column: str | None = None,
    policy: PolicyLike = None,
    threads: int | None = None,
    memory_mb: int | None = DEFAULT_DOC_MEMORY_MB,
) -> pa.Table | pl.DataFrame:
    """Chunk a table of documents, one per row: a pyarrow Table in gives a pyarrow Table of
    chunks (schema ``chunkmill.pipeline.schemas.CHUNKS``), a polars DataFrame a DataFrame.

    Rows are read as ``chunkmill run`` reads a Parquet/JSONL table: ``text_column`` holds the
    text, ``id_column`` names each document (its ``path``; default: the first of path, id,
    doc_id, url, name that exists, else ``row-N``), other columns become metadata. Rows that
    a run would reject (a null text, NUL bytes) give no chunks; a warning counts them.
    ``threads``: how many threads chunk it (default: every core), batches of documents
    side by side and the documents of a batch in the Rust core; the chunks are the same
    for any number. A document that could take more than ``memory_mb`` MB to chunk (as in
    ``chunk_text``) is rejected (``too_much_memory``) before any work.
    """
    import pyarrow as pa

    from chunkmill.pipeline.inputs.sources import Selection, table_documents

    resolved = resolve_policy(policy)
    n_threads = _threads(threads)
    is_polars = type(table).__module__.split(".")[0] == "polars"
    if is_polars and hasattr(table, "collect"):  # a LazyFrame
        table = table.collect()
    if not (is_polars or isinstance(table, pa.Table)):
        raise TypeError(
            f"chunk_table takes a pyarrow Table or a polars DataFrame, not a "
            f"{type(table).__name__} (pa.Table.from_pylist makes one of a list of dicts)"
        )
    arrow = table.to_arrow() if is_polars else table
    selection = Selection(text_column=text_column, id_column=id_column)
    raws = table_documents(arrow, selection, "table")  # errors name "table: no column ..."
    chunks = _chunk_raws(raws, resolved, n_threads, memory_mb)
    if is_polars:
        import polars as pl

        return pl.from_arrow(chunks)
    return chunks


def _chunk_raws(raws, policy: Policy, n_threads: int, memory_mb: int | None) -> pa.Table:
    """The chunks table of documents read by the table rules (``chunk_table``,
    ``chunk_texts``); a warning counts the rejects."""
    import warnings
    from itertools import chain, islice

    import pyarrow as pa

    from chunkmill.pipeline import schemas
    from chunkmill.pipeline.batch import Batch, process
    from chunkmill.pipeline.batching import BATCH_DOCS, batched, in_threads

    raws = (_within_memory(raw, memory_mb) for raw in raws)
    parts, rejected = [], []

    # several batches: side by side, one thread each; a single batch: its documents on
    # every thread in the core (never threads times threads)
    groups = batched(raws, BATCH_DOCS)
    ahead = list(islice(groups, 2))
    inner = n_threads if len(ahead) < 2 else 1

    def step(group: list) -> dict:
        batch = Batch(group)
        return process(batch, policy, DEFAULT_MAX_BYTES, tables=(), threads=inner)[0]

    for tables in in_threads(step, chain(ahead, groups), n_threads):
        parts.append(tables["chunks"])
        rejected += tables["rejects"].to_pylist()
    if rejected:
        first = rejected[0]
        warnings.warn(
            f"{len(rejected)} document(s) rejected, e.g. {first['path']}: {first['reason']} "
            f"({first['detail']})",
            stacklevel=3,
        )
    return pa.concat_tables(parts) if parts else schemas.CHUNKS.empty_table()


def chunk_texts(
    texts: Sequence[str],
    *,
    paths: Sequence[str] | None = None,
    policy: PolicyLike = None,
    threads: int | None = None,
    memory_mb: int | None = DEFAULT_DOC_MEMORY_MB,
    **overrides,
) -> pa.Table:
    """Chunk many documents held in memory at once, on every core: one row of chunks
    (schema ``chunkmill.pipeline.schemas.CHUNKS``) per chunk, documents in the order given.

    ``paths`` name the documents as ``chunk_text``'s ``path`` does (default ``doc-N.md``,
    N from 0); ``policy``, ``memory_mb`` and ``overrides`` as in ``chunk_text``; ``threads``
    as in ``chunk_table``. Documents a run would reject give no chunks; a warning counts them.

    >>> chunk_texts(["# A\\n\\nsome text", "# B\\n\\nmore"])["breadcrumb"].to_pylist()
    [['A'], ['B']]
    """
    from chunkmill.pipeline.inputs.sources import Selection
    from chunkmill.pipeline.inputs.table_rows import row_documents

    if isinstance(texts, str):
        raise TypeError("chunk_texts takes a list of str; chunk_text takes one str")
    names = list(paths) if paths is not None else [f"doc-{i}.md" for i in range(len(texts))]
    if len(names) != len(texts):
        raise ValueError(f"chunk_texts: {len(texts)} texts but {len(names)} paths")
    resolved = resolve_policy(policy, **overrides)
    n_threads = _threads(threads)
    # the rows of a table of (path, text), read by the table rules without a table: a
    # lone surrogate kept as its bytes, so that its document alone is a reject
    rows = (
        {"path": name, "text": t.encode("utf-8", "surrogatepass") if isinstance(t, str) else t}
        for name, t in zip(names, texts)
    )
    raws = row_documents(rows, ["path", "text"], Selection(), "table")
    return _chunk_raws(raws, resolved, n_threads, memory_mb)


def _within_memory(raw, memory_mb: int | None):
    """``raw``, or its reject when it could take more than ``memory_mb`` to chunk."""
    too_much = over_memory(raw.data, memory_mb)
    if too_much is None:
        return raw
    from chunkmill.pipeline.document import RawDocument

    return RawDocument(
        raw.path, raw.source, None, too_much, reason="too_much_memory", n_bytes=len(raw.data)
    )


def _threads(threads: int | None) -> int:
    """The threads a library call gives the Rust core: every core unless told."""
    if threads is None:
        return usable_cores()
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive whole number, got {threads!r}")
    return threads
