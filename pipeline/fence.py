"""Fence lines: the one definition of where fenced code opens and closes, line by line.

Used wherever text is cut by lines (MDX segmentation, plain-text paragraphs, splitting
oversized blocks) and by the balance check, so they all agree. A fence line may be indented
by any amount or sit after block quote markers or a list marker (fences nested in lists and
JSX are common in real docs).

Lines are what CommonMark calls lines: ended by ``\r\n``, ``\r`` or ``\n`` and nothing else.
``LINE_END`` and ``split_lines`` are the one definition; ``str.splitlines`` would also break at
U+2028, U+2029, NEL, VT, FF and FS..RS, which the parser treats as ordinary characters.
"""

from __future__ import annotations

import re

LINE_END = re.compile(r"\r\n|\r|\n")
FENCE_OPEN = re.compile(r"([ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?)(`{3,}|~{3,})(.*)")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their endings (a final ending gives a last empty line)."""
    return LINE_END.split(text)


def opens_fence(line: str) -> str | None:
    """The fence run (``` or ~~~ ...) when ``line`` opens fenced code, else None."""
    m = FENCE_OPEN.match(line)
    if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
        return m.group(2)
    return None


def fence_prefix(line: str) -> str:
    """What stands before the fence run on an opening line (indentation, markers)."""
    m = FENCE_OPEN.match(line)
    return m.group(1) if m else ""


def closes_fence(line: str, fence: str) -> bool:
    body = line.lstrip(" \t>")
    run = len(body) - len(body.lstrip(fence[0]))
    return run >= len(fence) and not body[run:].strip(" \t")  # spaces or tabs only


def fenced_lines(lines: list[str]) -> list[bool]:
    """For every line: is it part of a fenced region (opening and closing lines included)?"""
    out, fence = [], None
    for line in lines:
        if fence is None:
            fence = opens_fence(line)
            out.append(fence is not None)
        else:
            out.append(True)
            if closes_fence(line, fence):
                fence = None
    return out


def open_fence(text: str) -> tuple[str, str] | None:
    """(prefix, run) of a fence that ``text`` opens and does not close, else None."""
    if "```" not in text and "~~~" not in text:
        return None
    fence, prefix = None, ""
    for line in split_lines(text):
        if "```" not in line and "~~~" not in line:  # opens no fence and closes none
            continue
        if fence is None:
            fence = opens_fence(line)
            prefix = fence_prefix(line) if fence else ""
        elif closes_fence(line, fence):
            fence = None
    return None if fence is None else (prefix, fence)


def unbalanced(text: str) -> bool:
    """True when ``text`` opens a fence that it does not close."""
    return open_fence(text) is not None


def closed(text: str) -> str:
    """``text`` with a closing fence line added when it leaves a fence open (an unclosed
    fence runs to the end of its document in CommonMark; alone in a chunk it must close)."""
    found = open_fence(text)
    if found is None:
        return text
    prefix, run = found
    return f"{text}{line_end(text)}{continuation(prefix)}{run}"


def line_end(text: str) -> str:
    """The line ending ``text`` uses (its first one; \\n when it has none): what a line
    added to it ends with, so a CRLF document's chunks stay CRLF."""
    found = LINE_END.search(text)
    return found.group(0) if found else "\n"


def continuation(prefix: str) -> str:
    """The start of a line that stays in the containers of a line that starts with
    ``prefix``: block quote markers kept (a line without them would end the quote, and its
    fence with it), list markers and their numbers as spaces."""
    return "".join(" " if c in "-*+.)" or c.isdigit() else c for c in prefix)
