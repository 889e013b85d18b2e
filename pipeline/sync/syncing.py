"""``chunkmill sync``: bring a store's table to exactly the published run of an output
folder, embedding each distinct text once per embedder, ever.

A sync reads the table's state (the run it holds, the embedder, the columns) and then:

- the state names the published run, the embedder and the columns asked for: nothing to do;
- the state names another embedder: refused (``Refused``, exit 4), the store is left alone;
- the state names an earlier run: the change set from that run (the ledger's; it spans
  missed nights and pruned runs) is applied: adds and updates upserted, removes deleted;
- no table: every published chunk is written;
- anything else (a table without state, a run the ledger does not know, other columns,
  ``repair``): the table is compared with the published run row by row (``diff``, what
  ``--verify`` reports) and every missing, stale or extra row is put right.

Before a store is touched, the texts whose vectors the cache lacks are counted with the
embedder's own tokenizer (a text over the model's limit refuses the sync before any call),
then embedded in batches, each batch written to the cache as it arrives.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from chunkmill.pipeline.runstore.consumer import Changes
from chunkmill.pipeline.sync import columns as store_columns
from chunkmill.pipeline.sync.cache import Cache
from chunkmill.pipeline.sync.embedders import Embedder
from chunkmill.pipeline.sync.rows_diff import Diff, diff
from chunkmill.pipeline.sync.stores import State, Store, open_store


class Refused(Exception):
    """A sync that would do damage, refused before the store is touched (exit 4)."""

    code = 4


@dataclass
class Summary:
    store: str
    table: str
    run: str
    since: str | None = None
    added: int = 0
    updated: int = 0
    removed: int = 0
    embedded: int = 0
    reused: int = 0  # rows written whose vector came from the cache
    seconds: float = 0.0
    up_to_date: bool = False
    fresh: set = field(default_factory=set, repr=False)  # hashes embedded by this sync

    def line(self) -> str:
        if self.up_to_date:
            return f"{self.store} table {self.table}: up to date (run {self.run}), nothing to do"
        return (
            f"{self.store} table {self.table} -> run {self.run}: added {self.added}, updated "
            f"{self.updated}, removed {self.removed}; embedded {self.embedded}, reused from "
            f"cache {self.reused}; {self.seconds:.2f} s"
        )

    def as_dict(self) -> dict:
        found = asdict(self)
        del found["fresh"]
        return found


def default_cache(out: str | Path) -> Path:
    if "://" in str(out):
        raise ValueError(
            f"{out}: an object-store output folder needs --cache DIR (a local "
            "folder for the embedding cache)"
        )
    return Path(out) / "embeddings"


def sync(
    out: str | Path,
    to: str | Store,
    embedder: Embedder,
    *,
    table: str = "chunks",
    columns: tuple[str, ...] = store_columns.DEFAULT,
    cache: Path | None = None,
    repair: bool = False,
    reembed: bool = False,
    fts: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> Summary:
    """Bring ``table`` of store ``to`` (a URL, or a ``Store`` of your own) to the published
    run of ``out`` (module docstring). ``reembed``: the table holds another embedder's
    vectors (or should be rebuilt): every row is embedded by ``embedder`` (what its cache
    lacks) before the store is touched, then the table is replaced in one write, so it is
    searchable as it was until the new one is complete. ``fts``: the store's own full-text
    index on ``text`` too (made once, kept current)."""
    started = time.perf_counter()
    store = open_store(to, table) if isinstance(to, str) else to
    with store.locked():
        if reembed:
            summary = _rebuild(out, store, embedder, columns, cache, progress or _quiet)
        else:
            summary = _sync(out, store, embedder, columns, cache, repair, progress or _quiet)
        if fts and hasattr(store, "index_text"):
            store.index_text()
    summary.seconds = time.perf_counter() - started
    if not summary.up_to_date and "://" not in str(out):
        _prune(Path(out), Cache(cache or default_cache(out), embedder.id))
    return summary


# The cache is folded into one file once it has this many files (a sync adds one per
# batch embedded); a vector no run on disk uses is dropped then if it is older than
# CACHE_RETENTION_S: a corpus restored from a backup of the last month is not paid for
# again.
PRUNE_FILES = 64
CACHE_RETENTION_S = 30 * 24 * 3600


def _prune(out: Path, cache: Cache) -> None:
    """Fold the cache when it has many files, keeping the vectors of every text a run
    still on disk holds (the published run and those --keep keeps) and the recent ones."""
    import pyarrow.parquet as pq

    from chunkmill.pipeline import runstore

    if len(cache.files()) < PRUNE_FILES:
        return
    keep: set[str] = set()
    for run_id in runstore.run_folders(out):
        chunks = runstore.run_dir(out, run_id) / "chunks.parquet"
        if chunks.exists():
            keep.update(pq.read_table(chunks, columns=["embed_hash"])["embed_hash"].to_pylist())
    cache.prune(keep, CACHE_RETENTION_S)


def _rebuild(out, store: Store, embedder: Embedder, chosen, cache_root, progress) -> Summary:
    whole = published(out)
    state = store.state()
    held = store.ids()["chunk_id"] if store.exists() else pa.array([], pa.string())
    kept = pc.is_in(whole.adds["chunk_id"], value_set=held)
    summary = Summary(store.shown, store.table, whole.until, since=state.run if state else None)
    summary.updated = pc.sum(kept).as_py() or 0
    summary.added = whole.adds.num_rows - summary.updated
    summary.removed = len(held) - summary.updated
    cache = Cache(cache_root or default_cache(out), embedder.id)
    _write(store, embedder, chosen, cache, whole.adds, [], whole.until, summary, progress,
           whole=True)  # fmt: skip
    return summary


def _quiet(stage: str, done: int, total: int) -> None:
    pass


def _published_id(out) -> str | None:
    from chunkmill.pipeline import runstore
    from chunkmill.pipeline.runstore import objectstore

    if objectstore.is_uri(out):
        return None  # learnt from the fetched run
    return runstore.pointed(Path(out)).run_id


def _sync(out, store: Store, embedder: Embedder, chosen, cache_root, repair, progress):
    until = _published_id(out)
    quick = None if repair else store.quick_state()
    if quick == State(until, embedder.id, chosen):
        return Summary(store.shown, store.table, until, since=until, up_to_date=True)
    if hasattr(store, "warm"):
        store.warm()
    state = quick or store.state()  # the note of the last sync, while the table is as it left
    if state is not None and state.embedder != embedder.id:
        raise Refused(
            f"{store.shown} table {store.table} holds vectors of {state.embedder}; "
            f"--embedder gives {embedder.id}: sync into another --table, or rebuild this "
            "one with --reembed"
        )
    if (
        not repair
        and state is not None
        and state.run == until
        and state.columns == chosen
        and store.exists()
    ):
        store.settle(state)
        return Summary(store.shown, store.table, until, since=state.run, up_to_date=True)
    cache = Cache(cache_root or default_cache(out), embedder.id)
    changes = None
    if not repair and state is not None and state.columns == chosen and store.exists():
        changes = _changes(out, state.run)
    if changes is None:
        return _reconcile(out, store, embedder, chosen, cache, progress, state)
    upserts = pa.concat_tables([changes.adds, changes.updates])
    summary = Summary(store.shown, store.table, changes.until, since=state.run)
    summary.added, summary.updated = changes.adds.num_rows, changes.updates.num_rows
    summary.removed = len(changes.removes)
    _write(
        store, embedder, chosen, cache, upserts, changes.removes, changes.until, summary, progress
    )
    return summary


def _changes(out, since: str) -> Changes | None:
    """The change set since ``since``, or None when the ledger does not know that run."""
    from chunkmill.pipeline.runstore import ledger

    try:
        return Changes.of(ledger.changes_since(out, since, updates=True))
    except ledger.UnknownRunError:
        return None


def published(out) -> Changes:
    """Every published chunk as an add, with the run they make."""
    from chunkmill.pipeline.runstore import ledger

    return Changes.of(ledger.changes_since(out, None))


def _reconcile(out, store, embedder, chosen, cache, progress, state) -> Summary:
    whole = published(out)
    chunks = whole.adds
    summary = Summary(store.shown, store.table, whole.until, since=state.run if state else None)
    if not store.exists() or state is None and not store.ids().num_rows:
        summary.added = chunks.num_rows
        _write(
            store, embedder, chosen, cache, chunks, [], whole.until, summary, progress, whole=True
        )
        return summary
    if state is not None and state.columns != chosen:  # every row in the new columns
        extra = _extra(store, chunks)
        summary.updated = chunks.num_rows
        summary.removed = len(extra)
        _write(
            store, embedder, chosen, cache, chunks, [], whole.until, summary, progress, whole=True
        )
        return summary
    _embed_missing(embedder, cache, chunks, summary, progress)
    found = diff(chunks, store, embedder, chosen, cache)
    wanted = pa.array(found.missing + found.stale, pa.string())
    upserts = chunks.filter(pc.is_in(chunks["chunk_id"], value_set=wanted))
    summary.added, summary.updated = len(found.missing), len(found.stale)
    summary.removed = len(found.extra)
    # an upsert replaces each copy of an id in place, and cannot fill a column the table lost:
    # write the table anew
    if found.duplicated or found.layout:
        _write(
            store, embedder, chosen, cache, chunks, [], whole.until, summary, progress, whole=True
        )
        return summary
    _write(store, embedder, chosen, cache, upserts, found.extra, whole.until, summary, progress)
    return summary


def _extra(store: Store, chunks: pa.Table) -> list[str]:
    held = store.ids()["chunk_id"]
    return pc.filter(held, pc.invert(pc.is_in(held, value_set=chunks["chunk_id"]))).to_pylist()


def _write(store, embedder, chosen, cache, upserts, deletes, until, summary, progress, whole=False):
    """Embed what the cache lacks, then apply upserts and deletes with the new state."""
    _embed_missing(embedder, cache, upserts, summary, progress)
    fresh = pc.is_in(upserts["embed_hash"], value_set=pa.array(list(summary.fresh), pa.string()))
    summary.reused = upserts.num_rows - (pc.sum(fresh).as_py() or 0)
    vectors = cache.vectors(upserts["embed_hash"])
    rows = store_columns.rows(upserts, chosen, embedder.id, vectors, embedder.dimensions)
    progress("write", 0, rows.num_rows + len(deletes))
    store.apply(rows, deletes, State(until, embedder.id, chosen), whole=whole)
    progress("write", rows.num_rows + len(deletes), rows.num_rows + len(deletes))


def _embed_missing(embedder: Embedder, cache: Cache, chunks: pa.Table, summary, progress):
    """Embed the distinct texts of ``chunks`` the cache lacks, batch by batch into the cache,
    after counting them against the model's limit (Refused before any call)."""
    held = cache.hashes()
    todo: dict[str, str] = {}
    for h, text in zip(chunks["embed_hash"].to_pylist(), chunks["embed_text"].to_pylist()):
        if h not in held and h not in todo:
            todo[h] = text
    if not todo:
        return
    _check_limit(embedder, todo, chunks)
    hashes = sorted(todo, key=lambda h: len(todo[h]))  # like lengths batch with little padding
    progress("embed", 0, len(hashes))
    for start in range(0, len(hashes), embedder.batch_size):
        batch = hashes[start : start + embedder.batch_size]
        vectors = embedder.embed([todo[h] for h in batch])
        cache.add(batch, vectors)
        checkpoint("embedded")
        summary.embedded += len(batch)
        summary.fresh.update(batch)
        progress("embed", summary.embedded, len(hashes))


