"""What integrity costs: checking the published run against its manifest before
a run reuses it, and hashing a new run's files for its manifest, over all shared corpora.

Both are timed three times in this process (best and median reported) after one cold run.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.nightly import CORPORA, nightly
from chunkmill.pipeline import runstore
from chunkmill.pipeline.policy import Policy
from chunkmill.pipeline.runstore import manifest


def _times(fn, n: int = 3) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> dict:
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return {"skipped": True}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        record, cold = nightly(CORPORA, out, Policy())
        folder = runstore.resolve(out)
        size = sum(p.stat().st_size for p in folder.rglob("*.parquet") if p.is_file())
        verify = _times(lambda: runstore.current(out))
        build = _times(lambda: manifest.build(folder, record))
    result = {
        "run_files_mb": round(size / 1e6, 1),
        "cold_seconds": round(cold, 2),
        "verify_seconds_best": round(min(verify), 3),
        "verify_seconds_median": round(statistics.median(verify), 3),
        "hash_new_run_seconds_best": round(min(build), 3),
        "hash_new_run_seconds_median": round(statistics.median(build), 3),
    }
    print(
        f"{result['run_files_mb']} MB of run files: checking them against the manifest "
        f"{result['verify_seconds_median']} s, hashing a new run's "
        f"{result['hash_new_run_seconds_median']} s (medians of 3; cold run {cold:.1f} s)"
    )
    return result


if __name__ == "__main__":
    main()
