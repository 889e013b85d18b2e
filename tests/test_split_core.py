"""The splitting of oversized blocks in the Rust core (pipeline/split.py calls it): the
estimate counted natively equals the same counter called back, a tokenizer's errors reach
the caller, and character cuts find the clusters the `regex` module finds."""

from __future__ import annotations

import random
import subprocess
import sys
import unicodedata

import pytest
import regex

from chunkmill.pipeline.tokens import EstimateCounter
from tests import split
from tests.conftest import REPO

BLOCKS = [
    ("paragraph", "Une phrase ici. " * 40 + "数据分块标题検索テーブル。" * 30),
    ("list", "- one\n  ```py\n" + "  x = 1\n" * 60 + "  ```\n- two " + "word " * 80),
    ("code", "```rust\n" + "let x = 1;\n" * 120 + "```"),
    ("table", "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 80),
    ("blockquote", "> | a | b |\n> |---|---|\n" + "> | 1 | 2 |\n" * 60),
]


@pytest.mark.parametrize(("kind", "text"), BLOCKS)
@pytest.mark.parametrize("english", [None, True, False])
def test_the_estimate_counted_natively_equals_the_estimate_called_back(kind, text, english):
    counter = EstimateCounter("balanced", "code" if kind == "code" else "prose", english)
    native = split.split_block(kind, text, 60, 50, counter.count, [0, 30])
    called = split.split_block(kind, text, 60, 50, lambda ts: counter.count(ts), [0, 30])
    assert len(native) > 2
    assert native == called


def test_a_counters_error_reaches_the_caller():
    def failing(texts):
        raise KeyError("no tokenizer")

    with pytest.raises(KeyError):
        split.split_block("paragraph", "a b c. " * 50, 10, 10, failing)
    with pytest.raises(ValueError):
        split.split_block("paragraph", "a b c. " * 50, 10, 10, lambda ts: [])


def test_a_tokenizer_sees_each_batch_once_in_order():
    seen: list[list[str]] = []

    def count(texts):
        seen.append(list(texts))
        return [len(t) for t in texts]

    split.split_block("paragraph", "One two. Three four five six.", 12, 12, count)
    assert seen[0] == ["One two. Three four five six."]
    assert seen[1] == ["One two.", "Three four five six."]
    assert seen[-1] == ["One two.", " Three", " four", " five", " six."]


def _of(prop: str) -> list[str]:
    """The characters of a property among those of Unicode 14 (Python's unicodedata): the
    core's cluster tables are of Unicode 17, the `regex` module's of Unicode 18."""
    pattern = regex.compile(rf"\p{{{prop}}}")
    chars = (chr(c) for c in range(0x20000))
    return [c for c in chars if pattern.match(c) and unicodedata.category(c) != "Cn"]


def test_clusters_are_those_of_the_regex_module_around_conjuncts():
    """A virama joins the consonant after it into one cluster, with or without a consonant
    before it (as `regex` has it), across marks."""
    pools = [
        _of("InCB=Linker"),
        _of("InCB=Consonant"),
        _of("InCB=Extend"),
        list("a \n\r\u093e\u200d\u200c\u1100\u1161\uac00") + ["\U0001f600", "\U0001f1ef"],
    ]
    rng = random.Random(7)
    for _ in range(20000):
        text = "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 6)))
        want = [0] + [m.end() for m in regex.finditer(r"\X", text)]
        assert split.graphemes(text, 0, len(text)) == want, ascii(text)


def test_the_conjunct_tables_are_current():
    """rust/core/src/tables/incb.rs is what tools/gen_graphemes.py writes with this
    `regex` module."""
    tool = REPO / "tools" / "gen_graphemes.py"
    assert subprocess.run([sys.executable, str(tool), "--check"]).returncode == 0
