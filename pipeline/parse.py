"""The markdown parser: one document's text -> its top-level blocks (kind, level, spans).

It knows nothing about tokens or chunks. A CommonMark + GFM tables backend finds the
top-level blocks of each markdown line range: pyromark (pulldown-cmark, compiled; the
default) or markdown-it-py (pure Python; the reference, and the oracle of the tests). Both
give the same blocks (tests/test_backends.py diffs them). This module cuts front matter
and MDX segments first, fills any text no block covers (link reference definitions, for
instance) with paragraph blocks so that nothing is lost, and trims trailing blank lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import import_module
from itertools import accumulate

from mdchunk.pipeline import fence, mdx

# Bumped whenever the blocks of the same document may change (documents too: front matter).
PARSER_VERSION = "blocks-1"

# Block parser backends: name -> (module with ``parse_lines``, distribution whose version
# keys block reuse). The first is the default.
BACKENDS = {
    "pyromark": ("mdchunk.pipeline.parse_pyromark", "pyromark"),
    "markdown-it": ("mdchunk.pipeline.parse_markdown_it", "markdown-it-py"),
}
DEFAULT_BACKEND = "pyromark"
REFERENCE_BACKEND = "markdown-it"

EOL = fence.LINE_END  # the one definition of a line end
# Heading titles: read from at most TITLE_SOURCE_CHARS of the heading's inline source (inline
# parsing is quadratic on some inputs, 200,000 '<' say) and shortened to TITLE_CHARS.
TITLE_SOURCE_CHARS = 2_000
TITLE_CHARS = 200
_EOL_BYTES = re.compile(rb"\r\n|\r|\n")


@dataclass(slots=True)
class Block:
    kind: str
    first: int  # first line, 0-based
    last: int  # last line, 0-based inclusive
    level: int | None = None
    title: str | None = None  # plain heading text
    info: str | None = None
    alt: str | None = None
    items: list[int] | None = None  # lists: the first line of each top-level item
    n_rows: int | None = None


@dataclass(frozen=True, slots=True)
class Lines:
    """Line table of a text: start offset and content end offset of every line."""

    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, text: str) -> Lines:
        return cls(*_line_table(text, "\r", "\n", EOL))

    def line(self, text: str, i: int) -> str:
        return text[self.starts[i] : self.ends[i]]


def _line_table(text, cr, lf, eol) -> tuple[list[int], list[int]]:
    """(starts, ends) of every line of a str or bytes (LF, CRLF and lone CR end a line)."""
    if cr not in text:  # the common case, without a regex
        lengths = [len(line) for line in text.split(lf)]
        starts = [0, *accumulate(n + 1 for n in lengths)][:-1]
        return starts, [s + n for s, n in zip(starts, lengths)]
    starts, ends = [0], []
    for m in eol.finditer(text):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    return starts, ends


def byte_line_starts(data: bytes) -> list[int]:
    """Byte offset of each line start of UTF-8 ``data``."""
    return _line_table(data, b"\r", b"\n", _EOL_BYTES)[0]


def parser_key(backend: str) -> str:
    """What stored blocks were made by: our parser version, the backend and its version."""
    from mdchunk.pipeline.installed import version  # importlib.metadata's answer, sooner

    check_backend(backend)
    return f"{PARSER_VERSION}|{backend}-{version(BACKENDS[backend][1])}"


def check_backend(name: str) -> None:
    """Raise ValueError (naming the choices) for an unknown backend."""
    if name not in BACKENDS:
        raise ValueError(f"unknown parser {name!r}: use {' or '.join(BACKENDS)}")


def _backend(name: str):
    check_backend(name)
    return import_module(BACKENDS[name][0])


def parse(
    text: str, markdown: bool = True, is_mdx: bool = False, backend: str = DEFAULT_BACKEND
) -> tuple[Lines, list[Block]]:
    """Top-level blocks of ``text`` in order; their line spans never overlap. A backend that
    fails on a document (a pyo3 panic is a BaseException) hands it to the reference one."""
    lines = Lines.of(text)
    if not text.strip():
        return lines, []
    impl = _backend(backend)
    try:
        found = _blocks(text, lines, markdown, is_mdx, impl)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException:
        if backend == REFERENCE_BACKEND:
            raise
        found = _blocks(text, lines, markdown, is_mdx, _backend(REFERENCE_BACKEND))
    fenced = None
    if not markdown and ("```" in text or "~~~" in text):
        # plain text: a blank line inside a ``` region does not end the paragraph
        fenced = fence.fenced_lines([lines.line(text, i) for i in range(len(lines.starts))])
    return lines, _fill_gaps(text, lines, found, fenced)


def _blocks(text: str, lines: Lines, markdown: bool, is_mdx: bool, impl) -> list[Block]:
    if not markdown:
        return []
    blocks: list[Block] = []
    start = 0
    from mdchunk.pipeline import frontmatter  # here: parser_key needs no YAML

    fm = frontmatter.locate(text)
    if fm is not None:
        last = len(EOL.findall(text, 0, fm[3]))
        blocks.append(Block("front_matter", 0, last))
        start = last + 1
    if not is_mdx:
        return blocks + _parse_md(text, lines, start, len(lines.starts), impl)
    all_lines = [lines.line(text, i) for i in range(len(lines.starts))]
    for kind, a, b in mdx.segments(all_lines, start):
        blocks += _parse_md(text, lines, a, b, impl) if kind == "md" else [Block(kind, a, b - 1)]
    return blocks


def _parse_md(text: str, lines: Lines, a: int, b: int, impl) -> list[Block]:
    """Blocks of lines [a, b), parsed as a document of their own; heading titles shortened
    to TITLE_CHARS (a title is a breadcrumb element, not a place for 50 kB of base64)."""
    if a >= b:
        return []
    blocks = impl.parse_lines(text, lines, a, b)
    for block in blocks:
        if block.title is not None and len(block.title) > TITLE_CHARS:
            block.title = block.title[: TITLE_CHARS - 1].rstrip() + "…"
    return blocks


def _fill_gaps(
    text: str, lines: Lines, blocks: list[Block], fenced: list[bool] | None = None
) -> list[Block]:
    """Trim trailing blank lines off every block and turn uncovered text into paragraphs
    (lines marked ``fenced`` never end a paragraph)."""
    starts, ends = lines.starts, lines.ends
    n_lines = len(starts)
    out: list[Block] = []
    nxt = 0
    for block in blocks:
        first = block.first
        # the lines between two blocks are most often blank: one slice tells
        if nxt < first and (fenced or text[starts[nxt] : ends[first - 1]].strip()):
            out += _gap_paragraphs(text, lines, nxt, first, fenced)
        last = block.last
        while last > first and not text[starts[last] : ends[last]].strip():
            last -= 1
        block.last = last
        out.append(block)
        nxt = last + 1
    if nxt < n_lines:
        out += _gap_paragraphs(text, lines, nxt, n_lines, fenced)
    return out


def _gap_paragraphs(
    text: str, lines: Lines, nxt: int, until: int, fenced: list[bool] | None
) -> list[Block]:
    """Paragraphs of the non-blank runs of lines [nxt, until)."""
    out: list[Block] = []
    run_start = None
    for i in range(nxt, until + 1):
        blank = i == until or not (lines.line(text, i).strip() or (fenced and fenced[i]))
        if not blank and run_start is None:
            run_start = i
        elif blank and run_start is not None:
            out.append(Block("paragraph", run_start, i - 1))
            run_start = None
    return out
