"""The Ray engine: the same per-batch stages, run by Ray Data instead of a process pool.

Ray Data reads the documents (each file's bytes are read inside a Ray task, through pyarrow's
filesystems, so a path may be local or any URI pyarrow supports) and applies
``pipeline.batch.process`` with ``map_batches(batch_format="pyarrow")``, order preserved.
Each batch's tables come back to the driver as one Arrow table of (batch, table name, Arrow
IPC bytes); the driver writes and publishes them exactly as a local run does, so the output
folder, its change set and its runs table are the same.
"""

from __future__ import annotations

import os
import socket
from collections import Counter
from collections.abc import Iterator

import pyarrow as pa

from mdchunk.pipeline import batch, schemas, sources
from mdchunk.pipeline.policy import Policy

RAW = schemas.RAW_DOCUMENTS
ENVELOPE = pa.schema([("seq", pa.int64()), ("name", pa.string()), ("ipc", pa.large_binary())])
INSTALL_HINT = "--engine ray needs Ray: pip install 'mdchunk[ray]'"


class EngineError(Exception):
    """The engine cannot run here (Ray missing, or the cluster unreachable)."""


def read_raw(table: pa.Table) -> pa.Table:
    """Ray task: fill in the bytes of each planned file (or why it could not be read)."""
    rows = table.to_pylist()
    for row in rows:
        if row["data"] is None:
            row["data"], row["error"] = sources.fetch(row["uri"])
    return pa.Table.from_pylist(rows, schema=RAW)


def stage(table: pa.Table, policy: Policy, max_bytes: int) -> pa.Table:
    """Ray task: every stage over one batch; its tables packed into one envelope table."""
    tables = batch.process_arrow(table, policy, max_bytes)
    first = table["seq"][0].as_py() if table.num_rows else -1
    rows = [{"seq": first, "name": name, "ipc": _ipc(t)} for name, t in tables.items()]
    return pa.Table.from_pylist(rows, schema=ENVELOPE)


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _items(plan: list[sources.Source], selection: sources.Selection) -> list[dict]:
    """One row per document: files are read later, in Ray; tables are read here."""
    rows: list[dict] = []
    for src in plan:
        if src.is_table:
            for raw in sources.read([src], selection):
                rows.append(
                    {
                        "uri": "",
                        "path": raw.path,
                        "source": raw.source,
                        "data": raw.data,
                        "error": raw.error,
                    }
                )
        else:
            rows.append(
                {
                    "uri": src.uri,
                    "path": src.rel,
                    "source": src.root_uri,
                    "data": None,
                    "error": None,
                }
            )
    for i, row in enumerate(rows):
        row["seq"] = i
    return rows


def start(address: str | None, cpus: int):
    """Connect to ADDR (or RAY_ADDRESS), or start a local Ray with ``cpus`` CPUs."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no network beyond the cluster
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise EngineError(INSTALL_HINT) from exc
    if not ray.is_initialized():
        options = dict(include_dashboard=False, log_to_driver=False, logging_level="WARNING")
        try:
            if address:
                _reachable(address)
                ray.init(address=address, **options)
            else:
                ray.init(num_cpus=cpus, **options)
        except (Exception, SystemExit) as exc:  # ray exits the process when it gives up
            if isinstance(exc, EngineError):
                raise
            raise EngineError(f"cannot start Ray at {address or 'a local Ray'}: {exc}") from exc
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # outputs in input order
    context.enable_progress_bars = False
    return ray


def _reachable(address: str) -> None:
    """Fail in seconds, in one line, for an address nobody answers at: Ray itself retries
    for minutes, prints to stderr, then exits the process."""
    if address in ("auto", "local"):
        return
    host, _, port = address.split("://", 1)[-1].rstrip("/").rpartition(":")
    if not host or not port.isdigit():
        raise EngineError(f"--ray-address {address!r}: expected HOST:PORT, ray://HOST:PORT or auto")
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
    except OSError as exc:
        raise EngineError(f"cannot reach Ray at {address}: {exc.strerror or exc}") from exc


def ordered_results(
    plan: list[sources.Source],
    selection: sources.Selection,
    policy: Policy,
    max_bytes: int,
    batch_docs: int,
    address: str | None,
    cpus: int,
) -> Iterator[tuple[dict[str, pa.Table], Counter]]:
    """(tables, counters) of every batch, in input order, computed by Ray Data."""
    ray = start(address, cpus)
    items = _items(plan, selection)
    if not items:
        return
    dataset = (
        ray.data.from_arrow(pa.Table.from_pylist(items, schema=RAW))
        .map_batches(read_raw, batch_format="pyarrow", batch_size=batch_docs)
        .map_batches(
            stage,
            batch_format="pyarrow",
            batch_size=batch_docs,
            fn_kwargs={"policy": policy, "max_bytes": max_bytes},
        )
    )
    for block in dataset.iter_batches(batch_format="pyarrow", batch_size=None):
        for seq in sorted(set(block["seq"].to_pylist())):
            part = block.filter(pa.compute.equal(block["seq"], seq))
            tables = {
                name: pa.ipc.open_stream(ipc).read_all()
                for name, ipc in zip(part["name"].to_pylist(), part["ipc"].to_pylist())
            }
            counts = Counter(
                {
                    k: v[0] if k.startswith("seconds") else int(v[0])
                    for k, v in tables.pop("counts").to_pydict().items()
                }
            )
            yield tables, counts
