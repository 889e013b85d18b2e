"""Peak memory of a cold run at 1x and 4x the shared corpora (bounded memory).

4x is four copies of the corpora under other paths. Peak RSS is sampled every 20 ms over
the whole process tree (the main process and its workers), from /proc.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import process  # noqa: E402

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"
REPO = Path(__file__).resolve().parent.parent


def peak_rss_mb(src: Path, out: Path, workers: int) -> tuple[float, float]:
    cmd = [
        sys.executable,
        "-m",
        "chunkmill",
        "run",
        str(src),
        "--out",
        str(out),
        "--workers",
        str(workers),
    ]
    seconds, peak = process.run(cmd, cwd=REPO)
    return peak, seconds


def main(workers: int = 2) -> dict:
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return {"skipped": True}
    with tempfile.TemporaryDirectory() as tmp:
        one, four = Path(tmp) / "x1", Path(tmp) / "x4"
        shutil.copytree(CORPORA, one / "c0")
        for i in range(4):
            shutil.copytree(CORPORA, four / f"c{i}")
        rss1, t1 = peak_rss_mb(one, Path(tmp) / "o1", workers)
        rss4, t4 = peak_rss_mb(four, Path(tmp) / "o4", workers)
    result = {
        "workers": workers,
        "peak_rss_mb_1x": round(rss1),
        "peak_rss_mb_4x": round(rss4),
        "ratio": round(rss4 / rss1, 2),
        "seconds_1x": round(t1, 1),
        "seconds_4x": round(t4, 1),
    }
    print(
        f"peak RSS (all processes), {workers} workers: 1x {result['peak_rss_mb_1x']} MB "
        f"in {result['seconds_1x']} s, 4x {result['peak_rss_mb_4x']} MB in "
        f"{result['seconds_4x']} s: ratio {result['ratio']}"
    )
    return result


if __name__ == "__main__":
    main()
