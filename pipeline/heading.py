"""Heading text as readers see it, and the anchors that link to it.

``clean`` turns the source of an ATX or setext heading into plain text: heading-id
attributes (``{#id}``, ``{: #id .class}``, MDX ``{/*id*/}``), template tags (Hugo
``{{< >}}``/``{{% %}}``, Liquid/Jinja ``{% %}``/``{{ }}``) and closing ``#``s are removed,
inline markup is reduced to its text. ``Anchors`` gives each heading of a document its
anchor: the explicit id when the heading has one, else GitHub's slug of the text, with
``-1``, ``-2``... for repeats, as GitHub numbers them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from markdown_it import MarkdownIt

INLINE_MD = MarkdownIt("commonmark")
_EOL = re.compile(r"\r\n|\r|\n")
_ATX_OPEN = re.compile(r"^ {0,3}#{1,6}(?=[ \t]|$)")
# Regular expressions here stay linear on a heading of any length: a run of blanks is
# entered at its first character only (look-behind) and never given back (possessive).
_CLOSING = re.compile(r"(?:^|(?<![ \t])[ \t]++)#++[ \t]*+$")
_TEMPLATE_OPEN = re.compile(r"\{[{%]")
# {#id .class key=value} (Pandoc, Hugo, Jekyll) and {: #id .class} (kramdown), at the end.
_ATTRS = re.compile(
    r"(?<![ \t])[ \t]*\{:?[ \t]*((?:[#.][^\s{}]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s{}]+)|-)"
    r"(?:[ \t]+(?:[#.][^\s{}]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s{}]+)|-))*)[ \t]*\}[ \t]*$"
)
_ID_IN_ATTRS = re.compile(r"(?:^|\s)#([^\s{}]+)")
_MARKUP = set("*_`[]<>&\\!~")


@dataclass(frozen=True)
class Heading:
    text: str  # plain text, as a reader sees it
    explicit_id: str | None  # from {#id}, {: #id}, {/*id*/}


def source(block_text: str) -> str:
    """The inline content of a heading block: ATX markers or the setext underline removed."""
    lines = _EOL.split(block_text.strip("\r\n"))
    first = lines[0]
    if _ATX_OPEN.match(first):
        return _CLOSING.sub("", _ATX_OPEN.sub("", first, count=1).strip()).strip()
    return " ".join(line.strip() for line in lines[:-1])  # setext: the last line underlines


def clean(inline: str, env: dict | None = None) -> Heading:
    """Plain heading text and explicit id from a heading's inline source (see ``source``)."""
    text, explicit = _untemplated(inline).strip(), None
    while True:
        before = text
        mdx = _mdx_id(text)
        if mdx:
            explicit = explicit or mdx[1] or None
            text = text[: mdx[0]]
        attrs = _ATTRS.search(text)
        if attrs:
            found = _ID_IN_ATTRS.search(attrs.group(1))
            explicit = explicit or (found.group(1) if found else None)
            text = text[: attrs.start()]
        if text == before:
            break
        text = _CLOSING.sub("", text).rstrip()  # `## Title ## {#id}`: closing #s before it
    return Heading(plain_text(text, env), explicit)


def _untemplated(text: str) -> str:
    """``text`` with each template tag replaced by a space: Hugo ``{{< >}}``/``{{% %}}``,
    else Liquid/Jinja ``{% %}``/``{{ }}``, each to the first closer after its opener. The
    next closer of each kind is remembered, so that unclosed openers cost no rescans."""
    found: dict[str, int] = {}

    def closer(needle: str, start: int) -> int:  # its first end at or after start, or -1
        at = found.get(needle)
        if at is None or 0 <= at < start:
            at = found[needle] = text.find(needle, start)
        return at if at < 0 else at + len(needle)

    out, pos, m = [], 0, _TEMPLATE_OPEN.search(text)
    while m:
        p, end = m.start(), -1
        if text[p + 1] == "%":
            end = closer("%}", p + 2)
        else:
            if text[p + 2 : p + 3] in ("<", "%"):
                ends = [e for e in (closer("%}}", p + 3), closer(">}}", p + 3)) if e >= 0]
                end = min(ends, default=-1)
            if end < 0:
                end = closer("}}", p + 2)
        if end < 0:
            m = _TEMPLATE_OPEN.search(text, p + 1)
            continue
        out += [text[pos:p], " "]
        pos = end
        m = _TEMPLATE_OPEN.search(text, end)
    return "".join(out) + text[pos:] if out else text


def _mdx_id(text: str) -> tuple[int, str] | None:
    """An MDX id comment ``{/* id */}`` that ends ``text`` (blanks after it, and one line
    end): where its blanks before it start, and the id. String searches, linear: the first
    ``{/*`` opens it, the last ``*/}`` closes it."""
    body = text[:-1] if text.endswith("\n") else text
    end = len(body.rstrip(" \t")) - 3
    if end < 0 or not text.startswith("*/}", end):
        return None
    start = text.find("{/*", 0, end)
    if start < 0:
        return None
    return len(text[:start].rstrip(" \t")), text[start + 3 : end].strip()


def plain_text(inline: str, env: dict | None = None) -> str:
    """Inline markdown reduced to its text: emphasis, links, images' alt, HTML tags dropped."""
    if not any(c in _MARKUP for c in inline):
        return " ".join(inline.split())
    tokens = INLINE_MD.parseInline(inline, dict(env or {}))
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
    low = text.lower()
    if low.isascii():  # the same rule on ASCII: letters, digits, "_" (Pc), space and "-"
        return _ASCII_DROPPED.sub("", low).replace(" ", "-")
    return "".join(c for c in low if _kept(c)).replace(" ", "-")


_ASCII_DROPPED = re.compile(r"[^a-z0-9 _-]")


def _kept(c: str) -> bool:
    if c in " -":
        return True
    cat = unicodedata.category(c)
    if cat[0] in "LM" or cat in ("Nd", "Nl", "Pc"):
        return True
    # Symbols that Unicode counts as alphabetic (circled and squared Latin letters).
    return cat == "So" and ("\u24b6" <= c <= "\u24e9" or "\U0001f130" <= c <= "\U0001f189")


class Anchors:
    """Anchors of one document's headings, in document order (GitHub's numbering of
    repeated slugs: ``usage``, ``usage-1``, ``usage-2``)."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def __call__(self, heading: Heading) -> str:
        if heading.explicit_id:
            return heading.explicit_id
        base = result = slug(heading.text)
        while result in self.seen:
            self.seen[base] += 1
            result = f"{base}-{self.seen[base]}"
        self.seen[result] = 0
        return result


def references(texts: list[str]) -> dict:
    """The link reference definitions found in ``texts`` (blocks of one document), as the
    ``env`` that resolves ``[text][ref]`` links in headings."""
    env: dict = {}
    if texts:
        INLINE_MD.parse("\n\n".join(texts), env)
    return env
