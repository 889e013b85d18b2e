"""Splitting one oversized block, by kind. The only place that knows how to cut markdown.

``split_block`` returns pieces whose texts are valid markdown on their own and whose
``spans`` (relative to the block text) together cover every character of the block but
whitespace. Two shapes come back:

- code and tables give *parts*, already grouped toward ``group_tokens``: code by lines with
  the fence and info string re-opened in every part; tables by rows with the header and
  delimiter rows repeated in every part.
- every other kind gives *fine* pieces (source slices) that the packer groups and may use as
  overlap: lists between top-level items, HTML/JSX/front matter by lines, block quotes by
  lines then sentences, paragraphs by sentences; then words, then characters, each piece
  within the budget. Fenced code inside them (a fence in a list item or a JSX block) is one
  piece, or, when it alone is too big, split as code with its fence re-opened.

The work is done by the Rust core (``chunkmill._core``, rust/core/src/chunk/split). The
estimate is counted there without calling back; any other counter (a real tokenizer) is
called with the same batches of texts as a Python implementation would make, since a
tokenizer's count of joined text is not the sum of its parts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chunkmill import _core
from chunkmill.pipeline.tokens import EstimateCounter

Count = Callable[[list[str]], list[int]]

MAX_GAP = _core.SPLIT_MAX_GAP


@dataclass(frozen=True)
class Piece:
    text: str
    spans: tuple[tuple[int, int], ...]  # relative to the block text
    tokens: int


def _counter(count: Count) -> Count | tuple[str, bool, bool | None]:
    """The estimate's parameters when ``count`` is an EstimateCounter's own ``count`` (the
    core counts it natively), else ``count`` itself."""
    owner = getattr(count, "__self__", None)
    if type(owner) is EstimateCounter and count.__func__ is EstimateCounter.count:
        return (owner.bias, owner.group == "code", owner.english_document)
    return count


def split_block(
    kind: str,
    text: str,
    budget: int,
    group_tokens: int,
    count: Count,
    item_starts: list[int] | None = None,
) -> list[Piece]:
    """Pieces of one block that alone exceeds ``budget`` tokens. Each piece fits ``budget``
    (as counted by ``count``) unless even a single character does not."""
    texts, starts, ends, tokens = _core.split_block(
        kind, text, budget, group_tokens, _counter(count), item_starts
    )
    return [Piece(t, ((s, e),), n) for t, s, e, n in zip(texts, starts, ends, tokens)]


def gap_limit(budget: int) -> int:
    """Whitespace longer than this many characters is shortened between pieces (``gap``):
    MAX_GAP, or less under a small cap (about a quarter of it with the estimate)."""
    return _core.split_gap_limit(budget)


def gap(text: str, a: int, b: int, limit: int = MAX_GAP) -> str:
    """The whitespace text[a:b] between two pieces as a chunk holds it: verbatim, unless it
    is longer than ``limit`` characters; then its first two line breaks and the last
    limit/2 characters of its last line."""
    return _core.split_gap(text, a, b, limit)


def graphemes(text: str, a: int, b: int) -> list[int]:
    """Offsets a, ..., b of the extended grapheme cluster boundaries of text[a:b]."""
    return _core.split_graphemes(text, a, b)


def _sentences(text: str, s: int, e: int) -> list[tuple[int, int]]:
    """The sentences of text[s:e], trimmed, as (start, end) offsets."""
    return _core.split_sentences(text, s, e)


def _chars(text: str, a: int, b: int, budget: int, count: Count) -> list[tuple[int, int]]:
    """Cuts of text[a:b] between grapheme clusters, each piece as long as fits ``budget``
    (a single cluster over it is cut between code points)."""
    return _core.split_chars(text, a, b, budget, _counter(count))
