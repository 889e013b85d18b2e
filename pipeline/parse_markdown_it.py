"""The markdown-it-py backend: the reference block parser (pure Python), and the oracle
the tests hold the default backend to.

Block structure only: inline parsing is switched off, except for heading texts and for
telling an image-only paragraph, which parse their inline source on demand.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll

from chunkmill.pipeline.heading import inline_text
from chunkmill.pipeline.parse import TITLE_SOURCE_CHARS, Block, Lines

_BLOCK_MD = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
_INLINE_MD = MarkdownIt("commonmark")

_SIMPLE_KINDS = {
    "heading_open": "heading",
    "paragraph_open": "paragraph",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "table_open": "table",
    "blockquote_open": "blockquote",
    "fence": "code",
    "code_block": "code",
    "html_block": "html",
    "hr": "thematic_break",
}


def parse_lines(text: str, lines: Lines, first: int, end: int) -> list[Block]:
    """Top-level blocks of lines [first, end) of ``text``, parsed as a document."""
    env: dict = {}  # collects link reference definitions, used to resolve heading links
    tokens = _BLOCK_MD.parse(text[lines.starts[first] : lines.ends[end - 1]], env)
    out: list[Block] = []
    current: Block | None = None
    for i, tok in enumerate(tokens):
        if tok.level == 0 and tok.nesting >= 0 and tok.map is not None:
            kind = _SIMPLE_KINDS.get(tok.type)
            if kind is None:
                continue
            current = Block(kind, tok.map[0] + first, tok.map[1] - 1 + first)
            out.append(current)
            if tok.type in ("fence", "code_block"):
                current.info = unescapeAll(tok.info).strip() if tok.type == "fence" else None
            elif kind == "heading":
                current.level = int(tok.tag[1])
                current.title = plain_text(tokens[i + 1].content[:TITLE_SOURCE_CHARS], env)
            elif kind == "paragraph":
                current.alt = _only_image(tokens[i + 1].content, env)
                if current.alt is not None:
                    current.kind = "image"
            elif kind == "table":
                current.n_rows = -1  # the header row is counted below too
            elif kind == "list":
                current.items = []
        elif current is not None and tok.nesting == 1:
            if current.kind == "list" and tok.level == 1 and tok.type == "list_item_open":
                current.items.append(tok.map[0] + first)
            elif current.kind == "table" and tok.type == "tr_open":
                current.n_rows += 1
    return out


def plain_text(inline_source: str, env: dict | None = None) -> str:
    """Inline markdown reduced to its text: emphasis, links and HTML tags dropped."""
    if not any(c in inline_source for c in "*_`[<&\\!\n"):
        return inline_source.strip()
    tokens = _INLINE_MD.parseInline(inline_source, env)
    return " ".join(inline_text(tokens[0].children or []).split())


def _only_image(inline_source: str, env: dict) -> str | None:
    """Alt text if the paragraph is exactly one image (optionally wrapped in a link)."""
    s = inline_source.strip()
    if not (s.startswith("![") or s.startswith("[![")):
        return None
    children = _INLINE_MD.parseInline(s, env)[0].children or []
    kinds = [t.type for t in children if not (t.type == "text" and not t.content.strip())]
    if kinds not in (["image"], ["link_open", "image", "link_close"]):
        return None
    image = next(t for t in children if t.type == "image")
    return " ".join(inline_text(image.children or []).split())
