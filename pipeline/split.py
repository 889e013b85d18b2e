"""Splitting one oversized block, by kind. The only place that knows how to cut markdown.

``split_block`` returns pieces whose texts are valid markdown on their own and whose
``spans`` (relative to the block text) together cover every character of the block but
whitespace. Two shapes come back:

- code and tables give *parts*, already grouped toward ``group_tokens``: code by lines with
  the fence and info string re-opened in every part; tables by rows with the header and
  delimiter rows repeated in every part.
- every other kind gives *fine* pieces (source slices) that the packer groups and may use as
  overlap: lists between top-level items, HTML/JSX/front matter by lines, block quotes by
  lines then sentences, paragraphs by sentences; then words, then characters, each piece
  within the budget. Fenced code inside them (a fence in a list item or a JSX block) is one
  piece, or, when it alone is too big, split as code with its fence re-opened.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from mdchunk.pipeline.fence import LINE_END as _LINE_END
from mdchunk.pipeline.fence import (
    closes_fence,
    continuation,
    fence_prefix,
    line_end,
    opens_fence,
)

Count = Callable[[list[str]], list[int]]

# Sentence ends. Latin-style marks end a sentence only before whitespace (so "v1.2" and
# "example.com" stay whole). Marks that never stand inside a sentence end one wherever they
# stand, as the scripts that use them put no space after them: ideographic and full-width
# stops and marks (。｡．！？), Devanagari danda and double danda (। ॥), Arabic question mark
# and Urdu full stop (؟ ۔), Armenian full stop (։), Ethiopic full stop and question mark
# (። ፧), Myanmar section mark (။), Khmer khan (។ ៕). Closing quotes and brackets stay with
# their sentence.
_LATIN_ENDS = ".!?\u2026\u203c\u2047-\u2049"
_SCRIPT_ENDS = (
    "\u3002\uff61\uff0e\uff01\uff1f\u0964\u0965\u061f\u06d4\u0589\u1362\u1367\u104b\u17d4\u17d5"
)
_CLOSERS = (
    "\"'\u201d\u2019\u00bb)\\]}\u300d\u300f\u3011\u3015\u3009\u300b\uff09\uff3d\uff5d\uff02\uff07"
)
# A run of Latin ends is tried from its first character only (look-behind) and never given
# back (possessive): linear on a megabyte of dots. ``_sentences`` matches on a slice, so
# that the look-behind sees no character before the range.
_SENTENCE_END = re.compile(
    f"(?<![{_LATIN_ENDS}])[{_LATIN_ENDS}]++[{_CLOSERS}]*+(?=\\s)"
    f"|[{_SCRIPT_ENDS}][{_LATIN_ENDS}{_SCRIPT_ENDS}]*[{_CLOSERS}]*"
)
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Piece:
    text: str
    spans: tuple[tuple[int, int], ...]  # relative to the block text
    tokens: int


def _trim(text: str, s: int, e: int) -> tuple[int, int] | None:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return (s, e) if s < e else None


def _cut(text: str, s: int, e: int, ends: list[int]) -> list[tuple[int, int]]:
    out, prev = [], s
    for pos in ends + [e]:
        span = _trim(text, prev, pos)
        if span:
            out.append(span)
        prev = pos
    return out


def _lines(text, s, e):
    return _cut(text, s, e, [m.end() for m in _LINE_END.finditer(text, s, e)])


def _sentences(text, s, e):
    return _cut(text, s, e, [s + m.end() for m in _SENTENCE_END.finditer(text[s:e])])


def _words(text, s, e):
    return [m.span() for m in _WORD.finditer(text, s, e)]


LEVELS = {"line": _lines, "sentence": _sentences, "word": _words}


def fine_spans(
    text: str,
    s: int,
    e: int,
    levels: tuple[str, ...],
    budget: int,
    count: Count,
    limit: int | None = None,
) -> list[tuple[int, int, int]]:
    """(start, end, tokens) pieces of text[s:e], in order. Cuts are decided on the pieces
    themselves (each within budget); the tokens returned also count the whitespace before
    each piece (indentation, blank lines), which is in the text once pieces are joined
    (``gap`` with ``limit``, by default gap_limit(budget))."""
    limit = gap_limit(budget) if limit is None else limit
    first = _trim(text, s, e)
    if first is None:
        return []
    pending = [first]
    counts = count([text[a:b] for a, b in pending])
    for level in levels + ("char",):
        if all(c <= budget for c in counts):
            break
        nxt: list[tuple[int, int]] = []
        for (a, b), c in zip(pending, counts):
            if c <= budget:
                nxt.append((a, b))
            elif level == "char":
                nxt.extend(_chars(text, a, b, budget, count))
            elif level == "word":
                nxt.extend(_runs(text, a, b, budget, count) or [(a, b)])
            else:
                nxt.extend(LEVELS[level](text, a, b) or [(a, b)])
        pending = nxt
        counts = count([text[a:b] for a, b in pending])
    before = [s] + [b for _, b in pending[:-1]]
    counts = count([gap(text, p, a, limit) + text[a:b] for p, (a, b) in zip(before, pending)])
    return [(a, b, c) for (a, b), c in zip(pending, counts)]


MAX_GAP = 256


def gap_limit(budget: int) -> int:
    """Whitespace longer than this many characters is shortened between pieces (``gap``):
    MAX_GAP, or less under a small cap (about a quarter of it with the estimate)."""
    return min(MAX_GAP, max(budget, 16))


def gap(text: str, a: int, b: int, limit: int = MAX_GAP) -> str:
    """The whitespace text[a:b] between two pieces as a chunk holds it: verbatim, unless it
    is longer than ``limit`` characters (thousands of blank lines, the indentation of a
    list nested 2,000 deep); then it keeps its first two line breaks and the last limit/2
    characters of its last line, since a piece must fit the cap with the whitespace before
    it."""
    if b - a <= limit:
        return text[a:b]
    breaks = _LINE_END.findall(text, a, b)
    if not breaks:
        return text[b - limit // 2 : b]
    last = max(text.rfind("\n", a, b), text.rfind("\r", a, b)) + 1
    return "".join(breaks[:2]) + text[max(last, b - limit // 2) : b]


def _runs(text: str, a: int, b: int, budget: int, count: Count) -> list[tuple[int, int]]:
    """The words of text[a:b] joined into runs of about a sixteenth of the budget: a line of
    a million words would otherwise become a million pieces for the packer. Runs stay small
    enough to be overlap; a word over the budget stays alone (the char level cuts it).
    Words are read and counted 4,096 at a time, so memory follows the runs, not the words."""
    limit = max(budget // 16, 1)
    out: list[tuple[int, int]] = []
    size = 0
    words = _WORD.finditer(text, a, b)
    while batch := [m.span() for m in islice(words, 4096)]:
        for (x, y), n in zip(batch, count([text[x:y] for x, y in batch])):
            if out and size + n + 1 <= limit and n <= budget:
                out[-1] = (out[-1][0], y)
                size += n + 1
            else:
                out.append((x, y))
                size = n
    return out


def _chars(text: str, a: int, b: int, budget: int, count: Count) -> list[tuple[int, int]]:
    """Last resort: cut between characters, each piece as long as fits, and only between
    grapheme clusters: never inside a base letter and its marks, a Hangul syllable spelled
    in jamo, or an emoji sequence (modifiers, ZWJ, flags). The length is found by doubling
    from a guess, then bisection, so a piece costs about its own length (bisecting over the
    whole rest of a 30 MB word would be quadratic)."""
    bounds = graphemes(text, a, b)
    out = []
    fits = max(budget, 1)
    last = len(bounds) - 1
    i = 0  # index into bounds of the current piece's start
    while i < last:
        lo, hi = i + 1, min(last, i + fits * 8)
        while hi < last and count([text[bounds[i] : bounds[hi]]])[0] <= fits:
            lo, hi = hi, min(last, i + (hi - i) * 2)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count([text[bounds[i] : bounds[mid]]])[0] <= fits:
                lo = mid
            else:
                hi = mid - 1
        if lo == i + 1 and count([text[bounds[i] : bounds[lo]]])[0] > fits:
            # one cluster longer than the budget (a letter with a million combining marks):
            # only here is a cluster cut, between code points, so nothing is rejected
            out.extend(_code_points(text, bounds[i], bounds[lo], fits, count))
        else:
            out.append((bounds[i], bounds[lo]))
        i = lo
    return out


def _code_points(text: str, a: int, b: int, fits: int, count: Count) -> list[tuple[int, int]]:
    """Cut [a, b) between code points, each piece as long as fits (doubling, then bisection:
    a piece costs about its own length)."""
    out = []
    while a < b:
        lo, hi = 1, min(b - a, fits * 8)
        while hi < b - a and count([text[a : a + hi]])[0] <= fits:
            lo, hi = hi, min(b - a, hi * 2)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count([text[a : a + mid]])[0] <= fits:
                lo = mid
            else:
                hi = mid - 1
        out.append((a, a + lo))
        a += lo
    return out


def graphemes(text: str, a: int, b: int) -> list[int]:
    """Offsets a, ..., b of the extended grapheme cluster boundaries of text[a:b]."""
    import regex  # Unicode text segmentation (UAX #29), which re does not have

    return [a] + [a + m.end() for m in regex.finditer(r"\X", text[a:b])]


def group(pieces: list[tuple[int, int, int]], limit: int) -> list[list[tuple[int, int, int]]]:
    """Consecutive pieces grouped greedily so each group's token sum stays within limit."""
    groups: list[list[tuple[int, int, int]]] = []
    total = 0
    for p in pieces:
        if groups and total + p[2] + 1 <= limit:
            groups[-1].append(p)
            total += p[2] + 1
        else:
            groups.append([p])
            total = p[2]
    return groups


