"""Where a cold run's CPU goes: every stage of every batch over ../shared/corpora in this
one process (the work a run's workers do), and the Parquet writing of the main process.

    .venv/bin/python benchmarks/cold_profile.py [--top 30] [--corpora DIR]

Prints the seconds per stage (summed over batches) and cProfile's top functions by own
time. The run itself does the same work in worker processes, which cProfile cannot see.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunkmill.jobs.chunks_job import run_metadata  # noqa: E402
from chunkmill.pipeline import batch, schemas  # noqa: E402
from chunkmill.pipeline.batching import BATCH_DOCS, batched  # noqa: E402
from chunkmill.pipeline.inputs import sources  # noqa: E402
from chunkmill.pipeline.policy import Policy  # noqa: E402
from chunkmill.pipeline.runstore import parquet_files

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"


def cold(corpora: Path, policy: Policy) -> Counter:
    """One cold run's stages in this process; seconds per stage."""
    seconds: Counter = Counter()
    selection = sources.Selection()
    t0 = time.perf_counter()
    raws = list(sources.read(sources.plan([str(corpora)], selection), selection))
    seconds["read"] = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as out:
        tables = schemas.CONTENT_TABLES
        with parquet_files.OutputSet(Path(out), tables, run_metadata(policy)) as output:
            for items in batched(raws, BATCH_DOCS):
                result, counts = batch.process(batch.Batch(items), policy, 1 << 26)
                seconds["parse"] += counts["seconds_parse"]
                seconds["chunk+postings"] += counts["seconds_chunk"]
                t1 = time.perf_counter()
                for name, table in result.items():
                    output.write(name, table)
                seconds["write"] += time.perf_counter() - t1
    seconds["total"] = time.perf_counter() - t0
    return seconds


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    args = parser.parse_args(argv)
    policy = Policy()
    batch.warm(policy)
    profiler = cProfile.Profile()
    seconds = profiler.runcall(cold, args.corpora, policy)
    stats = pstats.Stats(profiler).sort_stats("tottime")
    stats.print_stats(args.top)
    print("seconds per stage (under cProfile):", {k: round(v, 2) for k, v in seconds.items()})
    plain = cold(args.corpora, policy)
    print("seconds per stage (no profiler):", {k: round(v, 2) for k, v in plain.items()})
    return {k: round(v, 3) for k, v in plain.items()}


if __name__ == "__main__":
    main()
