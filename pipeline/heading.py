"""Heading text as readers see it, and the anchors that link to it.

``clean`` turns the source of an ATX or setext heading into plain text: heading-id
attributes (``{#id}``, ``{: #id .class}``, MDX ``{/*id*/}``), template tags (Hugo
``{{< >}}``/``{{% %}}``, Liquid/Jinja ``{% %}``/``{{ }}``) and closing ``#``s are removed,
inline markup is reduced to its text (by the Rust core, chunkmill._core; text with markup
by markdown-it-py's inline parser). ``Anchors`` gives each heading of a document its
anchor: the explicit id when the heading has one, else GitHub's slug of the text, with
``-1``, ``-2``... for repeats, as GitHub numbers them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from chunkmill import _core


@cache
def inline_md():
    """markdown-it-py's CommonMark parser, loaded at first use: only headings with inline
    markup and image blocks need it (a worker that meets none starts 60 ms sooner)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


@dataclass(frozen=True)
class Heading:
    text: str  # plain text, as a reader sees it
    explicit_id: str | None  # from {#id}, {: #id}, {/*id*/}


def source(block_text: str) -> str:
    """The inline content of a heading block: ATX markers or the setext underline removed."""
    return _core.heading_source(block_text)


def clean(inline: str, env: dict | None = None) -> Heading:
    """Plain heading text and explicit id from a heading's inline source (see ``source``)."""
    text, explicit, plain = _core.heading_clean(inline)
    return Heading(text if plain else _reduced(text, env), explicit)


def _reduced(inline: str, env: dict | None) -> str:
    """The text of inline markdown with markup, by the reference inline parser."""
    tokens = inline_md().parseInline(inline, dict(env or {}))
    return " ".join(inline_text(tokens[0].children or []).split())


def inline_text(children) -> str:
    """The text of inline tokens: text and code, breaks as spaces, images by their alt."""
    parts = []
    for t in children:
        if t.type in ("text", "code_inline"):
            parts.append(t.content)
        elif t.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif t.type == "image":
            parts.append(inline_text(t.children or []))
    return "".join(parts)


def slug(text: str) -> str:
    """GitHub's slug of a heading's text: lower-cased; punctuation, symbols and other marks
    of no letter or number removed (``-`` and ``_`` stay); every space becomes ``-``.
    Letters of every script stay, as GitHub keeps them."""
    return _core.slug(text)


def _kept(c: str) -> bool:
    """Whether a slug keeps the lower-case character ``c`` (by its Unicode category)."""
    return _core.slug_keeps(c)


class Anchors:
    """Anchors of one document's headings, in document order (GitHub's numbering of
    repeated slugs: ``usage``, ``usage-1``, ``usage-2``); an explicit id is the anchor."""

    def __init__(self) -> None:
        self._anchors = _core.HeadingAnchors()

    def __call__(self, heading: Heading) -> str:
        return self._anchors(heading.text, heading.explicit_id)


def references(texts: list[str]) -> dict:
    """The link reference definitions found in ``texts`` (blocks of one document), as the
    ``env`` that resolves ``[text][ref]`` links in headings."""
    env: dict = {}
    if texts:
        inline_md().parse("\n\n".join(texts), env)
    return env
