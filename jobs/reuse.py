"""What a run takes from the published run: whether its blocks and chunks can be reused
(the parser key, the assembly key), their rows for a batch of unchanged documents, and the
parts of it taken whole (hard-linked, never read); whether a run will surely parse or pack,
so that a worker starts before the inputs are listed."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from chunkmill.jobs import pool
from chunkmill.jobs.chunks_job import run_metadata
from chunkmill.jobs.counts import RunCounts
from chunkmill.jobs.options import RunOptions
from chunkmill.pipeline import batch, runstore
from chunkmill.pipeline.batch import Batch
from chunkmill.pipeline.batching import Reused
from chunkmill.pipeline.parse import DEFAULT_BACKEND, parser_key
from chunkmill.pipeline.policy import ASSEMBLY_VERSION, CHUNKER_VERSION, Policy
from chunkmill.pipeline.runstore import manifest, parquet_files
from chunkmill.pipeline.runstore.published_run import Previous
from chunkmill.pipeline.token_estimate import ESTIMATE_VERSION
from chunkmill.pipeline.tokens import HF_COUNT_VERSION, tokenizer_specs

if TYPE_CHECKING:
    from chunkmill.jobs.run_tally import Tally


def parse_key(policy: Policy, parser: str = DEFAULT_BACKEND) -> str:
    """What decides whether stored blocks can be reused: parser version, backend (with its
    version), MDX mode and the estimate version (stored blocks carry their est_tokens)."""
    return f"{parser_key(parser)}|mdx={policy.mdx}|{ESTIMATE_VERSION}"


def assembly_key(policy: Policy) -> str:
    """What decides, beside the policy and the chunker version, whether stored chunks can be
    reused: how chunks are assembled, and for an hf: tokenizer how it counts. A change packs
    the stored blocks again (nothing parsed) and keeps the ids whose boundaries stay."""
    hf = any(s.startswith("hf:") for s in tokenizer_specs(policy.tokenizer))
    return f"{ASSEMBLY_VERSION}|{HF_COUNT_VERSION}" if hf else ASSEMBLY_VERSION


def reusable(manifest: dict | None, policy: Policy, parser_version: str, full: bool):
    """(blocks, chunks): whether a run may reuse the stored blocks of the run whose manifest
    this is (same parser key, no --full), and its chunks too (same policy, chunker and
    assembly)."""
    blocks = manifest is not None and not full and manifest.get("parser_key") == parser_version
    chunks = (
        blocks
        and manifest.get("policy_hash") == policy.policy_hash
        and manifest.get("chunker_version") == CHUNKER_VERSION
        and manifest.get("assembly_key") == assembly_key(policy)
    )
    return blocks, chunks


def will_pack(root: Path, policy: Policy, parser: str, full: bool) -> bool:
    """Whether a run into the folder ``root`` will surely parse or pack, judged from the
    published run's manifest alone (no file of it read or checked): it could reuse none of
    that run's chunks (``reusable``)."""
    found = runstore.current(root, verify=False).manifest
    return not reusable(found, policy, parse_key(policy, parser), full)[1]


def prestart(root: Path, policy: Policy, options: RunOptions) -> None:
    """Start a worker before the inputs are listed when the run will need one (a cold run,
    a re-pack): its start-up overlaps the listing. Never for a run that may have nothing to
    do: an unchanged nightly run starts no worker."""
    try:
        needed = will_pack(root, policy, options.parser, options.full)
    except OSError:  # an unusable output folder: the run itself says what is wrong
        return
    if needed:
        limits = pool.Limits(options.doc_timeout, options.doc_memory)
        pool.prestart(limits, partial(batch.warm, policy))


def prepare(
    items: list, prev: Previous | None, policy: Policy, reuse_chunks: bool, tables=()
) -> Batch:
    """In the main process: the previous run's rows of this batch's unchanged documents,
    those of the optional ``tables`` the run writes included. Stored blocks are read where
    they are written or packed again (a new policy), when the published run has them."""
    reused = [x.doc_id for x in items if isinstance(x, Reused)]
    if not reused:
        return Batch(items)
    chunks = prev.take("chunks", reused) if reuse_chunks else None
    postings = None
    if chunks is not None and "postings" in tables:  # made again from the chunks: the
        # stored postings rows have no doc_id to find a document's rows by, and the same
        # chunks give the same rows
        from chunkmill.pipeline.postings import postings as postings_of

        postings = postings_of(chunks)
    blocks = None
    if ("blocks" in tables or chunks is None) and prev.has("blocks"):
        blocks = prev.blocks(reused, policy.bias)
    docs = _sourced(prev.take("documents", reused), [x for x in items if isinstance(x, Reused)])
    return Batch(items, docs, blocks, chunks, postings)


