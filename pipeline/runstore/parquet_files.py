"""Parquet output: zstd, declared schemas, row groups written as batches arrive.

A table of documents' rows (``schemas.PARTITIONED``) is a folder of parts,
``chunks.parquet/part-000000.parquet`` and on: a part holds the rows of a run of consecutive
documents, the same documents in every such table, ended by a document whose id says so
(``batching.ends_part``), so an edit changes one part and the next run links the others
unchanged. The other tables are one file each. Files are written under a temporary name and
renamed into place when complete, so a reader never sees a half-written file. Every data
page carries a CRC32 checksum (Parquet page checksums): a reader that verifies them
(``read`` does) notices a damaged page instead of returning its damaged rows.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chunkmill.pipeline import schemas

COMPRESSION = "zstd"
PART = "part-{:06d}.parquet"  # names sort in order up to 10^6 parts: a terabyte of input
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
    """Incremental Parquet writer for one declared table. Without ``durable`` the file is
    not synced before it is renamed into place: for the files of a run folder, which
    publishing syncs together (runstore.commit)."""

    def __init__(self, path: Path, schema: pa.Schema, durable: bool = True):
        self.path, self.durable = Path(path), durable
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
        if self.durable:
            with open(self.tmp, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self._writer.close()
        self.tmp.unlink(missing_ok=True)


class OutputSet:
    """The writers of one output folder, closed (published) together. ``metadata`` is
    written into every file's footer (key-value metadata, e.g. the policy). A partitioned
    table is written part by part: ``end_part`` closes the current part of every one of
    them (an empty file for a table with no rows in it: part ``k`` of every table holds the
    same documents), ``link_part`` takes a part of another run whole."""

    def __init__(
        self,
        out: Path,
        names: list[str],
        metadata: dict[str, str] | None = None,
        durable: bool = True,
    ):
        out.mkdir(parents=True, exist_ok=True)
        self.out, self.durable = out, durable
        self.schemas = {n: schemas.TABLES[n].with_metadata(metadata) for n in names}
        self.parted = [n for n in names if n in schemas.PARTITIONED]
        self.writers = {
            n: TableWriter(out / f"{n}.parquet", s, durable)
            for n, s in self.schemas.items()
            if n not in self.parted
        }
        for n in self.parted:  # written aside, put in place whole when all is written
            shutil.rmtree(self._folder(n), ignore_errors=True)
            self._folder(n).mkdir()
        self.parts = 0  # parts finished
        self.current: PartWriter | None = None  # the open part
        self.linked: dict[str, str] = {}  # name in this folder -> the linked file's path

    def write(self, name: str, table: pa.Table) -> None:
        if name in self.writers:
            self.writers[name].write(table)
            return
        self._open().write(name, table)

    def _open(self) -> PartWriter:
        if self.current is None:
            parted = {n: self.schemas[n] for n in self.parted}
            self.current = PartWriter(self.out, self.parts, parted, self.durable)
        return self.current

    def end_part(self) -> None:
        """Close the open part (an empty one when nothing was written since the last)."""
        self._open().close()
        self.current = None
        self.parts += 1

    def link_part(self, files: dict[str, Path]) -> None:
        """The next part is ``files`` (table -> a part file of another run, the same
        documents in each): hard-linked, or copied where links are not allowed."""
        assert not self.current, "a part is open"
        for n in self.parted:
            dst = part_path(self.out, n, self.parts)
            if link_or_copy(files[n], dst):
                self.linked[part_name(n, self.parts)] = str(files[n])
        self.parts += 1

    def adopt_part(self, index: int) -> None:
        """The next part, written in place by someone else (``part_path``): counted."""
        assert not self.current and index == self.parts, "parts out of order"
        missing = [n for n in self.parted if not part_path(self.out, n, index).is_file()]
        if missing:
            raise OSError(f"part {index} of {', '.join(missing)} was not written")
        self.parts += 1

    def _folder(self, name: str) -> Path:
        return _aside(self.out, name)

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            if self.current or (self.parted and not self.parts):  # every table has a part
                self.end_part()
            for w in self.writers.values():
                w.close()
            for n in self.parted:
                _replace_folder(self._folder(n), self.out / f"{n}.parquet")
            return
        for w in self.writers.values():
            w.abort()
        if self.current is not None:
            self.current.abort()
        for n in self.parted:
            shutil.rmtree(self._folder(n), ignore_errors=True)


class PartWriter:
    """The files of part ``index`` of the partitioned tables ``schemas`` (name -> schema)
    of an open output set of ``out`` (``part_path``), all created at once: a table with no
    rows in the part gets an empty file. The output set writes its parts with one; a
    worker writes a whole part with one (jobs/part_work.py)."""

    def __init__(self, out: Path, index: int, schemas: dict[str, pa.Schema], durable: bool):
        self.paths = {n: part_path(out, n, index) for n in schemas}
        self.writers = {n: TableWriter(self.paths[n], s, durable) for n, s in schemas.items()}

    def write(self, name: str, table: pa.Table) -> None:
        self.writers[name].write(table)

    def close(self) -> None:
        for w in self.writers.values():
            w.close()

    def abort(self) -> None:
        for w in self.writers.values():
            w.abort()


def _aside(out: Path, name: str) -> Path:
    """Where the parts of table ``name`` are written until the output set is closed."""
    return Path(out) / f".{name}.parquet.tmp"


def part_path(out: Path, name: str, index: int) -> Path:
    """Where part ``index`` of table ``name`` is written in an open output set of ``out``
    (by the set itself, or by a worker before the set adopts it)."""
    return _aside(out, name) / PART.format(index)


def part_name(name: str, index: int) -> str:
    """Part ``index`` of table ``name`` as a manifest names it, once the set is closed."""
    return f"{name}.parquet/{PART.format(index)}"


def _replace_folder(new: Path, path: Path) -> None:
    """Put the folder ``new`` at ``path``, in place of what is there (a table written
    before, as a folder or as one file)."""
    old = path.with_name(f".{path.name}.old")
    if path.exists():
        shutil.rmtree(old, ignore_errors=True)
        if old.is_file():
            old.unlink()
        os.replace(path, old)
    os.replace(new, path)
    if old.is_dir():
        shutil.rmtree(old)
    else:
        old.unlink(missing_ok=True)


def link_or_copy(src: Path, dst: Path) -> bool:
    """Hard-link ``src`` as ``dst``; copy it where links are not allowed (another
    filesystem). True when linked (the same bytes, not read)."""
    try:
        os.link(src, dst)
        return True
    except OSError:
        dst.write_bytes(Path(src).read_bytes())
        return False


def parts(folder: Path, name: str) -> list[Path]:
    """The files of table ``name`` in ``folder``, in order: the parts of a partitioned
    table, else its one file (a partitioned table written as one file by an older
    chunkmill is one part)."""
    path = Path(folder) / f"{name}.parquet"
    if path.is_dir():
        return sorted(path.glob("part-*.parquet"))
    return [path]


def num_rows(folder: Path, name: str) -> int:
    """The rows of a table, from its footers."""
    return sum(pq.read_metadata(p).num_rows for p in parts(folder, name))


def write_table(path: Path, table: pa.Table, schema: pa.Schema) -> None:
    """One whole table to Parquet, under a temporary name until complete."""
    writer = TableWriter(Path(path), schema)
    writer.write(table)
    writer.close()


def read(out: Path, name: str, columns: list[str] | None = None) -> pa.Table:
    """A whole table, every part, its page checksums verified (OSError when a page is
    damaged)."""
    # ParquetFile, not read_table: that one loads pyarrow.dataset and pandas (start-up time)
    found = [
        pq.ParquetFile(p, page_checksum_verification=True).read(columns=columns)
        for p in parts(out, name)
    ]
    table = found[0] if len(found) == 1 else pa.concat_tables(found)
    schema = schemas.TABLES[name]
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])
    return conform(table, schema)


def salvage(folder: Path, name: str, columns: list[str]) -> tuple[pa.Table | None, int, int]:
    """What can still be read of a possibly damaged table: ``columns`` of every row group
    of every part whose pages pass their checksums. Returns (table or None, groups read,
    groups)."""
    found, groups, opened = [], 0, False
    for path in parts(folder, name):
        try:
            pf = pq.ParquetFile(path, page_checksum_verification=True)
        # missing, truncated (no footer), not Parquet at all, or a damaged footer (which can
        # read as any Arrow error: a flipped bit in a schema is "not implemented")
        except (OSError, ValueError, pa.ArrowException):
            continue
        opened = True
        groups += pf.num_row_groups
        for i in range(pf.num_row_groups):
            try:
                found.append(pf.read_row_group(i, columns=columns))
            except (OSError, ValueError, pa.ArrowException):
                continue
    if not found:
        nothing = opened and not groups  # parts without rows
        return (schemas.empty(schemas.TABLES[name]).select(columns) if nothing else None), 0, groups
    return pa.concat_tables(found), len(found), groups


def footer(out: Path, name: str) -> dict[str, str]:
    """The key-value metadata written into a table's footer (without Arrow's own)."""
    meta = pq.read_schema(parts(out, name)[0]).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if not k.startswith(b"ARROW")}
