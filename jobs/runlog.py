"""One structured log line per stage: human text by default, JSON lines with --log-json."""

from __future__ import annotations

import json
import sys
import time


class RunLog:
    def __init__(self, as_json: bool = False, stream=None, quiet: bool = False):
        self.as_json = as_json
        self.stream = stream or sys.stderr
        self.quiet = quiet

    def stage(self, name: str, *, json_also: dict | None = None, **fields) -> None:
        """One line for stage ``name``; ``json_also``: fields only --log-json writes (kept
        there for the readers of earlier versions)."""
        if self.quiet:
            return
        if self.as_json:
            ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            line = json.dumps(
                {"ts": ts, "stage": name, **(json_also or {}), **fields},
                default=str,
                sort_keys=False,
            )
        else:
            parts = [f"{k}={_fmt(v)}" for k, v in fields.items()]
            line = f"chunkmill [{name}] " + " ".join(parts)
        print(line, file=self.stream, flush=True)

    def warn(self, message: str) -> None:
        """One line about something the run found and worked around (it goes on)."""
        if self.quiet:
            return
        if self.as_json:
            line = json.dumps(
                {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "warning": message}
            )
        else:
            line = f"chunkmill run: warning: {message}"
        print(line, file=self.stream, flush=True)


MAIN_STAGES = ("read", "write", "changes")  # in the main process, one after another
WORKER_STAGES = ("parse", "chunk", "write_parts")  # in the workers, alongside the main process


def run_seconds(seconds: dict, workers: int) -> dict:
    """A run's seconds (its record's ``seconds``) as the log shows them, so that nothing
    reads as if it added up: the wall time; the main process's stages, which follow each
    other within it; and the workers' stages, their seconds summed over the workers, spent
    while the main process works (they can pass the wall time)."""
    fields: dict = {"wall_seconds": seconds["total"]}
    main = {k: v for k, v in seconds.items() if k in MAIN_STAGES}
    summed = {k: v for k, v in seconds.items() if k in WORKER_STAGES}
    if main:
        fields["main_seconds"] = main
    if summed:
        fields["summed_worker_seconds"] = summed
        fields["workers"] = workers
    return fields


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, dict):
        return ",".join(f"{k}:{_fmt(v)}" for k, v in value.items())
    return str(value)
