"""Sections and units: a document's blocks cut into what the packer places.

A section starts at every heading of level <= heading_depth (the preamble is section 0
when the document does not open with such a heading). A unit is a whole block, or a piece of
a block that alone exceeds its section's budget (see ``pipeline.split``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mdchunk import _core
from mdchunk.pipeline import fence, split
from mdchunk.pipeline.kinds import ATOMIC
from mdchunk.pipeline.pack import Units


@dataclass(slots=True)
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


def parents(sections: list[Section]) -> list[int | None]:
    """Per section, the index of the section whose heading is its parent (-1 at the top);
    None for a preamble, which has no siblings."""
    return _core.parents([s.level for s in sections])


def units_of(
    blocks: list[dict],
    numbers: list[int],
    cap: dict[int, int],
    target: int,
    count_for: Callable[[str], Callable],
    text_kind: str | None = None,
    small: int = 0,
) -> list[Unit]:
    """Whole blocks, or the pieces of blocks that alone exceed their section's cap.

    A heading is never left alone (or with less than ``small`` tokens of content) because
    the block after it did not fit with it: a block that must be cut and comes right after
    a heading (and less than ``small`` tokens of content) is cut with a budget that leaves
    room for them, and a paragraph, list or quote that fits the cap alone but not with them
    is cut too, so its first pieces go into one chunk with its heading."""
    out: list[Unit] = []
    for b, sec, room in zip(blocks, numbers, _leads(blocks, numbers, small)):
        kind, tokens, limit = b["kind"], b["tokens"], cap[sec]
        budget = max(limit - room, limit // 2)
        crowded = room and kind in CUTTABLE and tokens > budget
        if (tokens <= limit and not crowded) or kind == "image":
            text = b["text"]
            if "```" in text or "~~~" in text:  # the only texts that can leave a fence open
                text, tokens = _closed(text, tokens, count_for(kind))
            span = ((b["char_start"], b["char_end"]),)
            path = b["heading_path"]
            index, level = b["block_index"], b["level"]
            alt = b["alt"]
            if kind == "image" and alt:  # the alt text is what is embedded: within the cap
                alt = _alt_within(alt, limit, count_for("paragraph"))
            unit = Unit(index, b["block_id"], kind, text, span, tokens, level, path, sec, alt)
            out.append(unit)
            continue
        base = dict(
            block_index=b["block_index"],
            kind=kind,
            level=b["level"],
            heading_path=b["heading_path"],
            section=sec,
        )
        kind = text_kind or b["kind"]
        pieces = split.split_block(
            kind, b["text"], budget, target, count_for(b["kind"]), b["item_starts"]
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


# Kinds cut to keep their heading company even when they fit the cap alone (never atomic
# kinds: a code block or table that fits is never cut).
CUTTABLE = frozenset({"paragraph", "list", "blockquote"})


def _leads(blocks: list[dict], numbers: list[int], small: int) -> list[int]:
    """Per block: the tokens before it (blank lines included) in the chunk its heading
    opens: the headings right before it, headings of empty sections before those (they
    merge forward), and content after the heading while that stays under ``small``. 0 for
    headings and where no heading leads."""
    heading = [b["kind"] == "heading" for b in blocks]
    return _core.leads(heading, numbers, [b["tokens"] for b in blocks], small)


def _alt_within(alt: str, limit: int, count: Callable[[list[str]], list[int]]) -> str:
    """An image's alt text, cut at a space (and marked with "…") until it counts at most
    ``limit`` tokens; the image's span still covers the whole block."""
    while count([alt])[0] > limit and len(alt) > 1:
        cut = alt[: max(1, len(alt) * 3 // 4)]
        space = cut.rfind(" ")
        alt = (cut[:space] if space > 0 else cut).rstrip() + "…"
    return alt


def _closed(text: str, tokens: int, count: Callable[[list[str]], list[int]]) -> tuple[str, int]:
    """A fence left open in the source is closed for the chunk, and counted again."""
    done = fence.closed(text)
    return (text, tokens) if done == text else (done, count([done])[0])


def pack_arrays(units: list[Unit]) -> Units:
    kinds = [u.kind for u in units]
    return Units(
        tokens=[u.tokens for u in units],
        section=[u.section for u in units],
        heading=[k == "heading" for k in kinds],
        atomic=[k in ATOMIC for k in kinds],
        image=[k == "image" for k in kinds],
        overlap_ok=[k not in ("heading", "front_matter", "image") for k in kinds],
        filler=[k == "heading" or f for k, f in zip(kinds, _fillers(units))],
    )


def _fillers(units: list[Unit]) -> list[bool]:
    """is_filler of every unit, asked of the core only for the units that can be filler
    (a comment opener, or a paragraph with a link definition's "]:")."""
    out = [False] * len(units)
    maybe = [i for i, u in enumerate(units) if _may_fill(u)]
    if maybe:
        found = _core.fillers(
            [units[i].kind == "paragraph" for i in maybe], [units[i].text for i in maybe]
        )
        for i, f in zip(maybe, found):
            out[i] = f
    return out


def _may_fill(u: Unit) -> bool:
    """False where is_filler is sure to be: the cheap tests of its two cases."""
    text = u.text
    return "<!--" in text or "{/*" in text or (u.kind == "paragraph" and "]:" in text)


def is_filler(kind: str, text: str) -> bool:
    """A block that says nothing to a reader: only link reference definitions, or only
    comments (HTML ``<!-- -->``, MDX ``{/* */}``). A section of headings and such blocks
    counts as empty when chunks are merged."""
    return _core.fillers([kind == "paragraph"], [text])[0]
