"""The embedding cache: every vector an embedder returned, keyed by (embedder id,
``embed_hash``), so each distinct text is embedded once per embedder, ever: across nights,
policy changes that keep a text, several stores, and a store rebuilt from scratch.

    CACHE/KEY/embedder.json         {"id": EMBEDDER_ID}; KEY = sha256(id), 16 hex
    CACHE/KEY/vectors-STAMP.parquet embed_hash, vector (fixed-size list of float32),
                                    added (when it was embedded, Unix seconds)

It is append-only: each batch of vectors is one new file, written whole or not at all
(temporary name, fsync, rename) as soon as the embedder returns it and before any store is
touched, so a sync killed at any moment loses no vector it was given. ``prune`` folds the
files into one, dropping the vectors no run on disk uses that are older than a retention
(a corpus restored from last week's backup is not embedded again).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from chunkmill.pipeline.runstore.parquet_files import fsync_dir, write_atomic

PREFIX = "vectors-"


class CacheError(Exception):
    """A cache folder that belongs to another embedder or cannot be read."""


class Cache:
    def __init__(self, root: Path, embedder_id: str):
        self.id = embedder_id
        self.folder = Path(root) / hashlib.sha256(embedder_id.encode()).hexdigest()[:16]
        self._hashes: set[str] | None = None

    def _check(self) -> None:
        marker = self.folder / "embedder.json"
        if not marker.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(marker, json.dumps({"id": self.id}).encode())
            return
        try:
            found = json.loads(marker.read_text())["id"]
        except (OSError, ValueError, KeyError) as exc:
            raise CacheError(f"{marker}: cannot be read ({exc})") from exc
        if found != self.id:
            raise CacheError(f"{marker}: holds vectors of {found}, not of {self.id}")

    def files(self) -> list[Path]:
        return sorted(self.folder.glob(PREFIX + "*.parquet"))

    def hashes(self) -> set[str]:
        """Every embed_hash the cache holds a vector for."""
        if self._hashes is None:
            self._check()
            self._hashes = set()
            for f in self.files():
                column = pq.read_table(f, columns=["embed_hash"])["embed_hash"]
                self._hashes.update(column.to_pylist())
        return self._hashes

    def add(self, hashes: list[str], vectors: pa.Array, added: pa.Array | None = None) -> None:
        """One batch of vectors, durable before this returns."""
        if added is None:
            added = pa.array([int(time.time())] * len(hashes), pa.int64())
        table = pa.table(
            {"embed_hash": pa.array(hashes, pa.string()), "vector": vectors, "added": added}
        )
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"-{time.time_ns() % 10**9:09d}"
        path = self.folder / f"{PREFIX}{stamp}-{os.getpid()}.parquet"
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        write_atomic(path, sink.getvalue().to_pybytes())
        self.hashes().update(hashes)

    def vectors(self, wanted: pa.Array) -> pa.Table:
        """embed_hash, vector of every hash in ``wanted`` the cache holds (each once)."""
        value_set = pc.unique(wanted)
        parts = []
        for f in self.files():
            table = pq.read_table(f)
            parts.append(table.filter(pc.is_in(table["embed_hash"], value_set=value_set)))
        parts = [p for p in parts if p.num_rows] or parts[:1]
        if not parts:
            return pa.table({"embed_hash": pa.array([], pa.string())})
        found = pa.concat_tables(parts)
        # a hash embedded twice (two syncs at once into two stores) is the same text
        first = pc.index_in(pc.unique(found["embed_hash"]), found["embed_hash"])
        return found.take(first)

    def prune(self, keep: set[str], retention_s: float) -> int:
        """Fold the files into one, without the vectors whose hash is not in ``keep`` and
        that were added more than ``retention_s`` seconds ago; the number dropped. The new
        file is in place before the old ones go."""
        files = self.files()
        if len(files) < 2:
            return 0
        found = self.vectors(pa.array(sorted(self.hashes()), pa.string()))
        used = pc.is_in(found["embed_hash"], value_set=pa.array(sorted(keep), pa.string()))
        recent = pc.greater_equal(found["added"], int(time.time() - retention_s))
        kept = found.filter(pc.or_(used, recent))
        if kept.num_rows:
            self.add(kept["embed_hash"].to_pylist(), kept["vector"].combine_chunks(),
                     kept["added"].combine_chunks())  # fmt: skip
        for f in files:
            f.unlink()
        fsync_dir(self.folder)
        self._hashes = set(kept["embed_hash"].to_pylist())
        return found.num_rows - kept.num_rows
