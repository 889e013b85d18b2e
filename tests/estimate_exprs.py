"""The token estimate as polars expressions over whole frames: the independent form of
``chunkmill.pipeline.token_estimate`` that the tests hold the core's bulk estimate and the
per-text ``estimate`` to (the same numbers, to the bit), and that benchmarks/fit_estimate.py
counts classes with. The classes, patterns and weights are the package's."""

from __future__ import annotations

import polars as pl

from chunkmill.pipeline.block_kinds import CODE_LIKE
from chunkmill.pipeline.token_estimate import (
    BREAKS,
    CLASSES,
    ENGLISH_PATTERN,
    FOREIGN_MIN_WORDS,
    FOREIGN_SHARE,
    LETTER_FLOOR,
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
