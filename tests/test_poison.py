"""Poison documents beside ordinary ones cost the run nothing.

The generated corpus (tests/poison.py) holds every kind at a reduced size, so that the suite
stays fast; benchmarks/poison.py runs the full sizes (a 30 MB line, a million lines).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from chunkmill.pipeline import runstore
from tests.conftest import REPO
from tests.poison import ordinary, poison

SCALE = 0.05


def write(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants, from /proc."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += int(next(ln.split()[1] for ln in status.splitlines() if ln[:6] == "VmRSS:"))
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, StopIteration, ValueError):
            continue
    return total / 1024


def run_measured(src: Path, out: Path, *flags: str, limit: float | None = 300):
    """(seconds, peak MB over the process tree) of `chunkmill run`, which must succeed
    within ``limit`` seconds (killed and failed otherwise)."""
    cmd = [sys.executable, "-m", "chunkmill", "run", str(src), "--out", str(out), *flags]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        time.sleep(0.05)
        if limit is not None and time.monotonic() - started > limit:
            proc.kill()  # its workers leave with it
            proc.wait()
            raise AssertionError(f"the run took more than {limit:g} s")
    assert proc.returncode == 0, proc.stderr.read().decode()
    return time.monotonic() - started, peak


def published(out: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(runstore.resolve(out) / f"{name}.parquet")


@pytest.fixture(scope="module")
def clean_chunks(tmp_path_factory) -> pl.DataFrame:
    root = tmp_path_factory.mktemp("clean")
    run_measured(write(root / "src", ordinary(100)), root / "out", "--workers", "2")
    return published(root / "out", "chunks")


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["2", "1"])
def test_poison_beside_ordinary_documents(tmp_path, clean_chunks, workers):
    bad = poison(SCALE)
    assert len(bad) >= 25
    src = write(tmp_path / "src", {**ordinary(100), **bad})
    seconds, peak = run_measured(src, tmp_path / "out", "--workers", workers)
    assert peak < 2048, f"peak memory {peak:.0f} MB"
    chunks = published(tmp_path / "out", "chunks")
    # every ordinary document is chunked exactly as in a run without the poison
    mine = chunks.filter(pl.col("path").str.starts_with("docs/"))
    assert mine.equals(clean_chunks)
    # every poison file is a document or a reject with a reason
    docs = set(published(tmp_path / "out", "documents")["path"])
    rejects = published(tmp_path / "out", "rejects")
    assert set(bad) <= docs | set(rejects["path"])
    assert not docs & set(rejects["path"])
    assert rejects["reason"].null_count() == 0 and (rejects["detail"].str.len_chars() > 10).all()
    assert set(rejects["path"]) == {"binary.md", "latin1.md"}  # nothing else needs rejecting
    # and the readable ones have chunks within the cap (nothing is rejected for its size)
    assert chunks["n_tokens"].max() <= 1000
    with_text = set(
        published(tmp_path / "out", "documents").filter(pl.col("text").str.strip_chars() != "")[
            "path"
        ]
    )
    assert with_text <= set(chunks["path"])


@pytest.mark.slow
def test_a_document_that_overruns_or_outgrows_its_worker_is_rejected(tmp_path):
    section = "## Part {i}\n\nSome words about part {i}, long enough.\n\n```py\nx = {i}\n```\n\n"
    big = "".join(section.format(i=i) for i in range(60_000)).encode()  # 4.7 MB, over 260 MB
    src = write(tmp_path / "src", {**ordinary(20), "big.md": big})
    for flags, reason in (
        (["--doc-timeout", "0.5"], "timeout"),
        (["--doc-memory", "260", "--doc-timeout", "600"], "too_much_memory"),
    ):
        out = tmp_path / reason
        run_measured(src, out, "--workers", "1", *flags)
        rejects = published(out, "rejects").to_dicts()
        assert [(r["path"], r["stage"], r["reason"]) for r in rejects] == [
            ("big.md", "worker", reason)
        ]
        assert "--doc-" in rejects[0]["detail"]
        assert published(out, "documents").height == 20
