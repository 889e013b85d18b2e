"""The bulk estimate (numpy, from UTF-8 bytes) gives the numbers of the polars expression."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdchunk.pipeline import bulk_estimate, tokens
from mdchunk.pipeline.block import with_estimates


def _edges() -> list[str]:
    """Characters on both sides of every class's edges, and every ASCII character."""
    points = set(range(128)) | {0x7FF, 0x800, 0xFFFF, 0x10000, 0x1F44D, 0x10FFFF}
    for ranges in tokens.CLASS_RANGES.values():
        for lo, hi in ranges:
            points |= {lo - 1, lo, hi, hi + 1}
    return [chr(p) for p in sorted(points) if not 0xD800 <= p <= 0xDFFF and p <= 0x10FFFF]


ALPHABET = _edges()
KINDS = ["paragraph", "code", "heading", "table", "list", "html"]
TEXT = st.text(alphabet=st.sampled_from(ALPHABET), max_size=60) | st.lists(
    st.sampled_from(["the", "and", "kissa", "talo", "camelCase", "v12", "3px", " ", "\n"]),
    max_size=30,
).map(" ".join)


def _expected(frame: pl.DataFrame, bias: str) -> tuple[list[int], list[int]]:
    text = pl.col("text")
    out = frame.select(
        n=text.str.len_chars().cast(pl.Int32),
        est=tokens.estimate_expr(bias, text, pl.col("kind"), pl.col("doc_id")),
    )
    return out["n"].to_list(), out["est"].to_list()


@pytest.mark.parametrize("bias", sorted(tokens.BIAS_FACTORS))
@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(TEXT, st.sampled_from(KINDS), st.sampled_from("abc")), max_size=12))
def test_bulk_estimate_equals_the_expression(bias, rows):
    # documents need not be contiguous; empty texts and empty tables included
    frame = pl.DataFrame(
        {
            "doc_id": [d for _, _, d in rows],
            "kind": [k for _, k, _ in rows],
            "text": [t for t, _, _ in rows],
        },
        schema={"doc_id": pl.String, "kind": pl.String, "text": pl.String},
    )
    got = with_estimates(frame, bias)
    n_chars, est = _expected(frame, bias)
    assert got["n_chars"].to_list() == n_chars
    assert got["est_tokens"].to_list() == est
    assert got.schema["est_tokens"] == got.schema["n_chars"] == pl.Int32


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(TEXT, max_size=10))
def test_class_counts_equal_the_regular_expressions(texts):
    counts = bulk_estimate.counts(pa.array(texts, pa.large_string()))
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String})
    for name, pattern in tokens.CLASSES.items():
        expected = frame.select(pl.col("t").str.count_matches(pattern))["t"].to_list()
        assert counts[name].tolist() == expected, name
    breaks = frame.select(t=sum(pl.col("t").str.count_matches(p) for p in tokens.BREAKS))
    assert counts["breaks"].tolist() == breaks["t"].to_list()
    assert counts["chars"].tolist() == [len(t) for t in texts]


def test_arrays_of_every_layout_give_the_same_counts():
    texts = ["camelCase v12", "", "日本語 and Ελληνικά", "ሰላም 👍", "x"]
    whole = bulk_estimate.counts(pa.array(texts, pa.large_string()))["words"].tolist()
    assert whole == [2, 0, 1, 0, 1]  # camelCase, v; and
    layouts = [
        pa.array(texts, pa.string()),
        pa.array(["pad", *texts], pa.large_string()).slice(1),
        pa.chunked_array([pa.array(texts[:2]), pa.array(texts[2:])]),
        pa.array(texts, pa.string_view()),
    ]
    for array in layouts:
        assert bulk_estimate.counts(array)["words"].tolist() == whole
    assert bulk_estimate.counts(pa.array(["", ""], pa.string()))["words"].tolist() == [0, 0]
    with pytest.raises(ValueError, match="null"):
        bulk_estimate.counts(pa.array(["a", None]))


def test_long_rows_are_counted_by_the_patterns_alike(monkeypatch):
    """Rows past LARGE_ROW bytes (counted by polars' patterns, in little memory) give the
    very counts numpy gives."""
    texts = pa.array(
        ["camelCase v12 the kissa " * 9, "Ωмир 中文 한국 ሀ ʃ 😀 " * 7, "", "plain words " * 11],
        pa.large_string(),
    )
    whole = bulk_estimate.counts(texts)
    monkeypatch.setattr(bulk_estimate, "LARGE_ROW", 100)
    assert sum(len(t.as_py().encode()) > 100 for t in texts) == 3
    parted = bulk_estimate.counts(texts)
    assert sorted(parted) == sorted(whole)
    for name, values in whole.items():
        assert parted[name].tolist() == values.tolist(), name
