"""The ledger of an output folder: which chunk ids were published when, kept compactly so
that changes between any two published runs can be computed after their folders are gone.

    DIR/ledger.parquet   one row per stretch of publications a chunk id was part of:
                         chunk_id, doc_id, path, added (publication number), removed
                         (the first publication without it; null while it is published),
                         updated (the publications whose change set updated its row)

The file's footer lists the publications: number, run id, time, kind (run, rollback, or
start: the run found published when the ledger began). Publication numbers only grow, also
when a rollback publishes an older run again. Each publication holds exactly the chunk ids
of its run, so a publication recorded for a run that was then killed before CURRENT named
it changes no answer. A chunk's text is not kept: the adds and updates of a change set
come from the published run, which holds every chunk it adds. A ledger written before
``updated`` existed reads as one without updates (none were recorded then).

    DIR/ledger.sha256    {"bytes", "sha256"} of ledger.parquet, and ``previous``: those
                         of the ledger it replaced (null: there was none)

The checksum file is replaced first, then the ledger, each atomically; a ledger matching
either entry is sound, so a write stopped between the two leaves the old ledger, which is
right (it is written before CURRENT names the new run). Every read checks the ledger
against it (``LedgerDamaged``); a ledger without one is damaged too (it cannot be checked,
and a flipped byte in its footer would go unseen). A damaged ledger can only be replaced:
``record(fresh=True)`` (`chunkmill run --full`) starts a new one from the published run.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from chunkmill.pipeline import arrow_columns, schemas
from chunkmill.pipeline.runstore import consumer, parquet_files
from chunkmill.pipeline.runstore.parquet_files import conform, upgrade, write_atomic

if TYPE_CHECKING:  # polars is imported where it is used: an unchanged run never loads it
    import polars as pl

LEDGER = "ledger.parquet"
CHECKSUM = "ledger.sha256"
_KEY = b"mdchunk.publications"
RECOVERY = (
    "`chunkmill run INPUT --out DIR --full` starts a new ledger from the published run "
    "(consumers of older runs then start again with `chunkmill changes --all`)"
)


class LedgerError(Exception):
    """The ledger cannot answer (a run it never saw, nothing published)."""


class UnknownRunError(LedgerError):
    """A run id the ledger never saw published."""


class LedgerDamaged(LedgerError):
    """The ledger does not match its checksum, or cannot be read (one line, with the way
    to recover)."""


def _entry(data: bytes) -> dict:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _damage(path: Path, data: bytes | None) -> str | None:
    """Why the ledger ``path`` whose bytes are ``data`` (None: there is none) does not
    match its checksum file, or None when it does (or has none to match)."""
    stamp = path.with_name(CHECKSUM)
    try:
        found = json.loads(stamp.read_bytes())
        previous = found["previous"]
        sound = [{"bytes": found["bytes"], "sha256": found["sha256"]}]
        sound.append(previous and {"bytes": previous["bytes"], "sha256": previous["sha256"]})
    except FileNotFoundError:  # every ledger is written with one: a lost one is damage
        return None if data is None else f"{stamp} is missing: {path} cannot be verified"
    except (OSError, ValueError, KeyError, TypeError):
        return f"{stamp} is damaged (not the checksum of {LEDGER})"
    if (None if data is None else _entry(data)) in sound:
        return None
    if data is None:
        return f"{path} is missing ({stamp} records one)"
    return f"{path} is damaged (its size or sha256 differs from {stamp})"


def problem(root: Path) -> str | None:
    """Why DIR's ledger cannot be trusted (one line naming the file), or None."""
    path = Path(root) / LEDGER
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = None
    return _damage(path, data)


def read(path: Path) -> tuple[pl.DataFrame, list[dict]]:
    """(intervals, publications) of a ledger file; empty when there is none yet."""
    import polars as pl

    table, pubs, _ = _load(Path(path))
    return pl.from_arrow(table), pubs


