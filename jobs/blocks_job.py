"""Job: INPUT -> documents.parquet, blocks.parquet, rejects.parquet."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from chunkmill.pipeline import batch as batch_stages
from chunkmill.pipeline import document, sources
from chunkmill.pipeline.runstore import parquet_files

BATCH_DOCS = 256  # documents per batch at most; one Parquet row group per batch and table
# and input bytes per batch at most (a larger document is a batch of its own). A worker's
# memory grows with the bytes of its batch (about 65 MB per MB of markdown), and batches cut
# by count alone held 0.1 to 2.3 MB on the shared corpora: the heaviest batch decided the
# run's peak, and a larger corpus had more chances of a heavier one.
BATCH_BYTES = 1 << 20


@dataclass
class BlocksSummary:
    documents: int = 0
    blocks: int = 0
    rejects: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)
    bytes: int = 0
    seconds: float = 0.0
    limits: dict = field(default_factory=dict)  # reason -> (option, value): pool.Limits

    def add(self, n_bytes: int, docs: pa.Table, blks: pa.Table, rejects: pa.Table) -> None:
        self.documents += docs.num_rows
        self.blocks += blks.num_rows
        self.bytes += n_bytes
        self.rejects.update(rejects.column("reason").to_pylist())

    def line(self, out: Path) -> str:
        mb = self.bytes / 1e6
        rate = mb / self.seconds if self.seconds else 0.0
        rej = ", ".join(f"{n} {r}{self._at(r)}" for r, n in sorted(self.rejects.items()))
        skip = sum(self.skipped.values())
        why = ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items()))
        return (
            f"{self.documents} documents, {self.blocks} blocks, "
            f"{sum(self.rejects.values())} rejects{f' ({rej})' if rej else ''}, "
            f"{skip} skipped{f' ({why})' if why else ''}, "
            f"{mb:.1f} MB in {self.seconds:.2f} s ({rate:.1f} MB/s) -> {out}"
        )

    def _at(self, reason: str) -> str:
        """' at --doc-memory 1024 MB' for a reason of a worker's limit, else ''."""
        return " at {} {}".format(*self.limits[reason]) if reason in self.limits else ""


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


def _weight(item) -> int:
    if isinstance(item, batch_stages.Reused):
        return item.n_bytes
    data = getattr(item, "data", None)
    return len(data) if data is not None else 0


def run(
    plan: list[sources.Source],
    out: Path,
    selection: sources.Selection,
    mdx: str = "auto",
    bias: str = "balanced",
    max_bytes: int = document.DEFAULT_MAX_BYTES,
    parser: str = "pyromark",
    progress: Callable[[int], None] = lambda n: None,
) -> BlocksSummary:
    """Read, explode into blocks, write. Bad documents become rejects; the run goes on."""
    started = time.perf_counter()
    summary = BlocksSummary()
    raws = sources.read(plan, selection)
    with parquet_files.OutputSet(Path(out), ["documents", "blocks", "rejects"]) as output:
        for group in batched(raws, BATCH_DOCS):
            docs, blks, rejects = batch_stages.documents_and_blocks(
                group, mdx, bias, max_bytes, parser
            )
            for name, table in (("documents", docs), ("blocks", blks), ("rejects", rejects)):
                output.write(name, table)
            summary.add(sum(len(r.data or b"") for r in group), docs, blks, rejects)
            progress(len(group))
    summary.skipped = selection.skipped
    summary.seconds = time.perf_counter() - started
    return summary
