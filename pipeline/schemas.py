"""Arrow schemas of every table chunkmill writes. Declared once; writers cast to them.

Offsets convention (all tables): ``char_start``/``char_end`` are 0-based, end-exclusive
indices into ``documents.text`` counted in Unicode code points (Python ``str`` indices);
``line_start``/``line_end`` are 1-based and inclusive, as an editor shows them.
"""

from __future__ import annotations

import pyarrow as pa

from chunkmill.pipeline.table_names import (  # noqa: F401 - one import for the tables
    CONTENT_TABLES,
    OPTIONAL_TABLES,
    PARTITIONED,
    content_tables,
    partitioned,
)

STR_MAP = pa.map_(pa.string(), pa.string())
SPAN = pa.struct([("start", pa.int64()), ("end", pa.int64())])

# Per table, the columns that repeat a few values (kinds, labels, a document's id and path
# on each of its chunks, a chunk's id on each of its terms): written with a dictionary.
# Every other column is written plain (parquet_files.table_options).
_CHUNK_LABELS = {"doc_id", "path", "title", "chunk_type", "section_title", "token_source",
                 "strategy", "chunker_version", "policy_hash"}  # fmt: skip
REPEATED = {
    "documents": {"source", "format", "newline", "front_matter_format"},
    "blocks": {"doc_id", "kind", "lang"},
    "chunks": _CHUNK_LABELS,
    "changes": _CHUNK_LABELS | {"op"},
    "postings": {"term", "chunk_id"},
    "rejects": {"stage", "reason"},
}

DOCUMENTS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("path", pa.string()),
        ("source", pa.string()),
        ("format", pa.string()),  # markdown | text
        ("mdx", pa.bool_()),
        ("content_hash", pa.string()),  # sha256 of the raw bytes
        ("n_bytes", pa.int64()),
        ("n_chars", pa.int64()),
        ("n_lines", pa.int32()),
        ("newline", pa.string()),  # lf | crlf | cr | mixed | none
        ("had_bom", pa.bool_()),
        ("text", pa.large_string()),
        ("front_matter", STR_MAP),
        ("front_matter_format", pa.string()),  # yaml | toml | null
        ("front_matter_error", pa.string()),
        ("metadata", STR_MAP),
    ]
)

REJECTS = pa.schema(
    [
        ("path", pa.string()),
        ("doc_id", pa.string()),
        ("stage", pa.string()),  # documents | blocks | chunks
        ("reason", pa.string()),  # short code: invalid_utf8, binary, unreadable, ...
        ("detail", pa.string()),  # human-readable explanation
        ("n_bytes", pa.int64()),
    ]
)

BLOCKS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("block_index", pa.int32()),
        ("block_id", pa.string()),
        ("kind", pa.string()),  # one of chunkmill._core.KIND_NAMES
        ("level", pa.int8()),  # heading level, null otherwise
        ("heading_path", pa.list_(pa.string())),
        ("heading_levels", pa.list_(pa.int8())),
        ("text", pa.large_string()),  # exact source slice text[char_start:char_end]
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("line_start", pa.int32()),
        ("line_end", pa.int32()),
        ("info", pa.string()),  # code fence info string
        ("lang", pa.string()),  # first word of info
        ("alt", pa.string()),  # image alt text
        ("item_starts", pa.list_(pa.int32())),  # list items / table rows: offsets into text
        ("n_rows", pa.int32()),  # table body rows
        ("n_chars", pa.int32()),
        ("est_tokens", pa.int32()),
    ]
)

CHUNKS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("path", pa.string()),
        ("title", pa.string()),  # the document title (front matter, first H1 or file stem)
        ("chunk_index", pa.int32()),
        ("chunk_type", pa.string()),  # section | preamble | image | text
        ("name", pa.string()),
        ("breadcrumb", pa.list_(pa.string())),
        ("header_level", pa.int8()),
        ("section_title", pa.string()),
        ("anchor", pa.string()),  # explicit heading id, else GitHub's slug of section_title
        ("url", pa.string()),  # from the policy's link_template, null without one
        ("headings", pa.list_(pa.string())),
        ("text", pa.large_string()),
        ("embed_text", pa.large_string()),
        ("embed_hash", pa.string()),  # sha256 of embed_text, 32 hex: equal texts, equal hash
        ("image_src", pa.string()),  # image chunks: the image's source URL
        ("n_tokens", pa.int32()),
        ("token_source", pa.string()),  # estimate | tiktoken:NAME | hf:PATH
        ("overlap_tokens", pa.int32()),
        ("block_start", pa.int32()),
        ("block_end", pa.int32()),
        ("block_ids", pa.list_(pa.string())),
        ("spans", pa.list_(SPAN)),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("is_slice", pa.bool_()),  # text == the document's characters [char_start, char_end)
        ("line_start", pa.int32()),
        ("line_end", pa.int32()),
        ("is_split", pa.bool_()),
        ("part", pa.int32()),
        ("parts", pa.int32()),
        ("strategy", pa.string()),  # markdown | sentence | recursive | fixed
        ("front_matter", STR_MAP),
        ("chunker_version", pa.string()),
        ("policy_hash", pa.string()),
    ]
)

