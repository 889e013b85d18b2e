"""The rows of each document in a stored table: every stage writes a document's rows next to
each other, so a table is read back by document with a few slices."""

from __future__ import annotations

import pyarrow as pa

from chunkmill.pipeline import arrow_columns


class DocRows:
    """The rows of each document in a stored table, found by index, not by scanning.

    Every stage writes a document's rows next to each other, so one pass records where each
    document's run of rows starts; taking a batch's rows is then a few slices, whatever the
    size of the table (filtering the whole table per batch would be quadratic).
    """

    def __init__(self, table: pa.Table):
        self.table = table
        self.where = document_runs(table["doc_id"])

    def take(self, doc_ids) -> pa.Table:
        """The rows of these documents, document by document in the order given. A copy,
        not slices: a slice keeps (and pickles, to a worker) all of the table's buffers."""
        runs = [self.where[d] for d in doc_ids if d in self.where]
        return self.table.take(arrow_columns.ranges(runs))


def document_runs(doc_ids: pa.ChunkedArray) -> dict[str, tuple[int, int]]:
    """doc_id -> (first row, rows) of every document of a stored table's ``doc_id`` column
    (or of any key column whose equal values are next to each other, such as the postings'
    ``chunk_id``; dictionary-encoded or not); ValueError when a key's rows are not next to
    each other."""
    import pyarrow.compute as pc  # pyarrow, not polars: the main process of a re-pack
    # needs neither polars nor (through a conversion of Python lists) pandas

    if pa.types.is_dictionary(doc_ids.type):
        return _dictionary_runs(doc_ids)
    ids = arrow_columns.flat(doc_ids)
    n = len(ids)
    # a run starts at row 0 and wherever the id differs from the row before
    changed = pc.not_equal(ids.slice(1), ids.slice(0, max(n - 1, 0)))
    starts = [0, *(i + 1 for i in pc.indices_nonzero(changed).to_pylist())] if n else []
    keys = pc.take(ids, arrow_columns.column(starts, pa.int64())).to_pylist()
    return _runs_of(keys, starts, n)


def _dictionary_runs(keys: pa.ChunkedArray) -> dict[str, tuple[int, int]]:
    """``document_runs`` of a dictionary-encoded column, from its integer indices: the key
    column of a large table (1.5 million postings rows over the shared corpora) is never
    decoded into one string per row."""
    import pyarrow.compute as pc

    starts: list[int] = []
    names: list[str] = []
    at = 0
    for part in keys.chunks:
        idx, n = part.indices, len(part)
        if n:
            changed = pc.not_equal(idx.slice(1), idx.slice(0, n - 1))
            local = [0, *(i + 1 for i in pc.indices_nonzero(changed).to_pylist())]
            first = pc.take(idx, arrow_columns.column(local, pa.int64()))
            for s, name in zip(local, pc.take(part.dictionary, first).to_pylist()):
                # (a run that goes on from the part before is not a new run)
                if not (s == 0 and names and names[-1] == name):
                    starts.append(at + s)
                    names.append(name)
        at += n
    return _runs_of(names, starts, at)


def _runs_of(keys: list[str], starts: list[int], n: int) -> dict[str, tuple[int, int]]:
    lengths = [b - a for a, b in zip(starts, [*starts[1:], n])]
    where = dict(zip(keys, zip(starts, lengths)))
    if len(where) != len(starts):
        raise ValueError("the rows of a document are not contiguous in this table")
    return where


def drop_rejected(table: pa.Table, rejects: pa.Table) -> pa.Table:
    """Rows of ``table`` (documents, blocks, ...) whose document was not rejected: a document
    is either in documents or in rejects, never both."""
    if not rejects.num_rows:
        return table
    import pyarrow.compute as pc  # here: an unchanged run never loads it

    return table.filter(pc.invert(pc.is_in(table["doc_id"], rejects["doc_id"])))
