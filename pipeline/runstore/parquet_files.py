"""Parquet output: zstd, declared schemas, row groups written as batches arrive.

Files are written under a temporary name and renamed into place when complete, so a
reader never sees a half-written file. Every data page carries a CRC32 checksum (Parquet
page checksums): a reader that verifies them (``read`` does) notices a damaged page instead
of returning its damaged rows.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chunkmill.pipeline import schemas

COMPRESSION = "zstd"
WRITE_OPTIONS = {"compression": COMPRESSION, "write_page_checksum": True}


def table_options(name: str, schema: pa.Schema) -> dict:
    """How a table is written, chosen by measurement (docs/design.md, Decisions): zstd at
    level 1; a dictionary only for the columns that repeat a few values
    (``schemas.REPEATED``); statistics for the columns a filter reads, not for texts, lists
    and maps. ``name``: the table's (a file's stem)."""
    texts = (pa.types.is_large_string, pa.types.is_list, pa.types.is_map, pa.types.is_struct)
    return {
        **WRITE_OPTIONS,
        "compression_level": 1,
        "use_dictionary": [f.name for f in schema if f.name in schemas.REPEATED.get(name, ())],
        "write_statistics": [f.name for f in schema if not any(t(f.type) for t in texts)],
    }


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, durable: bool = True) -> None:
    """Write to a temporary name, fsync, rename over ``path``, fsync the folder. Without
    ``durable`` nothing is synced: for files of a run folder, which publishing syncs
    together (runstore.commit)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)
    if durable:
        fsync_dir(path.parent)


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` under ``schema`` (its field names, types and metadata), cast only when a
    type differs: every cast loads pyarrow.compute, which a run that changed nothing does
    not otherwise need (a twentieth of a second of start-up)."""
    if table.schema.equals(schema):  # the same names and types; metadata aside
        return pa.Table.from_arrays(table.columns, schema=schema)
    return table.cast(schema)


def upgrade(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``conform``, for a file written before ``schema`` gained columns (the runs table's
    ``chunks_updated``, the ledger's ``updated``): the columns it lacks are added, null."""
    for f in schema:
        if f.name not in table.column_names:
            table = table.append_column(f, pa.nulls(table.num_rows, f.type))
    return conform(table.select(schema.names), schema)


class TableWriter:
    """Incremental Parquet writer for one declared table."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path = Path(path)
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.schema = schema
        self.rows = 0
        options = table_options(self.path.stem, schema)
        self._writer = pq.ParquetWriter(self.tmp, schema, **options)

    def write(self, table: pa.Table) -> None:
        if table.num_rows:
            self._writer.write_table(conform(table, self.schema))
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


def read(out: Path, name: str, columns: list[str] | None = None) -> pa.Table:
    """A whole table, its page checksums verified (OSError when a page is damaged)."""
    path = Path(out) / f"{name}.parquet"
    # ParquetFile, not read_table: that one loads pyarrow.dataset and pandas (start-up time)
    table = pq.ParquetFile(path, page_checksum_verification=True).read(columns=columns)
    schema = schemas.TABLES[name]
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])
    return conform(table, schema)


def salvage(path: Path, columns: list[str]) -> tuple[pa.Table | None, int, int]:
    """What can still be read of a possibly damaged Parquet file: ``columns`` of every row
    group whose pages pass their checksums. Returns (table or None, groups read, groups)."""
    try:
        pf = pq.ParquetFile(path, page_checksum_verification=True)
    except (OSError, ValueError):  # missing, truncated (no footer), not Parquet at all
        return None, 0, 0
    parts = []
    for i in range(pf.num_row_groups):
        try:
            parts.append(pf.read_row_group(i, columns=columns))
        except (OSError, ValueError, pa.ArrowException):
            continue
    if not parts:
        empty = schemas.empty(pf.schema_arrow).select(columns) if not pf.num_row_groups else None
        return empty, 0, pf.num_row_groups
    return pa.concat_tables(parts), len(parts), pf.num_row_groups


def footer(out: Path, name: str) -> dict[str, str]:
    """The key-value metadata written into a table's footer (without Arrow's own)."""
    meta = pq.read_schema(Path(out) / f"{name}.parquet").metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if not k.startswith(b"ARROW")}
