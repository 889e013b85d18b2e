"""Invariant checks shared by tests (not a test module itself)."""

from __future__ import annotations


def assert_blocks_rebuild(text: str, cols: dict[str, list]) -> None:
    """Block slices, in order, plus whitespace between them rebuild ``text`` exactly."""
    pos = 0
    for start, end, body, line_start in zip(
        cols["char_start"], cols["char_end"], cols["text"], cols["line_start"]
    ):
        assert start >= pos, f"block at {start} overlaps the previous one ending at {pos}"
        assert not text[pos:start].strip(), f"text lost between {pos} and {start}"
        assert text[start:end] == body
        assert line_start == _line_of(text, start)
        pos = end
    assert not text[pos:].strip(), f"text lost after {pos}"


def _line_of(text: str, offset: int) -> int:
    before = text[:offset]
    return before.count("\n") + before.count("\r") - before.count("\r\n") + 1
