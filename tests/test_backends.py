"""The product's block parser (the Rust core, pulldown-cmark) against the reference
(markdown-it-py): the same blocks (kinds, line spans, offsets, levels, heading paths, block
ids, fence info, list items, table rows, image alt texts) on every shared corpus document,
every CommonMark spec example and generated documents. Known divergences are listed below
with their reasons.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkmill.pipeline import block, runstore
from chunkmill.pipeline import parse as parse_mod
from chunkmill.pipeline.block import document_blocks
from chunkmill.pipeline.document import MARKDOWN_SUFFIXES
from chunkmill.pipeline.parse import BACKENDS
from tests.conftest import corpus_dir
from tests.helpers import table_bytes

# Where the backends knowingly differ: an input of each kind, and why. None of these occurs
# in the shared corpora or the spec examples. Each must still differ (a test checks), so a
# fix in either parser is noticed; the generated documents below leave these constructs out.
KNOWN_DIVERGENCES: list[tuple[str, str]] = [
    (
        "[x]: /u\n    indented",
        "a link reference definition followed at once by a line that cannot interrupt a "
        "paragraph (indented code, a list not starting at 1, an empty item, HTML of type 7): "
        "pulldown-cmark continues the paragraph, as CommonMark's reference implementation "
        "does; markdown-it-py ends the definition and starts a new block",
    ),
    (
        "[x]: /u\n10. item",
        "the same, with an ordered list that does not start at 1",
    ),
    (
        "<pre>\n<script>x</script>\n</pre>",
        "an HTML block opened by <pre>, <script>, <style> or <textarea> ends at the first "
        "line holding any of their closing tags (the spec; markdown-it-py); pulldown-cmark "
        "waits for the closing tag of the same element",
    ),
    (
        "   1. item\n    # heading",
        "a line indented 4+ spaces, but less than the list item's content, that would start "
        "a block: pulldown-cmark (and the spec) continue the item's paragraph lazily, since "
        "at the document level it is indented code; markdown-it-py measures the indentation "
        "from the item and lets it interrupt",
    ),
    (
        "| a | b |\n|---|---|\n    indented",
        "GFM table: a row indented 4+ spaces stays in the table for pulldown-cmark, "
        "markdown-it-py ends the table there",
    ),
    (
        "Foo |\n---",
        "GFM table: a line of one cell with a pipe, followed by a setext underline, is a "
        "heading for pulldown-cmark, a one-column table for markdown-it-py",
    ),
    (
        "```a&#1;b\n```",
        "numeric character references to control characters: pulldown-cmark decodes them "
        "(as the spec says), markdown-it-py keeps the reference in a fence info string",
    ),
    (
        "[![a [b](c)](d)](e)",
        "a link inside the text of a link that holds an image: the outer brackets are not a "
        "link for pulldown-cmark (the spec), so the paragraph is not an image alone",
    ),
]


def both(text: str, mdx: bool = False) -> list[dict[str, list]]:
    """Block columns of ``text`` from each backend."""
    return [document_blocks("d", text, True, mdx, name) for name in ("pyromark", "markdown-it")]


def first_difference(text: str, mdx: bool = False) -> str | None:
    ours, ref = both(text, mdx)
    if ours == ref:
        return None
    if len(ours["kind"]) != len(ref["kind"]):
        return f"{len(ours['kind'])} blocks from the Rust core, {len(ref['kind'])} from markdown-it"
    for name in ours:
        for i, (a, b) in enumerate(zip(ours[name], ref[name])):
            if a != b:
                return f"block {i} {name}: Rust core {a!r} markdown-it {b!r}"
    return "differ"  # not reached: equal columns of equal lengths


@pytest.mark.corpus
def test_corpora_blocks_are_identical():
    root = corpus_dir()
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in MARKDOWN_SUFFIXES
    )
    assert len(files) > 1000
    diffs = []
    for path in files:
        text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
        diff = first_difference(text, path.suffix.lower() == ".mdx")
        if diff:
            diffs.append(f"{path.relative_to(root)}: {diff}")
    assert not diffs, f"{len(diffs)} documents differ; first: {diffs[:3]}"


@pytest.mark.corpus
def test_spec_examples_blocks_are_identical():
    examples = json.loads((corpus_dir("commonmark_spec") / "examples.json").read_text("utf-8"))
    assert len(examples) == 655
    diffs = [
        (ex["example"], d) for ex in examples if (d := first_difference(ex["markdown"])) is not None
    ]
    assert not diffs, diffs[:3]


# Generated documents: units of markdown, joined by a line break or a blank line, with any
# line ending. The vocabulary leaves out the constructs of KNOWN_DIVERGENCES (a list or
# table, a link reference definition and an HTML block of <pre>/<script>/<style>/
# <textarea> always end with a blank line; no pipe outside tables; no numeric references to
# control characters; no link inside a link).
INLINE = [
    "word",
    "two  spaces",
    "*em* and _u_",
    "**b**",
    "`code`",
    "``a ` b``",
    "[link](u)",
    "[ref] and [Ref][]",
    "![alt](i.png)",
    "&amp; &#65; &copy; &nbsp;",
    "\\* \\#",
    "<b>x</b>",
    "é 日本語 🎉",
    "<http://x.y> a@b.c",
    "~~s~~",
    "<!-- c -->",
    "a\\",
    "!",
]
HEADINGS = ["# {}", "## {} #", "### {} ###", "###### {}", "#\t{}", "{}\n===", "{}\n  ---  "]
FENCES = [
    "```\n{}\n```",
    '```py title="x"\nx = 1\n\n# not a heading\n```',
    "~~~ a\\*b x&amp;y\n```\n~~~",
    "````\n```\n````",
    "  ```js\n  code\n  ```",
    "```\nunclosed {}",
    "```\nclosed with a tab\n```\t",
]
BLANK_AFTER = [  # units that end with a blank line
    "- {}\n- {}\n\n  more\n- {}\n",
    "1. {}\n2. {}\n   - nested\n   - more\n",
    "* {}\n\n  ```\n  code\n  ```\n* {}\n",
    "10) {}\n    text\n",
    "- [ ] task\n- [x] done\n",
    "| a | b |\n|---|:-:|\n| {} | 1 |\n| 2 | {} |\n",
    "| a |\n|---|\n",
    "[ref]: /url\n",
    "[x]: /u 'T'\n[y]:\n  /v\n",
    "<pre>\n{}\n</pre>\n",
    "<script>\nlet a = 1;\n\n</script>\n",
    "<style>\np {{}}\n</style> tail\n",
]
OTHER = [
    "{}",
    "{} {}\n{}",
    "    indented {}",
    "\tindented with a tab",
    "> {}\n> # quoted heading\n{}",
    "> > {}\n>",
    "<div>\n{}\n</div>",
    "<div class='x'>\n\n{}",
    "<!-- a\nb -->",
    "<?php echo 1; ?>",
    "<!DOCTYPE html>",
    "***",
    "---",
    "* * *",
    "![alt *x* `y`](i.png)",
    "[![badge](b.svg)](http://x)",
    "![a](b 'title')",
    "[ ![a](b)](c)",
    "![a](b) ![c](d)",
    "![x][ref]",
    "#NoSpace {}",
    "#5 bolt",
    "<Card>\n{}\n</Card>",
    "import x from 'y';",
    "export const a = 1;",
    "<Aside />",
]


@st.composite
def generated(draw):
    units = []
    for _ in range(draw(st.integers(1, 10))):
        blank_after = draw(st.booleans())
        template = draw(st.sampled_from(HEADINGS + FENCES + BLANK_AFTER + OTHER))
        fills = draw(st.lists(st.sampled_from(INLINE), min_size=4, max_size=4))
        units.append(template.format(*fills))
        if blank_after or template in BLANK_AFTER:
            units.append("")
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return "\n".join(units).replace("\n", eol), draw(st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=generated())
def test_generated_blocks_are_identical(doc):
    text, mdx = doc
    assert first_difference(text, mdx) is None


@pytest.mark.parametrize("text,reason", KNOWN_DIVERGENCES)
def test_known_divergences_still_differ(text, reason):
    assert first_difference(text) is not None, f"no longer differs: {reason}"


class PanicException(BaseException):
    """What pyo3 raises when Rust code panics: a BaseException, not an Exception."""


def test_a_failing_core_falls_back_to_the_reference(monkeypatch):
    def panic(*args):
        raise PanicException("boom")

    monkeypatch.setattr(block, "_core_table", panic)
    text = "# Title\n\n- a\n- b\n"
    cols = document_blocks("d", text, True, False)
    assert list(zip(cols["kind"], cols["line_start"], cols["line_end"])) == [
        ("heading", 1, 1),
        ("list", 3, 4),
    ]
    assert cols == document_blocks("d", text, True, False, "markdown-it")


def test_an_interrupt_is_not_swallowed(monkeypatch):
    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(block, "_core_table", interrupt)
    with pytest.raises(KeyboardInterrupt):
        document_blocks("d", "# Title\n", True, False)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown parser"):
        parse_mod.check_backend("commonmark.js")


def test_cli_offers_the_backends():
    from chunkmill.jobs.options import PARSERS

    assert list(PARSERS) == list(BACKENDS)
    assert PARSERS[0] == parse_mod.DEFAULT_BACKEND


def test_switching_parser_reparses_and_keeps_every_chunk(tmp_path):
    """A run under the other backend does not reuse blocks (the parser key covers the
    backend) and yields the same files: no chunk added or removed."""
    from tests.conftest import SAMPLE
    from tests.test_runs import run

    out = tmp_path / "out"
    first = run(SAMPLE, out, "--parser", "markdown-it")
    first_dir = runstore.resolve(out)
    second = run(SAMPLE, out)  # the default, the Rust core
    assert "markdown-it" in first["parser_version"] and "pyromark" in second["parser_version"]
    assert second["documents_parsed"] == first["documents_parsed"] > 0
    assert (second["chunks_added"], second["chunks_removed"]) == (0, 0)
    second_dir = runstore.resolve(out)
    for name in ("documents", "blocks", "chunks", "postings", "rejects"):
        assert table_bytes(first_dir, name) == table_bytes(second_dir, name), name


def test_the_reference_parser_shares_the_cores_bounds():
    """The bounds both parsers apply (a heading title's length, the heading source cleaned,
    MDX look-ahead) are the core's: a document near them gives both the same blocks."""
    from chunkmill import _core
    from chunkmill.pipeline import mdx

    assert (parse_mod.TITLE_CHARS, parse_mod.TITLE_SOURCE_CHARS) == (
        _core.TITLE_CHARS,
        _core.TITLE_SOURCE_CHARS,
    )
    assert (mdx.SCAN_BUDGET_PER_CHAR, mdx.SCAN_BUDGET_FLOOR) == (
        _core.MDX_SCAN_BUDGET_PER_CHAR,
        _core.MDX_SCAN_BUDGET_FLOOR,
    )
