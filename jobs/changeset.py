"""The change set of a run: ``changes.parquet``, chunk ids added (with their rows) and
removed relative to the published run.

Added rows are written as each batch's chunks arrive, not read back from the finished
``chunks.parquet`` (which cost a first run a second pass over every chunk, about 0.7 s of
the main process over the shared corpora, while the workers stood idle). Rows come out in
the same order and row groups as that second pass gave: a batch's added chunks are one row
group, as its chunks are one row group of ``chunks.parquet``. Removed rows follow at the
end, by chunk id. Memory holds the published run's chunk ids and the new ids, never rows.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa

from mdchunk.jobs.previous import OldRun
from mdchunk.pipeline import columns, schemas, store


class ChangeSet:
    """Written batch by batch (``add``), finished by ``close`` (the removed chunks), or
    ``abort``-ed with the run."""

    def __init__(self, old: OldRun, folder: Path):
        self.old = old
        self.writer = store.TableWriter(folder / "changes.parquet", schemas.CHANGES)
        self.new_ids: list[pa.ChunkedArray] = []
        self.counts: Counter = Counter(total=0, added=0, removed=0)
        self._old_ids = None

    def add(self, chunks: pa.Table) -> None:
        """The chunks of one batch: those the published run does not hold are added."""
        import pyarrow.compute as pc  # here: an unchanged run never loads it

        if not chunks.num_rows:
            return
        ids = chunks["chunk_id"]
        self.new_ids.append(ids)
        self.counts["total"] += chunks.num_rows
        if self._old_ids is None:
            self._old_ids = columns.flat(self.old.chunks["chunk_id"])
        added = pc.invert(pc.is_in(ids, value_set=self._old_ids))
        k = pc.sum(added).as_py() or 0
        if k:
            rows = store.conform(chunks, schemas.CHUNKS)
            if k < rows.num_rows:  # a first run adds every chunk: no copy of their texts
                rows = rows.filter(added)
            self.writer.write(rows.add_column(0, "op", columns.column(["add"] * k, pa.string())))
            self.counts["added"] += k

    def close(self, unlisted: set[str]) -> Counter:
        """Write the removed chunks and publish the file; the counts (total, added, removed,
        kept). Never removes a chunk of a document below a folder that could not be listed
        (``unlisted``: path prefixes)."""
        try:
            self._write_removed(unlisted)
        except BaseException:
            self.writer.abort()
            raise
        self.writer.close()
        self.counts["kept"] = self.counts["total"] - self.counts["added"]
        return self.counts

    def abort(self) -> None:
        self.writer.abort()

    def _write_removed(self, unlisted: set[str]) -> None:
        import pyarrow.compute as pc

        old = self.old.chunks
        parts = [part for ids in self.new_ids for part in ids.chunks]
        new_ids = columns.flat(pa.chunked_array(parts, pa.string()))
        gone = pc.invert(pc.is_in(old["chunk_id"], value_set=new_ids))
        for prefix in unlisted:  # never removed: below a folder that could not be listed
            gone = pc.and_(gone, pc.invert(pc.starts_with(old["path"], prefix)))
        removed = old.filter(gone).sort_by("chunk_id")
        self.counts["removed"] = removed.num_rows
        if not removed.num_rows:
            return
        ops = columns.column(["remove"] * removed.num_rows, pa.string())
        rows = removed.add_column(0, "op", ops)
        for f in schemas.CHANGES:
            if f.name not in rows.column_names:
                rows = rows.append_column(f, pa.nulls(rows.num_rows, f.type))
        self.writer.write(rows.select(schemas.CHANGES.names).cast(schemas.CHANGES))


def unchanged(folder: Path) -> Counter:
    """The empty change set of a run that changed nothing (its chunks are the published
    run's files)."""
    import pyarrow.parquet as pq

    total = pq.read_metadata(folder / "chunks.parquet").num_rows
    store.TableWriter(folder / "changes.parquet", schemas.CHANGES).close()
    return Counter(total=total, added=0, removed=0, kept=total)


def of_folder(old: OldRun, folder: Path) -> Counter:
    """The change set of a finished run folder against ``old`` (a rollback publishes an
    older run again), its chunks read row group by row group."""
    import pyarrow.parquet as pq

    chunks = pq.ParquetFile(folder / "chunks.parquet")
    changes = ChangeSet(old, folder)
    try:
        for group in range(chunks.num_row_groups):
            changes.add(chunks.read_row_group(group))
    except BaseException:
        changes.abort()
        raise
    return changes.close(set())