def checkpoint(step: str) -> None:
    """Called after each batch is in the cache; does nothing (tests kill there)."""


def _check_limit(embedder: Embedder, todo: dict[str, str], chunks: pa.Table) -> None:
    if embedder.max_tokens is None:
        return
    hashes = list(todo)
    counts = embedder.count([todo[h] for h in hashes])
    if counts is None:
        return
    over = [(n, h) for n, h in zip(counts, hashes) if n > embedder.max_tokens]
    if not over:
        return
    n, h = max(over)
    at = chunks.filter(pc.equal(chunks["embed_hash"], h)).slice(0, 1).to_pylist()[0]
    local = embedder.spec == "minilm" or embedder.spec.startswith("onnx:")
    counter = f"embedder:{embedder.spec}" if local else embedder.tokenizer
    fix = f"--tokenizer {counter} " if counter else ""
    fix += f"--max-tokens {embedder.max_tokens}"
    raise Refused(
        f"{len(over)} chunks are longer than {embedder.name} reads ({embedder.max_tokens} "
        f"tokens; the longest, {at['chunk_id']} of {at['path']}, has {n}); nothing was "
        f"embedded: pack for this model with `chunkmill run ... {fix} --new-policy`"
    )


def nearest(
    to: str, embedder: Embedder, query: str, *, table="chunks", limit=10, query_prefix: str = ""
) -> list[dict]:
    """The rows of the table whose vectors are nearest the query's (cosine), each with
    ``score`` = 1 - cosine distance. The query is embedded with ``query_prefix`` before it
    (e5 models: ``query: ``), not the embedder's own prefix for texts. Refused when the table
    holds another embedder's vectors."""
    store = open_store(to, table)
    state = store.state()
    if state is not None and state.embedder != embedder.id:
        raise Refused(
            f"{store.shown} table {table} holds vectors of {state.embedder}; "
            f"--embedder gives {embedder.id}"
        )
    vector = embedder.embed([query], prefix=query_prefix)[0].as_py()
    rows = store.nearest(vector, limit)
    for row in rows:
        row["score"] = 1.0 - float(row.pop("distance"))
    return rows


# --- verify -------------------------------------------------------------------------------


def verify(
    out,
    to: str | Store,
    embedder: Embedder,
    *,
    table="chunks",
    columns=store_columns.DEFAULT,
    cache: Path | None = None,
) -> Diff:
    """How the table differs from the published run (nothing is written, nothing embedded)."""
    store = open_store(to, table) if isinstance(to, str) else to
    whole = published(out)
    if not store.exists():
        return Diff(missing=whole.adds["chunk_id"].to_pylist(), state="the table is missing")
    cache = Cache(cache or default_cache(out), embedder.id)
    found = diff(whole.adds, store, embedder, columns, cache)
    state = store.state()
    if state is None:
        found.state = "the table's sync state is missing"
    elif state.embedder != embedder.id:
        found.state = f"the table holds vectors of {state.embedder}"
    elif state.run != whole.until:
        found.state = f"the state names run {state.run}, the published run is {whole.until}"
    elif state.columns != columns:
        found.state = f"the table holds columns {', '.join(state.columns)}"
    return found


# the names the package exports (chunkmill.SyncSummary, ...)
SyncSummary, StoreDiff, SyncRefused = Summary, Diff, Refused
