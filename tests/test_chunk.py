"""Chunking rules, one test per case the packer must handle."""

from __future__ import annotations

import re

import pytest

from chunkmill.pipeline.policy import Policy
from tests.chunk_quality import unbalanced_fence
from tests.helpers import chunk_text, sentences, words

# The sizes these tests state are the estimate's (about 4 characters of English a token):
# the packing rules are the same under any count.
SMALL = Policy(
    target_tokens=100, max_tokens=150, min_tokens=20, overlap_tokens=20, tokenizer="estimate"
)


def _boundary_headings(text: str, depth: int) -> list[str]:
    return [m.group(0) for m in re.finditer(rf"^#{{1,{depth}}} .*$", text, re.M)]


def test_no_chunk_crosses_a_heading_within_depth():
    doc = "\n\n".join(
        f"## Part {i}\n\n{sentences(12, start=i * 20)}\n\n#### Deep {i}\n\n"
        f"{sentences(3, start=i * 20 + 15)}"
        for i in range(5)
    )
    chunks = chunk_text(doc, SMALL)
    assert len(chunks) > 5
    for c in chunks:
        # a boundary heading (level <= 3) may only open a chunk, never sit after content
        body = c["text"]
        for h in _boundary_headings(body, 3):
            assert body.startswith(h), f"chunk crosses {h!r}"
    deep = [c for c in chunks if "#### Deep" in c["text"]]
    assert deep and all(c["section_title"].startswith("Part") for c in deep)


def test_code_block_of_800_tokens_stays_whole():
    code = "```python\n" + "\n".join(f"value_{i:04d} = compute({i})" for i in range(66)) + "\n```"
    # 66 lines of 12 estimated tokens (two numbers each): ~810 estimated tokens
    doc = f"## Code\n\nIntro line.\n\n{code}\n"
    policy = Policy(target_tokens=500, max_tokens=1000, min_tokens=100, tokenizer="estimate")
    chunks = chunk_text(doc, policy)
    holding = [c for c in chunks if "value_0000" in c["text"]]
    assert len(holding) == 1 and "value_0065" in holding[0]["text"]
    assert 700 < holding[0]["n_tokens"] <= 1000
    assert holding[0]["text"].startswith("## Code")  # kept with its heading


def test_table_under_max_stays_whole():
    rows = "\n".join(f"| key_{i} | {words(8, i)} |" for i in range(25))
    doc = f"## Table\n\n| Key | Value |\n|---|---|\n{rows}\n"
    chunks = chunk_text(doc, Policy(target_tokens=200, max_tokens=600, min_tokens=50))
    holding = [c for c in chunks if "key_0" in c["text"]]
    assert len(holding) == 1 and "key_24" in holding[0]["text"]


def test_oversized_table_repeats_header_in_every_part():
    rows = "\n".join(f"| key_{i} | {words(8, i)} |" for i in range(120))
    doc = f"## Table\n\n| Key | Value |\n|:---|---:|\n{rows}\n"
    chunks = chunk_text(doc, SMALL)
    parts = [c for c in chunks if "key_" in c["text"]]
    assert len(parts) > 3
    for c in parts:
        table = c["text"][c["text"].index("| Key") :]
        assert table.startswith("| Key | Value |\n|:---|---:|\n| key_")
        assert c["n_tokens"] <= SMALL.max_tokens
    seen = [int(k) for c in parts for k in re.findall(r"key_(\d+)", c["text"])]
    assert sorted(set(seen)) == list(range(120))


