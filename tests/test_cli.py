"""The command line: outputs, summary, exit codes, help."""

from __future__ import annotations

import json
import shutil
from array import array

import polars as pl
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore, schemas
from chunkmill.pipeline.runstore import parquet_files
from tests.conftest import SAMPLE
from tests.helpers import document_metadata


def test_blocks_on_sample_data(tmp_path):
    result = CliRunner().invoke(main, ["blocks", str(SAMPLE), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for name in ("documents", "blocks", "rejects"):
        meta = pq.ParquetFile(parquet_files.parts(tmp_path, name)[0])
        assert meta.schema_arrow == schemas.TABLES[name]
        if meta.metadata.num_row_groups:
            assert meta.metadata.row_group(0).column(0).compression == "ZSTD"
    docs = pl.read_parquet(tmp_path / "documents.parquet")
    assert docs.height == len([p for p in SAMPLE.rglob("*") if p.suffix in (".md", ".mdx", ".txt")])
    assert "documents" in result.output and "blocks" in result.output and "MB/s" in result.output


def test_include_exclude(tmp_path):
    out = tmp_path / "o"
    result = CliRunner().invoke(
        main,
        [
            "blocks",
            str(SAMPLE),
            "--out",
            str(out),
            "--include",
            "guides/*",
            "--exclude",
            "*fences*",
        ],
    )
    assert result.exit_code == 0, result.output
    assert pl.read_parquet(out / "documents.parquet")["path"].to_list() == [
        "guides/getting-started.md"
    ]


def test_an_include_that_matches_nothing_is_named(tmp_path):
    src = tmp_path / "src"
    (src / "guides").mkdir(parents=True)
    (src / "guides" / "a.md").write_text("# A\n\nalpha\n")
    (src / "b.md").write_text("# B\n\nbeta\n")
    run = ["run", str(src), "--workers", "1", "--include", "guides/*", "--include", "gudes/*"]
    result = CliRunner().invoke(main, [*run, "--out", str(tmp_path / "o1")])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.output.splitlines() if "matched no path" in line]
    assert warned == ["chunkmill run: warning: --include 'gudes/*' matched no path"]
    # every include matched nothing: the warning, then the guard of a run that read nothing
    result = CliRunner().invoke(
        main, ["run", str(src), "--include", "*.mdx", "--out", str(tmp_path / "o2")]
    )
    assert result.exit_code == 1
    assert "--include '*.mdx' matched no path" in result.output
    assert "no document was read" in result.output
    blocks = ["blocks", str(src), "--out", str(tmp_path / "o3"), "--include", "gudes/*"]
    result = CliRunner().invoke(main, [*blocks, "--include", "b.md"])
    assert result.exit_code == 0, result.output
    assert "--include 'gudes/*' matched no path" in result.output


def test_globs_read_as_in_gitignore():
    from chunkmill.pipeline.inputs.sources import Selection

    paths = ["top.md", "guides/a.md", "guides/deep/b.md", "notes.txt"]

    def picked(include=(), exclude=()):
        selection = Selection(include=tuple(include), exclude=tuple(exclude))
        return [p for p in paths if selection.wants(p)]

    assert picked(["*.md"]) == ["top.md", "guides/a.md", "guides/deep/b.md"]
    assert picked(["**/*.md"]) == ["top.md", "guides/a.md", "guides/deep/b.md"]
    assert picked(["guides"]) == picked(["guides/"]) == ["guides/a.md", "guides/deep/b.md"]
    assert picked(["./top.md"]) == ["top.md"]
    assert picked(exclude=["guides/deep"]) == ["top.md", "guides/a.md", "notes.txt"]


def test_table_input_keeps_metadata(tmp_path):
    rows = [
        {"id": "a.md", "text": "# A\n\nbody", "lang": "en"},
        {"id": "b", "text": "no headings", "lang": "fr"},
        {"id": "c", "text": None, "lang": "de"},
    ]
    src = tmp_path / "docs.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["blocks", str(src), "--out", str(out)])
    assert result.exit_code == 0, result.output
    docs = pl.read_parquet(out / "documents.parquet")
    assert docs["path"].to_list() == ["a.md", "b"]
    metadata = document_metadata(out / "documents.parquet")
    assert metadata == {"a.md": {"lang": "en"}, "b": {"lang": "fr"}}
    rejects = pl.read_parquet(out / "rejects.parquet")
    assert rejects["path"].to_list() == ["c"] and "null" in rejects["detail"][0]


def test_missing_input_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["blocks", str(tmp_path / "nope"), "--out", str(tmp_path)])
    assert result.exit_code == 2 and "no such file or folder" in result.output


