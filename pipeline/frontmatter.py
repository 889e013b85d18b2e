"""Front matter: YAML between ``---`` lines or TOML between ``+++`` lines at the very top.

Detection is ours (not a parser plugin) because it must run before MDX segmentation
and must keep the raw text when the content does not parse.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass

import yaml

_OPEN = re.compile(r"(---|\+\+\+)[ \t]*(\r\n|\r|\n)")
_LINE = re.compile(r"[^\r\n]*(\r\n|\r|\n|$)")
MAX_FRONT_MATTER_CHARS = 256 * 1024
# libyaml's safe loader when pyyaml was built with it (same semantics as safe_load, ~10x faster)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class FrontMatter:
    format: str  # yaml | toml
    raw: str  # the whole block, delimiters included
    end: int  # char offset just after the closing delimiter line's content
    data: dict[str, str] | None  # top-level keys; non-string values as JSON
    error: str | None


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


def _parse(fmt: str, body: str) -> tuple[dict[str, str] | None, str | None]:
    if len(body) > MAX_FRONT_MATTER_CHARS:
        return None, f"front matter larger than {MAX_FRONT_MATTER_CHARS} characters, not parsed"
    try:
        value = yaml.load(body, Loader=_YAML_LOADER) if fmt == "yaml" else tomllib.loads(body)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        first = str(exc).strip().splitlines()
        return None, f"invalid {fmt.upper()} front matter: {' '.join(first)}"
    if value is None:
        return {}, None
    if not isinstance(value, dict):
        return None, f"{fmt.upper()} front matter is a {type(value).__name__}, not a mapping"
    return {str(k): _as_text(v) for k, v in value.items()}, None


def _as_text(value: object) -> str:
    """Strings stay as they are; everything else becomes canonical JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str, ensure_ascii=False, sort_keys=True)
