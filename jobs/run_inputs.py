"""The inputs of a run as it reads them: every document in input order, a local file whose
stamp the published run trusts taken as unchanged without being read, the others read and
hashed (unchanged bytes are Reused ids), the documents of a folder that could not be listed
carried over, and the read stage logged once the last input is read."""

from __future__ import annotations

import time
from collections.abc import Callable
from itertools import chain
from typing import TYPE_CHECKING

from chunkmill.jobs.counts import RunCounts
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline.batching import Reused
from chunkmill.pipeline.document import content_hash, make_doc_id
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.runstore import stamps
from chunkmill.pipeline.runstore.published_run import Previous, unchanged

if TYPE_CHECKING:
    from chunkmill.jobs.run_tally import Tally


def carry_unlisted(raws, prev: Previous | None, plan: list[sources.Source]):
    """After the reject of a folder that could not be listed, its documents of the previous
    run that the listing did not reach, as unchanged (Reused): a folder we cannot see is
    not a folder whose files were deleted. Without a reusable previous run there is nothing
    to carry: a guard then refuses to publish a run that would remove their chunks."""
    listed = None
    for raw in raws:
        yield raw
        if prev is not None and not isinstance(raw, Reused) and raw.reason == sources.UNLISTABLE:
            if listed is None:
                listed = {(s.root_uri, s.rel) for s in plan if not s.is_table}
            below = prev.under(raw.source, sources.folder_prefix(raw.path))
            yield from (
                Reused(d, source=raw.source)
                for d, path in below
                if (raw.source, path) not in listed
            )


def read_stamped(plan, selection, trusted: dict, known: dict, work: RunCounts):
    """Every document of ``plan`` in input order, as sources.read gives them, each local
    file stamped before it is read. A file whose stamp and doc_id are as ``trusted`` (the
    published run's inputs.parquet) recorded them, and whose document that run holds
    (``known``), is Reused without being read; every other file is read."""
    now, roots = time.time_ns(), {}
    max_bytes, stamped = selection.max_bytes, work.stamped
    for src in plan:
        if src.is_table:
            yield from sources.read([src], selection)
            continue
        stamp = stamps.of(sources.stat(src), now)
        if stamp is None:  # a URI, a reject of listing, a file changed a moment ago
            yield sources.read_file(src, max_bytes)
            continue
        rel = src.rel
        root = roots.get(src.root)  # (the stamps' name of the root, the root as given)
        if root is None:
            root = roots[src.root] = (stamps.root_key(src.root_uri), src.root_uri)
        key, doc_id = f"{root[0]}/{rel}", make_doc_id(rel)
        stamped.append((key, doc_id, stamp))
        if stamp[0] <= max_bytes and doc_id in known and trusted.get(key) == (doc_id, stamp):
            work.unread += 1
            work.bytes_read += stamp[0]
            yield Reused(doc_id, stamp[0], root[1])
        else:
            yield sources.read_file(src, max_bytes)


def trusted_stamps(prev: Previous | None, verify: bool) -> dict:
    """The stamps of the published run that this run may trust (none with --verify)."""
    return {} if prev is None or verify else stamps.load(prev.folder)


def hash_inputs(raws, prev: Previous, tally: Tally, on_fresh: Callable[[], None]):
    """Fresh RawDocuments for new or changed bytes, Reused ids for the rest, in order, as
    they are read (never all held at once), each noted in ``tally`` (``seen``, ``fresh``,
    ``work.reused``); ``on_fresh`` is called at the first fresh one (it starts the workers,
    whose start-up then overlaps the rest of the listing)."""
    work = tally.work
    for raw in raws:
        if isinstance(raw, Reused):  # carried over, or hashed by the Ray engine's read tasks
            item = raw
        else:
            work.bytes_read += len(raw.data or b"")
            doc_id = make_doc_id(raw.path)
            digest = content_hash(raw.data, raw.metadata) if raw.data is not None else None
            same = unchanged(prev.hashes, doc_id, digest)
            item = Reused(doc_id, len(raw.data), raw.source) if same else raw
            if not same:
                on_fresh()
                tally.fresh.add(doc_id)
        tally.seen.add(item.doc_id if isinstance(item, Reused) else make_doc_id(item.path))
        work.reused += isinstance(item, Reused)
        yield item


def read_logged(items, log: RunLog, work: RunCounts, t_start: float):
    """The items; once the last one is read, the read stage is logged, with the seconds
    spent reading and hashing (interleaved with the batches once a document changed)."""
    work.seconds["read"] = time.perf_counter() - t_start
    items, n = iter(items), 0
    while True:
        t = time.perf_counter()
        item = next(items, None)
        work.seconds["read"] += time.perf_counter() - t
        if item is None:
            break
        n += 1
        yield item
    log.stage(
        "read",
        documents=n,
        unchanged=work.reused,
        unread=work.unread,
        seconds=work.seconds["read"],
    )


def unchanged_or_stream(items) -> tuple[list | None, object]:
    """(every item, as a list, when none is fresh; else None, and all of them as they
    come): only a run that may have changed nothing needs to see its last input before
    its first batch, and then it holds Reused ids, never documents' bytes."""
    head = []
    for item in items:
        head.append(item)
        if not isinstance(item, Reused):
            return None, chain(head, items)
    return head, head
