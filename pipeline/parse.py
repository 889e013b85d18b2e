"""The markdown parser: one document's text -> its top-level blocks (kind, level, spans).

It knows nothing about tokens or chunks. markdown-it-py does the CommonMark + GFM table
block parse (inline parsing is switched off: structure does not need it); this module maps
its top-level tokens to source spans, fills any uncovered text (link reference definitions,
for instance) with paragraph blocks so that nothing is lost, and tracks the heading path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import accumulate

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll

from mdchunk.pipeline import fence, frontmatter, mdx

# Bumped whenever the blocks of the same document may change (documents too: front matter).
PARSER_VERSION = "blocks-2"  # 2: capped heading titles, ISO front matter dates, bounded MDX
# A heading's title (breadcrumbs, section names) is read from at most this much of its
# source and shortened to TITLE_CHARS: inline parsing is quadratic on some inputs (200,000
# '<' or '_'), and a title is a name, not content (the heading's text stays in the chunk).
TITLE_SOURCE_CHARS = 2_000
TITLE_CHARS = 200

_EOL = re.compile(r"\r\n|\r|\n")
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


@dataclass
class Block:
    kind: str
    first: int  # first line, 0-based
    last: int  # last line, 0-based inclusive
    level: int | None = None
    title: str | None = None  # plain heading text
    info: str | None = None
    alt: str | None = None
    items: list[int] = field(default_factory=list)  # first line of each list item
    n_rows: int | None = None


@dataclass(frozen=True)
class Lines:
    """Line table of a text: start offset and content end offset of every line."""

    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, text: str) -> Lines:
        if "\r" not in text:  # the common case, without a regex
            starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))][:-1]
            ends = [s + n for s, n in zip(starts, map(len, text.split("\n")))]
            return cls(starts, ends)
        starts, ends = [0], []
        for m in _EOL.finditer(text):
            ends.append(m.start())
            starts.append(m.end())
        ends.append(len(text))
        return cls(starts, ends)

    def line(self, text: str, i: int) -> str:
        return text[self.starts[i] : self.ends[i]]


def parse(text: str, markdown: bool = True, is_mdx: bool = False) -> tuple[Lines, list[Block]]:
    """Top-level blocks of ``text`` in order; their line spans never overlap."""
    lines = Lines.of(text)
    if not text.strip():
        return lines, []
    blocks: list[Block] = []
    start = 0
    if markdown:
        fm = frontmatter.locate(text)
        if fm is not None:
            last = len(_EOL.findall(text, 0, fm[3]))
            blocks.append(Block("front_matter", 0, last))
            start = last + 1
    if not markdown:
        parsed = []
    elif is_mdx:
        all_lines = [lines.line(text, i) for i in range(len(lines.starts))]
        parsed = []
        for kind, a, b in mdx.segments(all_lines, start):
            parsed += _parse_md(text, lines, a, b) if kind == "md" else [Block(kind, a, b - 1)]
    else:
        parsed = _parse_md(text, lines, start, len(lines.starts))
    blocks += parsed
    fenced = None
    if not markdown and ("```" in text or "~~~" in text):
        # plain text: a blank line inside a ``` region does not end the paragraph
        fenced = fence.fenced_lines([lines.line(text, i) for i in range(len(lines.starts))])
    return lines, _fill_gaps(text, lines, blocks, fenced)


def _parse_md(text: str, lines: Lines, a: int, b: int) -> list[Block]:
    if a >= b:
        return []
    env: dict = {}  # collects link reference definitions, used to resolve heading links
    tokens = _BLOCK_MD.parse(text[lines.starts[a] : lines.ends[b - 1]], env)
    out: list[Block] = []
    current: Block | None = None
    for i, tok in enumerate(tokens):
        if tok.level == 0 and tok.nesting >= 0 and tok.map is not None:
            kind = _SIMPLE_KINDS.get(tok.type)
            if kind is None:
                continue
            current = Block(kind, tok.map[0] + a, tok.map[1] - 1 + a)
            out.append(current)
            if tok.type in ("fence", "code_block"):
                current.info = unescapeAll(tok.info).strip() if tok.type == "fence" else None
            elif kind == "heading":
                current.level = int(tok.tag[1])
                current.title = heading_title(tokens[i + 1].content, env)
            elif kind == "paragraph":
                current.alt = _only_image(tokens[i + 1].content, env)
                if current.alt is not None:
                    current.kind = "image"
            elif kind == "table":
                current.n_rows = -1  # the header row is counted below too
        elif current is not None and tok.nesting == 1:
            if current.kind == "list" and tok.level == 1 and tok.type == "list_item_open":
                current.items.append(tok.map[0] + a)
            elif current.kind == "table" and tok.type == "tr_open":
                current.n_rows += 1
    return out


def _fill_gaps(
    text: str, lines: Lines, blocks: list[Block], fenced: list[bool] | None = None
) -> list[Block]:
    """Trim trailing blank lines off every block and turn uncovered text into paragraphs
    (lines marked ``fenced`` never end a paragraph)."""
    out: list[Block] = []
    nxt = 0
    for block in blocks + [None]:
        until = len(lines.starts) if block is None else block.first
        run_start = None
        for i in range(nxt, until + 1):
            blank = i == until or not (lines.line(text, i).strip() or (fenced and fenced[i]))
            if not blank and run_start is None:
                run_start = i
            elif blank and run_start is not None:
                out.append(Block("paragraph", run_start, i - 1))
                run_start = None
        if block is None:
            break
        while block.last > block.first and not lines.line(text, block.last).strip():
            block.last -= 1
        out.append(block)
        nxt = block.last + 1
    return out


def heading_title(inline_source: str, env: dict | None = None) -> str:
    """The plain text of a heading, read from a bounded prefix and shortened."""
    title = plain_text(inline_source[:TITLE_SOURCE_CHARS], env)
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


def plain_text(inline_source: str, env: dict | None = None) -> str:
    """Inline markdown reduced to its text: emphasis, links and HTML tags dropped."""
    if not any(c in inline_source for c in "*_`[<&\\!\n"):
        return inline_source.strip()
    tokens = _INLINE_MD.parseInline(inline_source, env)
    return " ".join(_inline_text(tokens[0].children or []).split())


def _inline_text(children) -> str:
    parts = []
    for t in children:
        if t.type in ("text", "code_inline"):
            parts.append(t.content)
        elif t.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif t.type == "image":
            parts.append(_inline_text(t.children or []))
    return "".join(parts)


def _only_image(inline_source: str, env: dict) -> str | None:
    """Alt text if the paragraph is exactly one image (optionally wrapped in a link)."""
    s = inline_source.strip()
    if not (s.startswith("![") or s.startswith("[![")):
        return None
    if s.count("[") > 32:  # not one image; and parsing many brackets is quadratic
        return None
    children = _INLINE_MD.parseInline(s, env)[0].children or []
    kinds = [t.type for t in children if not (t.type == "text" and not t.content.strip())]
    if kinds not in (["image"], ["link_open", "image", "link_close"]):
        return None
    image = next(t for t in children if t.type == "image")
    return " ".join(_inline_text(image.children or []).split())
