"""Poison documents: a worker that crashes, overruns or outgrows its memory costs one
document, never the run (issue 13)."""

from __future__ import annotations

import time

import pytest

from mdchunk.jobs import pool
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
