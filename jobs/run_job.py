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

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mdchunk.jobs import blocks_job, pool
from mdchunk.jobs.chunks_job import ChunksSummary, run_metadata
from mdchunk.jobs.runlog import RunLog
from mdchunk.pipeline import batch, runstore, schemas, sources, stamps, store
from mdchunk.pipeline.batch import DEFAULT_BACKEND, Batch, DocRows, Reused
from mdchunk.pipeline.document import make_doc_id
from mdchunk.pipeline.policy import CHUNKER_VERSION, Policy

BATCH_DOCS = blocks_job.BATCH_DOCS


def parse_key(policy: Policy, parser: str = DEFAULT_BACKEND) -> str:
    """What decides whether stored blocks can be reused: parser version, backend (with its
    version) and MDX mode."""
    from mdchunk.pipeline.parse import parser_key

    return f"{parser_key(parser)}|mdx={policy.mdx}"


@dataclass
class Previous:
    """The published run we build on: its tables and what produced them."""

    folder: Path
    run: dict
    hashes: dict[str, str]
    stamps: dict[str, stamps.Stamp] = field(default_factory=dict)  # stamps.key -> stamp
    tables: dict[str, DocRows] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path, run: dict) -> Previous:
        docs = _read(folder / "documents.parquet", ["doc_id", "content_hash"])
        hashes = dict(zip(docs["doc_id"].to_pylist(), docs["content_hash"].to_pylist()))
        return cls(folder, run, hashes, stamps.load(folder))

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
        import polars as pl

        from mdchunk.pipeline.block import with_estimates

        return with_estimates(pl.from_arrow(t), bias).to_arrow().cast(schemas.BLOCKS)


def _read(path: Path, columns: list[str]) -> pa.Table:
    """Columns of one Parquet file (ParquetFile, not read_table: that one loads pyarrow's
    dataset layer and pandas, a second of start-up for a run that may do nothing else)."""
    return pq.ParquetFile(path).read(columns=columns)


@dataclass
class Work:
    parsed: int = 0
    repacked: int = 0
    reused: int = 0  # documents whose bytes did not change
    bytes_read: int = 0  # of documents only hashed or stamped (reused), not parsed
    unread: int = 0  # documents reused on their file stamp alone, without reading them
    stamped: list = field(default_factory=list)  # (stamps.key, doc_id, stamp) to record
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


def _by_hash(raw, prev: Previous, work: Work):
    """Reused when the bytes hash as in the previous run, else the RawDocument."""
    work.bytes_read += len(raw.data or b"")
    doc_id = make_doc_id(raw.path)
    digest = hashlib.sha256(raw.data).hexdigest() if raw.data is not None else None
    return Reused(doc_id) if digest and prev.hashes.get(doc_id) == digest else raw


def _classify_inputs(plan, selection, prev: Previous, work: Work, verify: bool) -> list:
    """Fresh RawDocuments for new or changed bytes, Reused ids for the rest, in order. A file
    whose stamp (size, mtime, ctime, inode) is as the previous run recorded it is reused
    without being read; the others are read and hashed (all of them with ``verify``)."""
    items = []
    now = time.time_ns()
    for src in plan:
        if src.is_table:
            items.extend(_by_hash(raw, prev, work) for raw in sources.read([src], selection))
            continue
        stamp = stamps.of(sources.stat(src), now)
        doc_id = make_doc_id(_relative(src))
        key = stamps.key(src)
        if stamp and not verify and prev.stamps.get(key) == stamp and doc_id in prev.hashes:
            items.append(Reused(doc_id))
            work.unread += 1
            work.bytes_read += stamp[0]
        else:
            items.append(_by_hash(next(sources.read([src], selection)), prev, work))
        if stamp:
            work.stamped.append((key, doc_id, stamp))
    return items


def _relative(src: sources.Source) -> str:
    """The path of a file source relative to its root, as its documents row names it
    (string operations: pathlib's relative_to is slow over ten thousand files)."""
    path, root = str(src.path), str(src.root).rstrip("/\\")
    if path.startswith(root) and path[len(root) : len(root) + 1] in ("/", os.sep):
        return path[len(root) + 1 :].replace(os.sep, "/")
    return src.path.relative_to(src.root).as_posix()