def _sourced(docs: pa.Table, reused: list[Reused]) -> pa.Table:
    """The published rows of reused documents with ``source`` as this run spells INPUT
    (``./docs/`` or an absolute path for ``docs``), as a run with --full writes it."""
    if docs.num_rows != len(reused) or all(r.source is None for r in reused):
        return docs
    old = docs["source"].to_pylist()
    now = [r.source if r.source is not None else o for r, o in zip(reused, old)]
    if now == old:
        return docs
    at = docs.schema.get_field_index("source")
    return docs.set_column(at, docs.schema.field(at), pa.array(now, docs.schema.field(at).type))


def link_previous(prev: Previous, folder: Path, tables: list[str]) -> dict[str, dict]:
    """Hard-link (else copy) the files of these tables of the previous run (every part of
    a partitioned one), verified against its manifest when it was opened; their manifest
    entries, for the new manifest."""
    known = manifest.entries(prev.manifest)
    tops = {f"{t}.parquet" for t in tables}
    files = {n for n in known if n.split("/")[0] in tops}
    for name in sorted(files):
        (folder / name).parent.mkdir(exist_ok=True)
        if not parquet_files.link_or_copy(prev.folder / name, folder / name):
            known.pop(name, None)  # copied: hashed again
    return {n: e for n, e in known.items() if n in files}


@dataclass
class Linked:
    """A part of the published run taken whole (``index``: its place there): its documents
    (``items``) are all unchanged, the same ones in the same order, and its files are what
    this run would write, so they are linked, never read."""

    index: int
    items: list


LINKED = ({}, {})  # the result of a linked part: nothing for a worker to do


def linker(prev: Previous | None, policy: Policy, reuse_chunks: bool, tables=()):
    """The ``link`` of batching.parted for a run on ``prev`` writing the optional ``tables``,
    or None when no part of it can be linked (its chunks or postings are not reusable, its
    files are not what this run would write)."""
    if prev is None or not reuse_chunks:
        return None
    if "postings" in tables and not prev.postings_reusable:
        return None
    if not prev.linkable(run_metadata(policy)):
        return None
    docs = prev.documents
    sources = dict(zip(docs["doc_id"].to_pylist(), docs["source"].to_pylist()))

    def link(items: list[Reused]) -> Linked | None:
        k = prev.parts.matching([x.doc_id for x in items])
        if k is None or any(x.source not in (None, sources[x.doc_id]) for x in items):
            return None  # other documents, or INPUT spelled otherwise (its ``source``)
        return Linked(k, items)

    return link


def linked_entries(prev: Previous, linked: dict[str, str]) -> dict[str, dict]:
    """The manifest entries of the parts linked (``linked``: name here -> the published
    run's file) from the published run's: a linked file is not hashed again."""
    known = manifest.entries(prev.manifest)
    entries = {}
    for name, src in linked.items():
        entry = known.get(Path(src).relative_to(prev.folder).as_posix())
        if entry is not None:
            entries[name] = {**entry, "name": name}
    return entries


def count_linked(files: dict[str, Path], work: RunCounts) -> int:
    """Count a linked part's rows as ``work.add`` counts a batch's; its chunks."""
    work.documents += pq.read_metadata(files["documents"]).num_rows
    if work.blocks is not None:
        work.blocks += pq.read_metadata(files["blocks"]).num_rows
    chunks = pq.ParquetFile(files["chunks"]).read(columns=["strategy", "n_tokens"])
    work.add({"chunks": chunks})
    return chunks.num_rows


def summaries_of_linked(folder: Path, tally: Tally) -> None:
    """When nothing changed, the summaries come from the linked files."""
    documents = parquet_files.num_rows(folder, "documents")
    rejects = parquet_files.read(folder, "rejects", ["reason"])
    chunks = parquet_files.read(folder, "chunks", ["strategy", "n_tokens"])
    tally.work.documents = documents
    if tally.work.blocks is not None:
        tally.work.blocks = parquet_files.num_rows(folder, "blocks")
    tally.work.add({"chunks": chunks, "rejects": rejects})
