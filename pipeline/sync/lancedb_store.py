"""LanceDB, the embedded store (``lancedb://PATH``).

The rows are one LanceDB table (``chunks`` unless ``--table``); the sync state of every
table is a row of the table ``_chunkmill_sync`` beside it. LanceDB commits one table at a
time, so a sync writes, in order: the state with ``pending`` (the run it is bringing the
table to) and ``base`` (the table's version before the write); the table, upserts and
deletes in one ``merge_insert`` commit; the state with ``run`` = that run. Reading the
state back after a kill: a pending run whose table has moved past ``base`` was written
(LanceDB commits are atomic), else the table still holds ``run``. After each sync the table
is compacted, so nightly syncs do not pile up small fragments.

One sync at a time per local PATH: ``flock`` on PATH/.chunkmill-sync.lock (released by the
kernel when its holder dies). An object-store PATH has no lock: run one sync at a time there.
"""

from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

import pyarrow as pa

from chunkmill.pipeline.runstore.parquet_files import write_atomic
from chunkmill.pipeline.sync.stores import State, StoreBusy, StoreError

META = "_chunkmill_sync"
META_SCHEMA = pa.schema(
    [
        ("table", pa.string()),
        ("state", pa.string()),  # JSON of the State the table holds, null: none
        ("pending", pa.string()),  # JSON of the State a write in progress brings it to
        ("base", pa.int64()),  # the table's version before that write (0: no table)
    ]
)


