"""The pyromark backend: pulldown-cmark (compiled) finds the top-level blocks; the default.

pyromark yields pulldown-cmark's events with UTF-8 byte ranges. One lean pass keeps a
nesting depth and looks only at what a top-level block needs: its kind and first and last
line, a heading's level and plain text, a fence's info string, the first line of each
top-level list item, the body rows of a table, and whether a paragraph is one image. The
results equal the markdown-it-py backend's (tests/test_backends.py); where pulldown-cmark
reports a range differently, it is corrected here:

- a list's range can run on over link reference definitions that follow it and into the
  indentation of the next line, so a list ends where its last item ends;
- heading text follows markdown-it-py's plain-text rule (see ``_Heading.close``);
- it mistakes lone CR line endings in places, and keeps a fence open when a tab follows
  the closing run: line endings become LF and trailing tabs spaces before it parses (the
  lines stay the same lines).
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


def parse_lines(text: str, lines: Lines, first: int, end: int) -> list[Block]:
    """Top-level blocks of lines [first, end) of ``text``, parsed as a document."""
    base = lines.starts[first]
    src = text[base : lines.ends[end - 1]]
    same_offsets = "\r" not in src and src.isascii()  # a byte offset is a text offset
    if "\r" in src:
        src = EOL.sub("\n", src)
    if "\t" in src:  # same length: offsets do not move
        src = _TRAILING_TABS.sub(lambda m: " " * len(m.group()), src)
    if same_offsets:
        return _walk(src, lines.starts, base, 0)
    return _walk(src, byte_line_starts(src), 0, first)


def _walk(src: str, starts: list[int], shift: int, delta: int) -> list[Block]:
    """The blocks, from one pass over the events. The line of byte offset ``off`` of
    ``src`` is ``bisect_right(starts, off + shift) - 1 + delta``."""
    out: list[Block] = []
    depth = 0
    cur: Block | None = None
    inline: _Heading | _Image | None = None  # what still wants the inline events of ``cur``
    item_end = 0
    for ev, rng in _MD.events_with_range(src):
        if ev.__class__ is str:  # Rule, SoftBreak, HardBreak
            if not depth:
                line = bisect_right(starts, rng["start"] + shift) - 1 + delta
                out.append(Block("thematic_break", line, line))
            elif inline is not None and not inline.leaf("Break", " ", rng):
                inline = None
        elif "Start" in ev:
            if not depth:
                cur, inline = _open(ev["Start"], rng)
                cur.first = cur.last = bisect_right(starts, rng["start"] + shift) - 1 + delta
                out.append(cur)
            elif depth == 1 and cur.items is not None and ev["Start"] == "Item":
                cur.items.append(bisect_right(starts, rng["start"] + shift) - 1 + delta)
                item_end = rng["end"]
            elif depth == 1 and cur.n_rows is not None and ev["Start"] == "TableRow":
                cur.n_rows += 1
            elif inline is not None and not inline.start(ev["Start"], rng):
                inline = None
            depth += 1
        elif "End" in ev:
            depth -= 1
            if not depth:
                last = (item_end if cur.items is not None else rng["end"]) - 1
                cur.last = bisect_right(starts, last + shift) - 1 + delta
                if inline is not None:
                    inline.close(cur)
                cur = inline = None
            elif inline is not None and not inline.end(ev["End"]):
                inline = None
        elif inline is not None:
            for key, val in ev.items():
                if not inline.leaf(key, val, rng):
                    inline = None
    return out


def _open(val, rng: dict):
    """A top-level block from its Start event (its lines are set by the caller), and what
    collects its inline events (None when it has none we need)."""
    name, arg = (val, None) if val.__class__ is str else next(iter(val.items()))
    kind = _KINDS.get(name)
    if kind is None:  # an extension we do not enable: let the reference backend parse it
        raise ValueError(f"unexpected top-level block {name!r}")
    block = Block(kind, 0, 0)
    if kind == "heading":
        block.level = int(arg["level"][1])
        return block, _Heading()
    if kind == "paragraph":
        return block, _Image(rng["start"])
    if kind == "code":
        block.info = arg["Fenced"].strip() if arg.__class__ is dict else None
    elif kind == "list":
        block.items = []
    elif kind == "table":
        block.n_rows = 0
    return block, None


class _Heading:
    """Collects a heading's text: text and code spans, image alt text, breaks as spaces."""

    __slots__ = ("parts", "plain")

    def __init__(self):
        self.parts: list[str] = []
        self.plain = True  # only text events whose source is their text (no escapes)

    def start(self, val, rng) -> bool:
        self.plain = False
        return True

    def end(self, val) -> bool:
        return True

    def leaf(self, key: str, val, rng) -> bool:
        if key == "Text":
            if self.plain:  # an escape or an entity makes the text shorter than its source
                self.plain = rng["end"] - rng["start"] == len(val.encode())
        else:
            self.plain = False
        if key in _TEXTS:
            self.parts.append(val)
        return True

    def close(self, block: Block) -> None:
        """markdown-it-py's plain_text: a heading whose source has none of *_`[<&\\!
        (so, here, only plain text events) is its source, stripped; otherwise its text with
        whitespace runs collapsed."""
        text = "".join(self.parts)
        if self.plain and _SPECIAL.isdisjoint(text):
            block.title = text.strip()
        else:
            block.title = " ".join(text.split())


# States of _Image: nothing yet, inside the link, inside the image, after the image (alone
# or in the link), after the link.
_EMPTY, _LINK, _IMAGE, _DONE, _DONE_IN_LINK, _LINK_DONE = range(6)


class _Image:
    """Tells a paragraph that is exactly one image (optionally wrapped in a link), as
    markdown-it-py's backend does: its source starts with ``![`` or ``[![``, and besides
    blank text it holds the image, or a link holding only the image. A method returns False
    as soon as the paragraph cannot be one (most paragraphs: at their first event)."""

    __slots__ = ("para", "state", "alt", "nested", "linked")

    def __init__(self, para_start: int):
        self.para = para_start
        self.state = _EMPTY
        self.alt: list[str] = []
        self.nested = 0  # open elements inside the image
        self.linked = False  # the image is inside the link

    def start(self, val, rng) -> bool:
        if self.state == _IMAGE:
            self.nested += 1
            return True
        name = val if val.__class__ is str else next(iter(val))
        if name == "Image" and rng["start"] == self.para + (self.state == _LINK):
            if self.state in (_EMPTY, _LINK):
                self.linked = self.state == _LINK
                self.state = _IMAGE
                return True
        elif name == "Link" and self.state == _EMPTY and rng["start"] == self.para:
            self.state = _LINK
            return True
        return False

    def end(self, val) -> bool:
        if self.state == _IMAGE:
            if self.nested:
                self.nested -= 1
            else:
                self.state = _DONE_IN_LINK if self.linked else _DONE
            return True
        if self.state == _DONE_IN_LINK and val == "Link":
            self.state = _LINK_DONE
            return True
        return False

    def leaf(self, key: str, val, rng) -> bool:
        if self.state == _IMAGE:
            if key in _TEXTS:
                self.alt.append(val)
            return True
        return key == "Text" and not val.strip()

    def close(self, block: Block) -> None:
        if self.state in (_DONE, _LINK_DONE):
            block.kind = "image"
            block.alt = " ".join("".join(self.alt).split())
