"""Clean headings, GitHub anchors, links, titles and the context header."""

from __future__ import annotations

import pytest

from chunkmill.pipeline.context import header_line, title_of, url
from chunkmill.pipeline.heading import Anchors, clean, slug, source
from chunkmill.pipeline.policy import Policy, PolicyError
from tests.helpers import chunk_text, sentences
from tests.section import is_filler


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Getting Started", "getting-started"),  # case folded, space to -
        ("What's new in v2.0?", "whats-new-in-v20"),  # punctuation dropped
        ("C++ & Rust: a comparison", "c--rust-a-comparison"),  # each space stays a -
        ("  Leading and trailing  ", "--leading-and-trailing--"),  # spaces are not trimmed
        ("snake_case and kebab-case", "snake_case-and-kebab-case"),  # _ and - stay
        ("Привет, мир", "привет-мир"),  # non-ASCII letters kept, lower-cased
        ("日本語のテスト", "日本語のテスト"),
        ("Café déjà vu", "café-déjà-vu"),  # accents are letters: kept
        ("Emoji 🎉 party", "emoji--party"),  # symbols dropped
        ("1. Install", "1-install"),
    ],
)
def test_github_slugs(heading, expected):
    assert slug(heading) == expected


def test_repeated_headings_are_numbered_as_github_does():
    anchors = Anchors()
    got = [anchors(clean(h)) for h in ["Usage", "Usage", "Usage-1", "Usage", "Other"]]
    # GitHub: the third "Usage" would be usage-2; a literal "Usage-1" after two "Usage"
    # headings collides with the second one's slug and becomes usage-1-1
    assert got == ["usage", "usage-1", "usage-1-1", "usage-2", "other"]


@pytest.mark.parametrize(
    ("line", "text", "explicit"),
    [
        ("## Install {#install-linux}", "Install", "install-linux"),  # Hugo, Pandoc
        ("## Options {: #opts .wide}", "Options", "opts"),  # kramdown
        ("## Hooks {/*use-state-hook*/}", "Hooks", "use-state-hook"),  # MDX (react.dev)
        ("## Fenced {.unnumbered}", "Fenced", None),  # attributes without an id
        ("### Closing ###", "Closing", None),
        ("### Both ## {#both}", "Both", "both"),
        ("## {{< new-in 0.1 >}} Feature {{% note %}}", "Feature", None),  # Hugo shortcodes
        ("## {% raw %}Liquid{% endraw %} {{ page.x }}", "Liquid", None),  # Liquid / Jinja
        ("## The **`app.on`** _event_ [link](x.md)", "The app.on event link", None),
        ("## RULE \\#5 &amp; <a name='x'></a>more", "RULE #5 & more", None),
        ("Setext *title*\n=====", "Setext title", None),
    ],
)
def test_clean_heading_text_and_explicit_id(line, text, explicit):
    heading = clean(source(line))
    assert (heading.text, heading.explicit_id) == (text, explicit)


def test_explicit_ids_win_over_slugs():
    anchors = Anchors()
    assert anchors(clean(source("## Usage {#run-it}"))) == "run-it"
    assert anchors(clean(source("## Usage"))) == "usage"


def test_chunk_anchor_and_url_from_a_template():
    doc = "# Guide\n\nIntro.\n\n## Set up {#setup}\n\nText.\n\n## Usage\n\nMore.\n\n"
    doc += "## Usage\n\nAgain.\n"
    template = "https://docs.example.com/{path_stem}#{anchor}"
    policy = Policy(link_template=template, pack_siblings=False)
    chunks = chunk_text(doc, policy, path="guides/my page.md")
    assert [c["anchor"] for c in chunks] == ["guide", "setup", "usage", "usage-1"]
    assert chunks[1]["url"] == "https://docs.example.com/guides/my%20page#setup"
    assert chunks[3]["url"] == "https://docs.example.com/guides/my%20page#usage-1"
    assert all(c["url"] is None for c in chunk_text(doc))  # no template, no url
    packed = chunk_text(doc, Policy(link_template=template), path="guides/my page.md")
    assert [c["anchor"] for c in packed] == ["guide"]  # sibling packing: where it starts


