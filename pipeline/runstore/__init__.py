"""The run store: all the state of an output folder, in one home.

This module is the run layout and its publishing; each kind of file has a module of its own:

    lock            DIR/LOCK, held by the run in progress
    runs_table      DIR/runs.parquet, one row per run (and its copy in each run)
    manifest        a run's manifest.json: policy, parser key, file checksums
    parquet_files   how every table is written: atomically, one schema, checksummed pages
    stamps          the input files' stamps, so an unchanged file is not read again
    ledger          DIR/ledger.parquet, the chunk ids of every publication
    changeset       a run's changes.parquet against the published run
    change_records  the changes between any two publications, for consumers
    consumer        the change set a consumer applies, typed (chunkmill.changes)
    published_run   the published run as the next run reuses it (rows by document)
    guards          what a run may not publish (mass deletion, a silent policy change)
    objectstore     an output folder in an object store (s3://...): staged, then published

The run layout of an output folder: one folder per run, a pointer to the published one.

    DIR/LOCK                 held (flock) by the run in progress; see lock.py
    DIR/CURRENT              {"run": RUN_ID}: the published run; replaced atomically
    DIR/published            symlink to runs/RUN_ID (for duckdb/polars), replaced after it
    DIR/runs.parquet         the runs table (history), updated after CURRENT flips
    DIR/runs/RUN_ID/         the run's tables, its own runs.parquet, and manifest.json;
                             .mdchunk-run from its start: the store made it

CURRENT is the one source of truth for "published": readers follow it, and a run takes its
reuse decisions, reused rows and change set from the run it names, whose manifest records
the policy, parser key and file checksums that made it. A run publishes in steps (see
``commit``); the history says ``publishing`` until CURRENT has flipped, and the next start
resolves that from CURRENT. So a run killed at any instant leaves either the old or the new
run published, consistently, and half-written files are never visible.

Only folders the store made are ever removed (``is_run_folder``): a run id for a name and
the store's mark or a manifest inside (or nothing: a run killed as it started). Anything
else in DIR/runs is left alone, and a folder that cannot be removed is reported (``warn``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from chunkmill.pipeline.runstore import manifest, runs_table
from chunkmill.pipeline.runstore.lock import LOCK, Lock, LockedError  # noqa: F401 - re-exported
from chunkmill.pipeline.runstore.parquet_files import fsync_dir, write_atomic
from chunkmill.pipeline.runstore.runs_table import (  # noqa: F401 - re-exported
    HISTORY,
    new_record,
    read_history,
    write_history,
)

POINTER = "CURRENT"
LINK = "published"
RUNS = "runs"
MARK = ".mdchunk-run"  # written into a run folder as it is made: the store made it
# UTC time to the millisecond, then 6 random hex digits. Ids sort in the order runs started
# (pruning and the object store rely on it); ids of older versions lack the milliseconds.
RUN_ID = re.compile(r"\d{8}T\d{6}(\d{3})?Z-[0-9a-f]{6}")
# The temporary files the store writes into DIR (write_atomic's ``.NAME.PID.tmp``); a killed
# run leaves them, the next one removes them, and no other file of DIR.
OWN_TMP = re.compile(
    r"\.(CURRENT|published|runs\.parquet|ledger\.parquet|ledger\.sha256|report\.html)\.\d+\.tmp"
)
# The steps of ``commit``, in order. ``checkpoint(step)`` runs after each (tests kill there).
STEPS = ("files", "run_history", "manifest", "synced", "publishing", "pointer", "link", "done")


class RunStoreError(Exception):
    """The published run of an output folder cannot be read (one line: file and problem)."""


class DamagedRunError(RunStoreError):
    """A file a reader was about to serve does not match the run's manifest, or the run has
    no manifest to check it against (one line: the file, the problem, what to do)."""


def checkpoint(step: str) -> None:
    """Called after each step of ``commit``; does nothing (tests replace it to kill there)."""


def new_run_id() -> str:
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now * 1000) % 1000:03d}Z"
    return stamp + "-" + os.urandom(3).hex()


def run_dir(root: Path, run_id: str) -> Path:
    return Path(root) / RUNS / run_id


def make_run_dir(root: Path, run_id: str) -> Path:
    """The new folder of run ``run_id``, with the store's mark in it."""
    folder = run_dir(root, run_id)
    folder.mkdir(parents=True)
    (folder / MARK).write_bytes(run_id.encode())
    return folder


def is_run_folder(path: Path) -> bool:
    """Whether ``path`` is a run folder the store made: named by a run id, a folder (not a
    link), holding the store's mark or a manifest, or nothing (a run killed as it began)."""
    if not RUN_ID.fullmatch(path.name) or path.is_symlink() or not path.is_dir():
        return False
    try:
        names = {p.name for p in path.iterdir()}
    except OSError:
        return False
    return not names or MARK in names or manifest.MANIFEST in names


def is_store(root: Path) -> bool:
    """Whether the folder ``root`` holds a run store (what a run leaves, even one that
    failed or was killed)."""
    names = (POINTER, HISTORY, LOCK, RUNS, "ledger.parquet")
    return any((Path(root) / name).exists() for name in names)