def _stamped(plan, selection, work: Work):
    """The documents of ``plan`` as sources.read yields them, each file stamped first."""
    now = time.time_ns()
    for src in plan:
        stamp = stamps.of(sources.stat(src), now)
        if stamp:
            doc_id = make_doc_id(_relative(src))
            work.stamped.append((stamps.key(src), doc_id, stamp))
        yield from sources.read([src], selection)


def _link_previous(prev: Previous, folder: Path) -> None:
    for name in schemas.CONTENT_TABLES:
        src, dst = prev.folder / f"{name}.parquet", folder / f"{name}.parquet"
        try:
            os.link(src, dst)
        except OSError:  # another filesystem, or links not allowed: copy
            dst.write_bytes(src.read_bytes())


def _changes(prev: Previous | None, folder: Path, nothing_changed: bool = False) -> Counter:
    """Write changes.parquet: chunk ids added (with their rows) and removed relative to the
    previous run. Only the chunk ids are read whole; the rows of added chunks are read row
    group by row group, only from the groups that hold some, so memory does not grow with
    the chunks and an unchanged run reads none."""
    chunks = pq.ParquetFile(folder / "chunks.parquet")
    counts: Counter = Counter(total=chunks.metadata.num_rows)
    writer = store.TableWriter(folder / "changes.parquet", schemas.CHANGES)
    try:
        if not nothing_changed:
            _write_changes(prev, chunks, writer, counts)
    except BaseException:
        writer.abort()
        raise
    writer.close()
    counts["kept"] = counts["total"] - counts["added"]
    return counts


def _write_changes(prev: Previous | None, chunks: pq.ParquetFile, writer, counts) -> None:
    """The adds (new chunk ids, with their rows, in file order) and the removes (old ids
    gone, sorted) of a run whose chunks are ``chunks``."""
    old = pa.table({"chunk_id": pa.array([], pa.string()), "doc_id": [], "path": []})
    if prev is not None:
        old = _read(prev.folder / "chunks.parquet", ["chunk_id", "doc_id", "path"])
    old_ids = old["chunk_id"].combine_chunks()
    new_ids = chunks.read(columns=["chunk_id"])["chunk_id"].combine_chunks()
    added = pc.invert(pc.is_in(new_ids, value_set=old_ids))
    start = 0
    for group in range(chunks.num_row_groups):
        n = chunks.metadata.row_group(group).num_rows
        mask, start = added.slice(start, n), start + n
        k = pc.sum(mask).as_py() or 0
        if k:
            part = chunks.read_row_group(group).cast(schemas.CHUNKS).filter(mask)
            writer.write(part.add_column(0, "op", pa.array(["add"] * k, pa.string())))
            counts["added"] += k
    gone = old.filter(pc.invert(pc.is_in(old_ids, value_set=new_ids))).sort_by("chunk_id")
    if gone.num_rows:
        rows = [{"op": "remove", **r} for r in gone.to_pylist()]
        writer.write(pa.Table.from_pylist(rows, schema=schemas.CHANGES))
    counts["removed"] = gone.num_rows


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


@dataclass
class RunJob:
    """Everything one run needs; ``run`` executes it under the output folder's lock."""

    plan: list[sources.Source]
    root: Path
    selection: sources.Selection
    policy: Policy
    max_bytes: int
    parser: str = DEFAULT_BACKEND  # block parser backend (pipeline.parse.BACKENDS)
    full: bool = False
    verify: bool = False  # hash every input file, trusting no file stamp
    keep: int = 3
    workers: int = 1
    engine: str = "local"  # local (process pool) | ray (Ray Data; recomputes every document)
    ray_address: str | None = None
    progress: Callable[[int], None] = lambda n: None
    log: RunLog = field(default_factory=RunLog)

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
                self.parser,
            )
        batches = (
            prepare(b, prev, self.policy, reuse_chunks)
            for b in blocks_job.batched(items, BATCH_DOCS)
        )
        step = partial(
            batch.process, policy=self.policy, max_bytes=self.max_bytes, parser=self.parser
        )
        return pool.ordered_map(step, batches, self.workers)


