"""The packer: groups units into chunks. It sees only small integer arrays, never text.

It applies the packing rules as docs/design.md, "Packing rules", states and numbers them
(rules 1-3 and 5-8; rule 4, cutting a block, happens before: the packer gets its pieces).

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
