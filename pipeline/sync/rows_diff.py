"""How a store's table differs from the published run, row by row: ``diff`` compares the
stored rows with the rows a sync would write (every stored column, and each vector with the
cache's), what ``chunkmill sync --verify`` reports and ``--repair`` puts right."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from chunkmill.pipeline.sync import columns as store_columns
from chunkmill.pipeline.sync.cache import Cache
from chunkmill.pipeline.sync.embedders import Embedder
from chunkmill.pipeline.sync.stores import Store


@dataclass
class Diff:
    """How a store's table differs from the published run: ids of the rows missing, stale
    (another text, vector, embedder or column value) and extra; ``unchecked``: rows whose
    vector could not be compared (the cache lacks it); ``state``: what is wrong with the
    table's recorded state, if anything."""

    missing: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    unchecked: int = 0
    state: str | None = None
    duplicated: int = 0  # ids stored more than once (also among ``stale``)
    layout: str | None = None  # the table's columns are not those a sync writes

    def __bool__(self) -> bool:
        return bool(self.missing or self.stale or self.extra or self.state or self.layout)

    def as_dict(self) -> dict:
        return {
            "missing": len(self.missing),
            "stale": len(self.stale),
            "extra": len(self.extra),
            "unchecked": self.unchecked,
            "duplicated": self.duplicated,
            "layout": self.layout,
            "state": self.state,
            "exact": not self,
        }


def diff(chunks: pa.Table, store: Store, embedder: Embedder, chosen, cache: Cache) -> Diff:
    stored = store.rows()
    vectors = cache.vectors(chunks["embed_hash"])
    known = pc.is_in(chunks["embed_hash"], value_set=vectors["embed_hash"])
    checkable = chunks.filter(known)
    expected = store_columns.rows(checkable, chosen, embedder.id, vectors, embedder.dimensions)
    want = _digests(expected, chosen)
    have = _digests(_conform(stored, expected.schema), chosen) if stored is not None else {}
    all_ids = set(chunks["chunk_id"].to_pylist())
    diff = Diff()
    if stored is not None and stored.schema.names != expected.schema.names:
        lost = sorted(set(expected.schema.names) - set(stored.schema.names))
        more = sorted(set(stored.schema.names) - set(expected.schema.names))
        diff.layout = (
            "; ".join(
                [f"columns missing: {', '.join(lost)}"] * bool(lost)
                + [f"columns not written by a sync: {', '.join(more)}"] * bool(more)
            )
            or "the columns are in another order"
        )
    if stored is not None and len(have) < stored.num_rows:
        counts = pc.value_counts(stored["chunk_id"])
        twice = counts.filter(pc.greater(counts.field("counts"), 1)).field("values")
        diff.duplicated = len(twice)
        have.update({i: b"" for i in twice.to_pylist()})  # stale: written anew
    diff.missing = sorted(all_ids - have.keys())
    diff.extra = sorted(have.keys() - all_ids)
    diff.stale = sorted(i for i, d in want.items() if i in have and have[i] != d)
    diff.unchecked = chunks.num_rows - checkable.num_rows
    return diff


def _conform(stored: pa.Table, schema: pa.Schema) -> pa.Table:
    """The stored columns in the types chunkmill writes them, where a store reads them back
    as others (a list for a fixed-size list); a value that cannot be cast is stale anyway."""
    for i, name in enumerate(stored.column_names):
        if name in schema.names and stored.schema.field(name).type != schema.field(name).type:
            try:
                column = stored[name].cast(schema.field(name).type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
            stored = stored.set_column(i, name, column)
    return stored


def _digests(rows: pa.Table, chosen) -> dict[str, bytes]:
    """chunk_id -> digest of the row's other columns (vector bytes included)."""
    import numpy as np

    names = ["embed_hash", "embedder", *chosen]
    missing = [n for n in names if n not in rows.column_names]
    ids = rows["chunk_id"].to_pylist()
    vectors = rows["vector"].combine_chunks()
    width = vectors.type.list_size
    flat = vectors.values.slice(vectors.offset * width, len(ids) * width)  # null rows too
    matrix = flat.to_numpy(zero_copy_only=False).astype(np.float32).reshape(len(ids), width)
    valid = vectors.is_valid().to_numpy(zero_copy_only=False)
    present = rows.select([n for n in names if n not in missing])
    maps = [f.name for f in present.schema if pa.types.is_map(f.type)]
    values = present.to_pylist()
    out = {}
    for i, (cid, row) in enumerate(zip(ids, values)):
        for name in maps:  # a map's entries in any order are the same map (jsonb sorts them)
            row[name] = sorted(row[name]) if row[name] is not None else None
        digest = hashlib.sha256(json.dumps([row, missing], default=str, sort_keys=True).encode())
        digest.update(matrix[i].tobytes() if valid[i] else b"null")
        out[cid] = digest.digest()
    return out
