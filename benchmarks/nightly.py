"""Nightly runs over the shared corpora: cold, unchanged, policy change, edits.

1. cold run, then a second run with no change (must add/remove nothing, <= 1/10 the time);
2. a policy change: re-pack from the published documents' texts (no input file read),
   every chunk id changes;
3. stability: 50 random single-paragraph edits across the corpora, one edit per run,
   reporting chunk ids added per edit (mean, max) and the run time.
Works on a copy of the corpora in a temporary folder.
"""

from __future__ import annotations

import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import polars as pl

from chunkmill.jobs import pool, run_job
from chunkmill.jobs.options import RunOptions
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline import queries, runstore
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.policy import Policy

WORKERS = pool.default_workers()  # as `chunkmill run` does by default
CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"


def nightly(
    src: Path,
    out: Path,
    policy: Policy,
    full: bool = False,
    workers: int | None = None,
    new_policy: bool = False,
) -> tuple[dict, float]:
    """One `chunkmill run` of ``src`` into ``out``: its runs-table record and its seconds
    (``new_policy``: as `--new-policy`, accepting a policy other than the published one)."""
    selection = sources.Selection()
    start = time.perf_counter()
    result = run_job.run(
        sources.plan([str(src)], selection),
        out,
        selection,
        policy,
        RunOptions(full=full, new_policy=new_policy),
        workers=workers or WORKERS,
        log=RunLog(quiet=True),
    )
    return result.record, time.perf_counter() - start


def edit_paragraph(src: Path, out: Path, rng: random.Random) -> tuple[str, int]:
    """Insert a word into a random paragraph of a random markdown document."""
    folder = runstore.resolve(out)
    docs = pl.read_parquet(
        folder / "documents.parquet", columns=["doc_id", "path", "format", "had_bom", "text"]
    )
    columns = ["doc_id", "kind", "char_start", "char_end", "text"]
    blocks = pl.from_arrow(queries.table(folder, "blocks", columns))
    paragraphs = blocks.filter(
        (pl.col("kind") == "paragraph") & (pl.col("text").str.count_matches(" ") > 5)
    ).join(docs.filter(pl.col("format") == "markdown"), on="doc_id")
    row = paragraphs.row(rng.randrange(paragraphs.height), named=True)
    text, start = row["text_right"], row["char_start"]
    cut = start + row["text"].index(" ")
    new = text[:cut] + " nightly" + text[cut:]
    data = ("\ufeff" if row["had_bom"] else "") + new
    (src / row["path"]).write_bytes(data.encode("utf-8"))
    return row["path"], start


def main() -> dict:
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return {"skipped": True}
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "src", Path(tmp) / "out"
        shutil.copytree(CORPORA, src)
        policy = Policy()
        cold, t_cold = nightly(src, out, policy)
        again, t_again = nightly(src, out, policy)
        assert again["chunks_added"] == again["chunks_removed"] == 0
        changed = Policy(target_tokens=600, max_tokens=900)
        repack, t_repack = nightly(src, out, changed, new_policy=True)
        assert repack["documents_unchanged"] == repack["documents_parsed"]  # texts stored
        assert repack["chunks_removed"] == cold["chunks_total"]
        back, _ = nightly(src, out, policy, new_policy=True)
        rng = random.Random(50)
        added, times = [], []
        for _ in range(50):
            edit_paragraph(src, out, rng)
            record, seconds = nightly(src, out, policy)
            assert record["documents_changed"] == 1 and record["documents_parsed"] == 1
            added.append(record["chunks_added"])
            times.append(seconds)
    result = {
        "cold_seconds": round(t_cold, 2),
        "unchanged_seconds": round(t_again, 2),
        "unchanged_fraction": round(t_again / t_cold, 3),
        "repack_seconds": round(t_repack, 2),
        "repack_speedup": round(t_cold / t_repack, 1),
        "chunks": cold["chunks_total"],
        "edits": len(added),
        "added_per_edit_mean": round(statistics.mean(added), 2),
        "added_per_edit_max": max(added),
        "edit_run_seconds_mean": round(statistics.mean(times), 2),
    }
    print(
        f"cold run {result['cold_seconds']} s ({result['chunks']} chunks); unchanged re-run "
        f"{result['unchanged_seconds']} s ({result['unchanged_fraction']:.1%} of cold), "
        "nothing added or removed"
    )
    print(
        f"policy change: re-pack {result['repack_seconds']} s "
        f"({result['repack_speedup']}x faster than cold), every chunk id changed"
    )
    print(
        f"50 single-paragraph edits: chunk ids added per edit mean "
        f"{result['added_per_edit_mean']}, max {result['added_per_edit_max']}; "
        f"run {result['edit_run_seconds_mean']} s on average"
    )
    return result


if __name__ == "__main__":
    main()
