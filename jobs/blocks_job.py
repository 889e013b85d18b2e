"""Job: INPUT -> documents.parquet, blocks.parquet, rejects.parquet."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from chunkmill.pipeline import batch as batch_stages
from chunkmill.pipeline import document, sources
from chunkmill.pipeline.runstore import parquet_files


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
        for group in batch_stages.batched(raws, batch_stages.BATCH_DOCS):
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
