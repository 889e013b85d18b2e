"""Job: `mdchunk publish DIR RUN_ID`, publish again a run still on disk (a rollback).

The run's changes.parquet is rewritten relative to the run published until now, so a
consumer of the published change set undoes exactly what it applied; the ledger records
the publication, so `mdchunk changes --since` stays right across the rollback.
"""

from __future__ import annotations

from pathlib import Path

from mdchunk.jobs.run_job import write_changes
from mdchunk.pipeline import ledger, runstore


class RollbackError(Exception):
    """The run cannot be published (unknown, not complete, or its folder pruned)."""


def publish(root: Path, run_id: str) -> dict:
    """Make ``run_id`` the published run of ``root``; returns the change counts."""
    root = Path(root)
    with runstore.Lock(root):
        history = runstore.history(root)
        statuses = {r["run_id"]: r["status"] for r in history}
        folder = runstore.run_dir(root, run_id)
        if statuses.get(run_id) != "published":
            why = f"its status is {statuses[run_id]}" if run_id in statuses else "no such run"
            raise RollbackError(f"{root}: cannot publish run {run_id}: {why}")
        if not (folder / "chunks.parquet").exists():
            kept = runstore.unpublished(root)
            raise RollbackError(
                f"{root}: run {run_id} is no longer on disk (pruned; --keep decides how "
                f"many are kept). Runs on disk: {', '.join(kept) or 'only the published one'}"
            )
        current = runstore.published(root)
        if current is not None and current.name == run_id:
            return {"added": 0, "removed": 0, "unchanged": True}
        counts = write_changes(current, folder)
        ledger.record(root, run_id, folder / "chunks.parquet", kind="rollback")
        runstore.publish(root, run_id)
        return {"added": counts["added"], "removed": counts["removed"], "unchanged": False}