def test_url_without_anchor_drops_the_fragment():
    assert url("https://x.dev/{path_stem}/#{anchor}", "a/b.md", None, 1, 2) == "https://x.dev/a/b/"
    assert url("{path}#L{line_start}-L{line_end}", "a/b.md", "q", 3, 9) == "a/b.md#L3-L9"
    # a top-level file has no folder: no empty path segment
    assert url("https://x/{dir}/{stem}.html", "top.md", None, 1, 1) == "https://x/top.html"
    assert url("https://x/{dir}/{stem}.html", "a/b.md", None, 1, 1) == "https://x/a/b.html"


def test_url_path_of_directory_style_sites():
    # the page's own url: no extension, a trailing index, _index or README dropped
    site = "https://x.dev/{url_path}"
    assert url(site, "guide/install.md", None, 1, 1) == "https://x.dev/guide/install"
    assert url(site, "guide/index.md", None, 1, 1) == "https://x.dev/guide"
    assert url(site, "guide/_index.md", None, 1, 1) == "https://x.dev/guide"
    assert url(site, "my guide/README.md", "a", 1, 1) == "https://x.dev/my%20guide"
    assert url(site, "index.md", None, 1, 1) == "https://x.dev/"
    # a trailing slash after an empty url path leaves no empty segment
    slash = "https://x.dev/{url_path}/#{anchor}"
    assert url(slash, "index.md", "top", 1, 1) == "https://x.dev/#top"
    assert url(slash, "a/index.mdx", "b", 1, 1) == "https://x.dev/a/#b"
    assert Policy(link_template=slash).link_template == slash


def test_link_template_format_specs_and_conversions_are_policy_errors():
    for bad in ("https://x/{path:>9999999999}", "https://x/{path!r}", "{line_start:05d}"):
        with pytest.raises(PolicyError, match=r"link_template .*format spec"):
            Policy(link_template=bad)
    with pytest.raises(PolicyError, match=r"link_template .*\{path\[0\]\}"):
        Policy(link_template="https://x/{path[0]}")


def test_unknown_link_placeholder_is_a_policy_error():
    with pytest.raises(PolicyError, match=r"unknown placeholder.*\{slug\}"):
        Policy(link_template="https://x/{slug}")


def test_title_from_front_matter_keys_then_h1_then_stem():
    doc = {"path": "docs/eip-1559.md", "front_matter": {"eip": "1559", "title": "Fee market"}}
    assert title_of(doc, "H1", ("title",)) == "Fee market"
    assert title_of(doc, "H1", ("name", "eip")) == "1559"
    assert title_of({**doc, "front_matter": None}, "H1", ("title",)) == "H1"
    assert title_of({**doc, "front_matter": None}, None, ("title",)) == "eip-1559"
    assert title_of({"path": "guide/install/_index.md"}, None, ("title",)) == "install"


def test_title_from_the_heading_a_document_opens_with():
    policy = Policy(target_tokens=100, max_tokens=150, min_tokens=0, overlap_tokens=0,
                    pack_siblings=False)  # fmt: skip
    # a chapter that opens with its `##` and ends with a `## Summary` of the same level
    chapter = "## Hello, Cargo!\n\nText.\n\n### Build\n\nMore.\n\n## Summary\n\nDone.\n"
    chunks = chunk_text(chapter, policy, path="src/ch01-03-hello-cargo.md")
    assert {c["title"] for c in chunks} == {"Hello, Cargo!"}
    assert chunks[-1]["embed_text"] == "Hello, Cargo!\n\n## Summary\n\nDone."
    # an HTML comment before it does not count as an opening
    assert chunk_text("<!-- note -->\n\n" + chapter, policy)[0]["title"] == "Hello, Cargo!"
    # text before the first heading, or a heading outranked later: the file stem
    assert chunk_text("Intro.\n\n" + chapter, policy, path="a/b.md")[0]["title"] == "b"
    nested = "## A\n\nText.\n\n# B\n\nMore.\n"
    assert chunk_text(nested, policy, path="a/c.md")[0]["title"] == "B"  # the first H1 wins
    assert chunk_text("### A\n\nx\n\n## B\n\ny\n", policy, path="d.md")[0]["title"] == "d"


