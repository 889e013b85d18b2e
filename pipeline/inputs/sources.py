"""Readers: turn the user's INPUT (folder, files, or a table of documents) into RawDocuments.

With ``reading`` (a file's bytes) and ``table_rows`` (a table's rows), this is the only part
of the library that reads input files. Order is deterministic: folders are walked in sorted
order, tables in row order.

Listing a folder decides what is never read: a file whose name is not UTF-8 (``bad_name``,
with a printable form of the name), a symbolic link that resolves outside the folder
(``outside_root``, unless ``follow_symlinks``), and a folder that cannot be listed
(``unlistable``: one reject row for the folder, path ``FOLDER/``). Reading then goes
through ``pipeline.inputs.reading`` (stat first, regular files only, bounded reads).

Not read, and counted by reason in ``Selection.skipped``: files that are not markdown or
text (``not markdown``), hidden folders (``hidden``), links to folders (``symlink``) and
the output folder when it lies inside INPUT (``inside --out``). With several INPUTs, every
document's path starts with its input's label (``Source.label``; see input_labels.py).
"""

from __future__ import annotations

import fnmatch
import io
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath, PurePosixPath

from chunkmill.pipeline.doc_limits import DEFAULT_MAX_BYTES
from chunkmill.pipeline.document import RawDocument, doc_format
from chunkmill.pipeline.inputs.reading import (  # noqa: F401 - re-exported for callers
    BAD_NAME,
    OUTSIDE_ROOT,
    UNLISTABLE,
    InputError,
    fetch,
    inside,
    open_table,
    printable,
)
from chunkmill.pipeline.inputs.table_rows import (  # noqa: F401
    jsonl_documents,
    parquet_documents,
    table_documents,
)

TABLE_SUFFIXES = {".parquet", ".jsonl", ".ndjson"}


@dataclass
class Selection:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    text_column: str | None = None
    id_column: str | None = None
    skipped: Counter = field(default_factory=Counter)  # reason -> entries not read
    max_bytes: int = DEFAULT_MAX_BYTES  # larger files are rejected unread (too_large)
    follow_symlinks: bool = False  # read symlinks that resolve outside the input folder
    out: Path | None = None  # the output folder: never read, even inside INPUT
    matched: set[str] = field(default_factory=set)  # the include patterns a path matched

    @classmethod
    def of(cls, options, out: Path | None) -> Selection:
        """The selection of a run's or a command's input options
        (``chunkmill.jobs.options.InputOptions``), never reading ``out``."""
        return cls(
            tuple(options.include),
            tuple(options.exclude),
            options.text_column,
            options.id_column,
            max_bytes=options.max_bytes,
            follow_symlinks=options.follow_symlinks,
            out=out,
        )

    def wants(self, rel: str) -> bool:
        if self.include:
            hits = [g for g in self.include if _matches(rel, g)]
            if not hits:
                return False
            self.matched.update(hits)
        return not any(_matches(rel, g) for g in self.exclude)

    def unmatched(self) -> list[str]:
        """The include patterns that no path listed or read so far matched."""
        return [g for g in self.include if g not in self.matched]


def _matches(rel: str, pattern: str) -> bool:
    """fnmatch ('*' matches '/' too), and as in .gitignore: a leading ``**/`` also matches
    at the top, a pattern naming a folder matches everything below it, ``./`` is dropped."""
    pattern = pattern.removeprefix("./")
    if fnmatch.fnmatch(rel, pattern):
        return True
    if pattern.startswith("**/") and fnmatch.fnmatch(rel, pattern[3:]):
        return True
    return fnmatch.fnmatch(rel, pattern.rstrip("/") + "/*")


