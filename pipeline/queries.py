"""Load and run the SQL files in ``sql/`` with DuckDB. Python only loads, binds and runs.

Every file is one query; its ``$name`` parameters are bound from keyword arguments (only the
names the file uses). The views of ``sql/views.sql`` read one output folder.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from chunkmill.pipeline import runstore
from chunkmill.pipeline.policy import Policy
from chunkmill.pipeline.runstore import objectstore, parquet_files
from chunkmill.pipeline.table_names import CONTENT_TABLES, OPTIONAL_TABLES

_HERE = Path(__file__).resolve().parent
_PARAM = re.compile(r"\$([A-Za-z_]\w*)")
# The views of an output folder (sql/views.sql, plus ``changes``), each over NAME.parquet.
VIEWS = (*CONTENT_TABLES, "runs", "changes")
_VIEW = re.compile(r"\b(" + "|".join(VIEWS) + r")\b", re.IGNORECASE)


def sql_dir() -> Path:
    """sql/ beside pipeline/: in a source checkout, and as chunkmill/sql/ in a wheel."""
    for candidate in (_HERE.parent / "sql",):
        if (candidate / "views.sql").exists():
            return candidate
    raise FileNotFoundError(f"no sql/ folder next to {_HERE}: the installation is incomplete")


def load(name: str) -> str:
    return (sql_dir() / name).read_text(encoding="utf-8")


def folder_of(out: str | Path) -> Path:
    """The local folder readers read for ``out``: the published run of an output folder, a
    local copy of the published run of an object-store prefix (``s3://...``: fetched
    through pyarrow, checked against its manifest), or ``out`` itself (the plain folders of
    `chunkmill blocks` and `chunkmill chunks`)."""
    if objectstore.is_uri(out):
        return objectstore.published_copy(str(out))
    return runstore.resolve(Path(out))


def tables_in(sql: str) -> list[str]:
    """The views a query names (each word that is a view's name, in any case; a string such
    as '/chunks.parquet' counts too): the files it may read."""
    return sorted({m.lower() for m in _VIEW.findall(sql)})


def connect(
    out: str | Path, tables: list[str] | tuple[str, ...] = VIEWS, verify: bool = True
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the views of an output folder's published run in place
    (plus ``changes``, that run's change set, when it has one). ``tables``: the views the
    caller reads (every view by default; ``tables_in`` gives a query's). Their files are
    checked against the run's manifest first, unless not ``verify``:
    ``runstore.DamagedRunError`` when one is damaged. An optional table (blocks, postings)
    the run did not write is made in memory (``made``) when it is among them."""
    uri = str(out)
    out = folder_of(out)
    missing = [
        n for n in VIEWS[:-1] if n not in OPTIONAL_TABLES and not (out / f"{n}.parquet").exists()
    ]
    if missing and (out / runstore.RUNS).is_dir():  # a run folder, nothing published yet
        statuses = Counter(r["status"] for r in runstore.history(out))
        runs = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
        raise FileNotFoundError(
            f"{out}: no published run yet ({runs or 'no run recorded'}); see `chunkmill runs {out}`"
        )
    if missing:
        raise FileNotFoundError(
            f"{out}: no {', '.join(m + '.parquet' for m in missing)}; "
            "is this the --out folder of `chunkmill run`?"
        )
    absent = [t for t in OPTIONAL_TABLES if t in tables and _absent(out, t)]
    read = {*tables, *(MADE_FROM[t] for t in absent)}
    served = [f"{t}.parquet" for t in sorted(read) if (out / f"{t}.parquet").exists()]
    if verify and served and not objectstore.is_uri(uri):  # an object store's copy was checked
        runstore.check_served(out, served)
    con = duckdb.connect()
    con.execute("SET VARIABLE chunkmill_out = ?", [str(out.resolve())])
    for statement in f"{load('views.sql')};{load('optional_views.sql')}".split(";"):
        view = _CREATED.search(statement)
        if view and (out / f"{view.group(1)}.parquet").exists():
            con.execute(statement)
    for name in absent:
        con.register(name, made(out, name))
    if (out / "changes.parquet").exists():
        con.execute(
            "CREATE VIEW changes AS "
            "SELECT * FROM read_parquet(getvariable('chunkmill_out') || '/changes.parquet')"
        )
    elif runstore.is_run_path(out):  # a folder's first publication: its chunks are adds
        con.execute(load("first_changes.sql"))
    return con