class LanceStore:
    def __init__(self, url: str, table: str):
        self.url, self.table = url, table
        self.shown = url
        self.path = url.removeprefix("lancedb://")
        if self.path.startswith("~"):
            self.path = os.path.expanduser(self.path)
        if not self.path:
            raise StoreError(f"{url}: give lancedb://PATH")
        self.local = "://" not in self.path
        self._db = None
        self._warming = None

    @property
    def db(self):
        """The LanceDB connection, made when first needed: importing lancedb takes longer
        than the whole of a sync with nothing to do (see ``quick_state``)."""
        if self._db is None:
            # Lance's own log says on stderr that a table it creates did not exist
            os.environ.setdefault("LANCEDB_LOG", "error")
            try:
                import lancedb
            except ImportError as exc:
                raise StoreError(
                    f"{self.url}: LanceDB is not installed (pip install 'chunkmill[lancedb]')"
                ) from exc
            try:
                self._db = lancedb.connect(self.path)
            except Exception as exc:  # lancedb raises several kinds for a bad URI
                raise StoreError(f"{self.url}: cannot open ({exc})") from exc
        return self._db

    def _note(self) -> Path:
        return Path(self.path) / f".chunkmill-sync-{self.table}.json"

    def _versions(self) -> list[str]:
        folder = Path(self.path) / f"{self.table}.lance" / "_versions"
        return sorted(p.name for p in folder.glob("*.manifest"))

    def quick_state(self) -> State | None:
        """The state of the last complete sync, read without LanceDB: a note written after
        it, valid while the table's manifests are those it lists (LanceDB writes a new
        manifest for every change of a table). None: ask ``state``."""
        if not self.local:
            return None
        try:
            note = json.loads(self._note().read_text())
            if note["versions"] != self._versions():
                return None
            return State(note["run"], note["embedder"], tuple(note["columns"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @contextmanager
    def locked(self):
        if not self.local:
            yield
            return
        Path(self.path).mkdir(parents=True, exist_ok=True)
        fd = os.open(Path(self.path) / ".chunkmill-sync.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise StoreBusy(
                    f"{self.url}: another sync is writing this store; try again when it ends"
                ) from None
            yield
        finally:
            os.close(fd)

    def _open(self, name: str):
        try:
            return self.db.open_table(name)
        except ValueError:  # LanceDB's "Table 'NAME' was not found"
            return None

    def warm(self) -> None:
        """Start importing lancedb in the background (it takes longer than a first sync's
        own work), while the sync reads the run and embeds; the first use waits for it."""
        import sys
        import threading

        if self._db is None and "lancedb" not in sys.modules and self._warming is None:
            os.environ.setdefault("LANCEDB_LOG", "error")
            self._warming = threading.Thread(target=_import_lancedb, daemon=True)
            self._warming.start()

    def _absent(self, name: str) -> bool:
        """Whether table ``name`` surely does not exist: a local store without its folder
        (known without LanceDB)."""
        return self.local and not (Path(self.path) / f"{name}.lance").exists()

    def exists(self) -> bool:
        if self._absent(self.table):
            return False
        return self.quick_state() is not None or self._open(self.table) is not None

    def _meta_row(self) -> dict | None:
        meta = self._open(META)
        if meta is None:
            return None
        rows = meta.search().where(f"`table` = {_quote(self.table)}").to_arrow().to_pylist()
        return rows[0] if rows else None

    def state(self) -> State | None:
        if self._absent(META):
            return None
        row = self._meta_row()
        if row is None:
            return None
        found = row["state"]
        if row["pending"]:
            table = self._open(self.table)
            if table is not None and table.version > row["base"]:
                found = row["pending"]  # the write was committed; the final note was not
        return _state(found)

    def _write_meta(self, **row) -> None:
        record = pa.Table.from_pylist([{"table": self.table, **row}], schema=META_SCHEMA)
        meta = self._open(META)
        if meta is None:
            self.db.create_table(META, record)
            return
        (
            meta.merge_insert("table")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(record)
        )

    def ids(self) -> pa.Table:
        table = self._open(self.table)
        if table is None:
            return pa.table({k: pa.array([], pa.string()) for k in _ID_COLUMNS})
        return table.to_arrow().select(list(_ID_COLUMNS))

    def rows(self) -> pa.Table:
        table = self._open(self.table)
        return table.to_arrow() if table is not None else None

    def apply(
        self, upserts: pa.Table, deletes: list[str], state: State, whole: bool = False
    ) -> None:
        held = self.state()
        table = self._open(self.table)
        base = table.version if table is not None else 0
        self._write_meta(state=_json(held), pending=_json(state), base=base)
        checkpoint("pending")
        if table is None or whole:
            self.db.create_table(self.table, upserts, mode="overwrite")  # one commit
        elif upserts.num_rows or deletes:
            _merge(table, upserts, deletes)
        checkpoint("written")
        self._write_meta(state=_json(state), pending=None, base=None)
        checkpoint("recorded")
        table = self._open(self.table)
        if table is not None:
            table.optimize(cleanup_older_than=timedelta(days=1))
        self.settle(state)

    def settle(self, state: State) -> None:
        """The table holds ``state``: the note ``quick_state`` reads."""
        if self.local:
            note = {**asdict(state), "versions": self._versions()}
            write_atomic(self._note(), json.dumps(note).encode())

    def index_text(self) -> None:
        """A full-text index on ``text`` (LanceDB's own, for its full-text and hybrid
        search), made once; each sync's compaction adds the new rows to it."""
        table = self._open(self.table)
        if table is None or "text" not in table.schema.names:
            return
        if not any(i.columns == ["text"] for i in table.list_indices()):
            table.create_fts_index("text")

    def drop(self) -> None:
        if self.local:
            self._note().unlink(missing_ok=True)
        if self.exists():
            self.db.drop_table(self.table)
        if self._meta_row() is not None:
            self._open(META).delete(f"`table` = {_quote(self.table)}")

    def nearest(self, vector: list[float], limit: int) -> list[dict]:
        table = self._open(self.table)
        if table is None:
            raise StoreError(f"{self.url}: no table {self.table} (sync into it first)")
        found = table.search(vector).distance_type("cosine").limit(limit).to_arrow()
        found = found.drop_columns(["vector"])
        rows = found.to_pylist()
        for row in rows:
            row["distance"] = row.pop("_distance")
        return rows


_ID_COLUMNS = ("chunk_id", "embed_hash", "embedder")


def _import_lancedb() -> None:
    try:
        import lancedb  # noqa: F401
    except ImportError:  # said where it is used
        pass


def checkpoint(step: str) -> None:
    """Called after each step of ``apply``; does nothing (tests kill there)."""


def _merge(table, upserts: pa.Table, deletes: list[str]) -> None:
    """Upserts and deletes in one commit."""
    if not upserts.num_rows:
        table.delete(_in(deletes))
        return
    builder = table.merge_insert("chunk_id").when_matched_update_all().when_not_matched_insert_all()
    if deletes:
        builder = builder.when_not_matched_by_source_delete(_in(deletes))
    builder.execute(upserts)


def _json(state: State | None) -> str | None:
    return None if state is None else json.dumps(asdict(state))


def _state(text: str | None) -> State | None:
    if not text:
        return None
    found = json.loads(text)
    return State(found["run"], found["embedder"], tuple(found["columns"]))


def _in(ids: list[str]) -> str:
    return "chunk_id IN (" + ", ".join(_quote(i) for i in ids) + ")"


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
