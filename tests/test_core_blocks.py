"""The blocks stage as the product runs it (the Rust core, chunkmill._core.blocks, called once
per batch; block.blocks) against the reference parser (markdown-it-py, one document at a
time): the same columns, value for value, on sample_data, every shared corpus document as
plain text and as MDX (tests/test_backends.py takes them as read), the spec examples as MDX,
edge cases and generated texts. Also: what the stage does when the core leaves a document
to the reference parser or fails on a batch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkmill import _core
from chunkmill.pipeline import block, parse_markdown_it
from chunkmill.pipeline.block import document_blocks
from chunkmill.pipeline.document import MARKDOWN_SUFFIXES, TEXT_SUFFIXES
from tests.conftest import REPO, SAMPLE, corpus_dir

COLUMNS = [f.name for f in block.schemas.BLOCKS if f.name not in ("n_chars", "est_tokens")]


def documents_table(docs: list[tuple[str, bool, bool]]) -> pa.Table:
    """A documents table (the columns the blocks stage reads) of (text, markdown, mdx)."""
    return pa.table(
        {
            "doc_id": [f"d{i}" for i in range(len(docs))],
            "path": [f"p{i}" for i in range(len(docs))],
            "format": ["markdown" if m else "text" for _, m, _ in docs],
            "mdx": [x for _, _, x in docs],
            "text": [t for t, _, _ in docs],
        }
    )


def stage_columns(docs: list[tuple[str, bool, bool]]) -> list[dict]:
    """The blocks stage's columns of each document, from one call over all of them."""
    table, rejects = block.blocks(documents_table(docs))
    assert rejects.num_rows == 0
    cols = table.select(COLUMNS).to_pydict()
    per_doc: list[dict] = [{name: [] for name in COLUMNS} for _ in docs]
    for row, doc_id in enumerate(cols["doc_id"]):
        for name in COLUMNS:
            per_doc[int(doc_id[1:])][name].append(cols[name][row])
    return per_doc


def differences(docs: list[tuple[str, bool, bool]], names: list[str]) -> list[str]:
    """One line per document whose columns differ: its name, the first column and row."""
    out = []
    for i, (name, doc, got) in enumerate(zip(names, docs, stage_columns(docs))):
        want = document_blocks(f"d{i}", *doc, "markdown-it")
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
@pytest.mark.parametrize("mode", ["text", "mdx"])
def test_corpora_blocks_are_equal(mode):
    docs, names = read_folder(corpus_dir(), mode)
    assert len(docs) > 1000
    diffs = differences(docs, names)
    assert not diffs, f"{len(diffs)} documents differ; first: {diffs[:5]}"


@pytest.mark.corpus
def test_spec_examples_as_mdx_are_equal():
    examples = json.loads((corpus_dir("commonmark_spec") / "examples.json").read_text("utf-8"))
    docs = [(ex["markdown"], True, True) for ex in examples]
    names = [f"example {ex['example']}" for ex in examples]
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
    "<Note>\n\n# In\n\n</Note>\n\nimport a from 'b'\nexport const c = 1\n\n<Card />\n",
]


@pytest.mark.parametrize("text", EDGES)
@pytest.mark.parametrize("markdown,mdx", [(True, False), (True, True), (False, False)])
def test_edge_cases_are_equal(text, markdown, mdx):
    assert differences([(text, markdown, mdx)], [repr(text)]) == []


def test_one_call_covers_a_batch_in_document_order():
    docs = [(text, markdown, False) for text in EDGES for markdown in (True, False)]
    assert differences(docs, [repr(d) for d in docs]) == []


# Any text over an alphabet of what the parse looks at: markdown and MDX markup, every line
# ending, tabs, Python-only whitespace (U+001C..U+001F), other separators and non-ASCII.
# As plain text (no markdown parser: lines, blank runs and fences only) the two must agree
# on everything; markdown is generated by tests/test_backends.py, which leaves out the
# known divergences of the two markdown parsers.
ALPHABET = st.sampled_from(
    list("#>-*+_`~|![]()<>{}/\"':.=1aZé日\t \n\r")
    + ["\x1c", "\x1f", "\u2028", "\u3000", "\x0c", "\u0301", "😀", "---\n", "```", "\n\n"]
    + ["import ", "export ", "<Note>", "</Note>", "<>", "</>", "&amp;", "\\", "    "]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(ALPHABET, max_size=80))
