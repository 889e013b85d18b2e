"""Sections of a document's blocks, and blocks that say nothing alone.

A section starts at every heading of level <= heading_depth (the preamble is section 0
when the document does not open with such a heading). The chunks stage cuts sections into
units and packs them in the Rust core (rust/core/src/chunk); the tests' quality checks read
sections through this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from chunkmill import _core


@dataclass(frozen=True)
class Section:
    level: int | None  # of the heading that opens it; None for a preamble
    title: str | None
    path: list[str]
    heading: int | None = None  # block_index of that heading


def sections_of(blocks: list[dict], depth: int | None) -> tuple[list[int], list[Section]]:
    """Section number of every block, and each section's heading; depth None: one section."""
    heading = [b["kind"] == "heading" for b in blocks]
    levels = [b["level"] or 0 for b in blocks]
    numbers, openers = _core.sections(heading, levels, depth)
    found = [
        Section(None, None, [])
        if at is None
        else Section(
            blocks[at]["level"],
            blocks[at]["heading_path"][-1],
            blocks[at]["heading_path"],
            blocks[at]["block_index"],
        )
        for at in openers
    ]
    return numbers, found


def is_filler(kind: str, text: str) -> bool:
    """A block that says nothing to a reader: only link reference definitions, or only
    comments (HTML ``<!-- -->``, MDX ``{/* */}``). A section of headings and such blocks
    counts as empty when chunks are merged."""
    return _core.fillers([kind == "paragraph"], [text])[0]
