"""What every cold run of chunkmill must spend in CPU before its own parsing and packing logic,
next to the CPU that the speed goal leaves it.

    python benchmarks/floor_cpu.py [--text-splitter-seconds S]

On 2 cores a whole process that takes W seconds can spend at most 2 x W CPU seconds. At
0.5x text-splitter's throughput a cold run may take twice text-splitter's whole-process
time, so its CPU budget is 4 x that time (best case: both cores busy from the first
instant). This script measures, each in a fresh interpreter and in CPU seconds
(user + system), the parts of a cold run that do not depend on how chunkmill parses or packs:

- the main process's start-up (interpreter, pyarrow and the run's modules);
- listing and reading every file of the corpora;
- two workers' start-up (their imports and warm-up, as ``jobs/worker.py`` does them);
- pulldown-cmark's events of every file, iterated and nothing else (the parser's floor);
- writing the tables a cold run publishes by default (documents, chunks), from a published
  run's own rows held in memory.

The corpora's published run is made first when ``--out`` holds none.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPORA = ROOT.parent / "shared" / "corpora"

_STEPS = {
    "main start-up (interpreter, pyarrow, run modules)": """
import chunkmill.jobs.run_job, chunkmill.jobs.cli.main, pyarrow.parquet, pyarrow.compute
""",
    "listing and reading every file": """
from chunkmill.pipeline.inputs import sources
T0 = clock()
sel = sources.Selection()
raws = list(sources.read(sources.plan([CORPORA], sel), sel))
""",
    "one worker's start-up (imports, warm-up)": """
from chunkmill.jobs import worker  # counted from the interpreter's start, as a worker's is
sys.meta_path.insert(0, worker.Absent("pandas", "numpy", why="is not used in chunkmill's workers"))
from chunkmill.pipeline import batch
from chunkmill.pipeline.policy import Policy
batch.warm(Policy())
""",
    "pulldown-cmark events of every file, nothing else": """
import pyromark
from benchmarks.anchor_process import files
texts = [open(p, encoding="utf-8", errors="replace").read() for p in files(CORPORA)]
md = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES)
T0 = clock()
for t in texts:
    for _ in md.events_with_range(t):
        pass
""",
    "writing documents and chunks": """
import pyarrow as pa, pyarrow.parquet as pq, tempfile
from chunkmill.pipeline import runstore, schemas
from chunkmill.pipeline.runstore import parquet_files
run = runstore.resolve(Path(OUT))
groups = {n: [pq.ParquetFile(p).read_row_group(i)
              for p in parquet_files.parts(run, n) for i in range(pq.ParquetFile(p).num_row_groups)]
          for n in ("documents", "chunks")}
with tempfile.TemporaryDirectory() as tmp:
    T0 = clock()
    for name, parts in groups.items():
        options = parquet_files.WRITE_OPTIONS
        w = pq.ParquetWriter(Path(tmp) / f"{name}.parquet", parts[0].schema, **options)
        for g in parts:
            w.write_table(g)
        w.close()
""",
}

_FRAME = """
import sys, time, resource
from pathlib import Path
sys.path.insert(0, {root!r})
def clock():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
T0 = 0.0
CORPORA, OUT = {corpora!r}, {out!r}
{body}
print(clock() - T0)
"""


def cpu_of(body: str, corpora: Path, out: Path) -> float:
    """CPU seconds of ``body`` in a fresh interpreter, from its ``T0`` (start: 0) to its end;
    the best of three."""
    code = _FRAME.format(root=str(ROOT), corpora=str(corpora), out=str(out), body=body)
    runs = []
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        runs.append(float(done.stdout.strip().splitlines()[-1]))
    return min(runs)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=CORPORA)
    parser.add_argument("--out", type=Path, default=None, help="a published run of the corpora")
    parser.add_argument(
        "--text-splitter-seconds",
        type=float,
        default=None,
        help="text-splitter's whole-process time (default: compare.py's last, or 1.05)",
    )
    args = parser.parse_args(argv or [])
    if not args.corpora.is_dir():
        print(f"skipped: {args.corpora} not present")
        return {"skipped": True}
    ts = args.text_splitter_seconds or _last_text_splitter() or 1.05
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "run"
        if not (out / "CURRENT").exists():
            subprocess.run(
                [sys.executable, "-m", "chunkmill", "run", str(args.corpora), "--out",
                 str(out)],
                check=True, capture_output=True,
            )  # fmt: skip
        cpu = {name: cpu_of(body, args.corpora, out) for name, body in _STEPS.items()}
    workers = "one worker's start-up (imports, warm-up)"
    total = sum(cpu.values()) + cpu[workers]  # two workers
    budget = 2 * 2 * ts
    for name, seconds in cpu.items():
        times = " (x2)" if name == workers else ""
        print(f"{name + times:<66} {seconds:6.2f} CPU s")
    print(f"{'sum':<66} {total:6.2f} CPU s")
    print(
        f"CPU a cold run may spend at 0.5x text-splitter ({ts:.2f} s whole process): "
        f"{budget:.2f} s on 2 cores; the fixed parts take {total / budget:.0%} of it"
    )
    return {
        "cpu": {k: round(v, 3) for k, v in cpu.items()},
        "fixed_cpu": round(total, 3),
        "budget_cpu": round(budget, 3),
        "text_splitter_seconds": ts,
    }


def _last_text_splitter() -> float | None:
    latest = HERE / "results" / "latest.json"
    try:
        rows = json.loads(latest.read_text())["compare"]["rows"]
        return rows["semantic-text-splitter"]["seconds"]
    except (OSError, KeyError, ValueError):
        return None


if __name__ == "__main__":
    main(sys.argv[1:])
