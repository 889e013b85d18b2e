"""manifest.json: what a run folder holds and what produced it, written last, before publish.

The manifest is the run's own record of itself: its policy (and hash), chunker version and
parser key (what decides whether a later run may reuse its rows), and one entry per file
with its size in bytes, row count and sha256. A folder without a manifest is not a
complete run. The same document can describe a run kept anywhere (an object store, say):
file names are relative, and a reader checks each file against its size and checksum.

    {"format": "mdchunk.manifest/1", "run_id": ..., "created_at": ...,
     "policy": {...}, "policy_hash": ..., "chunker_version": ..., "parser_key": ...,
     "assembly_key": ...,
     "previous_run": ..., "files": [{"name": "chunks.parquet", "bytes": ..., "rows": ...,
     "sha256": ...}, ...]}
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from chunkmill.pipeline.runstore.parquet_files import write_atomic

MANIFEST = "manifest.json"
FORMAT = "mdchunk.manifest/1"


class ManifestError(Exception):
    """A run folder's manifest is missing or unreadable."""


def sha256_file(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def file_entry(path: Path, name: str | None = None) -> dict:
    """The entry of one file; ``name``: its name in the run folder (a part's is
    ``chunks.parquet/part-000000.parquet``), by default the file's own."""
    import pyarrow.parquet as pq

    rows = pq.read_metadata(path).num_rows if path.suffix == ".parquet" else None
    return {
        "name": name or path.name,
        "bytes": path.stat().st_size,
        "rows": rows,
        "sha256": sha256_file(path),
    }


def build(folder: Path, record: dict, known: dict[str, dict] | None = None) -> dict:
    """The manifest of a complete run folder, from its record in the runs table. ``known``:
    entries already verified for files hard-linked from another run (not hashed again)."""
    known = known or {}
    files = []
    for name in data_files(folder):
        path = Path(folder) / name
        entry = known.get(name)
        same = entry is not None and entry["bytes"] == path.stat().st_size
        files.append(dict(entry) if same else file_entry(path, name))
    return {
        "format": FORMAT,
        "run_id": record["run_id"],
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "policy": json.loads(record["policy"]),
        "policy_hash": record["policy_hash"],
        "chunker_version": record["chunker_version"],
        "parser_key": record["parser_version"],
        "assembly_key": record.get("assembly_key"),
        "previous_run": record["previous_run"],
        "files": files,
    }


def data_files(folder: Path) -> list[str]:
    """The names of a run folder's Parquet files, parts as ``chunks.parquet/part-...``."""
    names = []
    for path in sorted(Path(folder).glob("*.parquet")):
        if path.is_dir():
            names += [f"{path.name}/{p.name}" for p in sorted(path.glob("part-*.parquet"))]
        else:
            names.append(path.name)
    return names


def of_tables(manifest: dict, names: list[str]) -> list[str]:
    """The manifest's files of these file names (``chunks.parquet``: every part of it)."""
    listed = [f["name"] for f in manifest["files"]]
    return [n for n in listed if n in names or n.split("/")[0] in names]


def write(folder: Path, manifest: dict, durable: bool = True) -> None:
    data = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    write_atomic(Path(folder) / MANIFEST, data.encode(), durable)


def load(folder: Path) -> dict:
    path = Path(folder) / MANIFEST
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path} is missing (an incomplete run, or older chunkmill)") from None
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path} is unreadable: {exc}") from None
    if not isinstance(found, dict) or found.get("format") != FORMAT or "files" not in found:
        raise ManifestError(f"{path} is not an chunkmill manifest ({FORMAT})")
    return found


def entries(manifest: dict) -> dict[str, dict]:
    return {f["name"]: f for f in manifest["files"]}


def verify(folder: Path, manifest: dict, names: list[str] | None = None) -> list[str]:
    """Problems of the listed files (all by default): missing, wrong size, wrong sha256."""
    problems = []
    listed = entries(manifest)
    for name in names if names is not None else sorted(listed):
        entry, path = listed.get(name), Path(folder) / name
        if entry is None:
            problems.append(f"{name}: not in the manifest")
        elif not path.is_file():
            problems.append(f"{name}: missing")
        elif (size := path.stat().st_size) != entry["bytes"]:
            problems.append(
                f"{name}: damaged ({size} bytes where the manifest says {entry['bytes']})"
            )
        elif sha256_file(path) != entry["sha256"]:
            problems.append(f"{name}: damaged (its sha256 differs from the manifest's)")
    return problems
