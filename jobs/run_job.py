"""Job: `mdchunk run`, the nightly run. Incremental by default, published atomically.

Per document: the same ``content_hash`` under the same parser version reuses the previous
run's documents and blocks rows (no parsing); if the policy and chunker version are also the
same, its chunks too (no packing). Output is written batch by batch in input order, exactly
as a cold run writes it, so an incremental run's Parquet is byte-identical to ``--full``'s.
When nothing changed at all, the previous files are hard-linked instead of rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mdchunk.jobs import blocks_job, pool
from mdchunk.jobs.chunks_job import ChunksSummary, run_metadata
from mdchunk.jobs.guards import Guards, Refused, check_policy, check_result, policy_differences
from mdchunk.jobs.runlog import RunLog
from mdchunk.pipeline import batch, ledger, runstore, schemas, sources, store
from mdchunk.pipeline.batch import Batch, DocRows, Reused
from mdchunk.pipeline.block import with_estimates
from mdchunk.pipeline.document import make_doc_id
from mdchunk.pipeline.parse import PARSER_VERSION
from mdchunk.pipeline.policy import CHUNKER_VERSION, Policy

BATCH_DOCS = blocks_job.BATCH_DOCS


def parse_key(policy: Policy) -> str:
    """What decides whether stored blocks can be reused: parser version and MDX mode."""
    return f"{PARSER_VERSION}|mdx={policy.mdx}"


@dataclass
class Previous:
    """The published run we build on: its tables and what produced them."""

    folder: Path
    run: dict
    hashes: dict[str, str]
    sizes: dict[str, int] = field(default_factory=dict)  # n_bytes of each document
    tables: dict[str, DocRows] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path, run: dict) -> Previous:
        docs = pq.read_table(
            folder / "documents.parquet", columns=["doc_id", "content_hash", "n_bytes"]
        )
        ids = docs["doc_id"].to_pylist()
        return cls(
            folder,
            run,
            dict(zip(ids, docs["content_hash"].to_pylist())),
            dict(zip(ids, docs["n_bytes"].to_pylist())),
        )

    def table(self, name: str) -> DocRows:
        if name not in self.tables:
            self.tables[name] = DocRows(store.read(self.folder, name))
        return self.tables[name]

    def take(self, name: str, doc_ids: list[str]) -> pa.Table:
        return self.table(name).take(doc_ids)

    def blocks(self, doc_ids: list[str], bias: str) -> pa.Table:
        """Stored blocks, their estimates redone when the bias changed (no parsing)."""
        t = self.take("blocks", doc_ids)
        if json.loads(self.run["policy"])["bias"] == bias or t.num_rows == 0:
            return t
        return with_estimates(pl.from_arrow(t), bias).to_arrow().cast(schemas.BLOCKS)


@dataclass
class Work:
    parsed: int = 0
    repacked: int = 0
    reused: int = 0  # documents whose bytes did not change
    bytes_read: int = 0  # of documents only hashed (reused), not parsed
    seconds: Counter = field(default_factory=Counter)  # summed over workers for parse/chunk

    def add(self, counts: Counter) -> None:
        self.parsed += counts["parsed"]
        self.repacked += counts["repacked"]
        self.seconds["parse"] += counts["seconds_parse"]
        self.seconds["chunk"] += counts["seconds_chunk"]


def prepare(items: list, prev: Previous | None, policy: Policy, reuse_chunks: bool) -> Batch:
    """In the main process: the previous run's rows of this batch's unchanged documents."""
    reused = [x.doc_id for x in items if isinstance(x, Reused)]
    if not reused:
        return Batch(items)
    return Batch(
        items,
        prev.take("documents", reused),
        prev.blocks(reused, policy.bias),
        prev.take("chunks", reused) if reuse_chunks else None,
    )


def _hash_inputs(raws, prev: Previous, work: Work, max_bytes: int) -> list:
    """Fresh RawDocuments for new or changed bytes, Reused ids for the rest, in order. A
    document over --max-bytes is never reused: the documents stage rejects it (too_large),
    as a cold run would, also when the limit was lowered since the last run."""
    items = []
    for raw in raws:
        work.bytes_read += len(raw.data or b"")
        doc_id = make_doc_id(raw.path)
        fits = raw.data is not None and len(raw.data) <= max_bytes
        digest = hashlib.sha256(raw.data).hexdigest() if fits else None
        items.append(Reused(doc_id) if digest and prev.hashes.get(doc_id) == digest else raw)
    return items


def _link_previous(prev: Previous, folder: Path) -> None:
    for name in schemas.CONTENT_TABLES:
        src, dst = prev.folder / f"{name}.parquet", folder / f"{name}.parquet"
        try:
            os.link(src, dst)
        except OSError:  # another filesystem, or links not allowed: copy
            dst.write_bytes(src.read_bytes())


def write_changes(old_folder: Path | None, folder: Path) -> Counter:
    """Write folder/changes.parquet: chunk ids added (with their rows) and removed relative
    to the run in ``old_folder``. Streams the new chunks by row group, so memory does not
    grow with them."""
    old_ids: set[str] = set()
    if old_folder is not None:
        old = pq.read_table(old_folder / "chunks.parquet", columns=["chunk_id"])
        old_ids = set(old["chunk_id"].to_pylist())
    old_set = pa.array(sorted(old_ids), pa.string())
    counts: Counter = Counter()
    new_ids: set[str] = set()
    writer = store.TableWriter(folder / "changes.parquet", schemas.CHANGES)
    try:
        for part in pq.ParquetFile(folder / "chunks.parquet").iter_batches(batch_size=4096):
            part = pa.Table.from_batches([part]).cast(schemas.CHUNKS)
            new_ids.update(part["chunk_id"].to_pylist())
            added = part.filter(pc.invert(pc.is_in(part["chunk_id"], value_set=old_set)))
            ops = pa.array(["add"] * added.num_rows, pa.string())
            writer.write(added.add_column(0, "op", ops).cast(schemas.CHANGES))
            counts["added"] += added.num_rows
            counts["total"] += part.num_rows
        removed = sorted(old_ids - new_ids)
        if removed:
            old = pq.read_table(
                old_folder / "chunks.parquet", columns=["chunk_id", "doc_id", "path"]
            )
            old = old.filter(pc.is_in(old["chunk_id"], value_set=pa.array(removed)))
            rows = [{"op": "remove", **r} for r in old.sort_by("chunk_id").to_pylist()]
            writer.write(pa.Table.from_pylist(rows, schema=schemas.CHANGES))
    except BaseException:
        writer.abort()
        raise
    writer.close()
    counts["removed"] = len(removed)
    counts["kept"] = counts["total"] - counts["added"]
    return counts


@dataclass
class RunSummary:
    """What one run did: its id and folder, its row of the runs table (``record``: counts
    of documents added/changed/unchanged/deleted, chunks added/removed/kept, seconds per
    stage), and the summaries of its blocks and chunks stages."""

    run_id: str
    record: dict
    chunks: ChunksSummary
    blocks: blocks_job.BlocksSummary
    folder: Path
    dry_run: bool = False  # computed and reported, not published (the folder is gone)


@dataclass
class RunJob:
    """Everything one run needs; ``run`` executes it under the output folder's lock."""

    plan: list[sources.Source]
    root: Path
    selection: sources.Selection
    policy: Policy
    max_bytes: int
    full: bool = False
    keep: int = 3
    workers: int = 1
    engine: str = "local"  # local (process pool) | ray (Ray Data; recomputes every document)
    ray_address: str | None = None
    limits: pool.Limits = field(default_factory=pool.Limits)
    guards: Guards = field(default_factory=Guards)
    progress: Callable[[int], None] = lambda n: None
    log: RunLog = field(default_factory=RunLog)
    supervisor: pool.Supervisor | None = None  # the watched workers of a local run

    def watched(self) -> pool.Supervisor:
        """Worker processes for this run's batches: a document that crashes its worker,
        overruns --doc-timeout or outgrows --doc-memory becomes a reject, nothing more."""
        return pool.Supervisor(
            self.workers,
            self.limits,
            split=batch.split,
            merge=batch.merge,
            on_fail=lambda part, why: batch.failed(part, why.reason, why.detail),
            init=partial(batch.warm, self.policy),
        )

    def results(self, items, prev, reuse_chunks: bool):
        """(tables, counters) of every batch, in input order, from the chosen engine."""
        if self.engine == "ray":
            from mdchunk.jobs import ray_job

            return ray_job.ordered_results(
                self.plan,
                self.selection,
                self.policy,
                self.max_bytes,
                BATCH_DOCS,
                self.ray_address,
                self.workers,
            )

        def size(item) -> int:  # the same for a document's bytes, read or reused
            if isinstance(item, Reused):
                return prev.sizes.get(item.doc_id) or 0
            return len(item.data or b"")

        batches = (
            prepare(b, prev, self.policy, reuse_chunks)
            for b in blocks_job.batched_by_size(items, size)
        )
        step = partial(batch.process, policy=self.policy, max_bytes=self.max_bytes)
        return self.supervisor.map(step, batches)


