"""The bulk estimate (the Rust core) gives the numbers of the estimate written in Python
(tests/estimate_oracle.py): its polars expressions and its per-text estimate."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkmill._core import CODE_LIKE
from chunkmill.pipeline import bulk_estimate, token_estimate
from chunkmill.pipeline.block import with_estimates
from chunkmill.pipeline.policy import Policy
from tests import estimate_oracle
from tests.conftest import REPO


def _edges() -> list[str]:
    """Characters on both sides of every class's edges, and every ASCII character."""
    points = set(range(128)) | {0x7FF, 0x800, 0xFFFF, 0x10000, 0x1F44D, 0x10FFFF}
    for ranges in token_estimate.CLASS_RANGES.values():
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
        est=estimate_oracle.estimate_expr(bias, text, pl.col("kind"), pl.col("doc_id")),
    )
    return out["n"].to_list(), out["est"].to_list()


@pytest.mark.parametrize("bias", sorted(token_estimate.BIAS_FACTORS))
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


# mixed scripts, controls, digits, CJK, Hangul, emoji, English and other words
MIXED = st.lists(
    st.text(alphabet=st.sampled_from(ALPHABET), max_size=12)
    | st.sampled_from(
        [
            "the",
            "and",
            "kissa",
            "camelCase",
            "v12",
            "3px",
            "中文",
            "日本語",
            "한국어",
            "뷁",
            "😀",
            "👍🏽",
            "Ελληνικά",
            "עברית",
            "مرحبا",
            "ሰላም",
            "\x1b[0m",
            "\x00",
            "\x7f",
            "2024",
            "0x1F",
            " ",
            "\n",
            "\t",
            "\r\n",
            "é",
            "ｶﾀｶﾅ",
            "ＡＢＣ",
        ]
    ),
    max_size=40,
).map("".join)


def _python_estimates(rows: list[tuple[str, str, str]], bias: str) -> list[int]:
    """estimate_oracle.estimate of every (text, kind, document) row, each with its document's
    language judged over the document's rows (estimate_oracle.english_document_expr's rule)."""
    english: dict[str, int] = {}
    words: dict[str, int] = {}
    for text, _, doc in rows:
        english[doc] = english.get(doc, 0) + len(estimate_oracle._ENGLISH.findall(text))
        words[doc] = words.get(doc, 0) + estimate_oracle.class_counts(text)["words"]
    reads = {d: float(english[d]) >= token_estimate.FOREIGN_SHARE * words[d] for d in english}
    return [
        estimate_oracle.estimate(text, bias, "code" if kind in CODE_LIKE else "prose", reads[doc])
        for text, kind, doc in rows
    ]


def _rust_estimates(rows: list[tuple[str, str, str]], bias: str) -> tuple[list, list]:
    n_chars, est = bulk_estimate.estimates(
        bias,
        pa.array([t for t, _, _ in rows], pa.large_string()),
        pa.array([k for _, k, _ in rows], pa.string()),
        pa.array([d for _, _, d in rows], pa.string()),
    )
    return n_chars.to_pylist(), est.to_pylist()


def _english_expected(texts: list[str], documents: list[str]) -> list[bool]:
    frame = pl.DataFrame(
        {"doc_id": documents, "text": texts}, schema={"doc_id": pl.String, "text": pl.String}
    )
    expr = estimate_oracle.english_document_expr(pl.col("text"), pl.col("doc_id"))
    return frame.select(expr)["text"].to_list()


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(MIXED | TEXT, st.sampled_from("abc")), max_size=12))
def test_english_documents_equal_the_expression(rows):
    texts, documents = [t for t, _ in rows], [d for _, d in rows]
    got = bulk_estimate.english_documents(pa.array(texts, pa.string()), pa.array(documents))
    assert got == _english_expected(texts, documents)


def test_english_documents_on_every_corpus_block(corpora_blocks):
    frame = pl.read_parquet(corpora_blocks / "blocks.parquet", columns=["text", "doc_id"])
    table = frame.to_arrow()
    got = bulk_estimate.english_documents(table["text"], table["doc_id"])
    assert got == _english_expected(frame["text"].to_list(), frame["doc_id"].to_list())
    assert any(got) and not all(got)


@pytest.mark.parametrize("bias", sorted(token_estimate.BIAS_FACTORS))
@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(MIXED, st.sampled_from(KINDS), st.sampled_from("ab")), max_size=8))
def test_bulk_estimate_equals_the_python_estimate(bias, rows):
    n_chars, est = _rust_estimates(rows, bias)
    assert n_chars == [len(t) for t, _, _ in rows]
    assert est == _python_estimates(rows, bias)


@pytest.mark.parametrize("bias", sorted(token_estimate.BIAS_FACTORS))
def test_bulk_estimate_equals_the_python_estimate_on_every_corpus_block(corpora_blocks, bias):
    """Every block under the default bias; under the others (the same class counts, other
    weights, which the generated rows above check too) the blocks of every fifth document."""
    frame = pl.read_parquet(corpora_blocks / "blocks.parquet", columns=["text", "kind", "doc_id"])
    if bias != Policy().bias:
        docs = frame["doc_id"].unique(maintain_order=True)
        frame = frame.filter(pl.col("doc_id").is_in(docs.gather_every(5).implode()))
    rows = list(zip(*(frame[name].to_list() for name in ("text", "kind", "doc_id"))))
    assert len(rows) > 10_000
    n_chars, est = _rust_estimates(rows, bias)
    assert n_chars == [len(t) for t, _, _ in rows]
    expected = _python_estimates(rows, bias)
    wrong = [i for i, (a, b) in enumerate(zip(est, expected)) if a != b]
    assert not wrong, f"{len(wrong)} blocks differ; first: {rows[wrong[0]][:2]!r}"


def test_arrays_of_every_layout_give_the_same_estimates():
    texts = ["camelCase v12", "", "日本語 and Ελληνικά", "ሰላም 👍", "x"]
    kinds, docs = pa.array(["paragraph"] * 5), pa.array(list("aabbc"))
    whole = bulk_estimate.estimates("balanced", pa.array(texts, pa.large_string()), kinds, docs)
    assert whole[0].tolist() == [13, 0, 16, 5, 1]  # code points
    layouts = [
        pa.array(texts, pa.string()),
        pa.array(["pad", *texts], pa.large_string()).slice(1),
        pa.chunked_array([pa.array(texts[:2]), pa.array(texts[2:])]),
        pa.array(texts, pa.string_view()),
    ]
    for array in layouts:
        got = bulk_estimate.estimates("balanced", array, kinds, docs)
        assert [v.tolist() for v in got] == [v.tolist() for v in whole]
    empty = bulk_estimate.estimates("balanced", pa.array(["", ""]), kinds[:2], docs[:2])
    assert [v.tolist() for v in empty] == [[0, 0], [0, 0]]
    with pytest.raises(ValueError, match="null"):
        bulk_estimate.estimates("balanced", pa.array(["a", None]), kinds[:2], docs[:2])


def test_the_rust_tables_are_generated_from_the_estimate():
    """rust/core/src/tables/estimate.rs is what tools/gen_estimate.py writes from
    pipeline/token_estimate.py."""
    tool = REPO / "tools" / "gen_estimate.py"
    assert subprocess.run([sys.executable, str(tool), "--check"]).returncode == 0
