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


def add_counts(record: dict, *, documents: dict[str, int], deleted: int, parsed: int,
               repacked: int, rejects: int, chunks: dict[str, int],
               seconds: dict[str, float]) -> None:  # fmt: skip
    """A finished run's counts into its record: documents added, changed and unchanged
    (``documents``), deleted, parsed and packed again, rejects; chunks added, removed,
    updated, kept and in total (``chunks``, as the change set counts them); each stage's
    seconds and the total, to the millisecond."""
    record.update(
        **documents,
        documents_deleted=deleted,
        documents_parsed=parsed,
        documents_repacked=repacked,
        rejects=rejects,
        **{f"chunks_{k}": chunks[k] for k in ("added", "removed", "updated", "kept", "total")},
        seconds={k: round(v, 3) for k, v in seconds.items()},
    )


def resolved(root: Path, pub) -> tuple[list[dict], bool]:
    """Every run of ``root``, oldest first, as its CURRENT (``pub``: ``runstore.pointed``)
    makes it true: a run recorded as ``publishing`` is published if CURRENT names it, else
    it was abandoned; a published run missing from the table (a damaged runs.parquet) is
    taken from its folder's own copy. And whether that differs from what runs.parquet
    holds."""
    records = read_history(root / HISTORY)
    changed = records is None
    if records is None and pub.folder is not None:  # unreadable: the published run's copy
        records = read_history(pub.folder / HISTORY)
    records = records or []
    for r in records:
        if r["status"] != "publishing":
            continue
        changed = True
        if r["run_id"] == pub.run_id:
            r["status"] = "published"
        else:
            r.update(status="abandoned", error="the run was killed while publishing")
    known = {r["run_id"] for r in records if r["status"] == "published"}
    if pub.folder is not None and pub.run_id not in known:
        own = [r for r in read_history(pub.folder / HISTORY) or [] if r["run_id"] == pub.run_id]
        records += [{**r, "status": "published"} for r in own[-1:]]
        changed = True
    return records, changed


def abandoned(run_id: str, started_at) -> dict:
    """The record of a run whose folder was left by a kill before it recorded itself."""
    return {
        "run_id": run_id,
        "status": "abandoned",
        "started_at": started_at,
        "inputs": [],
        "seconds": {},
        "error": "the run stopped before publishing (killed?)",
    }


def changed_something(record: dict) -> bool:
    """Whether a run added, removed or updated a chunk (a rollback point worth keeping)."""
    return any(record.get(k) for k in ("chunks_added", "chunks_removed", "chunks_updated"))


def kept(records: list[dict], keep: int, current_id: str | None) -> set[str]:
    """The published runs whose folders ``--keep`` keeps: the ``keep`` most recent that
    changed something, and the published one."""
    published = [r for r in records if r["status"] == "published"]
    changing = [r["run_id"] for r in published if changed_something(r)]
    return set(changing[-max(keep, 1) :]) | {current_id}
