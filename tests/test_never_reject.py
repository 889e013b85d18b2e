"""Never reject for size: a heading, fence, word, line or indentation longer than
the cap is cut, breadcrumb titles are shortened, and every readable document yields chunks
within the cap, covering all of its text."""

from __future__ import annotations

import base64
import random

import pytest

from chunkmill.pipeline import mdx
from chunkmill.pipeline.parse import TITLE_CHARS, parse
from chunkmill.pipeline.policy import Policy
from tests.chunk_quality import unbalanced_fence
from tests.helpers import chunk_text, sentences

DEFAULT = Policy()
TINY = Policy(target_tokens=12, max_tokens=16, min_tokens=0, overlap_tokens=0)


def covered(text: str, chunks: list[dict]) -> None:
    """Every non-whitespace character of ``text`` lies in some chunk span."""
    marks = bytearray(len(text))
    for c in chunks:
        for s in c["spans"]:
            marks[s["start"] : s["end"]] = b"\x01" * (s["end"] - s["start"])
    lost = [i for i, ch in enumerate(text) if not marks[i] and not ch.isspace()]
    assert not lost, f"{len(lost)} characters lost, first at {lost[0]}"


def check(text: str, policy: Policy = DEFAULT, path: str = "doc.md") -> list[dict]:
    chunks = chunk_text(text, policy, path)  # asserts there is no reject
    assert chunks
    assert max(c["n_tokens"] for c in chunks) <= policy.max_tokens
    assert not any(unbalanced_fence(c["text"]) for c in chunks)
    covered(text, chunks)
    return chunks


RNG = random.Random(13)
BASE64 = base64.b64encode(RNG.randbytes(37_500)).decode()


@pytest.mark.parametrize(
    "doc",
    [
        "# " + "<" * 20_000 + "\n\nText.\n",  # was over_cap (and 4 GB at 200,000)
        "# " + "_" * 20_000 + "\n\nText.\n",
        "# Data " + BASE64 + "\n\nText under the heading.\n",  # a 50 kB heading
        "# " + sentences(400) + "\n\nText.\n\n## Next\n\nMore.\n",  # a heading over the cap
        # a paragraph followed by --- is a setext heading: the whole paragraph is its title
        sentences(120).replace(". ", ".\n") + "\n---\n\n" + sentences(300) + "\n",
    ],
    ids=["lt", "underscore", "base64", "prose", "setext"],
)
def test_a_heading_longer_than_the_cap_is_cut_and_its_title_shortened(doc):
    chunks = check(doc)
    titles = [t for c in chunks for t in c["breadcrumb"]]
    assert titles and max(map(len, titles)) <= TITLE_CHARS
    assert any(t.endswith("…") for t in titles)


def test_breadcrumb_prefix_takes_at_most_a_quarter_of_a_small_cap():
    doc = "".join(f"{'#' * d} Level {d} " + "long title words " * 8 + "\n\n" for d in (1, 2, 3))
    chunks = check(doc + sentences(30), TINY)
    prefixed = [c for c in chunks if c["embed_text"] != c["text"]]
    assert prefixed
    for c in prefixed:
        line = c["embed_text"].split("\n\n", 1)[0]
        assert len(line) <= TINY.max_tokens and line.endswith("…")


@pytest.mark.parametrize("closed", [True, False])
def test_a_fence_of_ten_thousand_backticks_is_reopened_short(closed):
    run = "`" * 10_000
    body = "".join(f"line {i}\n```\n" for i in range(400))  # ``` alone: closes a 3-run
    doc = f"# Code\n\n{run}python\n{body}" + (f"{run}\n" if closed else "")
    chunks = check(doc)
    parts = [c for c in chunks if c["is_split"]]
    assert len(parts) > 2
    for c in parts:  # each part: a short fence, longer than any backtick run inside
        lines = c["text"].splitlines()
        opening = next(ln for ln in lines if ln.startswith("````"))
        assert opening == "````python" and lines[-1] == "````"


def test_code_whose_fence_cannot_be_repeated_is_cut_into_plain_parts():
    """An unclosed fence of 16,000 backticks around a line of 8,000: the shortest fence that
    nothing inside closes is itself too long to open every part. The parts are the code's
    lines without fences, so their text grows with the block's, not with its square (each
    part would otherwise repeat 16,000 backticks to hold a character or two, and the
    document would end a reject after minutes)."""
    doc = "# Code\n\n" + "`" * 16_000 + "\nline of code\n" + "`" * 8_000 + "\nmore code\n"
    chunks = check(doc)
    assert sum(len(c["text"]) for c in chunks) < 4 * len(doc)  # parts closed: twice at most
    assert "line of code" in "".join(c["text"] for c in chunks)


def test_a_fence_info_string_of_100_kb():
    doc = "```" + "x" * 100_000 + "\nprint(1)\n```\n"
    chunks = check(doc)
    assert "print(1)" in chunks[0]["text"] and len(chunks[0]["text"]) < 100