def test_oversized_code_reopens_fence_with_info_string():
    code = (
        '```ts title="x.ts"\n'
        + "\n".join(f"const v{i} = {i};  // line {i}" for i in range(200))
        + "\n```"
    )
    chunks = chunk_text(f"## Code\n\n{code}\n", SMALL)
    parts = [c for c in chunks if "const v" in c["text"]]
    assert len(parts) > 3
    for c in parts:
        body = c["text"][c["text"].index("```ts") :]
        lines = body.split("\n")
        assert lines[0] == '```ts title="x.ts"' and lines[-1] == "```"
        assert len(lines) > 2  # never a fence line alone
        assert not unbalanced_fence(c["text"])
        assert c["n_tokens"] <= SMALL.max_tokens
    assert [c["part"] for c in parts] == list(range(1, len(parts) + 1))
    assert all(c["is_split"] and c["parts"] == len(parts) for c in parts)


def test_long_paragraph_splits_by_sentences_with_overlap():
    para = sentences(60)  # 60 sentences of 10 words ~ 60 * 55 chars / 4 = ~825 tokens
    chunks = chunk_text(f"# Long\n\n{para}\n", SMALL)
    assert len(chunks) > 4
    sentence = re.compile(r"S\d{3} [^.]*\.")
    for c in chunks:
        # every chunk holds whole sentences only
        body = c["text"].removeprefix("# Long\n\n")
        assert sentence.sub("", body).strip() == ""
    for prev, nxt in zip(chunks, chunks[1:]):
        first = sentence.search(nxt["text"]).group(0)
        assert first in prev["text"], "next chunk starts with the tail of the previous one"
        assert 0 < nxt["overlap_tokens"] <= SMALL.overlap_tokens
    sizes = [c["n_tokens"] for c in chunks[:-1]]
    assert all(60 <= s <= SMALL.max_tokens for s in sizes), sizes  # target steers sizes


def test_target_steers_sizes():
    para = "\n\n".join(sentences(4, start=i * 4) for i in range(60))  # ~60 paragraphs
    big = chunk_text(f"# T\n\n{para}\n", Policy(target_tokens=600, max_tokens=1000, min_tokens=50))
    small = chunk_text(
        f"# T\n\n{para}\n", Policy(target_tokens=200, max_tokens=1000, min_tokens=50)
    )
    assert len(small) > 2 * len(big)
    assert max(c["n_tokens"] for c in small[:-1]) <= 200 + 60


def test_image_only_block_is_its_own_chunk_counted_by_its_alt_text():
    from tests.estimate_oracle import estimate

    chunks = chunk_text("# Pics\n\nSome words here.\n\n![A diagram of the log](d.png)\n\nMore.\n")
    images = [c for c in chunks if c["chunk_type"] == "image"]
    assert len(images) == 1
    img = images[0]
    assert (img["text"], img["image_src"]) == ("A diagram of the log", "d.png")
    assert img["embed_text"] == "Pics\n\nA diagram of the log"  # the context header, then alt
    # what is embedded is counted: the header, the blank line, the alt text
    assert img["n_tokens"] == estimate("A diagram of the log") + estimate("Pics\n\n") + 1
    assert img["chunk_id"] and img["breadcrumb"] == ["Pics"]
    text_chunks = [c for c in chunks if c["chunk_type"] != "image"]
    assert all("![" not in c["text"] for c in text_chunks)


@pytest.mark.parametrize("alt", ["", "   "])
def test_an_image_without_alt_text_stays_in_its_sections_text(alt):
    doc = f"# Pics\n\nSome words here.\n\n![{alt}](assets/d.png)\n\nMore.\n"
    chunks = chunk_text(doc)
    assert [c["chunk_type"] for c in chunks] == ["section"]  # nothing to embed on its own
    (only,) = chunks
    assert f"![{alt}](assets/d.png)" in only["text"] and "assets/d.png" in only["embed_text"]
    assert only["spans"] == [{"start": 0, "end": len(doc) - 1}]  # every character covered
    big = f"# Pics\n\n![{alt}](data:image/png;base64,{'QUJD' * 3000})\n"
    parts = chunk_text(big, Policy(target_tokens=200, max_tokens=300, min_tokens=50))
    assert len(parts) > 1 and all(p["n_tokens"] <= 300 for p in parts)  # cut as text is


