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
        if fmt == "yaml":
            refused = _yaml_refusal(body)
            if refused:
                return None, f"YAML front matter not parsed: {refused}"
            value = yaml.load(body, Loader=_YAML_LOADER)
        else:
            value = tomllib.loads(body)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        first = str(exc).strip().splitlines()
        return None, f"invalid {fmt.upper()} front matter: {' '.join(first)}"
    if value is None:
        return {}, None
    if not isinstance(value, dict):
        return None, f"{fmt.upper()} front matter is a {type(value).__name__}, not a mapping"
    try:
        return {str(k): _as_text(v) for k, v in value.items()}, None
    except (ValueError, RecursionError) as exc:  # a TOML value nested deeper than JSON goes
        return None, f"{fmt.upper()} front matter not stored: {exc}"


MAX_DEPTH = 64  # nesting of sequences and mappings
MAX_EXPANSION = 10_000  # nodes that aliases may add ("billion laughs" adds 387 million)
_OPENS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSES = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _yaml_refusal(body: str) -> str | None:
    """Why this YAML must not be built, or None. Reads the parser's events (libyaml's parser
    keeps its own stack, so depth cannot crash it), counting nesting and the nodes that
    aliases would add, before the composer (which recurses) or our JSON encoding (which
    expands every alias) sees it."""
    budget = _Budget()
    read = 0  # text index just after the last event
    try:
        for event in yaml.parse(body, Loader=_YAML_LOADER):
            read = event.end_mark.index if event.end_mark else read
            refused = budget.count(event)
            if refused:
                return refused
    except yaml.YAMLError as exc:
        # the library may refuse deep nesting itself, and its scanner reads ahead of the
        # events: judged by the nesting counted so far, whatever the library says
        if budget.depth + _flow_opened(body, read, exc) > MAX_DEPTH:
            return _TOO_DEEP
        raise
    return None


_TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"


def _flow_opened(body: str, start: int, exc: yaml.YAMLError) -> int:
    """Flow collections opened (minus closed) between ``start`` and where ``exc`` stopped."""
    mark = getattr(exc, "problem_mark", None)
    seen = body[start : mark.index + 1] if mark is not None else body[start:]
    return seen.count("[") + seen.count("{") - seen.count("]") - seen.count("}")


class _Budget:
    """Nesting and alias expansion counted over parser events."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}  # anchor -> nodes of its value, aliases expanded
        self.stack: list[list] = [[0, None]]  # per open collection: [nodes so far, anchor]
        self.added = 0

    @property
    def depth(self) -> int:
        return len(self.stack) - 1

    def count(self, event: yaml.Event) -> str | None:
        """Why the YAML read so far must not be built, or None."""
        stack = self.stack
        if isinstance(event, _OPENS):
            if self.depth >= MAX_DEPTH:
                return _TOO_DEEP
            stack.append([1, event.anchor])
        elif isinstance(event, _CLOSES):
            size, anchor = stack.pop()
            stack[-1][0] += size
            if anchor:
                self.sizes[anchor] = size
        elif isinstance(event, yaml.AliasEvent):
            return self._alias(event.anchor)
        elif isinstance(event, yaml.ScalarEvent):
            stack[-1][0] += 1
            if event.anchor:
                self.sizes[event.anchor] = 1
        return None

    def _alias(self, anchor: str) -> str | None:
        if anchor not in self.sizes:
            why = "recursive" if anchor in {a for _, a in self.stack} else "undefined"
            return f"{why} alias *{anchor}"
        self.added += self.sizes[anchor]
        self.stack[-1][0] += self.sizes[anchor]
        if self.added > MAX_EXPANSION:
            return f"aliases expand to more than {MAX_EXPANSION} values"
        return None


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