def run(
    plan: list[sources.Source],
    root: Path,
    selection: sources.Selection,
    policy: Policy,
    max_bytes: int,
    **options,
) -> RunSummary:
    """One nightly run over ``plan`` into the run folder ``root``; publishes on success,
    unless a guard refuses (Refused: recorded as ``refused``, nothing published) or
    it is a dry run. Options: full, keep, workers, limits, guards, progress, log (RunJob)."""
    job = RunJob(plan, Path(root), selection, policy, max_bytes, **options)
    if job.engine == "local" and _one_batch(plan):
        job.workers = 1  # a single batch: one worker is enough
    dry = job.guards.dry_run
    with runstore.Lock(job.root):
        run_id = runstore.new_run_id()
        record = runstore.new_record(run_id, plan, job.full, policy, parse_key(policy))
        folder = runstore.run_dir(job.root, run_id)
        history = None
        try:  # from here on, a failure or Ctrl-C is recorded in the runs table
            history = runstore.history(job.root)
            if not dry:
                runstore.clean_abandoned(job.root, history)
            last = published_record(job.root, history)
            differences = _check_policy(job, last)
            folder.mkdir(parents=True)
            if job.engine == "local":  # workers start now: their imports overlap our reading
                with job.watched() as job.supervisor:
                    result = _execute(job, folder, last, record)
            else:
                result = _execute(job, folder, last, record)
            _check_result(job, result, last, differences)
        except BaseException as exc:
            refused = isinstance(exc, Refused)
            record.update(
                status="refused" if refused else "failed",
                error=str(exc) if refused else f"{type(exc).__name__}: {exc}",
            )
            if not dry:
                if history is None:
                    history = runstore.history(job.root)
                runstore.finish(job.root, history, record, succeeded=False)
            runstore.remove_run(job.root, run_id)
            if isinstance(exc, KeyboardInterrupt):
                job.log.stage("interrupted", run=run_id, status=record["status"], published=False)
            raise
        if dry:
            runstore.remove_run(job.root, run_id)
            job.log.stage("dry-run", run=run_id, published=False, seconds=record["seconds"])
            result.dry_run = True
            return result
        ledger.record(job.root, run_id, folder / "chunks.parquet")
        runstore.finish(job.root, history, record, succeeded=True)
        runstore.prune(job.root, history + [record], job.keep)
        job.log.stage("publish", run=run_id, folder=str(folder), seconds=record["seconds"])
        return result


