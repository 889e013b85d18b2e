"""Run a function over a stream of work items in watched worker processes, results in order.

Every item runs in a worker process (also with one worker), under a watchdog in this
process: an item that takes longer than ``limits.seconds`` or whose worker grows past
``limits.memory_mb`` of resident memory has its worker killed and replaced; so has an item
whose worker dies (a segfault, the kernel's OOM killer). Such a failed item is cut into
its parts (``split``: one document each) and the parts are run again one at a time; a part
that fails alone gets ``on_fail(part, reason, detail)`` as its result (a reject row), and
``merge`` puts the parts' results back together. So one bad document costs about two
timeouts, never the run.

At most ``window`` items are in flight, so memory stays bounded however long the stream;
results come back in submission order, so the output never depends on the worker count.
"""

from __future__ import annotations

import atexit
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from chunkmill.jobs.errors import EngineError
from chunkmill.jobs.worker import (
    WORKER_START_MB,
    Worker,
    inherited_address_space,
    receive,
    rss_mb,
)
from chunkmill.pipeline.doc_limits import DEFAULT_DOC_MEMORY_MB, DEFAULT_DOC_TIMEOUT, usable_cores

TICK = 0.05  # seconds between two looks of the watchdog


@dataclass(frozen=True)
class Limits:
    """What one item may cost in a worker: wall-clock seconds and resident memory."""

    seconds: float = DEFAULT_DOC_TIMEOUT
    memory_mb: int = DEFAULT_DOC_MEMORY_MB

    def options(self) -> dict[str, tuple[str, str]]:
        """(option, value) behind each reject reason of these limits."""
        return {
            "timeout": ("--doc-timeout", f"{self.seconds:g} s"),
            "too_much_memory": ("--doc-memory", f"{self.memory_mb} MB"),
        }

    def __post_init__(self):
        if not self.seconds > 0:  # also nan, which no elapsed time would ever pass
            raise ValueError(f"doc_timeout must be a number of seconds > 0, got {self.seconds}")


@dataclass(frozen=True)
class Failure:
    reason: str  # crashed | timeout | too_much_memory
    detail: str


def default_workers() -> int:
    return usable_cores()


@dataclass
class _Slot:
    """One submitted item: its result, or, after a failure, its parts and their results."""

    item: object
    parts: list | None = None
    results: dict = field(default_factory=dict)
    result: object = None
    done: bool = False


