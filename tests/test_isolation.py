"""Poison documents: a worker that crashes, overruns or outgrows its memory costs one
document, never the run."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import pytest

from chunkmill.jobs import pool
from tests.conftest import REPO, SAMPLE
from tests.helpers import misbehave


def _fail(item, why: pool.Failure):
    return [("failed", why.reason)]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_bad_item_is_found_and_the_rest_goes_on(workers):
    items = [
        [("ok", 1), ("ok", 2)],
        [("ok", 3), ("segfault", None), ("ok", 4)],
        [("ok", 5), ("sleep", 60)],
        [("memory", 700), ("ok", 6)],
        [("raise", "a bug"), ("ok", 7)],
        [("ok", 8)],
    ]
    options = dict(
        limits=pool.Limits(seconds=4, memory_mb=400),  # a loaded host fills 700 MB within 4 s
        split=lambda item: [[x] for x in item],
        merge=lambda results: [x for r in results for x in r],
        on_fail=_fail,
    )
    started = time.monotonic()
    with pool.Supervisor(workers, **options) as supervisor:
        got = list(supervisor.map(misbehave, items))
        reasons = sorted(f.reason for f in supervisor.failures)
    assert got == [
        [1, 2],
        [3, ("failed", "crashed"), 4],
        [5, ("failed", "timeout")],
        [("failed", "too_much_memory"), 6],
        [("failed", "crashed"), 7],
        [8],
    ]
    # each bad item failed twice: in its batch, then alone
    assert reasons == ["crashed"] * 4 + ["timeout"] * 2 + ["too_much_memory"] * 2
    assert time.monotonic() - started < 60  # two timeouts, not the 60 s sleep


def test_crash_detail_names_the_signal_and_errors_name_the_place():
    details = []

    def keep(item, why):
        details.append(why.detail)
        return None

    with pool.Supervisor(1, on_fail=keep) as supervisor:
        list(supervisor.map(misbehave, [[("segfault", None)], [("raise", "boom")]]))
    assert "SIGSEGV" in details[0]
    assert details[1].startswith("internal error (ValueError: boom) at helpers.py:")


def _run_under_address_limit(tmp_path, limit: int) -> subprocess.CompletedProcess:
    """`chunkmill run` on the sample corpus, started with RLIMIT_AS at ``limit`` (as
    `ulimit -v`, a batch scheduler or systemd's LimitAS leave it)."""

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    out = tmp_path / f"out-{limit}"
    cmd = [sys.executable, "-m", "chunkmill", "run", str(SAMPLE), "--out", str(out)]
    return subprocess.run(
        cmd, cwd=REPO, preexec_fn=lower, capture_output=True, text=True, timeout=300
    )


def test_a_run_works_within_an_inherited_address_space_limit(tmp_path):
    """Workers lower the address-space limit they inherit for --doc-memory, never raise it."""
    done = _run_under_address_limit(tmp_path, 6 * 2**30)
    assert done.returncode == 0, done.stderr


def test_an_address_space_limit_too_low_for_a_worker_is_named(tmp_path):
    """The main process gets by in 256 MB; a worker (polars, pyarrow, their threads) not."""
    done = _run_under_address_limit(tmp_path, 256 * 2**20)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert "inherited address-space limit of 256 MB" in lines[0]
    assert "ulimit -v" in lines[0] and "--doc-memory 1024 MB" in lines[0]


def test_an_allocation_past_the_address_space_cap_is_too_much_memory():
    """Too fast for the watchdog: the worker's address-space cap stops it (MemoryError),
    and the reject says which limit to raise."""
    failures = []

    def keep(item, why):
        failures.append(why)
        return None

    with pool.Supervisor(1, limits=pool.Limits(memory_mb=400), on_fail=keep) as supervisor:
        list(supervisor.map(misbehave, [[("memory", 100_000)]]))  # 100 GB at once
    assert [f.reason for f in failures] == ["too_much_memory"]
    assert "--doc-memory 400 MB" in failures[0].detail
