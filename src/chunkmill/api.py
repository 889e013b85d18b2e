"""The Python API over output folders. Every function here is what a ``chunkmill`` command
does, callable in-process (the in-memory functions, ``chunk_text``, ``chunk_texts`` and
``chunk_table``, are in ``chunkmill.chunking``).

- ``run``: the nightly run, exactly as ``chunkmill run`` (incremental, published atomically).
- ``changes`` / ``change_records``: what changed since a run, for consumers.
- ``sync``: the published run into a vector store, as ``chunkmill sync``.
- ``connect`` / ``search`` / ``stats``: read an output folder through DuckDB.
- ``report``: the chunk-quality report of an output folder, one HTML page (``report`` extra).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunkmill.chunking import PolicyLike, resolve_policy

if TYPE_CHECKING:  # pragma: no cover
    import duckdb
    import polars as pl

    from chunkmill.jobs.report_job import ReportSummary
    from chunkmill.jobs.run_job import RunSummary
    from chunkmill.jobs.runlog import RunLog
    from chunkmill.pipeline.runstore.consumer import Changes


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
    store prefix (``s3://bucket/prefix``: see chunkmill.pipeline.runstore.objectstore).
    ``options``: the fields of ``chunkmill.RunOptions``, each the flag of `chunkmill run`
    of that name with its help there (``workers``, ``full``, ``verify``, ``keep``,
    ``include``, ``exclude``, ``names``, ``parser``, ``max_bytes``, ``doc_timeout``,
    ``doc_memory``, ``dry_run``, ``new_policy``, ``tables``, ...); an unknown one raises TypeError.
    ``progress(done, total)`` is called as documents finish. Raises
    ``chunkmill.pipeline.inputs.sources.InputError`` for an unusable input,
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
    from chunkmill.pipeline.inputs import sources
    from chunkmill.pipeline.inputs.input_labels import input_labels
    from chunkmill.pipeline.runstore import objectstore

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
    from chunkmill.pipeline.report.figures import Options

    opts = Options(bins=bins, top=top, sample=sample, tokenizer=tokenizer)
    return report_job.run(Path(out), None if page is None else Path(page), compare, opts)
