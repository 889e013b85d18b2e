"""The change set of a run: ``changes.parquet``, chunk ids added (with their rows) and
removed relative to the published run; and the kept ids whose rows were updated. The first
publication of an output folder has none: every chunk of its chunks.parquet is an add, and
readers (the ``changes`` view, ``chunkmill changes``) take them from there.

Added rows are written as each batch's chunks arrive, not read back from the finished
``chunks.parquet`` (which cost a first run a second pass over every chunk, about 0.7 s of
the main process over the shared corpora, while the workers stood idle). Rows come out in
the same order and row groups as that second pass gave: a batch's added chunks are one row
group, as its chunks are one row group of ``chunks.parquet``. Removed rows follow at the
end, by chunk id. Memory holds the published run's chunk ids and the new ids, never rows.

An id is kept when its embed_text is (the id hashes the blocks, header and anchor it is
made of), so its vector stays right; its other columns can still change: an edit above it
moves its ``chunk_index``, offsets and line numbers (and a url built from them), a front
matter field not shown in embed_text changes ``front_matter``. Such an id is *updated*.
Only chunks of documents packed again can differ from the published rows (reused chunks
are those rows), so only theirs are compared, with the published run's rows of those
documents. Updated ids go to the ledger, not to changes.parquet, whose two ops (add,
remove) consumers already act on: ``chunkmill changes --updates`` gives their rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import reduce
from pathlib import Path

import pyarrow as pa

from chunkmill.pipeline import arrow_columns, schemas
from chunkmill.pipeline.runstore import parquet_files
from chunkmill.pipeline.runstore.published_run import OldRun


class ChangeSet:
    """Written batch by batch (``add``), finished by ``close`` (the removed chunks), or
    ``abort``-ed with the run. ``stored``: the published run's chunk rows of some documents
    (None when that run cannot be reused: then no row is told an update); ``repacked``: the
    documents this run packs again (None: every one), a set that may grow as the run reads
    on: a batch's documents are in it when its chunks are added. ``damaged``: the published
    run is damaged, so its rows may have reached consumers damaged: every id this run writes
    is told updated (the ledger marks those it held; ids the damage hid from ``old`` are adds
    here), and ``counts["updated"]`` counts the kept ones."""

    def __init__(
        self,
        old: OldRun,
        folder: Path,
        stored: Callable[[list[str]], pa.Table] | None = None,
        repacked: set[str] | None = None,
        damaged: bool = False,
    ):
        self.old, self.damaged = old, damaged
        # the first publication of a folder adds every chunk: no changes.parquet, which
        # would copy chunks.parquet row for row (readers take that run's chunks as adds)
        self.first = old.run_id is None
        self.writer = parquet_files.TableWriter(  # synced with the run when it is published
            folder / "changes.parquet", schemas.CHANGES, durable=False
        )
        self.new_ids: list[pa.ChunkedArray] = []
        self.counts: Counter = Counter(total=0, added=0, removed=0, updated=0)
        self.updated: list[str] = []  # kept ids whose rows changed, in chunk order
        self.new_docs: list[pa.ChunkedArray] = []
        self.stored = stored
        self._repacked = repacked
        self._old_ids = None
        self.linked: set[int] = set()  # parts of the published run linked whole
        self._part_ids: dict[int, pa.Array] = {}  # the published chunk ids of a part

    def link(self, part: int, chunks: int) -> None:
        """A part of the published run taken whole, with its ``chunks``: all kept."""
        self.linked.add(part)
        self.counts["total"] += chunks

    def add(self, chunks: pa.Table) -> None:
        """The chunks of one batch: those the published run does not hold are added; of
        those it holds, the ones whose other columns changed are noted as updated."""
        import pyarrow.compute as pc  # here: an unchanged run never loads it

        if not chunks.num_rows:
            return
        if self.first:
            self.counts["total"] += chunks.num_rows
            self.counts["added"] += chunks.num_rows
            return
        ids = chunks["chunk_id"]
        self.new_ids.append(ids)
        self.new_docs.append(chunks["doc_id"])
        self.counts["total"] += chunks.num_rows
        added = pc.invert(pc.is_in(ids, value_set=self._held_ids(chunks["doc_id"])))
        k = pc.sum(added).as_py() or 0
        rows = parquet_files.conform(chunks, schemas.CHUNKS)
        updated = ids.to_pylist() if self.damaged else self._updated(rows, added, k)
        self.updated.extend(updated)
        self.counts["updated"] += rows.num_rows - k if self.damaged else len(updated)
        if k:
            if k < rows.num_rows:  # a first run adds every chunk: no copy of their texts
                rows = rows.filter(added)
            self.writer.write(
                rows.add_column(0, "op", arrow_columns.column(["add"] * k, pa.string()))
            )
            self.counts["added"] += k

    def _held_ids(self, doc_ids: pa.ChunkedArray) -> pa.Array:
        """Chunk ids of the published run that chunks of these documents may have: those
        of the parts that held them, when the published run is read part by part (a chunk
        id names its document), else all of them."""
        parts = self.old.parts
        if parts is None:
            if self._old_ids is None:
                self._old_ids = arrow_columns.flat(self.old.chunks["chunk_id"])
            return self._old_ids
        import pyarrow.parquet as pq

        of = parts.of_doc
        wanted = sorted({of[d] for d in doc_ids.to_pylist() if d in of})
        for k in wanted:
            if k not in self._part_ids:
                found = pq.ParquetFile(parts.files["chunks"][k]).read(columns=["chunk_id"])
                self._part_ids[k] = arrow_columns.flat(found["chunk_id"])
        held = [self._part_ids[k] for k in wanted]
        return pa.concat_arrays(held) if held else pa.array([], pa.string())

    def _updated(self, rows: pa.Table, added, k: int) -> list[str]:
        """The kept ids of documents packed again whose row differs from the published
        run's row of that id."""
        import pyarrow.compute as pc

        if self.stored is None or k == rows.num_rows:
            return []
        kept = pc.invert(added)
        if self._repacked is not None:
            repacked = [d in self._repacked for d in rows["doc_id"].to_pylist()]
            if not any(repacked):
                return []
            kept = pc.and_(kept, arrow_columns.column(repacked, pa.bool_()))
        new = rows.filter(kept).to_pylist()
        if not new:
            return []
        docs = list(dict.fromkeys(r["doc_id"] for r in new))
        old = {r["chunk_id"]: r for r in self.stored(docs).to_pylist()}
        return [r["chunk_id"] for r in new if old.get(r["chunk_id"], r) != r]

    def close(self, unlisted: set[str]) -> Counter:
        """Write the removed chunks and publish the file; the counts (total, added, removed,
        updated, kept: updated ids are kept ids; unlisted_lost: removed chunks of documents
        below a folder that could not be listed, ``unlisted``, which this run could not
        carry: no reusable published run; the run's guard refuses to publish them)."""
        if self.first:
            self.writer.abort()
        else:
            try:
                self._write_removed(unlisted)
            except BaseException:
                self.writer.abort()
                raise
            self.writer.close()
        self.counts["kept"] = self.counts["total"] - self.counts["added"]  # updated among them
        return self.counts

    def abort(self) -> None:
        self.writer.abort()

    def _write_removed(self, unlisted: set[str]) -> None:
        import pyarrow.compute as pc

        old = self.old.chunks_except(self.linked)
        gone = pc.invert(pc.is_in(old["chunk_id"], value_set=_flat(self.new_ids)))
        if unlisted:
            below = reduce(pc.or_, (pc.starts_with(old["path"], p) for p in sorted(unlisted)))
            held = pc.is_in(old["doc_id"], value_set=_flat(self.new_docs))
            lost = pc.and_(gone, pc.and_(below, pc.invert(held)))
            self.counts["unlisted_lost"] = pc.sum(lost).as_py() or 0
        removed = old.filter(gone).sort_by("chunk_id")
        self.counts["removed"] = removed.num_rows
        if not removed.num_rows:
            return
        ops = arrow_columns.column(["remove"] * removed.num_rows, pa.string())
        self.writer.write(parquet_files.upgrade(removed.add_column(0, "op", ops), schemas.CHANGES))


def _flat(parts: list[pa.ChunkedArray]) -> pa.Array:
    return arrow_columns.flat(pa.chunked_array([c for p in parts for c in p.chunks], pa.string()))


def unchanged(folder: Path) -> Counter:
    """The empty change set of a run that changed nothing (its chunks are the published
    run's files)."""

    total = parquet_files.num_rows(folder, "chunks")
    parquet_files.TableWriter(folder / "changes.parquet", schemas.CHANGES).close()
    return Counter(total=total, added=0, removed=0, kept=total)


def of_folder(old: OldRun, folder: Path, stored: Callable | None = None) -> ChangeSet:
    """The change set of a finished run folder against ``old`` (a rollback publishes an
    older run again), its chunks read row group by row group; ``stored`` as for ChangeSet
    (every kept id is compared). Closed: its ``counts`` and ``updated`` are final."""
    import pyarrow.parquet as pq

    changes = ChangeSet(old, folder, stored)
    try:
        for part in parquet_files.parts(folder, "chunks"):
            chunks = pq.ParquetFile(part)
            for group in range(chunks.num_row_groups):
                changes.add(chunks.read_row_group(group))
    except BaseException:
        changes.abort()
        raise
    changes.close(set())
    return changes
