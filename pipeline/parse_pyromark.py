"""The pyromark backend: pulldown-cmark (compiled) finds the top-level blocks; the default.

pyromark yields pulldown-cmark's events with UTF-8 byte ranges. One lean pass looks only at
what a top-level block needs: its kind and first and last line, a heading's level and plain
text, a fence's info string, the first line of each top-level list item, the body rows of a
table, and whether a paragraph is one image. Each kind has its reader of the events inside
the block, most of which only keep a nesting depth (a paragraph reads its inline events
only when its source starts like an image). The
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

# Each line's trailing run of spaces and tabs, found from its first character only (the
# look-behind) and without giving characters back (possessive): linear on any line.
_TRAILING_BLANKS = re.compile(r"(?<![ \t])[ \t]++$", re.MULTILINE)
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
    plain = "\r" not in src and src.isascii()  # byte offsets are character offsets
    if not plain:  # pulldown-cmark mistakes a lone CR in places; lines stay lines
        src = EOL.sub("\n", src)
    if "\t" in src:  # pulldown-cmark keeps a fence open when a tab follows the closing run
        src = _TRAILING_BLANKS.sub(_spaces_for_tabs, src)
    if plain:
        return _walk(src, src, lines.starts, base, 0)
    data = src.encode("utf-8")
    return _walk(src, data, byte_line_starts(data), 0, first)


def _spaces_for_tabs(m: re.Match) -> str:
    """A trailing run of blanks that holds a tab, as spaces of the same length."""
    run = m.group()
    return " " * len(run) if "\t" in run else run


def _walk(src: str, data: str | bytes, starts: list[int], shift: int, delta: int) -> list[Block]:
    """The blocks, from one pass over the events: each top-level Start event hands the
    events up to its End to the reader of its kind, which returns the byte offset where
    the block ends. ``data`` is ``src``, or its UTF-8 bytes when offsets differ. The line of
    byte offset ``off`` is ``bisect_right(starts, off + shift) - 1 + delta``."""
    out: list[Block] = []
    events = _MD.events_with_range(src)
    for ev, rng in events:
        start = rng["start"]
        line = bisect_right(starts, start + shift) - 1 + delta
        if ev.__class__ is str:  # Rule: the only top-level event without a value
            out.append(Block("thematic_break", line, line))
            continue
        val = ev.get("Start")
        if val is None:  # nothing else is a top-level event
            continue
        name, arg = (val, None) if val.__class__ is str else next(iter(val.items()))
        kind = _KINDS.get(name)
        if kind is None:  # an extension we do not enable: let the reference backend parse it
            raise ValueError(f"unexpected top-level block {name!r}")
        block = Block(kind, line, line)
        end = _READERS[kind](events, block, arg, data, start)
        block.last = bisect_right(starts, end - 1 + shift) - 1 + delta
        if block.items is not None:
            block.items = [bisect_right(starts, off + shift) - 1 + delta for off in block.items]
        out.append(block)
    return out


# Readers: each takes the events after a top-level Start event up to its End (a Start is
# a dict {"Start": ...}, an End {"End": ...}; the events without a value, SoftBreak,
# HardBreak and Rule, are strings, in which "Start" and "End" are not found) and returns
# the byte offset where the block ends.


def _nested(events, block, arg, data, start) -> int:
    """A block whose inner events are not needed (block quotes)."""
    return _nested_from(events, 1)


def _leaf(events, block, arg, data, start) -> int:
    """A block that holds only text (HTML blocks): its first End event is its own."""
    for ev, rng in events:
        if "End" in ev:
            return rng["end"]
    raise ValueError("no end event")


def _code(events, block, arg, data, start) -> int:
    block.info = arg["Fenced"].strip() if arg.__class__ is dict else None
    return _leaf(events, block, arg, data, start)


def _list(events, block, arg, data, start) -> int:
    """A list ends where its last item ends (pulldown-cmark's list range can run on over
    link reference definitions that follow it); ``items`` gets each item's offset."""
    items: list[int] = []
    item_end = 0
    depth = 1
    for ev, rng in events:
        if "End" in ev:
            depth -= 1
            if not depth:
                block.items = items
                return item_end
        elif "Start" in ev:
            if depth == 1:  # an item
                items.append(rng["start"])
                item_end = rng["end"]
            depth += 1
    raise ValueError("no end event")


def _table(events, block, arg, data, start) -> int:
    """A table counts its body rows (the header is no TableRow)."""
    rows = 0
    depth = 1
    for ev, rng in events:
        if "End" in ev:
            depth -= 1
            if not depth:
                block.n_rows = rows
                return rng["end"]
        elif "Start" in ev:
            if depth == 1 and ev["Start"] == "TableRow":
                rows += 1
            depth += 1
    raise ValueError("no end event")


def _heading(events, block, arg, data, start) -> int:
    block.level = int(arg["level"][1])
    return _inline(events, block, _Heading())


def _paragraph(events, block, arg, data, start) -> int:
    """Only a paragraph whose source starts with an image (``![`` or ``[![``) can be one
    image: the others need none of their inline events."""
    if data.startswith(_IMAGE_HEADS if data.__class__ is str else _IMAGE_HEAD_BYTES, start):
        return _inline(events, block, _Image(start))
    return _nested(events, block, arg, data, start)


_IMAGE_HEADS = ("![", "[![")
_IMAGE_HEAD_BYTES = (b"![", b"[![")


def _inline(events, block, inline) -> int:
    """Hands a block's inner events to ``inline`` (a _Heading or an _Image) until it has
    seen enough (a method returns False), then reads on to the block's end."""
    depth = 1
    for ev, rng in events:
        if ev.__class__ is str:
            alive = inline.leaf("Break", " ", rng)
        elif "Start" in ev:
            depth += 1
            alive = inline.start(ev["Start"], rng)
        elif "End" in ev:
            depth -= 1
            if not depth:
                inline.close(block)
                return rng["end"]
            alive = inline.end(ev["End"])
        else:
            alive = all(inline.leaf(key, val, rng) for key, val in ev.items())
        if not alive:
            return _nested_from(events, depth)
    raise ValueError("no end event")


def _nested_from(events, depth: int) -> int:
    """The end of the block ``depth`` levels out: its remaining events are skipped."""
    for ev, rng in events:
        if "End" in ev:
            depth -= 1
            if not depth:
                return rng["end"]
        elif "Start" in ev:
            depth += 1
    raise ValueError("no end event")


_READERS = {
    "paragraph": _paragraph,
    "html": _leaf,
    "blockquote": _nested,
    "heading": _heading,
    "code": _code,
    "list": _list,
    "table": _table,
}


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
