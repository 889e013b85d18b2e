"""The run layout of an output folder: one folder per run, a pointer to the published one.

    DIR/LOCK                 held by the run in progress (its PID and host)
    DIR/CURRENT              {"run": RUN_ID}: the published run; replaced atomically, last
    DIR/published            symlink to runs/RUN_ID (for duckdb/polars), replaced after it
    DIR/runs/RUN_ID/         documents, blocks, chunks, postings, rejects, changes, runs

A run writes only inside its own folder; readers follow CURRENT, so a run killed at any
moment leaves the published run intact, and half-written files are never visible there.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from pathlib import Path

LOCK = "LOCK"
POINTER = "CURRENT"
LINK = "published"
RUNS = "runs"


class LockedError(Exception):
    """Another live run holds the lock of this output folder."""


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary name, fsync, rename over ``path``, fsync the folder."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Lock:
    """DIR/LOCK, created exclusively; a lock left by a dead process on this host is taken
    over. Refused (LockedError, naming the file and the PID) while its holder lives."""

    def __init__(self, root: Path):
        self.path = Path(root) / LOCK
        self.held = False

    def __enter__(self) -> Lock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        me = json.dumps(
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        )
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                self._take_over_if_stale()
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(me)
            self.held = True
            return self
        raise LockedError(f"could not take {self.path}")

    def _take_over_if_stale(self) -> None:
        try:
            holder = json.loads(self.path.read_text() or "{}")
        except (OSError, ValueError):
            holder = {}
        pid, host = holder.get("pid"), holder.get("host")
        if isinstance(pid, int) and (host not in (None, socket.gethostname()) or _alive(pid)):
            raise LockedError(
                f"{self.path} is held by PID {pid} on {host} (running since "
                f"{holder.get('since', '?')}); wait for it to finish, or remove the lock file "
                "if that process is gone"
            )
        # stale: the holder is dead (or the file is unreadable). Remove it and retry; if two
        # runs race here, O_EXCL lets exactly one of them create the new lock.
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def __exit__(self, *exc) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + os.urandom(3).hex()


def run_dir(root: Path, run_id: str) -> Path:
    return Path(root) / RUNS / run_id


def published(root: Path) -> Path | None:
    """The folder of the published run of ``root``, or None when nothing is published."""
    pointer = Path(root) / POINTER
    if not pointer.exists():
        return None
    run_id = json.loads(pointer.read_text())["run"]
    return run_dir(root, run_id)


def resolve(out: Path) -> Path:
    """What readers read: the published run of a run folder, or ``out`` itself (the plain
    folders written by `mdchunk blocks` and `mdchunk chunks`)."""
    return published(out) or Path(out)


def publish(root: Path, run_id: str) -> None:
    """Make ``run_id`` the published run: its files are fsynced, then the pointer flips."""
    folder = run_dir(root, run_id)
    for f in folder.iterdir():
        with open(f, "rb") as fh:
            os.fsync(fh.fileno())
    fsync_dir(folder)
    write_atomic(Path(root) / POINTER, json.dumps({"run": run_id}).encode())
    _link_published(Path(root), run_id)


def _link_published(root: Path, run_id: str) -> None:
    """DIR/published -> runs/RUN_ID, for tools that read files (duckdb, polars). Replaced by
    a rename, so it too always names a complete run; CURRENT stays the source of truth."""
    tmp = root / f".{LINK}.{os.getpid()}.tmp"
    try:
        tmp.unlink(missing_ok=True)
        os.symlink(Path(RUNS) / run_id, tmp, target_is_directory=True)
        os.replace(tmp, root / LINK)
    except OSError:  # no symlinks on this filesystem: CURRENT is enough
        tmp.unlink(missing_ok=True)


def unpublished(root: Path) -> list[str]:
    """Run folders other than the published one, oldest first (left by killed runs, or old)."""
    runs = Path(root) / RUNS
    current = published(root)
    if not runs.is_dir():
        return []
    return sorted(
        p.name for p in runs.iterdir() if p.is_dir() and (current is None or p.name != current.name)
    )


def remove_run(root: Path, run_id: str) -> None:
    shutil.rmtree(run_dir(root, run_id), ignore_errors=True)


# --- the runs table -----------------------------------------------------------------------

HISTORY = "runs.parquet"


def history(root: Path) -> list[dict]:
    """Every run recorded in DIR/runs.parquet, oldest first."""
    import pyarrow.parquet as pq

    from mdchunk.pipeline import schemas

    path = Path(root) / HISTORY
    if not path.exists():
        return []
    from datetime import UTC

    import pyarrow as pa

    # ParquetFile, not read_table, and times read without their zone, which is put back
    # below: both would load pandas (a second of start-up) where it is installed.
    table = pq.ParquetFile(path).read().cast(schemas.RUNS)
    stamps = ("started_at", "ended_at")
    for name in stamps:
        table = table.set_column(
            table.schema.get_field_index(name), name, table[name].cast(pa.timestamp("ms"))
        )
    records = table.to_pylist()
    for r in records:  # a map column reads back as a list of pairs
        r["seconds"] = dict(r["seconds"] or [])
        for name in stamps:
            r[name] = r[name] and r[name].replace(tzinfo=UTC)
    return records


def last_published(records: list[dict]) -> dict | None:
    done = [r for r in records if r["status"] == "published"]
    return done[-1] if done else None


def new_record(run_id: str, plan, full: bool, policy, parser_version: str) -> dict:
    from datetime import UTC, datetime

    from mdchunk.pipeline.policy import CHUNKER_VERSION

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


def _write_history(root: Path, records: list[dict], also: Path | None = None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mdchunk.pipeline import schemas

    rows = [{f.name: r.get(f.name) for f in schemas.RUNS} for r in records]
    for r in rows:
        r["seconds"] = list((r["seconds"] or {}).items())
    table = pa.Table.from_pylist(rows, schema=schemas.RUNS)
    for target in [p for p in (also, Path(root)) if p is not None]:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        write_atomic(target / HISTORY, sink.getvalue().to_pybytes())


def finish(root: Path, records: list[dict], record: dict, succeeded: bool) -> None:
    """Record the run; when it succeeded, publish it (its folder gets the history too)."""
    from datetime import UTC, datetime

    record["ended_at"] = datetime.now(UTC)
    if succeeded:
        record["status"] = "published"
        _write_history(root, records + [record], also=run_dir(root, record["run_id"]))
        publish(root, record["run_id"])
    else:
        _write_history(root, records + [record])


def record_plain(out: Path, record: dict) -> None:
    """The runs table of a plain output folder (`mdchunk chunks`): this one run."""
    from datetime import UTC, datetime

    record.update(status="published", ended_at=datetime.now(UTC))
    _write_history(out, [record])


def clean_abandoned(root: Path, records: list[dict]) -> None:
    """Remove folders left by killed runs and record them as abandoned."""
    from datetime import UTC, datetime

    known = {r["run_id"] for r in records}
    for run_id in unpublished(root):
        if run_id in known:
            continue
        stamp = datetime.strptime(run_id.split("-")[0], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        records.append(
            {
                "run_id": run_id,
                "status": "abandoned",
                "started_at": stamp,
                "ended_at": None,
                "inputs": [],
                "full": None,
                "policy": None,
                "policy_hash": None,
                "chunker_version": None,
                "parser_version": None,
                "previous_run": None,
                "seconds": {},
                "error": "the run stopped before publishing (killed?)",
            }
        )
        remove_run(root, run_id)


def prune(root: Path, records: list[dict], keep: int) -> None:
    """Keep the folders of the ``keep`` most recent published runs (at least the current)."""
    published_ids = [r["run_id"] for r in records if r["status"] == "published"]
    for run_id in published_ids[: -max(keep, 1)]:
        remove_run(root, run_id)
