"""The Rust core's block parse (mdchunk._core.blocks) against the Python blocks stage
(block.document_blocks with the pyromark backend, the estimate columns aside): the same
columns, value for value, on sample_data, every shared corpus document (as the product reads
it, as plain text and as MDX), every CommonMark spec example and generated documents.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdchunk import _core
from mdchunk.pipeline.block import document_blocks
from mdchunk.pipeline.document import MARKDOWN_SUFFIXES, TEXT_SUFFIXES
from tests.conftest import REPO, SAMPLE, corpus_dir
from tests.test_backends import generated
from tests.test_rebuild import documents

# The Python stage's columns that the core returns (doc_id is the core's `doc`, an index
# into its inputs; `text` is the core's char_start:char_end of the document).
COLUMNS = [
    "block_index", "block_id", "kind", "level", "heading_path", "heading_levels", "text",
    "char_start", "char_end", "line_start", "line_end", "info", "lang", "alt",
    "item_starts", "n_rows",
]  # fmt: skip


def core_columns(docs: list[tuple[str, bool, bool]]) -> tuple[list[dict], list[int]]:
    """The core's columns of each document (text, markdown, mdx), and its fallback list."""
    texts = [t for t, _, _ in docs]
    out = _core.blocks(texts, [m for _, m, _ in docs], [x for _, _, x in docs])
    per_doc: list[dict] = [{name: [] for name in COLUMNS} for _ in docs]
    for row, doc in enumerate(out["doc"]):
        cols = per_doc[doc]
        for name in COLUMNS:
            if name == "text":
                value = texts[doc][out["char_start"][row] : out["char_end"][row]]
            else:
                value = out[name][row]
            cols[name].append(value)
    return per_doc, out["fallback"]


def python_columns(text: str, markdown: bool, mdx: bool) -> dict:
    cols = document_blocks("d", text, markdown, mdx, "pyromark")
    return {name: cols[name] for name in COLUMNS}


def differences(docs: list[tuple[str, bool, bool]], names: list[str]) -> list[str]:
    """One line per document whose columns differ: its name, the first column and row."""
    ours, fallback = core_columns(docs)
    assert not fallback, [names[i] for i in fallback]
    out = []
    for name, doc, got in zip(names, docs, ours):
        want = python_columns(*doc)
        for col in COLUMNS:
            if got[col] != want[col]:
                rows = [i for i, (a, b) in enumerate(zip(got[col], want[col])) if a != b]
                where = rows[0] if rows else f"{len(got[col])} rows, not {len(want[col])}"
                out.append(f"{name}: {col} at row {where}")
                break
    return out


def read_folder(root: Path, mode: str) -> tuple[list[tuple[str, bool, bool]], list[str]]:
    """Every markdown and text file under ``root`` as the product reads it (``auto``), or
    every one as plain text or as MDX."""
    docs, names = [], []
    suffixes = MARKDOWN_SUFFIXES | TEXT_SUFFIXES
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        suffix = path.suffix.lower()
        if suffix not in suffixes:
            continue
        try:
            text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            continue
        markdown = suffix in MARKDOWN_SUFFIXES and mode != "text"
        mdx = markdown and (mode == "mdx" or suffix == ".mdx")
        docs.append((text, markdown, mdx))
        names.append(str(path.relative_to(root)))
    return docs, names


@pytest.mark.parametrize("mode", ["auto", "text", "mdx"])
def test_sample_data_blocks_are_equal(mode):
    docs, names = read_folder(SAMPLE, mode)
    assert len(docs) >= 10
    assert differences(docs, names) == []


@pytest.mark.corpus
@pytest.mark.parametrize("mode", ["auto", "text", "mdx"])
def test_corpora_blocks_are_equal(mode):
    docs, names = read_folder(corpus_dir(), mode)
    assert len(docs) > 1000
    diffs = differences(docs, names)
    assert not diffs, f"{len(diffs)} documents differ; first: {diffs[:5]}"


@pytest.mark.corpus
def test_spec_examples_blocks_are_equal():
    examples = json.loads((corpus_dir("commonmark_spec") / "examples.json").read_text("utf-8"))
    docs = [(ex["markdown"], True, mdx) for ex in examples for mdx in (False, True)]
    names = [f"example {ex['example']} mdx={mdx}" for ex in examples for mdx in (False, True)]
    assert differences(docs, names) == []


EDGES = [
    "",
    " \x1c\n\u3000",
    "\x1c# A \x1c\n\nx",  # U+001C is whitespace to Python, not to Rust
    "# a\u2028b\n\ntext\x0cmore\n",
    "---\ntitle: x\n---\n# T\n",
    "+++\na = 1\n+++ \r\nbody\r\n",
    "---\nnot closed\n\n# T",
    "# " + "é" * 300 + "\n\n## " + "a " * 150,
    "```py\tx\ncode\n```\t \n\ntext\t\n",
    "- a\n- b\n\n[x]: /u\n\n1. c\n\n   d\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n",
    "[![a](b)](c)\n\n![x *y*](z)\n\n ![a](b) \n\n![a](b) c",
    "# T\n\nx\n\n# T\n\nx\n\nx\n",
    "text\r\rmore\r\n\r\n```\r\nnot\r\n\r\ncode\r\n",
    "## \\*esc\\* &amp; `code` <b>x</b> ![alt](i)\n",
]


@pytest.mark.parametrize("text", EDGES)
@pytest.mark.parametrize("markdown,mdx", [(True, False), (True, True), (False, False)])
def test_edge_cases_are_equal(text, markdown, mdx):
    assert differences([(text, markdown, mdx)], [repr(text)]) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=generated())
def test_generated_markdown_is_equal(doc):
    text, mdx = doc
    assert differences([(text, True, mdx)], ["generated"]) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents(), mdx=st.booleans(), markdown=st.booleans())
def test_generated_documents_are_equal(text, mdx, markdown):
    assert differences([(text, markdown, mdx and markdown)], ["generated"]) == []


def test_inputs_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="differ in length"):
        _core.blocks(["a"], [True, False], [False])


def test_python_character_tables_are_current():
    """rust/core/src/pyunicode_tables.rs is what tools/gen_pyunicode.py writes with this
    Python (its whitespace, \\w and \\d)."""
    tool = REPO / "tools" / "gen_pyunicode.py"
    assert subprocess.run([sys.executable, str(tool), "--check"]).returncode == 0


# Any text over an alphabet of what the parse looks at: markdown and MDX markup, every line
# ending, tabs, Python-only whitespace (U+001C..U+001F), other separators and non-ASCII.
ALPHABET = st.sampled_from(
    list("#>-*+_`~|![]()<>{}/\"':.=1aZé日\t \n\r")
    + ["\x1c", "\x1f", "\u2028", "\u3000", "\x0c", "\u0301", "😀", "---\n", "```", "\n\n"]
    + ["import ", "export ", "<Note>", "</Note>", "<>", "</>", "&amp;", "\\", "    "]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(ALPHABET, max_size=80), markdown=st.booleans(), mdx=st.booleans())
def test_any_text_is_equal(parts, markdown, mdx):
    text = "".join(parts)
    assert differences([(text, markdown, mdx and markdown)], [repr(text)]) == []
