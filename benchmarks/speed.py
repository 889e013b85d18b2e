"""Whole-process `chunkmill run` timings: cold (2 workers, every output), unchanged rerun and
re-pack after a policy change, over all of ../shared/corpora and over each corpus of 1 MB or
more on its own.

    .venv/bin/python benchmarks/speed.py [--workers 2] [--chunkmill PATH]

Each figure is the wall time of one `chunkmill run` process (start-up included), measured
back to back in this run; the unchanged rerun is the best of three. Other jobs on the
machine disturb them: read them as ratios.

chunkmill's modules are compiled to bytecode first, as pip does when it installs a wheel: an
editable install under PYTHONDONTWRITEBYTECODE=1 (as on our development machines) would
otherwise compile some forty modules from source at every start (~50 ms of each run).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"
CHUNKMILL = Path(sys.executable).with_name("chunkmill")
SUFFIXES = (".md", ".mdx", ".markdown", ".txt")
# a deliberate policy change: the guard refuses it without --new-policy
NEW_POLICY = ["--target-tokens", "600", "--max-tokens", "900", "--new-policy"]


def compile_package() -> None:
    """Bytecode for chunkmill's modules (compileall writes it whatever
    PYTHONDONTWRITEBYTECODE says)."""
    import compileall

    import chunkmill

    package = Path(chunkmill.__file__).parent
    compileall.compile_dir(package, quiet=1)
    for sub in package.iterdir():  # pipeline/ and jobs/ are links, which compile_dir skips
        if sub.is_symlink() and sub.is_dir():
            compileall.compile_dir(sub.resolve(), quiet=1)


def megabytes(folder: Path) -> float:
    files = (p for p in folder.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    return sum(p.stat().st_size for p in files) / 1e6


def timed(chunkmill: Path, src: Path, out: Path, workers: int, *flags: str) -> float:
    return timed_cpu(chunkmill, src, out, workers, *flags)[0]


def timed_cpu(chunkmill: Path, src: Path, out: Path, workers: int, *flags: str):
    """(wall seconds, CPU seconds of the process and its children): CPU time moves less
    than wall time when other jobs load the machine."""
    cmd = [str(chunkmill), "run", str(src), "--out", str(out), "--workers", str(workers), *flags]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(chunkmill: Path, src: Path, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cold = timed(chunkmill, src, out, workers)
        # best of three unchanged reruns (as timeit takes its minimum): a rerun takes a
        # few tenths of a second, which a busy minute of a shared host can double
        unchanged, unchanged_cpu = min(timed_cpu(chunkmill, src, out, workers) for _ in range(3))
        repack = timed(chunkmill, src, out, workers, *NEW_POLICY)
    mb = megabytes(src)
    return {
        "mb": round(mb, 2),
        "cold_s": round(cold, 2),
        "cold_mb_s": round(mb / cold, 2),
        "unchanged_s": round(unchanged, 2),
        "unchanged_cpu_s": round(unchanged_cpu, 2),
        "unchanged_share": round(unchanged / cold, 3),
        "unchanged_ok": unchanged <= max(0.1 * cold, 0.5),
        "repack_s": round(repack, 2),
        "repack_speedup": round(cold / repack, 2),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunkmill", type=Path, default=CHUNKMILL)
    args = parser.parse_args(argv or [])
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return {"skipped": True}
    compile_package()
    targets = {"all corpora": CORPORA}
    for folder in sorted(p for p in CORPORA.iterdir() if p.is_dir()):
        if megabytes(folder) >= 1.0:
            targets[folder.name] = folder
    rows = {name: measure(args.chunkmill, src, args.workers) for name, src in targets.items()}
    head = (
        f"{'input':<20} {'MB':>6} {'cold s':>7} {'MB/s':>6} {'unchanged s':>11} "
        f"{'(CPU s)':>7} {'share':>6} {'ok':>3} {'re-pack s':>9} {'speed-up':>8}"
    )
    print(head)
    print("-" * len(head))
    for name, r in rows.items():
        print(
            f"{name:<20} {r['mb']:>6.1f} {r['cold_s']:>7.2f} {r['cold_mb_s']:>6.2f} "
            f"{r['unchanged_s']:>11.2f} {r['unchanged_cpu_s']:>7.2f} {r['unchanged_share']:>6.1%} "
            f"{'yes' if r['unchanged_ok'] else 'no':>3} {r['repack_s']:>9.2f} "
            f"{r['repack_speedup']:>7.1f}x"
        )
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