def quiet(message: str) -> None:
    """The default ``warn``: say nothing."""


@dataclass
class Published:
    """The run CURRENT names, and why it cannot be trusted (``problem``), if so."""

    run_id: str | None = None
    folder: Path | None = None
    manifest: dict | None = None
    problem: str | None = None

    @property
    def usable(self) -> bool:
        return self.manifest is not None and self.problem is None


def pointed(root: Path) -> Published:
    """What DIR/CURRENT names (no file of the run is read)."""
    pointer = Path(root) / POINTER
    try:
        raw = pointer.read_bytes()
    except FileNotFoundError:
        return _unpointed(Path(root))
    try:
        run_id = json.loads(raw)["run"]
        assert isinstance(run_id, str) and RUN_ID.fullmatch(run_id)
    except (ValueError, KeyError, TypeError, AssertionError):
        return Published(problem=f"{pointer} is damaged (it does not name a run)")
    folder = run_dir(root, run_id)
    if not folder.is_dir():
        return Published(run_id, problem=f"{folder} is missing (CURRENT names it)")
    return Published(run_id, folder)


def _unpointed(root: Path) -> Published:
    """No CURRENT: nothing is published yet, unless the runs table of a run store records a
    run as published (CURRENT was deleted): a problem to say, never a fresh start, whose
    change set would remove nothing consumers hold."""
    if not ((root / RUNS).is_dir() or (root / "ledger.parquet").exists()):
        return Published()
    published = [
        r["run_id"] for r in read_history(root / HISTORY) or [] if r["status"] == "published"
    ]
    if not published:
        return Published()
    return Published(
        problem=f"{root / POINTER} is missing, yet the runs table records run {published[-1]} "
        "as published"
    )


def current(root: Path, verify: bool = True) -> Published:
    """The published run with its manifest, every file checked against it when ``verify``."""
    pub = pointed(root)
    if pub.folder is None:
        return pub
    try:
        pub.manifest = manifest.load(pub.folder)
    except manifest.ManifestError as exc:
        pub.problem = str(exc)
        return pub
    if verify:
        problems = manifest.verify(pub.folder, pub.manifest)
        if problems:
            pub.problem = "; ".join(problems)
    return pub


def published(root: Path) -> Path | None:
    """The folder of the published run of ``root``, or None when nothing is published.
    RunStoreError when CURRENT is damaged or names a missing folder."""
    pub = pointed(root)
    if pub.problem:
        raise RunStoreError(pub.problem)
    return pub.folder


def resolve(out: Path) -> Path:
    """What readers read: the published run of a run folder, or ``out`` itself (the plain
    folders written by `chunkmill blocks` and `chunkmill chunks`)."""
    return published(out) or Path(out)


def is_run_path(folder: Path) -> bool:
    """Whether ``folder`` lies where a run's folder does (DIR/runs/RUN_ID), so that it must
    have a manifest (``is_run_folder`` asks whether the store made it)."""
    return Path(folder).parent.name == RUNS and bool(RUN_ID.fullmatch(Path(folder).name))


def check_served(folder: Path, names: list[str]) -> None:
    """Before a reader serves the files ``names`` of ``folder``: each checked against the
    run's manifest (size, then sha256 over its bytes). DamagedRunError when one does not
    match, or when a run folder has no readable manifest. A folder that is no run and has
    no manifest (`chunkmill blocks`, `chunkmill chunks`) has nothing to check against."""
    folder = Path(folder)
    if not is_run_path(folder) and not (folder / manifest.MANIFEST).exists():
        return
    try:
        found = manifest.load(folder)
        files = [f for n in names for f in manifest.of_tables(found, [n]) or [n]]
        problems = [f"{folder / p}" for p in manifest.verify(folder, found, files)]
    except manifest.ManifestError as exc:
        problems = [str(exc)]
    if problems:
        root = folder.parent.parent if is_run_path(folder) else folder
        raise DamagedRunError(
            f"{'; '.join(problems)}; not served: a new `chunkmill run` into {root} recomputes "
            f"the run (`chunkmill check {root}` lists what is damaged)"
        )


def _sync(folder: Path, linked: frozenset[str] = frozenset()) -> None:
    """fsync every file of ``folder``, then the folder. ``linked``: files hard-linked from
    a published run, whose bytes were synced when it was published (the folder's fsync
    makes the new links durable)."""
    for f in folder.iterdir():
        if f.is_dir():  # a partitioned table's parts
            _sync(f, frozenset(n.split("/", 1)[1] for n in linked if n.startswith(f"{f.name}/")))
            continue
        if f.name in linked:
            continue
        with open(f, "rb") as fh:
            os.fsync(fh.fileno())
    fsync_dir(folder)


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


