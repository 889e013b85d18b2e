"""Sections and units: a document's blocks cut into what the packer places.

A section starts at every heading of level <= heading_depth (the preamble is section 0
when the document does not open with such a heading). A unit is a whole block, or a piece of
a block that alone exceeds its section's budget (see ``pipeline.split``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mdchunk.pipeline import fence, split
from mdchunk.pipeline.kinds import ATOMIC
from mdchunk.pipeline.pack import SEP, Units

BREADCRUMB_SEP = " > "


@dataclass
class Unit:
    block_index: int
    key: str  # block_id, or block_id@offset for a piece of a block
    kind: str
    text: str
    spans: tuple[tuple[int, int], ...]  # absolute char spans in the document
    tokens: int
    level: int | None  # heading level, for heading units
    heading_path: list[str]
    section: int
    alt: str | None = None
    gap_limit: int = split.MAX_GAP  # whitespace before it is shortened past this (split.gap)


@dataclass(frozen=True)
class Section:
    level: int | None  # of the heading that opens it; None for a preamble
    title: str | None
    path: list[str]


PREFIX_SHARE = 4  # a breadcrumb prefix may take at most a quarter of max_tokens


def breadcrumb_line(path: list[str], limit: int | None = None) -> str:
    """``A > B > C``; longer than ``limit`` characters, each title is shortened to an equal
    share (then the line itself), so a chunk under an enormous heading still fits."""
    line = BREADCRUMB_SEP.join(path)
    if limit is None or len(line) <= limit:
        return line
    share = max((limit - len(BREADCRUMB_SEP) * (len(path) - 1)) // len(path), 1)
    line = BREADCRUMB_SEP.join(t if len(t) <= share else t[: share - 1] + "…" for t in path)
    return line if len(line) <= limit else line[: max(limit - 1, 0)] + "…"


def sections_of(blocks: list[dict], depth: int | None) -> tuple[list[int], list[Section]]:
    """Section number of every block, and each section's heading; depth None: one section."""
    numbers, found = [], []
    for b in blocks:
        opens = depth is not None and b["kind"] == "heading" and b["level"] <= depth
        if opens or not found:
            found.append(
                Section(b["level"], b["heading_path"][-1], b["heading_path"])
                if opens
                else Section(None, None, [])
            )
        numbers.append(len(found) - 1)
    return numbers, found


def caps(
    blocks: list[dict],
    numbers: list[int],
    max_tokens: int,
    prefix: bool,
    count: Callable[[list[str]], list[int]],
) -> tuple[dict[int, int], dict[int, int]]:
    """Per section: max_tokens less the room its longest breadcrumb prefix needs, and the
    length (characters) its breadcrumb lines are cut to so that the prefix takes at most a
    quarter of max_tokens (max_tokens characters is about a quarter with the estimate)."""
    secs = sorted(set(numbers))
    paths: dict[int, set[tuple[str, ...]]] = {s: set() for s in secs}
    if prefix:
        for b, sec in zip(blocks, numbers):
            paths[sec].add(tuple(b["heading_path"]))
    limit = dict.fromkeys(secs, max_tokens)
    most = max_tokens // PREFIX_SHARE
    for _ in range(4):  # shorten until the prefix fits its share (a real tokenizer may need it)
        lines = [
            max((breadcrumb_line(list(p), limit[s]) for p in paths[s]), key=len, default="")
            for s in secs
        ]
        reserve = count(lines) if any(lines) else [0] * len(secs)
        over = [(s, r) for s, r in zip(secs, reserve) if r > most]
        if not over:
            break
        for s, r in over:
            limit[s] = max(limit[s] * most // r, 1)
    cap = {s: max_tokens - (r + SEP if line else 0) for s, r, line in zip(secs, reserve, lines)}
    return cap, limit


def units_of(
    blocks: list[dict],
    numbers: list[int],
    cap: dict[int, int],
    target: int,
    count_for: Callable[[str], Callable],
    text_kind: str | None = None,
) -> list[Unit]:
    """Whole blocks, or the pieces of blocks that alone exceed their section's cap."""
    out: list[Unit] = []
    for b, sec in zip(blocks, numbers):
        base = dict(
            block_index=b["block_index"],
            kind=b["kind"],
            level=b["level"],
            heading_path=b["heading_path"],
            section=sec,
            gap_limit=split.gap_limit(cap[sec]),
        )
        if b["tokens"] <= cap[sec] or b["kind"] == "image":
            text, tokens = _closed(b["text"], b["tokens"], count_for(b["kind"]))
            out.append(
                Unit(
                    key=b["block_id"],
                    text=text,
                    alt=b["alt"],
                    tokens=tokens,
                    spans=((b["char_start"], b["char_end"]),),
                    **base,
                )
            )
            continue
        kind = text_kind or b["kind"]
        pieces = split.split_block(
            kind, b["text"], cap[sec], target, count_for(b["kind"]), b["item_starts"]
        )
        for p in pieces:
            spans = tuple((b["char_start"] + s, b["char_start"] + e) for s, e in p.spans)
            text, tokens = _closed(p.text, p.tokens, count_for(b["kind"]))
            out.append(
                Unit(
                    key=f"{b['block_id']}@{p.spans[0][0]}",
                    text=text,
                    spans=spans,
                    tokens=tokens,
                    **base,
                )
            )
    return out


def _closed(text: str, tokens: int, count: Callable[[list[str]], list[int]]) -> tuple[str, int]:
    """A fence left open in the source is closed for the chunk, and counted again."""
    done = fence.closed(text)
    return (text, tokens) if done == text else (done, count([done])[0])


def pack_arrays(units: list[Unit]) -> Units:
    return Units(
        tokens=[u.tokens for u in units],
        section=[u.section for u in units],
        heading=[u.kind == "heading" for u in units],
        atomic=[u.kind in ATOMIC for u in units],
        image=[u.kind == "image" for u in units],
        overlap_ok=[u.kind not in ("heading", "front_matter", "image") for u in units],
    )
