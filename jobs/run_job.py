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
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from jobs import blocks_job
from jobs.chunks_job import ChunksSummary, run_metadata
from jobs.runlog import RunLog
from pipeline import chunk, runstore, schemas, sources, store
from pipeline.block import with_estimates
from pipeline.document import RawDocument, make_doc_id
from pipeline.parse import PARSER_VERSION
from pipeline.policy import CHUNKER_VERSION, Policy
from pipeline.postings import postings

BATCH_DOCS = blocks_job.BATCH_DOCS


def parse_key(policy: Policy) -> str:
    """What decides whether stored blocks can be reused: parser version and MDX mode."""
    return f"{PARSER_VERSION}|mdx={policy.mdx}"


@dataclass(frozen=True)
class Reused:
    """A document whose bytes did not change since the previous run."""

    doc_id: str


@dataclass
class Previous:
    """The published run we build on: its tables and what produced them."""

    folder: Path
    run: dict
    hashes: dict[str, str]
    tables: dict[str, pa.Table] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path, run: dict) -> Previous:
        docs = pq.read_table(folder / "documents.parquet", columns=["doc_id", "content_hash"])
        return cls(
            folder, run, dict(zip(docs["doc_id"].to_pylist(), docs["content_hash"].to_pylist()))
        )

    def table(self, name: str) -> pa.Table:
        if name not in self.tables:
            self.tables[name] = store.read(self.folder, name)
        return self.tables[name]

    def take(self, name: str, doc_ids: list[str]) -> pa.Table:
        t = self.table(name)
        if not doc_ids:
            return t.schema.empty_table()
        return t.filter(pc.is_in(t["doc_id"], value_set=pa.array(doc_ids)))

    def blocks(self, doc_ids: list[str], bias: str) -> pa.Table:
        """Stored blocks, their estimates redone when the bias changed (no parsing)."""
        t = self.take("blocks", doc_ids)
        if json.loads(self.run["policy"])["bias"] == bias or t.num_rows == 0:
            return t
        return with_estimates(pl.from_arrow(t), bias).to_arrow().cast(schemas.BLOCKS)


def _ordered(table: pa.Table, order: dict[str, int], index: str | None) -> pa.Table:
    """Rows by document order, then by ``index`` within a document."""
    if table.num_rows == 0:
        return table
    keys = pl.from_arrow(table.select(["doc_id"] + ([index] if index else [])))
    keys = keys.with_columns(_o=pl.col("doc_id").replace_strict(order, return_dtype=pl.Int64))
    by = ["_o"] + ([index] if index else [])
    return table.take(keys.with_row_index("_i").sort(by)["_i"].to_arrow())


@dataclass
class Work:
    parsed: int = 0
    repacked: int = 0
    reused_blocks: int = 0
    reused_chunks: int = 0
    bytes_read: int = 0  # of documents only hashed (reused), not parsed
    seconds: Counter = field(default_factory=Counter)


def process_batch(
    items: list,
    prev: Previous | None,
    policy: Policy,
    counting: chunk.Counting,
    max_bytes: int,
    reuse_chunks: bool,
    work: Work,
) -> dict[str, pa.Table]:
    """All stages over one batch of documents (fresh RawDocuments and Reused ids)."""
    t0 = time.perf_counter()
    fresh = [x for x in items if isinstance(x, RawDocument)]
    reused = [x.doc_id for x in items if isinstance(x, Reused)]
    docs, blks, rejects = blocks_job.process_batch(fresh, policy.mdx, policy.bias, max_bytes)
    work.parsed += docs.num_rows
    t1 = time.perf_counter()
    if reused:
        work.reused_blocks += len(reused)
        docs = pa.concat_tables([docs, prev.take("documents", reused)])
        blks = pa.concat_tables([blks, prev.blocks(reused, policy.bias)])
    to_chunk = (
        docs
        if not reuse_chunks
        else docs.filter(
            pc.invert(pc.is_in(docs["doc_id"], value_set=pa.array(reused, pa.string())))
        )
    )
    chunks, chunk_rejects = chunk.chunks(to_chunk, blks, policy, counting)
    work.repacked += to_chunk.num_rows
    if reuse_chunks and reused:
        work.reused_chunks += len(reused)
        chunks = pa.concat_tables([chunks, prev.take("chunks", reused)])
    if chunk_rejects.num_rows:
        docs = blocks_job.drop_rejected(docs, chunk_rejects)
        blks = blks.filter(pc.invert(pc.is_in(blks["doc_id"], chunk_rejects["doc_id"])))
    order = {
        (x.doc_id if isinstance(x, Reused) else make_doc_id(x.path)): i for i, x in enumerate(items)
    }
    chunks = _ordered(chunks, order, "chunk_index")
    t2 = time.perf_counter()
    work.seconds["parse"] += t1 - t0
    work.seconds["chunk"] += t2 - t1
    return {
        "documents": _ordered(docs, order, None),
        "blocks": _ordered(blks, order, "block_index"),
        "chunks": chunks,
        "postings": postings(chunks),
        "rejects": pa.concat_tables([rejects, chunk_rejects]),
    }