def _wrapped(
    text,
    head: str,
    tail: str,
    body_s: int,
    body_e: int,
    first_s: int,
    last_e: int,
    budget: int,
    group_tokens: int,
    count: Count,
    body_levels=("line",),
) -> list[Piece]:
    """Body lines grouped into parts, each wrapped as head + body + tail."""
    overhead = sum(count([head, tail])) + 2
    room = max(budget - overhead, 1)
    limit = gap_limit(budget)
    lines = fine_spans(text, body_s, body_e, body_levels, room, count, limit)
    if not lines:  # nothing but the head: an empty code block whose fence line is huge
        short = "\n".join(x for x in (head, tail) if x) or text
        return [Piece(short, ((0, len(text)),), count([short])[0])]
    groups = group(lines, max(min(group_tokens, budget) - overhead, 1))
    eol = line_end(text)
    parts_text = []
    for g in groups:
        parts_text.append(eol.join(x for x in (head, _body(text, g, limit), tail) if x))
    counts = count(parts_text)
    out = []
    for i, (g, t, c) in enumerate(zip(groups, parts_text, counts)):
        s = first_s if i == 0 else _line_start(text, g[0][0])
        e = last_e if i == len(groups) - 1 else g[-1][1]
        out.append(Piece(t, ((s, e),), c))
    return out


