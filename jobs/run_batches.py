"""A run's batches to the engine it chose and their results back, in input order: the
local run's watched worker processes or the Ray cluster. Parts whose documents the
published run holds unchanged are linked, not sent (``reuse.linker``); a part whose
documents are all fresh is one piece of work whose worker writes its files."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from chunkmill.jobs import part_work, reuse
from chunkmill.jobs.part_work import PartWork
from chunkmill.pipeline import batch, batching
from chunkmill.pipeline.batch import Batch

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