def test_headingless_document_uses_the_fallback():
    doc = "\n\n".join(sentences(5, start=i * 5) for i in range(30))
    chunks = chunk_text(doc, SMALL, path="notes/plain.md")
    assert {c["strategy"] for c in chunks} == {"sentence"}
    assert {c["chunk_type"] for c in chunks} == {"text"}
    assert {c["name"] for c in chunks} == {"plain"}
    assert all(c["n_tokens"] <= SMALL.max_tokens for c in chunks)


def test_no_space_hash_is_text():
    chunks = chunk_text("#Invalid heading\n\nSome text.\n")
    assert [c["strategy"] for c in chunks] == ["sentence"]
    assert chunks[0]["headings"] == [] and chunks[0]["breadcrumb"] == []


def test_h1_to_h4_jump_breadcrumb():
    doc = (
        f"# Guide\n\n{sentences(2)}\n\n#### Detail\n\n{sentences(2)}\n\n## Next\n\n{sentences(2)}\n"
    )
    # the Guide section (~65 tokens) does not fit max 50, so it is cut at the h4
    chunks = chunk_text(
        doc, Policy(min_tokens=0, target_tokens=20, max_tokens=50, overlap_tokens=0)
    )
    crumbs = [c["breadcrumb"] for c in chunks]
    assert ["Guide", "Detail"] in crumbs and ["Guide", "Next"] in crumbs
    detail = next(c for c in chunks if c["breadcrumb"] == ["Guide", "Detail"])
    assert detail["section_title"] == "Guide" and detail["header_level"] == 1
    # the header names the title (which is the H1 Guide); the text opens with its own heading
    assert detail["embed_text"] == f"Guide\n\n{detail['text']}"
    assert detail["text"].startswith("#### Detail")


def test_empty_section_merges_forward():
    doc = f"# Title\n\n## Empty\n\n## Full\n\n{sentences(30)}\n"
    chunks = chunk_text(doc, SMALL)
    assert chunks[0]["text"].startswith("# Title\n\n## Empty\n\n## Full\n\nS000")
    assert chunks[0]["headings"] == ["Title", "Empty", "Full"]
    assert chunks[0]["breadcrumb"] == ["Title", "Full"]
    assert not any(c["text"].strip() in ("# Title", "## Empty") for c in chunks)


def test_trailing_empty_section_is_not_a_heading_alone():
    chunks = chunk_text(f"# A\n\n{sentences(3)}\n\n## Empty at the end\n")
    assert len(chunks) == 1 and chunks[0]["text"].endswith("## Empty at the end")


def test_edit_above_a_section_keeps_its_ids():
    tail = "\n\n".join(f"## Section {i}\n\n{sentences(8, start=i * 10)}" for i in range(4))
    before = chunk_text(f"# Doc\n\nIntro.\n\n{tail}\n", SMALL)
    after = chunk_text(
        f"# Doc\n\nIntro, now longer and edited.\n\nNew paragraph.\n\n{tail}\n", SMALL
    )
    ids = lambda cs: {c["chunk_id"] for c in cs if c["section_title"] != "Doc"}  # noqa: E731
    assert ids(before) and ids(before) == ids(after)
    first = lambda cs: next(c for c in cs if c["section_title"] == "Doc")["chunk_id"]  # noqa: E731
    assert first(before) != first(after)


def test_policy_change_changes_ids():
    doc = f"# A\n\n{sentences(10)}\n"
    one = {c["chunk_id"] for c in chunk_text(doc)}
    two = {c["chunk_id"] for c in chunk_text(doc, Policy(overlap_tokens=60))}
    assert one and not one & two


