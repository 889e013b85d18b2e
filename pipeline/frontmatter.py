"""Front matter: YAML between ``---`` lines or TOML between ``+++`` lines at the very top.

Detection is ours (not a parser plugin) because it must run before MDX segmentation
and must keep the raw text when the content does not parse.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from datetime import date, time

import yaml

from chunkmill.pipeline.safe_yaml import LOADER, refusal

_OPEN = re.compile(r"(---|\+\+\+)[ \t]*(\r\n|\r|\n)")
_LINE = re.compile(r"[^\r\n]*(\r\n|\r|\n|$)")
MAX_FRONT_MATTER_CHARS = 256 * 1024


@dataclass(frozen=True)
class FrontMatter:
    format: str  # yaml | toml
    raw: str  # the whole block, delimiters included
    end: int  # char offset just after the closing delimiter line's content
    data: dict[str, str] | None  # top-level keys; non-string values as JSON
    error: str | None


def parsed(fmt: str, body: str) -> tuple[dict[str, str] | None, str | None]:
    """(the top-level keys as stored, or None; why it was not stored) of a front matter
    body of ``fmt`` (yaml or toml), as ``detect`` gives them."""
    return _parse(fmt, body)


def detect(text: str) -> FrontMatter | None:
    """Front matter at offset 0 of ``text``, parsed, or None."""
    found = locate(text)
    if found is None:
        return None
    fmt, body_start, body_end, end = found
    data, error = _parse(fmt, text[body_start:body_end])
    return FrontMatter(fmt, text[:end], end, data, error)


def locate(text: str) -> tuple[str, int, int, int] | None:
    """(format, body start, body end, block end) of front matter at offset 0, or None.

    The opening line must be exactly ``---`` or ``+++`` (trailing blanks allowed) and a
    matching closing line must exist (``---`` or ``...`` for YAML): a lone ``---`` that is
    never closed is a thematic break, not front matter.
    """
    m = _OPEN.match(text)
    if not m:
        return None
    fmt = "yaml" if m.group(1) == "---" else "toml"
    closers = ("---", "...") if fmt == "yaml" else ("+++",)
    pos = m.end()
    while pos < len(text):
        line = _LINE.match(text, pos)
        content = line.group(0).rstrip("\r\n")
        if content.rstrip(" \t") in closers:
            return fmt, m.end(), pos, pos + len(content.rstrip(" \t"))
        if line.end() == pos:
            break
        pos = line.end()
    return None


def values(text: str) -> dict[str, object] | None:
    """The top-level values of the front matter at offset 0 of ``text`` as parsed, before
    they are stored as text (``FrontMatter.data``), or None when there is none or it was
    not stored."""
    found = locate(text)
    if found is None:
        return None
    fmt, body_start, body_end, _ = found
    value, error = _load(fmt, text[body_start:body_end])
    return None if error or not isinstance(value, dict) else {str(k): v for k, v in value.items()}


def decoded(stored: str, value: object) -> object:
    """A stored front matter text as the JSON value it encodes, given the ``value`` it was
    made of: a string, date or time stays the stored text; so does a text this version
    would not make of ``value``, and a float that JSON cannot hold (nan, inf)."""
    if isinstance(value, str | date | time):
        return stored
    try:
        if _as_text(value) != stored:
            return stored
        return json.loads(stored, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return stored


def _refuse(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _parse(fmt: str, body: str) -> tuple[dict[str, str] | None, str | None]:
    value, error = _load(fmt, body)
    if error:
        return None, error
    if value is None:
        return {}, None
    if not isinstance(value, dict):
        return None, f"{fmt.upper()} front matter is a {type(value).__name__}, not a mapping"
    try:
        return {str(k): _as_text(v) for k, v in value.items()}, None
    except (ValueError, RecursionError) as exc:  # a TOML value nested deeper than JSON goes
        return None, f"{fmt.upper()} front matter not stored: {exc}"


def _load(fmt: str, body: str) -> tuple[object, str | None]:
    """The parsed body, or why it was not parsed."""
    if len(body) > MAX_FRONT_MATTER_CHARS:
        return None, f"front matter larger than {MAX_FRONT_MATTER_CHARS} characters, not parsed"
    try:
        if fmt == "yaml":
            refused = refusal(body)
            if refused:
                return None, f"YAML front matter not parsed: {refused}"
            value = yaml.load(body, Loader=LOADER)
        else:
            value = tomllib.loads(body)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        first = str(exc).strip().splitlines()
        return None, f"invalid {fmt.upper()} front matter: {' '.join(first)}"
    return value, None


def _as_text(value: object) -> str:
    """Strings stay as they are, dates and times become ISO 8601 text (so that a filter on
    ``created=2024-12-23`` matches); everything else becomes canonical JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, date | time):
        return value.isoformat()
    return json.dumps(value, default=_json_default, ensure_ascii=False, sort_keys=True)


def _json_default(value: object) -> str:
    return value.isoformat() if isinstance(value, date | time) else str(value)