def commit(
    root: Path,
    records: list[dict],
    record: dict,
    known: dict | None = None,
    hashed: dict | None = None,
) -> None:
    """Publish a run whose files are all written: its own history, its manifest (last file
    of the folder), fsync, history ``publishing``, CURRENT, link, history ``published``.
    ``known``: the manifest entries of files hard-linked from a published run (synced
    already); ``hashed``: of files this run wrote and hashed as it wrote them."""
    from datetime import UTC, datetime

    root, folder = Path(root), run_dir(root, record["run_id"])
    checkpoint("files")
    record.update(status="published", ended_at=datetime.now(UTC))
    write_history(folder, records + [record], durable=False)  # synced with the folder
    checkpoint("run_history")
    entries = {**(hashed or {}), **(known or {})}
    manifest.write(folder, manifest.build(folder, record, entries), durable=False)
    checkpoint("manifest")
    _sync(folder, frozenset(known or ()))
    checkpoint("synced")
    write_history(root, records + [{**record, "status": "publishing"}])
    checkpoint("publishing")
    write_atomic(root / POINTER, json.dumps({"run": record["run_id"]}).encode())
    checkpoint("pointer")
    _link_published(root, record["run_id"])
    checkpoint("link")
    write_history(root, records + [record])
    checkpoint("done")


def repoint(root: Path, run_id: str) -> None:
    """Publish again a complete run folder (a rollback: jobs/rollback.py): CURRENT, then
    the link. Its history row stays as it was: it was published before."""
    root = Path(root)
    _sync(run_dir(root, run_id))
    write_atomic(root / POINTER, json.dumps({"run": run_id}).encode())
    _link_published(root, run_id)


def fail(root: Path, records: list[dict], record: dict, warn=quiet) -> None:
    """Record a run that failed, and remove its folder."""
    from datetime import UTC, datetime

    record["ended_at"] = datetime.now(UTC)
    write_history(root, records + [record])
    remove_run(root, record["run_id"], warn)


def remove_run(root: Path, run_id: str, warn=quiet) -> None:
    """Remove the folder of run ``run_id`` if the store made it (else leave it alone); its
    marks go last, so a removal stopped half-way is still known as a run folder."""
    folder = run_dir(root, run_id)
    if not is_run_folder(folder):
        return
    last = [folder / manifest.MANIFEST, folder / MARK]
    try:
        for path in folder.iterdir():
            if path not in last:
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        for path in last:
            path.unlink(missing_ok=True)
        folder.rmdir()
    except OSError as exc:
        warn(f"{folder} could not be removed ({exc.strerror or exc}); remove it by hand")


def run_folders(root: Path) -> list[str]:
    """Names of the run folders under DIR/runs, oldest first; anything else there (a
    folder someone put there, a file, a link) is not ours and is ignored."""
    runs = Path(root) / RUNS
    if not runs.is_dir():
        return []
    return sorted(p.name for p in runs.iterdir() if is_run_folder(p))


def unpublished(root: Path) -> list[str]:
    """Run folders other than the published one, oldest first (left by killed runs, or old)."""
    current_id = pointed(root).run_id
    return [r for r in run_folders(root) if r != current_id]


# --- the runs table -----------------------------------------------------------------------


def history(root: Path) -> list[dict]:
    """Every run of DIR, oldest first, as CURRENT makes it true: a run recorded as
    ``publishing`` is published if CURRENT names it, else it was abandoned; a published run
    missing from the table (a damaged runs.parquet) is taken from its folder's own copy."""
    return runs_table.resolved(Path(root), pointed(root))[0]


def start(root: Path, warn=quiet) -> list[dict]:
    """Under the lock, before a run: the history made true (see ``history``) and written
    back when that changed it; folders left by killed runs removed and recorded as
    ``abandoned`` (``warn``: those that cannot be removed); temporary files of killed
    writers removed. Returns the history."""
    from datetime import UTC, datetime

    root = Path(root)
    records, changed = runs_table.resolved(root, pointed(root))
    by_id = {r["run_id"]: r for r in records}
    for run_id in unpublished(root):  # no live run can be writing them: we hold the lock
        r = by_id.get(run_id)
        if r is not None and r["status"] == "published":
            continue  # an older published run, kept by --keep
        if r is None:
            stamp = datetime.strptime(run_id[:15], "%Y%m%dT%H%M%S")
            records.append(runs_table.abandoned(run_id, stamp.replace(tzinfo=UTC)))
            changed = True
        remove_run(root, run_id, warn)
    for tmp in root.glob(".*.tmp"):
        if OWN_TMP.fullmatch(tmp.name):
            tmp.unlink(missing_ok=True)
    if changed:
        write_history(root, records)
    return records


def prune(root: Path, records: list[dict], keep: int, warn=quiet) -> None:
    """Remove the folders of published runs beyond ``kept``."""
    keep_ids = runs_table.kept(records, keep, pointed(root).run_id)
    for r in records:
        if r["status"] == "published" and r["run_id"] not in keep_ids:
            remove_run(root, r["run_id"], warn)


def record_plain(out: Path, record: dict) -> None:
    """The runs table of a plain output folder (`chunkmill chunks`): this one run."""
    from datetime import UTC, datetime

    record.update(status="published", ended_at=datetime.now(UTC))
    write_history(out, [record])