def test_header_line_skips_a_repeated_element():
    assert header_line("Guide", ["Guide", "Install"]) == "Guide > Install"
    assert header_line("Release 2.0", []) == "Release 2.0"


def test_context_header_in_embed_text():
    doc = (
        "---\ntitle: Release 2.0 {#r2}\ndescription: What changed.\n---\n"
        "Intro.\n\n## Inputs\n\nSome.\n\n### None\n\nNothing.\n\n## Empty\n\n### Child\n\nText.\n\n"
        f"## Outputs\n\n{sentences(60)}\n"
    )
    chunks = chunk_text(doc, Policy(target_tokens=100, max_tokens=150, min_tokens=0,
                                    overlap_tokens=0, pack_siblings=False))  # fmt: skip
    first = chunks[0]
    assert first["title"] == "Release 2.0"
    assert first["embed_text"] == "Release 2.0\ndescription: What changed.\n\nIntro."
    by_title = {c["section_title"]: c for c in chunks}
    # a chunk that starts with its own heading: the header names the ancestors only
    assert by_title["None"]["embed_text"] == "Release 2.0 > Inputs\n\n### None\n\nNothing."
    # an empty section merges forward: the chunk starts with it, the header names its parent
    assert by_title["Child"]["embed_text"] == "Release 2.0\n\n## Empty\n\n### Child\n\nText."
    later = [c for c in chunks if c["section_title"] == "Outputs"][1]
    assert later["embed_text"] == f"Release 2.0 > Outputs\n\n{later['text']}"
    assert all(c["text"] in c["embed_text"] for c in chunks)  # text stays source-faithful
    assert all("description" not in c["embed_text"] for c in chunks[1:])


def test_embed_hash_is_equal_for_equal_embed_text():
    import polars as pl

    from chunkmill.chunking import chunk_table

    text = "# Cmdlet\n\n## Inputs\n\nNone.\n\n## Outputs\n\nNone.\n"
    docs = pl.DataFrame({"path": ["a/get-item.md", "b/get-item.md"], "text": [text, text]})
    chunks = chunk_table(docs, policy=Policy(min_tokens=0))
    a, b = chunks.partition_by("path", maintain_order=True)
    assert a["embed_text"].to_list() == b["embed_text"].to_list()
    assert a["embed_hash"].to_list() == b["embed_hash"].to_list()
    assert not set(a["chunk_id"]) & set(b["chunk_id"])
    assert a["embed_hash"].n_unique() == a.height  # different texts, different hashes


def test_a_title_change_changes_the_chunk_ids():
    body = "## Usage\n\nRun it.\n"
    one = chunk_text(f"---\ntitle: One\n---\n{body}")
    two = chunk_text(f"---\ntitle: Two\n---\n{body}")
    assert one[0]["text"] == two[0]["text"] and one[0]["chunk_id"] != two[0]["chunk_id"]


@pytest.mark.parametrize(
    ("kind", "text", "filler"),
    [
        ("paragraph", "[x]: #x", True),
        ("paragraph", '[a]: https://a.example\n[b]: <b.md> "Title"', True),
        ("html", "<!-- TODO: write this -->", True),
        ("paragraph", "{/* hidden */}", True),
        ("paragraph", "See [x] for more.", False),
        ("html", "<div>text</div>", False),
    ],
)
def test_link_definitions_and_comments_say_nothing(kind, text, filler):
    assert is_filler(kind, text) is filler