def _body(text: str, pieces: list[tuple[int, int, int]], limit: int) -> str:
    """The source from the first piece's line start to the last piece's end: verbatim, but
    for whitespace runs longer than ``limit`` (see ``gap``)."""
    first, end, _ = pieces[0]
    out = [gap(text, _line_start(text, first), first, limit), text[first:end]]
    for (_, prev_end, _), (a, b, _) in zip(pieces, pieces[1:]):
        out += [gap(text, prev_end, a, limit), text[a:b]]
    return "".join(out)


def _line_start(text: str, pos: int) -> int:
    """Keep a line's indentation: move back to the line start if only whitespace precedes.
    Pieces are trimmed of any Unicode whitespace (``_trim``), so this moves back over the
    same: no-break spaces that indent code pasted from a web page are text on the line,
    and a part that began after them would reopen its fence after them, mid-line."""
    k = pos
    while k > 0 and text[k - 1].isspace() and text[k - 1] not in "\r\n":
        k -= 1
    return k if k == 0 or text[k - 1] in "\r\n" else pos


def _code(text, budget, group_tokens, count, levels, item_starts):
    lines = _LINE_END.split(text)
    run = opens_fence(lines[0])
    if not run:  # indented code: plain line groups, no fences to repeat
        return _wrapped(
            text, "", "", 0, len(text), 0, len(text), budget, group_tokens, count, ("line", "word")
        )
    closed = len(lines) > 1 and closes_fence(lines[-1], run)
    body_e = len(text) - len(lines[-1]) if closed else len(text)
    close_line = lines[-1] if closed else continuation(fence_prefix(lines[0])) + run
    open_end = len(lines[0])
    body_s = open_end + (2 if text[open_end : open_end + 2] == "\r\n" else 1)
    head = lines[0]
    if sum(count([head, close_line])) > budget // 4:  # repeated in every part: keep it small
        head, close_line = _short_fence(lines, run, closed, budget, count)
    return _wrapped(
        text,
        head,
        close_line,
        body_s,
        body_e,
        0,
        len(text),
        budget,
        group_tokens,
        count,
        ("line", "word"),
    )


