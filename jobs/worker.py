"""A worker process of the watched pool (jobs/pool.py): how it starts, serves and is held.

A worker is a fresh interpreter started with subprocess, not multiprocessing: spawn would
run the caller's __main__ again in every worker (a plain script without a main guard would
start itself over), fork would copy the half-made thread pools of polars/pyarrow. It gets
the parent's sys.path, then talks over two inherited pipes: tasks in, results out.
"""

from __future__ import annotations

import importlib
import os
import pickle
import resource
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: a run that starts no worker never loads it
    from multiprocessing.connection import Connection

WARM_MODULES = ("chunkmill.pipeline.batch", "chunkmill.jobs.part_work")  # imported before ready
# About the address space a warmed-up worker needs to start (polars, pyarrow, their threads)
WORKER_START_MB = 1024
STDERR = subprocess.DEVNULL  # None (inherit) with --debug


def _exit_with_parent(parent: int) -> None:
    """Leave when the run that started us is gone (killed, say): nobody else would stop us."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


# The first lines ask the kernel to kill the worker when the run that started it dies
# (Linux's parent-death signal; a kill -9 of the run leaves no worker behind, even one
# still importing its modules, which can take seconds on a loaded machine), then check
# that the run did not die before that request. Elsewhere the watcher thread of ``serve``
# alone notices (``_exit_with_parent``).
_BOOT = """
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
except (AttributeError, OSError):
    pass
if os.getppid() != int(sys.argv[3]):
    os._exit(1)
from multiprocessing.connection import Connection
inbox = Connection(int(sys.argv[1]), writable=False)
outbox = Connection(int(sys.argv[2]), readable=False)
sys.path[:] = inbox.recv()
from chunkmill.jobs.worker import serve
serve(inbox, outbox, *inbox.recv())
"""


class Absent:
    """An import finder that says some packages are not installed, in a process of our
    own where nothing needs them. pyarrow imports pandas the first time it turns Python
    lists into arrays, only to ask whether they are pandas objects (a quarter of a second of
    CPU per worker at start, more under load), and numpy when pyarrow itself is imported
    (50-140 ms of every process's start-up), for modules that a worker (pandas, numpy) or
    the main process of ``chunkmill run`` (numpy; see ``cli.entry``) never uses."""

    def __init__(self, *names: str, why: str):
        self.names, self.why = names, why

    def find_spec(self, name: str, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"{name} {self.why}", name=name)
        return None


def serve(inbox, outbox, parent: int, memory_mb: int, init: Callable | None) -> None:
    """A worker: take (seq, fn, item) messages, answer (seq, "ok", result), (seq, "error",
    text) or (seq, "memory", text) (out of address space); None ends it. Ctrl-C is the
    parent's business: the parent stops its workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.meta_path.insert(0, Absent("pandas", "numpy", why="is not used in chunkmill's workers"))
    _exit_with_parent(parent)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash leaves no core file behind
    for name in WARM_MODULES:
        importlib.import_module(name)
    if init is not None:
        init()
    _limit_address_space(memory_mb)
    send(outbox, (None, "ready", os.getpid()))
    while True:
        msg = inbox.recv()
        if msg is None:
            return
        seq, fn, item = msg
        try:
            send(outbox, (seq, "ok", fn(item)))
        except MemoryError:  # past the address-space cap: an allocation too fast to watch
            send(outbox, (seq, "memory", _out_of_address_space(memory_mb)))
        except Exception as exc:  # noqa: BLE001 - a bug on one item must not end the run
            send(outbox, (seq, "error", _describe(exc)))


def send(conn: Connection, msg) -> None:
    """``conn.send(msg)`` with its large buffers (Arrow tables' columns) out of band: each
    goes down the pipe from its own memory, so the answer costs no pickled copy of them
    (that copy, and the pickler's growing buffer, were twice the tables). ``receive`` reads
    it."""
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(msg, protocol=5, buffer_callback=buffers.append)
    conn.send_bytes(len(buffers).to_bytes(8, "little") + head)
    for buffer in buffers:
        conn.send_bytes(buffer.raw())


def receive(conn: Connection):
    """What ``send`` sent."""
    first = conn.recv_bytes()
    n = int.from_bytes(first[:8], "little")
    buffers = [conn.recv_bytes() for _ in range(n)]
    return pickle.loads(memoryview(first)[8:], buffers=buffers)


def _describe(exc: Exception) -> str:
    """One line: the exception and where it was raised (file:line of the last frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    message = (str(exc).splitlines() or [""])[0][:200]
    return f"internal error ({type(exc).__name__}: {message}){where}"


def _out_of_address_space(memory_mb: int) -> str:
    limit = inherited_address_space()
    cap = f"{limit // 2**20} MB" if limit is not None else "its limit"
    return (
        f"its worker ran out of address space at {cap} (the cap set for --doc-memory "
        f"{memory_mb} MB, or a lower inherited `ulimit -v`)"
    )


def _limit_address_space(memory_mb: int) -> None:
    """A backstop behind the watchdog's resident-memory check, for allocations too fast to
    be seen: address space beyond what the warmed-up worker reserves (thread stacks and
    allocator arenas make that much larger than what it uses) plus four times the limit.
    Only ever lowered: an address-space limit the run inherited (`ulimit -v`) stays."""
    try:
        size = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return
    cap = size + 4 * memory_mb * 2**20 + 2**31
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (_lower(soft, cap), _lower(hard, cap)))


def _lower(inherited: int, wanted: int) -> int:
    return wanted if inherited == resource.RLIM_INFINITY else min(inherited, wanted)


def inherited_address_space() -> int | None:
    """The address-space limit (soft) this process runs under, in bytes; None if none."""
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def rss_mb(pid: int) -> float:
    """Resident memory of a process, from /proc (0 where there is none)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


@dataclass
class Worker:
    """The parent's handle on one worker process."""

    process: subprocess.Popen
    inbox: Connection  # we send tasks into it
    conn: Connection  # results come out of it; end-of-file when the worker dies
    ready: bool = False
    task: tuple | None = None  # (key, item) in progress
    since: float = 0.0

    @classmethod
    def start(cls, memory_mb: int, init: Callable | None) -> Worker:
        from multiprocessing.connection import Connection

        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(task_r), str(result_w), str(os.getpid())],
            pass_fds=(task_r, result_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=STDERR,
        )
        os.close(task_r)
        os.close(result_w)
        w = cls(process, Connection(task_w, readable=False), Connection(result_r, writable=False))
        w.send(list(sys.path))
        w.send((os.getpid(), memory_mb, init))
        return w

    def send(self, msg) -> bool:
        try:
            self.inbox.send(msg)
            return True
        except OSError:  # it died: its pipe is broken; the watchdog will see it
            return False

    def reap(self) -> None:
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def alive(self) -> bool:
        return self.process.poll() is None

    def let_go(self) -> None:
        """Tell it to stop and close our ends of its pipes, without waiting: it ends on its
        own (its exit is reaped by whoever outlives it)."""
        self.send(None)
        self.inbox.close()
        self.conn.close()

    def stop(self, kill: bool) -> None:
        if kill and self.alive():
            self.process.kill()
        self.reap()
        self.inbox.close()
        self.conn.close()
