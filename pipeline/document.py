"""The documents stage: raw bytes -> typed document rows, or reject rows with a reason.

Decisions (also in docs/design.md):
- Text is decoded as UTF-8; a leading BOM is removed and recorded in ``had_bom``.
- Line endings are kept exactly as they are (CRLF stays CRLF) so that every offset is an
  index into ``documents.text`` and ``text[char_start:char_end]`` is the exact source.
  ``newline`` records which convention the file uses.
- ``doc_id`` is derived from the path relative to the input root (it survives edits);
  ``content_hash`` is the sha256 of the raw bytes (it changes with every edit), and of a
  table row's other columns (its ``metadata``), so that a row whose metadata changes is a
  changed document.
- A NUL byte means binary; invalid UTF-8 is rejected with the byte offset of the error.
"""

from __future__ import annotations

import hashlib
from array import array
from dataclasses import dataclass, field
from itertools import accumulate

import pyarrow as pa

from chunkmill.pipeline import schemas
from chunkmill.pipeline.doc_limits import DEFAULT_MAX_BYTES

MARKDOWN_SUFFIXES = frozenset({".md", ".mdx", ".markdown"})
TEXT_SUFFIXES = frozenset({".txt"})
BOM = "\ufeff"


@dataclass(frozen=True)
class RawDocument:
    """What a reader hands to the documents stage: a path and its bytes (or why none)."""

    path: str  # relative to the input root, POSIX separators
    source: str  # the input root or table it came from
    data: bytes | None
    error: str | None = None  # set when the bytes could not be read: why, for people
    metadata: dict[str, str] = field(default_factory=dict)
    reason: str | None = None  # the reject code when data is None (default: unreadable)
    n_bytes: int | None = None  # the size, when known without the bytes (too_large)


def doc_format(path: str) -> str | None:
    """``markdown``, ``text``, or None for a file type we do not read."""
    path = path.rstrip("/")  # PurePosixPath(path).suffix, without building the object
    name = path[path.rfind("/") + 1 :]
    dot = name.rfind(".")
    suffix = name[dot:].lower() if 0 < dot < len(name) - 1 else ""
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in TEXT_SUFFIXES:
        return "text"
    return None