def _short_fence(lines: list[str], run: str, closed: bool, budget: int, count: Count):
    """Opening and closing lines for the parts of code whose fence is huge (10,000
    backticks, or an info string of 100 kB): the shortest run that nothing inside closes,
    and the info string cut (dropped if even that is too long)."""
    body = lines[1:-1] if closed else lines[1:]
    inner = 0
    for line in body:
        stripped = line.lstrip(" \t>")
        n = len(stripped) - len(stripped.lstrip(run[0]))
        if n and not stripped[n:].strip():
            inner = max(inner, n)
    fence = run[0] * max(3, inner + 1)
    prefix = fence_prefix(lines[0])
    info = lines[0][len(prefix) + len(run) :].strip()[:40]
    head = f"{prefix}{fence}{info}"
    if sum(count([head])) > budget // 4:
        head = prefix + fence
    return head, continuation(prefix) + fence


def _table(text, budget, group_tokens, count, levels, item_starts):
    spans = _lines(text, 0, len(text))
    if len(spans) < 3:
        return _structured(text, budget, group_tokens, count, ("line", "word"), None)
    head = text[: spans[1][1]]
    if count([head])[0] * 2 > budget:  # a header this large cannot be repeated
        return _structured(text, budget, group_tokens, count, ("line", "word"), None)
    return _wrapped(
        text,
        head,
        "",
        spans[2][0],
        len(text),
        0,
        len(text),
        budget,
        group_tokens,
        count,
        ("line", "word"),
    )


def _fence_regions(text: str) -> list[tuple[int, int, bool]]:
    """Cover text with (start, end, is_fence) regions; fenced code is never cut by lines."""
    out: list[tuple[int, int, bool]] = []
    pos = 0
    fence = None  # (start offset, fence run)
    for m in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n|$)", text):
        if m.start() == len(text) and m.group(0) == "":
            break
        line = m.group(0).rstrip("\r\n")
        if fence is None:
            run = opens_fence(line)
            if run:
                if pos < m.start():
                    out.append((pos, m.start(), False))
                fence, pos = run, m.start()
        elif closes_fence(line, fence):
            out.append((pos, m.start() + len(line), True))
            fence, pos = None, m.start() + len(line)
    if pos < len(text):
        out.append((pos, len(text), fence is not None))
    return out


# A GFM table inside a quote or a list item: its lines, once the container's markers and
# indentation are stripped, are a header row and a delimiter row (both with a pipe), then
# rows with a pipe, up to a blank line.
_CONTAINER = re.compile(r"[ \t]*(?:>[ \t]?)*[ \t]*")
# possessive runs: a row of dashes, then blanks and a letter, is refused in linear time
_DELIMITER_ROW = re.compile(r"\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?[ \t]*+")


def _table_regions(text: str, s: int, e: int) -> list[tuple[int, int, int | None]]:
    """Cover text[s:e] with (start, end, rows_start) regions: a table's region gives the
    offset where its body rows start, any other region None."""
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n|$)", text[s:e])]
    lines = [(s + a, s + b) for a, b in lines if b > a]
    bare = [text[a:b].rstrip("\r\n") for a, b in lines]
    bare = [x[_CONTAINER.match(x).end() :] for x in bare]
    out: list[tuple[int, int, int | None]] = []
    pos, i = s, 0
    while i + 2 < len(lines):
        head, delim = bare[i], bare[i + 1]
        if "|" in head and "|" in delim and _DELIMITER_ROW.fullmatch(delim):
            j = i + 2
            while j < len(lines) and bare[j].strip() and "|" in bare[j]:
                j += 1
            if j > i + 2:
                if pos < lines[i][0]:
                    out.append((pos, lines[i][0], None))
                out.append((lines[i][0], lines[j - 1][1], lines[i + 2][0]))
                pos, i = lines[j - 1][1], j
                continue
        i += 1
    if pos < e:
        out.append((pos, e, None))
    return out


