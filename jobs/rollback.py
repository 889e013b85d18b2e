"""Job: `chunkmill publish DIR RUN_ID`, publish again a run still on disk (a rollback).

The run's changes.parquet is rewritten relative to the run published until now (and its
manifest with it), so a consumer of the published change set undoes exactly what it
applied; the ledger records the publication, so `chunkmill changes --since` stays right
across the rollback; the next `chunkmill run` builds on the run published again.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from chunkmill.pipeline import runstore
from chunkmill.pipeline.runstore import ledger, manifest
from chunkmill.pipeline.runstore.published_run import open_published


class RollbackError(Exception):
    """The run cannot be published (unknown, not complete, or its folder pruned)."""


def publish(root: Path, run_id: str, warn=runstore.quiet) -> dict:
    """Make ``run_id`` the published run of ``root``; returns the change counts. ``warn``:
    told of run folders left by killed runs that cannot be removed."""
    from chunkmill.pipeline.runstore import changeset

    root = Path(root)
    with runstore.Lock(root):
        history = runstore.start(root, warn)
        statuses = {r["run_id"]: r["status"] for r in history}
        folder = runstore.run_dir(root, run_id)
        if statuses.get(run_id) != "published":
            why = f"its status is {statuses[run_id]}" if run_id in statuses else "no such run"
            raise RollbackError(f"{root}: cannot publish run {run_id}: {why}")
        try:
            found = manifest.load(folder)
        except manifest.ManifestError:
            found = None
        if found is None or manifest.verify(folder, found):
            kept = [r for r in runstore.run_folders(root) if r != run_id]
            raise RollbackError(
                f"{root}: run {run_id} is no longer on disk, or damaged (--keep decides how "
                f"many runs are kept). Runs on disk: {', '.join(kept) or 'none'}"
            )
        if runstore.pointed(root).run_id == run_id:
            return {"added": 0, "removed": 0, "unchanged": True}
        damage = ledger.problem(root)
        if damage is not None:
            raise RollbackError(f"{damage}; nothing was published; {ledger.RECOVERY}")
        prev, old, _ = open_published(root)
        stored = None if prev is None else partial(prev.take, "chunks")
        changes = changeset.of_folder(old, folder, stored)
        counts = changes.counts
        entries = manifest.entries(found)
        entries["changes.parquet"] = manifest.file_entry(folder / "changes.parquet")
        found.update(previous_run=old.run_id, files=[entries[n] for n in sorted(entries)])
        manifest.write(folder, found)
        ledger.record(
            root, run_id, folder / "chunks.parquet", kind="rollback", updated=changes.updated
        )
        runstore.repoint(root, run_id)
        return {
            "added": counts["added"],
            "removed": counts["removed"],
            "updated": counts["updated"],
            "unchanged": False,
        }
