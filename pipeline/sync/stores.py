"""The vector stores a sync writes, behind one small interface (``Store``), opened from a URL:

    lancedb://PATH          LanceDB, embedded (lancedb_store.py); PATH a local folder or an
                            object-store URL (lancedb://s3://bucket/prefix)
    postgresql://...        PostgreSQL with pgvector (pg_store.py)

A store holds one table of rows (``chunk_id``, ``vector``, ``embed_hash``, ``embedder`` and
the chunk columns chosen) and, beside it, the sync state of that table (``State``): the run
of the output folder it holds exactly, the embedder and the columns. A store applies the
upserts, the deletes and the new state of a sync as one unit where it can (PostgreSQL: one
transaction) and otherwise so that reading the state back says which side of the write a
killed sync stopped on (LanceDB).

To write an adapter for another store (Qdrant, Chroma, Elasticsearch), implement these
methods; ``rows`` returns columns in the Arrow types ``columns.schema`` declares. ``warm``,
``index_text`` and ``nearest`` may be left out: a sync calls the first two when a store has
them, and only ``chunkmill search --store`` needs the last.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa


class StoreError(Exception):
    """A store that cannot be opened or written (one line: the store and the problem)."""


class StoreUrlError(StoreError):
    """A URL that names no kind of store (a usage error: exit 2)."""


class StoreBusy(StoreError):
    """Another sync holds this store's table."""


@dataclass(frozen=True)
class State:
    """What a store's table holds: exactly the published chunks of ``run`` (a run id of the
    output folder), embedded by ``embedder``, with ``columns``."""

    run: str
    embedder: str
    columns: tuple[str, ...]


class Store(Protocol):
    url: str
    shown: str  # the URL as messages show it (no password)
    table: str

    def locked(self) -> AbstractContextManager:
        """Held for a whole sync: StoreBusy when another sync holds it."""

    def quick_state(self) -> State | None:
        """``state``, when it can be known cheaply and for sure; None: ask ``state``."""

    def warm(self) -> None:
        """A sync has work to do: get ready (a client to import, a connection to open)."""

    def settle(self, state: State) -> None:
        """The table was found to hold ``state``: remember it for ``quick_state``."""

    def state(self) -> State | None:
        """The state written by the last complete sync (None: none, or it was removed)."""

    def exists(self) -> bool:
        """Whether the table exists."""

    def ids(self) -> pa.Table:
        """chunk_id, embed_hash, embedder of every row, in bulk."""

    def rows(self) -> pa.Table:
        """Every row, every column (verify compares them with the published run)."""

    def apply(
        self, upserts: pa.Table, deletes: list[str], state: State, whole: bool = False
    ) -> None:
        """Insert or replace ``upserts`` by chunk_id, delete ``deletes``, record ``state``;
        ``whole``: ``upserts`` is the whole table (made anew, in these columns). After a
        kill at any moment, ``state()`` describes what the table holds."""

    def drop(self) -> None:
        """Remove the table and its state (a rebuild from scratch)."""

    def index_text(self) -> None:
        """Make (once) the store's own full-text index on ``text`` (``--fts``)."""

    def nearest(self, vector: list[float], limit: int) -> list[dict]:
        """The ``limit`` rows closest to ``vector`` by cosine distance, nearest first, each
        with its columns (no vector) and ``distance``."""


def shown(url: str) -> str:
    """``url`` without its password, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def open_store(url: str, table: str) -> Store:
    """The store ``url`` names; StoreError for a URL of no known kind."""
    if url.startswith("lancedb://"):
        from chunkmill.pipeline.sync.lancedb_store import LanceStore

        return LanceStore(url, table)
    if url.startswith(("postgresql://", "postgres://")):
        from chunkmill.pipeline.sync.pg_store import PgStore

        return PgStore(url, table)
    raise StoreUrlError(
        f"{url}: not a store URL (lancedb://PATH or postgresql://USER@HOST:PORT/DATABASE)"
    )
