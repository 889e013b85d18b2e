"""The Ray engine: the same per-batch stages as the local engine, run as Ray tasks.

Two steps, so that a Ray run reuses exactly as a local run does:

1. **Read** (Ray Data): each file's bytes are read and hashed inside a Ray task, through
   pyarrow's filesystems, so a path may be local or any URI pyarrow supports. A document whose
   hash equals the published run's comes back as a bare id (its bytes stay where they were
   read); new or changed documents come back with their bytes. Tables are read by the driver.
2. **Process** (Ray tasks): the driver cuts the documents into the same batches as a local
   run, attaches the published rows of unchanged documents (``reuse.prepare``), and runs
   ``pipeline.batch.process`` on each batch in a Ray task, results in input order. A policy
   change re-packs stored blocks inside the tasks; unchanged documents under the same policy
   keep their rows without a task doing anything for them.

The driver writes and publishes the results exactly as a local run does, so the output, its
change set and its runs table are the same for both engines.
"""

from __future__ import annotations

import os
import socket
from collections import deque
from collections.abc import Callable, Iterable, Iterator

import pyarrow as pa

from chunkmill.jobs.errors import EngineError
from chunkmill.pipeline import schemas
from chunkmill.pipeline.batching import Reused
from chunkmill.pipeline.document import RawDocument, content_hash, make_doc_id
from chunkmill.pipeline.inputs import sources

RAW = schemas.RAW_DOCUMENTS
ENVELOPE = pa.schema([("seq", pa.int64()), ("name", pa.string()), ("ipc", pa.large_binary())])
INSTALL_HINT = "--engine ray needs Ray: pip install 'chunkmill[ray]'"


def read_raw(table: pa.Table, known: dict[str, str], max_bytes: int) -> pa.Table:
    """Ray task: read and hash each planned file (a reject decided by listing is kept as
    it is); drop the bytes of documents whose hash is ``known`` (the published run's),
    which the driver will reuse."""
    from chunkmill.pipeline.runstore.published_run import unchanged

    rows = table.to_pylist()
    for row in rows:
        if row["reason"] is not None:
            continue
        got = sources.fetch(row["uri"], max_bytes)
        row.update(error=got.detail, reason=got.reason, n_bytes=got.n_bytes)
        data = got.data
        digest = content_hash(data) if data is not None else None
        same = unchanged(known, make_doc_id(row["path"]), digest)
        if same:  # what the document weighs when batches are cut (batching.batched)
            row["n_bytes"] = len(data)
        row["data"] = None if same else data
        row["uri"] = "" if same else row["uri"]  # "" marks a reused document
    return pa.Table.from_pylist(rows, schema=RAW)


def _file_rows(plan: list[sources.Source]) -> list[dict]:
    """One row per planned file, read later in Ray; a reject decided by listing (bad name,
    outside the root, unlistable folder) is carried as it is."""
    rows = []
    for i, src in enumerate(plan):
        reason, detail = src.problem or (None, None)
        rows.append(
            {
                "seq": i,
                "uri": src.uri,
                "path": src.rel,
                "source": src.root_uri,
                "data": None,
                "error": detail,
                "reason": reason,
                "n_bytes": None,
            }
        )
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
                # "local": a Ray of our own even when another one runs on this machine;
                # without it Ray joins the latest cluster started here (its file in /tmp/ray)
                # and refuses num_cpus. A user who wants that cluster says --ray-address auto.
                ray.init(address="local", num_cpus=cpus, **options)
        except EngineError:
            raise
        except (Exception, SystemExit) as exc:  # ray exits the process when it gives up
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


def read(
    plan: list[sources.Source],
    selection: sources.Selection,
    known: dict[str, str],
    batch_docs: int,
    address: str | None,
    cpus: int,
) -> Iterator[RawDocument | Reused]:
    """Every document of ``plan`` in input order: Reused for files whose bytes hash as in
    ``known`` (doc_id -> content hash of the published run), else a RawDocument with bytes.
    Files are read in Ray tasks; tables by the driver (they are one file each)."""
    files = [src for src in plan if not src.is_table]
    if not files:
        yield from sources.read(plan, selection)
        return
    ray = start(address, cpus)
    dataset = ray.data.from_arrow(pa.Table.from_pylist(_file_rows(files), schema=RAW))
    dataset = dataset.map_batches(
        read_raw,
        batch_format="pyarrow",
        batch_size=batch_docs,
        fn_kwargs={"known": known, "max_bytes": selection.max_bytes},
    )
    read_files = dataset.iter_batches(batch_format="pyarrow", batch_size=None)
    rows = (row for part in read_files for row in part.to_pylist())
    for src in plan:
        if src.is_table:
            yield from sources.read([src], selection)
            continue
        row = next(rows)
        if row["uri"] == "":
            yield Reused(make_doc_id(row["path"]), row["n_bytes"], row["source"])
        else:
            yield RawDocument(
                row["path"],
                row["source"],
                row["data"],
                row["error"],
                {},
                row["reason"] if row["data"] is None else None,
                row["n_bytes"],
            )


def ordered_map(
    fn: Callable,
    items: Iterable,
    address: str | None,
    cpus: int,
    window: int | None = None,
    local: Callable | None = None,
) -> Iterator:
    """``fn`` over ``items`` in Ray tasks (one CPU each), results in input order, at most
    ``window`` in flight (the same contract as jobs.pool.Supervisor.map: ``local(item)``,
    when not None, is the result of an item that needs no task)."""
    ray = start(address, cpus)
    task = ray.remote(num_cpus=1)(_call)
    window = window or 2 * max(1, int(ray.cluster_resources().get("CPU", cpus)))
    pending: deque = deque()  # (True, result) found here, or (False, a task's reference)
    for item in items:
        done = local(item) if local is not None else None
        pending.append((True, done) if done is not None else (False, task.remote(fn, item)))
        if len(pending) >= window:
            yield _result(ray, *pending.popleft())
    while pending:
        yield _result(ray, *pending.popleft())


def _result(ray, here: bool, found):
    return found if here else ray.get(found)


def _call(fn: Callable, item):
    return fn(item)