def content_hash(data: bytes, metadata: dict[str, str] | None = None) -> str:
    """sha256 of a document's bytes; with a table row's metadata, of both (a file has none:
    its hash is the hash of its bytes)."""
    digest = hashlib.sha256(data)
    if metadata:
        digest.update(b"\x00metadata\x00")
        for key, value in sorted(metadata.items()):
            digest.update(f"{key}\x00{value}\x00".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def make_doc_id(path: str) -> str:
    return hashlib.sha256(b"doc\x00" + path.encode("utf-8")).hexdigest()[:16]


def decode(raw: RawDocument, mdx: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES):
    """Return ``("document", row)`` or ``("reject", row)`` for one raw document (its row of
    the DOCUMENTS or REJECTS table, as ``to_pylist`` gives it, ``text`` a str): the stage
    for one document, without building tables."""
    out = _checked([raw], max_bytes)
    if raw.data is None or out["reason"][0] is not None:
        (row,) = _reject_rows([raw], out)
        return "reject", dict(zip(_REJECT_FIELDS, row))
    text = memoryview(raw.data)[out["text_start"][0] :]
    columns = _columns([raw], [doc_format(raw.path) or "markdown"], out, [0], [text], mdx)
    columns["text"] = [str(text, "utf-8")]
    row = {name: values[0] for name, values in columns.items()}
    return "document", row


def documents(
    raws, mdx: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[pa.Table, pa.Table]:
    """The stage: raw documents -> (documents table, rejects table), in input order. The
    Rust core checks and counts the bytes (``_core.documents``), its columns become the
    table's; front matter found there is parsed here. The text column is made of the raw
    bytes (valid UTF-8, a BOM left out), not of decoded strings."""
    readable = [r for r in raws if r.data is not None]
    out = _checked(readable, max_bytes)
    kept = [i for i, reason in enumerate(out["reason"]) if reason is None]
    texts = [memoryview(readable[i].data)[out["text_start"][i] :] for i in kept]
    formats = [doc_format(r.path) or "markdown" for r in readable]
    columns = _columns(readable, formats, out, kept, texts, mdx)
    columns["text"] = _utf8_column(texts)
    arrays = [
        c if isinstance(c, pa.Array) else pa.array(c, f.type)
        for f, c in zip(schemas.DOCUMENTS, (columns[f.name] for f in schemas.DOCUMENTS))
    ]
    documents = pa.Table.from_arrays(arrays, schema=schemas.DOCUMENTS)
    rows = _reject_rows(raws, out)
    rejects = pa.table(
        {f.name: pa.array([r[k] for r in rows], f.type) for k, f in enumerate(schemas.REJECTS)},
        schema=schemas.REJECTS,
    )
    return documents, rejects


def _checked(raws, max_bytes: int = DEFAULT_MAX_BYTES) -> dict:
    """The Rust core's checks and counts of the documents with bytes among ``raws``."""
    from chunkmill import _core

    readable = [r for r in raws if r.data is not None]
    return _core.documents(
        [r.data for r in readable],
        [r.path for r in readable],
        [(doc_format(r.path) or "markdown") == "markdown" for r in readable],
        max_bytes,
    )


def _columns(readable, formats, out, kept, texts, mdx: str) -> dict[str, list]:
    """The DOCUMENTS columns of the ``kept`` documents among ``readable`` as Python values
    (``text`` left to the caller)."""
    raws = [readable[i] for i in kept]
    fm = [_front_matter(out["front_matter"][i], t) for i, t in zip(kept, texts)]
    return {
        "doc_id": [out["doc_id"][i] for i in kept],
        "path": [r.path for r in raws],
        "source": [r.source for r in raws],
        "format": [formats[i] for i in kept],
        "mdx": [_is_mdx(formats[i], readable[i].path, mdx) for i in kept],
        "content_hash": [
            content_hash(r.data, r.metadata) if r.metadata else out["content_hash"][i]
            for r, i in zip(raws, kept)
        ],
        "n_bytes": [len(r.data) for r in raws],
        "n_chars": [out["n_chars"][i] for i in kept],
        "n_lines": [out["n_lines"][i] for i in kept],
        "newline": [out["newline"][i] for i in kept],
        "had_bom": [out["had_bom"][i] for i in kept],
        "text": None,
        "front_matter": [None if data is None else list(data.items()) for _, data, _ in fm],
        "front_matter_format": [kind for kind, _, _ in fm],
        "front_matter_error": [error for _, _, error in fm],
        "metadata": [list(r.metadata.items()) or None for r in raws],
    }


def _is_mdx(fmt: str, path: str, mdx: str) -> bool:
    return fmt == "markdown" and (mdx == "on" or (mdx == "auto" and path.lower().endswith(".mdx")))


def _front_matter(found, text: memoryview) -> tuple:
    """(format, stored keys or None, error) of the front matter the core found, or three
    Nones."""
    if found is None:
        return None, None, None
    from chunkmill.pipeline import frontmatter  # here: no YAML without front matter

    kind, start, end = found
    data, error = frontmatter.parsed(kind, str(text[start:end], "utf-8"))
    return kind, data, error


_REJECT_FIELDS = [f.name for f in schemas.REJECTS]


def _reject_rows(raws, out: dict) -> list[tuple]:
    """The rejects of the stage in input order, as tuples of the REJECTS columns: unread
    documents, then what the core refused, each where its document was."""
    rows, at = [], 0
    for raw in raws:
        if raw.data is None:
            reason, detail = raw.reason or "unreadable", raw.error or "could not be read"
            rows.append((raw.path, make_doc_id(raw.path), "documents", reason, detail,
                         raw.n_bytes))  # fmt: skip
            continue
        i, at = at, at + 1
        if out["reason"][i] is not None:
            rows.append((raw.path, out["doc_id"][i], "documents", out["reason"][i],
                         out["detail"][i], len(raw.data)))  # fmt: skip
    return rows


def _utf8_column(texts: list[memoryview]) -> pa.Array:
    """A large_string array of UTF-8 texts; one text is not copied."""
    data = texts[0] if len(texts) == 1 else b"".join(texts)
    offsets = array("q", [0, *accumulate(len(t) for t in texts)])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.large_string(), len(texts), buffers)