def _load(path: Path) -> tuple[pa.Table, list[dict], dict | None]:
    """(intervals, publications, checksum entry of the bytes read: None when there is no
    ledger), the bytes checked against the checksum file. LedgerDamaged if they do not
    match or cannot be read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = None
    damage = _damage(path, data)
    if damage is not None:
        raise LedgerDamaged(f"{damage}; {RECOVERY}")
    if data is None:
        return schemas.empty(schemas.LEDGER), [], None
    try:
        # ParquetFile, not read_table: that one loads pyarrow.dataset and pandas
        found = pq.ParquetFile(pa.BufferReader(data))
        meta = found.schema_arrow.metadata or {}
        table = upgrade(found.read(), schemas.LEDGER)
        pubs = json.loads(meta.get(_KEY, b"[]"))
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise LedgerDamaged(f"{path} cannot be read ({exc}); {RECOVERY}") from None
    return table, pubs, _entry(data)


def record(
    root: Path,
    run_id: str,
    chunks: Path,
    kind: str = "run",
    same_ids: bool = False,
    updated: list[str] | None = None,
    fresh: bool = False,
) -> int:
    """Add a publication of ``run_id`` (whose chunks.parquet is ``chunks``; ``updated``: the
    kept ids whose rows it changed) to DIR's ledger and return its number. Written
    atomically, before CURRENT names the run. ``same_ids``: the run holds exactly the
    published run's chunk ids and rows (nothing added, removed or updated), so when the
    ledger's last publication is the published run only a publication is added.
    ``fresh``: the ledger is damaged; a new one starts from the published run.
    LedgerDamaged when the ledger is damaged and not ``fresh``."""
    from chunkmill.pipeline import runstore

    root = Path(root)
    if fresh:
        intervals, pubs, was = schemas.empty(schemas.LEDGER), [], None
    else:
        intervals, pubs, was = _load(root / LEDGER)
    if same_ids and pubs and pubs[-1]["run"] == runstore.pointed(root).run_id:
        pubs = pubs + [_publication(pubs, run_id, kind)]
        _write(root / LEDGER, intervals, pubs, was)
        return pubs[-1]["n"]
    if not pubs:  # a folder published before the ledger existed: start from what is there
        pub = runstore.pointed(root)
        if pub.folder is not None and pub.run_id != run_id:
            start = pub.folder / "chunks.parquet"
            try:  # a published run whose chunks cannot be read: the ledger starts here
                intervals, pubs = _add(intervals, pubs, pub.run_id, start, "start")
            except (OSError, pa.ArrowException):
                pass
    intervals, pubs = _add(intervals, pubs, run_id, chunks, kind)
    intervals = _mark_updates(intervals, updated or [], pubs[-1]["n"])
    _write(root / LEDGER, intervals, pubs, was)
    return pubs[-1]["n"]


def held(root: Path, run_id: str) -> pa.Table | None:
    """chunk_id, doc_id, path of the chunks DIR's ledger records for the last publication
    of ``run_id`` (what a change set from that run removes when its files are gone); None
    when the ledger does not know the run or cannot be trusted."""
    import pyarrow.compute as pc

    try:
        intervals, pubs, _ = _load(Path(root) / LEDGER)
    except LedgerError:
        return None
    n = last_publication(pubs, run_id)
    if n is None:
        return None
    removed = intervals["removed"]
    later = pc.or_kleene(pc.is_null(removed), pc.greater(removed, n))
    rows = intervals.filter(pc.and_kleene(pc.less_equal(intervals["added"], n), later))
    return rows.select(["chunk_id", "doc_id", "path"])


def _publication(pubs: list[dict], run_id: str, kind: str) -> dict:
    n = (pubs[-1]["n"] if pubs else 0) + 1
    return {"n": n, "run": run_id, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "kind": kind}  # fmt: skip


def _add(intervals: pa.Table, pubs: list[dict], run_id: str, chunks: Path, kind: str):
    """The intervals after publication of ``run_id`` (its chunk ids in ``chunks``): the
    open intervals of ids it lacks close at its number, its ids without an open interval
    open one. In pyarrow, not polars: every run records a publication, and polars' import
    alone is a quarter to half a second of the run's serial end."""
    import pyarrow.compute as pc

    pub = _publication(pubs, run_id, kind)
    n = pub["n"]
    ids = parquet_files.read(chunks.parent, "chunks", ["chunk_id", "doc_id", "path"])
    open_ = pc.is_null(intervals["removed"])
    alive_ids = intervals.filter(open_)["chunk_id"]
    held = pc.is_in(intervals["chunk_id"], value_set=arrow_columns.flat(ids["chunk_id"]))
    number = arrow_columns.column([n] * intervals.num_rows, pa.int64())
    removed = pc.if_else(pc.and_(open_, pc.invert(held)), number, intervals["removed"])
    intervals = intervals.drop_columns(["removed"]).append_column("removed", removed)
    new = ids.filter(pc.invert(pc.is_in(ids["chunk_id"], value_set=arrow_columns.flat(alive_ids))))
    new = new.append_column("added", arrow_columns.column([n] * new.num_rows, pa.int64()))
    new = new.append_column("removed", pa.nulls(new.num_rows, pa.int64()))
    new = new.append_column("updated", pa.nulls(new.num_rows, pa.list_(pa.int64())))
    parts = [conform(t.select(schemas.LEDGER.names), schemas.LEDGER) for t in (intervals, new)]
    return pa.concat_tables(parts), pubs + [pub]


