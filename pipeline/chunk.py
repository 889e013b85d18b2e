"""The chunks stage: blocks (+ their documents) -> chunks, under one policy.

Per document: pick the strategy, cut blocks into sections and units, pack units into groups
(``pipeline.pack``), then assemble each group's text, spans, breadcrumb and id. With a real
tokenizer every final ``embed_text`` is counted again; a section with a chunk over the cap
is packed again with a tighter budget, so the cap holds exactly.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable

import polars as pl
import pyarrow as pa

from mdchunk.pipeline import bulk_estimate, context, schemas
from mdchunk.pipeline.assemble import Packed, assemble
from mdchunk.pipeline.block import with_estimates
from mdchunk.pipeline.kinds import CODE_LIKE
from mdchunk.pipeline.pack import SEP, Group, pack
from mdchunk.pipeline.policy import Policy
from mdchunk.pipeline.section import pack_arrays, parents, sections_of, units_of
from mdchunk.pipeline.tokens import (
    EstimateCounter,
    TokenCounter,
    input_tokens,
    make_counter,
)

_BLOCK_COLS = [
    "doc_id",
    "block_index",
    "block_id",
    "kind",
    "level",
    "text",
    "char_start",
    "char_end",
    "line_start",
    "alt",
    "item_starts",
    "est_tokens",
]
MAX_REPACKS = 16
FLOOR = 8  # tokens: the smallest budget a repack squeezes a unit to


class Counting:
    """Token counts for one policy: the vectorised estimate, or a real tokenizer."""

    def __init__(self, policy: Policy, counter: TokenCounter | None = None):
        self.policy = policy
        self.counter = counter or make_counter(policy.tokenizer, policy.bias)
        self.estimate = isinstance(self.counter, EstimateCounter)
        self._code = EstimateCounter(policy.bias, "code")
        self._by_language: dict[bool | None, Counting] = {}

    def for_document(self, english: bool | None) -> Counting:
        """The counts of one document's own texts (pieces, headers, embed_text): with the
        estimate, they follow the document's language as its blocks did (tokens.py)."""
        if not self.estimate:
            return self
        if english not in self._by_language:  # two at most, each keeping its memo
            same = copy.copy(self)
            same.counter = EstimateCounter(self.policy.bias, "prose", english)
            self._by_language[english] = same
        return self._by_language[english]

    def block_tokens(self, blocks: pl.DataFrame) -> pl.Series:
        """Tokens of every block, counted now (``_block_tokens`` reads the blocks'
        est_tokens instead when they were made under this policy's bias)."""
        if self.estimate:
            return with_estimates(blocks, self.policy.bias)["est_tokens"]
        return pl.Series(self.counter.count(blocks["text"].to_list()))

    def for_kind(self, kind: str) -> Callable[[list[str]], list[int]]:
        if self.estimate and kind in CODE_LIKE:
            return self._code.count
        return self.counter.count


def chunks(
    documents: pa.Table,
    blocks: pa.Table,
    policy: Policy,
    counting: Counting | None = None,
    estimated: bool = False,
) -> tuple[pa.Table, pa.Table]:
    """The stage: (documents, blocks) -> (chunks, rejects). ``estimated``: the blocks'
    est_tokens were made under ``policy.bias`` (see _block_tokens).

    Column work is done once per batch (tokens, Python lists of the small columns); per
    document only its blocks' dicts are made, from those lists and a slice of the text."""
    if not documents.num_rows:  # a batch of reused documents only: nothing to pack
        return schemas.empty(schemas.CHUNKS), schemas.empty(schemas.REJECTS)
    counting = counting or Counting(policy)
    table = _grouped(blocks.select(_BLOCK_COLS))
    tokens = _block_tokens(table, counting, estimated)
    english = _english_documents(table, counting)
    names = [c for c in _BLOCK_COLS if c not in ("text", "est_tokens")]
    lists = [table[c].to_pylist() for c in names] + [tokens]
    names += ["tokens", "text"]
    texts = table["text"]
    runs = _runs(lists[0])
    rows: list[dict] = []
    rejects: list[dict] = []
    cols = ["doc_id", "path", "format", "text", "front_matter", "metadata"]
    for doc in documents.select(cols).to_pylist():
        where = runs.get(doc["doc_id"])
        if where is None:
            continue
        start, end = where
        own = [column[start:end] for column in lists]
        own.append(texts.slice(start, end - start).to_pylist())
        part = [dict(zip(names, values)) for values in zip(*own)]
        try:
            counts = counting.for_document(english[start])
            rows.extend(chunk_document(doc, part, policy, counts))
        except Exception as exc:  # noqa: BLE001 - a bug on one document must not end the run
            rejects.append(_reject(doc, exc))
    return _table(rows, schemas.CHUNKS), _table(rejects, schemas.REJECTS)


