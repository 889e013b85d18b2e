"""How a run's documents are cut into batches and parts, whatever the engine.

A batch is what one call of ``batch.process`` works on: at most ``BATCH_DOCS`` documents and
``BATCH_BYTES`` of input (``batched``). A part is a run of batches written as one file of a
partitioned table: where a part ends depends only on the document's own id and weight
(``ends_part``), so a night rewrites only the parts its changes fall in (``parted``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from chunkmill.pipeline.document import make_doc_id

BATCH_DOCS = 256  # documents per batch at most; one Parquet row group per batch and table
# and input bytes per batch at most (a larger document is a batch of its own). A worker's
# memory grows with the bytes of its batch (about 65 MB per MB of markdown), and batches cut
# by count alone held 0.1 to 2.3 MB on the shared corpora: the heaviest batch decided the
# run's peak, and a larger corpus had more chances of a heavier one.
BATCH_BYTES = 1 << 20
# Input bytes per part of a run's partitioned tables, on average, each document weighing
# PART_DOC_BYTES more than its bytes (pipeline/runstore/parquet_files.py): a part ends after
# a document whose id, read as a number, falls below its weight (``ends_part``), so an edit,
# an insertion or a deletion changes one part (two when it moves a part's end) and the parts
# around it stay as they were, whatever the corpus' size. A night rewrites the parts its
# changes fall in: a smaller part is less to rewrite, a larger one fewer batches and files
# (docs/design.md, Decisions).
PART_BYTES = 1 << 20
PART_DOC_BYTES = 1 << 10  # so that a part of small documents holds about a thousand


class Reused(NamedTuple):
    """A document whose bytes did not change since the previous run (``n_bytes`` of them:
    what it weighs when batches are cut, as if it had been read), read from ``source`` (the
    INPUT as this run spells it; None: as the previous run recorded it). A named tuple, not
    a frozen dataclass: a night makes one per input file, and a tuple is made in a fifth
    of the time."""

    doc_id: str
    n_bytes: int = 0
    source: str | None = None


def batched(items: Iterable, n: int, max_bytes: int = BATCH_BYTES) -> Iterator[list]:
    """Consecutive items in batches of at most ``n`` items and, unless one item alone is
    larger, ``max_bytes`` of input. An item weighs its document's bytes, whether it comes
    read (a RawDocument) or reused unread (a Reused): so an incremental run cuts the very
    batches (and row groups) a full run over the same files cuts."""
    batch: list = []
    size = 0
    for item in items:
        weight = _weight(item)
        if batch and (len(batch) == n or size + weight > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += weight
    if batch:
        yield batch


def in_threads(step: Callable, items: Iterable, threads: int) -> Iterator:
    """``step(item)`` for every item, in order, with up to ``threads`` items worked on at
    once: the Rust core leaves the interpreter's lock while it works, so the batches of a
    library call overlap there (their Python parts take turns). At most twice ``threads``
    items are in flight; one thread works them one after another."""
    if threads <= 1:
        yield from map(step, items)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads, thread_name_prefix="chunkmill") as pool:
        window: deque = deque()
        for item in items:
            window.append(pool.submit(step, item))
            if len(window) > 2 * threads:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()


def ends_part(doc_id: str, weight: int) -> bool:
    """Whether a part ends after this document, of ``weight`` input bytes: with a chance of
    (weight + PART_DOC_BYTES) / PART_BYTES, drawn from its id (a hash of its path), so where
    parts end depends on no other document, and an edit moves an end only where it changes
    that chance across the draw."""
    return int(doc_id[:8], 16) * PART_BYTES < (weight + PART_DOC_BYTES) << 32


def item_id(item) -> str:
    """The document id of a Reused or RawDocument item."""
    return item.doc_id if isinstance(item, Reused) else make_doc_id(item.path)


def parted(
    items: Iterable,
    n: int = BATCH_DOCS,
    max_bytes: int = BATCH_BYTES,
    link: Callable[[list[Reused]], object] | None = None,
) -> Iterator[tuple[object, bool]]:
    """``batched``, with batches that never span a part: (batch, whether it ends its part).
    ``link(items)`` is offered every part whose items are all Reused; what it returns, if
    not None, stands for the part (one unit, ending it), its items then cut into no batch.
    The batches of the other parts are cut as a cold run cuts them, whatever was linked."""
    batch: list = []
    size = 0
    held: list | None = [] if link is not None else None  # the part so far, all Reused

    def cut(item):
        nonlocal batch, size
        weight = _weight(item)
        full = None
        if batch and (len(batch) == n or size + weight > max_bytes):
            full, batch, size = batch, [], 0
        batch.append(item)
        size += weight
        return full

    def end(part: list | None):
        nonlocal batch, size, held
        unit = link(part) if part else None
        held = [] if link is not None else None
        if unit is not None:
            return [(unit, True)]
        out = [(b, False) for b in map(cut, part or []) if b is not None]
        if batch:
            out.append((batch, True))
        batch, size = [], 0
        return out

    for item in items:
        if held is not None and isinstance(item, Reused):
            held.append(item)
        else:
            for x in held or []:  # a part not all Reused: its first items cut as they came
                if (full := cut(x)) is not None:
                    yield full, False
            held = None
            if (full := cut(item)) is not None:
                yield full, False
        if ends_part(item_id(item), _weight(item)):
            yield from end(held)
    if held or batch:
        yield from end(held)


def _weight(item) -> int:
    if isinstance(item, Reused):
        return item.n_bytes
    data = getattr(item, "data", None)
    return len(data) if data is not None else 0
