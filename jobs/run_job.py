"""Job: `chunkmill run`, the nightly run. Incremental by default, published atomically.

Per document: the same ``content_hash`` under the same parser version reuses the previous
run's documents and blocks rows (no parsing); if the policy and chunker version are also the
same, its chunks too (no packing). Output is written batch by batch in input order, exactly
as a cold run writes it, so an incremental run's Parquet is byte-identical to ``--full``'s.
When nothing changed at all, the previous files are hard-linked instead of rewritten.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from chunkmill.jobs import part_work, pool, reuse, run_batches, run_inputs, run_tally
from chunkmill.jobs.counts import RunCounts
from chunkmill.jobs.options import RunOptions
from chunkmill.jobs.runlog import RunLog, run_seconds
from chunkmill.pipeline import batch, batching, runstore, schemas
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.policy import CHUNKER_VERSION, Policy
from chunkmill.pipeline.runstore import changeset, guards, ledger, stamps
from chunkmill.pipeline.runstore.changeset import ChangeSet
from chunkmill.pipeline.runstore.published_run import (
    Previous,
    open_published,
)


@dataclass
class RunSummary:
    """What one run did: its id and folder, its row of the runs table (``record``: counts
    of documents added/changed/unchanged/deleted, chunks added/removed/kept, seconds per
    stage), and what it counted (``counts``: documents, blocks, chunks, rejects, ...)."""

    run_id: str
    record: dict
    counts: RunCounts
    folder: Path
    dry_run: bool = False  # computed and reported, not published (the folder is gone)
    # kept ids whose rows changed (every id written, when the published run was damaged)
    updated: list[str] = field(default_factory=list)
    # published chunks below folders that could not be listed that this run does not hold
    # (their documents could not be carried), and those folders: a guard refuses them
    lost_unlisted: tuple[int, list[str]] = (0, [])


@dataclass
class RunJob:
    """Everything one run needs; ``run`` executes it under the output folder's lock."""

    plan: list[sources.Source]
    root: Path
    selection: sources.Selection
    policy: Policy
    options: RunOptions = field(default_factory=RunOptions)
    workers: int = 1  # the worker processes (or Ray CPUs) this run uses
    ray_address: str | None = None  # the options' address, else RAY_ADDRESS
    progress: Callable[[int], None] = lambda n: None
    log: RunLog = field(default_factory=RunLog)
    supervisor: pool.Supervisor | None = None  # the watched workers of a local run
    stack: ExitStack = field(default_factory=ExitStack)  # stops the workers at the end

    @property
    def limits(self) -> pool.Limits:
        return pool.Limits(self.options.doc_timeout, self.options.doc_memory)

    @property
    def guards(self) -> guards.Guards:
        o = self.options
        return guards.Guards(o.allow_mass_delete, o.max_removed, o.new_policy, o.dry_run)

    def watched(self) -> pool.Supervisor:
        """Worker processes for this run's batches: a document that crashes its worker,
        overruns --doc-timeout or outgrows --doc-memory becomes a reject, nothing more."""
        return pool.Supervisor(
            self.workers,
            self.limits,
            split=part_work.split,
            merge=part_work.merge,
            on_fail=lambda part, why: part_work.failed(part, why.reason, why.detail),
            init=partial(batch.warm, self.policy),
            lazy=True,
        )

    def supervise(self) -> None:
        """The watched workers of a local run, not started yet: a batch whose rows are all
        the published run's needs none (batch.settled)."""
        if self.options.engine == "local" and self.supervisor is None:
            self.supervisor = self.stack.enter_context(self.watched())

    def start_workers(self, count: int | None = None) -> None:
        """Start ``count`` workers (all by default) as soon as the run knows it will parse
        or pack (their imports then overlap its reading), never for a run that changed
        nothing. A night starts one at its first changed document, and more only when
        batches wait for them (each start-up is about half a second of CPU: a night with a
        few changes needs one)."""
        self.supervise()
        if self.supervisor is not None:
            self.supervisor.start(count)

    def documents(self, prev: Previous | None, work: RunCounts):
        """Every document in input order: RawDocuments, and Reused ids for the files whose
        stamp is as ``prev`` recorded it (the Ray engine: whose bytes hash as in ``prev``)."""
        if self.options.engine == "ray":
            from chunkmill.jobs import ray_job

            known = prev.hashes if prev is not None else {}
            return ray_job.read(
                self.plan,
                self.selection,
                known,
                batching.BATCH_DOCS,
                self.ray_address,
                self.workers,
            )
        trusted = run_inputs.trusted_stamps(prev, self.options.verify)
        work.trusted = len(trusted)
        known = prev.hashes if prev is not None else {}
        return run_inputs.read_stamped(self.plan, self.selection, trusted, known, work)


