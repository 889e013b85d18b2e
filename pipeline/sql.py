"""Load and run the SQL files in ``sql/`` with DuckDB. Python only loads, binds and runs."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import duckdb

_REPO_SQL = Path(__file__).resolve().parent.parent / "sql"


def sql_dir() -> Path:
    """sql/ of a source checkout, or the copy installed inside the wheel (pipeline/sql)."""
    if (_REPO_SQL / "views.sql").exists():
        return _REPO_SQL
    return Path(str(resources.files("pipeline.sql")))


def load(name: str) -> str:
    return (sql_dir() / name).read_text(encoding="utf-8")


def connect(out: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the views of one output folder in place."""
    con = duckdb.connect()
    con.execute("SET VARIABLE mdchunk_out = ?", [str(Path(out).resolve())])
    con.execute(load("views.sql"))
    return con
