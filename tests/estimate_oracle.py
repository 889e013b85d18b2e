"""The token estimate in Python, from the package's classes, patterns and weights
(``chunkmill.pipeline.token_estimate``): per text (``estimate``, ``class_counts``) and as
polars expressions over whole frames (``estimate_expr``, ``class_exprs``). The tests hold
the core's estimate to both (the same numbers, to the bit); benchmarks/fit_estimate.py
counts classes with ``class_exprs``."""

from __future__ import annotations

import math
import re
from functools import cache

import polars as pl

from chunkmill._core import CODE_LIKE
from chunkmill.pipeline.token_estimate import (
    BREAKS,
    CLASSES,
    ENGLISH_PATTERN,
    ENGLISH_WORDS,
    FOREIGN_MIN_WORDS,
    FOREIGN_SHARE,
    LETTER_FLOOR,
    SCRIPT_EXTRAS,
    WEIGHTED,
    weights,
)


def class_exprs(text: pl.Expr, document: pl.Expr | None = None) -> dict[str, pl.Expr]:
    """The count of every weighted class of ``text``, as polars expressions. With
    ``document`` (the rows' document ids, every block of a document in the frame) a text
    reads as another language only if its document does as well (see FOREIGN_LETTER)."""
    counts = {name: text.str.count_matches(p) for name, p in CLASSES.items()}
    b1, b2, b3 = (text.str.count_matches(p) for p in BREAKS)
    counts["breaks"] = b1 + b2 + b3
    multi = counts.pop("non_ascii")  # characters; their bytes minus the classes above
    wide = 2 * counts["two_byte"] + 3 * (counts["cjk"] + counts["hangul"])
    counts["other"] = text.str.len_bytes() - (text.str.len_chars() - multi) - wide
    english, words = text.str.count_matches(ENGLISH_PATTERN), counts["words"]
    judged_english = (words >= FOREIGN_MIN_WORDS) & _reads_english(english, words)
    if document is None:
        foreign = (words >= FOREIGN_MIN_WORDS) & ~judged_english
    else:
        in_document = _reads_english(english.sum().over(document), words.sum().over(document))
        foreign = ~in_document & ~judged_english
    counts["foreign"] = pl.when(foreign).then(counts["letters"]).otherwise(0)
    return counts


def _weighted(counts: dict, w: dict[str, float]):
    """sum of count * weight, added in the order of WEIGHTED (the same float operations for
    polars expressions and Python numbers, so both paths give the same result)."""
    total = counts[WEIGHTED[0]] * w[WEIGHTED[0]]
    for name in WEIGHTED[1:]:
        total = total + counts[name] * w[name]
    return total


def _reads_english(english: pl.Expr, words: pl.Expr) -> pl.Expr:
    """At least FOREIGN_SHARE of ``words`` (runs of ASCII letters) are English function
    words (``english`` of them)."""
    return english.cast(pl.Float64) >= FOREIGN_SHARE * words


def english_document_expr(text: pl.Expr, document: pl.Expr) -> pl.Expr:
    """Per row: whether the row's document reads as English, over all its rows."""
    english = text.str.count_matches(ENGLISH_PATTERN).sum().over(document)
    return _reads_english(english, text.str.count_matches(CLASSES["words"]).sum().over(document))


def estimate_expr(
    bias: str, text: pl.Expr, kind: pl.Expr, document: pl.Expr | None = None
) -> pl.Expr:
    """Estimated tokens of every row at once: ceil(sum of class count * weight of kind)."""
    counts = {k: v.cast(pl.Float64) for k, v in class_exprs(text, document).items()}
    prose = _weighted(counts, weights(bias, "prose"))
    code = _weighted(counts, weights(bias, "code"))
    value = pl.when(kind.is_in(sorted(CODE_LIKE))).then(code).otherwise(prose)
    value = pl.max_horizontal(value, counts["letters"] * LETTER_FLOOR)
    return value.ceil().cast(pl.Int32)


@cache
def _pattern(name: str) -> re.Pattern:
    """CLASSES[name], compiled on first use: a run that counts nothing (an unchanged nightly
    run reads ESTIMATE_VERSION only) does not compile the classes of many ranges."""
    return re.compile(CLASSES[name])


