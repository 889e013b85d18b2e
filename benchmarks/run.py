"""`make bench`: every benchmark, results printed and written to benchmarks/results/."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import (  # noqa: E402
    compare,
    estimate_cap,
    floor_cpu,
    inprocess,
    integrity,
    linear,
    memory,
    nightly,
    nights,
    poison,
    results_page,
    retrieval,
    search,
    sections,
    speed,
    sync,
    threads,
)

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    """What the figures were measured on: CPU model and count, memory, Python, and a name
    when CHUNKMILL_BENCH_MACHINE gives one."""
    info = {"python": platform.python_version(), "cpus": os.cpu_count()}
    if os.environ.get("CHUNKMILL_BENCH_MACHINE"):
        info["name"] = os.environ["CHUNKMILL_BENCH_MACHINE"]
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next(
            line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if "model name" in line
        )
    except (OSError, StopIteration):
        info["cpu"] = platform.processor() or platform.machine()
    return info


def commit() -> str:
    """The commit measured, marked ``+changes`` when the work tree differs from it."""
    repo = Path(__file__).resolve().parent.parent
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=repo,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return (head or "unknown") + ("+changes" if dirty else "")


def main() -> None:
    RESULTS.mkdir(exist_ok=True)
    started = datetime.now(UTC)
    out = {"commit": commit(), "machine": machine()}
    print("== linear: one large document at 1x, 2x, 4x ==")
    out["linear"] = linear.main()
    print("== search: BM25 in SQL over the chunks of all shared corpora ==")
    out["search"] = search.main()
    print("== nightly: incremental runs over the shared corpora ==")
    out["nightly"] = nightly.main()
    print("== nights: whole-process cold, unchanged and one-edit runs at 1x and 4x ==")
    out["nights"] = nights.main([])
    print("== sync: into LanceDB (zero-cost embedder), MiniLM, the endpoint, against LangChain ==")
    out["sync"] = sync.main([])
    print("== speed: whole-process cold, unchanged and re-pack runs, all and per corpus ==")
    out["speed"] = speed.main()
    print("== integrity: manifest checks before reuse, hashing a new run ==")
    out["integrity"] = integrity.main()
    print("== compare: chunkmill and the chunkers people use, same corpora and budget ==")
    out["compare"] = compare.main()
    print("== in-process: chunk_text in a loop against text-splitter and LangChain ==")
    out["inprocess"] = inprocess.main([])
    print("== threads: a cold run's work in one process on 2 threads against 2 workers ==")
    out["threads"] = threads.main([])
    print("== floor: the CPU every cold run spends outside its parsing and packing logic ==")
    ts = out["compare"].get("rows", {}).get("semantic-text-splitter", {}).get("seconds")
    out["floor_cpu"] = floor_cpu.main(["--text-splitter-seconds", str(ts)] if ts else [])
    print("== estimate: the cap of cl100k, o200k and MiniLM on chunks made with the estimate ==")
    out["estimate_cap"] = estimate_cap.main([])
    print("== exact: the same with the default's counts (cl100k), chunks against the estimate's ==")
    out["exact_cap"] = estimate_cap.main(["--packed-by", "tiktoken:cl100k_base"])
    print("== memory: peak RSS of a cold run at 1x and 4x the corpora ==")
    out["memory"] = memory.main()
    print("== poison: the poison kinds at full size beside 100 ordinary documents ==")
    out["poison"] = poison.main()
    print("== sections: chunks, tiny chunks, chunks naming their section (default policy) ==")
    out["sections"] = sections.main()
    print("== retrieval: the development questions, chunkmill and the anchors at 512 tokens ==")
    out["retrieval"] = retrieval.main()
    ended = datetime.now(UTC)
    out["date"] = f"{started:%Y-%m-%d %H:%M}–{ended:%H:%M} UTC"
    (RESULTS / "latest.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"results written to {RESULTS / 'latest.json'}")
    results_page.main([])


if __name__ == "__main__":
    main()