def test_small_chunks_merge_within_their_section():
    doc = f"# A\n\n{sentences(21)}\n\n## B\n\n{sentences(2, start=50)}\n"
    chunks = chunk_text(
        doc, Policy(target_tokens=100, max_tokens=150, min_tokens=60, overlap_tokens=0)
    )
    a = [c for c in chunks if c["section_title"] == "A"]
    assert all(c["n_tokens"] >= 60 for c in a)
    b = [c for c in chunks if c["section_title"] == "B"]
    assert len(b) == 1 and b[0]["n_tokens"] < 60  # alone in its section: stays, never crosses


def test_whole_section_that_fits_stays_one_chunk():
    doc = f"## One\n\n{sentences(14)}\n"  # ~200 tokens: over target 100, under max 250
    policy = Policy(target_tokens=100, max_tokens=250, min_tokens=10, tokenizer="estimate")
    chunks = chunk_text(doc, policy)
    assert len(chunks) == 1 and not chunks[0]["is_split"]


@pytest.mark.parametrize(
    ("mode", "in_text", "metadata"),
    [("metadata", False, {"title": "T"}), ("include", True, None), ("strip", False, None)],
)
def test_front_matter_modes(mode, in_text, metadata):
    chunks = chunk_text("---\ntitle: T\n---\n# Body\n\nText.\n", Policy(front_matter=mode))
    assert ("title: T" in chunks[0]["text"]) is in_text
    fm = chunks[0]["front_matter"]
    assert (dict(fm) if fm else None) == metadata


def test_embed_text_prefix_rules():
    doc = f"# Top\n\n## Sub\n\n{sentences(40)}\n"
    chunks = chunk_text(doc, SMALL)
    assert chunks[0]["embed_text"] == chunks[0]["text"]  # starts with its heading
    later = chunks[1]
    assert later["embed_text"] == f"Top > Sub\n\n{later['text']}"
    off = chunk_text(
        doc,
        Policy(
            target_tokens=100,
            max_tokens=150,
            min_tokens=20,
            overlap_tokens=20,
            breadcrumb_prefix=False,
        ),
    )
    assert all(c["embed_text"] == c["text"] for c in off)


def test_plain_text_uses_recursive():
    text = "\n\n".join(sentences(6, start=i * 6) for i in range(20))
    chunks = chunk_text(text, SMALL, path="notes.txt")
    assert {c["strategy"] for c in chunks} == {"recursive"}


def test_fixed_strategy_ignores_structure():
    doc = "\n\n".join(f"## H{i}\n\n{sentences(1, start=i)}" for i in range(20))
    policy = Policy(
        target_tokens=100, max_tokens=150, min_tokens=20, overlap_tokens=20, pack_siblings=False
    )
    assert len(chunk_text(doc, policy)) == 20  # markdown: one chunk per section
    chunks = chunk_text(doc, policy.replace(strategy="fixed"))
    assert {c["strategy"] for c in chunks} == {"fixed"}
    assert len(chunks) < 10
    assert any(len(re.findall(r"^## H", c["text"], re.M)) > 2 for c in chunks)
    assert all(c["n_tokens"] <= 150 for c in chunks)


def test_spans_and_lines_point_into_the_source():
    doc = "---\na: 1\n---\n# T\n\nalpha beta.\n\n## U\n\ngamma delta.\n"
    for c in chunk_text(doc, Policy(min_tokens=0)):
        for span in c["spans"]:
            assert doc[span["start"] : span["end"]].strip()
        assert c["text"].startswith(doc[c["char_start"] : c["char_start"] + 5])
        first_line = doc.splitlines()[c["line_start"] - 1]
        assert c["text"].startswith(first_line)


def test_indentation_counts_toward_split_parts():
    """Deeply indented code: the whitespace between lines is part of every part's size."""
    from tests import split

    body = "\n".join("            " + f"call_{i}(value);" for i in range(400))
    code = f"```cpp title='x.cc'\n{body}\n```"
    count = lambda texts: [len(t) for t in texts]  # noqa: E731 - one token per character
    parts = split.split_block("code", code, 1000, 800, count, None)
    assert len(parts) > 3
    for p in parts:
        assert len(p.text) == p.tokens <= 1000
    chunks = chunk_text(f"# Build\n\n{code}\n", Policy(target_tokens=600, max_tokens=900))
    assert chunks and all(c["n_tokens"] <= 900 for c in chunks)