def _one_batch(plan: list[sources.Source]) -> bool:
    """Whether the plan surely fits one batch (local files only: their sizes are known)."""
    if len(plan) > BATCH_DOCS or any(s.is_table or s.scheme for s in plan):
        return False
    try:
        return sum(os.stat(s.path).st_size for s in plan) <= blocks_job.BATCH_BYTES
    except OSError:
        return False


def published_record(root: Path, history: list[dict]) -> dict | None:
    """The runs-table row of the run DIR/CURRENT points to (after a rollback that is not
    the last run published), or None when nothing is published."""
    folder = runstore.published(root)
    if folder is None:
        return None
    rows = [r for r in history if r["run_id"] == folder.name and r["status"] == "published"]
    return rows[-1] if rows else runstore.last_published(history)


def _published_chunks(root: Path) -> int:
    folder = runstore.published(root)
    if folder is None or not (folder / "chunks.parquet").exists():
        return 0
    return pq.read_metadata(folder / "chunks.parquet").num_rows


def _check_policy(job: RunJob, last: dict | None) -> list[str]:
    """Refuse, before any work, a policy that would change every published chunk id."""
    if last is None:
        return []
    differences = policy_differences(last, job.policy.canonical_json(), CHUNKER_VERSION)
    check_policy(last, differences, _published_chunks(job.root), job.guards)
    return differences


def _check_result(job: RunJob, result: RunSummary, last: dict | None, changed: list[str]):
    """Refuse to publish a run that read nothing or would remove too much. After an
    accepted policy change every id changes: then only chunks of vanished documents count."""
    published = _published_chunks(job.root) if last is not None else 0
    removed = result.record["chunks_removed"]
    if changed and published:
        removed = _chunks_of_vanished_documents(runstore.published(job.root), result.folder)
    check_result(
        result.blocks.documents,
        sum(job.selection.skipped.values()),
        removed,
        published,
        job.guards,
    )


def _chunks_of_vanished_documents(old: Path, new: Path) -> int:
    before = pl.read_parquet(old / "chunks.parquet", columns=["doc_id"])
    after = pl.read_parquet(new / "chunks.parquet", columns=["doc_id"])
    return before.filter(~pl.col("doc_id").is_in(after["doc_id"].unique().implode())).height


