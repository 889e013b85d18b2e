"""embed_text reads as the model should: heading lines clean, include lines left out, while
text stays the source's own slice and chunk ids stay what they were."""

from __future__ import annotations

from chunkmill.pipeline.policy import Policy
from tests.helpers import chunk_text

SMALL = Policy(  # the estimate's sizes
    target_tokens=20, max_tokens=60, min_tokens=0, overlap_tokens=0, tokenizer="estimate"
)

DOC = """# Guide

## Install { #install-it }

Run the installer on every machine that should hold the tool.

{* ../../docs_src/first_steps/tutorial001.py hl[3] *}

Then check the version it prints.

## Configure {: #conf .wide }

Settings live in one file.

### Keys {{< badge "new" >}} { #keys .x data-k="v" }

Each key is one line.
"""


def _holding(rows, source: str) -> dict:
    (row,) = [r for r in rows if source in r["text"]]
    return row


def test_heading_attributes_and_templates_leave_embed_text_but_not_text():
    rows = chunk_text(DOC, SMALL)
    install, conf = _holding(rows, "## Install {"), _holding(rows, "## Configure {")
    keys = _holding(rows, "### Keys {")
    assert "{ #install-it }" in install["text"]
    assert "## Install\n" in install["embed_text"] and "{" not in install["embed_text"]
    assert "{: #conf .wide }" in conf["text"]
    assert "## Configure\n" in conf["embed_text"] and "#conf" not in conf["embed_text"]
    assert "### Keys\n" in keys["embed_text"] and "badge" not in keys["embed_text"]
    assert keys["breadcrumb"][-1] == "Keys"


def test_an_include_line_is_left_out_with_its_blank_line():
    (install,) = chunk_text(DOC)
    assert "{* ../../docs_src" in install["text"]
    assert "{*" not in install["embed_text"]
    assert "tool.\n\nThen check" in install["embed_text"]


def test_text_is_the_source_slice_and_ids_do_not_depend_on_the_embedding_form():
    rows = chunk_text(DOC, SMALL)
    for r in rows:
        assert DOC[r["char_start"] : r["char_end"]] == r["text"]
    changed = [not r["embed_text"].endswith(r["text"]) for r in rows]
    assert any(changed) and not all(changed)
    # the same heading with and without its id: one embedding form, the ids of each source
    plain = DOC.replace(" { #install-it }", " {#install}")
    bare = DOC.replace(" { #install-it }", "")
    a, b = (
        _holding(chunk_text(plain, SMALL), "## Install"),
        _holding(chunk_text(bare, SMALL), "## Install"),
    )
    assert a["embed_text"] == b["embed_text"] and a["anchor"] == b["anchor"]
    assert a["chunk_id"] != b["chunk_id"]


def test_a_chunk_of_nothing_but_include_lines_keeps_them():
    rows = chunk_text("{* ../src/a.py *}\n{* ../src/b.py *}\n")
    assert [r["embed_text"] for r in rows] == ["doc\n\n{* ../src/a.py *}\n{* ../src/b.py *}"]


def test_a_document_without_such_markup_embeds_its_text_as_it_is():
    text = "# Title\n\n## Part\n\nSome words, a {brace} and `code {x}`.\n"
    for r in chunk_text(text):
        assert r["embed_text"].endswith(r["text"])