# What an optional table is made of when the run did not write it.
MADE_FROM = {"blocks": "documents", "postings": "chunks"}
_CREATED = re.compile(r"CREATE OR REPLACE VIEW (\w+) AS", re.IGNORECASE)


def table(folder: Path, name: str, columns: list[str] | None = None):
    """A content table of the published run in ``folder`` (a pyarrow Table): as written,
    or made (``made``) when it is an optional one the run did not write."""
    if _absent(folder, name):
        found = made(folder, name)
        return found if columns is None else found.select(columns)
    return parquet_files.read(folder, name, columns)


def _absent(folder: Path, name: str) -> bool:
    """Whether ``name`` is an optional table the run in ``folder`` did not write."""
    return name in OPTIONAL_TABLES and not (folder / f"{name}.parquet").exists()


def made(folder: Path, name: str):
    """An optional table (blocks, postings) of the published run in ``folder``, made in
    memory as the run would have written it: the blocks of its documents (parsed again, on
    every core), the postings of its chunks. A pyarrow Table."""
    if name == "postings":
        from chunkmill.pipeline.postings import postings

        return postings(parquet_files.read(folder, "chunks", ["chunk_id", "embed_text"]))
    from chunkmill.pipeline import block
    from chunkmill.pipeline.doc_limits import usable_cores
    from chunkmill.pipeline.parse import DEFAULT_BACKEND

    docs = parquet_files.read(folder, "documents")
    bias = policy_of(folder).bias
    return block.blocks(docs, bias, DEFAULT_BACKEND, usable_cores(), None)[0]


def run(con: duckdb.DuckDBPyConnection, name: str, **params) -> pl.DataFrame:
    """Run one SQL file with the parameters it names; the result as a polars frame."""
    sql = load(name)
    wanted = dict.fromkeys(_PARAM.findall(sql))
    missing = [p for p in wanted if p not in params]
    if missing:
        raise TypeError(f"{name} needs parameter(s) {', '.join(missing)}")
    return con.sql(sql, params={p: params[p] for p in wanted}).pl()


def policy_of(out: str | Path) -> Policy:
    """The policy that produced an output folder (from the chunks file's footer)."""
    import json
    import warnings

    meta = parquet_files.footer(folder_of(out), "chunks")
    if "mdchunk.policy" not in meta:
        warnings.warn(
            f"{out}/chunks.parquet has no policy in its footer (rewritten by another "
            "tool?); using the default policy for min/max tokens",
            stacklevel=2,
        )
        return Policy()
    return Policy(**json.loads(meta["mdchunk.policy"]))


def search(
    out: str | Path,
    query: str,
    *,
    section=None,
    level=None,
    chunk_type=None,
    path=None,
    fm_key=None,
    fm_value=None,
    limit: int = 10,
    k1: float = 1.2,
    b: float = 0.75,
    con: duckdb.DuckDBPyConnection | None = None,
) -> pl.DataFrame:
    """BM25 search (sql/search.sql); ``con`` reuses an open connection to ``out``."""
    params = dict(
        query=query,
        section=section,
        level=level,
        chunk_type=chunk_type,
        path=path,
        fm_key=fm_key,
        fm_value=fm_value,
        limit=limit,
        k1=k1,
        b=b,
    )
    if con is not None:
        return run(con, "search.sql", **params)
    with connect(out, tables_in(load("search.sql"))) as own:
        return run(own, "search.sql", **params)


STATS = [
    "overview",
    "rejects_by_reason",
    "tokens",
    "histogram",
    "per_document",
    "mix",
    "block_kinds",
    "splits",
    "extremes",
]


def stats_tables() -> list[str]:
    """The views the stats queries read."""
    return tables_in(" ".join(load(f"stats/{name}.sql") for name in STATS))


def stats(
    out: str | Path, bins: int = 20, n: int = 10, con: duckdb.DuckDBPyConnection | None = None
) -> dict[str, pl.DataFrame]:
    """Every stats query (sql/stats/); ``con`` reuses an open connection to ``out`` with
    the views of ``stats_tables``."""
    if con is None:
        # first: it says clearly when DIR is not an output folder
        with connect(out, stats_tables()) as own:
            return stats(out, bins, n, own)
    policy = policy_of(out)
    params = dict(min_tokens=policy.min_tokens, max_tokens=policy.max_tokens, bins=bins, n=n)
    return {name: run(con, f"stats/{name}.sql", **params) for name in STATS}


