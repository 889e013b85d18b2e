"""The published run a new run builds on: the one DIR/CURRENT names, nothing else.

Its manifest says what produced it (policy, chunker version, parser key) and the checksum of
every file. Only when every file matches may its rows be reused or hard-linked
(``Previous``). Whatever state it is in, what can still be read of it (``OldRun``: its
chunk ids and document hashes) gives the change set and the counts, so a damaged or
missing previous run costs a full recompute, never a crash or a wrong change set.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, partial
from itertools import accumulate, groupby
from operator import itemgetter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chunkmill.pipeline import arrow_columns, runstore, schemas
from chunkmill.pipeline.doc_rows import document_runs
from chunkmill.pipeline.policy import POSTINGS_VERSION
from chunkmill.pipeline.runstore import ledger, parquet_files

OLD_CHUNK_COLUMNS = ["chunk_id", "doc_id", "path"]
OLD_DOC_COLUMNS = ["doc_id", "path", "source", "content_hash"]


@dataclass
class OldRun:
    """What is readable of the published run: its chunks (id, document, path) and its
    documents (id, path, source, content hash); empty tables when nothing is published.
    The chunks are read on first use (``read_chunks``): a run that changed nothing never
    reads them. ``parts``: the published run's parts, when it is reusable (then the chunks
    of chosen parts are read, ``chunks_except``)."""

    run_id: str | None
    read_chunks: Callable[[], pa.Table]
    documents: pa.Table
    parts: Parts | None = None

    @cached_property
    def chunks(self) -> pa.Table:
        return self.read_chunks()

    def chunks_except(self, linked: set[int]) -> pa.Table:
        """The chunks of every part but the ``linked`` ones (all without parts)."""
        if self.parts is None or not linked:
            return self.chunks
        keep = [p for i, p in enumerate(self.parts.files["chunks"]) if i not in linked]
        found = [pq.ParquetFile(p).read(columns=OLD_CHUNK_COLUMNS) for p in keep]
        return pa.concat_tables([_empty("chunks", OLD_CHUNK_COLUMNS), *found]).select(
            OLD_CHUNK_COLUMNS
        )

    @cached_property
    def hashes(self) -> dict[str, str]:
        """doc_id -> content_hash (computed once: looked up for every document read)."""
        d = self.documents
        return dict(zip(d["doc_id"].to_pylist(), d["content_hash"].to_pylist()))


@dataclass
class Parts:
    """The parts of a published run: each table's part files, and the documents of each
    part (read from the documents table, whose part ``k`` holds the same documents as part
    ``k`` of every partitioned table)."""

    files: dict[str, list[Path]]
    docs: list[list[str]]  # the document ids of each part, in order

    @cached_property
    def of_doc(self) -> dict[str, int]:
        return {d: k for k, ids in enumerate(self.docs) for d in ids}

    @cached_property
    def by_first(self) -> dict[str, int]:
        return {ids[0]: k for k, ids in enumerate(self.docs) if ids}

    def matching(self, doc_ids: list[str]) -> int | None:
        """The part that holds exactly these documents in this order, if one does."""
        k = self.by_first.get(doc_ids[0]) if doc_ids else None
        return k if k is not None and self.docs[k] == doc_ids else None

    def part_files(self, k: int) -> dict[str, Path]:
        return {name: found[k] for name, found in self.files.items()}


def read_parts(folder: Path, columns: list[str]) -> tuple[pa.Table, Parts]:
    """The published documents (``columns``, which include doc_id) and the run's parts."""
    files = {
        n: parquet_files.parts(folder, n)
        for n in schemas.PARTITIONED
        if n not in schemas.OPTIONAL_TABLES or (folder / f"{n}.parquet").exists()
    }
    if len({len(f) for f in files.values()}) != 1:  # not written by chunkmill
        counts = ", ".join(f"{n} {len(f)}" for n, f in files.items())
        raise OSError(f"its tables have different numbers of parts ({counts})")
    found = [
        pq.ParquetFile(p, page_checksum_verification=True).read(columns=columns)
        for p in files["documents"]
    ]
    docs = parquet_files.conform(
        pa.concat_tables(found), pa.schema([schemas.DOCUMENTS.field(c) for c in columns])
    )
    return docs, Parts(files, [t["doc_id"].to_pylist() for t in found])


def _empty(name: str, columns: list[str]) -> pa.Table:
    return schemas.empty(schemas.TABLES[name]).select(columns)


