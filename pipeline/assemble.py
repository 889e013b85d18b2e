"""Chunk rows from packed groups: text, context header, spans, lines, links and ids.

``embed_text`` is the context header (see ``pipeline.context``), a blank line, then the
chunk's text in its embedding form (``pipeline.embed``: heading lines clean, include lines
left out). The header names the document title and the headings above where the chunk
starts, less the heading the chunk itself starts with (its text already shows it). The
document's first text chunk also carries the chosen front matter fields.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from mdchunk.pipeline import context, embed
from mdchunk.pipeline.fence import LINE_END
from mdchunk.pipeline.pack import Group
from mdchunk.pipeline.policy import CHUNKER_VERSION, Policy
from mdchunk.pipeline.section import Section, Unit


@dataclass
class Packed:
    """One document's packing: its units, the groups of units, its sections."""

    units: list[Unit]
    groups: list[Group]
    sections: list[Section]
    strategy: str


def header(us: list[Unit], ctx: context.DocContext) -> str:
    """The context line of a chunk of units ``us``: the title and the headings above where
    the chunk starts, less the heading it starts with (its text shows that one). A chunk
    of several sections starts with the first one's heading, so the line names their
    common parent."""
    if not ctx.on:
        return ""
    first = us[0]
    path = first.heading_path[:-1] if first.kind == "heading" else first.heading_path
    line = context.header_line(ctx.title, path)
    if first.kind == "heading" and line.casefold() == first.heading_path[-1].casefold():
        return ""  # the chunk opens with the title itself
    return line


def prefix_of(us: list[Unit], ctx: context.DocContext, first: bool, limit: int | None) -> str:
    """Everything embed_text puts before the text: header line, first-chunk fields."""
    lines = [header(us, ctx)] + (ctx.fields if first else [])
    prefix = "\n".join(line for line in lines if line)
    return context.clip(prefix, limit) if limit is not None else prefix


def assemble(
    doc: dict,
    blocks: list[dict],
    packed: Packed,
    ctx: context.DocContext,
    policy: Policy,
    limits: dict[int, int],
) -> tuple[list[dict], list[str]]:
    """The chunk rows of a document's groups, and each row's context prefix (what
    embed_text holds before its text, without the blank line)."""
    text = doc["text"]
    line_of = _line_finder(text)

    units, groups, sections = packed.units, packed.groups, packed.sections
    stem = _stem(doc["path"])
    has_headings = any(s.level is not None for s in sections)
    parts = _section_parts(groups)
    first_text = next((id(g) for g in groups if not g.image), None)
    prefixes: dict[tuple, str] = {}  # chunks that start on the same path share a prefix
    rows, row_prefixes = [], []
    for index, g in enumerate(groups):
        us = [units[k] for k in g.units]
        section = sections[g.section]
        body, spans = _body_and_spans(text, us)
        if g.image:
            body = us[0].alt or ""
        lead = _first_content(us)
        key = (id(us[0].heading_path), us[0].kind, id(g) == first_text, limits.get(g.section))
        prefix = prefixes.get(key)
        if prefix is None:
            prefix = prefixes[key] = prefix_of(us, ctx, key[2], key[3])
        kept = body if g.image else embed.body(body, us, ctx.env)
        embed_text = f"{prefix}\n\n{kept}" if prefix else kept
        row_prefixes.append(prefix)
        opening = sections[us[0].section].heading  # where the chunk starts
        anchor = ctx.anchors.get(opening) if opening is not None else None
        part, of = parts[id(g)]
        keys = [u.key for u in us]
        line_start = line_of(spans[0][0])
        line_end = line_of(max(spans[-1][1] - 1, spans[-1][0]))
        rows.append(
            {
                "chunk_id": chunk_id(doc["doc_id"], keys, policy.id_hash, prefix, anchor),
                "doc_id": doc["doc_id"],
                "path": doc["path"],
                "title": ctx.title,
                "chunk_index": index,
                "chunk_type": _chunk_type(g, section, packed.strategy, has_headings),
                "name": section.title if section.title is not None else stem,
                "breadcrumb": lead.heading_path,
                "header_level": section.level,
                "section_title": section.title,
                "anchor": anchor,
                "url": _url(policy, doc["path"], anchor, line_start, line_end),
                "headings": [u.heading_path[-1] for u in us if u.kind == "heading"],
                "text": body,
                "embed_text": embed_text,
                "embed_hash": embed_hash(embed_text),
                "image_src": context.image_src(us[0].text, ctx.env) if g.image else None,
                "n_tokens": 0,
                "token_source": "",
                "overlap_tokens": sum([u.tokens for u in us[: g.overlap]]),
                "block_start": min([u.block_index for u in us]),
                "block_end": max([u.block_index for u in us]),
                "block_ids": keys,
                "spans": [{"start": s, "end": e} for s, e in spans],
                "char_start": spans[0][0],
                "char_end": spans[-1][1],
                "line_start": line_start,
                "line_end": line_end,
                "is_split": of > 1,
                "part": part,
                "parts": of,
                "strategy": packed.strategy,
                "front_matter": doc["front_matter"],  # chunk.front_matter_column
                "chunker_version": CHUNKER_VERSION,
                "policy_hash": policy.policy_hash,
            }
        )
    return rows, row_prefixes


