"""One whole process, timed from launch to exit, with the peak RSS of its process tree
(the process and every child, e.g. a run's workers), sampled from /proc every 20 ms."""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path


def tree_rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants, in kB (0 once it has exited)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += int(
                next(ln.split()[1] for ln in status.splitlines() if ln.startswith("VmRSS:"))
            )
            for task in Path(f"/proc/{p}/task").iterdir():
                children = (task / "children").read_text().split()
                todo.extend(int(c) for c in children)
        except (OSError, StopIteration, ValueError):
            continue
    return total


def run(cmd: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """Run ``cmd`` to its end; its wall seconds and peak tree RSS in MB. Raises on failure,
    with the process's last error lines."""
    with tempfile.TemporaryFile() as err:  # a pipe could fill up and stall the process
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss_kb(proc.pid))
            time.sleep(0.02)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            err.seek(0)
            tail = "\n".join(err.read().decode(errors="replace").strip().splitlines()[-5:])
            raise RuntimeError(f"{' '.join(map(str, cmd))} exited {proc.returncode}: {tail}")
    return seconds, peak / 1024
