"""What the table generators share: ranges as rows of Rust tuples, and the file written
or checked (``--check`` exits 1 when the file differs from what would be written)."""

from __future__ import annotations

import sys
from pathlib import Path


def range_rows(ranges: list[tuple[int, int]], indent: str) -> list[str]:
    """``(0xLO, 0xHI),`` six to a line."""
    return [
        indent + " ".join(f"(0x{a:X}, 0x{b:X})," for a, b in ranges[i : i + 6])
        for i in range(0, len(ranges), 6)
    ]


def write_or_check(out: Path, text: str) -> int:
    if "--check" in sys.argv:
        return 0 if out.read_text() == text else 1
    out.write_text(text)
    return 0
