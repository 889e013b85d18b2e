"""Same input + same policy -> byte-identical Parquet; chunk ids follow the recipe."""

from __future__ import annotations

import hashlib

import polars as pl
from click.testing import CliRunner

from jobs.cli import main
from pipeline import runstore
from pipeline.policy import CHUNKER_VERSION, Policy
from tests.conftest import SAMPLE


def _run(out, *flags):
    result = CliRunner().invoke(main, ["run", str(SAMPLE), "--out", str(out), *flags])
    assert result.exit_code == 0, result.output
    return runstore.resolve(out)


def test_two_runs_are_byte_identical(tmp_path):
    a, b = _run(tmp_path / "a"), _run(tmp_path / "b")
    for name in ("documents", "blocks", "chunks", "rejects"):
        assert (a / f"{name}.parquet").read_bytes() == (b / f"{name}.parquet").read_bytes()


def test_chunk_id_recipe_and_policy_change(tmp_path):
    chunks = pl.read_parquet(_run(tmp_path / "a") / "chunks.parquet")
    row = chunks.row(0, named=True)
    payload = "\x1f".join([row["doc_id"], CHUNKER_VERSION, *row["block_ids"], Policy().policy_hash])
    assert row["chunk_id"] == hashlib.sha256(payload.encode()).hexdigest()[:32]
    assert chunks["chunk_id"].n_unique() == chunks.height
    other = pl.read_parquet(_run(tmp_path / "b", "--max-tokens", "900") / "chunks.parquet")
    assert set(other["policy_hash"]) != set(chunks["policy_hash"])
    assert not set(other["chunk_id"]) & set(chunks["chunk_id"])
