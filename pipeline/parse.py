"""The reference markdown parser: one document's text -> its top-level blocks (kind,
level, spans), in Python with markdown-it-py.

It knows nothing about tokens or chunks. The product's parser is the Rust core
(chunkmill._core, pulldown-cmark), called by the blocks stage (pipeline/block.py) for a whole
batch; this module is what it falls back to for a document it cannot parse, what
``--parser markdown-it`` selects, and the oracle the tests hold the Rust core to
(tests/test_backends.py). It cuts front matter and MDX segments first, fills any text no
block covers (link reference definitions, for instance) with paragraph blocks so that
nothing is lost, and trims trailing blank lines; the Rust core does the same steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

from chunkmill.pipeline import fence, mdx

# Bumped whenever the blocks of the same document may change (documents too: front matter).
PARSER_VERSION = "blocks-1"

# Block parser backends: name -> what keys block reuse besides PARSER_VERSION: the version
# of a distribution (read when the key is made), or a fixed label. The first is the default.
# "pyromark" is the Rust core: it runs pulldown-cmark 0.13.5, the parser pyromark 0.10.3
# wrapped, and gives the blocks that backend gave, byte for byte (tests/test_golden.py), so
# its key stays "blocks-1|pyromark-0.10.3": blocks stored by earlier versions are reused,
# not parsed again. The name stays too (--parser pyromark, api.run(parser=...)). Any change
# of the Rust core's output must change this label or PARSER_VERSION.
BACKENDS = {
    "pyromark": ("label", "pyromark-0.10.3"),
    "markdown-it": ("distribution", "markdown-it-py"),
}
DEFAULT_BACKEND = "pyromark"
REFERENCE_BACKEND = "markdown-it"

EOL = fence.LINE_END  # the one definition of a line end
# Heading titles: read from at most TITLE_SOURCE_CHARS of the heading's inline source (inline
# parsing is quadratic on some inputs, 200,000 '<' say) and shortened to TITLE_CHARS.
TITLE_SOURCE_CHARS = 2_000
TITLE_CHARS = 200


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
        return cls(*_line_table(text))

    def line(self, text: str, i: int) -> str:
        return text[self.starts[i] : self.ends[i]]


def _line_table(text: str) -> tuple[list[int], list[int]]:
    """(starts, ends) of every line of a text (LF, CRLF and lone CR end a line)."""
    if "\r" not in text:  # the common case, without a regex
        lengths = [len(line) for line in text.split("\n")]
        starts = [0, *accumulate(n + 1 for n in lengths)][:-1]
        return starts, [s + n for s, n in zip(starts, lengths)]
    starts, ends = [0], []
    for m in EOL.finditer(text):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(text))
    return starts, ends


def parser_key(backend: str) -> str:
    """What stored blocks were made by: our parser version, the backend and its version."""
    check_backend(backend)
    how, what = BACKENDS[backend]
    if how == "label":
        return f"{PARSER_VERSION}|{what}"
    from chunkmill.pipeline.package_versions import version  # importlib.metadata's answer, sooner

    return f"{PARSER_VERSION}|{backend}-{version(what)}"


def check_backend(name: str) -> None:
    """Raise ValueError (naming the choices) for an unknown backend."""
    if name not in BACKENDS:
        raise ValueError(f"unknown parser {name!r}: use {' or '.join(BACKENDS)}")


def parse(text: str, markdown: bool = True, is_mdx: bool = False) -> tuple[Lines, list[Block]]:
    """Top-level blocks of ``text`` in order; their line spans never overlap."""
    lines = Lines.of(text)
    if not text.strip():
        return lines, []
    found = _blocks(text, lines, markdown, is_mdx)
    fenced = None
    if not markdown and ("```" in text or "~~~" in text):
        # plain text: a blank line inside a ``` region does not end the paragraph
        fenced = fence.fenced_lines([lines.line(text, i) for i in range(len(lines.starts))])
    return lines, _fill_gaps(text, lines, found, fenced)


def _blocks(text: str, lines: Lines, markdown: bool, is_mdx: bool) -> list[Block]:
    if not markdown:
        return []
    blocks: list[Block] = []
    start = 0
    from chunkmill.pipeline import frontmatter  # here: parser_key needs no YAML

    fm = frontmatter.locate(text)
    if fm is not None:
        last = len(EOL.findall(text, 0, fm[3]))
        blocks.append(Block("front_matter", 0, last))
        start = last + 1
    if not is_mdx:
        return blocks + _parse_md(text, lines, start, len(lines.starts))
    all_lines = [lines.line(text, i) for i in range(len(lines.starts))]
    for kind, a, b in mdx.segments(all_lines, start):
        blocks += _parse_md(text, lines, a, b) if kind == "md" else [Block(kind, a, b - 1)]
    return blocks


def _parse_md(text: str, lines: Lines, a: int, b: int) -> list[Block]:
    """Blocks of lines [a, b), parsed as a document of their own; heading titles shortened
    to TITLE_CHARS (a title is a breadcrumb element, not a place for 50 kB of base64)."""
    if a >= b:
        return []
    from chunkmill.pipeline import parse_markdown_it  # here: it imports this module

    blocks = parse_markdown_it.parse_lines(text, lines, a, b)
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
