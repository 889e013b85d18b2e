"""Job: blocks folder -> chunks.parquet (+ rejects), and the all-stages ``run``."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from chunkmill.jobs.counts import RunCounts
from chunkmill.pipeline import runstore, schemas
from chunkmill.pipeline.batching import BATCH_DOCS
from chunkmill.pipeline.doc_rows import DocRows, drop_rejected
from chunkmill.pipeline.policy import CHUNKER_VERSION, POSTINGS_VERSION, Policy
from chunkmill.pipeline.runstore import parquet_files


def run_metadata(policy: Policy) -> dict[str, str]:
    """Written into every output file's footer: what produced it."""
    return {
        "mdchunk.policy": policy.canonical_json(),
        "mdchunk.chunker_version": CHUNKER_VERSION,
        "mdchunk.postings_version": POSTINGS_VERSION,
    }


def run_chunks(
    blocks_dir: Path, out: Path, policy: Policy, progress: Callable[[int], None] = lambda n: None
) -> RunCounts:
    """Chunk an existing blocks folder (documents.parquet + blocks.parquet) into ``out``,
    which may be ``blocks_dir`` itself: inputs are read first, outputs replace files whole."""
    from chunkmill.pipeline import chunk
    from chunkmill.pipeline.postings import postings

    started = time.perf_counter()
    counting = chunk.Counting(policy)
    summary = RunCounts()
    documents = parquet_files.read(blocks_dir, "documents")
    blocks = DocRows(parquet_files.read(blocks_dir, "blocks"))
    earlier_rejects = parquet_files.read(blocks_dir, "rejects")
    with parquet_files.OutputSet(Path(out), schemas.CONTENT_TABLES, run_metadata(policy)) as output:
        for start in range(0, documents.num_rows, BATCH_DOCS):
            docs = documents.slice(start, BATCH_DOCS)
            blk = blocks.take(docs["doc_id"].to_pylist())
            chunks, rejects = chunk.chunks(docs, blk, policy, counting)
            if rejects.num_rows:  # a document is in documents or in rejects, never both
                docs, blk = drop_rejected(docs, rejects), drop_rejected(blk, rejects)
            for name, table in (
                ("documents", docs),
                ("blocks", blk),
                ("chunks", chunks),
                ("postings", postings(chunks)),
                ("rejects", rejects),
            ):
                output.write(name, table)
            summary.add({"documents": docs, "chunks": chunks, "rejects": rejects})
            progress(docs.num_rows)
        output.write("rejects", earlier_rejects)
    summary.wall = time.perf_counter() - started
    record = runstore.new_record(runstore.new_run_id(), [], False, policy, "")
    record.update(
        inputs=[str(blocks_dir)],
        chunks_total=summary.chunks,
        seconds={"total": round(summary.wall, 3)},
    )
    runstore.record_plain(Path(out), record)
    return summary
