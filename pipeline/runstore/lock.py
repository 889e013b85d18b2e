"""DIR/LOCK: one run at a time per output folder, kept honest by the kernel.

The lock is ``flock(LOCK_EX)`` on the file DIR/LOCK. The kernel releases it when the holder
dies, whatever its PID, PID namespace or host name, so a lock left by a killed run (or by
a container whose run was PID 1) never blocks the next run, and a live holder is never
mistaken for a dead one. The holder's PID, host and start time are written into the file
for the refusal message only; nothing decides on them.

The holder removes the file when it is done (while still holding the lock); a starter
that locked a file which was meanwhile removed or replaced sees that its inode is no longer
DIR/LOCK and tries again, so two runs can never both hold "the" lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

LOCK = "LOCK"
ATTEMPTS = 20


class LockedError(Exception):
    """Another live run holds the lock of this output folder."""


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def _holder(fd: int) -> dict:
    """What the holder wrote about itself ({} while it has not written yet)."""
    try:
        raw = os.pread(fd, 4096, 0)
        found = json.loads(raw or b"{}")
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


class Lock:
    """``with Lock(DIR):`` holds DIR/LOCK for the block; LockedError when a live run has it."""

    def __init__(self, root: Path):
        self.path = Path(root) / LOCK
        self.fd: int | None = None

    def __enter__(self) -> Lock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(ATTEMPTS):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                os.close(fd)
                raise LockedError(self._refusal(holder)) from None
            if not _same_file(fd, self.path):  # released and removed under us: try again
                os.close(fd)
                continue
            self._describe_self(fd)
            self.fd = fd
            return self
        raise LockedError(f"could not take {self.path}: it keeps being replaced")

    def _describe_self(self, fd: int) -> None:
        me = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)

    def _refusal(self, holder: dict) -> str:
        who = (
            f"PID {holder.get('pid')} on {holder.get('host')} (running since "
            f"{holder.get('since', '?')})"
            if holder
            else "a run that is starting"
        )
        return (
            f"{self.path} is held by {who}; wait for it to finish (the lock is released "
            "when that process ends, even if it is killed)"
        )

    def __exit__(self, *exc) -> None:
        if self.fd is None:
            return
        try:  # while still locked (see the module docstring), and only our own file
            if _same_file(self.fd, self.path):
                self.path.unlink(missing_ok=True)
        finally:
            os.close(self.fd)
            self.fd = None
