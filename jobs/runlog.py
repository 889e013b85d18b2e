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

    def stage(self, name: str, **fields) -> None:
        if self.quiet:
            return
        if self.as_json:
            line = json.dumps(
                {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "stage": name, **fields},
                default=str,
                sort_keys=False,
            )
        else:
            parts = [f"{k}={_fmt(v)}" for k, v in fields.items()]
            line = f"mdchunk [{name}] " + " ".join(parts)
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
            line = f"mdchunk run: warning: {message}"
        print(line, file=self.stream, flush=True)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, dict):
        return ",".join(f"{k}:{_fmt(v)}" for k, v in value.items())
    return str(value)
