"""A part of a local run worked whole in one worker: its batches processed and its part
files written there, so that only a summary travels back to the run's process.

A part of fresh documents (every part of a cold run) sent back row by row would cost the
run's process the unpickling and encoding of every row (about 2.4 s of its CPU over the
shared corpora, docs/design.md) while the workers wait for it. Written by the worker, the
part costs the run's process nothing but its summary:
the documents' ids and content hashes, the rejects, the chunks' strategies and token
counts (every chunk row when a change set compares them), the files' manifest entries.
The files are what the run's process would have written: the same writer, the same
footers, one row group per batch and table.

A worker that fails on a part (a crash, a limit) has the part cut into its documents, each
run alone (``split``); the results come back as ``PartTables``, one per batch, which the
run's process writes itself.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import groupby
from pathlib import Path

import pyarrow as pa

from chunkmill.pipeline import batch, schemas
from chunkmill.pipeline.batch import Batch
from chunkmill.pipeline.policy import Policy
from chunkmill.pipeline.runstore import manifest, parquet_files

SUMMARY_CHUNK_COLUMNS = ["strategy", "n_tokens"]  # what a run counts of a part's chunks


@dataclass
class PartWork:
    """The batches of one part (``index``: its number in the run) to write into the run
    folder ``folder`` with ``metadata`` in every footer; ``chunk_rows``: send every chunk
    row back (a change set compares them), else only what the run counts."""

    batches: list[Batch]
    index: int
    folder: str
    metadata: dict[str, str]
    chunk_rows: bool


@dataclass
class PartWritten:
    """A part written by a worker: per batch, its tables as the run counts them
    (documents: doc_id and content_hash; blocks: no column, its rows; chunks: every column
    when ``PartWork.chunk_rows``, else strategy and n_tokens; rejects: every row) and what
    ``batch.process`` counted; ``entries``: the manifest entries of its files."""

    index: int
    batches: list[tuple[dict[str, pa.Table], Counter]]
    entries: dict[str, dict]


@dataclass
class Piece:
    """One document of a failed part, to be run alone: ``single`` of batch ``batch``."""

    batch: int
    single: Batch


@dataclass
class PieceResult:
    batch: int
    result: tuple


@dataclass
class PartTables:
    """A failed part's batches, as ``batch.process`` gives them, for the run to write."""

    results: list[tuple[dict[str, pa.Table], Counter]]


def work(unit, policy: Policy, max_bytes: int, parser: str, tables=()):
    """The worker's step: a PartWork written, a Piece or a Batch processed, with the
    optional ``tables`` the run writes."""
    run = partial(batch.process, policy=policy, max_bytes=max_bytes, parser=parser,
                  tables=tables)  # fmt: skip
    if isinstance(unit, PartWork):
        return _write(unit, run, tables)
    if isinstance(unit, Piece):
        return PieceResult(unit.batch, run(unit.single))
    return run(unit)


def split(unit) -> list:
    """A failed unit cut into its documents (batch.split), those of a part each marked
    with its batch."""
    if isinstance(unit, PartWork):
        return [Piece(k, one) for k, b in enumerate(unit.batches) for one in batch.split(b)]
    return batch.split(unit)


def merge(results: list):
    """The results of a failed unit's documents put back together (batch.merge), a part's
    batch by batch."""
    if isinstance(results[0], PieceResult):
        grouped = groupby(results, key=lambda r: r.batch)
        return PartTables([batch.merge([r.result for r in group]) for _, group in grouped])
    return batch.merge(results)


def failed(unit, reason: str, detail: str):
    """A document that failed alone: a reject (batch.failed), marked with its batch."""
    if isinstance(unit, Piece):
        return PieceResult(unit.batch, batch.failed(unit.single, reason, detail))
    return batch.failed(unit, reason, detail)


def _write(part: PartWork, run: Callable, tables) -> PartWritten:
    folder = Path(part.folder)
    tables_of = {
        n: schemas.TABLES[n].with_metadata(part.metadata) for n in schemas.partitioned(tables)
    }
    writer = parquet_files.PartWriter(folder, part.index, tables_of, durable=False)
    summaries = []
    try:
        for b in part.batches:
            made, counts = run(b)
            t = time.perf_counter()
            for n in tables_of:
                writer.write(n, made[n])
            counts["seconds_write"] = time.perf_counter() - t
            chunks = made["chunks"]
            summary = {
                "documents": made["documents"].select(["doc_id", "content_hash"]),
                "blocks": made["blocks"].select([]),
                "chunks": chunks if part.chunk_rows else chunks.select(SUMMARY_CHUNK_COLUMNS),
                "rejects": made["rejects"],
            }
            summaries.append((summary, counts))
    except BaseException:
        writer.abort()
        raise
    t = time.perf_counter()
    writer.close()
    entries = {}
    for n, p in writer.paths.items():
        name = parquet_files.part_name(n, part.index)
        entries[name] = manifest.file_entry(p, name)
    summaries[-1][1]["seconds_write"] += time.perf_counter() - t
    return PartWritten(part.index, summaries, entries)