@pytest.mark.parametrize(
    "doc",
    [
        "# Word\n\n" + "x" * 200_000 + "\n",  # one word: cut by characters
        "# Line\n\n" + "word " * 40_000 + "\n",  # one line of words
        "".join("  " * i + "- item\n" + "  " * i + "  more\n" for i in range(800)),  # indent
        "# Gap\n\nfirst\n" + "\n" * 50_000 + "second\n",
        "a\u0301" * 20_000 + "\n",
        "| a | b |\n|---|---|\n| " + "cell " * 5_000 + "| x |\n",
    ],
    ids=["word", "line", "deep-list", "blank-lines", "combining", "table-row"],
)
@pytest.mark.parametrize("tokenizer", ["tiktoken:cl100k_base", "estimate"])
def test_long_words_lines_and_indentation_fit(doc, tokenizer):
    # exact counts see the whitespace between the pieces a chunk joins (blank lines,
    # indentation), which the estimate's sums leave out
    check(doc, DEFAULT.replace(tokenizer=tokenizer))
    check(doc, TINY.replace(tokenizer=tokenizer))


def test_cl100k_cap_holds_on_a_huge_heading():
    pytest.importorskip("tiktoken", reason="tokenizers extra not installed")
    policy = Policy(
        tokenizer="tiktoken:cl100k_base",
        target_tokens=200,
        max_tokens=256,
        min_tokens=20,
        overlap_tokens=20,
    )
    check("# Data " + BASE64[:20_000] + "\n\nText.\n\n## " + "字" * 3_000 + "\n\nMore.\n", policy)


def test_mdx_look_ahead_is_bounded(monkeypatch):
    """Thousands of tags never closed: each would read to the end of the document. Past the
    budget an element is taken as never closed and ends at the next blank line."""
    lines = ["<Note>", "", "text", "", "<Note>", "", "more", "", "</Note>", ""]
    unbounded = mdx.segments(lines, 0)
    assert ("mdx_jsx", 4, 9) in unbounded
    monkeypatch.setattr(mdx, "SCAN_BUDGET_FLOOR", 0)
    monkeypatch.setattr(mdx, "SCAN_BUDGET_PER_CHAR", 0)
    bounded = mdx.segments(lines, 0)
    assert ("mdx_jsx", 0, 1) in bounded and ("mdx_jsx", 4, 5) in bounded
    doc = "".join(f"<Note{i % 3}>\n\nText {i}.\n\n" for i in range(3_000))
    _, blocks = parse(doc, is_mdx=True)
    assert sum(b.kind == "mdx_jsx" for b in blocks) == 3_000


# A fence line alone over the cap (the code block has no body) rejected
# the whole document after 16 repacks, minutes of CPU on a large one; an unclosed fence in
# a block quote was closed outside the quote, opening a new fence at the top level.
HUGE_FENCES = {
    "backticks_alone": "# T\n\ntext\n\n" + "`" * 2000 + "\n",
    "long_info": "# T\n\ntext\n\n```" + "x" * 8000 + "\n",
    "tilde_info_words": "# T\n\ntext\n\n~~~" + " word" * 1500 + "\n~~~\n",
    "in_a_list": "# T\n\n- item\n\n  ```" + " word" * 1500 + "\n",
    "in_a_quote": "# T\n\n> ```" + " word" * 1500 + "\n",
}


@pytest.mark.parametrize("name", sorted(HUGE_FENCES))
def test_a_fence_line_over_the_cap_is_an_empty_code_block(name):
    chunks = check(HUGE_FENCES[name])
    assert len(chunks) == 1 and chunks[0]["text"].startswith("# T")


def test_an_unclosed_fence_in_a_quote_is_closed_inside_the_quote():
    from markdown_it import MarkdownIt

    lines = "".join(f"> c{i} some words here\n" for i in range(4000))
    chunks = check("# T\n\n> ```\n" + lines)
    assert len(chunks) > 10
    md = MarkdownIt("commonmark")
    for c in chunks[1:]:
        assert c["text"].rstrip().endswith("> ```")
        tokens = md.parse(c["text"])
        # one quote holding one code block, and nothing after the quote
        assert [t.type for t in tokens if t.level == 0] == ["blockquote_open", "blockquote_close"]


def _table(prefix: str, rows: int) -> str:
    lines = [f"{prefix}| key | value | note |", f"{prefix}|-----|-------|------|"]
    lines += [f"{prefix}| {i} | value {i} | {sentences(1, start=i)} |" for i in range(rows)]
    return "\n".join(lines)


@pytest.mark.parametrize("prefix", ["> ", "  "], ids=["quote", "list"])
def test_a_table_in_a_quote_or_list_item_repeats_its_header(prefix):
    from markdown_it import MarkdownIt

    head = "> Values:\n>\n" if prefix == "> " else "- Values:\n\n"
    text = "# T\n\n" + head + _table(prefix, 300) + "\n"
    chunks = check(text)
    parts = [c for c in chunks if "| key | value | note |" in c["text"]]
    assert len(parts) > 3 and len(parts) == len(chunks)  # every part under the header
    md = MarkdownIt("commonmark").enable("table")
    for c in parts:
        assert "table_open" in [t.type for t in md.parse(c["text"])]
    # one that fits stays whole, even when its quote is cut
    small = "# T\n\n" + "\n".join(["> " + sentences(40, start=i) + "\n>" for i in range(6)])
    small += "\n" + _table("> ", 8) + "\n"
    chunks = check(small)
    assert sum("|-----|" in c["text"] for c in chunks) == 1


def test_lines_a_split_adds_keep_a_crlf_documents_endings():
    code = "\r\n".join(
        ["```python", *(f"x{i} = {i}  # {sentences(1, start=i)}" for i in range(400))]
    )
    text = "# T\r\n\r\n" + code + "\r\n"  # an unclosed fence: every part re-opens and closes
    chunks = check(text)
    assert len(chunks) > 3
    for c in chunks:
        assert "\n" not in c["text"].replace("\r\n", ""), repr(c["text"][-40:])
