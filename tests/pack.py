"""The packer: groups units into chunks. It sees only small integer arrays, never text.

Rules (docs/design.md, "Packing rules", states them for users):
1. Units of different sections never share a chunk's content; a new section starts a chunk.
   A section whose units fit within its ``cap`` stays whole, one chunk (a complete section
   is the best retrieval unit); ``target`` steers how longer sections are cut.
2. Otherwise units are added in order while the chunk stays within ``target``. Past
   ``target`` a chunk still grows up to its section's ``cap`` when it holds only headings
   so far, or when the next unit is atomic and directly follows a heading (never orphan a
   table from its title).
3. A deeper heading (not a section boundary) starts a new chunk when the current chunk is
   already ``min_tokens`` or more and the heading with its first block would pass ``target``,
   or the heading with all its blocks (up to the next heading) would pass ``target`` here
   but fits within it in a chunk of its own: a subsection is not cut between its intro and
   the table or list after it when it could have stayed whole.
4. When a chunk closes because of size, the next one starts with the largest suffix of the
   previous chunk's units (never all of them) that fits ``overlap`` and holds no heading,
   front matter or image; the suffix shrinks if needed to fit ``cap``.
5. Images are chunks of their own.
6. Merging, after packing: a chunk of headings only (or of headings and filler: link
   reference definitions, comments) merges forward into the next chunk when that fits the
   next chunk's cap (empty sections merge forward), else backward; a chunk under
   ``min_tokens`` merges with the next chunk of the same section when that fits, else with
   the previous chunk of the same section.
7. Sibling packing (when ``parents`` is given): consecutive chunks that each hold whole
   sections are packed into one chunk while it stays within ``target`` and every cap
   involved, as long as every section in it lies below the parent of its first section:
   sibling sections, and a section with its subsections, never a section with what follows
   its parent. A chunk under ``min_tokens`` made of subsections of the previous chunk's
   last section joins it up to the cap, not only the target: a section is not left
   without its small subsection.

The Rust core packs (rust/core/src/chunk/pack/, through ``chunkmill._core.pack``); the
tests call it through this module, in the arrays and groups they speak.
"""

from __future__ import annotations

from dataclasses import dataclass

SEP = 1  # tokens charged for the blank line between two units


@dataclass
class Units:
    tokens: list[int]
    section: list[int]
    heading: list[bool]
    atomic: list[bool]
    image: list[bool]
    overlap_ok: list[bool]
    filler: list[bool] | None = None  # says nothing alone (headings, link definitions)


@dataclass(slots=True)
class Group:
    units: list[int]
    section: int
    overlap: int = 0  # leading units repeated from the previous group
    image: bool = False
    tokens: int = 0


@dataclass
class Packer:
    """The packer by every rule, without ``pack``'s answer for a lone section that fits its
    cap (the same groups, by the long way)."""

    u: Units
    cap: dict[int, int]
    target: int
    min_tokens: int
    overlap: int
    parents: list[int | None] | None = None  # per section, for sibling packing

    def run(self) -> list[Group]:
        return _packed(
            self.u, self.cap, self.target, self.min_tokens, self.overlap, self.parents, True
        )


def pack(
    units: Units,
    cap: dict[int, int],
    target: int,
    min_tokens: int,
    overlap: int,
    parents: list[int | None] | None = None,
) -> list[Group]:
    return _packed(units, cap, target, min_tokens, overlap, parents, False)


def _packed(
    units: Units,
    cap: dict[int, int],
    target: int,
    min_tokens: int,
    overlap: int,
    parents: list[int | None] | None,
    full: bool,
) -> list[Group]:
    """The Rust packer's groups: flat arrays (offsets into one list of units) made Groups.
    ``cap`` goes per section number, None where a number has no cap."""
    from chunkmill import _core  # here: importing the pipeline needs no extension loaded

    caps = [cap.get(s) for s in range(max(units.section, default=-1) + 1)]
    starts, flat, section, lap, image, tokens = _core.pack(
        units, caps, target, min_tokens, overlap, parents, full
    )
    return [
        Group(flat[starts[j] : starts[j + 1]], section[j], lap[j], image[j], tokens[j])
        for j in range(len(section))
    ]
