"""What a chunk needs to say where it comes from: document title, context header, url.

The context header is the first line of ``embed_text``: the document title and the section
path, ``Title > Guide > Install`` (an element equal to the one before it is not repeated).
A document's first chunk also carries chosen front matter fields as ``key: value`` lines.
The title is the first front matter key of ``title_keys`` with a value, else the first H1
(or a first heading that no other heading outranks and that is the only one of its level or
opens the document), else the file stem (the folder's name for ``index``/``_index``/
``README`` files).
"""

from __future__ import annotations

import json
import string

from chunkmill import _core
from chunkmill.pipeline.heading import clean, inline_md
from chunkmill.pipeline.parse import TITLE_SOURCE_CHARS

MAX_FIELD_CHARS = 400  # one front matter value in a first chunk
LINK_FIELDS = (
    "path",
    "path_stem",
    "url_path",
    "stem",
    "dir",
    "anchor",
    "line_start",
    "line_end",
)


def title_of(doc: dict, h1: str | None, keys: tuple[str, ...]) -> str:
    """The document's title: front matter ``keys`` in order, else ``h1``, else the stem."""
    fm = doc.get("front_matter") or {}
    fm = dict(fm) if not isinstance(fm, dict) else fm
    for key in keys:
        value = _scalar(fm.get(key))
        if value:
            # a bounded prefix, as for headings (a 200 kB title cleans in linear time)
            return clean(value[:TITLE_SOURCE_CHARS]).text or value
    if h1:
        return h1
    return _core.path_title(doc["path"])


def field_lines(doc: dict, keys: tuple[str, ...]) -> list[str]:
    """``key: value`` lines of the chosen front matter fields that have a value."""
    fm = doc.get("front_matter") or {}
    fm = dict(fm) if not isinstance(fm, dict) else fm
    lines = []
    for key in keys:
        value = _scalar(fm.get(key))
        if value:
            lines.append(f"{key}: {clip(' '.join(value.split()), MAX_FIELD_CHARS)}")
    return lines


def _scalar(value: str | None) -> str | None:
    """A front matter value as text; lists and mappings (stored as JSON) are joined."""
    if value is None:
        return None
    text = value.strip()
    if text[:1] in "[{":
        try:
            data = json.loads(text)
        except ValueError:
            return text
        if isinstance(data, list):
            return ", ".join(str(v) for v in data if isinstance(v, str | int | float))
        return None
    return text


def header_line(title: str, path: list[str]) -> str:
    """``Title > A > B`` (elements clipped to the core's MAX_ELEMENT_CHARS): an element equal to the
    previous one (case folded) is left out, and so is an empty one."""
    return _core.header_line(title, path)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at its last space within them, "…" after it."""
    return _core.clip(text, limit)


def check_template(template: str) -> list[str]:
    """Problems with a link template: unknown or malformed placeholders, and placeholders
    with a format spec or conversion (``{path:>9999999999}`` would fill every url with
    gigabytes; a url needs neither)."""
    try:
        fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(template)]
    except ValueError as exc:
        return [f"link_template {template!r}: {exc}"]
    fields = [(f, spec, conv) for f, spec, conv in fields if f is not None]
    unknown = sorted({f for f, _, _ in fields if f not in LINK_FIELDS})
    if unknown:
        return [
            f"link_template has unknown placeholder(s) {', '.join('{' + n + '}' for n in unknown)}"
            f"; known: {', '.join('{' + n + '}' for n in LINK_FIELDS)}"
        ]
    formatted = sorted({f for f, spec, conv in fields if spec or conv})
    if formatted:
        return [
            f"link_template {template!r}: {', '.join('{' + f + '}' for f in formatted)} "
            "with a format spec or conversion (':...' or '!...'); placeholders take neither"
        ]
    return []


def url(template: str, path: str, anchor: str | None, line_start: int, line_end: int) -> str:
    """The chunk's link: the template filled in, path segments and anchor percent-encoded;
    without an anchor, ``#{anchor}`` (or ``{anchor}``) is left out, and for a top-level
    file ``{dir}/`` is (and ``{url_path}/`` for a top-level index page). Paths are read as
    PurePosixPath reads them, and encoded as urllib.parse.quote does."""
    return _core.link(template, path, anchor, line_start, line_end)


def image_src(block_text: str, env: dict | None = None) -> str | None:
    """The source URL of the one image an image block holds (a link around it allowed)."""
    tokens = inline_md().parseInline(block_text.strip(), dict(env or {}))
    for t in tokens[0].children or []:
        if t.type == "image":
            return t.attrGet("src") or None
    return None