def run(
    plan: list[sources.Source],
    root: Path,
    selection: sources.Selection,
    policy: Policy,
    options: RunOptions | None = None,
    **job,
) -> RunSummary:
    """One nightly run over ``plan`` into the run folder ``root``; publishes on success,
    unless a guard refuses (guards.Refused: recorded as ``refused``, nothing published) or
    it is a dry run (nothing recorded, nothing published). ``job``: workers, ray_address,
    progress, log (see RunJob)."""
    job = RunJob(plan, Path(root), selection, policy, options or RunOptions(), **job)
    if job.options.engine == "local" and _one_batch(plan):
        job.workers = 1  # a single batch: starting worker processes would only cost time
    dry = job.guards.dry_run
    with runstore.Lock(job.root):
        run_id = runstore.new_run_id()
        folder = runstore.run_dir(job.root, run_id)
        record = runstore.new_record(
            run_id, plan, job.options.full, policy, reuse.parse_key(policy, job.options.parser)
        )
        record["assembly_key"] = reuse.assembly_key(policy)  # for the manifest (not a runs column)
        history = None
        try:  # from here on, a failure, a refusal or Ctrl-C is recorded in the runs table
            history = runstore.history(job.root) if dry else runstore.start(job.root, job.log.warn)
            fresh = _ledger_damage(job)
            pub = runstore.current(job.root)  # the published run, opened once, under the lock
            base = guards.baseline(pub)
            guards.check_policy(
                base, policy.canonical_json(), CHUNKER_VERSION, job.guards, job.log.warn
            )
            runstore.make_run_dir(job.root, run_id)
            with job.stack:  # the workers, if the run starts them, stop at its end
                result, known, written = _execute(job, folder, record, pub)
            for pattern in job.selection.unmatched():  # before a guard refuses the run
                job.log.warn(f"--include {pattern!r} matched no path")
            _check_result(job, result, base)
        except BaseException as exc:
            _record_failure(job, history, record, exc, dry)
            raise
        if dry:
            runstore.remove_run(job.root, run_id)
            job.log.stage(
                "dry-run",
                json_also={"seconds": record["seconds"]},
                run=run_id,
                published=False,
                **run_seconds(record["seconds"], job.workers),
            )
            result.dry_run = True
            return result
        last = next((r for r in reversed(history) if r["status"] == "published"), None)
        same_ids = (  # no id added or updated, as many as before: the published ids and rows
            last is not None
            and record["chunks_added"] == record["chunks_updated"] == 0
            and record["chunks_total"] == last["chunks_total"]
        )
        ledger.record(
            job.root,
            run_id,
            folder / "chunks.parquet",
            same_ids=same_ids,
            updated=result.updated,
            fresh=fresh,
        )
        runstore.commit(job.root, history, record, known, written)
        runstore.prune(job.root, history + [record], job.options.keep, job.log.warn)
        job.log.stage(
            "publish",
            json_also={"seconds": record["seconds"]},
            run=run_id,
            folder=str(folder),
            **run_seconds(record["seconds"], job.workers),
        )
        return result


def _ledger_damage(job: RunJob) -> bool:
    """Whether the ledger is damaged: refused (it would record a wrong history), unless
    --full, which starts a new ledger from the published run (said in a warning)."""
    damage = ledger.problem(job.root)
    if damage is None:
        return False
    if not job.options.full:
        raise guards.Refused(f"{damage}; nothing was published; {ledger.RECOVERY}")
    job.log.warn(f"{damage}; --full: a new ledger starts from the published run")
    return True


def _one_batch(plan: list[sources.Source]) -> bool:
    """Whether the inputs surely make one batch: few enough local files, small enough
    together (batches end at BATCH_BYTES too: 60 files of 1 MB are 60 batches)."""
    if len(plan) > batching.BATCH_DOCS or any(s.is_table or s.scheme for s in plan):
        return False
    sizes = (sources.stat(s) for s in plan)
    return sum(st.st_size if st else 0 for st in sizes) <= batching.BATCH_BYTES


def _record_failure(job: RunJob, history, record: dict, exc: BaseException, dry: bool):
    """A refused, failed or interrupted run: recorded (unless a dry run), folder removed."""
    refused = isinstance(exc, guards.Refused)
    record.update(
        status="refused" if refused else "failed",
        error=str(exc) if refused else f"{type(exc).__name__}: {exc}",
    )
    if dry:
        runstore.remove_run(job.root, record["run_id"])
    else:
        records = history if history is not None else runstore.history(job.root)
        runstore.fail(job.root, records, record, job.log.warn)
    if isinstance(exc, KeyboardInterrupt):
        job.log.stage("interrupted", run=record["run_id"], status="failed", published=False)


