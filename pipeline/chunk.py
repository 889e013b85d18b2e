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

from mdchunk.pipeline import bulk_estimate, context, heading, schemas
from mdchunk.pipeline.assemble import Packed, assemble
from mdchunk.pipeline.block import with_estimates
from mdchunk.pipeline.kinds import CODE_LIKE
from mdchunk.pipeline.pack import SEP, Group, pack
from mdchunk.pipeline.policy import CHUNKER_VERSION, Policy
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
CORE = True  # the estimate's documents are chunked by the Rust core (chunk_documents)
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
    if CORE:
        return _in_core(documents, dict(zip(names, lists)), texts, runs, english, policy, counting)
    rows: list[dict] = []
    rejects: list[dict] = []
    for doc in documents.select(_DOC_COLS).to_pylist():
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


def _in_core(documents, cols, texts, runs, english, policy, counting):
    """The stage by the Rust core (``_core.chunk_documents``), one call for the batch: the
    values that need markdown-it-py (heading texts with markup, image sources) are made
    here first, per block that needs them. A document the core declines (a block to split,
    an open fence) is chunked by ``chunk_document``."""
    from mdchunk import _core

    docs = [d for d in documents.select(_DOC_COLS).to_pylist() if d["doc_id"] in runs]
    text_list = texts.to_pylist()
    kinds = cols["kind"]
    prepared = _prepared(docs, runs, kinds, text_list)
    out = _core.chunk_documents(
        (
            [d["doc_id"] for d in docs],
            [d["path"] for d in docs],
            [d["text"] for d in docs],
            [d["format"] == "text" for d in docs],
            [_front_matter_title(d, policy.title_keys) for d in docs],
            [_fields(d, policy) for d in docs],
            [english[runs[d["doc_id"]][0]] for d in docs],
        ),
        (
            [runs[d["doc_id"]] for d in docs],
            cols["block_index"],
            cols["block_id"],
            kinds,
            cols["level"],
            text_list,
            cols["char_start"],
            cols["char_end"],
            cols["line_start"],
            cols["alt"],
            cols["item_starts"],
            cols["tokens"],
        ),
        prepared,
        (
            (
                policy.strategy,
                policy.front_matter != "include",
                policy.heading_depth,
                policy.pack_siblings,
                policy.breadcrumb_prefix,
                policy.link_template,
                policy.id_hash,
                CHUNKER_VERSION,
                policy.bias,
            ),
            (policy.target_tokens, policy.max_tokens, policy.min_tokens, policy.overlap_tokens),
        ),
        None if counting.estimate else (counting.counter.count, counting.counter.added),
    )
    table = _core_table(out, docs, policy, counting)
    rejects = [
        (d, _reject(docs[d], _Failed(reason, detail))) for d, reason, detail in out["rejects"]
    ]
    if out["declined"]:
        names = list(cols)
        rows: list[dict] = []
        at: list[int] = []
        for d in out["declined"]:
            start, end = runs[docs[d]["doc_id"]]
            own = [cols[c][start:end] for c in names] + [text_list[start:end]]
            part = [dict(zip([*names, "text"], values)) for values in zip(*own)]
            try:
                got = chunk_document(docs[d], part, policy, counting.for_document(english[start]))
            except Exception as exc:  # noqa: BLE001 - a bug on one document must not end the run
                rejects.append((d, _reject(docs[d], exc)))
                continue
            rows.extend(got)
            at += [d] * len(got)
        table = _merged(table, out["doc"], _table(rows, schemas.CHUNKS), at)
    rejects.sort(key=lambda r: r[0])
    return table, _table([r for _, r in rejects], schemas.REJECTS)


_DOC_COLS = ["doc_id", "path", "format", "text", "front_matter", "metadata"]


class _Failed(Exception):
    """A document the core could not chunk: its reject reason and detail."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason


def _prepared(docs, runs, kinds, texts):
    """(rows, plain texts) of heading blocks whose text keeps inline markup, and (rows,
    sources) of image blocks, each with its document's link reference definitions."""
    from mdchunk import _core

    heads = [i for i, k in enumerate(kinds) if k == "heading"]
    marked = _core.heading_markup([texts[i] for i in heads]) if heads else []
    todo = [(i, m) for i, m in zip(heads, marked) if m is not None]
    images = [i for i, k in enumerate(kinds) if k == "image"]
    if not todo and not images:
        return ([], []), ([], [])
    doc_of = {}
    for d in docs:
        start, end = runs[d["doc_id"]]
        for i in range(start, end):
            doc_of[i] = (start, end)
    envs: dict[tuple[int, int], dict] = {}

    def env(i: int) -> dict:
        run = doc_of[i]
        if run not in envs:
            envs[run] = _env(kinds, texts, *run)
        return envs[run]

    plain = ([i for i, _ in todo], [heading._reduced(m, env(i)) for i, m in todo])
    sources = (images, [context.image_src(texts[i], env(i)) for i in images])
    return plain, sources