def _mark_updates(intervals: pa.Table, ids: list[str], n: int) -> pa.Table:
    """Publication ``n`` recorded in ``updated`` of the open stretches of ``ids``."""
    if not ids:
        return intervals
    import pyarrow.compute as pc

    held = pc.and_(
        pc.is_null(intervals["removed"]),
        pc.is_in(intervals["chunk_id"], value_set=arrow_columns.column(ids, pa.string())),
    )
    hit = set(pc.indices_nonzero(held).to_pylist())
    marks = intervals["updated"].to_pylist()
    marks = [(m or []) + [n] if i in hit else m for i, m in enumerate(marks)]
    i = intervals.schema.get_field_index("updated")
    return intervals.set_column(i, "updated", arrow_columns.column(marks, pa.list_(pa.int64())))


def _write(path: Path, table: pa.Table, pubs: list[dict], was: dict | None) -> None:
    """Replace the ledger ``path`` (whose bytes had the checksum entry ``was``): first its
    checksum file, naming both, then the ledger."""
    table = conform(table, schemas.LEDGER)
    table = table.replace_schema_metadata({_KEY: json.dumps(pubs).encode()})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    data = sink.getvalue().to_pybytes()
    stamp = {**_entry(data), "previous": was}
    write_atomic(path.with_name(CHECKSUM), json.dumps(stamp).encode())
    write_atomic(path, data)


def _held(n: int) -> pl.Expr:
    """The stretches that publication ``n`` held."""
    import polars as pl

    return (pl.col("added") <= n) & (pl.col("removed").is_null() | (pl.col("removed") > n))


def alive(intervals: pl.DataFrame, n: int) -> pl.DataFrame:
    """The chunk ids (with doc_id, path) that publication ``n`` held."""
    return intervals.filter(_held(n)).select("chunk_id", "doc_id", "path")


def updated(intervals: pl.DataFrame, then: int, now: int) -> pl.Series:
    """The chunk ids held at publications ``then`` and ``now`` whose row may differ between
    them: updated by a publication in (then, now], or removed and added again meanwhile
    (another stretch, whose row was never compared with the first's)."""
    import polars as pl

    before = intervals.filter(_held(then)).select("chunk_id", "added")
    after = intervals.filter(_held(now)).select("chunk_id", "added", "updated")
    marked = pl.col("updated").list.eval((pl.element() > then) & (pl.element() <= now)).list.any()
    both = after.join(before, on="chunk_id", suffix="_then")
    return both.filter((pl.col("added") != pl.col("added_then")) | marked.fill_null(False))[
        "chunk_id"
    ]


def last_publication(pubs: list[dict], run_id: str) -> int | None:
    found = [p["n"] for p in pubs if p["run"] == run_id]
    return found[-1] if found else None