def _line_finder(text: str) -> Callable[[int], int]:
    """The 1-based line of an offset: one more than the line breaks that start before it.
    Without a CR, the newlines between the offset asked and the one asked before are
    counted (chunks come in source order, so that is about one pass over the document);
    with one, the breaks are found once and searched (counting from the block start per
    chunk would be quadratic)."""
    if "\r" in text:
        breaks = [m.start() for m in LINE_END.finditer(text)]
        breaks.append(len(text) + 1)
        return lambda offset: 1 + bisect_left(breaks, offset)
    last = [0, 0]  # an offset asked before, and the newlines before it

    def line_of(offset: int) -> int:
        at, n = last
        n += text.count("\n", at, offset) if offset >= at else -text.count("\n", offset, at)
        last[0], last[1] = offset, n
        return 1 + n

    return line_of


def chunk_id(
    doc_id: str, keys: list[str], policy_hash: str, prefix: str = "", anchor: str | None = None
) -> str:
    """sha256 of the document, chunker version, block ids, policy, context and anchor."""
    payload = "\x1f".join([doc_id, CHUNKER_VERSION, *keys, policy_hash, prefix, anchor or ""])
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def embed_hash(embed_text: str) -> str:
    """Equal for equal embed_text, across documents: embed each distinct text once."""
    return hashlib.sha256(embed_text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _url(policy: Policy, path: str, anchor: str | None, line_start: int, line_end: int):
    if not policy.link_template:
        return None
    return context.url(policy.link_template, path, anchor, line_start, line_end)


def _chunk_type(g: Group, section: Section, strategy: str, has_headings: bool) -> str:
    if g.image:
        return "image"
    if strategy != "markdown" or not has_headings:
        return "text"
    return "section" if section.level is not None else "preamble"


def _section_parts(groups: list[Group]) -> dict[int, tuple[int, int]]:
    """1-based part number and part count of every text group within its section."""
    by_section: dict[int, list[Group]] = {}
    for g in groups:
        if not g.image:
            by_section.setdefault(g.section, []).append(g)
    out = {id(g): (1, 1) for g in groups}
    for members in by_section.values():
        for i, g in enumerate(members):
            out[id(g)] = (i + 1, len(members))
    return out


def _stem(path: str) -> str:
    """``PurePosixPath(path).stem``, without making the path object (a document path names
    a file: the last element, less its last suffix, as pathlib cuts it)."""
    name = PurePosixPath(path).name if path.endswith(("/", "/.")) else path.rsplit("/", 1)[-1]
    if name == ".":
        return ""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def _first_content(us: list[Unit]) -> Unit:
    """The first unit that is not a heading (the last unit when all are)."""
    for u in us:
        if u.kind != "heading":
            return u
    return us[-1]


def _body_and_spans(text: str, us: list[Unit]) -> tuple[str, list[tuple[int, int]]]:
    """``_join`` and ``_merge_spans`` of the units, in one pass over their gaps when each
    unit has one span and they follow each other in the source (the common case; the gap
    between two is then the same slice for both)."""
    if len(us) == 1 or any(len(u.spans) != 1 for u in us):
        return _join(text, us), _merge_spans(text, [s for u in us for s in u.spans])
    out, spans = [us[0].text], [list(us[0].spans[0])]
    end = spans[0][1]
    for u in us[1:]:
        start, stop = u.spans[0]
        if start < end:  # out of source order: the general way
            return _join(text, us), _merge_spans(text, [s for u in us for s in u.spans])
        gap = text[end:start]
        if gap.strip():
            out.append("\n\n")
            spans.append([start, stop])
        else:
            out.append(gap)
            spans[-1][1] = stop  # stop >= start >= end: the joined span ends here
        out.append(u.text)
        end = stop
    return "".join(out), [(a, b) for a, b in spans]


def _join(text: str, us: list[Unit]) -> str:
    """Unit texts, separated by the source's own whitespace when they are adjacent (nothing
    between two pieces cut where no space was, as between sentences of Japanese)."""
    if len(us) == 1:
        return us[0].text
    out = [us[0].text]
    for prev, u in zip(us, us[1:]):
        a, b = prev.spans[-1][1], u.spans[0][0]
        gap = text[a:b] if a <= b else "\n\n"
        out.append(gap if not gap.strip() else "\n\n")
        out.append(u.text)
    return "".join(out)


def _merge_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans, joined where only whitespace separates them."""
    if len(spans) == 1:
        return spans
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and (s <= out[-1][1] or not text[out[-1][1] : s].strip()):
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]
