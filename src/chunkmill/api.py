"""The Python API. Every function here is what a ``chunkmill`` command does, callable in-process.

- ``chunk_text``: one document (a str) in memory -> a list of ``Chunk``; no files, no pool.
- ``chunk_table``: a table of documents (pyarrow or polars) -> the chunks table, same library.
- ``run``: the nightly run, exactly as ``chunkmill run`` (incremental, published atomically).
- ``connect`` / ``search`` / ``stats``: read an output folder through DuckDB.
- ``report``: the chunk-quality report of an output folder, one HTML page (``report`` extra).

Chunk rows are the same whichever entry point makes them: ``chunk_text`` and ``chunk_table``
call the per-batch stages (``chunkmill.pipeline.batch.process``) that a run calls.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
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
    import duckdb
    import polars as pl
    import pyarrow as pa

    from chunkmill.jobs.report_job import ReportSummary
    from chunkmill.jobs.run_job import RunSummary
    from chunkmill.jobs.runlog import RunLog
    from chunkmill.pipeline.runstore.consumer import Changes

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

    from chunkmill.pipeline.sources import Selection, table_documents

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
    from chunkmill.pipeline.batch import BATCH_DOCS, Batch, batched, in_threads, process

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
    from chunkmill.pipeline.sources import Selection
    from chunkmill.pipeline.table_rows import row_documents

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


def run(
    inputs: str | Path | Iterable[str | Path],
    out: str | Path,
    *,
    policy: PolicyLike = None,
    progress: Callable[[int, int], None] | None = None,
    log: RunLog | None = None,
    **options: Any,
) -> RunSummary:
    """One nightly run of ``inputs`` into the output folder ``out``, exactly as
    ``chunkmill run``: incremental against the published run, published atomically.

    ``inputs``: folders, files, Parquet/JSONL tables or URIs; ``out`` a folder or an object-
    store prefix (``s3://bucket/prefix``: see chunkmill.pipeline.objectstore).
    ``options``: the fields of ``chunkmill.RunOptions``, each the flag of `chunkmill run`
    of that name with its help there (``workers``, ``full``, ``verify``, ``keep``,
    ``include``, ``exclude``, ``names``, ``parser``, ``max_bytes``, ``doc_timeout``,
    ``doc_memory``, ``dry_run``, ``new_policy``, ``tables``, ...); an unknown one raises TypeError.
    ``progress(done, total)`` is called as documents finish. Raises
    ``chunkmill.pipeline.sources.InputError`` for an unusable input,
    ``chunkmill.pipeline.runstore.LockedError`` when another run holds ``out``.
    Documents are parsed and chunked in worker processes (also with one worker): one whose
    worker works on it longer than ``doc_timeout`` seconds, grows past ``doc_memory`` MB or
    dies becomes a reject (timeout, too_much_memory, crashed). Idle workers stay for the
    next run of this process (``chunkmill.jobs.pool.shutdown()`` ends them).

    Guards (``chunkmill.pipeline.runstore.guards``), as on the command line: a run that
    reads no document, or would remove more than ``max_removed`` of the published chunks,
    publishes nothing unless ``allow_mass_delete``; a policy (or chunker version) other than
    the published one is refused unless ``new_policy``; both raise ``chunkmill.Refused`` (its
    ``code`` is the exit code of `chunkmill run`). ``dry_run`` does the work, reports it
    (``summary.dry_run``) and publishes and records nothing.

    With several inputs, document paths (and so doc ids) start with each input's label:
    ``names`` ({input: label}) or its folder's name; duplicate labels raise ``InputError``.
    A single input keeps plain paths unless it is named.
    """

    from chunkmill.jobs import options as option_values
    from chunkmill.jobs import pool, reuse, run_job
    from chunkmill.jobs.options import RunOptions
    from chunkmill.jobs.runlog import RunLog
    from chunkmill.pipeline import objectstore, sources
    from chunkmill.pipeline.input_labels import input_labels

    resolved = resolve_policy(policy)
    opts = option_values.of(RunOptions, options)
    if isinstance(inputs, str | Path):
        inputs = [inputs]
    selection = sources.Selection.of(opts, None if objectstore.is_uri(out) else Path(out))
    inputs = [str(i) for i in inputs]
    names = {str(k): v for k, v in dict(opts.names or {}).items()}
    if opts.engine == "local" and not objectstore.is_uri(out):
        reuse.prestart(Path(out), resolved, opts)
    plan = sources.plan(inputs, selection, input_labels(inputs, names))
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, len(plan))

    def one_run(root: Path) -> RunSummary:
        return run_job.run(
            plan,
            root,
            selection,
            resolved,
            opts,
            workers=opts.workers or pool.default_workers(),
            ray_address=opts.ray_address or os.environ.get("RAY_ADDRESS"),
            progress=advance,
            log=log or RunLog(),
        )

    if objectstore.is_uri(out):
        return objectstore.run_staged(str(out), one_run, opts.keep)
    return one_run(Path(out))


def changes(out: str | Path, since: str | None, updates: bool = False) -> Changes:
    """The change set from run ``since`` to the published run of ``out`` (a folder or an
    object-store prefix), as ``chunkmill changes``: a ``Changes`` with ``adds`` (whole
    chunk rows to embed and upsert), ``removes`` (chunk ids to delete), with ``updates``
    also ``updates`` (whole new rows of kept ids whose other columns changed), ``until``
    (the run it brings you to: store it once everything is applied, and pass it as
    ``since`` next time) and ``table`` (every op in one Arrow table, schema
    ``schemas.CHANGES``, as ``--format parquet`` writes it). Works after the runs in between
    were pruned (DIR/ledger.parquet). ``since`` None: every published chunk as an add
    (``chunkmill changes --all``). Raises ``chunkmill.LedgerError`` for a run the ledger
    never saw, and ``chunkmill.pipeline.runstore.DamagedRunError`` when the published
    chunks file does not match its run's manifest (it is checked first)."""
    from chunkmill.pipeline.runstore import ledger
    from chunkmill.pipeline.runstore.consumer import Changes

    return Changes.of(ledger.changes_since(out, since, updates))


def sync(
    out: str | Path,
    to: str,
    embedder: str = "minilm",
    *,
    table: str = "chunks",
    columns: str | None = None,
    prefix: str = "",
    cache: str | Path | None = None,
    repair: bool = False,
    verify: bool = False,
    reembed: bool = False,
    fts: bool = False,
):
    """``chunkmill sync``: bring ``table`` of the store ``to`` (``lancedb://PATH``,
    ``postgresql://...``) to exactly the published run of ``out``, embedding with
    ``embedder`` (a spec as ``--embedder`` takes) what its cache lacks. Returns a
    ``SyncSummary`` (added, updated, removed, embedded, reused, seconds, up_to_date); with
    ``verify``, changes nothing and returns a ``StoreDiff`` (missing, stale, extra: ids;
    false when the table is exact). Raises ``chunkmill.SyncRefused`` (another embedder's
    table, chunks over the model's limit) before anything is embedded or written."""
    from chunkmill.pipeline.sync import columns as store_columns
    from chunkmill.pipeline.sync import embedders, syncing

    model = embedders.named(embedder, prefix=prefix)
    chosen = store_columns.choose(columns)
    cache = Path(cache).expanduser() if cache is not None else None
    out = out if isinstance(out, str) and "://" in out else Path(out).expanduser()
    if verify:
        return syncing.verify(out, to, model, table=table, columns=chosen, cache=cache)
    return syncing.sync(
        out,
        to,
        model,
        table=table,
        columns=chosen,
        cache=cache,
        repair=repair,
        reembed=reembed,
        fts=fts,
    )


def change_records(out: str | Path, since: str | None, updates: bool = False) -> list[dict]:
    """``changes`` as JSON records, as ``chunkmill changes --format jsonl`` prints them:
    ``front_matter`` a dict of the values as written (strings stay strings; see
    ``chunkmill.pipeline.runstore.change_records``) and ``next_since``, the run to store, in
    each."""
    from chunkmill.pipeline.runstore import change_records

    return change_records.records(out, since, updates)


def connect(out: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the views of ``sql/views.sql`` (documents, blocks,
    chunks, rejects, postings, runs; plus changes) over the published run of ``out``. Their
    files are checked against the run's manifest first: ``DamagedRunError`` (from
    ``chunkmill.pipeline.runstore``) names a damaged one. Blocks and postings the run did
    not write (``tables``) are made in memory first, as the run would have written them."""
    from chunkmill.pipeline import queries

    return queries.connect(out)


def search(out: str | Path, query: str, *, limit: int = 10, **filters) -> pl.DataFrame:
    """BM25 keyword search over the published run of ``out`` (``sql/search.sql``), as
    ``chunkmill search``. Filters: section, level, chunk_type, path (GLOB), fm_key/fm_value.
    A row per hit: rank, score, path, breadcrumb, line_start, line_end, chunk_type,
    header_level, chunk_id, preview, url, anchor, text. The files it reads are checked
    first, as for ``connect``."""
    from chunkmill.pipeline import queries

    return queries.search(out, query, limit=limit, **filters)


def stats(out: str | Path, *, bins: int = 20) -> dict[str, pl.DataFrame]:
    """The chunk-quality figures of ``chunkmill stats``: one polars frame per ``sql/stats``
    file (overview, tokens, histogram, per_document, mix, ...)."""
    from chunkmill.pipeline import queries

    return queries.stats(out, bins=bins)


def report(
    out: str | Path,
    page: str | Path | None = None,
    *,
    compare: str | None = None,
    tokenizer: str | None = None,
    sample: int = 2000,
    bins: int = 40,
    top: int = 15,
) -> ReportSummary:
    """Write the chunk-quality report of ``out``, as ``chunkmill report``: one self-contained
    HTML page (default ``out/report.html``) with a chart per question. ``compare`` is a run
    id of ``out`` or another output folder, shown side by side; ``tokenizer`` recounts a
    sample of ``sample`` chunks to chart the estimate against it. Needs the ``report``
    extra (plotly); without it raises ``ReportUnavailable`` (an ImportError)."""
    from chunkmill.jobs import report_job
    from chunkmill.pipeline.report import Options

    opts = Options(bins=bins, top=top, sample=sample, tokenizer=tokenizer)
    return report_job.run(Path(out), None if page is None else Path(page), compare, opts)
