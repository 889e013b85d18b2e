"""MDX segmentation: find top-level ESM statements and JSX component blocks by line.

A document marked ``mdx`` is cut into line ranges before markdown parsing:
- ``mdx_esm``: a line starting with ``import`` or ``export`` after a blank line (or at the
  start), up to the next blank line, as MDX does.
- ``mdx_jsx``: a line starting (up to 3 spaces in) with a component tag ``<Name`` (capital
  first letter, dots allowed) or a fragment ``<>`` after a blank line, up to the line where
  that same tag is closed, blank lines and fenced code inside included. Tags inside fenced
  code and inline code spans are not counted. A tag that is never closed ends at the next
  blank line (like an HTML block). A line where the tag closes and prose follows is inline
  JSX inside a paragraph, so it stays markdown.
Everything else is left to the markdown parser.
"""

from __future__ import annotations

import re

from chunkmill.pipeline.fence import closes_fence, opens_fence

_ESM = re.compile(r"(import|export)[\s{*]")
_JSX_OPEN = re.compile(r" {0,3}<([A-Z][\w.:-]*|>)")
_TAG_NAME = re.compile(r"[\w.:-]*")
_MARKUP = re.compile(r"[`<]")
# Looking for where an element closes reads ahead; with thousands of tags never closed that
# is quadratic. A document gets this many characters of look-ahead per character of its
# own (and a floor); past it, an element is taken as never closed (it ends at the next
# blank line, as an unclosed tag always does). The MDX files of the shared corpora use
# at most 0.97 characters per character.
SCAN_BUDGET_PER_CHAR = 2
SCAN_BUDGET_FLOOR = 100_000


def segments(lines: list[str], start: int) -> list[tuple[str, int, int]]:
    """Return (kind, first_line, end_line_exclusive) ranges covering lines[start:]."""
    out: list[tuple[str, int, int]] = []
    md_from = start
    i = start
    fence: str | None = None
    n = len(lines)
    budget = [SCAN_BUDGET_FLOOR + SCAN_BUDGET_PER_CHAR * sum(map(len, lines))]
    while i < n:
        line = lines[i]
        if fence is not None:
            fence = None if closes_fence(line, fence) else fence
            i += 1
            continue
        after_blank = i == start or not lines[i - 1].strip()
        end, kind = _mdx_block_end(lines, i, budget) if after_blank else (None, None)
        if end is None:
            fence = opens_fence(line)
            i += 1
            continue
        if md_from < i:
            out.append(("md", md_from, i))
        out.append((kind, i, end))
        i = md_from = end
    if md_from < n:
        out.append(("md", md_from, n))
    return out


def _mdx_block_end(lines: list[str], i: int, budget: list[int]) -> tuple[int | None, str | None]:
    line = lines[i]
    if _ESM.match(line):
        return _next_blank(lines, i), "mdx_esm"
    m = _JSX_OPEN.match(line)
    if m:
        name = "" if m.group(1) == ">" else m.group(1)
        end = _jsx_end(lines, i, name, budget)
        if end is not None:
            return end, "mdx_jsx"
    return None, None


def _next_blank(lines: list[str], i: int) -> int:
    j = i + 1
    while j < len(lines) and lines[j].strip():
        j += 1
    return j


def _jsx_end(lines: list[str], i: int, name: str, budget: list[int]) -> int | None:
    """End line (exclusive) of the JSX element opened on line i, or None if inline.
    ``budget`` (characters left to read ahead in this document) is spent as lines are read."""
    scanner = _TagScanner(name)
    fence: str | None = None
    for j in range(i, len(lines)):
        line = lines[j]
        budget[0] -= len(line) + 1
        if budget[0] < 0 and j > i:
            break
        if fence is not None:
            fence = None if closes_fence(line, fence) else fence
            continue
        if not scanner.in_tag and j > i:
            fence = opens_fence(line)
            if fence:
                continue
        rest = scanner.feed(line)
        if rest is not None:
            return j + 1 if not rest.strip() else None
    return _next_blank(lines, i)


class _TagScanner:
    """Counts opening and closing tags of one element name across lines."""

    def __init__(self, name: str):
        self.name = name
        self.depth = 0
        self.in_tag = False
        self.closing = False
        self.quote: str | None = None
        self.braces = 0
        self.counted = False

    def feed(self, line: str) -> str | None:
        """Consume a line; return the text after the element's end if it ended here."""
        k, n = 0, len(line)
        while k < n:
            c = line[k]
            if self.in_tag:
                k = self._in_tag(line, k)
                if not self.in_tag and self.depth == 0:
                    return line[k:]
                continue
            if c == "`":
                close = line.find("`", k + 1)
                k = n if close < 0 else close + 1
                continue
            if c == "<":
                k = self._open_tag(line, k)
                continue
            m = _MARKUP.search(line, k + 1)  # jump over plain text to the next ` or <
            k = m.start() if m else n
        return None

    def _open_tag(self, line: str, k: int) -> int:
        closing = line.startswith("</", k)
        start = k + (2 if closing else 1)
        tag = _TAG_NAME.match(line, start).group(0)  # no slice: a line may be megabytes
        if tag != self.name or (not tag and line[start : start + 1] not in (">", "")):
            return k + 1
        self.in_tag, self.closing, self.quote, self.braces = True, closing, None, 0
        return start + len(tag)

    def _in_tag(self, line: str, k: int) -> int:
        c = line[k]
        if self.quote:
            if c == self.quote:
                self.quote = None
        elif c in "\"'" and self.braces == 0:
            self.quote = c
        elif c == "{":
            self.braces += 1
        elif c == "}":
            self.braces = max(0, self.braces - 1)
        elif self.braces == 0 and c == "/" and line.startswith("/>", k):
            self.in_tag = False
            return k + 2
        elif self.braces == 0 and c == ">":
            self.in_tag = False
            self.depth += -1 if self.closing else 1
            return k + 1
        return k + 1