def _check_result(job: RunJob, result: RunSummary, base: guards.Baseline):
    """Refuse to publish a run that read nothing, that would remove too many chunks of
    documents it no longer holds (chunks replaced by edits or by an accepted policy change
    are not counted), or that would remove the chunks of a folder it could not list."""
    removed = result.record["chunks_removed"]
    if base.chunks and removed / base.chunks > job.guards.max_removed:  # else none can pass
        lost = guards.chunks_of_lost_documents(base, result.folder)
        removed = removed if lost is None else lost
    guards.check_result(
        result.counts.documents,
        job.selection.skipped,
        removed,
        base,
        job.guards,
        result.counts.rejects,
        result.lost_unlisted,
        job.limits.options(),
    )


def _execute(
    job: RunJob, folder: Path, record: dict, pub: runstore.Published
) -> tuple[RunSummary, dict, dict]:
    """The run's files; the manifest entries of files linked from the previous run
    (``pub``, the published run as the run opened it), and of files the workers wrote and
    hashed."""
    t_start = time.perf_counter()
    policy, log = job.policy, job.log
    prev, old, note = open_published(job.root, pub)
    record["previous_run"] = old.run_id
    if note:
        log.warn(note)
    manifest = prev.manifest if prev is not None else None
    reuse_blocks, reuse_chunks = reuse.reusable(
        manifest, policy, record["parser_version"], job.options.full
    )
    lacking = [t for t in job.options.tables if prev is not None and not prev.has(t)]
    if lacking and reuse_blocks:
        log.warn(
            f"the published run has no {' or '.join(lacking)} table: every document is "
            "parsed and packed again to write it (the chunks stay the same)"
        )
        reuse_blocks = reuse_chunks = False
    if not reuse_chunks:  # there will be packing to do
        job.start_workers()
    tally = run_tally.Tally()
    work = tally.work
    if "blocks" not in job.options.tables:
        work.blocks = None
    work.limits = job.limits.options()
    raws = run_inputs.carry_unlisted(
        job.documents(prev if reuse_blocks else None, work), prev, job.plan
    )
    items, unchanged = raws, None
    if reuse_blocks:
        hashed = run_inputs.hash_inputs(raws, prev, tally, partial(job.start_workers, 1))
        unchanged, items = run_inputs.unchanged_or_stream(
            run_inputs.read_logged(hashed, log, work, t_start)
        )
    nothing_changed = reuse_chunks and unchanged is not None and tally.seen == set(prev.hashes)
    known: dict = {}
    written: dict = {}
    if nothing_changed:
        known = reuse.link_previous(prev, folder, schemas.content_tables(job.options.tables))
        job.progress(len(unchanged))
        reuse.summaries_of_linked(folder, tally)
        changes = None
    else:
        job.supervise()  # started at the first changed document (run_inputs.hash_inputs), if any
        stored = None if prev is None else partial(prev.take, "chunks")
        # every document is packed again, unless its chunks are reused
        repacked = tally.fresh if reuse_chunks else None
        changes = ChangeSet(old, folder, stored, repacked, damaged=note is not None)
        try:
            known, written = run_batches.write(
                job, folder, items, prev, reuse_chunks, reuse_blocks, tally, changes
            )
        except BaseException:
            changes.abort()
            raise
    if prev is not None and 0 < work.trusted == work.unread == len(work.stamped):
        known.update(reuse.link_previous(prev, folder, [stamps.NAME]))  # every stamp as it was
    else:
        stamps.write(folder, work.stamped)
    t_changes = time.perf_counter()
    counts = changeset.unchanged(folder) if changes is None else changes.close(tally.unlisted)
    updated = [] if changes is None else changes.updated
    work.seconds["changes"] += time.perf_counter() - t_changes
    log.stage(
        "changes",
        added=counts["added"],
        removed=counts["removed"],
        updated=counts["updated"],
        kept=counts["kept"],
        seconds=work.seconds["changes"],
    )
    same = prev.hashes if nothing_changed else tally.hashes  # the very same file, or written
    run_tally.fill_record(record, old, tally, counts, t_start, same)
    work.skipped = job.selection.skipped
    work.bytes = work.bytes_read if reuse_blocks else work.bytes
    work.wall = time.perf_counter() - t_start
    lost = counts["unlisted_lost"], sorted(tally.unlisted)
    summary = RunSummary(
        record["run_id"], record, work, folder, updated=updated, lost_unlisted=lost
    )
    return summary, known, written