# Files as the Ray engine reads them, before decoding (jobs/ray_job.py).
RAW_DOCUMENTS = pa.schema(
    [
        ("seq", pa.int64()),  # position in the input order
        ("uri", pa.string()),  # where to read the bytes (when data is null)
        ("path", pa.string()),  # relative to the input root: the doc_id comes from it
        ("source", pa.string()),
        ("data", pa.large_binary()),
        ("error", pa.string()),  # why the bytes could not be read
        ("reason", pa.string()),  # the reject code when data is null (unreadable, ...)
        ("n_bytes", pa.int64()),  # the size when known without the bytes
    ]
)

# Keyword index for BM25 search in plain SQL: one row per (term, chunk).
POSTINGS = pa.schema(
    [
        ("term", pa.string()),
        ("chunk_id", pa.string()),
        ("tf", pa.int32()),  # occurrences of term in the chunk's embed_text
        ("doc_len", pa.int32()),  # terms in the chunk's embed_text
    ]
)

# What an embedding job reads, relative to the previously published run: chunk ids to
# embed (op add, with the whole chunk row), chunk ids to delete (op remove), and kept ids
# whose embed_text (so their vector) is the same but another column is not (op update, with
# the whole new row: line numbers after an edit above, a url, front matter, n_tokens).
CHANGES = pa.schema([("op", pa.string()), *CHUNKS])

RUNS = pa.schema(
    [
        ("run_id", pa.string()),
        ("status", pa.string()),  # published | failed | refused | abandoned
        ("started_at", pa.timestamp("ms", tz="UTC")),
        ("ended_at", pa.timestamp("ms", tz="UTC")),
        ("inputs", pa.list_(pa.string())),
        ("full", pa.bool_()),
        ("policy", pa.string()),  # canonical JSON
        ("policy_hash", pa.string()),
        ("chunker_version", pa.string()),
        ("parser_version", pa.string()),
        ("previous_run", pa.string()),
        ("documents_added", pa.int64()),
        ("documents_changed", pa.int64()),
        ("documents_unchanged", pa.int64()),
        ("documents_deleted", pa.int64()),
        ("documents_parsed", pa.int64()),  # parse work done (0 when everything was reused)
        ("documents_repacked", pa.int64()),
        ("rejects", pa.int64()),
        ("chunks_added", pa.int64()),
        ("chunks_removed", pa.int64()),
        ("chunks_updated", pa.int64()),  # kept ids whose other columns changed (op update)
        ("chunks_kept", pa.int64()),
        ("chunks_total", pa.int64()),
        ("seconds", pa.map_(pa.string(), pa.float64())),  # per stage
        ("error", pa.string()),
    ]
)

# The ledger of an output folder (pipeline/runstore/ledger.py): the publications each chunk id was
# part of, as numbered stretches [added, removed).
LEDGER = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("path", pa.string()),
        ("added", pa.int64()),  # the publication that first held it
        ("removed", pa.int64()),  # the first publication without it; null while held
        # publications at which its row changed while its id stayed (op update); null: none
        ("updated", pa.list_(pa.int64())),
    ]
)

# How each input file looked when a run read it (pipeline/runstore/stamps.py): the next run reuses a
# file whose stamp is unchanged without reading it. Run state, like runs and changes.
INPUTS = pa.schema(
    [
        ("uri", pa.string()),  # the file's absolute path
        ("doc_id", pa.string()),
        ("size", pa.int64()),
        ("mtime_ns", pa.int64()),
        ("ctime_ns", pa.int64()),
        ("inode", pa.uint64()),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "documents": DOCUMENTS,
    "blocks": BLOCKS,
    "rejects": REJECTS,
    "chunks": CHUNKS,
    "postings": POSTINGS,
    "changes": CHANGES,
    "runs": RUNS,
    "inputs": INPUTS,
}


def from_columns(columns: dict[str, list], schema: pa.Schema) -> pa.Table:
    """Build a table from Python column lists, typed by the declared schema."""
    return pa.table({f.name: pa.array(columns[f.name], type=f.type) for f in schema}, schema=schema)


def empty(schema: pa.Schema) -> pa.Table:
    """A table of no rows. Not ``schema.empty_table()``: that one imports pandas (about half
    a second of a run's start-up), ``from_batches`` asks nothing."""
    return pa.Table.from_batches([], schema)