def test_a_section_of_only_link_definitions_merges_like_an_empty_one():
    doc = f"# RFC\n\n## Terms\n\n[terms]: #terms\n\n## Body\n\n{sentences(5)}\n"
    chunks = chunk_text(doc, Policy(min_tokens=0))
    assert len(chunks) == 1 and chunks[0]["headings"] == ["RFC", "Terms", "Body"]


def test_image_src():
    doc = "# Pics\n\n[![Logo](img/logo.png)](https://x.dev)\n\n![Ref][d]\n\n[d]: img/d.svg\n"
    images = [c for c in chunk_text(doc) if c["chunk_type"] == "image"]
    assert [c["image_src"] for c in images] == ["img/logo.png", "img/d.svg"]


def test_sibling_sections_share_a_chunk_under_their_parent():
    doc = (
        f"# Guide\n\n## A\n\n{sentences(2)}\n\n### A1\n\n{sentences(2, start=10)}\n\n"
        f"### A2\n\n{sentences(2, start=20)}\n\n## B\n\n{sentences(2, start=30)}\n"
    )
    small = dict(
        target_tokens=120, max_tokens=200, min_tokens=0, overlap_tokens=0, tokenizer="estimate"
    )  # the estimate's sizes
    apart = chunk_text(doc, Policy(**small, pack_siblings=False))
    assert [c["section_title"] for c in apart] == ["A", "A1", "A2", "B"]
    packed = chunk_text(doc, Policy(**small))
    # A with its subsections fits the target (about 116 tokens); B would pass it
    assert [c["headings"] for c in packed] == [["Guide", "A", "A1", "A2"], ["B"]]
    assert packed[1]["embed_text"].startswith("Guide\n\n## B")
    # B follows A's subtree: a chunk that starts with A1 never takes B (not under A)
    tight = chunk_text(doc, Policy(**{**small, "target_tokens": 90}))
    assert [c["headings"] for c in tight] == [["Guide", "A", "A1"], ["A2"], ["B"]]
    a2 = tight[1]
    assert a2["embed_text"].startswith("Guide > A\n\n### A2")  # the header names the parent
    assert all(c["n_tokens"] <= 200 for c in packed + tight)


def test_sc001_on_embed_text_counts_a_header_that_names_the_section_anywhere():
    from tests.chunk_quality import names_its_section

    body = "Some text of the Linux part."
    # the chunk starts under a deeper heading inside its section: the section is named
    # before it in the header
    assert names_its_section(f"Guide > Install > Linux\n\n{body}", body, "Install", "Guide")
    assert names_its_section(f"Guide > Install\n\n{body}", body, "Install", "Guide")
    assert names_its_section(f"Guide\n\n{body}", body, None, "Guide")  # a preamble
    assert not names_its_section(f"Guide > Usage\n\n{body}", body, "Install", "Guide")
    assert not names_its_section(body, body, "Install", "Guide")  # no header at all
    assert names_its_section("## Install\n\nx", "## Install\n\nx", "Install", "Guide")


def test_slug_of_ascii_keeps_what_the_unicode_rule_keeps():
    """slug's ASCII fast path must keep exactly the characters the per-character rule
    (Unicode categories) keeps, for every ASCII character."""
    from chunkmill.pipeline import heading

    for i in range(128):
        text = f"Ab {chr(i)}9_-"
        want = "".join(c for c in text.lower() if heading._kept(c)).replace(" ", "-")
        assert heading.slug(text) == want, repr(chr(i))


def test_every_link_field_is_one_the_core_fills():
    """context.LINK_FIELDS (what a policy's link template is checked against) are the
    fields the core's link() fills; any other name is none of them."""
    from chunkmill import _core
    from chunkmill.pipeline.context import LINK_FIELDS

    for name in LINK_FIELDS:
        filled = _core.link("{" + name + "}", "docs/guide/a b.md", "intro", 3, 9)
        assert filled and "{" not in filled, name
    with pytest.raises(ValueError):
        _core.link("{nonsense}", "docs/a.md", None, 1, 1)
