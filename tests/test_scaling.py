"""Chunking time grows with the input, not faster: every family of poison documents (the
generators of tests/poison.py, which also seed the fuzz target) is chunked at a quarter of
an eighth of its full size and at full size, and the growth of CPU time against the growth
of bytes is measured, not the seconds themselves: a linear path's exponent is about 1, a
quadratic one's 2 (200,000 empty headings in a row once took 38 s where 25,000 took 0.8 s).
An eighth, not a quarter: a large document's working set outgrows the caches, and on a
loaded machine that alone made a linear family measure 1.43 over a quarter's span (0.13 s
-> 1.02 s for 4.2x the bytes); over eight times the bytes the same slowdown moves the
exponent half as much, while a quadratic path still measures about 2."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from tests.conftest import REPO

SCALES = (0.125, 1.0)
MEASURABLE = 0.1  # CPU seconds at full size below which growth is noise, not a signal
MOST = 1.5  # the largest exponent of time over bytes taken for linear (quadratic is 2)

# In a child process: the largest documents take a few hundred megabytes while chunked.
MEASURE = """
import json, sys, time
from chunkmill import chunk_text
from chunkmill.chunking import RejectedError
from tests.poison import poison

def cpu(text, path):
    start = time.process_time()
    try:
        chunk_text(text, path=path, memory_mb=None)  # the time of chunking, not a refusal
    except RejectedError:
        pass
    return time.process_time() - start

def both(texts, path):
    # small and large one after the other, three times, the lowest of each: a loaded
    # machine adds, never takes away, and both sizes see the same spells of load
    rounds = [(cpu(texts[0], path), cpu(texts[1], path)) for _ in range(3)]
    return [min(r[0] for r in rounds), min(r[1] for r in rounds)]

small, large = (poison(s) for s in json.loads(sys.argv[1]))
out = {}
for name, data in large.items():
    try:
        texts = small[name].decode(), data.decode()
    except UnicodeDecodeError:  # rejected before chunking
        continue
    out[name] = [len(small[name]), len(data), *both(texts, name)]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_every_poison_family_chunks_in_linear_time():
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(SCALES)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert "many-headings.md" in found and len(found) > 30
    measured = 0
    for name, (small_bytes, large_bytes, small_cpu, large_cpu) in found.items():
        if large_bytes < 2 * small_bytes or large_cpu < MEASURABLE:
            continue  # a family of fixed size, or too fast to tell
        measured += 1
        exponent = math.log(large_cpu / max(small_cpu, 1e-3)) / math.log(large_bytes / small_bytes)
        assert exponent <= MOST, (name, small_bytes, large_bytes, small_cpu, large_cpu)
    assert measured >= 8  # the big families were measured, not skipped