@dataclass
class Previous:
    """A published run whose files all match its manifest: its rows may be reused."""

    folder: Path
    manifest: dict
    documents: pa.Table
    parts: Parts
    tables: dict[str, StoredRows] = field(default_factory=dict)

    @cached_property
    def hashes(self) -> dict[str, str]:
        """doc_id -> content_hash (computed once: looked up for every document read)."""
        d = self.documents
        return dict(zip(d["doc_id"].to_pylist(), d["content_hash"].to_pylist()))

    def has(self, name: str) -> bool:
        """Whether the run wrote table ``name`` (an optional one may be absent)."""
        return bool(self.parts.files.get(name))

    def table(self, name: str) -> StoredRows:
        if name not in self.tables:
            self.tables[name] = StoredRows(self.parts.files[name], schemas.TABLES[name])
        return self.tables[name]

    def take(self, name: str, doc_ids: list[str]) -> pa.Table:
        of = self.parts.of_doc
        held = [d for d in doc_ids if d in of]
        return self.table(name).take(held, [of[d] for d in held])

    def linkable(self, metadata: dict[str, str]) -> bool:
        """Whether this run's parts can be linked into a run writing with ``metadata`` and
        this pyarrow: their footers, schemas and writer are what that run would write, so a
        linked part is byte for byte the part it would have written."""
        from pyarrow import __version__

        for name, found in self.parts.files.items():
            meta = pq.read_metadata(found[0])
            want = schemas.TABLES[name].with_metadata(metadata)
            footer = parquet_files.footer(self.folder, name)
            if (
                meta.created_by != f"parquet-cpp-arrow version {__version__}"
                or not meta.schema.to_arrow_schema().equals(want)
                or footer != metadata
            ):
                return False
        return True

    @cached_property
    def postings_reusable(self) -> bool:
        """Whether the stored postings were made with this version's terms (its footer says
        so): only then are the rows of unchanged chunks taken instead of made again."""
        found = parquet_files.footer(self.folder, "postings").get("mdchunk.postings_version")
        return found == POSTINGS_VERSION

    def blocks(self, doc_ids: list[str], bias: str) -> pa.Table:
        """Stored blocks, their estimates redone when the bias changed (no parsing)."""
        t = self.take("blocks", doc_ids)
        if self.manifest["policy"]["bias"] == bias or t.num_rows == 0:
            return t
        import polars as pl

        from chunkmill.pipeline.block import with_estimates

        return with_estimates(pl.from_arrow(t), bias).to_arrow().cast(schemas.BLOCKS)

    def under(self, source: str, folder: str) -> list[tuple[str, str]]:
        """(id, path) of the documents of ``source`` below ``folder`` ("" for all), in path
        order."""
        d = self.documents.to_pylist()
        return [
            (r["doc_id"], r["path"])
            for r in sorted(d, key=lambda r: r["path"])
            if r["source"] == source and r["path"].startswith(folder)
        ]


class StoredRows:
    """The rows of each document in one table of the published run, read part by part and
    row group by row group as batches ask for them. Of a part, only the doc_id column is
    read whole, dictionary-encoded (a number per row, not a string), when a batch first
    asks for one of its documents: a re-pack's first batch goes to the workers without
    waiting for the whole blocks table (about 0.7 s over the shared corpora, while the
    workers stood idle), a night reads only the parts its changes fall in, and the main
    process never holds a table. A run's batches are its row groups, so a batch of the same
    documents reads one group. Pages are checked against their checksums as they are read
    (the files were checked against the manifest when the run was opened)."""

    def __init__(self, files: list[Path], schema: pa.Schema):
        self.files, self.schema = files, schema
        self.opened: dict[int, _PartRows] = {}

    def take(self, doc_ids: list[str], parts: list[int]) -> pa.Table:
        """The rows of these documents, in the order given; ``parts``: the part of each."""
        found = [schemas.empty(self.schema)]
        for k, group in groupby(zip(doc_ids, parts), key=itemgetter(1)):
            if k not in self.opened:
                self.opened[k] = _PartRows(self.files[k])
            found.append(self.opened[k].take([d for d, _ in group]))
        if len(found) == 2:
            return parquet_files.conform(found[1], self.schema)
        return pa.concat_tables([parquet_files.conform(t, self.schema) for t in found])


class _PartRows:
    """The rows of each document of one part file."""

    def __init__(self, path: Path):
        self.file = pq.ParquetFile(path, page_checksum_verification=True)
        keys = pq.ParquetFile(path, page_checksum_verification=True, read_dictionary=["doc_id"])
        self.where = document_runs(keys.read(columns=["doc_id"])["doc_id"])
        meta = self.file.metadata
        sizes = (meta.row_group(g).num_rows for g in range(meta.num_row_groups))
        self.starts = list(accumulate(sizes, initial=0))  # first row of every group, and n

    def take(self, doc_ids: list[str]) -> pa.Table:
        """The rows of these documents (every one held here), in the order given."""
        runs = [self.where[d] for d in doc_ids if d in self.where]
        if not runs:
            return schemas.empty(self.file.schema_arrow)
        spans = [(self._group(s), self._group(s + n - 1)) for s, n in runs]
        groups = sorted({g for first, last in spans for g in range(first, last + 1)})
        local, at = {}, 0  # a group's first row among the rows read
        for g in groups:
            local[g], at = at, at + self.starts[g + 1] - self.starts[g]
        # a document spanning groups spans consecutive ones, read one after the other
        runs = [(local[g] + s - self.starts[g], n) for (s, n), (g, _) in zip(runs, spans)]
        return self.file.read_row_groups(groups).take(arrow_columns.ranges(runs))

    def _group(self, row: int) -> int:
        return bisect_right(self.starts, row) - 1


