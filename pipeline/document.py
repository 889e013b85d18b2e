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


def _endings(text: str) -> tuple[int, int, int]:
    """(CRLF, lone CR, lone LF) line endings of ``text``."""
    if "\r" not in text:  # the common case: one scan
        return 0, 0, text.count("\n")
    crlf = text.count("\r\n")
    return crlf, text.count("\r") - crlf, text.count("\n") - crlf


def newline_style(text: str, endings: tuple[int, int, int] | None = None) -> str:
    crlf, cr, lf = endings or _endings(text)
    kinds = [name for name, n in (("crlf", crlf), ("cr", cr), ("lf", lf)) if n]
    if not kinds:
        return "none"
    return kinds[0] if len(kinds) == 1 else "mixed"


def line_breaks(text: str) -> int:
    """Line endings in ``text``: LF, CRLF and lone CR each count once (as CommonMark says)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def count_lines(text: str, endings: tuple[int, int, int] | None = None) -> int:
    if not text:
        return 0
    breaks = sum(endings or _endings(text))
    return breaks + (0 if text.endswith(("\n", "\r")) else 1)


def decode(raw: RawDocument, mdx: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES):
    """Return ``("document", row)`` or ``("reject", row)`` for one raw document."""
    doc_id = make_doc_id(raw.path)
    size = raw.n_bytes if raw.data is None else len(raw.data)

    def reject(reason: str, detail: str) -> tuple[str, dict]:
        return "reject", {
            "path": raw.path,
            "doc_id": doc_id,
            "stage": "documents",
            "reason": reason,
            "detail": detail,
            "n_bytes": size,
        }

    if raw.data is None:
        return reject(raw.reason or "unreadable", raw.error or "could not be read")
    if size > max_bytes:
        return reject("too_large", f"{size} bytes is over the limit of {max_bytes} bytes")
    if raw.data[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):  # UTF-32's mark
        return reject("invalid_utf8", "UTF-32 text (byte order mark at byte 0): save it as UTF-8")
    if raw.data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # a UTF-16 byte order mark
        return reject("invalid_utf8", "UTF-16 text (byte order mark at byte 0): save it as UTF-8")
    nul = raw.data.find(b"\x00")
    if nul >= 0:
        return reject("binary", f"NUL byte at byte offset {nul}: looks like a binary file")
    try:
        text = raw.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return reject("invalid_utf8", f"not valid UTF-8 at byte offset {exc.start}: {exc.reason}")
    had_bom = text.startswith(BOM)
    if had_bom:
        text = text[1:]
    fmt = doc_format(raw.path) or "markdown"
    is_mdx = fmt == "markdown" and (
        mdx == "on" or (mdx == "auto" and raw.path.lower().endswith(".mdx"))
    )
    from chunkmill.pipeline import frontmatter  # here: a run that decodes nothing needs no YAML

    fm = frontmatter.detect(text) if fmt == "markdown" else None
    endings = _endings(text)
    return "document", {
        "doc_id": doc_id,
        "path": raw.path,
        "source": raw.source,
        "format": fmt,
        "mdx": is_mdx,
        "content_hash": content_hash(raw.data, raw.metadata),
        "n_bytes": size,
        "n_chars": len(text),
        "n_lines": count_lines(text, endings),
        "newline": newline_style(text, endings),
        "had_bom": had_bom,
        "text": text,
        "front_matter": None if fm is None or fm.data is None else list(fm.data.items()),
        "front_matter_format": None if fm is None else fm.format,
        "front_matter_error": None if fm is None else fm.error,
        "metadata": list(raw.metadata.items()) or None,
    }


def documents(
    raws, mdx: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[pa.Table, pa.Table]:
    """The stage: raw documents -> (documents table, rejects table). The text column is
    made of the raw bytes (valid UTF-8 once decoded, a BOM left out), not of the decoded
    strings: the string of a document lives only while it is decoded."""
    docs: list[dict] = []
    texts: list[memoryview] = []
    rejects: list[dict] = []
    for raw in raws:
        kind, row = decode(raw, mdx, max_bytes)
        if kind == "document":
            row["text"] = None
            texts.append(memoryview(raw.data)[len(BOM.encode()) if row["had_bom"] else 0 :])
        (docs if kind == "document" else rejects).append(row)
    table = to_table(docs, schemas.DOCUMENTS)
    i = table.schema.get_field_index("text")
    table = table.set_column(i, table.schema.field(i), _utf8_column(texts))
    return table, to_table(rejects, schemas.REJECTS)


def _utf8_column(texts: list[memoryview]) -> pa.Array:
    """A large_string array of UTF-8 texts; one text is not copied."""
    data = texts[0] if len(texts) == 1 else b"".join(texts)
    offsets = array("q", [0, *accumulate(len(t) for t in texts)])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.large_string(), len(texts), buffers)


def to_table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)
