"""A run's batches to the engine it chose and their results back, in input order, written:
the local run's watched worker processes or the Ray cluster (``results``), the tables,
parts and change set (``write``). Parts whose documents the published run holds unchanged
are linked, not sent (``reuse.linker``); a part whose documents are all fresh is one piece
of work whose worker writes its files."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from chunkmill.jobs import part_work, reuse
from chunkmill.jobs.chunks_job import run_metadata
from chunkmill.jobs.part_work import PartTables, PartWork, PartWritten
from chunkmill.jobs.run_tally import Tally, add_batch
from chunkmill.pipeline import batch, batching, schemas
from chunkmill.pipeline.batch import Batch
from chunkmill.pipeline.runstore import parquet_files
from chunkmill.pipeline.runstore.changeset import ChangeSet

if TYPE_CHECKING:
    from chunkmill.jobs.run_job import RunJob


@dataclass(frozen=True)
class PartPlan:
    """Where the workers of a local run write the parts of fresh documents (``folder``,
    ``metadata`` in every footer), and whether they send the chunk rows back (``rows``: a
    change set compares them)."""

    folder: Path
    metadata: dict
    rows: bool


def results(job: RunJob, items, prev, reuse_chunks: bool, parts: PartPlan | None = None):
    """(unit, whether it ends its part, result) of every batch, linked part
    (``reuse.Linked``) or part written by a worker (``PartWork``), in input order, from the
    chosen engine. A part whose documents are all fresh is one PartWork when ``parts``
    says where (a local run): its worker writes its files (jobs/part_work.py)."""
    units: deque = deque()
    tables = job.options.tables
    link = reuse.linker(prev, job.policy, reuse_chunks, tables)

    def emit(unit, ends: bool):
        units.append((unit, ends))
        return unit

    def batches():
        held: list[Batch] = []  # the open part's batches, while all are fresh
        mixed = False  # the open part has a batch with reused rows: batch by batch
        n_parts = 0
        for unit, ends in batching.parted(items, batching.BATCH_DOCS, link=link):
            if isinstance(unit, reuse.Linked):
                n_parts += 1
                yield emit(unit, ends)
                continue
            b = reuse.prepare(unit, prev, job.policy, reuse_chunks, tables)
            if parts is None or mixed or b.reused_docs is not None:
                yield from (emit(h, False) for h in held)
                held, mixed = [], not ends
                n_parts += ends
                yield emit(b, ends)
                continue
            held.append(b)
            if ends:
                work = PartWork(held, n_parts, str(parts.folder), parts.metadata, parts.rows)
                held, n_parts = [], n_parts + 1
                yield emit(work, True)

    def local(b):
        if isinstance(b, reuse.Linked):
            return reuse.LINKED
        return None if isinstance(b, PartWork) else batch.settled(b)

    options = {
        "policy": job.policy,
        "max_bytes": job.options.max_bytes,
        "parser": job.options.parser,
        "tables": tables,
    }
    if job.options.engine == "ray":
        from chunkmill.jobs import ray_job

        found = ray_job.ordered_map(
            partial(batch.process, **options),
            batches(),
            job.ray_address,
            job.workers,
            local=local,
        )
    else:
        found = job.supervisor.map(partial(part_work.work, **options), batches(), local=local)
    for result in found:
        yield *units.popleft(), result


def write(
    job: RunJob, folder, items, prev, reuse_chunks, reuse_blocks, tally: Tally, changes: ChangeSet
) -> tuple[dict[str, dict], dict[str, dict]]:
    """Write every batch; the manifest entries of the parts linked from ``prev``, and of
    the parts the workers wrote (hashed there)."""
    work, log = tally.work, job.log
    written: dict[str, dict] = {}
    metadata = run_metadata(job.policy)
    parts = PartPlan(folder, metadata, not changes.first) if job.supervisor else None
    # not synced file by file: publishing syncs the run's files together (runstore.commit)
    names = schemas.content_tables(job.options.tables)
    with parquet_files.OutputSet(folder, names, metadata, durable=False) as output:

        def take(tables: dict[str, pa.Table], counts, write: bool) -> None:
            t1 = time.perf_counter()
            for name in names if write else ():
                output.write(name, tables[name])
            t2 = time.perf_counter()
            changes.add(tables["chunks"])
            work.seconds["write"] += t2 - t1
            work.seconds["changes"] += time.perf_counter() - t2
            add_batch(tally, tables, counts, reuse_blocks)
            job.progress(counts["items"])

        for unit, ends, result in results(job, items, prev, reuse_chunks, parts):
            t1 = time.perf_counter()
            if isinstance(unit, reuse.Linked):
                files = prev.parts.part_files(unit.index)
                output.link_part(files)
                tally.hashes.update((x.doc_id, prev.hashes[x.doc_id]) for x in unit.items)
                changes.link(unit.index, reuse.count_linked(files, work))
                work.seconds["write"] += time.perf_counter() - t1
                job.progress(len(unit.items))
            elif isinstance(result, PartWritten):  # its files are in place
                output.adopt_part(result.index)
                written.update(result.entries)
                for tables, counts in result.batches:
                    output.write("rejects", tables["rejects"])
                    take(tables, counts, write=False)
            elif isinstance(result, PartTables):  # its worker failed: written here
                for tables, counts in result.results:
                    take(tables, counts, write=True)
                output.end_part()
            else:
                take(*result, write=True)
                if ends:
                    output.end_part()
    log.stage(
        "parse",
        documents_parsed=work.parsed,
        parsed_by_reference=work.fallback,
        documents_reused=work.reused,
        json_also={"seconds": work.seconds["parse"]},
        workers=job.workers,
        summed_worker_seconds=work.seconds["parse"],
    )
    log.stage(
        "chunk",
        documents_repacked=work.repacked,
        chunks=work.chunks,
        strategies=dict(work.strategies),
        json_also={"seconds": work.seconds["chunk"]},
        workers=job.workers,
        summed_worker_seconds=work.seconds["chunk"],
    )
    return (reuse.linked_entries(prev, output.linked) if output.linked else {}), written
