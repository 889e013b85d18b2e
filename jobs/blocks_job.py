"""Job: INPUT -> documents.parquet, blocks.parquet, rejects.parquet."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from chunkmill.jobs.counts import RunCounts
from chunkmill.pipeline import batch as batch_stages
from chunkmill.pipeline import batching, document
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.runstore import parquet_files


def run(
    plan: list[sources.Source],
    out: Path,
    selection: sources.Selection,
    mdx: str = "auto",
    bias: str = "balanced",
    max_bytes: int = document.DEFAULT_MAX_BYTES,
    parser: str = "pyromark",
    progress: Callable[[int], None] = lambda n: None,
) -> RunCounts:
    """Read, explode into blocks, write. Bad documents become rejects; the run goes on."""
    started = time.perf_counter()
    summary = RunCounts()
    raws = sources.read(plan, selection)
    with parquet_files.OutputSet(Path(out), ["documents", "blocks", "rejects"]) as output:
        for group in batching.batched(raws, batching.BATCH_DOCS):
            docs, blks, rejects = batch_stages.documents_and_blocks(
                group, mdx, bias, max_bytes, parser
            )
            for name, table in (("documents", docs), ("blocks", blks), ("rejects", rejects)):
                output.write(name, table)
            summary.add({"documents": docs, "blocks": blks, "rejects": rejects})
            summary.bytes += sum(len(r.data or b"") for r in group)
            progress(len(group))
    summary.skipped = selection.skipped
    summary.wall = time.perf_counter() - started
    return summary