def test_nothing_readable_exits_non_zero(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "bad.md").write_bytes(b"\x00\x01")
    result = CliRunner().invoke(
        main, ["blocks", str(tmp_path / "in"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    assert "no document could be read" in result.output


def test_help_teaches():
    result = CliRunner().invoke(main, ["blocks", "--help"])
    assert result.exit_code == 0
    for word in ("--include", "--exclude", "--mdx", "--bias", "Example", "rejects"):
        assert word in result.output


def test_chunks_repacks_stored_blocks(tmp_path):
    stage, out, direct = tmp_path / "stage", tmp_path / "out", tmp_path / "direct"
    policy = ["--max-tokens", "300", "--target-tokens", "200", "--min-tokens", "50"]
    runner = CliRunner()
    assert runner.invoke(main, ["blocks", str(SAMPLE), "--out", str(stage)]).exit_code == 0
    result = runner.invoke(main, ["chunks", str(stage), "--out", str(out), *policy])
    assert result.exit_code == 0, result.output
    chunks = pl.read_parquet(out / "chunks.parquet")
    assert chunks["n_tokens"].max() <= 300 and chunks.height > 10
    assert "chunks" in result.output and "policy" in result.output
    # the same as a one-pass run with the same policy
    assert runner.invoke(main, ["run", str(SAMPLE), "--out", str(direct), *policy]).exit_code == 0
    assert chunks.equals(pl.read_parquet(runstore.resolve(direct) / "chunks.parquet"))
    for name in ("documents", "blocks", "rejects"):
        assert (out / f"{name}.parquet").exists()


def test_bad_policy_is_refused_before_work(tmp_path):
    result = CliRunner().invoke(
        main, ["run", str(SAMPLE), "--out", str(tmp_path / "o"), "--min-tokens", "900"]
    )
    assert result.exit_code == 2 and "min_tokens (900) > target_tokens (750)" in result.output
    assert not (tmp_path / "o").exists()
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(SAMPLE),
            "--out",
            str(tmp_path / "o"),
            "--tokenizer",
            "tiktoken:no_such_encoding",
        ],
    )
    assert result.exit_code == 2 and "unknown tiktoken encoding" in result.output


def test_a_mistyped_tiktoken_encoding_is_named_with_those_available(tmp_path):
    pytest.importorskip("tiktoken")
    out = tmp_path / "o"
    result = CliRunner().invoke(
        main, ["run", str(SAMPLE), "--out", str(out), "--tokenizer", "tiktoken:cl100k"]
    )
    assert result.exit_code == 2
    line = result.output.strip()
    assert len(line.splitlines()) == 1 and "unknown tiktoken encoding 'cl100k'" in line
    assert "available: cl100k_base, o200k_base" in line and "extra" not in line
    assert not out.exists()


def test_a_link_template_format_spec_is_refused_before_work(tmp_path):
    out, template = tmp_path / "o", "https://x/{path:>9999999999}"
    result = CliRunner().invoke(
        main, ["run", str(SAMPLE), "--out", str(out), "--link-template", template]
    )
    assert result.exit_code == 2 and f"link_template {template!r}" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not out.exists()


def test_input_given_as_a_uri_reads_through_pyarrow(tmp_path):
    plain, uri = tmp_path / "plain", tmp_path / "uri"
    runner = CliRunner()
    assert runner.invoke(main, ["run", str(SAMPLE), "--out", str(plain)]).exit_code == 0
    result = runner.invoke(main, ["run", f"file://{SAMPLE}", "--out", str(uri)])
    assert result.exit_code == 0, result.output
    a, b = runstore.resolve(plain), runstore.resolve(uri)
    docs_a, docs_b = (pl.read_parquet(x / "documents.parquet") for x in (a, b))
    assert docs_b["source"].unique().to_list() == [f"file://{SAMPLE}"]
    assert docs_a.drop("source").equals(docs_b.drop("source"))
    assert pl.read_parquet(a / "chunks.parquet").equals(pl.read_parquet(b / "chunks.parquet"))
    assert "1 skipped (1 not markdown)" in result.output  # the .json asset, as with a plain path
    missing = runner.invoke(main, ["run", f"file://{tmp_path}/nope", "--out", str(uri)])
    assert missing.exit_code == 2 and "no such file or folder" in missing.output


@pytest.mark.parametrize("same_folder", [True, False])
def test_chunk_stage_rejects_are_recorded(tmp_path, monkeypatch, same_folder):
    """A document the chunks stage rejects leaves documents/blocks and lands in rejects,
    next to the rejects of the blocks stage, also when --out is the blocks folder."""
    from chunkmill import _core

    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    (src / "binary.md").write_bytes(b"\x00")
    stage = tmp_path / "stage"
    out = stage if same_folder else tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["blocks", str(src), "--out", str(stage)]).exit_code == 0
    real = _core.chunk_documents

    def refuse_index(docs, blocks, *args):
        """The core's answer without index.md, which is rejected instead."""
        keep = [i for i, path in enumerate(docs[1]) if path != "index.md"]
        out = real(
            tuple([column[i] for i in keep] for column in docs),
            ([blocks[0][i] for i in keep], *blocks[1:]),
            *args,
        )
        doc = memoryview(out["doc"]).cast("I")  # the document of each chunk, uint32
        out["doc"] = array("I", [keep[d] for d in doc]).tobytes()
        refused = [(i, "internal_error", "forced") for i in range(len(docs[1])) if i not in keep]
        out["rejects"] = sorted([(keep[d], *r) for d, *r in out["rejects"]] + refused)
        return out

    monkeypatch.setattr(_core, "chunk_documents", refuse_index)
    result = runner.invoke(main, ["chunks", str(stage), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rejects = pl.read_parquet(out / "rejects.parquet")
    assert sorted(zip(rejects["path"], rejects["reason"])) == [
        ("binary.md", "binary"),
        ("index.md", "internal_error"),
    ]
    docs = pl.read_parquet(out / "documents.parquet")
    assert "index.md" not in docs["path"].to_list() and docs.height == 10
    blocks = pl.read_parquet(out / "blocks.parquet")
    # every remaining document with text keeps its blocks (notes/empty.md has none)
    assert set(blocks["doc_id"]) == set(docs.filter(pl.col("n_chars") > 0)["doc_id"])


def test_a_reader_that_stops_early_is_no_error(tmp_path):
    # `chunkmill stats DIR | head -1`: the pipe closes under us; exit 0, nothing on stderr
    import subprocess
    import sys

    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["run", str(SAMPLE), "--out", str(out)]).exit_code == 0
    for command in ("stats", "search"):
        args = [sys.executable, "-m", "chunkmill", command, str(out)]
        args += ["pebble store"] if command == "search" else []
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.readline()
        proc.stdout.close()  # as head does after its line
        code = proc.wait(timeout=60)
        stderr = proc.stderr.read().decode()
        assert code == 0 and "Error" not in stderr and "error" not in stderr, (command, stderr)


def test_no_progress_label_lines_off_a_terminal(tmp_path):
    # off a terminal the bar draws nothing: no bare "run" / "blocks" / "chunks" line among
    # the stage lines of a log
    out = tmp_path / "out"
    runs = [
        ["run", str(SAMPLE), "--out", str(out / "run")],
        ["blocks", str(SAMPLE), "--out", str(out / "blocks")],
        ["chunks", str(out / "blocks"), "--out", str(out / "chunks")],
    ]
    for args in runs:
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert args[0] not in result.output.splitlines(), result.output


def test_policy_errors_say_what_to_do(tmp_path, monkeypatch):
    from chunkmill.pipeline import tokens

    out = str(tmp_path / "out")
    args = ["run", str(SAMPLE), "--out", out, "--max-tokens", "512", "--target-tokens", "600"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "chunkmill run: invalid policy: target_tokens (600) > max_tokens (512)" in result.output
    assert len(result.output.strip().splitlines()) == 1  # one line, not click's three
    assert "--target-tokens 384 --min-tokens 102 --overlap-tokens 40" in result.output
    assert "Invalid value" not in result.output

    def missing(spec, bias="balanced"):
        raise ImportError("No module named 'tiktoken'")

    monkeypatch.setattr(tokens, "make_counter", missing)
    args = ["run", str(SAMPLE), "--out", out, "--tokenizer", "tiktoken:cl100k_base"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "pip install 'chunkmill[tokenizers]'" in result.output


def test_out_may_not_be_the_input_folder_itself(tmp_path):
    src = tmp_path / "docs"
    shutil.copytree(SAMPLE, src)
    for command in ("run", "blocks"):
        result = CliRunner().invoke(main, [command, str(src), "--out", str(src)])
        assert result.exit_code == 2 and "is INPUT" in result.output, result.output
    assert not (src / "runs").exists() and not (src / "blocks.parquet").exists()


def test_a_run_on_the_estimate_ends_with_a_hint_to_count_for_real(tmp_path):
    out = tmp_path / "o"
    flags = ["run", str(SAMPLE), "--out", str(out), "--tokenizer", "estimate"]
    result = CliRunner().invoke(main, flags)
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("chunkmill run: hint: n_tokens is the estimate")
    assert f"chunkmill stats {out} --tokenizer tiktoken:cl100k_base" in last
    again = CliRunner().invoke(main, flags)
    assert "hint:" not in again.output  # nothing packed: nothing to say
    exact = CliRunner().invoke(main, ["run", str(SAMPLE), "--out", str(tmp_path / "x")])
    assert exact.exit_code == 0, exact.output
    assert "hint:" not in exact.output  # the default counts exactly
    pytest.importorskip("tiktoken")
    real = ["--tokenizer", "tiktoken:cl100k_base"]
    result = CliRunner().invoke(main, ["run", str(SAMPLE), "--out", str(tmp_path / "r"), *real])
    assert result.exit_code == 0, result.output
    assert "hint:" not in result.output