def _hash_inputs(raws, prev: Previous, work: Work) -> list:
    """Fresh RawDocuments for new or changed bytes, Reused ids for the rest, in order."""
    items = []
    for raw in raws:
        work.bytes_read += len(raw.data or b"")
        doc_id = make_doc_id(raw.path)
        digest = hashlib.sha256(raw.data).hexdigest() if raw.data is not None else None
        items.append(Reused(doc_id) if digest and prev.hashes.get(doc_id) == digest else raw)
    return items


def _link_previous(prev: Previous, folder: Path) -> None:
    for name in schemas.CONTENT_TABLES:
        src, dst = prev.folder / f"{name}.parquet", folder / f"{name}.parquet"
        try:
            os.link(src, dst)
        except OSError:  # another filesystem, or links not allowed: copy
            dst.write_bytes(src.read_bytes())


def _changes(prev: Previous | None, folder: Path) -> tuple[pa.Table, Counter]:
    """Chunk ids added (with their rows) and removed relative to the previous run."""
    new = pq.read_table(folder / "chunks.parquet", schema=schemas.CHUNKS)
    old_ids = (
        set()
        if prev is None
        else set(
            pq.read_table(prev.folder / "chunks.parquet", columns=["chunk_id"])[
                "chunk_id"
            ].to_pylist()
        )
    )
    new_ids = new["chunk_id"].to_pylist()
    added = new.filter(
        pc.invert(pc.is_in(new["chunk_id"], value_set=pa.array(list(old_ids), pa.string())))
    )
    adds = added.add_column(0, "op", pa.array(["add"] * added.num_rows, pa.string()))
    removed = old_ids - set(new_ids)
    if removed:
        old = pq.read_table(prev.folder / "chunks.parquet", columns=["chunk_id", "doc_id", "path"])
        old = old.filter(pc.is_in(old["chunk_id"], value_set=pa.array(sorted(removed))))
        rows = [{"op": "remove", **r} for r in old.sort_by("chunk_id").to_pylist()]
        removes = pa.Table.from_pylist(rows, schema=schemas.CHANGES)
    else:
        removes = schemas.CHANGES.empty_table()
    table = pa.concat_tables([adds.cast(schemas.CHANGES), removes])
    counts = Counter(
        added=adds.num_rows,
        removed=len(removed),
        kept=len(new_ids) - adds.num_rows,
        total=len(new_ids),
    )
    return table, counts


@dataclass
class RunResult:
    run_id: str
    record: dict
    chunks: ChunksSummary
    blocks: blocks_job.BlocksSummary
    folder: Path


