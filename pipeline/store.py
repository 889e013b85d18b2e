"""Parquet output: zstd, declared schemas, row groups written as batches arrive.

Files are written under a temporary name and renamed into place when complete, so a
reader never sees a half-written file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mdchunk.pipeline import schemas

COMPRESSION = "zstd"


class TableWriter:
    """Incremental Parquet writer for one declared table."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path = Path(path)
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.schema = schema
        self.rows = 0
        self._writer = pq.ParquetWriter(self.tmp, schema, compression=COMPRESSION)

    def write(self, table: pa.Table) -> None:
        if table.num_rows:
            self._writer.write_table(table.cast(self.schema))
            self.rows += table.num_rows

    def close(self) -> None:
        self._writer.close()
        with open(self.tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self._writer.close()
        self.tmp.unlink(missing_ok=True)


class OutputSet:
    """The writers of one output folder, closed (published) together. ``metadata`` is
    written into every file's footer (key-value metadata, e.g. the policy)."""

    def __init__(self, out: Path, names: list[str], metadata: dict[str, str] | None = None):
        out.mkdir(parents=True, exist_ok=True)
        self.writers = {
            n: TableWriter(out / f"{n}.parquet", schemas.TABLES[n].with_metadata(metadata))
            for n in names
        }

    def write(self, name: str, table: pa.Table) -> None:
        self.writers[name].write(table)

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        for w in self.writers.values():
            w.close() if exc_type is None else w.abort()


def write_table(path: Path, table: pa.Table, schema: pa.Schema) -> None:
    """One whole table to Parquet, under a temporary name until complete."""
    writer = TableWriter(Path(path), schema)
    writer.write(table)
    writer.close()


def read(out: Path, name: str) -> pa.Table:
    return pq.read_table(Path(out) / f"{name}.parquet", schema=schemas.TABLES[name])


def footer(out: Path, name: str) -> dict[str, str]:
    """The key-value metadata written into a table's footer (without Arrow's own)."""
    meta = pq.read_schema(Path(out) / f"{name}.parquet").metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if not k.startswith(b"ARROW")}
