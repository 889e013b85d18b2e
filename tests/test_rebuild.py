"""Nothing lost: blocks plus the whitespace between them rebuild every document."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkmill.pipeline.block import document_blocks
from tests.invariants import assert_blocks_rebuild

LINES = [
    "# Heading",
    "## Sub *emph*",
    "####### seven",
    "#NoSpace",
    "Setext",
    "===",
    "---",
    "***",
    "para text with words.",
    "  indented two",
    "    indented code",
    "\tTabbed code",
    "```py",
    "```",
    "~~~",
    "````",
    "> quote",
    "> # quoted heading",
    ">",
    "- item",
    "  - nested",
    "1. one",
    "10) ten",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "<div>",
    "</div>",
    "<!-- comment -->",
    "[ref]: /url",
    "![img](x.png)",
    "import x from 'y';",
    "export const a = 1;",
    "<Tabs>",
    "</Tabs>",
    "<Aside />",
    '<Card title="{x}"',
    ">",
    "+++",
    "title = 'x'",
    "key: value",
    "",
    "",
    "",
    "   ",
    "\u00a0nbsp",
    "emoji 🎉 text",
]


@st.composite
def documents(draw):
    lines = draw(st.lists(st.sampled_from(LINES), max_size=40))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    tail = draw(st.sampled_from(["", eol]))
    return eol.join(lines) + tail


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents(), mdx=st.booleans(), markdown=st.booleans())
def test_generated_documents_rebuild(text, mdx, markdown):
    assert_blocks_rebuild(text, document_blocks("d", text, markdown, mdx and markdown))


def test_every_corpus_document_rebuilds(corpora_blocks):
    docs = pl.read_parquet(corpora_blocks / "documents.parquet", columns=["doc_id", "text"])
    blocks = pl.read_parquet(corpora_blocks / "blocks.parquet")
    assert docs.height > 1000 and blocks.height > docs.height
    by_doc = blocks.partition_by("doc_id", as_dict=True, maintain_order=True)
    checked = 0
    for doc_id, text in docs.iter_rows():
        part = by_doc.get((doc_id,))
        if part is None:
            assert not text.strip(), f"{doc_id} has text but no blocks"
            continue
        assert_blocks_rebuild(text, part.sort("block_index").to_dict(as_series=False))
        checked += 1
    assert checked == docs.filter(pl.col("text").str.strip_chars() != "").height


def test_corpora_have_no_rejects(corpora_blocks):
    rejects = pl.read_parquet(corpora_blocks / "rejects.parquet")
    assert rejects.height == 0, rejects.to_dicts()[:5]


@pytest.mark.parametrize("text", ["", "   \n\n", "\n"])
def test_blank_documents_have_no_blocks(text):
    assert document_blocks("d", text, True, False)["kind"] == []


def test_every_kind_is_one_of_the_enum(corpora_blocks):
    from chunkmill._core import KIND_NAMES

    kinds = set(pl.read_parquet(corpora_blocks / "blocks.parquet", columns=["kind"])["kind"])
    assert kinds <= set(KIND_NAMES)
    assert len(kinds) >= 11  # the corpora exercise nearly every kind
