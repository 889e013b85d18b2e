"""Readers: turn the user's INPUT (folder, files, or a table of documents) into RawDocuments.

This is the only module of the library that reads input files. Order is deterministic:
folders are walked in sorted order, tables in row order.
"""

from __future__ import annotations

import fnmatch
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath

from mdchunk.pipeline.document import RawDocument, doc_format

TABLE_SUFFIXES = {".parquet", ".jsonl", ".ndjson"}
TEXT_COLUMNS = ("text", "content", "body", "markdown")
ID_COLUMNS = ("path", "id", "doc_id", "url", "name")


class InputError(Exception):
    """The INPUT itself is unusable (missing, or a table without a text column)."""


@dataclass
class Selection:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    text_column: str | None = None
    id_column: str | None = None
    skipped: Counter = field(default_factory=Counter)  # suffix -> files not read

    def wants(self, rel: str) -> bool:
        if self.include and not any(fnmatch.fnmatch(rel, g) for g in self.include):
            return False
        return not any(fnmatch.fnmatch(rel, g) for g in self.exclude)


@dataclass(frozen=True)
class Source:
    """One thing to read: a file under a root, or a whole table of documents. ``scheme`` is
    set ("s3://", "file://", ...) when it lives on a filesystem reached through pyarrow."""

    root: PurePath
    path: PurePath
    is_table: bool = False
    scheme: str | None = None

    @property
    def uri(self) -> str:
        return f"{self.scheme}{self.path}" if self.scheme else str(self.path)

    @property
    def root_uri(self) -> str:
        return f"{self.scheme}{self.root}" if self.scheme else str(self.root)


def plan(inputs: list[str], selection: Selection) -> list[Source]:
    """Everything INPUT names, in a deterministic order; counts what is skipped."""
    out: list[Source] = []
    for item in inputs:
        if "://" in item:
            out.extend(_plan_uri(item, selection))
            continue
        path = Path(item)
        if not path.exists():
            raise InputError(f"{item}: no such file or folder")
        if path.is_dir():
            for file in list_files(path):
                rel = file.relative_to(path).as_posix()
                if not selection.wants(rel):
                    continue
                if doc_format(rel) is None:
                    selection.skipped[file.suffix.lower() or "(none)"] += 1
                    continue
                out.append(Source(path, file))
        elif path.suffix.lower() in TABLE_SUFFIXES:
            out.append(Source(path.parent, path, is_table=True))
        else:
            out.append(Source(path.parent, path))
    return out


def _plan_uri(item: str, selection: Selection) -> list[Source]:
    """A folder or file given as a URI, listed through pyarrow's filesystems."""
    from pyarrow import fs

    try:
        filesystem, root = fs.FileSystem.from_uri(item)
        info = filesystem.get_file_info(root)
    except (OSError, ValueError) as exc:
        raise InputError(f"{item}: cannot open: {exc}") from exc
    scheme = item[: item.index("://") + 3]
    if info.type == fs.FileType.NotFound:
        raise InputError(f"{item}: no such file or folder")
    base = PurePosixPath(root)
    if info.type == fs.FileType.File:
        table = base.suffix.lower() in TABLE_SUFFIXES
        return [Source(base.parent, base, table, scheme)]
    out = []
    found = filesystem.get_file_info(fs.FileSelector(root, recursive=True))
    for f in sorted((f for f in found if f.type == fs.FileType.File), key=lambda f: f.path):
        rel = PurePosixPath(f.path).relative_to(base)
        if any(part.startswith(".") for part in rel.parts[:-1]) or not selection.wants(str(rel)):
            continue
        if doc_format(str(rel)) is None:
            selection.skipped[rel.suffix.lower() or "(none)"] += 1
            continue
        out.append(Source(base, PurePosixPath(f.path), False, scheme))
    return out


def fetch(uri: str) -> tuple[bytes | None, str | None]:
    """The bytes at a local path or a URI, or None and why they could not be read. Both
    engines read through here, so an unreadable file is rejected with the same words."""
    try:
        if "://" not in uri:
            return Path(uri).read_bytes(), None
        from pyarrow import fs

        filesystem, path = fs.FileSystem.from_uri(uri)
        with filesystem.open_input_stream(path) as stream:
            return stream.read(), None
    except (OSError, ValueError) as exc:
        return None, f"could not read: {getattr(exc, 'strerror', None) or exc}"


def read(sources: list[Source], selection: Selection) -> Iterator[RawDocument]:
    for src in sources:
        if src.is_table:
            yield from _read_table(src, selection)
        else:
            yield _read_file(src)


def stat(src: Source) -> os.stat_result | None:
    """The stat of a local file (taken before reading it, to stamp it: pipeline/stamps.py);
    None for tables, URIs and files that cannot be stat'ed."""
    if src.is_table or src.scheme:
        return None
    try:
        return os.stat(src.path)
    except OSError:
        return None


def list_files(root: Path) -> list[Path]:
    """Every file below root, skipping hidden folders (.git, .cache, ...), sorted by path
    (the same order as a listing through pyarrow's filesystems)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(Path(folder) / f for f in files)
    return sorted(found, key=lambda p: p.as_posix())


def _read_file(src: Source) -> RawDocument:
    data, error = fetch(src.uri)
    rel = src.path.relative_to(src.root).as_posix()
    return RawDocument(path=rel, source=src.root_uri, data=data, error=error)


def _pick(columns: list[str], wanted: str | None, candidates: tuple[str, ...], what: str, src):
    if wanted:
        if wanted not in columns:
            raise InputError(f"{src}: no column {wanted!r} (columns: {', '.join(columns)})")
        return wanted
    for name in candidates:
        if name in columns:
            return name
    if what == "id":
        return None
    raise InputError(
        f"{src}: no {what} column; expected one of {', '.join(candidates)} "
        f"or --text-column (columns: {', '.join(columns)})"
    )


def _read_table(src: Source, selection: Selection) -> Iterator[RawDocument]:
    import io

    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    path = src.uri
    content, error = fetch(path)
    if error:
        raise InputError(f"{path}: {error}")
    try:
        data = io.BytesIO(content)
        table = (
            pq.read_table(data) if src.path.suffix.lower() == ".parquet" else pajson.read_json(data)
        )
    except Exception as exc:  # noqa: BLE001 - any reader failure is an unusable input
        raise InputError(f"{path}: could not read table: {exc}") from exc
    yield from table_documents(table, selection, path)


def table_documents(table, selection: Selection, source: str) -> Iterator[RawDocument]:
    """One RawDocument per row of an Arrow table of documents (a table file's rows, or a
    table handed to the Python API): the text column, the id column (else ``row-N``), every
    other column as metadata."""
    text_col = _pick(table.column_names, selection.text_column, TEXT_COLUMNS, "text", source)
    id_col = _pick(table.column_names, selection.id_column, ID_COLUMNS, "id", source)
    others = [c for c in table.column_names if c not in (text_col, id_col)]
    for i, row in enumerate(table.to_pylist()):
        key = str(row[id_col]) if id_col and row[id_col] is not None else f"row-{i}"
        if not selection.wants(key):
            continue
        text = row[text_col]
        meta = {c: str(row[c]) for c in others if row[c] is not None}
        if text is None:
            yield RawDocument(key, source, None, f"row {i}: column {text_col!r} is null", meta)
        else:
            data = text if isinstance(text, bytes) else str(text).encode("utf-8")
            yield RawDocument(key, source, data, None, meta)
