"""The row a store holds for a chunk: ``chunk_id``, ``vector``, ``embed_hash``, ``embedder``,
then the chunk columns chosen (``--columns``; every one of schemas.CHUNKS may be chosen)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from chunkmill.pipeline import schemas

KEYS = ("chunk_id", "vector", "embed_hash", "embedder")
# what a retriever shows and filters on: the text, where it comes from, its section
DEFAULT = (
    "text",
    "embed_text",
    "doc_id",
    "path",
    "title",
    "breadcrumb",
    "section_title",
    "anchor",
    "url",
    "char_start",
    "char_end",
    "line_start",
    "line_end",
    "front_matter",
)


def choose(spec: str | None) -> tuple[str, ...]:
    """``default``, ``all``, or a comma-separated list of chunk columns (``default`` may be
    one of them). ValueError naming a column that is no chunk column."""
    if not spec:
        return DEFAULT
    known = [f.name for f in schemas.CHUNKS if f.name not in KEYS]
    chosen: list[str] = []
    for name in (n.strip() for n in spec.split(",") if n.strip()):
        chosen += DEFAULT if name == "default" else known if name == "all" else [name]
    wrong = [n for n in chosen if n not in known]
    if wrong:
        raise ValueError(f"--columns: {', '.join(wrong)}: no such chunk column (see schemas)")
    return tuple(dict.fromkeys(chosen))


def schema(chosen: tuple[str, ...], dimensions: int) -> pa.Schema:
    vector = pa.list_(pa.float32(), dimensions)
    fields = [
        pa.field("chunk_id", pa.string()),
        pa.field("vector", vector),
        pa.field("embed_hash", pa.string()),
        pa.field("embedder", pa.string()),
    ]
    return pa.schema(fields + [schemas.CHUNKS.field(n) for n in chosen])


def rows(
    chunks: pa.Table, chosen: tuple[str, ...], embedder: str, vectors: pa.Table, dims: int
) -> pa.Table:
    """The store rows of ``chunks``: their vectors taken from ``vectors`` (embed_hash,
    vector) by embed_hash, every one of which it must hold."""
    at = pc.index_in(chunks["embed_hash"], value_set=vectors["embed_hash"])
    if chunks.num_rows and pc.any(pc.is_null(at)).as_py():
        raise AssertionError("a chunk's vector is missing from the cache")
    vector = (
        vectors["vector"].take(at)
        if chunks.num_rows
        else pa.array([], schema((), dims).field("vector").type)
    )
    out = {
        "chunk_id": chunks["chunk_id"],
        "vector": vector,
        "embed_hash": chunks["embed_hash"],
        "embedder": pa.array([embedder] * chunks.num_rows, pa.string()),
    }
    out.update({n: chunks[n] for n in chosen})
    return pa.table(out).cast(schema(chosen, dims))