def run(
    plan: list[sources.Source],
    root: Path,
    selection: sources.Selection,
    policy: Policy,
    max_bytes: int,
    **options,
) -> RunSummary:
    """One nightly run over ``plan`` into the run folder ``root``; publishes on success.
    Options: full, keep, workers, progress, log (see RunJob)."""
    job = RunJob(plan, Path(root), selection, policy, max_bytes, **options)
    if job.engine == "local" and len(plan) <= BATCH_DOCS and not any(s.is_table for s in plan):
        job.workers = 1  # a single batch: starting worker processes would only cost time
    with runstore.Lock(job.root):
        history = runstore.history(job.root)
        runstore.clean_abandoned(job.root, history)
        run_id = runstore.new_run_id()
        folder = runstore.run_dir(job.root, run_id)
        folder.mkdir(parents=True)
        record = runstore.new_record(run_id, plan, job.full, policy, parse_key(policy, job.parser))
        try:
            result = _execute(job, folder, history, record)
        except BaseException as exc:
            record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
            runstore.finish(job.root, history, record, succeeded=False)
            runstore.remove_run(job.root, run_id)
            raise
        runstore.finish(job.root, history, record, succeeded=True)
        runstore.prune(job.root, history + [record], job.keep)
        job.log.stage("publish", run=run_id, folder=str(folder), seconds=record["seconds"])
        return result


def _execute(job: RunJob, folder: Path, history: list[dict], record: dict) -> RunSummary:
    t_start = time.perf_counter()
    policy, log = job.policy, job.log
    last = runstore.last_published(history)
    prev_folder = runstore.published(job.root)
    prev = None  # the change set is always relative to it, even with --full
    if prev_folder is not None and last is not None:
        prev = Previous.load(prev_folder, last)
        record["previous_run"] = last["run_id"]
    reuse_blocks = (
        prev is not None
        and not job.full
        and job.engine == "local"
        and prev.run["parser_version"] == parse_key(policy, job.parser)
    )
    reuse_chunks = (
        reuse_blocks
        and prev.run["policy_hash"] == policy.policy_hash
        and prev.run["chunker_version"] == CHUNKER_VERSION
    )
    work = Work()
    if not reuse_blocks:  # read as parsing goes
        items = _stamped(job.plan, job.selection, work) if job.engine == "local" else iter(())
    else:
        items = _classify_inputs(job.plan, job.selection, prev, work, job.verify)
    bsum, csum = blocks_job.BlocksSummary(), ChunksSummary()
    seen: set[str] = set()
    if reuse_blocks:
        work.seconds["read"] = time.perf_counter() - t_start
        seen = {x.doc_id if isinstance(x, Reused) else make_doc_id(x.path) for x in items}
        work.reused = sum(isinstance(x, Reused) for x in items)
        log.stage(
            "read",
            documents=len(items),
            unchanged=work.reused,
            unread=work.unread,
            seconds=work.seconds["read"],
        )
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
    stamps.write(folder, work.stamped)
    t_changes = time.perf_counter()
    counts = _changes(prev, folder, nothing_changed)
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
        docs = _read(folder / "documents.parquet", ["doc_id"])
        rejects = _read(folder / "rejects.parquet", ["reason"])
        chunks = _read(folder / "chunks.parquet", ["strategy", "n_tokens"])
        bsum.documents = docs.num_rows
        bsum.blocks = pq.read_metadata(folder / "blocks.parquet").num_rows
        csum.add(chunks, rejects, docs.num_rows)
    bsum.skipped = job.selection.skipped
    bsum.bytes = work.bytes_read if reuse_blocks else bsum.bytes
    bsum.seconds = csum.seconds = time.perf_counter() - t_start
    return RunSummary(record["run_id"], record, csum, bsum, folder)


def _fill_record(record, prev, seen, folder, work, counts, t_start) -> None:
    """Counts for the runs table; document changes are judged by content hash."""
    docs = _read(folder / "documents.parquet", ["doc_id", "content_hash"])
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