class Supervisor:
    """Worker processes under a watchdog; ``map`` yields fn(item) for every item, in order.
    A context manager: workers start on entry (their imports overlap the caller's reading),
    or with ``lazy`` when ``start`` is called or an item first needs one, and are stopped on
    exit, killed if need be (Ctrl-C, an error)."""

    def __init__(
        self,
        workers: int,
        limits: Limits = Limits(),
        split: Callable[[object], list] = lambda item: [item],
        merge: Callable[[list], object] = lambda results: results[0],
        on_fail: Callable[[object, Failure], object] | None = None,
        init: Callable | None = None,
        lazy: bool = False,
    ):
        self.n, self.limits, self.init, self.lazy = max(workers, 1), limits, init, lazy
        self.split, self.merge, self.on_fail = split, merge, on_fail
        self.workers: list[Worker] = []
        self.failures: list[Failure] = []
        self.start_failures = 0

    def __enter__(self) -> Supervisor:
        if not self.lazy:
            self.start()
        return self

    def start(self, count: int | None = None) -> None:
        """Start workers now (parked ones first) until ``count`` of them run (every one by
        default); ``map`` starts more as items wait for them."""
        want = self.n if count is None else min(count, self.n)
        parked = _PARKED.setdefault(self.limits.memory_mb, [])
        while parked and len(self.workers) < want:
            w = parked.pop()
            if w.alive():
                self.workers.append(w)
            else:
                w.stop(kill=True)
        self.workers += [self._start() for _ in range(want - len(self.workers))]

    def __exit__(self, exc_type, *exc) -> None:
        """After a clean finish, idle workers are parked for the next run of this process
        (a test run, a notebook: no second start-up); otherwise they are killed."""
        parked = _PARKED.setdefault(self.limits.memory_mb, [])
        for w in self.workers:
            clean = exc_type is None and w.task is None and w.ready and w.alive()
            if clean and len(parked) < 2 * default_workers():
                _park(parked, w)
            else:
                w.stop(kill=True)
        self.workers = []

    def _start(self) -> Worker:
        return Worker.start(self.limits.memory_mb, self.init)

    def map(
        self,
        fn: Callable,
        items: Iterable,
        window: int | None = None,
        local: Callable | None = None,
    ) -> Iterator:
        """``fn`` of every item, in order, on the workers; ``local(item)``, when given, is
        the result of an item that needs no worker (or None), found in this process."""
        window = window or 2 * self.n
        source = iter(items)
        slots: dict[int, _Slot] = {}
        todo: deque = deque()  # (key, item); key = (seq, part index or None)
        next_seq = emitted = 0
        exhausted = False
        while True:
            while not exhausted and len(slots) < window:
                item = next(source, _END)
                if item is _END:
                    exhausted = True
                    break
                slots[next_seq] = slot = _Slot(item)
                done = local(item) if local is not None else None
                if done is None:
                    todo.append(((next_seq, None), item))
                else:
                    slot.result, slot.done = done, True
                next_seq += 1
            while emitted in slots and slots[emitted].done:
                yield slots.pop(emitted).result
                emitted += 1
            if exhausted and not slots:
                return
            if todo and len(self.workers) < self.n:  # one more when items wait for one
                free = sum(1 for w in self.workers if w.task is None)
                if len(todo) > free:
                    self.start(len(self.workers) + 1)
            if todo or any(w.task is not None for w in self.workers):
                self._dispatch(fn, todo)
                for key, outcome in self._collect():
                    self._settle(slots, todo, key, outcome)

    def _dispatch(self, fn: Callable, todo: deque) -> None:
        for w in self.workers:
            if not todo:
                return
            if w.ready and w.task is None:
                key, item = todo.popleft()
                w.task, w.since = (key, item), time.monotonic()
                w.send((key, fn, item))

    def _collect(self) -> list[tuple]:
        """Wait a tick; return (key, outcome) of every finished or failed task, where
        outcome is ("ok", result) or a Failure. Replaces workers that had to go."""
        from multiprocessing.connection import wait

        out = []
        ready = wait([w.conn for w in self.workers], timeout=TICK)
        for i, w in enumerate(self.workers):
            if w.conn in ready:
                try:
                    _, status, value = receive(w.conn)
                except (EOFError, OSError):
                    status, value = "died", None
                if status == "ready":
                    w.ready = True
                    continue
                if status != "died":
                    out.append((w.task[0], _outcome(status, value)))
                    w.task = None
                    if self._too_big(w):
                        self._replace(i, kill=False)
                    continue
                w.reap()  # its pipe closed: it is gone, or going
            failure = self._check(w)
            if failure is None:
                continue
            if w.task is not None:
                out.append((w.task[0], failure))
            elif not w.ready:
                self.start_failures += 1
                if self.start_failures >= self._start_tries():
                    raise _cannot_start(failure.detail, self.limits.memory_mb)
            self._replace(i, kill=True)
        return out

    def _start_tries(self) -> int:
        """How many workers may die before they are ready: three, for a passing cause; one
        under an inherited address-space limit lower than a worker needs, the cause then
        (another start fails the same way, each taking seconds of failed allocations)."""
        limit = inherited_address_space()
        if limit is not None and limit < (WORKER_START_MB + self.limits.memory_mb) * 2**20:
            return 1
        return 3

    def _check(self, w: Worker) -> Failure | None:
        """Why this worker must go now, or None."""
        code = w.process.poll()
        if code is not None:
            how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
            return Failure("crashed", f"the worker process died ({how})")
        if w.task is None:
            return None
        if time.monotonic() - w.since > self.limits.seconds:
            return Failure("timeout", f"took longer than {self.limits.seconds:g} s (--doc-timeout)")
        if rss_mb(w.process.pid) > self.limits.memory_mb:
            return Failure(
                "too_much_memory",
                f"its worker grew past {self.limits.memory_mb} MB (--doc-memory)",
            )
        return None

    def _too_big(self, w: Worker) -> bool:
        """An idle worker holding most of the limit is recycled before its next task."""
        return rss_mb(w.process.pid) > 0.75 * self.limits.memory_mb

    def _replace(self, i: int, kill: bool) -> None:
        w = self.workers[i]
        if not kill:
            w.send(None)
        w.task = None
        w.stop(kill=kill)
        self.workers[i] = self._start()

    def _settle(self, slots: dict, todo: deque, key: tuple, outcome) -> None:
        seq, part = key
        slot = slots[seq]
        if isinstance(outcome, Failure):
            self.failures.append(outcome)
            if part is None:
                parts = self.split(slot.item)
                if len(parts) > 1:  # find the culprit: every part again, alone
                    slot.parts = parts
                    todo.extendleft(reversed([((seq, k), p) for k, p in enumerate(parts)]))
                    return
                slot.parts = parts
                part = 0
            if self.on_fail is None:
                raise RuntimeError(f"a work item failed: {outcome.reason}: {outcome.detail}")
            outcome = ("ok", self.on_fail(slot.parts[part], outcome))
        if part is None:
            slot.result, slot.done = outcome[1], True
            return
        slot.results[part] = outcome[1]
        if len(slot.results) == len(slot.parts):
            slot.result = self.merge([slot.results[k] for k in range(len(slot.parts))])
            slot.done = True


