"""One whole process, timed from launch to exit, with the peak RSS of its process tree
(the process and every child, e.g. a run's workers), sampled from /proc every 20 ms."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_poison import tree_rss_mb  # noqa: E402 (the poison benchmark's sampler)


def run(cmd: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """Run ``cmd`` to its end; its wall seconds and peak tree RSS in MB. Raises on failure,
    with the process's last error lines."""
    with tempfile.TemporaryFile() as err:  # a pipe could fill up and stall the process
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        peak = 0.0
        while proc.poll() is None:
            peak = max(peak, tree_rss_mb(proc.pid))
            time.sleep(0.02)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            err.seek(0)
            tail = "\n".join(err.read().decode(errors="replace").strip().splitlines()[-5:])
            raise RuntimeError(f"{' '.join(map(str, cmd))} exited {proc.returncode}: {tail}")
    return seconds, peak
