"""The Rust core's heading and context text functions (chunkmill._core) against Python's
own: str.lower (Final_Sigma, U+0130), str.casefold and unicodedata.category of this
interpreter, over every code point; and the one call that cleans a document's headings."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from chunkmill import _core
from chunkmill.pipeline import heading

EVERY = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)
SIGMA_CONTEXTS = ["ΑΣ ΣΑΣ.", "AΣ\u0301", "AΣ\u0301B", "Σ", "a\u00adΣ", "Σa", "ΣΣΣ", "ἈΣ\u0345"]


def test_lower_and_casefold_are_pythons_on_every_code_point():
    assert _core.str_lower(EVERY) == EVERY.lower()
    assert _core.str_casefold(EVERY) == EVERY.casefold()
    for text in SIGMA_CONTEXTS:
        assert _core.str_lower(text) == text.lower(), text


@given(st.text(st.sampled_from([*"aAΣσς \u0301\u00ad.'İß", "\x1c", "\U0001f389"])))
def test_lower_of_mixed_texts(text):
    assert _core.str_lower(text) == text.lower()
    assert _core.str_casefold(text) == text.casefold()


def _kept(c: str) -> bool:
    cat = unicodedata.category(c)
    return (
        c in " -"
        or cat[0] in "LM"
        or cat in ("Nd", "Nl", "Pc")
        or (cat == "So" and ("\u24b6" <= c <= "\u24e9" or "\U0001f130" <= c <= "\U0001f189"))
    )


def test_slugs_keep_letters_marks_and_numbers_by_unicodedata_category():
    want = "".join(c for c in EVERY.lower() if _kept(c)).replace(" ", "-")
    assert heading.slug(EVERY) == want


def test_a_documents_headings_are_cleaned_in_one_call_with_one_inline_parse():
    calls = []

    def plain(texts):
        calls.append(texts)
        return [t.replace("*", "") for t in texts]

    blocks = ["# Usage", "## *Usage*", "## Setup {#setup}", "Usage\n====="]
    texts, explicit, anchors = _core.headings(blocks, plain)
    assert calls == [["*Usage*"]]  # only the text with markup, once
    assert texts == ["Usage", "Usage", "Setup", "Usage"]
    assert explicit == [None, None, "setup", None]
    assert anchors == ["usage", "usage-1", "setup", "usage-2"]
    assert _core.headings(["# a"], lambda texts: 1 / 0) == (["a"], [None], ["a"])


_PIECES = ["`", "``", " ", "a", "_", "<b>", "*", "&amp;", "\\", "\u3000", "\x1c", "é", "\n", "\0"]


@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_headings_with_code_spans_read_as_the_reference_inline_parser_reads_them(text):
    """Text whose only markup is code spans is reduced by the core; whatever the core
    reduces of text with markup equals markdown-it's reduction."""
    got = _core.heading_plain_text(text)
    if got is not None and set(text) & set("*_`[]<>&\\!~"):
        assert got == heading._reduced(text, None)


def test_code_spans_are_reduced_without_the_reference_parser():
    assert _core.heading_plain_text("The `run()` method") == "The run() method"
    assert _core.heading_plain_text("`a` *b*") is None  # emphasis: the reference parser
