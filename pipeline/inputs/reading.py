"""Reading one input file's bytes safely: look before reading, and never read without bound.

A path is ``stat``-ed first: anything but a regular file (a named pipe, a device such as
/dev/zero, a socket, a folder) is a reject (``not_a_file``) and is never opened for
reading; a file over the byte limit is a reject (``too_large``) and is never read. The file
is then opened without blocking and checked again on the open descriptor (it may have been
replaced in between), and at most limit + 1 bytes are read, so a file that grows while it
is read cannot take more memory than the limit either. A file listed below an input folder
is read only if the file actually opened lies below it (``outside_root``): a file or folder
replaced by a link to elsewhere after listing is not read.
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

# Reject reasons decided while listing or reading (document.py adds the decoding ones).
UNREADABLE = "unreadable"
NOT_A_FILE = "not_a_file"
TOO_LARGE = "too_large"
OUTSIDE_ROOT = "outside_root"
BAD_NAME = "bad_name"
UNLISTABLE = "unlistable"
BAD_ROW = "bad_row"
DUPLICATE = "duplicate"  # a row of a table whose path an earlier row already has

_KINDS = [
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
]
_BLOCK = 1 << 20


class InputError(Exception):
    """The INPUT itself is unusable (missing, or a table without a text column)."""


class Fetched(NamedTuple):
    """The bytes of one file, or why there are none (``reason``, ``detail``)."""

    data: bytes | None
    reason: str | None = None
    detail: str | None = None
    n_bytes: int | None = None


def printable(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (kept by Python as surrogates) are
    shown as \\xNN escapes."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _too_large(size: int, limit: int, when: str) -> Fetched:
    detail = f"{size} bytes is over the limit of {limit} bytes ({when}; --max-bytes)"
    return Fetched(None, TOO_LARGE, detail, size)


def inside(path: str, folder: str) -> bool:
    """Whether the real path ``path`` lies below the real folder ``folder`` (both absolute
    and normalised, as real paths are: a prefix ending at a separator says it)."""
    return path == folder or path.startswith(folder if folder.endswith(os.sep) else folder + os.sep)


def _opened_path(fd: int, path: str) -> str:
    """The real path of the file open at ``fd`` (where /proc is missing: ``path``'s, which
    a change after opening could still hide)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def _elsewhere(fd: int, path: str, within: str | None) -> Fetched | None:
    """The reject of a file opened outside ``within`` (the real input folder), or None."""
    if within is None:
        return None
    where = _opened_path(fd, path)
    if inside(where, within):
        return None
    detail = (
        f"replaced after listing by a link to {printable(where)}, outside the input folder: "
        "not read (--follow-symlinks reads it)"
    )
    return Fetched(None, OUTSIDE_ROOT, detail)


def read_local(path: str, limit: int, within: str | None = None) -> Fetched:
    """The bytes of the regular file at ``path`` (symlinks followed), at most ``limit``;
    with ``within``, only if the file opened lies below that real folder."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return Fetched(None, UNREADABLE, f"could not read: {exc.strerror or exc}")
    kind = _kind(st.st_mode)
    if kind:
        return Fetched(None, NOT_A_FILE, f"{kind}, not a regular file: not read")
    if st.st_size > limit:
        return _too_large(st.st_size, limit, "not read")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        return Fetched(None, UNREADABLE, f"could not read: {exc.strerror or exc}")
    try:
        st = os.fstat(fd)
        kind = _kind(st.st_mode)
        if kind:  # replaced between stat and open
            return Fetched(None, NOT_A_FILE, f"{kind}, not a regular file: not read")
        elsewhere = _elsewhere(fd, path, within)
        if elsewhere is not None:
            return elsewhere
        data = _read_at_most(fd, limit + 1, st.st_size + 1)
    except OSError as exc:
        return Fetched(None, UNREADABLE, f"could not read: {exc.strerror or exc}")
    finally:
        os.close(fd)
    if len(data) > limit:
        return _too_large(len(data), limit, "it grew while read; read no further")
    return Fetched(data)


def _read_at_most(fd: int, most: int, first: int) -> bytes:
    parts, total, want = [], 0, max(first, 1)
    while total < most:
        part = os.read(fd, min(want, most - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
        want = _BLOCK
    return b"".join(parts)


def read_uri(uri: str, limit: int) -> Fetched:
    """The same through pyarrow's filesystems (s3://, gs://, file://, ...)."""
    from pyarrow import fs

    try:
        filesystem, path = fs.FileSystem.from_uri(uri)
        info = filesystem.get_file_info(path)
        if info.type == fs.FileType.NotFound:
            return Fetched(None, UNREADABLE, "could not read: no such file")
        if info.type != fs.FileType.File:
            return Fetched(None, NOT_A_FILE, "not a regular file: not read")
        if info.size is not None and info.size > limit:
            return _too_large(info.size, limit, "not read")
        with filesystem.open_input_stream(path) as stream:
            data = stream.read(limit + 1)
    except (OSError, ValueError) as exc:
        return Fetched(None, UNREADABLE, f"could not read: {getattr(exc, 'strerror', None) or exc}")
    if len(data) > limit:
        return _too_large(len(data), limit, "it grew while read; read no further")
    return Fetched(data)


def open_table(uri: str):
    """A table file opened for random access (a local path or a URI), or InputError."""
    try:
        if "://" in uri:
            from pyarrow import fs

            filesystem, path = fs.FileSystem.from_uri(uri)
            return filesystem.open_input_file(path)
        st = os.stat(uri)
        kind = _kind(st.st_mode)
        if kind:
            raise InputError(f"{uri}: {kind}, not a table file")
        return open(uri, "rb")
    except (OSError, ValueError) as exc:
        raise InputError(f"{uri}: could not read: {getattr(exc, 'strerror', None) or exc}") from exc


def fetch(uri: str, limit: int, within: str | None = None) -> Fetched:
    """The bytes at a local path or a URI, or why they were not read. Both engines read
    through here, so a file is rejected with the same words whichever runs. ``within``: the
    real folder a local file must be opened in."""
    return read_uri(uri, limit) if "://" in uri else read_local(uri, limit, within)
