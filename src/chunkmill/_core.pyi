"""chunkmill._core: the compiled core (rust/py over rust/core). Pure functions over plain
arrays: texts come as str or as buffers of UTF-8 bytes read in place, numbers as lists or
native-endian buffers (int32/int64/uint32, noted below), columns go back as dicts of them.
Every call releases the GIL for its work; a panic in the core is a RuntimeError (or
pyo3's PanicException) naming the call, never a crash of the interpreter.

The product calls the first group; the second serves the tests and benchmarks, which
check the core one block, section or string at a time.
"""

from collections.abc import Callable, Sequence
from typing import Any

Text = str | bytes | bytearray | memoryview  # a text, or a buffer of its UTF-8 bytes
Buffer = bytes | bytearray | memoryview

# --- the stages, as the product calls them ------------------------------------------------

def documents(
    datas: Sequence[Buffer], paths: Sequence[str], markdown: Sequence[bool], max_bytes: int
) -> dict[str, list[Any]]:
    """Per raw document: doc_id, content_hash, reason and detail (a reject) or text_start,
    had_bom, n_chars, n_lines, newline and front_matter (format, body start, body end)."""

def blocks(
    texts: Sequence[Text], is_markdown: Sequence[bool], is_mdx: Sequence[bool], threads: int = 1
) -> dict[str, Any]:
    """Every top-level block of every document, as columns (see rust/py/src/blocks.rs), and
    ``fallback``: the documents left to the reference parser."""

def estimates(
    text: Buffer, offsets: Buffer, code: Buffer, group: Buffer, bias: str
) -> tuple[bytes, bytes]:
    """(n_chars, est_tokens) as int32 buffers for a column of texts (int64 offsets), one
    byte per text for code-like kinds, one uint32 document per text."""

def english_documents(text: Buffer, offsets: Buffer, group: Buffer, n: int) -> bytes:
    """Per document (``n`` of them), 1 when its prose reads as English, else 0."""

def estimate_tokens(
    texts: Sequence[str], bias: str, code: bool = False, english_document: bool | None = None
) -> list[int]:
    """The estimate of each text: ``bias``'s weights for prose, or for code-like kinds with
    ``code``; ``english_document``: whether their document reads as English (None: each
    text judged alone)."""

def count_tokens(name: str, texts: Sequence[str], threads: int = 1) -> list[int]:
    """Exact token counts by the counter ``name`` (cl100k_base, o200k_base: tiktoken's
    ``encode_ordinary``; hf:PATH: the tokenizer's ``encode`` without special tokens; several,
    comma-separated: the most any of their models reads, less ``tokens_added``)."""

def tokens_added(name: str) -> int:
    """The tokens the model of counter ``name`` adds around every input ([CLS] and [SEP]);
    a ValueError saying why ``name`` names no counter."""

def chunk_documents(
    docs: tuple[Any, ...],
    blocks: tuple[Any, ...],
    prepared: tuple[Any, ...],
    policy: tuple[Any, ...],
    tokenizer: tuple[Callable[[list[str]], list[int]], int] | None = None,
    threads: int = 1,
) -> dict[str, Any]:
    """The chunks of a batch, as columns, and its rejects (pipeline/chunk.py builds the
    arguments)."""

def chunk_pass(
    docs: tuple[Any, ...],
    policy: tuple[Any, ...],
    prepare: Callable[[list[str], list[str], bool, list[str]], tuple[list[str], list[str | None]]],
    threads: int = 1,
    columnar: bool = False,
    rows: tuple[list[Any], str, str] | None = None,
    blocks: bool = False,
    encoding: str | None = None,
) -> dict[str, Any]:
    """Decoded documents to their chunks in one call, counted by the estimate or exactly in
    ``encoding`` (as ``count_tokens``): blocks, estimates, counts and languages made in the
    core; ``fallback`` names the documents it leaves to the reference parser
    (pipeline/chunk.py builds the arguments)."""

def heading_markup(texts: Sequence[str]) -> list[str | None]:
    """For each heading block, its inline source when it holds markup to reduce, else None."""

def postings(
    data: Buffer, offsets: Buffer, wide: bool, n: int
) -> tuple[Buffer, Buffer, Buffer, Buffer, Buffer]:
    """The postings columns of ``n`` texts (int64 offsets when ``wide``, else int32)."""

def terms(data: Buffer, offsets: Buffer, wide: bool, n: int) -> tuple[Buffer, Buffer, Buffer]:
    """(term bytes, term offsets, row of each term) of ``n`` texts: the terms of a query."""

def heading_source(block_text: str) -> str: ...
def heading_clean(inline: str) -> tuple[str, str | None, bool]: ...
def slug(text: str) -> str: ...
def slug_keeps(c: str) -> bool: ...
def clip(text: str, limit: int) -> str: ...
def header_line(title: str, path: Sequence[str]) -> str: ...
def link(template: str, path: str, anchor: str | None, line_start: int, line_end: int) -> str: ...
def path_title(path: str) -> str: ...

class HeadingAnchors:
    """The anchors of one document's headings, in document order."""

    def __init__(self) -> None: ...
    def __call__(self, text: str, explicit: str | None) -> str: ...

# --- single pieces, for the tests and benchmarks -------------------------------------------

SPLIT_MAX_GAP: int
KIND_NAMES: list[str]  # the block kinds, in their schema order
CODE_LIKE: list[str]  # the kinds whose estimate uses the code weights
HEADER_SEP: str  # between the elements of a context header
MAX_ELEMENT_CHARS: int  # the longest title or heading a context header keeps whole
TITLE_CHARS: int  # a heading title's length at most
TITLE_SOURCE_CHARS: int  # the longest heading source that is cleaned
MDX_SCAN_BUDGET_PER_CHAR: int  # MDX look-ahead per character of the document
MDX_SCAN_BUDGET_FLOOR: int  # and at least
ENCODINGS: list[str]  # the encodings count_tokens knows by name

def heading_plain_text(inline: str) -> str | None: ...
def headings(
    blocks: Sequence[str], plain: Callable[[list[str]], list[str]]
) -> tuple[list[str], list[str | None], list[str]]: ...
def str_lower(text: str) -> str: ...
def str_casefold(text: str) -> str: ...
def sections(
    heading: Sequence[bool], levels: Sequence[int], depth: int | None
) -> tuple[list[int], list[int | None]]: ...
def fillers(paragraph: Sequence[bool], texts: Sequence[str]) -> list[bool]: ...
def pack(
    units: Any,
    cap: Sequence[int | None],
    target: int,
    min_tokens: int,
    overlap: int,
    parents: Sequence[int | None] | None = None,
    full: bool = False,
) -> tuple[Any, ...]: ...
def split_block(
    kind: str,
    text: str,
    budget: int,
    group_tokens: int,
    counter: Any,
    item_starts: Sequence[int] | None = None,
) -> tuple[list[str], list[int], list[int], list[int]]: ...
def split_chars(text: str, a: int, b: int, budget: int, counter: Any) -> list[tuple[int, int]]: ...
def split_sentences(text: str, s: int, e: int) -> list[tuple[int, int]]: ...
def split_graphemes(text: str, a: int, b: int) -> list[int]: ...
def split_gap(text: str, a: int, b: int, limit: int = ...) -> str: ...
def split_gap_limit(budget: int) -> int: ...
