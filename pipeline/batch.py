"""The per-batch work, as pure functions over Arrow tables (no I/O).

``process`` takes one batch of documents (raw bytes for new or changed ones, ids for
unchanged ones plus the rows a previous run made of them) and returns every table of that
batch, rows in input order. It runs the documents, blocks, chunks and postings stages, so a
job only has to read inputs, hand batches to ``process`` (in this process or in workers) and
write what comes back. Results depend only on the batch's documents, never on how the
corpus was cut into batches.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from chunkmill.pipeline import arrow_columns, document, schemas
from chunkmill.pipeline.batching import Reused
from chunkmill.pipeline.doc_rows import document_runs, drop_rejected
from chunkmill.pipeline.document import RawDocument, make_doc_id
from chunkmill.pipeline.parse import DEFAULT_BACKEND
from chunkmill.pipeline.policy import Policy
from chunkmill.pipeline.table_names import CONTENT_TABLES

if TYPE_CHECKING:
    from chunkmill.pipeline.chunk import Counting

# The stages (polars, the parsers) are imported by the functions that run them, so that a
# run with nothing to parse or pack (an unchanged nightly run) does not load them.

_BATCH_TABLES = {name: schemas.TABLES[name] for name in CONTENT_TABLES}


@dataclass
class Batch:
    """One batch of documents, in input order, with what a previous run lets us reuse."""

    items: list  # RawDocument (new or changed bytes) or Reused (unchanged bytes)
    reused_docs: pa.Table | None = None
    reused_blocks: pa.Table | None = None
    reused_chunks: pa.Table | None = None  # only when the policy did not change
    reused_postings: pa.Table | None = None  # of reused_chunks, when the terms did not change


def documents_and_blocks(
    raws: list[RawDocument],
    mdx: str,
    bias: str,
    max_bytes: int,
    parser: str = DEFAULT_BACKEND,
    threads: int = 1,
    counts: Counter | None = None,
):
    """The documents and blocks stages over raw documents: (documents, blocks, rejects);
    ``counts`` as ``block.blocks`` counts."""
    docs, rejects = _documents(raws, mdx, max_bytes)
    blks, parse_rejects = _blocks(docs, bias, parser, threads, counts)
    return drop_rejected(docs, parse_rejects), blks, pa.concat_tables([rejects, parse_rejects])


def _documents(raws: list[RawDocument], mdx: str, max_bytes: int):
    """The documents stage: (documents, rejects); empty tables for no documents (a batch
    of reused documents only)."""
    if not raws:
        return schemas.empty(schemas.DOCUMENTS), schemas.empty(schemas.REJECTS)
    return document.documents(raws, mdx, max_bytes)


def _blocks(docs: pa.Table, bias: str, parser: str, threads: int, counts: Counter | None):
    """The blocks stage: (blocks, rejects); ``counts`` as ``block.blocks`` counts."""
    if not docs.num_rows:
        return schemas.empty(schemas.BLOCKS), schemas.empty(schemas.REJECTS)
    from chunkmill.pipeline import block

    return block.blocks(docs, bias, parser, threads, counts)


def ordered(table: pa.Table, order: dict[str, int], index: str | None) -> pa.Table:
    """Rows by document order, then by ``index`` within a document (a stable sort). A table
    already in that order, as a batch of fresh documents makes its tables, is returned as it
    is: no copy of its texts. pyarrow compute alone: the main process of a nightly run
    orders its settled batches, and pa.array or to_numpy would import pandas there."""
    import pyarrow.compute as pc

    n = table.num_rows
    if n == 0:
        return table
    names = arrow_columns.column(sorted(order, key=order.__getitem__), pa.string())
    rank = pc.index_in(table["doc_id"], value_set=names)
    if rank.null_count:
        raise KeyError("a row's doc_id is not in the batch")
    before, after = rank.slice(0, n - 1), rank.slice(1)
    if index is None:
        rising = pc.less_equal(before, after)
    else:
        within = table[index]
        same_doc_rising = pc.and_(
            pc.equal(before, after), pc.less_equal(within.slice(0, n - 1), within.slice(1))
        )
        rising = pc.or_(pc.less(before, after), same_doc_rising)
    if n == 1 or pc.all(rising).as_py():
        return table
    keyed = pa.table({"rank": rank, **({index: table[index]} if index else {})})
    return table.take(
        pc.sort_indices(keyed, sort_keys=[(k, "ascending") for k in keyed.column_names])
    )


_COUNTING: dict[Policy, Counting] = {}  # one tokenizer per policy and process


def counting_of(policy: Policy) -> Counting:
    """The token counts of ``policy``: one tokenizer per policy and process."""
    from chunkmill.pipeline import chunk

    return _COUNTING.get(policy) or _COUNTING.setdefault(policy, chunk.Counting(policy))


STAGE_ORDER = {"documents": 0, "blocks": 1, "chunks": 2, "worker": 3}


def split(batch: Batch) -> list[Batch]:
    """The batch as batches of one document each (to find which one a worker died on)."""
    if len(batch.items) <= 1:
        return [batch]
    return [_single(batch, item) for item in batch.items]


def _single(batch: Batch, item) -> Batch:
    if not isinstance(item, Reused):
        return Batch([item])

    def rows(table: pa.Table | None) -> pa.Table | None:
        import pyarrow.compute as pc

        if table is None:
            return None
        return table.filter(pc.equal(table["doc_id"], item.doc_id))

    chunks = rows(batch.reused_chunks)
    postings = batch.reused_postings
    if postings is not None:
        import pyarrow.compute as pc

        postings = postings.filter(pc.is_in(postings["chunk_id"], chunks["chunk_id"]))
    return Batch([item], rows(batch.reused_docs), rows(batch.reused_blocks), chunks, postings)


def merge(results: list[tuple[dict[str, pa.Table], Counter]]):
    """The results of a batch's single-document batches, as ``process`` of the whole batch
    gives them: rows in document order, rejects by stage then document, each column one
    array (the Parquet writer cuts pages where the arrays of a column meet, so parts left
    apart would make other bytes of the same rows)."""
    tables = {
        name: pa.concat_tables([r[0][name] for r in results]).combine_chunks()
        for name in results[0][0]
    }
    rejects = tables["rejects"]
    if rejects.num_rows:
        rank = [STAGE_ORDER.get(s, 9) for s in rejects["stage"].to_pylist()]
        order = sorted(range(rejects.num_rows), key=lambda i: rank[i])  # stable: doc order
        tables["rejects"] = rejects.take(pa.array(order, pa.int64()))
    counts: Counter = Counter()
    for _, c in results:
        counts.update(c)
    return tables, counts


def failed(batch: Batch, reason: str, detail: str) -> tuple[dict[str, pa.Table], Counter]:
    """The result of a one-document batch whose worker crashed, overran or ran out of
    memory: the document becomes a reject (stage ``worker``) and nothing else."""
    (item,) = batch.items
    if isinstance(item, Reused):
        row = batch.reused_docs.to_pylist()[0]
        path, doc_id, n_bytes = row["path"], item.doc_id, row["n_bytes"]
    else:
        path, doc_id = item.path, make_doc_id(item.path)
        n_bytes = None if item.data is None else len(item.data)
    reject = {
        "path": path,
        "doc_id": doc_id,
        "stage": "worker",
        "reason": reason,
        "detail": detail,
        "n_bytes": n_bytes,
    }
    tables = {name: schemas.empty(schema) for name, schema in _BATCH_TABLES.items()}
    tables["rejects"] = pa.Table.from_pylist([reject], schema=schemas.REJECTS)
    return tables, Counter(items=1, bytes=n_bytes or 0)


def _postings(chunks: pa.Table, packed: pa.Table, stored: pa.Table | None) -> pa.Table:
    """The postings of ``chunks``: made from the chunks packed in this batch, and taken from
    the published run's for the reused ones (``stored``), rows of each chunk in the chunks'
    order. The rows of one chunk depend on its embed_text alone, so both ways give the rows
    that making them all would (a test compares an incremental run's files with a full
    run's, byte for byte)."""
    from chunkmill.pipeline.postings import postings

    if stored is None:
        return postings(chunks)
    both = pa.concat_tables([postings(packed), stored]) if packed.num_rows else stored
    where = document_runs(both["chunk_id"])
    runs = [where[c] for c in chunks["chunk_id"].to_pylist() if c in where]
    return both.take(arrow_columns.ranges(runs))


def warm(policy: Policy) -> None:
    """Make a worker ready: load the tokenizer and start the thread pools on a tiny batch."""
    process(Batch([RawDocument("warm-up.md", "", b"# Warm\n\nup.\n")]), policy, 1 << 20)


def settled(batch: Batch) -> tuple[dict[str, pa.Table], Counter] | None:
    """The result of a batch with nothing to parse or pack, every document reused with its
    chunks and their postings (most batches of a nightly run): the published run's rows as
    ``process`` would give them, without sending them to a worker and back. None for any
    other batch."""
    if batch.reused_chunks is None or not all(isinstance(x, Reused) for x in batch.items):
        return None
    order = {x.doc_id: i for i, x in enumerate(batch.items)}
    blocks, postings = batch.reused_blocks, batch.reused_postings  # None: not written
    tables = {
        "documents": ordered(batch.reused_docs, order, None),
        "blocks": (
            schemas.empty(schemas.BLOCKS)
            if blocks is None
            else ordered(blocks, order, "block_index")
        ),
        "chunks": ordered(batch.reused_chunks, order, "chunk_index"),
        # taken chunk by chunk in the chunks' order
        "postings": schemas.empty(schemas.POSTINGS) if postings is None else postings,
        "rejects": schemas.empty(schemas.REJECTS),
    }
    return tables, Counter(items=len(batch.items))


def process(
    batch: Batch,
    policy: Policy,
    max_bytes: int,
    parser: str = DEFAULT_BACKEND,
    tables: Collection[str] = schemas.OPTIONAL_TABLES,
    threads: int = 1,
) -> tuple[dict[str, pa.Table], Counter]:
    """Every table of one batch (documents, blocks, chunks, postings, rejects), and counters.
    ``parser`` names the block parser backend (pipeline.parse.BACKENDS); ``tables``: the
    optional tables wanted (schemas.OPTIONAL_TABLES; the library calls want none), the
    others are empty. ``threads``: how many threads the Rust core may use for the batch (a
    run's workers use one each; the library calls use every core). A batch of documents to
    parse under the estimate is parsed, estimated and chunked by one core call
    (``chunk.passed``); the seconds of its blocks then count in ``seconds_chunk``.
    Reused documents whose chunks must be made again (a new policy) and whose blocks were
    not stored are parsed again from their stored text, as fresh ones."""
    from chunkmill.pipeline import chunk

    counting = counting_of(policy)
    work: Counter = Counter()
    t0 = time.perf_counter()
    fresh = [x for x in batch.items if isinstance(x, RawDocument)]
    docs, rejects = _documents(fresh, policy.mdx, max_bytes)
    reused_docs = batch.reused_docs
    if reused_docs is not None and batch.reused_blocks is None and batch.reused_chunks is None:
        docs, reused_docs = pa.concat_tables([docs, reused_docs]), None  # parsed again
    one_pass = None
    if reused_docs is None and parser == DEFAULT_BACKEND:  # documents to parse only
        one_pass = chunk.passed(docs, policy, counting, threads, blocks="blocks" in tables)
    if one_pass is None:  # the blocks stage, then the chunks stage
        blks, parse_rejects = _blocks(docs, policy.bias, parser, threads, work)
        docs, rejects = (
            drop_rejected(docs, parse_rejects),
            pa.concat_tables([rejects, parse_rejects]),
        )
    work.update(
        parsed=docs.num_rows, items=len(batch.items), bytes=sum(len(x.data or b"") for x in fresh)
    )
    t1 = time.perf_counter()
    if one_pass is not None:
        packed, chunk_rejects, blks = one_pass
        blks = schemas.empty(schemas.BLOCKS) if blks is None else blks
        work["repacked"] = docs.num_rows
    else:
        if reused_docs is not None:
            docs = pa.concat_tables([docs, reused_docs])
            if batch.reused_blocks is not None:
                blks = pa.concat_tables([blks, batch.reused_blocks])
        to_chunk, to_chunk_blocks = docs, blks
        if batch.reused_chunks is not None:  # only the fresh documents are packed
            import pyarrow.compute as pc

            reused = batch.reused_docs["doc_id"]
            to_chunk = docs.filter(pc.invert(pc.is_in(docs["doc_id"], reused)))
            to_chunk_blocks = blks.filter(pc.is_in(blks["doc_id"], to_chunk["doc_id"]))
        # est_tokens of fresh blocks come from the blocks stage, of reused ones from
        # Previous.blocks, both under policy.bias: the chunks stage need not compute them
        # again
        packed, chunk_rejects = chunk.chunks(
            to_chunk, to_chunk_blocks, policy, counting, estimated=True, threads=threads
        )
        work["repacked"] = to_chunk.num_rows
    chunks = packed
    if batch.reused_chunks is not None:
        chunks = pa.concat_tables([packed, batch.reused_chunks])
    docs, blks = drop_rejected(docs, chunk_rejects), drop_rejected(blks, chunk_rejects)
    order: dict[str, int] = {}  # a document's first item (a later duplicate is a reject)
    for i, x in enumerate(batch.items):
        order.setdefault(x.doc_id if isinstance(x, Reused) else make_doc_id(x.path), i)
    chunks = ordered(chunks, order, "chunk_index")
    made = {
        "documents": ordered(docs, order, None),
        "blocks": (
            ordered(blks, order, "block_index")
            if "blocks" in tables
            else schemas.empty(schemas.BLOCKS)
        ),
        "chunks": chunks,
        "postings": (
            _postings(chunks, packed, batch.reused_postings)
            if "postings" in tables
            else schemas.empty(schemas.POSTINGS)
        ),
        # input order, like the other tables: reused documents are packed after fresh ones
        "rejects": ordered(pa.concat_tables([rejects, chunk_rejects]), order, None),
    }
    work["seconds_parse"] = t1 - t0
    work["seconds_chunk"] = time.perf_counter() - t1
    return made, work
