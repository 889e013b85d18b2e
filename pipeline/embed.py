"""What embed_text holds of a chunk's text: the text as the model should read it.

``text`` stays a faithful slice of the source; its embedding form drops markup that only a
site generator reads, as breadcrumbs do:

- a heading line whose source holds braces (heading ids and attribute lists such as
  ``{#id}``, ``{ #id .class }``, ``{: #id }``, MDX ``{/*id*/}``, template tags) is written
  as ``#`` markers and the heading's clean text (``heading.clean``);
- a paragraph made only of MkDocs include lines (``{* ../docs_src/app.py hl[3] *}``) is
  left out, with the blank lines before it: it names a file the model never sees.
"""

from __future__ import annotations

from mdchunk.pipeline import heading
from mdchunk.pipeline.parse import TITLE_SOURCE_CHARS
from mdchunk.pipeline.section import Unit


def body(text: str, us: list[Unit], env: dict | None) -> str:
    """The embedding form of a chunk's ``text``, joined from the units ``us`` (each unit's
    text appears in ``text``, in order). A chunk of nothing but include lines keeps them."""
    forms = [_form(u, env) for u in us]
    if all(f is None for f in forms):
        return text
    out: list[str] = []
    at = 0
    for u, form in zip(us, forms):
        start = text.find(u.text, at)
        if start < 0:  # not found as it is (cannot happen): keep the text as it is
            continue
        if form != "":  # a dropped unit takes the blank lines before it along
            out += [text[at:start] if out else "", u.text if form is None else form]
        at = start + len(u.text)
    return "".join(out) + text[at:] if out else text


def _form(u: Unit, env: dict | None) -> str | None:
    """What embed_text writes for unit ``u``: None for its text as it is."""
    if "@" in u.key:  # a piece of a block (a heading cut for length, say): as it is
        return None
    if u.kind == "heading" and "{" in u.text:
        clean = heading.clean(heading.source(u.text)[:TITLE_SOURCE_CHARS], env).text
        return f"{'#' * (u.level or 1)} {clean}" if clean else ""
    if u.kind == "paragraph" and u.text.lstrip(" \t").startswith("{*") and _includes(u.text):
        return ""
    return None


def _includes(text: str) -> bool:
    """Whether every line of ``text`` is an MkDocs include (``{* FILE ... *}``)."""
    lines = [line.strip(" \t") for line in text.splitlines()]
    return all(line.startswith("{*") and line.endswith("*}") for line in lines if line)
