"""Search latency over the chunks of all shared corpora: p50/p95 over 50 queries.

Queries are built deterministically from section titles of the corpora (two or three words
each), so they hit real text; all run sql/search.sql on one open connection.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

import polars as pl

from chunkmill.jobs import pool, run_job
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline import queries, runstore
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.policy import Policy

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"


def make_queries(out: Path, n: int = 50, seed: int = 7) -> list[str]:
    titles = (
        pl.read_parquet(out / "chunks.parquet", columns=["section_title"])
        .drop_nulls()["section_title"]
        .unique()
        .sort()
        .to_list()
    )
    rng = random.Random(seed)
    picked = []
    while len(picked) < n:
        words = [w for w in titles[rng.randrange(len(titles))].split() if w.isalpha()]
        if len(words) >= 2:
            picked.append(" ".join(words[:3]).lower())
    return picked


def main(out: Path | None = None) -> dict:
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return {"skipped": True}
    with tempfile.TemporaryDirectory() as tmp:
        if out is None:
            out = Path(tmp)
            selection = sources.Selection()
            run_job.run(
                sources.plan([str(CORPORA)], selection),
                out,
                selection,
                Policy(),
                workers=pool.default_workers(),
                log=RunLog(quiet=True),
            )
        folder = runstore.resolve(out)  # the published run
        con = queries.connect(folder)
        times = []
        for q in make_queries(folder):
            start = time.perf_counter()
            queries.search(folder, q, con=con)
            times.append(time.perf_counter() - start)
        n_chunks = pl.read_parquet(folder / "chunks.parquet", columns=["chunk_id"]).height
    times.sort()
    result = {
        "queries": len(times),
        "chunks": n_chunks,
        "p50_ms": round(statistics.median(times) * 1000, 1),
        "p95_ms": round(times[int(0.95 * len(times)) - 1] * 1000, 1),
        "max_ms": round(times[-1] * 1000, 1),
    }
    print(
        f"search over {result['chunks']} chunks, {result['queries']} queries: "
        f"p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, max {result['max_ms']} ms"
    )
    return result


if __name__ == "__main__":
    main()