@dataclass(slots=True)  # not frozen: a frozen dataclass is built three times slower; slots:
# no dict per instance (one Source per input file)
class Source:
    """One thing to read: a file under a root, or a whole table of documents. ``scheme`` is
    set ("s3://", "file://", ...) when it lives on a filesystem reached through pyarrow.
    ``problem`` = (reason, detail) when listing already decided it is a reject; ``name`` is
    the (printable) relative path when listing computed it: a folder's listing always
    does (pathlib's relative_to costs a second over ten thousand files)."""

    root: PurePath
    path: PurePath | str  # a folder's listing gives plain strings (fewer objects per file)
    is_table: bool = False
    scheme: str | None = None
    problem: tuple[str, str] | None = None
    name: str | None = None
    label: str | None = None  # with several INPUTs: the first part of every path
    within: str | None = None  # the real folder the file must be read from (None: anywhere)

    @property
    def uri(self) -> str:
        return f"{self.scheme}{self.path}" if self.scheme else str(self.path)

    @property
    def root_uri(self) -> str:
        return f"{self.scheme}{self.root}" if self.scheme else str(self.root)

    @property
    def rel(self) -> str:
        rel = self.name or self.path.relative_to(self.root).as_posix()
        return f"{self.label}/{rel}" if self.label else rel


def folder_prefix(reject_path: str) -> str:
    """The path prefix of the documents below an unlistable folder's reject path."""
    return "" if reject_path == "./" else reject_path


def plan(
    inputs: list[str], selection: Selection, labels: dict[str, str | None] | None = None
) -> list[Source]:
    """Everything INPUT names, in a deterministic order; counts what is skipped. ``labels``
    (pipeline.inputs.input_labels.input_labels) prefixes the paths of each input's documents."""
    out: list[Source] = []
    for item in inputs:
        label = (labels or {}).get(item)
        out.extend(replace(s, label=label) if label else s for s in _plan_one(item, selection))
    return _once(out, selection) if len(inputs) > 1 else out


def _once(sources: list[Source], selection: Selection) -> list[Source]:
    """Each path once: an INPUT given twice, or a file given with its folder, lists the
    same file again (two different roots never share a label: pipeline/inputs/input_labels.py). The
    first listing is kept, the others are skipped ("listed twice")."""
    seen: set[str] = set()
    out = []
    for src in sources:
        rel = src.rel
        if rel in seen:
            selection.skipped["listed twice"] += 1
            continue
        seen.add(rel)
        out.append(src)
    return out


def _plan_one(item: str, selection: Selection) -> list[Source]:
    if "://" in item:
        return _plan_uri(item, selection)
    path = Path(item)
    if not os.path.lexists(path):
        raise InputError(f"{item}: no such file or folder")
    if path.is_dir():
        return plan_folder(path, selection)
    if path.suffix.lower() in TABLE_SUFFIXES:
        if not path.is_file():
            raise InputError(f"{item}: not a regular file (a table must be one)")
        return [Source(path.parent, path, is_table=True)]
    return [Source(path.parent, path)]  # a file named on the command line: even a symlink


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
        if any(part.startswith(".") for part in rel.parts[:-1]):
            selection.skipped["hidden"] += 1
            continue
        if not selection.wants(str(rel)):
            continue
        if doc_format(str(rel)) is None:
            selection.skipped["not markdown"] += 1
            continue
        out.append(Source(base, PurePosixPath(f.path), False, scheme))
    return out


def plan_folder(root: Path, selection: Selection) -> list[Source]:
    """Every file below ``root`` to read (hidden folders skipped), sorted by path (the same
    order as a listing through pyarrow's filesystems), with the rejects listing decides.
    One os.scandir per folder and plain strings per file (no pathlib, no stat: a file's
    kind comes from its directory entry)."""
    entries: list[tuple[str, Source]] = []
    real_root = os.path.realpath(root)
    out = os.path.realpath(selection.out) if selection.out is not None else None
    pending = [(os.fspath(root), "")]  # (folder, its path relative to root)
    while pending:
        folder, sub = pending.pop()
        try:
            with os.scandir(folder) as listing:
                found = list(listing)
        except OSError as exc:
            entries.append((folder, _unlistable(root, folder, sub, exc)))
            continue
        for entry in found:
            raw = f"{sub}/{entry.name}" if sub else entry.name
            if _is_dir(entry):
                if _enters(entry, selection, out):
                    pending.append((entry.path, raw))
                continue
            rel = printable(raw)
            if not selection.wants(rel):
                continue
            if doc_format(rel) is None:
                selection.skipped["not markdown"] += 1
                continue
            entries.append((entry.path, _listed(root, real_root, entry, raw, rel, selection)))
    entries.sort(key=lambda e: e[0])
    return [source for _, source in entries]