def changes(
    ledger: Path, current: str, chunks: Path, since: str, where: str, updates: bool = False
) -> pa.Table:
    """The change set from run ``since`` (as a consumer saw it published) to the published
    run ``current`` (whose chunks.parquet is ``chunks``): every chunk to add (its whole
    row), with ``updates`` every kept chunk whose row changed (op update, its whole new
    row), and every chunk id to remove, in the layout of changes.parquet (schemas.CHANGES):
    adds and updates in chunk order, removes by chunk id. The schema metadata names both runs
    (``consumer.SINCE``, ``consumer.UNTIL``): store ``until`` once everything is applied.
    ``where`` names the output folder in errors."""
    import polars as pl
    import pyarrow.compute as pc

    intervals, pubs = read(ledger)
    now = last_publication(pubs, current)
    then = last_publication(pubs, since)
    if then is None or now is None:
        first = pubs[0]["run"] if pubs else "none yet"
        raise UnknownRunError(
            f"{where}: --since {since}: unknown run id, never published here as far as "
            f"the ledger knows (it starts at run {first})"
        )
    before, after = alive(intervals, then), alive(intervals, now)
    added = after.filter(~pl.col("chunk_id").is_in(before["chunk_id"].implode()))["chunk_id"]
    removed = before.filter(~pl.col("chunk_id").is_in(after["chunk_id"].implode()))
    changed = updated(intervals, then, now) if updates else pl.Series("chunk_id", [], pl.String)
    rows = pq.read_table(chunks, schema=schemas.CHUNKS)
    rows = rows.append_column("_add", pc.is_in(rows["chunk_id"], value_set=added.to_arrow()))
    is_updated = pc.is_in(rows["chunk_id"], value_set=changed.to_arrow())
    rows = rows.filter(pc.or_(rows["_add"], is_updated))
    ops = pc.if_else(rows["_add"], "add", "update")
    adds = rows.drop_columns(["_add"]).add_column(0, "op", ops)
    removes = removed.sort("chunk_id").with_columns(op=pl.lit("remove")).to_arrow()
    removes = upgrade(removes.select(["op", "chunk_id", "doc_id", "path"]), schemas.CHANGES)
    table = pa.concat_tables([adds.cast(schemas.CHANGES), removes])
    return consumer.named(table, since, current)


def snapshot(chunks: Path, current: str) -> pa.Table:
    """Every chunk of the published run ``current`` as an add, in the layout of ``changes``
    (``since`` empty): how a new consumer starts, with the run to store next to it
    in the same file (no race with a run published meanwhile)."""
    rows = pq.read_table(chunks, schema=schemas.CHUNKS)
    table = rows.add_column(0, "op", arrow_columns.column(["add"] * rows.num_rows, pa.string()))
    return consumer.named(table, "", current)


def published_run(out: str | Path) -> tuple[Path, Path]:
    """(the folder of the published run of ``out``, its ledger file); for an object-store
    prefix, local copies of both, fetched anew."""
    from chunkmill.pipeline import runstore
    from chunkmill.pipeline.runstore import objectstore

    if objectstore.is_uri(out):
        return objectstore.published_with_ledger(str(out))
    folder = runstore.published(Path(out))
    if folder is None:
        raise LedgerError(f"{out}: nothing is published")
    runstore.check_served(folder, ["chunks.parquet"])  # DamagedRunError: not served
    return folder, Path(out) / LEDGER


def changes_since(out: str | Path, since: str | None, updates: bool = False) -> pa.Table:
    """``changes`` for an output folder or object-store prefix (its ledger and published
    run fetched first); with ``since`` None, the ``snapshot`` of the published run."""
    return changes_of(out, published_run(out), since, updates)


def changes_of(
    out: str | Path, run: tuple[Path, Path], since: str | None, updates: bool = False
) -> pa.Table:
    """``changes_since`` with the published ``run`` of ``out`` given (``published_run``)."""
    folder, ledger = run
    chunks = folder / "chunks.parquet"
    if since is None:
        return snapshot(chunks, folder.name)
    return changes(ledger, folder.name, chunks, since, str(out), updates)
