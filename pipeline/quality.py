"""Chunk quality predicates shared by checks, tests and benchmarks."""

from __future__ import annotations

import math
import re

from mdchunk.pipeline.fence import LINE_END, split_lines, unbalanced

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


def names_its_section(embed_text: str, text: str, section_title: str | None, title: str) -> bool:
    """SC-001 judged on what is embedded: after its context header (if any), ``embed_text``
    opens with a heading (the section's own, or the empty one merged in before it), or the
    header itself ends by naming the section (the document title for a preamble)."""
    if starts_with_heading(text):
        return True
    prefix = embed_text[: len(embed_text) - len(text)] if embed_text.endswith(text) else ""
    if not prefix.strip():
        return False
    header = LINE_END.split(prefix.strip())[0]
    named = section_title if section_title is not None else title
    return header.split(" > ")[-1].casefold() == (named or "").casefold()


def best_possible_share(
    sections: list[list[int]], cap: int, n_chunks: int | None = None, cut: int | None = None
) -> float:
    """The best share of chunks that can start with a heading or hold a whole section, given
    each section's size in tokens (one list per document): a section over the cap needs
    ceil(size / cap) chunks, or ceil(size / cut) when long sections are cut toward ``cut``
    tokens (the policy's target: packing rule 3), and all but its first can start with
    neither. ``n_chunks``: how many chunks the packing made (default: the fewest possible,
    one per small section; packing small sections together makes fewer chunks, so fewer
    good ones)."""

    def parts(size: int) -> int:
        return 1 if size <= cap else math.ceil(size / (cut or cap))

    fewest = sum(parts(s) for doc in sections for s in doc)
    unavoidable = sum(parts(s) - 1 for doc in sections for s in doc)
    n = n_chunks if n_chunks is not None else fewest
    return 1 - unavoidable / max(n, 1)
