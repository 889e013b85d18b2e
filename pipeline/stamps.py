"""File stamps: how each input file looked when a run read it, so that the next run can
tell an unchanged file from its metadata alone, without reading or hashing it.

A stamp is (size, mtime_ns, ctime_ns, inode), taken *before* the file is read: a file
written after its stamp was taken gets a new stamp, so it is read again next time. The
inode catches a file replaced by another one (a rename over it, a fresh checkout); the
ctime catches a write that kept the size and restored the mtime (``cp -p``, ``touch -r``),
since no tool can set it. A file whose mtime or ctime is within ``RACY_NS`` of the moment
it was stamped is not trusted (it may change again within the timestamp's granularity
without changing its stamp, git's "racy clean" case): it gets no stamp and is hashed again.

Each run writes the stamps of the files it read into ``inputs.parquet`` in its folder
(schemas.INPUTS); a run on another engine, or of a table, writes none for those inputs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

NAME = "inputs"
RACY_NS = 2_000_000_000  # coarser than any common filesystem's timestamp granularity

Stamp = tuple[int, int, int, int]


def of(st: os.stat_result | None, now_ns: int | None = None) -> Stamp | None:
    """The stamp of a stat result, or None when there is none to trust."""
    if st is None:
        return None
    now_ns = time.time_ns() if now_ns is None else now_ns
    if max(st.st_mtime_ns, st.st_ctime_ns) > now_ns - RACY_NS:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def key(src) -> str:
    """What names a file in the stamps: its absolute path (a URI as given)."""
    return src.uri if src.scheme else os.path.abspath(src.uri)


def load(folder: Path) -> dict[str, Stamp]:
    """uri -> stamp of the files a run read (empty when it recorded none)."""
    import pyarrow.parquet as pq

    path = Path(folder) / f"{NAME}.parquet"
    if not path.exists():
        return {}
    t = pq.ParquetFile(path).read(columns=["uri", "size", "mtime_ns", "ctime_ns", "inode"])
    cols = [t[name].to_pylist() for name in ("size", "mtime_ns", "ctime_ns", "inode")]
    return dict(zip(t["uri"].to_pylist(), zip(*cols)))


def write(folder: Path, rows: list[tuple[str, str, Stamp]]) -> None:
    """inputs.parquet of a run: one (uri, doc_id, stamp) per file read or trusted."""
    import pyarrow as pa

    from mdchunk.pipeline import schemas, store

    uris, doc_ids, stamps = zip(*rows) if rows else ((), (), ())
    size, mtime, ctime, inode = zip(*stamps) if rows else ((), (), (), ())
    columns = [list(c) for c in (uris, doc_ids, size, mtime, ctime, inode)]
    table = pa.table(dict(zip(schemas.INPUTS.names, columns)), schema=schemas.INPUTS)
    store.write_table(Path(folder) / f"{NAME}.parquet", table, schemas.INPUTS)
