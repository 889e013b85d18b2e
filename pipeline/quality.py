"""Chunk quality predicates shared by checks, tests and benchmarks."""

from __future__ import annotations

import re

from mdchunk.pipeline.fence import split_lines, unbalanced

_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")


def unbalanced_fence(text: str) -> bool:
    """True when a fence is opened in ``text`` and not closed (see ``pipeline.fence``).
    Line-based on purpose: it judges the chunk text alone, whatever its container."""
    return unbalanced(text)


def starts_with_heading(text: str) -> bool:
    """ATX (``# T``) or setext (``T`` over ``===``) heading on the first line."""
    lines = split_lines(text.lstrip("\r\n"))
    if not lines:
        return False
    if _HEADING.match(lines[0]):
        return True
    return len(lines) > 1 and bool(lines[0].strip()) and bool(_SETEXT.match(lines[1]))
