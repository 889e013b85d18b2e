"""At full size: the poison corpus (tests/poison.py, scale 1: a
30 MB line, a million lines, ...) beside 100 ordinary documents, with 2 workers and with 1.
Reports seconds, peak memory over the process tree, and the rejects; checks that every
ordinary document is chunked exactly as in a run without the poison.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import polars as pl  # noqa: E402

from chunkmill.pipeline import runstore  # noqa: E402
from tests.poison import ordinary, poison  # noqa: E402
from tests.test_poison import run_measured, write  # noqa: E402


def main(scale: float = 1.0) -> dict:
    bad = poison(scale)
    result: dict = {"kinds": len(bad), "poison_mb": round(sum(map(len, bad.values())) / 1e6, 1)}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        run_measured(write(tmp / "clean", ordinary(100)), tmp / "clean-out", "--workers", "2")
        clean = pl.read_parquet(runstore.resolve(tmp / "clean-out") / "chunks.parquet")
        src = write(tmp / "src", {**ordinary(100), **bad})
        for workers in ("2", "1"):
            out = tmp / f"out{workers}"
            seconds, peak = run_measured(src, out, "--workers", workers, limit=None)
            folder = runstore.resolve(out)
            chunks = pl.read_parquet(folder / "chunks.parquet")
            rejects = pl.read_parquet(folder / "rejects.parquet")
            docs = set(pl.read_parquet(folder / "documents.parquet", columns=["path"])["path"])
            mine = chunks.filter(pl.col("path").str.starts_with("docs/"))
            result[f"workers_{workers}"] = {
                "seconds": round(seconds, 1),
                "within_5_minutes": seconds < 300,
                "peak_mb": round(peak),
                "ordinary_identical": mine.equals(clean),
                "every_file_accounted": set(bad) <= docs | set(rejects["path"]),
                "max_tokens": chunks["n_tokens"].max(),
                "rejects": sorted(zip(rejects["path"], rejects["reason"])),
            }
            r = result[f"workers_{workers}"]
            print(
                f"{workers} worker(s): {r['seconds']} s, peak {r['peak_mb']} MB, ordinary "
                f"identical {r['ordinary_identical']}, all accounted {r['every_file_accounted']}"
                f", rejects {r['rejects']}"
            )
    return result


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