_ENGLISH = re.compile(rf"\b(?:{'|'.join(ENGLISH_WORDS)})\b", re.ASCII | re.IGNORECASE)
# every byte to its ASCII class: l(ower), u(pper), d(igit), p(unct), s(pace), or "."
# (anything else, non-ASCII bytes included); the classes are counted on this shape
_ASCII_SHAPE = {"digits": "d", "punct": "p", "space": "s", "controls": "c"}
_SHAPE = bytes(
    ord("l")
    if 97 <= c <= 122
    else ord("u")
    if 65 <= c <= 90
    else next((ord(v) for k, v in _ASCII_SHAPE.items() if re.fullmatch(CLASSES[k], chr(c))), 46)
    if c < 128
    else ord(".")
    for c in range(256)
)
_SHAPE_PAIRS = (b"lu", b"ld", b"ud", b"dl", b"du")  # the pairs of BREAKS
_TWO_BYTE_LEADS = bytes(range(0xC2, 0xE0))
_HIGH_BYTES = bytes(range(0x80, 0x100))
# letters stay, every other class becomes a space: the words are what split() returns
_LETTER_OR_SPACE = bytes(c if c in b"lu" else 32 for c in range(256))
_DIGIT_OR_SPACE = bytes(c if c == ord("d") else 32 for c in range(256))  # runs of digits


def _counts(text: str, english_document: bool | None) -> tuple[int, ...]:
    """The count of every class of WEIGHTED, in its order. ASCII classes are counted on the
    UTF-8 bytes, where an ASCII byte is always a whole character."""
    data = text.encode("utf-8", "surrogatepass")
    shape = data.translate(_SHAPE)
    lower, upper = shape.count(b"l"), shape.count(b"u")
    letters, words = lower + upper, len(shape.translate(_LETTER_OR_SPACE).split())
    numbers = len(shape.translate(_DIGIT_OR_SPACE).split()) if b"d" in shape else 0
    breaks = sum(shape.count(pair) for pair in _SHAPE_PAIRS)
    foreign = letters if _foreign(text, words, english_document) else 0
    ascii_counts = (letters, words, shape.count(b"d"), shape.count(b"p"), shape.count(b"s"))
    controls = shape.count(b"c")
    if text.isascii():
        return (*ascii_counts, breaks, 0, 0, 0, 0, foreign, *_NO_EXTRAS, numbers, controls)
    cjk, hangul, *extras = (_pattern(name).subn("", text)[1] for name in _PATTERNED)
    # a UTF-8 character starts with a byte below 0x80 (ASCII) or with a lead byte (0xC2 to
    # 0xDF for the characters of two bytes)
    n = len(data)
    two_byte = n - len(data.translate(None, _TWO_BYTE_LEADS))
    ascii_chars = len(data.translate(None, _HIGH_BYTES))
    other = n - ascii_chars - 2 * two_byte - 3 * (cjk + hangul)
    return (
        *ascii_counts,
        breaks,
        cjk,
        hangul,
        two_byte,
        other,
        foreign,
        *extras,
        numbers,
        controls,
    )


_PATTERNED = ("cjk", "hangul", *SCRIPT_EXTRAS)
_NO_EXTRAS = (0,) * len(SCRIPT_EXTRAS)


def class_counts(text: str, english_document: bool | None = None) -> dict[str, int]:
    """The counts of ``class_exprs`` for one string, in Python (for a handful of texts a
    polars frame costs more than the counting)."""
    return dict(zip(WEIGHTED, _counts(text, english_document)))


def _foreign(text: str, words: int, english_document: bool | None) -> bool:
    """Whether a text of ``words`` runs of ASCII letters counts as another language than
    English, alone or in a document that reads (or not) as English; the rule of
    ``class_exprs`` (see FOREIGN_LETTER)."""
    if english_document:
        return False
    judged = words >= FOREIGN_MIN_WORDS
    if not judged and english_document is None:
        return False
    reads_english = judged and len(_ENGLISH.findall(text)) >= FOREIGN_SHARE * words
    return not reads_english


@cache
def _weight_row(bias: str, group: str) -> tuple[float, ...]:
    w = weights(bias, group)
    return tuple(w[name] for name in WEIGHTED)


def estimate(
    text: str, bias: str = "balanced", group: str = "prose", english_document: bool | None = None
) -> int:
    """``english_document``: whether the text's document reads as English (None: unknown,
    the text is judged alone; see FOREIGN_LETTER). The sum of count * weight in the order of
    WEIGHTED (as the core adds it); a class counted 0 adds exactly 0.0, so it is left out."""
    counts = _counts(text, english_document)
    total = 0.0
    for n, w in zip(counts, _weight_row(bias, group)):
        if n:
            total = total + n * w
    return math.ceil(max(total, counts[0] * LETTER_FLOOR))
