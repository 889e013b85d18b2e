"""In-process calls refuse a document that could take more memory to chunk than allowed,
judged from its size and lines before any work: the caller gets an exception (chunk_text)
or a reject (chunk_texts, chunk_table), never an allocation failure that kills it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chunkmill import RejectedError, chunk_text, chunk_texts
from chunkmill.pipeline.doc_limits import DEFAULT_DOC_MEMORY_MB, memory_needed_mb

MB = 1_000_000
BOMBS = {
    "headings": "# h\n",
    "empty headings": "#\n",
    "list items": "- a\n",
    "rules": "***\n",
    "setext headings": "a\n=\n",
    "html blocks": "<div>\n\n",
    "fences": "```\n```\n",
    "quotes": "> a\n>\n",
    "table rows": "| x | y |\n",
    "prose": "word " * 15 + "\n\n",
}


@pytest.mark.parametrize("kind", ["headings", "list items"])
def test_25_mb_of_headings_or_list_items_raise_and_the_caller_lives(kind):
    text = BOMBS[kind] * (25 * MB // len(BOMBS[kind]))
    with pytest.raises(RejectedError) as found:
        chunk_text(text, path="bomb.md")
    assert found.value.reason == "too_much_memory" and found.value.path == "bomb.md"
    assert f"{DEFAULT_DOC_MEMORY_MB:,} MB" in found.value.detail
    assert [c.breadcrumb for c in chunk_text("# A\n\nstill here")] == [("A",)]


def test_chunk_texts_rejects_the_bomb_and_chunks_the_rest():
    bomb = BOMBS["headings"] * (25 * MB // 4)
    with pytest.warns(UserWarning, match="1 document.*too_much_memory"):
        table = chunk_texts(["# A\n\ntext", bomb, "# B\n\nmore"], paths=["a.md", "b.md", "c.md"])
    assert table["path"].to_pylist() == ["a.md", "c.md"]


def test_the_limit_is_the_callers_to_set():
    text = BOMBS["headings"] * (MB // 4)  # about 400 MB to chunk: within the default
    assert memory_needed_mb(text.encode()) < DEFAULT_DOC_MEMORY_MB
    with pytest.raises(RejectedError, match="more than the 100 MB allowed"):
        chunk_text(text, memory_mb=100)
    small = "# A\n\n" + "word " * 1000
    assert chunk_text(small, memory_mb=1) == chunk_text(small, memory_mb=None)


_PEAK = """
import resource, sys
from chunkmill import chunk_text
text = sys.stdin.read()
chunk_text("# warm\\n\\nup\\n")
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
chunk_text(text, memory_mb=None)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024)
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", BOMBS)
def test_the_estimate_bounds_the_memory_chunking_takes(kind):
    text = BOMBS[kind] * (MB // 2 // len(BOMBS[kind]))
    peak = subprocess.run(
        [sys.executable, "-c", _PEAK], input=text, capture_output=True, text=True, check=True
    ).stdout
    assert float(peak) <= memory_needed_mb(text.encode())