def check_names() -> list[str]:
    return sorted(p.stem for p in (sql_dir() / "checks").glob("*.sql"))


def checksums(folder: Path) -> pl.DataFrame | None:
    """Files of a run folder that do not match its manifest (file, problem), one ``error``
    row when its manifest is missing or unreadable, or None for a plain folder without a
    manifest (`chunkmill blocks`, `chunkmill chunks`)."""
    from chunkmill.pipeline.runstore import manifest

    if not runstore.is_run_path(folder) and not (folder / manifest.MANIFEST).exists():
        return None
    try:
        problems = manifest.verify(folder, manifest.load(folder))
    except manifest.ManifestError as exc:
        return pl.DataFrame({"error": [str(exc)]})
    rows = [p.split(": ", 1) for p in problems]
    return pl.DataFrame(
        {"file": [r[0] for r in rows], "problem": [r[1] for r in rows]},
        schema={"file": pl.String, "problem": pl.String},
    )


def ledger_check(out: str | Path) -> dict[str, pl.DataFrame]:
    """The ledger of a run folder against its checksum (``ledger``: no rows when it holds,
    else one ``error`` row naming the file and the problem); nothing for a folder without a
    ledger (a plain folder)."""
    from chunkmill.pipeline.runstore import ledger, objectstore

    if objectstore.is_uri(out):
        root = objectstore.published_with_ledger(str(out))[1].parent
    else:
        root = Path(out)
    if not any((root / name).exists() for name in (ledger.LEDGER, ledger.CHECKSUM)):
        return {}
    problem = ledger.problem(root)
    rows = [] if problem is None else [problem]
    return {"ledger": pl.DataFrame({"error": rows}, schema={"error": pl.String})}


def checks(out: str | Path) -> dict[str, pl.DataFrame]:
    """Every data check: the offending rows of each (an empty frame means it holds). First
    the files against the run's manifest (``checksums``); a check that cannot even run on
    damaged files gives one row naming the error."""
    results: dict[str, pl.DataFrame] = {}
    found = checksums(folder_of(out))
    if found is not None:
        results["checksums"] = found
    results |= ledger_check(out)
    try:
        read = tables_in(" ".join(load(f"checks/{name}.sql") for name in check_names()))
        con = connect(out, read, verify=False)  # damaged files: the checksums' finding
        policy = policy_of(out)
    except (duckdb.Error, OSError, ValueError, pa.ArrowException) as exc:
        # a damaged footer can read as any Arrow error (a bit flip in a schema: "not
        # implemented"); the checksums above name the file
        failed = pl.DataFrame({"error": [f"could not read the run: {exc}".splitlines()[0]]})
        return results | {name: failed for name in check_names()}
    with con:
        for name in check_names():
            try:
                results[name] = run(con, f"checks/{name}.sql", max_tokens=policy.max_tokens)
            except duckdb.Error as exc:
                results[name] = pl.DataFrame({"error": [str(exc).splitlines()[0]]})
    return results


def recount(out: str | Path, counter, max_tokens: int | None = None) -> dict[str, pl.DataFrame]:
    """Every text chunk's embed_text counted again with ``counter`` (a TokenCounter, e.g.
    ``tokens.make_counter("tiktoken:cl100k_base")``): the chunks over the cap (``over_cap``;
    ``max_tokens``, a model's window, for the policy's) and real tokens against n_tokens per
    top folder (``by_folder``), from sql/recount/. A chunk counts what the model reads: with
    the tokens it adds ([CLS], [SEP])."""
    from chunkmill.pipeline.tokens import input_tokens

    with connect(out, tables_in(load("recount/embed_texts.sql"))) as con:
        policy = policy_of(out)
        texts = run(con, "recount/embed_texts.sql")
        recounted = pl.DataFrame(
            {
                "chunk_id": texts["chunk_id"],
                "real_tokens": pl.Series(
                    input_tokens(counter, texts["embed_text"].to_list()), dtype=pl.Int64
                ),
            }
        )
        con.register("recounted", recounted.to_arrow())
        params = dict(max_tokens=max_tokens or policy.max_tokens)
        return {
            name: run(con, f"recount/{name}.sql", **params) for name in ("over_cap", "by_folder")
        }