def run(
    plan: list[sources.Source],
    root: Path,
    selection: sources.Selection,
    policy: Policy,
    max_bytes: int,
    full: bool = False,
    keep: int = 3,
    progress: Callable[[int], None] = lambda n: None,
    log: RunLog | None = None,
) -> RunResult:
    """One nightly run over ``plan`` into the run folder ``root``; publishes on success."""
    root = Path(root)
    log = log or RunLog()
    with runstore.Lock(root):
        history = runstore.history(root)
        runstore.clean_abandoned(root, history)
        run_id = runstore.new_run_id()
        folder = runstore.run_dir(root, run_id)
        folder.mkdir(parents=True)
        record = runstore.new_record(run_id, plan, full, policy, parse_key(policy))
        try:
            result = _execute(
                plan,
                root,
                folder,
                selection,
                policy,
                max_bytes,
                full,
                history,
                record,
                progress,
                log,
            )
        except BaseException as exc:
            record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
            runstore.finish(root, history, record, succeeded=False)
            runstore.remove_run(root, run_id)
            raise
        runstore.finish(root, history, record, succeeded=True)
        runstore.prune(root, history + [record], keep)
        log.stage("publish", run=run_id, folder=str(folder), seconds=record["seconds"])
        return result


def _execute(
    plan, root, folder, selection, policy, max_bytes, full, history, record, progress, log
) -> RunResult:
    t_start = time.perf_counter()
    counting = chunk.Counting(policy)
    last = runstore.last_published(history)
    prev_folder = runstore.published(root)
    prev = None  # the change set is always relative to it, even with --full
    if prev_folder is not None and last is not None:
        prev = Previous.load(prev_folder, last)
        record["previous_run"] = last["run_id"]
    reuse_blocks = prev is not None and not full and prev.run["parser_version"] == parse_key(policy)
    reuse_chunks = (
        reuse_blocks
        and prev.run["policy_hash"] == policy.policy_hash
        and prev.run["chunker_version"] == CHUNKER_VERSION
    )
    raws = sources.read(plan, selection)
    work = Work()
    items = _hash_inputs(raws, prev, work) if reuse_blocks else raws
    bsum, csum = blocks_job.BlocksSummary(), ChunksSummary()
    seen: set[str] = set()
    if reuse_blocks:
        work.seconds["read"] = time.perf_counter() - t_start
        seen = {x.doc_id if isinstance(x, Reused) else make_doc_id(x.path) for x in items}
        log.stage(
            "read",
            documents=len(items),
            seconds=work.seconds["read"],
            unchanged=sum(isinstance(x, Reused) for x in items),
        )
    nothing_changed = (
        reuse_chunks and all(isinstance(x, Reused) for x in items) and seen == set(prev.hashes)
    )
    if nothing_changed:
        _link_previous(prev, folder)
        work.reused_blocks = work.reused_chunks = len(items)
        progress(len(items))
    else:
        with store.OutputSet(folder, schemas.CONTENT_TABLES, run_metadata(policy)) as output:
            for batch in blocks_job.batched(items, BATCH_DOCS):
                t0 = time.perf_counter()
                tables = process_batch(batch, prev, policy, counting, max_bytes, reuse_chunks, work)
                t1 = time.perf_counter()
                for name, table in tables.items():
                    output.write(name, table)
                work.seconds["write"] += time.perf_counter() - t1
                if not reuse_blocks:  # reading was interleaved with parsing
                    seen.update(tables["documents"]["doc_id"].to_pylist())
                    seen.update(tables["rejects"]["doc_id"].to_pylist())
                fresh = [x for x in batch if isinstance(x, RawDocument)]
                bsum.add(fresh, tables["documents"], tables["blocks"], tables["rejects"])
                csum.add(tables["chunks"], tables["rejects"], tables["documents"].num_rows)
                progress(len(batch))
                work.seconds["batches"] += t1 - t0
        log.stage(
            "parse",
            documents_parsed=work.parsed,
            blocks_reused=work.reused_blocks,
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
    changes, counts = _changes(prev, folder)
    store.write_table(folder / "changes.parquet", changes, schemas.CHANGES)
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
    bsum.skipped = selection.skipped
    bsum.bytes = work.bytes_read if reuse_blocks else bsum.bytes
    bsum.seconds = csum.seconds = time.perf_counter() - t_start
    return RunResult(record["run_id"], record, csum, bsum, folder)


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