def test_any_plain_text_is_equal(parts):
    text = "".join(parts)
    assert differences([(text, False, False)], [repr(text)]) == []


def test_inputs_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="differ in length"):
        _core.blocks(["a"], [True, False], [False])


def test_python_character_tables_are_current():
    """rust/core/src/tables/pyunicode.rs is what tools/gen_pyunicode.py writes with this
    Python (its whitespace, \\w and \\d)."""
    tool = REPO / "tools" / "gen_pyunicode.py"
    assert subprocess.run([sys.executable, str(tool), "--check"]).returncode == 0


BATCH = ["# A\n\ntext\n", "- a\n- b\n", "```\ncode\n```\n\n# B\n", "plain\n\nmore\n"]


def stage(texts: list[str], counts: Counter | None = None) -> tuple[pa.Table, pa.Table]:
    table = documents_table([(t, True, False) for t in texts])
    return block.blocks(table, counts=counts)


def test_documents_left_to_the_reference_keep_their_place(monkeypatch):
    """The core's fallback documents are parsed by the reference parser and their blocks
    take their documents' place in the table."""
    want, _ = stage(BATCH)
    real, left = block._core_table, []

    def leaving_two(docs, *args):
        table, position, _ = real(docs, *args)
        keep = block.pc.not_equal(position, 1)
        fallback = [1] if len(docs) > 1 else []
        left.extend(fallback)
        return table.filter(keep), position.filter(keep), fallback

    monkeypatch.setattr(block, "_core_table", leaving_two)
    counts = Counter()
    got, rejects = stage(BATCH, counts)
    assert left == [1]  # the core's call was the one replaced, and it left a document
    assert rejects.num_rows == 0 and got.equals(want)
    assert counts == {"fallback": 1}  # a run reports it


class PanicException(BaseException):
    """What pyo3 raises when Rust code panics: a BaseException, not an Exception."""


def test_a_failed_batch_is_parsed_document_by_document(monkeypatch):
    """A batch call that fails is not the run's end: each document is parsed on its own,
    the failing one by the reference parser, and a document that parser fails on too is
    one reject (parse_error)."""
    want, _ = stage(BATCH)
    real, failed = block._core_table, []

    def failing_on_lists(docs, *args):
        if any(b"- a" in bytes(doc[4]) for doc in docs):  # texts: UTF-8 views
            failed.append(len(docs))
            raise PanicException("boom")
        return real(docs, *args)

    monkeypatch.setattr(block, "_core_table", failing_on_lists)
    counts = Counter()
    got, rejects = stage(BATCH, counts)
    assert failed == [len(BATCH), 1]  # the batch failed, then the one document alone
    assert rejects.num_rows == 0 and got.equals(want)
    assert counts == {"fallback": 1}

    real_lines = parse_markdown_it.parse_lines

    def deep(text, lines, first, end):
        if "- a" in text:
            raise RecursionError("too deep")
        return real_lines(text, lines, first, end)

    monkeypatch.setattr(parse_markdown_it, "parse_lines", deep)
    got, rejects = stage(BATCH)
    assert rejects.to_pylist() == [
        {
            "path": "p1",
            "doc_id": "d1",
            "stage": "blocks",
            "reason": "parse_error",
            "detail": "RecursionError: too deep",
            "n_bytes": None,
        }
    ]
    assert got.equals(want.filter(block.pc.not_equal(want["doc_id"], "d1")))


def test_a_run_says_how_many_documents_the_reference_parser_took():
    """The documents the core left to the reference parser are in the run's summary line
    (and its log), never silent; a run without any says nothing of it."""
    from chunkmill.jobs.counts import RunCounts

    work = {"bytes": 10, "parsed": 3, "repacked": 3, "seconds_parse": 0, "seconds_chunk": 0}
    counts = RunCounts()
    counts.add({}, {**work, "fallback": 2})
    assert counts.fallback == 2
    assert "2 parsed by the reference parser" in counts.blocks_line(Path("out"))
    quiet = RunCounts()
    quiet.add({}, work)
    assert "reference" not in quiet.blocks_line(Path("out"))
