"""Run a function over a stream of work items on a process pool, results in input order.

At most ``window`` items are in flight, so memory stays bounded however long the stream;
results come back in submission order, so the output never depends on the worker count.
``workers <= 1`` runs everything in this process (no pool, same code path).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: leave when the run that started us is gone (killed, say). Without
    it, workers of a killed run would wait on their task queue forever: the sibling workers
    keep its pipe open, so no end-of-file ever comes."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def ordered_map(fn: Callable, items: Iterable, workers: int, window: int | None = None) -> Iterator:
    if workers <= 1:
        for item in items:
            yield fn(item)
        return
    window = window or 2 * workers
    # spawn, not fork: polars and pyarrow keep thread pools that fork would copy half-made
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_exit_with_parent, initargs=(os.getpid(),)
    ) as pool:
        pending: deque = deque()
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
