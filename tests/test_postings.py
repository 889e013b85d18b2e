"""The postings stage's rows: distinct terms per chunk in order of first occurrence, with
their counts, whatever the layout of the chunks table's columns."""

from __future__ import annotations

import re
import subprocess
import sys

import polars as pl
import pyarrow as pa
import pytest

from chunkmill.pipeline.postings import postings
from tests.conftest import REPO

TEXTS = ["Vue文档 vue VUE", "", "ΟΔΟΣ. σ", "インテグ 中 x1 x1"]


def _chunks(texts: list[str], kind: pa.DataType | None = None) -> pa.Table:
    ids = [f"{i:032x}" for i in range(len(texts))]
    return pa.table({"chunk_id": ids, "embed_text": pa.array(texts, kind or pa.large_string())})


def test_distinct_terms_in_order_with_counts():
    rows = postings(_chunks(TEXTS)).to_pylist()
    got = [(r["chunk_id"][-1], r["term"], r["tf"], r["doc_len"]) for r in rows]
    assert got == [
        ("0", "vue", 3, 4),
        ("0", "文档", 1, 4),
        ("2", "οδος", 1, 2),
        ("2", "σ", 1, 2),
        ("3", "イン", 1, 6),
        ("3", "ンテ", 1, 6),
        ("3", "テグ", 1, 6),
        ("3", "中", 1, 6),
        ("3", "x1", 2, 6),
    ]


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string(), pa.string_view()])
def test_pieces_slices_and_string_types_give_the_same_rows(kind):
    whole = _chunks(TEXTS * 3)
    table = _chunks(TEXTS * 3, kind)
    pieces = pa.concat_tables([table.slice(0, 5), table.slice(5, 0), table.slice(5)])
    assert postings(pieces).equals(postings(whole))
    assert postings(table.slice(4, 4)).equals(postings(whole.slice(4, 4)))
    assert postings(table.slice(0, 0)).num_rows == 0


def test_sigma_tables_are_polars_ones():
    """rust/core/src/tables/lowercase.rs is what tools/gen_lowercase.py reads off the
    polars that the file names (another polars may judge other characters cased)."""
    tool = REPO / "tools" / "gen_lowercase.py"
    header = (REPO / "rust" / "core" / "src" / "tables" / "lowercase.rs").read_text()
    named = re.search(r"from polars (\S+);", header).group(1)
    if named != pl.__version__:
        pytest.skip(f"the tables come from polars {named}")
    assert subprocess.run([sys.executable, str(tool), "--check"]).returncode == 0
