"""The runs table (runs.parquet): one row per run, published, failed or abandoned.

DIR/runs.parquet is the history of an output folder; every published run folder holds its
own copy (the history up to and including that run), so a damaged root table can be
restored from the published run.
"""

from __future__ import annotations

from pathlib import Path

from chunkmill.pipeline.runstore.parquet_files import upgrade, write_atomic

HISTORY = "runs.parquet"


def read_history(path: Path) -> list[dict] | None:
    """The records of one runs table, oldest first; [] when it does not exist, None when
    it cannot be read (damaged)."""
    import pyarrow.parquet as pq

    from chunkmill.pipeline import schemas

    if not Path(path).exists():
        return []
    from datetime import UTC

    import pyarrow as pa

    times = ("started_at", "ended_at")
    try:
        # ParquetFile, not read_table (which loads pyarrow.dataset and pandas: a second of
        # start-up), and times read without their zone (its conversion loads pandas too),
        # put back below.
        table = pq.ParquetFile(path, page_checksum_verification=True).read()
        table = upgrade(table, schemas.RUNS)
        for name in times:
            i = table.schema.get_field_index(name)
            naive = [part.view(pa.timestamp("ms")) for part in table[name].chunks]
            table = table.set_column(i, name, pa.chunked_array(naive, pa.timestamp("ms")))
        records = table.to_pylist()
    except (OSError, ValueError, pa.ArrowException):  # a damaged footer: any Arrow error
        return None
    for r in records:  # a map column reads back as a list of pairs
        r["seconds"] = dict(r["seconds"] or [])
        for name in times:
            r[name] = r[name] and r[name].replace(tzinfo=UTC)
    return records


def write_history(folder: Path, records: list[dict], durable: bool = True) -> None:
    """Replace ``folder``/runs.parquet (atomically) with ``records`` (see
    store.write_atomic for ``durable``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from chunkmill.pipeline import arrow_columns, schemas
    from chunkmill.pipeline.runstore.parquet_files import WRITE_OPTIONS

    # arrow_columns.table, not pa.Table.from_pylist: that one imports pandas (start-up time)
    rows = {f.name: [r.get(f.name) for r in records] for f in schemas.RUNS}
    rows["seconds"] = [list((s or {}).items()) for s in rows["seconds"]]
    table = arrow_columns.table(rows, schemas.RUNS)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **WRITE_OPTIONS)
    write_atomic(Path(folder) / HISTORY, sink.getvalue().to_pybytes(), durable)


def new_record(run_id: str, plan, full: bool, policy, parser_version: str) -> dict:
    from datetime import UTC, datetime

    from chunkmill.pipeline.policy import CHUNKER_VERSION

    inputs = sorted({s.uri if s.is_table else s.root_uri for s in plan})
    return {
        "run_id": run_id,
        "status": "running",
        "started_at": datetime.now(UTC),
        "ended_at": None,
        "inputs": inputs,
        "full": full,
        "policy": policy.canonical_json(),
        "policy_hash": policy.policy_hash,
        "chunker_version": CHUNKER_VERSION,
        "parser_version": parser_version,
        "previous_run": None,
        "seconds": {},
        "error": None,
    }