def _structured(text, budget, group_tokens, count, levels, item_starts):
    """Lists, HTML, JSX, front matter, quotes: fine pieces, with fenced code kept whole
    (or split as code, fence re-opened), tables kept whole (or split by rows, header
    repeated) and list items cut at item starts first."""
    out: list[Piece] = []
    cuts = sorted(set(item_starts or []))
    for s, e, is_fence in _fence_regions(text):
        if not is_fence and "|" in text[s:e]:
            for a, b, rows in _table_regions(text, s, e):
                if rows is None:
                    out.extend(_fine(text, a, b, cuts, levels, budget, count))
                else:
                    out.extend(_nested_table(text, a, b, rows, budget, group_tokens, count))
            continue
        if is_fence:
            whole = _whole(text, s, e, count)  # from the line start: the fence's indentation
            if whole.tokens <= budget:
                out.append(whole)
                continue
            base = whole.spans[0][0]
            for p in _code(whole.text, budget, group_tokens, count, levels, None):
                spans = tuple((base + a, base + b) for a, b in p.spans)
                out.append(Piece(p.text, spans, p.tokens))
            continue
        out.extend(_fine(text, s, e, cuts, levels, budget, count))
    return out


def _fine(text, s, e, cuts, levels, budget, count) -> list[Piece]:
    """Fine pieces of text[s:e], cut at the list item starts ``cuts`` first."""
    out = []
    for a, b in _cut(text, s, e, [c for c in cuts if s < c < e]):
        out.extend(
            Piece(text[x:y], ((x, y),), n)
            for x, y, n in fine_spans(text, a, b, levels, budget, count)
        )
    return out


def _whole(text: str, s: int, e: int, count: Count) -> Piece:
    """text[s:e] as one piece, trimmed, from the start of its first line (its indentation
    or container markers kept)."""
    start, end = _trim(text, s, e) or (s, e)
    base = _line_start(text, start)
    return Piece(text[base:end], ((base, end),), count([text[base:end]])[0])


def _nested_table(text, a, b, rows, budget, group_tokens, count) -> list[Piece]:
    """A table inside a quote or list item: one piece when it fits, else parts of rows
    under its header and delimiter rows (their container markers kept), or lines when
    even the header is too large to repeat."""
    whole = _whole(text, a, b, count)
    if whole.tokens <= budget:
        return [whole]
    ((base, end),) = whole.spans
    head = text[base:rows].rstrip("\r\n")
    if count([head])[0] * 2 > budget:
        return _fine(text, a, b, [], ("line", "word"), budget, count)
    return _wrapped(
        text, head, "", rows, end, base, end, budget, group_tokens, count, ("line", "word")
    )


SPLITTERS = {"code": _code, "table": _table}
LEVELS_BY_KIND = {
    "list": ("line", "sentence", "word"),  # after cutting between top-level items
    "html": ("line", "word"),
    "mdx_jsx": ("line", "word"),
    "mdx_esm": ("line", "word"),
    "front_matter": ("line", "word"),
    "blockquote": ("line", "sentence", "word"),
    "text": ("line", "sentence", "word"),  # plain text (recursive strategy)
    "fixed": ("line", "word"),  # fixed strategy: ignores structure
}
DEFAULT_LEVELS = ("sentence", "word")  # paragraphs, headings


def split_block(
    kind: str,
    text: str,
    budget: int,
    group_tokens: int,
    count: Count,
    item_starts: list[int] | None = None,
) -> list[Piece]:
    """Pieces of one block that alone exceeds ``budget`` tokens. Each piece fits ``budget``
    (as counted by ``count``) unless even a single character does not."""
    splitter = SPLITTERS.get(kind, _structured)
    levels = LEVELS_BY_KIND.get(kind, DEFAULT_LEVELS)
    return splitter(text, budget, group_tokens, count, levels, item_starts)
