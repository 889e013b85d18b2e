"""What a night costs against a cold run, at 1x and at 4x the shared corpora: whole
`chunkmill run` processes (2 workers, start-up included), the same way a nightly job runs.

    .venv/bin/python benchmarks/nights.py [--edits 5]

Per size: a cold run, the unchanged rerun (best of three), and one-paragraph edits of a
random markdown document, one edit per run (the median run). 4x is four copies of the
corpora side by side (other paths, so other document ids). A night should cost what
changed: the edit night is at most 15 % of the cold run, and at 4x at most 1.5 times what
it is at 1x.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
from pathlib import Path

from benchmarks.nightly import CORPORA, edit_paragraph
from benchmarks.speed import CHUNKMILL, compile_package, timed

WORKERS = 2


def nights(src: Path, out: Path, edits: int, seed: int) -> dict:
    cold = timed(CHUNKMILL, src, out, WORKERS)
    unchanged = min(timed(CHUNKMILL, src, out, WORKERS) for _ in range(3))
    rng, times = random.Random(seed), []
    for _ in range(edits):
        edit_paragraph(src, out, rng)
        times.append(timed(CHUNKMILL, src, out, WORKERS))
    edit = statistics.median(times)
    return {
        "cold_s": round(cold, 2),
        "unchanged_s": round(unchanged, 2),
        "unchanged_share": round(unchanged / cold, 3),
        "edit_s": round(edit, 2),
        "edit_share": round(edit / cold, 3),
        "edit_runs_s": [round(t, 2) for t in times],
    }


def main(argv: list[str] | None = None) -> dict:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--edits", type=int, default=5)
    opts = args.parse_args(argv)
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return {"skipped": True}
    compile_package()
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        for copies in (1, 4):
            src = Path(tmp) / f"src{copies}"
            for i in range(copies):
                shutil.copytree(CORPORA, src / f"copy{i}")
            found = nights(src, Path(tmp) / f"out{copies}", opts.edits, seed=copies)
            result[f"{copies}x"] = found
            print(
                f"{copies}x: cold {found['cold_s']} s, unchanged {found['unchanged_s']} s "
                f"({found['unchanged_share']:.0%}), one edit {found['edit_s']} s "
                f"({found['edit_share']:.0%}; runs {found['edit_runs_s']})"
            )
            shutil.rmtree(src)
    result["edit_4x_over_1x"] = round(result["4x"]["edit_s"] / result["1x"]["edit_s"], 2)
    print(f"one edit at 4x / at 1x: {result['edit_4x_over_1x']}")
    return result


if __name__ == "__main__":
    main()