def unchanged(known: Mapping[str, str], doc_id: str, digest: str | None) -> bool:
    """Whether a document is unchanged since the published run: its content hash is the one
    that run recorded (``known``: doc_id -> content_hash). The one rule of the local and Ray
    engines and of a run's counts; a file stamp stands in for the hash only where the
    published run recorded both (``runstore.stamps``)."""
    return digest is not None and known.get(doc_id) == digest


def document_counts(known: Mapping[str, str], now: Mapping[str, str]) -> dict[str, int]:
    """documents_added, _changed and _unchanged of a run whose documents hash as ``now``,
    against the published run's ``known``."""
    same = sum(1 for d, h in now.items() if unchanged(known, d, h))
    added = sum(1 for d in now if d not in known)
    return {
        "documents_added": added,
        "documents_changed": len(now) - added - same,
        "documents_unchanged": same,
    }


def open_published(
    root: Path, pub: runstore.Published | None = None
) -> tuple[Previous | None, OldRun, str | None]:
    """(the reusable previous run or None, what is readable of it, a one-line note on why
    it cannot be reused, if it cannot). The chunk ids of a published run that cannot be
    read come from the ledger, which records them: the change set then removes exactly
    what the ledger removes. ``pub``: the published run as the caller opened it (checked
    against its manifest), else opened here."""
    pub = pub if pub is not None else runstore.current(root)
    if pub.usable:
        try:
            docs, parts = read_parts(pub.folder, OLD_DOC_COLUMNS)
        except OSError as exc:  # parts that do not line up: what the damage path reads
            pub.problem = str(exc)
            return open_published(root, pub)
        chunks = partial(parquet_files.read, pub.folder, "chunks", OLD_CHUNK_COLUMNS)
        prev = Previous(pub.folder, pub.manifest, docs, parts)
        old = OldRun(pub.run_id, chunks, docs, parts)
        old.hashes = prev.hashes  # one map of the one table
        return prev, old, None
    no_chunks = partial(_empty, "chunks", OLD_CHUNK_COLUMNS)
    empty = OldRun(pub.run_id, no_chunks, _empty("documents", OLD_DOC_COLUMNS))
    if pub.problem is None:  # nothing published yet
        return None, empty, None
    run_id, recorded = _recorded(root, pub.run_id)
    if pub.folder is None:
        if recorded is not None:
            empty = OldRun(run_id, lambda: recorded, empty.documents)
        note = f"{pub.problem}; nothing of the published run can be read, so every document "
        return None, empty, note + "is recomputed and " + _removes(recorded, run_id)
    chunks, got, total = parquet_files.salvage(pub.folder, "chunks", OLD_CHUNK_COLUMNS)
    docs, _, _ = parquet_files.salvage(pub.folder, "documents", OLD_DOC_COLUMNS)
    if recorded is not None:
        chunks = recorded
    old = OldRun(
        pub.run_id,
        (lambda: chunks) if chunks is not None else no_chunks,
        docs if docs is not None else empty.documents,
    )
    if recorded is not None:
        removes = _removes(recorded, run_id)
    elif chunks is None:
        removes = "its chunks.parquet cannot be read, so the change set removes nothing"
    else:
        removes = (
            f"the change set removes only among the {old.chunks.num_rows} chunk ids still "
            f"readable ({got} of {total} row groups of its chunks.parquet)"
        )
    note = (
        f"the published run {pub.folder} cannot be reused ({pub.problem}); every document "
        f"is recomputed; {removes}"
    )
    return None, old, note


def _recorded(root: Path, run_id: str | None) -> tuple[str | None, pa.Table | None]:
    """(the published run, the chunk ids the ledger records for it): the run CURRENT names,
    else (CURRENT is missing, or names a run the ledger never saw published) the last run
    the runs table records as published; (None, None) when the ledger cannot say."""
    published = [r["run_id"] for r in runstore.history(root) if r["status"] == "published"]
    for candidate in dict.fromkeys([run_id, *published[-1:]]):
        found = None if candidate is None else ledger.held(root, candidate)
        if found is not None:
            schema = _empty("chunks", OLD_CHUNK_COLUMNS).schema
            return candidate, parquet_files.conform(found, schema)
    return None, None


def _removes(recorded: pa.Table | None, run_id: str | None) -> str:
    if recorded is None:
        return "the change set removes nothing"
    return (
        f"the change set removes among the {recorded.num_rows} chunk ids the ledger "
        f"records for run {run_id}"
    )
