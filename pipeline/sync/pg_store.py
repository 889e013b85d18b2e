"""PostgreSQL with pgvector (``postgresql://USER:PASSWORD@HOST:PORT/DATABASE``).

The rows are one table (``chunks`` unless ``--table``): ``chunk_id`` the primary key,
``vector`` a pgvector ``vector(N)``, lists as arrays, ``front_matter`` and ``spans`` as
jsonb. The state of every synced table is a row of ``chunkmill_sync``. A sync holds a
session advisory lock on the table's name, and writes the upserts (COPY into a temporary
table, then one INSERT ... ON CONFLICT), the deletes and the state in one transaction:
a killed sync leaves the table as it was. Needs psycopg 3 and pgvector (the `pgvector`
extra); the database needs the vector extension (created when missing, which needs the
right to).
"""

from __future__ import annotations

import json
from contextlib import contextmanager

import pyarrow as pa

from chunkmill.pipeline.sync import columns as store_columns
from chunkmill.pipeline.sync.stores import State, StoreBusy, StoreError, shown

META = "chunkmill_sync"


def _sql_type(t: pa.DataType) -> str:
    if pa.types.is_fixed_size_list(t):
        return f"vector({t.list_size})"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "text"
    if pa.types.is_list(t) and pa.types.is_string(t.value_type):
        return "text[]"
    if pa.types.is_int64(t):
        return "bigint"
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_boolean(t):
        return "boolean"
    return "jsonb"  # maps (front_matter) and lists of structs (spans)


