"""Block kinds: one ordered enum, and the per-kind facts the other stages look up."""

from __future__ import annotations

from enum import IntEnum


class BlockKind(IntEnum):
    """Structural block kinds, in a fixed order (the order is part of the schema)."""

    front_matter = 0
    heading = 1
    paragraph = 2
    list = 3
    table = 4
    code = 5
    blockquote = 6
    html = 7
    thematic_break = 8
    mdx_esm = 9
    mdx_jsx = 10
    image = 11


KIND_NAMES: list[str] = [k.name for k in BlockKind]

# Blocks whose token estimate uses the code weights (pipeline/tokens.py).
CODE_LIKE: frozenset[str] = frozenset({"code", "mdx_esm", "mdx_jsx"})
