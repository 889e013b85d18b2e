"""What the batches of one run add up to: the documents seen and read anew, the folders that
could not be listed, the content hashes written, the counts; and, at the end, the run's
counts in its runs-table record."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pyarrow as pa

from chunkmill.jobs.counts import RunCounts
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.runstore import runs_table
from chunkmill.pipeline.runstore.published_run import OldRun, document_counts


@dataclass
class Tally:
    """What the batches of one run add up to."""

    work: RunCounts = field(default_factory=RunCounts)
    seen: set[str] = field(default_factory=set)  # documents and rejects of this run
    fresh: set[str] = field(default_factory=set)  # of them, those read anew (incremental)
    unlisted: set[str] = field(default_factory=set)  # path prefixes of unlistable folders
    hashes: dict[str, str] = field(default_factory=dict)  # doc_id -> content_hash written


def add_batch(tally: Tally, tables: dict[str, pa.Table], counts, reuse_blocks: bool) -> None:
    """Count one batch's (or written part's) tables into the run's tally."""
    rejects = tables["rejects"]
    if not reuse_blocks:  # reading was interleaved with parsing
        tally.seen.update(tables["documents"]["doc_id"].to_pylist())
        tally.seen.update(rejects["doc_id"].to_pylist())
    for path, reason in zip(rejects["path"].to_pylist(), rejects["reason"].to_pylist()):
        if reason == sources.UNLISTABLE:
            tally.unlisted.add(sources.folder_prefix(path))
    docs = tables["documents"]
    tally.hashes.update(zip(docs["doc_id"].to_pylist(), docs["content_hash"].to_pylist()))
    tally.work.add(tables, counts)


def fill_record(record, old: OldRun, tally: Tally, counts, t_start, hashes: dict) -> None:
    """Counts for the runs table; document changes are judged by content hash (``hashes``:
    the run's doc_id -> content_hash). Documents below a folder that could not be listed
    are not counted as deleted."""
    rejects = sum(tally.work.rejects.values())
    before = old.hashes
    hidden = tuple(tally.unlisted)
    gone = {
        d
        for d, p in zip(old.documents["doc_id"].to_pylist(), old.documents["path"].to_pylist())
        if d not in tally.seen and not (hidden and p.startswith(hidden))
    }
    work = tally.work
    runs_table.add_counts(
        record,
        documents=document_counts(before, hashes),
        deleted=len(gone),
        parsed=work.parsed,
        repacked=work.repacked,
        rejects=rejects,
        chunks=counts,
        seconds={**work.seconds, "total": time.perf_counter() - t_start},
    )
