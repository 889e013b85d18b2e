"""Load and run the SQL files in ``sql/`` with DuckDB. Python only loads, binds and runs."""

from __future__ import annotations

from pathlib import Path

import duckdb

_HERE = Path(__file__).resolve().parent


def sql_dir() -> Path:
    """sql/ of a source checkout, or the copy a wheel installs as pipeline/sql/."""
    for candidate in (_HERE.parent / "sql", _HERE / "sql"):
        if (candidate / "views.sql").exists():
            return candidate
    raise FileNotFoundError(f"no sql/ folder next to {_HERE}: the installation is incomplete")


def load(name: str) -> str:
    return (sql_dir() / name).read_text(encoding="utf-8")


def connect(out: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the views of one output folder in place."""
    con = duckdb.connect()
    con.execute("SET VARIABLE mdchunk_out = ?", [str(Path(out).resolve())])
    con.execute(load("views.sql"))
    return con