def _is_dir(entry: os.DirEntry) -> bool:
    """A folder, or a link to one (as os.walk sorts entries)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _unlistable(root: Path, folder: str, sub: str, exc: OSError) -> Source:
    rel = printable(sub or ".") + "/"
    detail = f"could not list the folder: {exc.strerror or exc}"
    return Source(root, folder, problem=(UNLISTABLE, detail), name=rel)


def _enters(entry: os.DirEntry, selection: Selection, out: str | None) -> bool:
    """Whether a listing enters a subfolder; the others are counted in
    ``selection.skipped``."""
    if entry.name.startswith("."):
        selection.skipped["hidden"] += 1
    elif entry.is_symlink():
        selection.skipped["symlink"] += 1
    elif out is not None and os.path.realpath(entry.path) == out:
        selection.skipped["inside --out"] += 1
    else:
        return True
    return False


def _listed(
    root: Path, real_root: str, entry: os.DirEntry, raw: str, rel: str, selection: Selection
) -> Source:
    if rel != raw:
        detail = f"the file name is not valid UTF-8 (shown with \\x escapes): {rel}"
        return Source(root, entry.path, problem=(BAD_NAME, detail), name=rel)
    if entry.is_symlink() and not selection.follow_symlinks:
        target = os.path.realpath(entry.path)
        if not inside(target, real_root):
            detail = (
                f"a symbolic link to {printable(target)}, outside the input folder: not read "
                "(--follow-symlinks reads it)"
            )
            return Source(root, entry.path, problem=(OUTSIDE_ROOT, detail), name=rel)
    within = None if selection.follow_symlinks else real_root
    return Source(root, entry.path, name=rel, within=within)


def read(sources: list[Source], selection: Selection) -> Iterator[RawDocument]:
    for src in sources:
        if src.is_table:
            yield from _read_table(src, selection)
        else:
            yield read_file(src, selection.max_bytes)


def stat(src: Source) -> os.stat_result | None:
    """The stat of a local file to be read (taken before reading it, to stamp it:
    pipeline/runstore/stamps.py); None for tables, URIs, files listing already rejected and files
    that cannot be stat'ed."""
    if src.is_table or src.scheme or src.problem is not None:
        return None
    try:
        return os.stat(src.path)
    except OSError:
        return None


def read_file(src: Source, max_bytes: int) -> RawDocument:
    """One planned file: its bytes, or the reject that listing or reading decided."""
    if src.problem is not None:
        reason, detail = src.problem
        return RawDocument(src.rel, src.root_uri, None, detail, reason=reason)
    got = fetch(src.uri, max_bytes, src.within)
    return RawDocument(
        src.rel, src.root_uri, got.data, got.detail, reason=got.reason, n_bytes=got.n_bytes
    )


def _read_table(src: Source, selection: Selection) -> Iterator[RawDocument]:
    path = src.uri
    if src.path.suffix.lower() != ".parquet":
        got = fetch(path, 1 << 62)  # a table holds many documents: --max-bytes is per document
        if got.data is None:
            raise InputError(f"{path}: {got.detail}")
        yield from _labelled(jsonl_documents(io.BytesIO(got.data), selection, path), src.label)
        return
    with open_table(path) as file:
        try:
            docs = parquet_documents(file, selection, path)
            yield from _labelled(docs, src.label)
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - any reader failure is an unusable input
            raise InputError(f"{path}: could not read table: {exc}") from exc


def _labelled(docs: Iterator[RawDocument], label: str | None) -> Iterator[RawDocument]:
    """A table's documents, their paths after the input's label (several INPUTs)."""
    if not label:
        yield from docs
        return
    for doc in docs:
        yield replace(doc, path=f"{label}/{doc.path}")
