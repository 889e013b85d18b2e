"""Block structure of single documents: CommonMark corners, GFM tables, MDX."""

from __future__ import annotations

from chunkmill.pipeline.block import document_blocks


def blocks(text: str, mdx: bool = False, markdown: bool = True) -> list[dict]:
    cols = document_blocks("d", text, markdown, mdx)
    return [dict(zip(cols, row)) for row in zip(*cols.values())]


def kinds(text: str, mdx: bool = False) -> list[str]:
    return [b["kind"] for b in blocks(text, mdx)]


def test_slices_and_offsets():
    text = "# Title\n\nPara one\nline two\n\n- a\n- b\n"
    found = blocks(text)
    assert [b["kind"] for b in found] == ["heading", "paragraph", "list"]
    for b in found:
        assert text[b["char_start"] : b["char_end"]] == b["text"]
    assert [(b["line_start"], b["line_end"]) for b in found] == [(1, 1), (3, 4), (6, 7)]


def test_setext_and_atx_headings():
    found = blocks("Title\n=====\n\nSub\n---\n\n### Deep ###\n")
    assert [(b["kind"], b["level"]) for b in found] == [
        ("heading", 1),
        ("heading", 2),
        ("heading", 3),
    ]
    assert found[2]["heading_path"] == ["Title", "Sub", "Deep"]


def test_no_space_hash_is_paragraph():
    assert kinds("#NoSpace here\n\n#5 bolt\n") == ["paragraph", "paragraph"]


def test_nothing_inside_code_is_a_heading():
    text = (
        "```md\n# not\n```\n\n~~~\n# not\n~~~\n\n````\n```\n# not\n```\n````\n\n"
        "    # indented code\n"
    )
    found = blocks(text)
    assert [b["kind"] for b in found] == ["code"] * 4
    assert found[0]["lang"] == "md" and found[2]["text"].endswith("````")


def test_unclosed_fence_runs_to_the_end():
    found = blocks("# A\n\n```py\nx = 1\n\n# not a heading\n")
    assert [b["kind"] for b in found] == ["heading", "code"]


def test_heading_path_with_skipped_levels_and_pops():
    found = blocks("# A\n\n#### D\n\ntext\n\n## B\n\ntext\n\n# C\n")
    paths = [b["heading_path"] for b in found]
    assert paths == [["A"], ["A", "D"], ["A", "D"], ["A", "B"], ["A", "B"], ["C"]]
    assert found[1]["heading_levels"] == [1, 4]


def test_heading_text_is_plain():
    found = blocks("# Use *the* `pebble` [CLI](http://x) &amp; <b>more</b>\n")
    assert found[0]["heading_path"] == ["Use the pebble CLI & more"]


def test_heading_link_reference_resolved():
    found = blocks("# [Foo]\n\n[foo]: /url\n")
    assert found[0]["heading_path"] == ["Foo"]
    assert [b["kind"] for b in found] == ["heading", "paragraph"]  # the definition is kept


def test_headings_inside_quotes_and_lists_are_content():
    found = blocks("# Top\n\n> ## Quoted\n> text\n\n- ## In list\n")
    assert [b["kind"] for b in found] == ["heading", "blockquote", "list"]
    assert all(b["heading_path"] == ["Top"] for b in found)


def test_list_item_starts_are_top_level_items_only():
    text = "- one\n  - nested\n- two\n\n  para in two\n- three\n"
    (lst,) = blocks(text)
    assert lst["item_starts"] == [0, text.index("- two"), text.index("- three")]


def test_table_rows():
    (table,) = blocks("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n")
    assert table["kind"] == "table" and table["n_rows"] == 2


def test_image_only_paragraph():
    found = blocks("![A *cat* photo](cat.png)\n\n[![Badge](b.svg)](http://x)\n\n![a](x) text\n")
    assert [b["kind"] for b in found] == ["image", "image", "paragraph"]
    assert found[0]["alt"] == "A cat photo"


def test_html_block_and_thematic_break():
    assert kinds("<div>\nhi\n</div>\n\n***\n") == ["html", "thematic_break"]


def test_front_matter_block():
    found = blocks("---\na: 1\n---\n# H\n")
    assert [b["kind"] for b in found] == ["front_matter", "heading"]
    assert found[0]["text"] == "---\na: 1\n---"


def test_plain_text_is_paragraphs():
    found = blocks("# not a heading\n\nsecond\n", markdown=False)
    assert [b["kind"] for b in found] == ["paragraph", "paragraph"]


def test_crlf_offsets():
    text = "# T\r\n\r\nbody line\r\n"
    found = blocks(text)
    assert [b["text"] for b in found] == ["# T", "body line"]
    assert found[1]["char_start"] == 7 and found[1]["line_start"] == 3


MDX = """import { Tabs } from './tabs';
import Aside from './Aside.astro';

export const meta = { a: 1 };

# Title

<Tabs syncKey="x">
  <TabItem label="a">

  ```jsx
  <Tabs>not counted</Tabs>
  ```

  </TabItem>
</Tabs>

<Aside type="tip" />

<Card
  title="multi-line {open}"
  href={a > b ? '/x' : '/y'}
>
Body
</Card>

<Badge text="x" /> followed by prose is a paragraph.

Text with `<Tabs>` inline.
"""


def test_mdx_blocks():
    found = blocks(MDX, mdx=True)
    assert [b["kind"] for b in found] == [
        "mdx_esm",
        "mdx_esm",
        "heading",
        "mdx_jsx",
        "mdx_jsx",
        "mdx_jsx",
        "paragraph",
        "paragraph",
    ]
    assert found[3]["text"].startswith("<Tabs") and found[3]["text"].endswith("</Tabs>")
    assert found[5]["text"].endswith("</Card>")


def test_mdx_off_for_plain_markdown():
    assert "mdx_esm" not in kinds(MDX, mdx=False)


def test_unclosed_jsx_ends_at_blank_line():
    assert kinds("<Tabs>\nno close\n\nnext para\n", mdx=True) == ["mdx_jsx", "paragraph"]


def test_import_in_code_fence_is_not_esm():
    assert kinds("```js\n\nimport x from 'y';\n```\n", mdx=True) == ["code"]
