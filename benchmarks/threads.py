"""Threads or processes for a run: the work of a cold run over the shared corpora (read
every file, the documents, blocks, chunks and postings stages, every table written as
Parquet) done in one process with the Rust core on N threads, against `chunkmill run
--workers N` (N worker processes, one thread each). Whole processes timed from launch to
exit, best of ``--repeat``, alternating.

    python benchmarks/threads.py [--threads 2] [--repeat 3]
    python benchmarks/threads.py --one-process N OUT   # the threaded run itself
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
CORPORA = REPO.parent / "shared" / "corpora"


def one_process(threads: int, out: Path) -> None:
    """Every stage of a cold run in this process, the core on ``threads`` threads."""
    from chunkmill.jobs.chunks_job import run_metadata
    from chunkmill.pipeline import batch, schemas
    from chunkmill.pipeline.batching import BATCH_DOCS, batched
    from chunkmill.pipeline.inputs import sources
    from chunkmill.pipeline.policy import Policy
    from chunkmill.pipeline.runstore import parquet_files

    policy = Policy()
    selection = sources.Selection()
    raws = list(sources.read(sources.plan([str(CORPORA)], selection), selection))
    with parquet_files.OutputSet(out, schemas.CONTENT_TABLES, run_metadata(policy)) as output:
        for items in batched(raws, BATCH_DOCS):
            tables, _ = batch.process(batch.Batch(items), policy, 1 << 26, threads=threads)
            for name, table in tables.items():
                output.write(name, table)


def _timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> dict:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--threads", type=int, default=2)
    args.add_argument("--repeat", type=int, default=3)
    args.add_argument("--one-process", nargs=2, metavar=("N", "OUT"))
    opts = args.parse_args(argv)
    if opts.one_process:
        one_process(int(opts.one_process[0]), Path(opts.one_process[1]))
        return {}
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} is absent")
        return {"skipped": str(CORPORA)}
    n = str(opts.threads)
    best = {"processes": float("inf"), "threads": float("inf")}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(opts.repeat):
            run = [sys.executable, "-m", "chunkmill", "run", str(CORPORA)]
            seconds = _timed([*run, "--out", f"{tmp}/p{i}", "--workers", n])
            best["processes"] = min(best["processes"], seconds)
            seconds = _timed([sys.executable, __file__, "--one-process", n, f"{tmp}/t{i}"])
            best["threads"] = min(best["threads"], seconds)
    result = {k: round(v, 2) for k, v in best.items()}
    result["threads_over_processes"] = round(best["threads"] / best["processes"], 3)
    print(
        f"{n} worker processes {result['processes']} s, one process on {n} threads "
        f"{result['threads']} s (the processes' run also keeps its run store: ledger, "
        f"stamps, change set, history)"
    )
    return result


if __name__ == "__main__":
    main()
