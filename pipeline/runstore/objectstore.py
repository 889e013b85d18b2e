"""Output folders in an object store (``s3://bucket/prefix``, ``gs://...``, ``file://...``).

An object store has no rename and no fsync, so a run there is staged locally and published
by uploads whose order makes every instant safe:

1. **pull**: the published run (the run that ``PREFIX/CURRENT`` names) is downloaded into a
   local staging folder, each file checked against the size and sha256 its manifest records,
   together with the runs table and the ledger. The staging folder is then an ordinary
   local output folder.
2. The run itself is an ordinary local run on the staging folder (reuse, change set,
   manifest: all unchanged).
3. **push**: the new run's files are uploaded under ``PREFIX/runs/RUN_ID/`` (a file with
   the checksum of one of the published run, such as a part a night linked, is copied
   there within the store instead: a night uploads the parts it wrote), its manifest
   last; then the ledger, its checksum first (the ledger may name a run not yet published:
   harmless, see pipeline/runstore/ledger.py); then ``PREFIX/CURRENT`` is written in one PUT (the
   publish); then the runs table; then run prefixes beyond ``--keep`` are deleted. A dry
   run pushes nothing.

A run killed at any moment before step 3's PUT leaves ``CURRENT`` naming the old run, whose
files are untouched; after it, the new run is complete. Readers (``search``, ``stats``,
``check``, ``sql``, ``connect``) resolve ``CURRENT`` -> manifest -> files and read local
copies fetched through pyarrow (a cache keyed by run id), so DuckDB needs no extension.

Concurrent writers: pyarrow's filesystems offer no conditional create, so the rule is one
writer per prefix (schedule one nightly job). A second writer is detected, not prevented
from working: just before the PUT of ``CURRENT`` the run reads it again and refuses to
publish when it no longer names the run it started from (its generation).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from chunkmill.pipeline.runstore import POINTER
from chunkmill.pipeline.runstore.ledger import CHECKSUM as LEDGER_CHECKSUM
from chunkmill.pipeline.runstore.ledger import LEDGER
from chunkmill.pipeline.runstore.manifest import MANIFEST
from chunkmill.pipeline.runstore.runs_table import HISTORY


class ObjectStoreError(Exception):
    """The output prefix cannot be used (unreachable, damaged, or another writer won)."""


def is_uri(out: str | Path) -> bool:
    return "://" in str(out)


class Prefix:
    """One output prefix on a pyarrow filesystem."""

    def __init__(self, uri: str):
        from pyarrow import fs

        try:
            self.fs, path = fs.FileSystem.from_uri(uri)
        except (OSError, ValueError) as exc:
            raise ObjectStoreError(f"{uri}: cannot open: {exc}") from exc
        self.uri, self.root = uri.rstrip("/"), PurePosixPath(path.rstrip("/"))

    def key(self, *parts: str) -> str:
        return str(self.root.joinpath(*parts))

    def read(self, *parts: str) -> bytes | None:
        from pyarrow import fs

        key = self.key(*parts)
        if self.fs.get_file_info(key).type != fs.FileType.File:
            return None
        with self.fs.open_input_stream(key) as stream:
            return stream.read()

    def write(self, data: bytes, *parts: str) -> None:
        with self._output(*parts) as stream:
            stream.write(data)

    def upload(self, local: Path, *parts: str) -> None:
        with open(local, "rb") as src, self._output(*parts) as dst:
            shutil.copyfileobj(src, dst, 8 << 20)

    def copy(self, source: tuple[str, ...], target: tuple[str, ...]) -> None:
        """Copy an object within the store (S3: a server-side copy, no bytes through us)."""
        target_key = self.key(*target)
        if self.fs.type_name == "local":
            self.fs.create_dir(target_key.rsplit("/", 1)[0], recursive=True)
        self.fs.copy_file(self.key(*source), target_key)

    def _output(self, *parts: str):
        key = self.key(*parts)
        if self.fs.type_name == "local":  # file:// URIs: folders must exist (object stores
            self.fs.create_dir(key.rsplit("/", 1)[0], recursive=True)  # have none)
        return self.fs.open_output_stream(key)

    def current(self) -> str | None:
        data = self.read(POINTER)
        if data is None:
            return None
        try:
            return json.loads(data)["run"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ObjectStoreError(f"{self.uri}/{POINTER} is damaged: {exc}") from exc

    def run_ids(self) -> list[str]:
        from pyarrow import fs

        found = self.fs.get_file_info(fs.FileSelector(self.key("runs"), allow_not_found=True))
        return sorted(PurePosixPath(f.path).name for f in found if f.type == fs.FileType.Directory)


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def fetch_run(prefix: Prefix, run_id: str, into: Path) -> Path:
    """Download run ``run_id`` (manifest, then every file it lists, each verified) into
    ``into/runs/RUN_ID``; returns that folder."""
    folder = into / "runs" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    raw = prefix.read("runs", run_id, MANIFEST)
    if raw is None:
        raise ObjectStoreError(f"{prefix.uri}/runs/{run_id}/{MANIFEST} is missing")
    (folder / MANIFEST).write_bytes(raw)
    for entry in json.loads(raw)["files"]:
        local = folder / entry["name"]
        local.parent.mkdir(exist_ok=True)  # a part's folder (chunks.parquet/part-...)
        data = prefix.read("runs", run_id, entry["name"])
        if data is None:
            raise ObjectStoreError(f"{prefix.uri}/runs/{run_id}/{entry['name']} is missing")
        local.write_bytes(data)
        if len(data) != entry["bytes"] or _sha256(local) != entry["sha256"]:
            raise ObjectStoreError(
                f"{prefix.uri}/runs/{run_id}/{entry['name']} is damaged (size or sha256 "
                "differs from the manifest)"
            )
    return folder


def pull(prefix: Prefix, staging: Path) -> str | None:
    """Make ``staging`` a local output folder holding the prefix's published run and runs
    table; returns the published run id (None when nothing is published yet)."""
    from chunkmill.pipeline.runstore.parquet_files import write_atomic

    staging.mkdir(parents=True, exist_ok=True)
    history = prefix.read(HISTORY)
    if history is not None:
        (staging / HISTORY).write_bytes(history)
    for name in (LEDGER, LEDGER_CHECKSUM):
        data = prefix.read(name)
        if data is not None:
            (staging / name).write_bytes(data)
    run_id = prefix.current()
    if run_id is not None:
        fetch_run(prefix, run_id, staging)
        write_atomic(staging / POINTER, json.dumps({"run": run_id}).encode())
    return run_id


def push(prefix: Prefix, staging: Path, run_id: str, started_from: str | None, keep: int):
    """Upload the staged run ``run_id``, then publish it with one PUT of CURRENT (refused
    when another writer published since ``started_from``), then the runs table; prune."""
    folder = staging / "runs" / run_id
    held = _files_by_checksum(staging, started_from)
    for entry in json.loads((folder / MANIFEST).read_bytes())["files"]:
        same = held.get((entry["sha256"], entry["bytes"]))
        if same is not None:  # a part linked from the published run: copied there
            prefix.copy(("runs", started_from, same), ("runs", run_id, entry["name"]))
        else:
            prefix.upload(folder / entry["name"], "runs", run_id, entry["name"])
    prefix.upload(folder / MANIFEST, "runs", run_id, MANIFEST)
    for name in (LEDGER_CHECKSUM, LEDGER):  # the checksum first: a reader fetches it last
        if (staging / name).exists():
            prefix.upload(staging / name, name)
    now = prefix.current()
    if now != started_from:
        raise ObjectStoreError(
            f"{prefix.uri}: another writer published run {now} while this run was working "
            f"(it started from {started_from}); run {run_id} was uploaded but not published. "
            "One writer per output prefix."
        )
    prefix.write(json.dumps({"run": run_id}).encode(), POINTER)
    if (staging / HISTORY).exists():
        prefix.upload(staging / HISTORY, HISTORY)
    from chunkmill.pipeline import runstore

    prune(prefix, run_id, keep, runstore.history(staging))


def _files_by_checksum(staging: Path, run_id: str | None) -> dict[tuple[str, int], str]:
    """(sha256, bytes) -> name of the files of the published run ``run_id`` as pulled into
    ``staging`` (each checked against its manifest then): a file of the new run with the
    same checksum is copied from there, not uploaded (a night uploads what it wrote)."""
    path = staging / "runs" / str(run_id) / MANIFEST
    if run_id is None or not path.exists():
        return {}
    return {(f["sha256"], f["bytes"]): f["name"] for f in json.loads(path.read_bytes())["files"]}


def prune(prefix: Prefix, published: str, keep: int, records: list[dict]) -> None:
    """Delete the run prefixes (named by a run id) that ``--keep`` does not keep (see
    runs_table.kept: the ``keep`` most recent runs of ``records`` that changed something,
    and the published one)."""
    from chunkmill.pipeline import runstore
    from chunkmill.pipeline.runstore import runs_table

    keep_ids = runs_table.kept(records, keep, published)
    for old in prefix.run_ids():
        if runstore.RUN_ID.fullmatch(old) and old not in keep_ids:
            prefix.fs.delete_dir(prefix.key("runs", old))


def run_staged(uri: str, one_run, keep: int):
    """``one_run(staging_folder)`` (a local run) between a pull and a push of ``uri``."""
    prefix = Prefix(uri)
    staging = Path(tempfile.mkdtemp(prefix="chunkmill-staging-"))
    try:
        started_from = pull(prefix, staging)
        summary = one_run(staging)
        if not getattr(summary, "dry_run", False):
            push(prefix, staging, summary.run_id, started_from, keep)
        return summary
    finally:
        shutil.rmtree(staging, ignore_errors=True)


_CACHE: dict[tuple[str, str], Path] = {}


def published_copy(uri: str) -> Path:
    """A local copy of the published run of ``uri`` (fetched once per process and run id),
    for readers. Raises FileNotFoundError when nothing is published there."""
    prefix = Prefix(uri)
    run_id = prefix.current()
    if run_id is None:
        raise FileNotFoundError(f"{uri}: no published run ({POINTER} is missing)")
    key = (prefix.uri, run_id)
    if key not in _CACHE:
        root = Path(tempfile.mkdtemp(prefix="chunkmill-read-"))
        folder = fetch_run(prefix, run_id, root)
        history = prefix.read(HISTORY)
        if history is not None and not (folder / HISTORY).exists():
            (folder / HISTORY).write_bytes(history)
        _CACHE[key] = folder
    return _CACHE[key]


def published_with_ledger(uri: str) -> tuple[Path, Path]:
    """(the local copy of the published run of ``uri``, a local copy of its ledger) for
    `chunkmill changes` on an object store; the ledger is fetched anew on every call."""
    folder, prefix = published_copy(uri), Prefix(uri)
    for name in (LEDGER, LEDGER_CHECKSUM):
        data, local = prefix.read(name), folder.parent.parent / name
        if data is None:
            local.unlink(missing_ok=True)
        else:
            local.write_bytes(data)
    return folder, folder.parent.parent / LEDGER