def test_blocks_of_documents_interleaved_give_the_same_chunks():
    """The chunks stage takes each document's rows by position once per batch: rows of
    documents mixed together must still give each document its own blocks, in order."""
    import pyarrow as pa

    from chunkmill.pipeline import batch, chunk
    from chunkmill.pipeline.document import RawDocument

    raws = [
        RawDocument(f"d{i}.md", "", f"# Doc {i}\n\nIntro {i}.\n\n## Part\n\nBody {i}.\n".encode())
        for i in range(3)
    ]
    docs, blocks, _ = batch.documents_and_blocks(raws, "auto", "balanced", 1 << 20)
    policy = Policy()
    want, _ = chunk.chunks(docs, blocks, policy)
    ids = blocks["doc_id"].to_pylist()
    order = sorted(range(len(ids)), key=lambda i: (blocks["block_index"][i].as_py(), ids[i]))
    mixed = blocks.take(pa.array(order, pa.int64()))
    assert mixed["doc_id"].to_pylist() != ids  # the rows really are interleaved
    got, _ = chunk.chunks(docs, mixed, policy)
    assert got.equals(want)
    assert sorted(set(got["doc_id"].to_pylist())) == sorted(set(ids))


def test_the_estimate_counter_counts_as_the_python_estimate():
    from chunkmill.pipeline import tokens
    from tests import estimate_oracle

    texts = ["Title > Guide", "x" * 600, "Ein Satz auf Deutsch, mit Wörtern.", "", "日本語の文"]
    for bias in ("balanced", "prose", "code"):
        for group in ("prose", "code"):
            for english in (None, True, False):
                counter = tokens.EstimateCounter(bias, group, english)
                want = [estimate_oracle.estimate(t, bias, group, english) for t in texts]
                assert counter.count(texts) == want, (bias, group, english)


def test_an_alt_text_over_the_cap_is_cut_to_fit():
    from chunkmill.pipeline.tokens import make_counter

    alt = "a very long alt text " * 400
    doc = f"# Doc\n\nIntro.\n\n![{alt}](img.png)\n"
    for tokenizer in ("estimate", "tiktoken:cl100k_base"):
        policy = Policy(tokenizer=tokenizer)
        (img,) = [c for c in chunk_text(doc, policy) if c["chunk_type"] == "image"]
        assert img["text"].endswith("…") and alt.startswith(img["text"][:-1])
        assert 500 < img["n_tokens"] <= policy.max_tokens
        real = make_counter("tiktoken:cl100k_base").count([img["embed_text"]])[0]
        assert real <= policy.max_tokens
        assert img["spans"] == [{"start": 15, "end": 15 + len(f"![{alt}](img.png)")}]


def test_a_small_subsection_stays_with_its_section_when_siblings_are_packed():
    # 40 `## func` / `### Returns` pairs: the chunk that closes at a func takes that func's
    # small Returns subsection along (up to the cap), instead of leaving it alone
    doc = "\n".join(
        ["# API\n"]
        + [
            f"## func_{i}\n\nDoes thing number {i} for the caller and returns a value.\n\n"
            f"### Returns\n\nThe result of thing {i} which is a value of type int.\n"
            for i in range(40)
        ]
    )
    policy = Policy()
    chunks = chunk_text(doc, policy)
    assert min(c["n_tokens"] for c in chunks) >= policy.min_tokens
    assert max(c["n_tokens"] for c in chunks) <= policy.max_tokens
    for c in chunks:  # every func travels with its Returns
        funcs = re.findall(r"^## (func_\d+)$", c["text"], re.M)
        assert c["text"].count("### Returns") == len(funcs), c["text"][:80]