def _table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    """``Table.from_pylist(rows, schema)``, built a column at a time (faster)."""
    columns = [pa.array([r[f.name] for r in rows], f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _reject(doc: dict, exc: Exception) -> dict:
    over = isinstance(exc, OverCapError)
    detail = str(exc) if over else f"{type(exc).__name__}: {exc} (a bug in mdchunk)"
    return {
        "path": doc["path"],
        "doc_id": doc["doc_id"],
        "stage": "chunks",
        "reason": "over_cap" if over else "internal_error",
        "detail": detail,
        "n_bytes": None,
    }


def _grouped(blocks: pa.Table) -> pa.Table:
    """The blocks with each document's rows next to each other, in first-seen order (they
    already are, as every stage writes them; otherwise a stable reorder)."""
    ids = blocks["doc_id"].to_pylist()
    first: dict[str, int] = {}
    for i, d in enumerate(ids):
        first.setdefault(d, i)
    if all(ids[i] == ids[i - 1] or first[ids[i]] == i for i in range(1, len(ids))):
        return blocks
    order = sorted(range(len(ids)), key=lambda i: first[ids[i]])
    return blocks.take(pa.array(order, pa.int64()))


def _runs(doc_ids: list[str]) -> dict[str, tuple[int, int]]:
    """doc_id -> (first row, end row) of its run of rows (the rows are grouped)."""
    out: dict[str, tuple[int, int]] = {}
    start = 0
    for i in range(1, len(doc_ids) + 1):
        if i == len(doc_ids) or doc_ids[i] != doc_ids[start]:
            out[doc_ids[start]] = (start, i)
            start = i
    return out


def _block_tokens(blocks: pa.Table, counting: Counting, estimated: bool) -> list[int]:
    """Tokens of every block of the batch, as Python ints. ``estimated``: the blocks'
    est_tokens were computed under this policy's bias (the blocks stage's, or a stored one
    redone), so the estimate reads them instead of computing them again."""
    if counting.estimate and estimated:
        return blocks["est_tokens"].to_pylist()
    frame = pl.from_arrow(blocks.select(["doc_id", "text", "kind", "est_tokens"]))
    return counting.block_tokens(frame).cast(pl.Int64).to_list()


def _english_documents(blocks: pa.Table, counting: Counting) -> list[bool | None]:
    """Per block, whether its document reads as English (None with a real tokenizer)."""
    if not counting.estimate:
        return [None] * blocks.num_rows
    return bulk_estimate.english_documents(blocks["text"], blocks["doc_id"])


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
    if not blocks:
        return []
    blocks, ctx = context.prepare(doc, blocks, policy)
    doc = {**doc, "front_matter": front_matter_column(doc, policy)}
    if strategy == "fixed":
        blocks = _whole_body(doc, blocks, counting)
    depth = policy.heading_depth if strategy == "markdown" else None
    numbers, sections = sections_of(blocks, depth)
    cap, limits = _header_room(blocks, numbers, ctx, policy, counting)
    siblings = parents(sections) if policy.pack_siblings and strategy == "markdown" else None
    text_kind = {"recursive": "text", "fixed": "fixed"}.get(strategy)
    # With a real tokenizer the sum of unit counts can under-count the joined text: pack the
    # sections whose chunks came out over the cap again, tighter. Other sections are untouched,
    # so their chunk ids do not depend on this. After half the attempts the squeeze doubles,
    # down to units of FLOOR tokens, which fit beside any context header (clipped to a share
    # of the cap): a document is not rejected for its size.
    shrink = dict.fromkeys(cap, 0)
    for attempt in range(MAX_REPACKS):
        tight = {s: max(c - shrink[s], FLOOR) for s, c in cap.items()}
        target, low, lap = policy.target_tokens, policy.min_tokens, policy.overlap_tokens
        units = units_of(blocks, numbers, tight, target, counting.for_kind, text_kind, low)
        groups = pack(pack_arrays(units), tight, target, low, lap, siblings)
        packed = Packed(units, groups, sections, strategy)
        rows, prefixes = assemble(doc, blocks, packed, ctx, policy, limits)
        _count(rows, prefixes, groups, counting)
        over: dict[int, int] = {}
        for row, g in zip(rows, groups):
            if row["n_tokens"] > policy.max_tokens:
                over[g.section] = max(over.get(g.section, 0), row["n_tokens"] - policy.max_tokens)
        if not over:
            return rows
        for sec, excess in over.items():
            shrink[sec] += max(excess, policy.max_tokens // 20)
            if attempt >= MAX_REPACKS // 2:
                shrink[sec] *= 2
    raise OverCapError(
        f"could not fit every chunk within {policy.max_tokens} tokens after {MAX_REPACKS} "
        f"attempts (largest over by {max(over.values())})"
    )


def front_matter_column(doc: dict, policy: Policy) -> list | None:
    """What a chunk's ``front_matter`` holds: a table row's other columns (its
    ``metadata``), then the document's own front matter keys (with the default
    ``front_matter: metadata``), which win over a column of the same name. The metadata
    does not reach ``embed_text`` (titles and context keys come from the front matter)."""
    own = doc["front_matter"] if policy.front_matter == "metadata" else None
    meta = doc.get("metadata")
    if not meta:
        return own
    return list({**dict(meta), **dict(own or [])}.items())


def _header_room(
    blocks: list[dict], numbers: list[int], ctx: context.DocContext, policy: Policy, counting
) -> tuple[dict[int, int], dict[int, int]]:
    """Per section, the cap left for text once its longest context header is in; and, for
    a header that alone would take over a quarter of max_tokens, a character limit."""
    longest: dict[int, str] = {}
    seen: set[tuple[int, int]] = set()
    for b, sec in zip(blocks, numbers):
        if (id(b["heading_path"]), sec) in seen:  # blocks under one heading share the path
            continue
        seen.add((id(b["heading_path"]), sec))
        line = context.header_line(ctx.title, b["heading_path"]) if ctx.on else ""
        fields = ctx.fields if sec == numbers[0] else []
        head = "\n".join(x for x in [line, *fields] if x)
        if len(head) >= len(longest.get(sec, "")):
            longest[sec] = head
    secs = sorted(longest)
    heads = [longest[s] for s in secs]
    counts = counting.counter.count(heads) if any(heads) else [0] * len(secs)
    budget = max(policy.max_tokens // 4, 1)
    limits: dict[int, int] = {}
    for i, sec in enumerate(secs):
        while counts[i] > budget:
            limits[sec] = max(int(len(heads[i]) * budget / counts[i]) - 2, 0)
            heads[i] = context.clip(heads[i], limits[sec])
            counts[i] = counting.counter.count([heads[i]])[0]
    room = policy.max_tokens - counting.counter.added  # what the model adds to every chunk
    cap = {s: room - (n + SEP if h else 0) for s, h, n in zip(secs, heads, counts)}
    return cap, limits


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


def _count(rows: list[dict], prefixes: list[str], groups: list[Group], counting: Counting):
    """n_tokens of every embed_text: exact with a real tokenizer, sums for the estimate: the
    units' tokens (the text as written, never less than its embedding form), the context
    prefix and the blank line after it (an image chunk's body is its alt text, not its
    block: the alt is counted)."""
    if counting.estimate:
        extra = counting.counter.count([f"{p}\n\n" if p else "" for p in prefixes])
        for r, g, p, e in zip(rows, groups, prefixes, extra):
            body = counting.counter.count([r["text"]])[0] if g.image else g.tokens
            r["n_tokens"] = body + (e + SEP if p else 0)
    else:
        counted = input_tokens(counting.counter, [r["embed_text"] for r in rows])
        for r, n in zip(rows, counted):
            r["n_tokens"] = n
    for r in rows:
        r["token_source"] = counting.counter.name
