"""A megabyte of adversarial markdown chunks in seconds: no regular expression on the chunk
path backtracks super-linearly (nested or adjacent quantifiers over the same characters,
or a search that rescans the rest of the text from every start).

Each document is about 1 MB; a quadratic path needs hours on it, a linear one about a
second. Each document is chunked in a child process, killed after LIMIT seconds, so that a
regression fails the test instead of hanging it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.helpers import chunk_text
from tests.section import is_filler

LIMIT = 20  # seconds per document, interpreter start included; a linear path takes about one
MB = 1 << 20


def _repeat(line: str) -> str:
    return line * (MB // len(line))


ADVERSARIAL = {
    "tabs then a letter": "\t" * MB + "x\n",
    "spaces, a tab, a letter": " " * MB + "\tx\n",
    "spaces and tabs mixed": " \t" * (MB // 2) + "x\n",
    "tabs then a letter, many lines": _repeat("\t" * 4000 + "x\n"),
    "code indented with no-break spaces": "```\n" + _repeat("\u00a0" * 2000 + "x\n") + "```\n",
    "a heading with a long gap": "# a" + " " * MB + "x\n",
    "a heading with a tab gap": "# a" + "\t" * MB + "x\n",
    "headings with an open MDX comment": _repeat("# a {/*" + " " * 1900 + "x\n"),
    "headings with an attribute list gap": _repeat("# a {#b" + " " * 1900 + "x\n"),
    "headings of template openers": _repeat("# " + "{{" * 990 + "\n"),
    "a run of sentence ends": "a" + "." * MB + "x\n",
    "a run of mixed sentence ends": "a " + "!?" * (MB // 2) + "x\n",
    "unclosed HTML comments": "<!--" * (MB // 4) + "\n",
    "unclosed MDX comments": "{/*" * (MB // 3) + "\n",
    "a table delimiter row with a gap": "| a |\n|-" + " " * MB + "x\n",
    "a table delimiter row with a gap in a quote": "> | a |\n> |-" + " " * MB + "x\n> | b |\n",
    "a front matter title of template openers": ("---\ntitle: '" + "{{" * 100_000 + "'\n---\nx\n"),
    "a front matter title with an open MDX comment": (
        "---\ntitle: a {/*" + " " * 100_000 + "x\n---\nx\n"
    ),
    "a front matter title of attribute lists": "---\ntitle: a" + "{#a}" * 50_000 + "\n---\nx\n",
}


def chunk_named(name: str) -> None:
    """Chunk one adversarial document (the child process's work)."""
    assert chunk_text(ADVERSARIAL[name])  # every document has something to say


# The fast lane keeps the first case (the tab line that once took cubic time).
CASES = [
    name if i == 0 else pytest.param(name, marks=pytest.mark.slow)
    for i, name in enumerate(ADVERSARIAL)
]


@pytest.mark.parametrize("name", CASES)
def test_adversarial_megabyte_chunks_in_linear_time(name):
    code = f"from tests.test_linear_time import chunk_named; chunk_named({name!r})"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, capture_output=True, timeout=LIMIT
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"chunking {name!r} took more than {LIMIT} s")
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]


def test_unclosed_comments_are_no_filler_in_linear_time():
    """is_filler on one long unit (the chunk path hands it pieces of a bounded size)."""
    code = (
        "from tests.section import is_filler; "
        "assert not is_filler('html', '<!--' * 250_000 + '{/*' * 250_000)"
    )
    try:
        subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"is_filler took more than {LIMIT} s")
    assert is_filler("html", "<!-- a --> {/* b */}\n<!-- c -->")