def _env(kinds, texts, start: int, end: int) -> dict:
    """The link reference definitions of one document, as context.prepare finds them."""
    rows = range(start, end)
    if any("[" in texts[i] for i in rows if kinds[i] == "heading") or any(
        kinds[i] == "image" for i in rows
    ):
        return heading.references(
            [texts[i] for i in rows if kinds[i] == "paragraph" and "]:" in texts[i]]
        )
    return {}


def _front_matter_title(doc: dict, keys) -> str | None:
    """The title the document's front matter gives (context.title_of's first rule)."""
    if not doc.get("front_matter"):
        return None
    return context.title_of(doc, None, keys) if _has_title(doc, keys) else None


def _has_title(doc: dict, keys) -> bool:
    fm = dict(doc["front_matter"])
    return any(context._scalar(fm.get(k)) for k in keys)


def _fields(doc: dict, policy: Policy) -> list[str]:
    if policy.breadcrumb_prefix and policy.front_matter != "include":
        return context.field_lines(doc, policy.context_keys)
    return []


def _core_table(out: dict, docs: list[dict], policy: Policy, counting: Counting) -> pa.Table:
    """The CHUNKS table of the core's columns."""
    doc = out["doc"]
    fm = [front_matter_column(d, policy) for d in docs]
    n = len(doc)

    def listed(name: str) -> pa.Array:
        offsets = pa.array(out[f"{name}_at"], pa.int32())
        return pa.ListArray.from_arrays(offsets, pa.array(out[name], pa.string()))

    spans = pa.ListArray.from_arrays(
        pa.array(out["spans_at"], pa.int32()),
        pa.StructArray.from_arrays(
            [pa.array(out["span_start"], pa.int64()), pa.array(out["span_end"], pa.int64())],
            fields=list(schemas.SPAN),
        ),
    )
    columns = {
        "chunk_id": out["chunk_id"],
        "doc_id": [docs[d]["doc_id"] for d in doc],
        "path": [docs[d]["path"] for d in doc],
        "title": out["title"],
        "chunk_index": out["chunk_index"],
        "chunk_type": out["chunk_type"],
        "name": out["name"],
        "breadcrumb": listed("breadcrumb"),
        "header_level": out["header_level"],
        "section_title": out["section_title"],
        "anchor": out["anchor"],
        "url": out["url"],
        "headings": listed("headings"),
        "text": out["text"],
        "embed_text": out["embed_text"],
        "embed_hash": out["embed_hash"],
        "image_src": out["image_src"],
        "n_tokens": out["n_tokens"],
        "token_source": [counting.counter.name] * n,
        "overlap_tokens": out["overlap_tokens"],
        "block_start": out["block_start"],
        "block_end": out["block_end"],
        "block_ids": listed("block_ids"),
        "spans": spans,
        "char_start": [out["span_start"][out["spans_at"][i]] for i in range(n)],
        "char_end": [out["span_end"][out["spans_at"][i + 1] - 1] for i in range(n)],
        "line_start": out["line_start"],
        "line_end": out["line_end"],
        "is_split": [p > 1 for p in out["parts"]],
        "part": out["part"],
        "parts": out["parts"],
        "strategy": out["strategy"],
        "front_matter": [fm[d] for d in doc],
        "chunker_version": [CHUNKER_VERSION] * n,
        "policy_hash": [policy.policy_hash] * n,
    }
    arrays = [
        c if isinstance(c, pa.Array) else pa.array(c, f.type)
        for f, c in zip(schemas.CHUNKS, columns.values())
    ]
    return pa.Table.from_arrays(arrays, schema=schemas.CHUNKS)


def _merged(core: pa.Table, core_docs: list[int], more: pa.Table, more_docs: list[int]):
    """Two tables of chunks in document order (each holds whole documents, in order)."""
    keys = core_docs + more_docs
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return pa.concat_tables([core, more]).take(pa.array(order, pa.int64()))


def _table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    """``Table.from_pylist(rows, schema)``, built a column at a time (faster)."""
    columns = [pa.array([r[f.name] for r in rows], f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _reject(doc: dict, exc: Exception) -> dict:
    over = isinstance(exc, OverCapError)
    detail = str(exc) if over else f"{type(exc).__name__}: {exc} (a bug in mdchunk)"
    if isinstance(exc, _Failed):
        over, detail = exc.reason == "over_cap", str(exc)
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
