"""YAML read safely: the parser's events are counted before anything is built, so that
deep nesting (the composer recurses) and aliases (the JSON we write expands every one, a
"billion laughs" adds 387 million values) are refused with our reason, not a crash."""

from __future__ import annotations

import yaml

# libyaml's safe loader when pyyaml was built with it (same semantics as safe_load, ~10x faster)
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_DEPTH = 64  # nesting of sequences and mappings
MAX_EXPANSION = 10_000  # nodes that aliases may add ("billion laughs" adds 387 million)
MAX_EXPANSION_CHARS = 1_000_000  # scalar characters that aliases may add
_OPENS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSES = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def refusal(body: str) -> str | None:
    """Why this YAML must not be built, or None. Reads the parser's events (libyaml's parser
    keeps its own stack, so depth cannot crash it), counting nesting and the nodes that
    aliases would add, before the composer (which recurses) or our JSON encoding (which
    expands every alias) sees it. YAML that cannot hold an alias (no ``*``) nor nest
    deeper than the limit (every level opens with one of ``:-?[{``) is not read twice."""
    if _plain(body):
        return None
    budget = _Budget()
    read = 0  # text index just after the last event
    try:
        for event in yaml.parse(body, Loader=LOADER):
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


def _plain(body: str) -> bool:
    """True when ``body`` can hold no alias and cannot nest past MAX_DEPTH: every alias
    starts with ``*``, every level of nesting opens with one of ``:-?[{``."""
    return "*" not in body and sum(map(body.count, ":-?[{")) <= MAX_DEPTH


def _flow_opened(body: str, start: int, exc: yaml.YAMLError) -> int:
    """Flow collections opened (minus closed) between ``start`` and where ``exc`` stopped."""
    mark = getattr(exc, "problem_mark", None)
    seen = body[start : mark.index + 1] if mark is not None else body[start:]
    return seen.count("[") + seen.count("{") - seen.count("]") - seen.count("}")


class _Budget:
    """Nesting and alias expansion counted over parser events: the nodes and the scalar
    characters each anchored value holds, aliases expanded, and what aliases add."""

    def __init__(self) -> None:
        self.sizes: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, characters)
        self.stack: list[list] = [[0, 0, None]]  # open collections: [nodes, chars, anchor]
        self.added = [0, 0]  # nodes, characters

    @property
    def depth(self) -> int:
        return len(self.stack) - 1

    def count(self, event: yaml.Event) -> str | None:
        """Why the YAML read so far must not be built, or None."""
        if isinstance(event, _OPENS):
            if self.depth >= MAX_DEPTH:
                return _TOO_DEEP
            self.stack.append([1, 0, event.anchor])
        elif isinstance(event, _CLOSES):
            nodes, chars, anchor = self.stack.pop()
            self._add(nodes, chars, anchor)
        elif isinstance(event, yaml.AliasEvent):
            return self._alias(event.anchor)
        elif isinstance(event, yaml.ScalarEvent):
            self._add(1, len(event.value), event.anchor)
        return None

    def _add(self, nodes: int, chars: int, anchor: str | None) -> None:
        """A finished value: counted in the collection that holds it, and kept by anchor."""
        self.stack[-1][0] += nodes
        self.stack[-1][1] += chars
        if anchor:
            self.sizes[anchor] = (nodes, chars)

    def _alias(self, anchor: str) -> str | None:
        if anchor not in self.sizes:
            why = "recursive" if anchor in {a for *_, a in self.stack} else "undefined"
            return f"{why} alias *{anchor}"
        nodes, chars = self.sizes[anchor]
        self._add(nodes, chars, None)
        self.added[0] += nodes
        self.added[1] += chars
        if self.added[0] > MAX_EXPANSION:
            return f"aliases expand to more than {MAX_EXPANSION} values"
        if self.added[1] > MAX_EXPANSION_CHARS:
            return f"aliases expand to more than {MAX_EXPANSION_CHARS} characters"
        return None
