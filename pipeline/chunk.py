"""The chunks stage: blocks (+ their documents) -> chunks, under one policy.

The Rust core chunks a batch in one call (``_core.chunk_documents``, rust/core/src/chunk):
per document it picks the strategy, cuts blocks into sections and units (splitting blocks
over their budget), packs units into groups, then assembles each group's text, spans,
breadcrumb and id. With a real tokenizer every final ``embed_text`` is counted again; a
section with a chunk over the cap is packed again with a tighter budget, so the cap holds
exactly. Here: the batch's columns in, the values that need markdown-it-py (heading texts
with markup, image sources), and the CHUNKS and REJECTS tables out.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from chunkmill.pipeline import block, bulk_estimate, context, core_columns, heading, schemas
from chunkmill.pipeline.arrow_columns import (
    one_array,
    utf8_views,
)
from chunkmill.pipeline.block import with_estimates
from chunkmill.pipeline.policy import CHUNKER_VERSION, Policy
from chunkmill.pipeline.tokens import EstimateCounter, TokenCounter, make_counter

if TYPE_CHECKING:  # polars is imported where it is used, not by a worker's default path
    import polars as pl

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


class Counting:
    """Token counts for one policy: the vectorised estimate, or a real tokenizer."""

    def __init__(self, policy: Policy, counter: TokenCounter | None = None):
        self.policy = policy
        self.counter = counter or make_counter(policy.tokenizer, policy.bias)
        self.estimate = isinstance(self.counter, EstimateCounter)
        # the encoding the core counts exactly by itself (tokens.CORE_ENCODINGS), or None
        self.encoding: str | None = getattr(self.counter, "encoding", None)
        # whether the core counts without calling back into Python (the one pass applies)
        self.native = self.estimate or self.encoding is not None

    def block_tokens(self, blocks: pl.DataFrame) -> pl.Series:
        """Tokens of every block, counted now (``_block_tokens`` reads the blocks'
        est_tokens instead when they were made under this policy's bias)."""
        import polars as pl

        if self.estimate:
            return with_estimates(blocks, self.policy.bias)["est_tokens"]
        return pl.Series(self.counter.count(blocks["text"].to_list()))


def chunks(
    documents: pa.Table,
    blocks: pa.Table,
    policy: Policy,
    counting: Counting | None = None,
    estimated: bool = False,
    threads: int = 1,
) -> tuple[pa.Table, pa.Table]:
    """The stage: (documents, blocks) -> (chunks, rejects). ``estimated``: the blocks'
    est_tokens were made under ``policy.bias`` (see _block_tokens). ``threads``: how many
    threads the core may chunk the documents on (counts the core makes itself: a tokenizer
    it calls back runs under the interpreter's lock); the chunks are the same for any
    number.

    Column work is done once per batch (tokens, Python lists of the short block columns;
    the texts go to the core as Arrow buffers, read in place), and the core chunks every
    document of the batch in one call."""
    if not documents.num_rows:  # a batch of reused documents only: nothing to pack
        return schemas.empty(schemas.CHUNKS), schemas.empty(schemas.REJECTS)
    counting = counting or Counting(policy)
    table, runs = _grouped(blocks.select(_BLOCK_COLS))
    tokens = _block_tokens(table, counting, estimated)
    english = _english_documents(table, counting)
    cols = {c: table[c] for c in _BLOCK_COLS if c != "est_tokens"}
    cols["tokens"] = tokens
    buffers = core_columns.block_buffers(cols)
    rows = documents.select(_DOC_COLS).to_pylist()
    keep = [i for i, d in enumerate(rows) if d["doc_id"] in runs]
    docs = [rows[i] for i in keep]
    english = [english[runs[d["doc_id"]][0]] for d in docs]
    texts = utf8_views(documents["text"], keep)
    kinds, block_text = cols["kind"].to_pylist(), one_array(cols["text"])
    blocks = (kinds, block_text, buffers)
    out = _in_core(docs, texts, english, blocks, runs, policy, counting, threads, columnar=True)
    table = _chunks_table(out, docs, policy, counting)
    rejects = [_reject(docs[d], reason, detail) for d, reason, detail in out["rejects"]]
    return table, _table(rejects, schemas.REJECTS)


def passed(
    documents: pa.Table, policy: Policy, counting: Counting, threads: int = 1, blocks=False
) -> tuple[pa.Table, pa.Table, pa.Table | None] | None:
    """The stage from the documents alone, their blocks made and read in the core by one
    call (``_pass``): (chunks, rejects, and with ``blocks`` the blocks table), the same as
    the blocks stage then ``chunks``. None where that does not apply (a real tokenizer; a
    document the core leaves to the reference parser, or the call failing): the stages
    then run one after the other."""
    if not counting.native:
        return None
    if not documents.num_rows:
        empty = schemas.empty(schemas.BLOCKS) if blocks else None
        return schemas.empty(schemas.CHUNKS), schemas.empty(schemas.REJECTS), empty
    docs = documents.select(_DOC_COLS).to_pylist()
    texts = utf8_views(documents["text"])
    try:
        out = _pass(docs, texts, policy, counting, threads, columnar=True, blocks=blocks)
    except block.NOT_OURS:
        raise
    except BaseException:  # the stages one by one find the document to blame
        return None
    if out["fallback"]:
        return None
    rejects = [_reject(docs[d], reason, detail) for d, reason, detail in out["rejects"]]
    table = _chunks_table(out, docs, policy, counting)
    ids = [d["doc_id"] for d in docs]
    blks = block.estimated_table(out["blocks"], ids) if blocks else None
    return table, _table(rejects, schemas.REJECTS), blks


def document_rows(
    doc: dict, text: bytes, policy: Policy, counting: Counting
) -> tuple[list[tuple], list[tuple[str, str]]] | None:
    """One decoded document (its documents-stage row and UTF-8 text) -> its chunk rows, as
    tuples of the CHUNKS columns (what ``to_pylist`` gives, lists as tuples), and its
    (reason, detail) rejects: ``chunks`` for a batch of one, without a table (the path of
    ``chunk_text``). None where that path does not apply (a real tokenizer; a document
    the core leaves to the reference parser): the batch stages then chunk it."""
    if not counting.native:
        return None
    fm = front_matter_column(doc, policy)
    rows = ([None if fm is None else dict(fm)], counting.counter.name, policy.policy_hash)
    try:
        out = _pass([doc], [text], policy, counting, rows=rows)
    except block.NOT_OURS:
        raise
    except BaseException:  # the batch stages decide (a reject, or the reference parser)
        return None
    if out["fallback"]:
        return None
    return out["rows"], [(r, d) for _, r, d in out["rejects"]]


def _pass(docs: list[dict], texts: list, policy: Policy, counting: Counting, threads=1,
          columnar=False, rows=None, blocks=False):  # fmt: skip
    """Decoded ``docs`` (documents-stage rows) with their UTF-8 ``texts`` -> the core's chunk
    columns (as ``_in_core`` gives them; with ``rows``, one tuple per chunk) and
    ``fallback``, the documents the core leaves to the reference parser, by one call
    (``_core.chunk_pass``): blocks, estimates, token counts and each document's language
    stay in the core, and come out only with ``blocks`` (the blocks stage's columns). A
    ``counting`` the core does itself (``native``)."""
    from chunkmill import _core

    return _core.chunk_pass(
        (
            [d["doc_id"] for d in docs],
            [d["path"] for d in docs],
            texts,
            [d["format"] == "text" for d in docs],
            [d["format"] == "markdown" for d in docs],
            [bool(d["mdx"]) for d in docs],
            [_front_matter_title(d, policy.title_keys) for d in docs],
            [_fields(d, policy) for d in docs],
        ),
        _policy_tuple(policy),
        document_values,
        threads,
        columnar,
        rows,
        blocks,
        counting.encoding,
    )


def _in_core(docs, texts, english, blocks, runs, policy, counting, threads=1, columnar=False):
    """The stage by the Rust core (``_core.chunk_documents``), one call for the batch's
    ``docs`` (with their UTF-8 ``texts`` and whether each reads as ``english``) and
    ``blocks``: (kinds, texts, ``core_columns.block_buffers``), each block's kind and text
    being what the values that need markdown-it-py (heading texts with markup, image
    sources) are made of, here first, per block that needs them. A tokenizer the core does not count
    itself (not ``native``) has its ``count`` called back. The core's columns out: Python
    lists, or Arrow buffers with ``columnar``."""
    from chunkmill import _core

    kinds, block_text, buffers = blocks
    prepared = _prepared(docs, runs, kinds, block_text)
    return _core.chunk_documents(
        (
            [d["doc_id"] for d in docs],
            [d["path"] for d in docs],
            texts,
            [d["format"] == "text" for d in docs],
            [_front_matter_title(d, policy.title_keys) for d in docs],
            [_fields(d, policy) for d in docs],
            english,
        ),
        ([runs[d["doc_id"]] for d in docs], *buffers),
        prepared,
        _policy_tuple(policy),
        None if counting.native else (counting.counter.count, counting.counter.added),
        threads,
        columnar,
        counting.encoding,
    )


def _policy_tuple(policy: Policy) -> tuple:
    """The policy as the core's calls take it (rust/py/src/chunk/inputs.rs, PolicyTuple)."""
    return (
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
    )


_DOC_COLS = ["doc_id", "path", "format", "mdx", "front_matter", "metadata"]


def _picked(texts: pa.Array, rows: list[int]) -> list[str]:
    """The texts of ``rows`` as Python strings (only these rows)."""
    return [str(view, "utf-8") for view in utf8_views(texts, rows)] if rows else []


def _prepared(docs, runs, kinds, texts: pa.Array):
    """(rows, plain texts) of heading blocks whose text keeps inline markup, and (rows,
    sources) of image blocks, each made by ``document_values`` for its document."""
    from chunkmill import _core

    heads = [i for i, k in enumerate(kinds) if k == "heading"]
    head_texts = _picked(texts, heads)
    marked = _core.heading_markup(head_texts) if heads else []
    todo = [(i, m) for i, m in zip(heads, marked) if m is not None]
    images = [i for i, k in enumerate(kinds) if k == "image"]
    plain: tuple[list, list] = ([], [])
    sources: tuple[list, list] = ([], [])
    if not todo and not images:
        return plain, sources
    # the texts read below: headings, images, and paragraphs that may define references
    defining = pc.indices_nonzero(pc.match_substring(texts, "]:")).to_pylist()
    defining = [i for i in defining if kinds[i] == "paragraph"]
    text_of = dict(zip(heads, head_texts))
    text_of.update(zip(images, _picked(texts, images)))
    text_of.update(zip(defining, _picked(texts, defining)))
    todo_rows = [i for i, _ in todo]

    def within(rows: list[int], start: int, end: int) -> slice:
        return slice(bisect_left(rows, start), bisect_left(rows, end))

    for start, end in sorted({runs[d["doc_id"]] for d in docs}):
        mine, pictures = todo[within(todo_rows, start, end)], images[within(images, start, end)]
        if not mine and not pictures:
            continue
        bracket = any("[" in text_of[i] for i in heads[within(heads, start, end)])
        defs = [text_of[i] for i in defining[within(defining, start, end)]]
        texts_, srcs = document_values(
            [m for _, m in mine], [text_of[i] for i in pictures], bracket, defs
        )
        plain[0].extend(i for i, _ in mine)
        plain[1].extend(texts_)
        sources[0].extend(pictures)
        sources[1].extend(srcs)
    return plain, sources


def document_values(marked: list[str], images: list[str], bracket: bool, defining: list[str]):
    """The values of one document made with markdown-it-py: (the reduced texts of its
    headings whose cleaned sources ``marked`` keep inline markup, the sources of its image
    blocks ``images``), with the link reference definitions of its paragraphs ``defining``
    where a heading has a ``[`` (``bracket``) or an image may use them."""
    env = heading.references(defining) if bracket or images else {}
    return [heading._reduced(m, env) for m in marked], [context.image_src(t, env) for t in images]


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


def _chunks_table(out: dict, docs: list[dict], policy: Policy, counting: Counting) -> pa.Table:
    front_matter = [front_matter_column(d, policy) for d in docs]
    return core_columns.chunks_table(out, docs, front_matter, counting.counter.name, policy)


def _table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    """``Table.from_pylist(rows, schema)``, built a column at a time (faster)."""
    columns = [pa.array([r[f.name] for r in rows], f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _reject(doc: dict, reason: str, detail: str) -> dict:
    return {
        "path": doc["path"],
        "doc_id": doc["doc_id"],
        "stage": "chunks",
        "reason": reason,
        "detail": detail,
        "n_bytes": None,
    }


def _grouped(blocks: pa.Table) -> tuple[pa.Table, dict[str, tuple[int, int]]]:
    """The blocks with each document's rows next to each other, in first-seen order (they
    already are, as every stage writes them; otherwise a stable reorder), and doc_id ->
    (first row, end row) of each document's run."""
    from chunkmill.pipeline.doc_rows import document_runs

    try:
        where = document_runs(blocks["doc_id"])
    except ValueError:  # a document's rows apart
        ids = blocks["doc_id"].to_pylist()
        first: dict[str, int] = {}
        for i, d in enumerate(ids):
            first.setdefault(d, i)
        order = sorted(range(len(ids)), key=lambda i: first[ids[i]])
        blocks = blocks.take(pa.array(order, pa.int64()))
        where = document_runs(blocks["doc_id"])
    return blocks, {d: (start, start + n) for d, (start, n) in where.items()}


def _block_tokens(blocks: pa.Table, counting: Counting, estimated: bool):
    """Tokens of every block of the batch: a column, or Python ints when counted now.
    ``estimated``: the blocks' est_tokens were computed under this policy's bias (the blocks
    stage's, or a stored one redone), so the estimate reads them instead of computing them
    again."""
    if counting.estimate and estimated:
        return blocks["est_tokens"]
    import polars as pl

    frame = pl.from_arrow(blocks.select(["doc_id", "text", "kind", "est_tokens"]))
    return counting.block_tokens(frame).cast(pl.Int64).to_list()


def _english_documents(blocks: pa.Table, counting: Counting) -> list[bool | None]:
    """Per block, whether its document reads as English (None with a real tokenizer)."""
    if not counting.estimate:
        return [None] * blocks.num_rows
    return bulk_estimate.english_documents(blocks["text"], blocks["doc_id"])


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
