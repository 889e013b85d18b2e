"""File stamps: how each input file looked when a run read it, so that the next run can
tell an unchanged file from its metadata alone, without reading or hashing it.

A stamp is (size, mtime_ns, ctime_ns, inode), taken *before* the file is read: a file
written after its stamp was taken gets a new stamp, so it is read again next time. The
inode catches a file replaced by another one (a rename over it, a fresh checkout); the
ctime catches a write that kept the size and restored the mtime (``cp -p``, ``touch -r``),
since no tool can set it. The known risk of any stamp is a write within the timestamp's
granularity of the previous one (same size, same mtime). So a file whose mtime or ctime is
within ``RACY_NS`` of the moment it was stamped is not trusted (git's "racy clean" case):
it gets no stamp and is read and hashed again next time. A file is only ever trusted when
its last change was at least 2 s before the run looked at it, so a later write, which sets
both times to a later instant, changes the stamp on every filesystem whose timestamps are
2 s or finer (FAT's are 2 s; ext4, XFS, btrfs, APFS, NTFS far finer).

Each run writes the stamps of the local files it read or trusted into ``inputs.parquet``
in its folder (schemas.INPUTS): run state, listed in the manifest like every file of the
run, so an object-store run pulls and pushes it with the rest. Files reached by URI and
tables get no stamp (they are read and hashed every time); stamps taken on another machine
never match (another inode and ctime), which costs a read, never a wrong reuse.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

NAME = "inputs"
RACY_NS = 2_000_000_000  # the coarsest common timestamp granularity (FAT: 2 s)

Stamp = tuple[int, int, int, int]


def of(st: os.stat_result | None, now_ns: int | None = None) -> Stamp | None:
    """The stamp of a stat result, or None when there is none to trust."""
    if st is None:
        return None
    now_ns = time.time_ns() if now_ns is None else now_ns
    if max(st.st_mtime_ns, st.st_ctime_ns) > now_ns - RACY_NS:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def root_key(root: str) -> str:
    """What names a root in the stamps: its absolute path. A file is named by its root's
    name, a slash and its relative path (abspath per file is slow over many files)."""
    return os.path.abspath(root)


def load(folder: Path) -> dict[str, tuple[str, Stamp]]:
    """path -> (doc_id, stamp) of the files a run stamped (empty when it recorded none, or
    when its inputs.parquet cannot be read: then every file is read and hashed)."""
    import pyarrow.parquet as pq

    path = Path(folder) / f"{NAME}.parquet"
    if not path.exists():
        return {}
    t = pq.ParquetFile(path).read()
    cols = [t[name].to_pylist() for name in ("size", "mtime_ns", "ctime_ns", "inode")]
    return dict(zip(t["uri"].to_pylist(), zip(t["doc_id"].to_pylist(), zip(*cols))))


def write(folder: Path, rows: list[tuple[str, str, Stamp]]) -> None:
    """inputs.parquet of a run: one (path, doc_id, stamp) per file read or trusted."""
    from chunkmill.pipeline import arrow_columns, schemas
    from chunkmill.pipeline.runstore import parquet_files

    uris, doc_ids, found = zip(*rows) if rows else ((), (), ())
    size, mtime, ctime, inode = zip(*found) if rows else ((), (), (), ())
    lists = [list(c) for c in (uris, doc_ids, size, mtime, ctime, inode)]
    # arrow_columns.table, not pa.table: that one imports pandas (start-up time)
    table = arrow_columns.table(dict(zip(schemas.INPUTS.names, lists)), schemas.INPUTS)
    parquet_files.write_table(Path(folder) / f"{NAME}.parquet", table, schemas.INPUTS)
