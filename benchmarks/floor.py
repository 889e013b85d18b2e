"""The floor under a cold run: what no chunkmill built on pyromark can go below, next to
text-splitter, as whole processes.

    python benchmarks/floor.py [--workers 2]

"floor" lists and reads every file of ../shared/corpora and walks pyromark's events of each
(nothing else: no blocks, no chunks, no ids, no output), on a pool of ``--workers``
processes like a run's. text-splitter runs through anchor_process.py (reads, splits, writes
its chunk texts). Both are timed from launch to exit, three times each, alternating; the
best of each is kept.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import process  # noqa: E402
from benchmarks.anchor_process import files  # noqa: E402

HERE = Path(__file__).resolve().parent
CORPORA = HERE.parent.parent / "shared" / "corpora"


def _events(paths: list[str]) -> int:
    import pyromark

    md, n = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES), 0
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for _ in md.events_with_range(f.read()):
                n += 1
    return n


def floor_process(root: str, workers: int) -> None:
    """The floor's own process: list, then read and walk the events on ``workers``."""
    from concurrent.futures import ProcessPoolExecutor

    paths = files(root)
    parts = [paths[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        sum(pool.map(_events, parts))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv or [])
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return {"skipped": True}
    mb = sum(Path(p).stat().st_size for p in files(str(CORPORA))) / 1e6
    runs: dict[str, list[float]] = {"floor": [], "text-splitter": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(3):
            cmd = [sys.executable, __file__, "--process", str(CORPORA), str(args.workers)]
            runs["floor"].append(process.run(cmd)[0])
            out = str(Path(tmp) / "ts.parquet")
            anchor = [sys.executable, str(HERE / "anchor_process.py"), "semantic-text-splitter"]
            runs["text-splitter"].append(process.run([*anchor, str(CORPORA), out])[0])
    best = {k: min(v) for k, v in runs.items()}
    goal = 2 * best["text-splitter"]  # 0.5x text-splitter's throughput
    print(
        f"{mb:.1f} MB: floor (list, read, pyromark events; {args.workers} workers) "
        f"{best['floor']:.2f} s = {mb / best['floor']:.1f} MB/s; text-splitter whole process "
        f"{best['text-splitter']:.2f} s = {mb / best['text-splitter']:.1f} MB/s; 0.5x of it "
        f"leaves a cold run {goal:.2f} s, of which the floor takes {best['floor'] / goal:.0%}"
    )
    return {"mb": round(mb, 2), **{f"{k}_s": round(v, 3) for k, v in best.items()}}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--process"]:
        floor_process(sys.argv[2], int(sys.argv[3]))
    else:
        main(sys.argv[1:])