def _execute(job: RunJob, folder: Path, last: dict | None, record: dict) -> RunSummary:
    t_start = time.perf_counter()
    policy, log = job.policy, job.log
    prev_folder = runstore.published(job.root)
    prev = None  # the change set is always relative to it, even with --full
    if prev_folder is not None and last is not None:
        prev = Previous.load(prev_folder, last)
        record["previous_run"] = last["run_id"]
    reuse_blocks = (
        prev is not None
        and not job.full
        and job.engine == "local"
        and prev.run["parser_version"] == parse_key(policy)
    )
    reuse_chunks = (
        reuse_blocks
        and prev.run["policy_hash"] == policy.policy_hash
        and prev.run["chunker_version"] == CHUNKER_VERSION
    )
    work = Work()
    raws = sources.read(job.plan, job.selection) if job.engine == "local" else iter(())
    items = _hash_inputs(raws, prev, work, job.max_bytes) if reuse_blocks else raws
    bsum, csum = blocks_job.BlocksSummary(), ChunksSummary()
    seen: set[str] = set()
    if reuse_blocks:
        work.seconds["read"] = time.perf_counter() - t_start
        seen = {x.doc_id if isinstance(x, Reused) else make_doc_id(x.path) for x in items}
        work.reused = sum(isinstance(x, Reused) for x in items)
        log.stage("read", documents=len(items), unchanged=work.reused, seconds=work.seconds["read"])
    nothing_changed = reuse_chunks and work.reused == len(items) and seen == set(prev.hashes)
    if nothing_changed:
        _link_previous(prev, folder)
        job.progress(len(items))
    else:
        with store.OutputSet(folder, schemas.CONTENT_TABLES, run_metadata(policy)) as output:
            for tables, counts in job.results(items, prev, reuse_chunks):
                t1 = time.perf_counter()
                for name, table in tables.items():
                    output.write(name, table)
                work.seconds["write"] += time.perf_counter() - t1
                work.add(counts)
                if not reuse_blocks:  # reading was interleaved with parsing
                    seen.update(tables["documents"]["doc_id"].to_pylist())
                    seen.update(tables["rejects"]["doc_id"].to_pylist())
                bsum.add(counts["bytes"], tables["documents"], tables["blocks"], tables["rejects"])
                csum.add(tables["chunks"], tables["rejects"], tables["documents"].num_rows)
                job.progress(counts["items"])
        log.stage(
            "parse",
            documents_parsed=work.parsed,
            documents_reused=work.reused,
            workers=job.workers,
            seconds=work.seconds["parse"],
        )
        log.stage(
            "chunk",
            documents_repacked=work.repacked,
            chunks=csum.chunks,
            strategies=dict(csum.strategies),
            seconds=work.seconds["chunk"],
        )
    t_changes = time.perf_counter()
    counts = write_changes(prev.folder if prev else None, folder)
    work.seconds["changes"] = time.perf_counter() - t_changes
    log.stage(
        "changes",
        added=counts["added"],
        removed=counts["removed"],
        kept=counts["kept"],
        seconds=work.seconds["changes"],
    )
    _fill_record(record, prev, seen, folder, work, counts, t_start)
    if nothing_changed:  # the summaries come from the linked files
        docs = pq.read_table(folder / "documents.parquet", columns=["doc_id"])
        rejects = pq.read_table(folder / "rejects.parquet", schema=schemas.REJECTS)
        chunks = pq.read_table(folder / "chunks.parquet", columns=["strategy", "n_tokens"])
        bsum.documents = docs.num_rows
        bsum.blocks = pq.read_metadata(folder / "blocks.parquet").num_rows
        csum.add(chunks, rejects, docs.num_rows)
    bsum.skipped = job.selection.skipped
    bsum.bytes = work.bytes_read if reuse_blocks else bsum.bytes
    bsum.seconds = csum.seconds = time.perf_counter() - t_start
    return RunSummary(record["run_id"], record, csum, bsum, folder)


def _fill_record(record, prev, seen, folder, work, counts, t_start) -> None:
    """Counts for the runs table; document changes are judged by content hash."""
    docs = pq.read_table(folder / "documents.parquet", columns=["doc_id", "content_hash"])
    hashes = dict(zip(docs["doc_id"].to_pylist(), docs["content_hash"].to_pylist()))
    rejects = pq.read_metadata(folder / "rejects.parquet").num_rows
    old = prev.hashes if prev else {}
    record.update(
        documents_added=sum(1 for d in hashes if d not in old),
        documents_changed=sum(1 for d, h in hashes.items() if d in old and old[d] != h),
        documents_unchanged=sum(1 for d, h in hashes.items() if old.get(d) == h),
        documents_deleted=len(old.keys() - seen),
        documents_parsed=work.parsed,
        documents_repacked=work.repacked,
        rejects=rejects,
        chunks_added=counts["added"],
        chunks_removed=counts["removed"],
        chunks_kept=counts["kept"],
        chunks_total=counts["total"],
        seconds={
            **{k: round(v, 3) for k, v in work.seconds.items()},
            "total": round(time.perf_counter() - t_start, 3),
        },
    )
