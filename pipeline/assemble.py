"""Chunk rows from packed groups: text, context header, spans, lines, links and ids.

``embed_text`` is the context header (see ``pipeline.context``), a blank line, then the
chunk's text in its embedding form (``pipeline.embed``: heading lines clean, include lines
left out). The header names the document title and the headings above where the chunk
starts, less the heading the chunk itself starts with (its text already shows it). The
document's first text chunk also carries the chosen front matter fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from mdchunk.pipeline import context, embed
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
    embed_text holds before its text, without the blank line).

    The Rust core joins each group's texts and spans, finds its lines and computes its id
    (``_core.assemble``: units in source order are joined by the source's whitespace between
    them, else by a blank line, and their spans merged where only whitespace separates
    them; the id is the sha256 of the document, chunker version, unit keys, policy, context
    and anchor); the embedding form of each text is then made here."""
    from mdchunk import _core  # here: run_job's parser key needs no extension loaded

    units, groups, sections = packed.units, packed.groups, packed.sections
    row_prefixes, anchors = _prefixes_and_anchors(packed, ctx, limits)
    images = [(units[g.units[0]].alt or "") if g.image else None for g in groups]
    bodies, spans, line_starts, line_ends, ids, laps, firsts, lasts = _core.assemble(
        doc["text"],
        (doc["doc_id"], CHUNKER_VERSION, policy.id_hash),
        (
            [u.key for u in units],
            [u.text for u in units],
            [len(u.spans) for u in units],
            [s for u in units for s in u.spans],
            [u.tokens for u in units],
            [u.block_index for u in units],
        ),
        ([g.units for g in groups], [g.overlap for g in groups], row_prefixes, anchors, images),
    )
    members = [[units[k] for k in g.units] for g in groups]
    embed_texts = [
        _embed_text(prefix, body if g.image else embed.body(body, us, ctx.env))
        for prefix, body, g, us in zip(row_prefixes, bodies, groups, members)
    ]
    embed_hashes = _core.embed_hashes(embed_texts)

    stem = _stem(doc["path"])
    has_headings = any(s.level is not None for s in sections)
    parts = _section_parts(groups)
    rows = []
    for index, g in enumerate(groups):
        us, section, anchor, sp = members[index], sections[g.section], anchors[index], spans[index]
        line_start, line_end = line_starts[index], line_ends[index]
        part, of = parts[id(g)]
        rows.append(
            {
                "chunk_id": ids[index],
                "doc_id": doc["doc_id"],
                "path": doc["path"],
                "title": ctx.title,
                "chunk_index": index,
                "chunk_type": _chunk_type(g, section, packed.strategy, has_headings),
                "name": section.title if section.title is not None else stem,
                "breadcrumb": _first_content(us).heading_path,
                "header_level": section.level,
                "section_title": section.title,
                "anchor": anchor,
                "url": _url(policy, doc["path"], anchor, line_start, line_end),
                "headings": [u.heading_path[-1] for u in us if u.kind == "heading"],
                "text": bodies[index],
                "embed_text": embed_texts[index],
                "embed_hash": embed_hashes[index],
                "image_src": context.image_src(us[0].text, ctx.env) if g.image else None,
                "n_tokens": 0,
                "token_source": "",
                "overlap_tokens": laps[index],
                "block_start": firsts[index],
                "block_end": lasts[index],
                "block_ids": [u.key for u in us],
                "spans": [{"start": s, "end": e} for s, e in sp],
                "char_start": sp[0][0],
                "char_end": sp[-1][1],
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


def _embed_text(prefix: str, kept: str) -> str:
    """The context prefix, a blank line, then the text as embedded (the text alone when
    there is no prefix)."""
    return f"{prefix}\n\n{kept}" if prefix else kept


def _prefixes_and_anchors(
    packed: Packed, ctx: context.DocContext, limits: dict[int, int]
) -> tuple[list[str], list[str | None]]:
    """Per group, its context prefix and the anchor of the heading it starts under (of the
    section of its first unit). Chunks that start on the same path share a prefix."""
    units, groups, sections = packed.units, packed.groups, packed.sections
    first_text = next((id(g) for g in groups if not g.image), None)
    cache: dict[tuple, str] = {}
    prefixes, anchors = [], []
    for g in groups:
        first = units[g.units[0]]
        key = (id(first.heading_path), first.kind, id(g) == first_text, limits.get(g.section))
        prefix = cache.get(key)
        if prefix is None:
            prefix = cache[key] = prefix_of([units[k] for k in g.units], ctx, key[2], key[3])
        prefixes.append(prefix)
        opening = sections[first.section].heading
        anchors.append(ctx.anchors.get(opening) if opening is not None else None)
    return prefixes, anchors


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
