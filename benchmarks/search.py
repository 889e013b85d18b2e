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

from jobs import pool, run_job
from jobs.runlog import RunLog
from pipeline import queries, sources
from pipeline.document import DEFAULT_MAX_BYTES
from pipeline.policy import Policy

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
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory()
        out = Path(tmp.name)
        selection = sources.Selection()
        run_job.run(
            sources.plan([str(CORPORA)], selection),
            out,
            selection,
            Policy(),
            DEFAULT_MAX_BYTES,
            workers=pool.default_workers(),
            log=RunLog(quiet=True),
        )
    con = queries.connect(out)
    times = []
    for q in make_queries(out):
        start = time.perf_counter()
        queries.run(
            con,
            "search.sql",
            query=q,
            section=None,
            level=None,
            chunk_type=None,
            path=None,
            fm_key=None,
            fm_value=None,
            limit=10,
            k1=1.2,
            b=0.75,
        )
        times.append(time.perf_counter() - start)
    times.sort()
    result = {
        "queries": len(times),
        "chunks": pl.read_parquet(out / "chunks.parquet").height,
        "p50_ms": round(statistics.median(times) * 1000, 1),
        "p95_ms": round(times[int(0.95 * len(times)) - 1] * 1000, 1),
        "max_ms": round(times[-1] * 1000, 1),
    }
    print(
        f"search over {result['chunks']} chunks, {result['queries']} queries: "
        f"p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, max {result['max_ms']} ms"
    )
    if tmp:
        tmp.cleanup()
    return result


if __name__ == "__main__":
    main()
