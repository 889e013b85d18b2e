"""The published run a new run builds on: the one DIR/CURRENT names, nothing else.

Its manifest says what produced it (policy, chunker version, parser key) and the checksum of
every file. Only when every file matches may its rows be reused or hard-linked
(``Previous``). Whatever state it is in, what can still be read of it (``OldRun``: its
chunk ids and document hashes) gives the change set and the counts, so a damaged or
missing previous run costs a full recompute, never a crash or a wrong change set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path

import pyarrow as pa

from mdchunk.pipeline import runstore, schemas, store
from mdchunk.pipeline.batch import DocRows

OLD_CHUNK_COLUMNS = ["chunk_id", "doc_id", "path"]
OLD_DOC_COLUMNS = ["doc_id", "path", "source", "content_hash"]


@dataclass
class OldRun:
    """What is readable of the published run: its chunks (id, document, path) and its
    documents (id, path, source, content hash); empty tables when nothing is published.
    The chunks are read on first use (``read_chunks``): a run that changed nothing never
    reads them."""

    run_id: str | None
    read_chunks: Callable[[], pa.Table]
    documents: pa.Table

    @cached_property
    def chunks(self) -> pa.Table:
        return self.read_chunks()

    @cached_property
    def hashes(self) -> dict[str, str]:
        """doc_id -> content_hash (computed once: looked up for every document read)."""
        d = self.documents
        return dict(zip(d["doc_id"].to_pylist(), d["content_hash"].to_pylist()))


def _empty(name: str, columns: list[str]) -> pa.Table:
    return schemas.empty(schemas.TABLES[name]).select(columns)


@dataclass
class Previous:
    """A published run whose files all match its manifest: its rows may be reused."""

    folder: Path
    manifest: dict
    documents: pa.Table
    tables: dict[str, DocRows] = field(default_factory=dict)

    @cached_property
    def hashes(self) -> dict[str, str]:
        """doc_id -> content_hash (computed once: looked up for every document read)."""
        d = self.documents
        return dict(zip(d["doc_id"].to_pylist(), d["content_hash"].to_pylist()))

    def table(self, name: str) -> DocRows:
        if name not in self.tables:
            self.tables[name] = DocRows(store.read(self.folder, name))
        return self.tables[name]

    def take(self, name: str, doc_ids: list[str]) -> pa.Table:
        return self.table(name).take(doc_ids)

    def blocks(self, doc_ids: list[str], bias: str) -> pa.Table:
        """Stored blocks, their estimates redone when the bias changed (no parsing)."""
        t = self.take("blocks", doc_ids)
        if self.manifest["policy"]["bias"] == bias or t.num_rows == 0:
            return t
        import polars as pl

        from mdchunk.pipeline.block import with_estimates

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


def open_published(root: Path) -> tuple[Previous | None, OldRun, str | None]:
    """(the reusable previous run or None, what is readable of it, a one-line note on why
    it cannot be reused, if it cannot)."""
    pub = runstore.current(root)
    if pub.usable:
        docs = store.read(pub.folder, "documents", OLD_DOC_COLUMNS)
        chunks = partial(store.read, pub.folder, "chunks", OLD_CHUNK_COLUMNS)
        prev, old = Previous(pub.folder, pub.manifest, docs), OldRun(pub.run_id, chunks, docs)
        old.hashes = prev.hashes  # one map of the one table
        return prev, old, None
    no_chunks = partial(_empty, "chunks", OLD_CHUNK_COLUMNS)
    empty = OldRun(pub.run_id, no_chunks, _empty("documents", OLD_DOC_COLUMNS))
    if pub.problem is None:  # nothing published yet
        return None, empty, None
    if pub.folder is None:
        note = f"{pub.problem}; nothing of the published run can be read, so every document "
        return None, empty, note + "is recomputed and the change set removes nothing"
    chunks, got, total = store.salvage(pub.folder / "chunks.parquet", OLD_CHUNK_COLUMNS)
    docs, _, _ = store.salvage(pub.folder / "documents.parquet", OLD_DOC_COLUMNS)
    old = OldRun(
        pub.run_id,
        (lambda: chunks) if chunks is not None else no_chunks,
        docs if docs is not None else empty.documents,
    )
    if chunks is None:
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
