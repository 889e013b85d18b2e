"""The pyromark backend: pulldown-cmark (compiled) finds the top-level blocks; the default.

pyromark yields pulldown-cmark's events with UTF-8 byte ranges. One lean pass keeps a
nesting depth and looks only at what a top-level block needs: its kind and first and last
line, a heading's level and plain text, a fence's info string, the first line of each
top-level list item, the body rows of a table, and whether a paragraph is one image. The
results equal the markdown-it-py backend's (tests/test_backends.py); where pulldown-cmark
reports a range differently, it is corrected here:

- a list's range can run on over link reference definitions that follow it and into the
  indentation of the next line, so a list ends where its last item ends;
- heading text follows markdown-it-py's plain-text rule (see ``_Heading.title``).
"""

from __future__ import annotations

import re
from bisect import bisect_right

import pyromark

from mdchunk.pipeline.parse import EOL, Block, Lines, byte_line_starts

_TRAILING_TABS = re.compile(r"[ \t]*\t[ \t]*$", re.MULTILINE)
_MD = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES)
_SPECIAL = frozenset("*_`[<&\\!\n")  # markdown-it-py's plain_text takes its slow path on these
_TEXTS = frozenset({"Text", "Code", "Break"})  # what plain text keeps (a break as a space)
_KINDS = {
    "Paragraph": "paragraph",
    "HtmlBlock": "html",
    "BlockQuote": "blockquote",
    "Heading": "heading",
    "CodeBlock": "code",
    "List": "list",
    "Table": "table",
}


def parse_lines(src: str, starts: list[int], first: int) -> list[Block]:
    """Top-level blocks of ``src``, whose line i starts at character ``starts[i]`` and is
    line ``first + i`` of the document."""
    if "\r" in src:  # pulldown-cmark mistakes a lone CR in places; lines stay lines
        src = EOL.sub("\n", src)
        starts = Lines.of(src).starts
    if "\t" in src:  # pulldown-cmark keeps a fence open when a tab follows the closing run
        src = _TRAILING_TABS.sub(lambda m: " " * len(m.group()), src)
    starts = byte_line_starts(src, starts)
    out: list[Block] = []
    depth = 0
    cur: Block | None = None
    inline: _Heading | _Image | None = None  # what collects the inline events of ``cur``
    item_end = 0
    for ev, rng in _MD.events_with_range(src):
        if ev.__class__ is str:  # Rule, SoftBreak, HardBreak
            if depth == 0:
                out.append(_block("thematic_break", rng, starts, first))
            elif inline is not None:
                inline.leaf("Break", " ", rng)
            continue
        for key, val in ev.items():
            if key == "Start":
                if depth == 0:
                    cur, inline = _open(val, rng, starts, first)
                    out.append(cur)
                elif depth == 1 and val == "Item":
                    cur.items.append(bisect_right(starts, rng["start"]) - 1 + first)
                    item_end = rng["end"]
                elif depth == 1 and val == "TableRow":
                    cur.n_rows += 1
                elif inline is not None:
                    inline.start(val, rng)
                depth += 1
            elif key == "End":
                depth -= 1
                if depth == 0:
                    end = item_end if cur.kind == "list" else rng["end"]
                    cur.last = bisect_right(starts, end - 1) - 1 + first
                    if inline is not None:
                        inline.close(cur)
                    cur, inline = None, None
                elif inline is not None:
                    inline.end(val)
            elif inline is not None:
                inline.leaf(key, val, rng)
    return out


def _block(kind: str, rng: dict, starts: list[int], first: int) -> Block:
    a = bisect_right(starts, rng["start"]) - 1 + first
    return Block(kind, a, bisect_right(starts, rng["end"] - 1) - 1 + first)


def _open(val, rng: dict, starts: list[int], first: int):
    """A top-level block from its Start event, and what collects its inline events."""
    name, arg = (val, None) if val.__class__ is str else next(iter(val.items()))
    kind = _KINDS.get(name)
    if kind is None:  # an extension we do not enable: let the reference backend parse it
        raise ValueError(f"unexpected top-level block {name!r}")
    block = _block(kind, rng, starts, first)
    if kind == "heading":
        block.level = int(arg["level"][1])
        return block, _Heading()
    if kind == "paragraph":
        return block, _Image(rng["start"])
    if kind == "code":
        block.info = arg["Fenced"].strip() if arg.__class__ is dict else None
    elif kind == "table":
        block.n_rows = 0
    return block, None


class _Heading:
    """Collects a heading's text: text and code spans, image alt text, breaks as spaces."""

    __slots__ = ("parts", "plain")

    def __init__(self):
        self.parts: list[str] = []
        self.plain = True  # only text events whose source is their text (no escapes)

    def start(self, val, rng) -> None:
        self.plain = False

    def end(self, val) -> None:
        pass

    def leaf(self, key: str, val, rng) -> None:
        if key == "Text" and self.plain:  # an escape or entity makes text shorter than source
            self.plain = rng["end"] - rng["start"] == len(val.encode())
        elif key != "Text":
            self.plain = False
        if key in _TEXTS:
            self.parts.append(val)

    def close(self, block: Block) -> None:
        """markdown-it-py's plain_text: a heading whose source has none of *_`[<&\\!
        (so, here, only plain text events) is its source, stripped; otherwise its text with
        whitespace runs collapsed."""
        text = "".join(self.parts)
        if self.plain and _SPECIAL.isdisjoint(text):
            block.title = text.strip()
        else:
            block.title = " ".join(text.split())


class _Image:
    """Tells a paragraph that is exactly one image (optionally wrapped in a link), as
    markdown-it-py's backend does: its source starts with ``![`` or ``[![``, and besides
    blank text it holds the image, or a link holding only the image."""

    __slots__ = ("para", "shape", "alt", "in_image", "image_at", "link_at")

    def __init__(self, para_start: int):
        self.para = para_start
        self.shape: list[str] = []
        self.alt: list[str] = []
        self.in_image = 0  # nesting depth inside the image
        self.image_at = self.link_at = -1

    def start(self, val, rng) -> None:
        if self.in_image:
            self.in_image += 1
            return
        name = val if val.__class__ is str else next(iter(val))
        if name == "Image":
            self.shape.append("image")
            self.image_at = rng["start"]
            self.in_image = 1
        elif name == "Link":
            self.shape.append("link_open")
            self.link_at = rng["start"]
        else:
            self.shape.append(name)

    def end(self, val) -> None:
        if self.in_image:
            self.in_image -= 1
        else:
            self.shape.append("link_close" if val == "Link" else "end")

    def leaf(self, key: str, val, rng) -> None:
        if self.in_image:
            if key in _TEXTS:
                self.alt.append(val)
        elif not (key == "Text" and not val.strip()):
            self.shape.append(key)

    def close(self, block: Block) -> None:
        if self.shape == ["image"]:
            found = self.image_at == self.para
        elif self.shape == ["link_open", "image", "link_close"]:
            found = self.link_at == self.para and self.image_at == self.para + 1
        else:
            found = False
        if found:
            block.kind = "image"
            block.alt = " ".join("".join(self.alt).split())