class PgStore:
    def __init__(self, url: str, table: str):
        self.url, self.table = url, table
        self.shown = shown(url)
        try:
            import psycopg  # noqa: F401
            from pgvector.psycopg import register_vector  # noqa: F401
        except ImportError as exc:
            raise StoreError(
                "postgresql: psycopg and pgvector are not installed "
                "(pip install 'chunkmill[pgvector]')"
            ) from exc
        self.conn = None

    def _connect(self):
        import psycopg

        if self.conn is None:
            try:
                self.conn = psycopg.connect(self.url, connect_timeout=10)
            except psycopg.Error as exc:
                raise StoreError(f"{self.shown}: cannot connect ({_first_line(exc)})") from exc
            self._vectors_known = False
        return self.conn

    def _register(self):
        """pgvector's types, once the extension exists."""
        from pgvector.psycopg import register_vector

        if not self._vectors_known:
            try:
                register_vector(self.conn)
                self._vectors_known = True
            except Exception:  # psycopg.ProgrammingError: no vector type yet
                self.conn.rollback()

    def _ident(self, name: str):
        from psycopg import sql

        return sql.Identifier(name)

    @contextmanager
    def locked(self):
        conn = self._connect()
        key = f"chunkmill-sync:{self.table}"
        got = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [key]).fetchone()[0]
        conn.commit()
        if not got:
            raise StoreBusy(
                f"{self.shown}: another sync is writing table {self.table}; try again when it ends"
            )
        try:
            yield
        finally:
            if not conn.closed:
                conn.rollback()
                conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", [key])
                conn.commit()
                conn.close()
            self.conn = None

    def quick_state(self) -> State | None:
        return self.state()

    def settle(self, state: State) -> None:
        pass

    def warm(self) -> None:
        pass

    def index_text(self) -> None:
        """A GIN index on ``to_tsvector('simple', text)``, for PostgreSQL's full-text search
        beside the vectors (made once; PostgreSQL keeps it current)."""
        from psycopg import sql

        conn = self._connect()
        if "text" in self._columns():
            with conn.transaction():
                conn.execute(
                    sql.SQL(
                        "CREATE INDEX IF NOT EXISTS {} ON {} USING gin "
                        "(to_tsvector('simple', text))"
                    ).format(self._ident(f"{self.table}_text_fts"), self._ident(self.table))
                )

    def exists(self) -> bool:
        conn = self._connect()
        found = conn.execute("SELECT to_regclass(%s)", [self._qualified()]).fetchone()[0]
        conn.commit()
        return found is not None

    def _columns(self) -> list[str]:
        """The table's column names, in order."""
        conn = self._connect()
        found = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
            "ORDER BY ordinal_position",
            [self.table],
        ).fetchall()
        conn.commit()
        return [r[0] for r in found]

    def _qualified(self) -> str:
        return '"' + self.table.replace('"', '""') + '"'

    def state(self) -> State | None:
        conn = self._connect()
        if conn.execute("SELECT to_regclass(%s)", [META]).fetchone()[0] is None:
            conn.commit()
            return None
        row = conn.execute(
            f"SELECT run, embedder, columns FROM {META} WHERE table_name = %s", [self.table]
        ).fetchone()
        conn.commit()
        if row is None or not self.exists():
            return None
        return State(row[0], row[1], tuple(row[2]))

    def ids(self) -> pa.Table:
        conn = self._connect()
        if not self.exists():
            return pa.table(
                {k: pa.array([], pa.string()) for k in ("chunk_id", "embed_hash", "embedder")}
            )
        from psycopg import sql

        query = sql.SQL("SELECT chunk_id, embed_hash, embedder FROM {}").format(
            self._ident(self.table)
        )
        rows = conn.execute(query).fetchall()
        conn.commit()
        names = ("chunk_id", "embed_hash", "embedder")
        return pa.table(
            {n: pa.array([r[i] for r in rows], pa.string()) for i, n in enumerate(names)}
        )

    def rows(self) -> pa.Table | None:
        if not self.exists():
            return None
        from psycopg import sql

        conn = self._connect()
        self._register()
        names = self._columns()
        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(self._ident(n) for n in names), self._ident(self.table)
        )
        found = conn.execute(query).fetchall()
        conn.commit()
        chosen = tuple(n for n in names if n not in store_columns.KEYS)
        dims = (
            len(_from_sql(found[0][names.index("vector")], pa.list_(pa.float32(), 1)))
            if found
            else 1
        )
        schema = store_columns.schema(chosen, dims)
        data = {}
        for i, name in enumerate(names):
            values = [r[i] for r in found]
            data[name] = pa.array(
                [_from_sql(v, schema.field(name).type) for v in values], schema.field(name).type
            )
        return pa.table(data, schema=pa.schema([schema.field(n) for n in names]))

    def apply(
        self, upserts: pa.Table, deletes: list[str], state: State, whole: bool = False
    ) -> None:
        from psycopg import sql

        conn = self._connect()
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self._register()
        table = self._ident(self.table)
        with conn.transaction():
            if whole:
                conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table))
            columns = sql.SQL(", ").join(
                sql.SQL("{} {}").format(self._ident(f.name), sql.SQL(_sql_type(f.type)))
                + (sql.SQL(" PRIMARY KEY") if f.name == "chunk_id" else sql.SQL(""))
                for f in upserts.schema
            )
            conn.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} ({})").format(table, columns))
            if upserts.num_rows:
                self._upsert(conn, upserts)
            if deletes:
                conn.execute(
                    sql.SQL("DELETE FROM {} WHERE chunk_id = ANY(%s)").format(table), [deletes]
                )
            checkpoint("written")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {META} (table_name text PRIMARY KEY, run text, "
                "embedder text, columns jsonb, synced_at timestamptz)"
            )
            conn.execute(
                f"INSERT INTO {META} VALUES (%s, %s, %s, %s, now()) ON CONFLICT (table_name) "
                "DO UPDATE SET run = EXCLUDED.run, embedder = EXCLUDED.embedder, columns = "
                "EXCLUDED.columns, synced_at = EXCLUDED.synced_at",
                [self.table, state.run, state.embedder, json.dumps(list(state.columns))],
            )
        checkpoint("recorded")

    def _upsert(self, conn, upserts: pa.Table) -> None:
        from psycopg import sql
        from psycopg.types.json import Jsonb

        names = upserts.column_names
        ident = sql.SQL(", ").join(self._ident(n) for n in names)
        conn.execute(
            sql.SQL(
                "CREATE TEMP TABLE incoming (LIKE {} INCLUDING DEFAULTS) ON COMMIT DROP"
            ).format(self._ident(self.table))
        )
        kinds = [f.type for f in upserts.schema]
        columns = [upserts[n].to_pylist() for n in names]
        with conn.cursor().copy(sql.SQL("COPY incoming ({}) FROM STDIN").format(ident)) as copy:
            for row in zip(*columns):
                copy.write_row([_to_sql(v, k, Jsonb) for v, k in zip(row, kinds)])
        updates = sql.SQL(", ").join(
            sql.SQL("{} = EXCLUDED.{}").format(self._ident(n), self._ident(n))
            for n in names
            if n != "chunk_id"
        )
        conn.execute(
            sql.SQL(
                "INSERT INTO {} ({}) SELECT {} FROM incoming ON CONFLICT (chunk_id) "
                "DO UPDATE SET {}"
            ).format(self._ident(self.table), ident, ident, updates)
        )

    def drop(self) -> None:
        from psycopg import sql

        conn = self._connect()
        with conn.transaction():
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(self._ident(self.table)))
            if conn.execute("SELECT to_regclass(%s)", [META]).fetchone()[0] is not None:
                conn.execute(f"DELETE FROM {META} WHERE table_name = %s", [self.table])

    def nearest(self, vector: list[float], limit: int) -> list[dict]:
        import numpy as np
        from psycopg import sql
        from psycopg.rows import dict_row

        if not self.exists():
            raise StoreError(f"{self.shown}: no table {self.table} (sync into it first)")
        conn = self._connect()
        self._register()
        names = [n for n in self._columns() if n != "vector"]
        query = sql.SQL(
            "SELECT {}, vector <=> %s AS distance FROM {} ORDER BY distance LIMIT %s"
        ).format(sql.SQL(", ").join(self._ident(n) for n in names), self._ident(self.table))
        with conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(query, [np.asarray(vector, np.float32), limit]).fetchall()
        conn.commit()
        return rows


def checkpoint(step: str) -> None:
    """Called inside and after the transaction of ``apply``; does nothing (tests kill
    there)."""


def _to_sql(value, t: pa.DataType, jsonb):
    if value is None:
        return None
    if pa.types.is_fixed_size_list(t):
        import numpy as np

        return np.asarray(value, dtype=np.float32)
    if pa.types.is_map(t):
        return jsonb(dict(value))
    if _sql_type(t) == "jsonb":
        return jsonb(value)
    return value


def _from_sql(value, t: pa.DataType):
    if value is None:
        return None
    if pa.types.is_fixed_size_list(t):
        values = value.to_list() if hasattr(value, "to_list") else value  # pgvector's Vector
        return [float(x) for x in values]
    if pa.types.is_map(t):
        return list(value.items())
    return value


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]