def _outcome(status: str, value) -> tuple | Failure:
    """What a worker's answer means: ("ok", result), or the Failure it reports."""
    if status == "ok":
        return ("ok", value)
    return Failure("too_much_memory" if status == "memory" else "crashed", value)


def _cannot_start(detail: str, memory_mb: int) -> Exception:
    """Why no worker starts: the address-space limit inherited from the shell (`ulimit
    -v`), from a batch scheduler or systemd's LimitAS, when there is one, else ``detail``."""
    limit = inherited_address_space()
    if limit is None:
        return RuntimeError(f"worker processes cannot start: {detail}")
    return EngineError(
        f"worker processes cannot start under the inherited address-space limit of "
        f"{limit // 2**20} MB (ulimit -v {limit // 1024}; {detail}): raise `ulimit -v` to at "
        f"least {WORKER_START_MB + memory_mb} MB, about {WORKER_START_MB} MB for a worker to "
        f"start plus --doc-memory {memory_mb} MB for a document (a lower --doc-memory needs less)"
    )


_END = object()
_PARKED: dict[int, list[Worker]] = {}  # idle workers between runs, by memory limit
_PARKED_EVER: list = []  # the exit hook that stops them, once registered


def _park(parked: list[Worker], w: Worker) -> None:
    if not _PARKED_EVER:
        _PARKED_EVER.append(atexit.register(shutdown))
    parked.append(w)


def prestart(limits: Limits, init: Callable | None) -> None:
    """Start one worker now and park it, unless one is parked already: its start-up (the
    imports, the warm-up: most of a second) then runs while the caller lists its inputs,
    and the next Supervisor with these limits takes it."""
    parked = _PARKED.setdefault(limits.memory_mb, [])
    if not any(w.alive() for w in parked):
        _park(parked, Worker.start(limits.memory_mb, init))


def shutdown() -> None:
    """Tell the parked workers to stop, at this process's exit: they wind down on their own
    (a worker's exit, with pyarrow loaded, takes a tenth of a second or more, which the
    command that ran them need not wait for; one whose parent is gone leaves by itself)."""
    for workers in _PARKED.values():
        while workers:
            workers.pop().let_go()


def ordered_map(
    fn: Callable, items: Iterable, workers: int, window: int | None = None, **options
) -> Iterator:
    """fn(item) for every item, in order, in watched worker processes (see Supervisor)."""
    with Supervisor(workers, **options) as supervisor:
        yield from supervisor.map(fn, items, window)
