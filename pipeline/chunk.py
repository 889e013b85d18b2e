"""The chunks stage: blocks (+ their documents) -> chunks, under one policy.

Per document: pick the strategy, cut blocks into sections and units, pack units into groups
(``pipeline.pack``), then assemble each group's text, spans, breadcrumb and id. With a real
tokenizer every final ``embed_text`` is counted again; a section with a chunk over the cap
is packed again with a tighter budget, so the cap holds exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import PurePosixPath

import polars as pl
import pyarrow as pa

from mdchunk.pipeline import schemas
from mdchunk.pipeline.block import with_estimates
from mdchunk.pipeline.document import line_breaks
from mdchunk.pipeline.kinds import CODE_LIKE
from mdchunk.pipeline.pack import SEP, Group, pack
from mdchunk.pipeline.policy import CHUNKER_VERSION, Policy
from mdchunk.pipeline.section import (
    Section,
    Unit,
    breadcrumb_line,
    caps,
    pack_arrays,
    sections_of,
    units_of,
)
from mdchunk.pipeline.tokens import EstimateCounter, TokenCounter, make_counter

_BLOCK_COLS = [
    "doc_id",
    "block_index",
    "block_id",
    "kind",
    "level",
    "heading_path",
    "text",
    "char_start",
    "char_end",
    "line_start",
    "alt",
    "item_starts",
    "est_tokens",
]
MAX_REPACKS = 6


class Counting:
    """Token counts for one policy: the vectorised estimate, or a real tokenizer."""

    def __init__(self, policy: Policy, counter: TokenCounter | None = None):
        self.policy = policy
        self.counter = counter or make_counter(policy.tokenizer, policy.bias)
        self.estimate = isinstance(self.counter, EstimateCounter)
        self._code = EstimateCounter(policy.bias, "code")

    def block_tokens(self, blocks: pl.DataFrame) -> list[int]:
        if self.estimate:
            return with_estimates(blocks, self.policy.bias)["est_tokens"].to_list()
        return self.counter.count(blocks["text"].to_list())

    def for_kind(self, kind: str) -> Callable[[list[str]], list[int]]:
        if self.estimate and kind in CODE_LIKE:
            return self._code.count
        return self.counter.count


def chunks(
    documents: pa.Table, blocks: pa.Table, policy: Policy, counting: Counting | None = None
) -> tuple[pa.Table, pa.Table]:
    """The stage: (documents, blocks) -> (chunks, rejects)."""
    counting = counting or Counting(policy)
    frame = pl.from_arrow(blocks.select(_BLOCK_COLS))
    frame = frame.with_columns(pl.Series("tokens", counting.block_tokens(frame), dtype=pl.Int64))
    by_doc = {
        k[0]: v for k, v in frame.partition_by("doc_id", as_dict=True, maintain_order=True).items()
    }
    rows: list[dict] = []
    rejects: list[dict] = []
    cols = ["doc_id", "path", "format", "text", "front_matter"]
    for doc in documents.select(cols).to_pylist():
        part = by_doc.get(doc["doc_id"])
        if part is None:
            continue
        try:
            rows.extend(chunk_document(doc, part.to_dicts(), policy, counting))
        except OverCapError as exc:
            rejects.append(
                {
                    "path": doc["path"],
                    "doc_id": doc["doc_id"],
                    "stage": "chunks",
                    "reason": "over_cap",
                    "detail": str(exc),
                    "n_bytes": None,
                }
            )
    return (
        pa.Table.from_pylist(rows, schema=schemas.CHUNKS),
        pa.Table.from_pylist(rejects, schema=schemas.REJECTS),
    )


class OverCapError(Exception):
    pass


def pick_strategy(doc: dict, blocks: list[dict], policy: Policy) -> str:
    if policy.strategy != "auto":
        return policy.strategy
    if doc["format"] == "text":
        return "recursive"
    return "markdown" if any(b["kind"] == "heading" for b in blocks) else "sentence"


def chunk_document(doc: dict, blocks: list[dict], policy: Policy, counting: Counting) -> list[dict]:
    strategy = pick_strategy(doc, blocks, policy)
    if policy.front_matter != "include":
        blocks = [b for b in blocks if b["kind"] != "front_matter"]
    if strategy == "fixed":
        blocks = _whole_body(doc, blocks, counting)
    if not blocks:
        return []
    depth = policy.heading_depth if strategy == "markdown" else None
    numbers, sections = sections_of(blocks, depth)
    cap = caps(blocks, numbers, policy.max_tokens, policy.breadcrumb_prefix, counting.counter.count)
    text_kind = {"recursive": "text", "fixed": "fixed"}.get(strategy)
    # With a real tokenizer the sum of unit counts can under-count the joined text: pack the
    # sections whose chunks came out over the cap again, tighter. Other sections are untouched,
    # so their chunk ids do not depend on this.
    shrink = dict.fromkeys(cap, 0)
    for _ in range(MAX_REPACKS):
        tight = {s: max(c - shrink[s], 8) for s, c in cap.items()}
        target = policy.target_tokens
        units = units_of(
            blocks, numbers, tight, target, counting.for_kind, text_kind, policy.min_tokens
        )
        groups = pack(pack_arrays(units), tight, target, policy.min_tokens, policy.overlap_tokens)
        rows = assemble(doc, blocks, units, groups, sections, policy, strategy)
        _count(rows, groups, counting)
        over: dict[int, int] = {}
        for row, g in zip(rows, groups):
            if row["n_tokens"] > policy.max_tokens:
                over[g.section] = max(over.get(g.section, 0), row["n_tokens"] - policy.max_tokens)
        if not over:
            return rows
        for sec, excess in over.items():
            shrink[sec] += max(excess, policy.max_tokens // 20)
    raise OverCapError(
        f"could not fit every chunk within {policy.max_tokens} tokens after {MAX_REPACKS} "
        f"attempts (largest over by {max(over.values())})"
    )


def _whole_body(doc: dict, blocks: list[dict], counting: Counting) -> list[dict]:
    """The fixed strategy ignores structure: one pseudo-block from the first to the last."""
    start, end = blocks[0]["char_start"], blocks[-1]["char_end"]
    body = doc["text"][start:end]
    key = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return [
        {
            "block_index": 0,
            "block_id": f"fixed-{key}",
            "kind": "paragraph",
            "level": None,
            "heading_path": [],
            "text": body,
            "char_start": start,
            "char_end": end,
            "line_start": blocks[0]["line_start"],
            "alt": None,
            "item_starts": None,
            "tokens": counting.counter.count([body])[0],
        }
    ]


def _count(rows: list[dict], groups: list[Group], counting: Counting) -> None:
    """n_tokens of every embed_text: exact with a real tokenizer, sums for the estimate."""
    if counting.estimate:
        prefixes = [r["embed_text"][: len(r["embed_text"]) - len(r["text"])] for r in rows]
        extra = counting.counter.count(prefixes)
        for r, g, p, e in zip(rows, groups, prefixes, extra):
            r["n_tokens"] = 0 if g.image else g.tokens + (e + SEP if p else 0)
    else:
        counted = counting.counter.count([r["embed_text"] for r in rows])
        for r, g, n in zip(rows, groups, counted):
            r["n_tokens"] = 0 if g.image else n
    for r in rows:
        r["token_source"] = counting.counter.name


def assemble(
    doc: dict,
    blocks: list[dict],
    units: list[Unit],
    groups: list[Group],
    sections: list[Section],
    policy: Policy,
    strategy: str,
) -> list[dict]:
    text = doc["text"]
    first_line = {b["block_index"]: (b["char_start"], b["line_start"]) for b in blocks}

    def line_of(offset: int, unit: Unit) -> int:
        """1-based line of ``offset``, counted from the start of the unit's block."""
        start, line = first_line[unit.block_index]
        return line + line_breaks(text[start:offset])

    stem = PurePosixPath(doc["path"]).stem
    has_headings = any(s.level is not None for s in sections)
    parts = _section_parts(groups)
    rows = []
    for index, g in enumerate(groups):
        us = [units[k] for k in g.units]
        section = sections[g.section]
        body = _join(text, us) if not g.image else (us[0].alt or "")
        spans = _merge_spans(text, [s for u in us for s in u.spans])
        content = [u for u in us if u.kind != "heading"]
        breadcrumb = (content[0] if content else us[-1]).heading_path
        prefixed = (
            policy.breadcrumb_prefix
            and not g.image
            and bool(breadcrumb)
            and us[0].kind != "heading"
        )
        part, of = parts[id(g)]
        keys = [u.key for u in us]
        rows.append(
            {
                "chunk_id": chunk_id(doc["doc_id"], keys, policy.policy_hash),
                "doc_id": doc["doc_id"],
                "path": doc["path"],
                "chunk_index": index,
                "chunk_type": _chunk_type(g, section, strategy, has_headings),
                "name": section.title if section.title is not None else stem,
                "breadcrumb": breadcrumb,
                "header_level": section.level,
                "section_title": section.title,
                "headings": [u.heading_path[-1] for u in us if u.kind == "heading"],
                "text": body,
                "embed_text": f"{breadcrumb_line(breadcrumb)}\n\n{body}" if prefixed else body,
                "n_tokens": 0,
                "token_source": "",
                "overlap_tokens": sum(units[k].tokens for k in g.units[: g.overlap]),
                "block_start": min(u.block_index for u in us),
                "block_end": max(u.block_index for u in us),
                "block_ids": keys,
                "spans": [{"start": s, "end": e} for s, e in spans],
                "char_start": spans[0][0],
                "char_end": spans[-1][1],
                "line_start": line_of(spans[0][0], us[0]),
                "line_end": line_of(max(spans[-1][1] - 1, spans[-1][0]), us[-1]),
                "is_split": of > 1,
                "part": part,
                "parts": of,
                "strategy": strategy,
                "front_matter": doc["front_matter"] if policy.front_matter == "metadata" else None,
                "chunker_version": CHUNKER_VERSION,
                "policy_hash": policy.policy_hash,
            }
        )
    return rows


def chunk_id(doc_id: str, keys: list[str], policy_hash: str) -> str:
    payload = "\x1f".join([doc_id, CHUNKER_VERSION, *keys, policy_hash])
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


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


def _join(text: str, us: list[Unit]) -> str:
    """Unit texts, separated by the source's own whitespace when they are adjacent (nothing
    between two pieces cut where no space was, as between sentences of Japanese)."""
    out = [us[0].text]
    for prev, u in zip(us, us[1:]):
        a, b = prev.spans[-1][1], u.spans[0][0]
        gap = text[a:b] if a <= b else "\n\n"
        out.append(gap if not gap.strip() else "\n\n")
        out.append(u.text)
    return "".join(out)


def _merge_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans, joined where only whitespace separates them."""
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and (s <= out[-1][1] or not text[out[-1][1] : s].strip()):
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]
