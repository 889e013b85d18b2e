"""Chunk quality predicates of the tests and benchmarks."""

from __future__ import annotations

import math
import re

from chunkmill.pipeline.fence import LINE_END, split_lines, unbalanced

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


def context_prefix(embed_text: str, text: str) -> str:
    """What ``embed_text`` holds before the chunk's text (the context header and its blank
    line), read back from the two columns: the header never holds a blank line, and the
    text in its embedding form begins as ``text`` does unless its first block changed."""
    if embed_text.endswith(text):
        return embed_text[: len(embed_text) - len(text)]
    head, blank, _ = embed_text.partition("\n\n")
    return head + blank if blank and not text.startswith(head) else ""


def names_its_section(embed_text: str, text: str, section_title: str | None, title: str) -> bool:
    """Whether a chunk says which section it comes from, judged on what is embedded: after
    its context header (if any), ``embed_text`` opens with a heading (the section's own, or
    the empty one merged in before it), or the header names the section (last, or followed
    by the deeper heading the chunk starts under; the document title for a preamble)."""
    if starts_with_heading(text):
        return True
    prefix = context_prefix(embed_text, text)
    if not prefix.strip():
        return False
    header = LINE_END.split(prefix.strip())[0]
    named = (section_title if section_title is not None else title) or ""
    return named.casefold() in {e.casefold() for e in header.split(" > ")}


def best_possible_share(sections: list[list[int]], cap: int) -> float:
    """Sections / the fewest chunks any packing could use, given each section's size in
    tokens (one list per document): a section over the cap needs ceil(size / cap) chunks."""
    n_sections = sum(len(doc) for doc in sections)
    n_chunks = sum(max(1, math.ceil(s / cap)) for doc in sections for s in doc)
    return n_sections / max(n_chunks, 1)


def section_sizes(blocks, depth: int) -> list[list[int]]:
    """Each document's section sizes in tokens (its blocks' estimates plus one per block
    separator), from a blocks table (polars) of one or more documents; front matter is not
    part of any section. The input of ``best_possible_share``."""
    from tests.section import sections_of

    sizes = []
    for part in blocks.partition_by("doc_id", maintain_order=True):
        rows = [r for r in part.sort("block_index").to_dicts() if r["kind"] != "front_matter"]
        numbers, sections = sections_of(rows, depth)
        doc = [0] * len(sections)
        for r, n in zip(rows, numbers):
            doc[n] += r["est_tokens"] + 1
        sizes.append(doc)
    return sizes
