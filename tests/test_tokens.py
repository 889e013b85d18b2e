"""Token estimates: vectorised, per-kind divisors, err toward over-counting."""

from __future__ import annotations

import polars as pl
import pytest

from mdchunk.pipeline.tokens import estimate_expr, make_counter


@pytest.mark.parametrize(
    ("bias", "kind", "chars", "expected"),
    [
        ("balanced", "paragraph", 10, 3),  # ceil(10 / 4.0)
        ("balanced", "paragraph", 8, 2),  # exact division is not rounded up
        ("balanced", "code", 11, 4),  # ceil(11 / 2.75)
        ("balanced", "code", 12, 5),  # ceil(4.36)
        ("prose", "list", 45, 11),  # ceil(45 / 4.4) = ceil(10.2)
        ("prose", "mdx_jsx", 31, 11),  # ceil(31 / 3.0)
        ("code", "heading", 37, 11),  # ceil(37 / 3.6) = ceil(10.3)
        ("code", "mdx_esm", 25, 11),  # ceil(25 / 2.4) = ceil(10.4)
        ("balanced", "paragraph", 0, 0),
    ],
)
def test_estimate_expression(bias, kind, chars, expected):
    df = pl.DataFrame({"kind": [kind], "text": ["x" * chars]})
    got = df.select(estimate_expr(bias, pl.col("text").str.len_chars(), pl.col("kind")))
    assert got.item() == expected


def test_estimate_counts_code_points_not_bytes():
    df = pl.DataFrame({"kind": ["paragraph"], "text": ["é" * 8]})
    assert (
        df.select(estimate_expr("balanced", pl.col("text").str.len_chars(), pl.col("kind"))).item()
        == 2
    )


def test_unknown_tokenizer_is_rejected():
    with pytest.raises(ValueError, match="unknown tokenizer"):
        make_counter("sentencepiece:x")
