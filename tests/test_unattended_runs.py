"""What a run from cron meets: one-line errors with their exit codes, JSON logs to the end,
Ctrl-C, policy files, several inputs, skipped entries counted, limits on reused documents."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill import api
from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from tests.conftest import REPO, SAMPLE


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def one_line_error(result, *words: str) -> None:
    """The command failed with exactly one line on stderr, holding every word."""
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.output
    assert all(w in lines[0] for w in words), result.output


@pytest.fixture
def sample(tmp_path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    return src


def test_unwritable_out_is_one_line_with_exit_2(sample, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for command in ("run", "blocks"):
        result = cli(command, str(sample), "--out", str(blocker / "out"))
        assert result.exit_code == 2, result.output
        one_line_error(result, "--out", "cannot write there")


def test_missing_hf_tokenizer_is_one_line_with_exit_2(sample, tmp_path):
    result = cli(
        "run",
        str(sample),
        "--out",
        str(tmp_path / "o"),
        "--tokenizer",
        f"hf:{tmp_path}/missing/tokenizer.json",
    )
    assert result.exit_code == 2, result.output
    one_line_error(result, "tokenizer", "missing/tokenizer.json")


def test_unreachable_ray_address_is_one_line_with_exit_2(sample, tmp_path):
    pytest.importorskip("ray", reason="ray extra not installed")
    started = time.monotonic()
    result = cli(
        "run",
        str(sample),
        "--out",
        str(tmp_path / "o"),
        "--engine",
        "ray",
        "--ray-address",
        "127.0.0.1:1",
    )
    assert result.exit_code == 2, result.output
    one_line_error(result, "cannot reach Ray at 127.0.0.1:1")
    assert time.monotonic() - started < 60  # Ray alone retries for minutes


def test_sql_csv_with_list_columns(sample, tmp_path):
    out = tmp_path / "o"
    assert cli("run", str(sample), "--out", str(out)).exit_code == 0
    result = cli(
        "sql", str(out), "SELECT path, breadcrumb, spans FROM chunks LIMIT 3", "--format", "csv"
    )
    assert result.exit_code == 0, result.output
    rows = pl.read_csv(result.stdout.encode())
    assert rows.columns == ["path", "breadcrumb", "spans"] and rows.height == 3
    assert all(isinstance(json.loads(v), list) for v in rows["breadcrumb"])


def _json_lines(stderr: str) -> list[dict]:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    return [json.loads(ln) for ln in lines]  # fails on any line that is not JSON


def test_log_json_is_all_json_and_ends_with_a_summary(sample, tmp_path):
    out = tmp_path / "o"
    (sample / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    cmd = [
        sys.executable,
        "-m",
        "chunkmill",
        "run",
        str(sample),
        "--out",
        str(out),
        "--log-json",
    ]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = _json_lines(done.stderr)
    assert lines[-1]["stage"] == "summary" and lines[-1]["status"] == "published"
    assert lines[-1]["documents"] == 11 and lines[-1]["skipped"] == {"not markdown": 1}
    assert lines[-1]["rejects"] == {"invalid_utf8": 1}  # each reject counted once
    # a refused run too: an error object, then the summary
    refused = subprocess.run(
        [*cmd, "--include", "*.nothing"], cwd=REPO, capture_output=True, text=True
    )
    assert refused.returncode == 1
    lines = _json_lines(refused.stderr)
    assert lines[-2]["stage"] == "error" and "no document was read" in lines[-2]["message"]
    assert lines[-1] == {**lines[-1], "stage": "summary", "status": "refused", "exit_code": 1}


def test_mdx_in_a_policy_file_is_used_and_checked(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "page.md").write_text("# Page\n\n<Tabs>\n\nInside.\n\n</Tabs>\n")
    policy = tmp_path / "policy.yaml"
    policy.write_text("mdx: 'on'\n")
    out = tmp_path / "o"
    result = cli("run", str(src), "--out", str(out), "--policy", str(policy), "--table", "blocks")
    assert result.exit_code == 0, result.output
    kinds = pl.read_parquet(runstore.resolve(out) / "blocks.parquet")["kind"].to_list()
    assert "mdx_jsx" in kinds
    policy.write_text("mdx: sometimes\n")
    result = cli("run", str(src), "--out", str(tmp_path / "o2"), "--policy", str(policy))
    assert result.exit_code == 2 and "mdx must be one of auto, on, off" in result.output


def test_front_matter_dates_match_a_meta_filter(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("---\ncreated: 2024-12-23\n---\n# Release\n\nThe compactor.\n")
    out = tmp_path / "o"
    assert cli("run", str(src), "--out", str(out)).exit_code == 0
    hits = api.search(out, "compactor", fm_key="created", fm_value="2024-12-23")
    assert hits.height == 1


def test_max_bytes_applies_to_reused_documents(sample, tmp_path):
    out = tmp_path / "o"
    assert cli("run", str(sample), "--out", str(out)).exit_code == 0
    biggest = max(sample.rglob("*.md"), key=lambda p: p.stat().st_size)
    limit = str(biggest.stat().st_size - 1)
    result = cli("run", str(sample), "--out", str(out), "--max-bytes", limit)
    assert result.exit_code == 0, result.output
    rejects = pl.read_parquet(runstore.resolve(out) / "rejects.parquet")
    assert rejects.select("path", "reason").rows() == [
        (biggest.relative_to(sample).as_posix(), "too_large")
    ]


def test_skipped_entries_are_counted_by_reason(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# A\n\ntext\n")
    (src / "logo.png").write_bytes(b"\x89PNG")
    (src / ".drafts").mkdir()
    (src / ".drafts" / "b.md").write_text("# B\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "c.md").write_text("# C\n")
    (src / "linked").symlink_to(elsewhere, target_is_directory=True)
    out = src / "out"  # --out inside INPUT
    for _ in range(2):  # the second run finds the first run's output inside INPUT
        result = cli("run", str(src), "--out", str(out))
        assert result.exit_code == 0, result.output
    assert "4 skipped (1 hidden, 1 inside --out, 1 not markdown, 1 symlink)" in result.output
    docs = pl.read_parquet(runstore.resolve(out) / "documents.parquet")
    assert docs["path"].to_list() == ["a.md"]


def test_several_inputs_never_collide(tmp_path):
    for name in ("en", "fr"):
        (tmp_path / name / "guide").mkdir(parents=True)
        (tmp_path / name / "guide" / "index.md").write_text(f"# Guide {name}\n\nText {name}.\n")
    out = tmp_path / "o"
    result = cli("run", str(tmp_path / "en"), str(tmp_path / "fr"), "--out", str(out))
    assert result.exit_code == 0, result.output
    docs = pl.read_parquet(runstore.resolve(out) / "documents.parquet")
    assert docs["path"].to_list() == ["en/guide/index.md", "fr/guide/index.md"]
    assert docs["doc_id"].n_unique() == 2
    assert cli("check", str(out)).exit_code == 0  # unique chunk ids among others
    # the same folder name twice is refused; --name tells them apart
    (tmp_path / "v2" / "en").mkdir(parents=True)
    (tmp_path / "v2" / "en" / "x.md").write_text("# X\n")
    twice = [str(tmp_path / "en"), str(tmp_path / "v2" / "en")]
    result = cli("run", *twice, "--out", str(tmp_path / "o2"))
    assert result.exit_code == 2 and "two INPUTs have the label 'en'" in result.output
    result = cli("run", *twice, "--name", f"new={twice[1]}", "--out", str(tmp_path / "o2"))
    assert result.exit_code == 0, result.output
    paths = pl.read_parquet(runstore.resolve(tmp_path / "o2") / "documents.parquet")["path"]
    assert paths.to_list() == ["en/guide/index.md", "new/x.md"]
    # one INPUT keeps its plain paths (existing output folders keep their ids)
    result = cli("run", str(tmp_path / "en"), "--out", str(tmp_path / "o3"))
    paths = pl.read_parquet(runstore.resolve(tmp_path / "o3") / "documents.parquet")["path"]
    assert paths.to_list() == ["guide/index.md"]


def test_an_unexpected_error_is_one_line_unless_debug(sample, tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("something broke\nover two lines")

    monkeypatch.setattr(api, "run", boom)
    result = cli("run", str(sample), "--out", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert result.output.strip() == (
        "chunkmill run: error: RuntimeError: something broke over two lines (--debug shows where)"
    )
    result = cli("--debug", "run", str(sample), "--out", str(tmp_path / "o"))
    assert isinstance(result.exception, RuntimeError)


def test_ctrl_c_stops_within_two_seconds_with_exit_130(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    para = "Words about the store, its log, its index and its compactor. " * 12
    for i in range(1200):
        body = "\n\n".join(f"## Part {j}\n\n{para}" for j in range(8))
        (src / f"doc{i:04d}.md").write_text(f"# Document {i}\n\n{body}\n")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "chunkmill", "run", str(src), "--out", str(out)]
    assert subprocess.run(cmd, cwd=REPO, capture_output=True).returncode == 0
    published = runstore.published(out).name
    (src / "doc0000.md").write_text("# Changed\n\nNew text.\n")
    proc = subprocess.Popen([*cmd, "--full"], cwd=REPO, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / runstore.LOCK).exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.01)
    time.sleep(0.5)  # into the work
    assert proc.poll() is None, "the run ended before it could be interrupted"
    os.kill(proc.pid, signal.SIGINT)
    sent = time.monotonic()
    proc.wait(timeout=30)
    assert time.monotonic() - sent < 2.0
    assert proc.returncode == 130
    stderr = proc.stderr.read()
    assert "interrupted (Ctrl-C)" in stderr and "status=failed published=False" in stderr
    assert runstore.history(out)[-1]["status"] == "failed"
    assert runstore.published(out).name == published
    assert not (out / runstore.LOCK).exists()


def test_few_large_files_still_use_the_workers(tmp_path, monkeypatch):
    # batches end at 1 MB too: three files of 600 kB are three batches, not one
    from chunkmill.jobs import run_job
    from tests.helpers import sentences

    src = tmp_path / "src"
    src.mkdir()
    body = "\n\n".join(sentences(8, start=i) for i in range(1500))
    for name in ("a", "b", "c"):
        (src / f"{name}.md").write_text(f"# {name}\n\n{body}\n")
    assert (src / "a.md").stat().st_size > 500_000
    plan = run_job.sources.plan([str(src)], run_job.sources.Selection())
    assert not run_job._one_batch(plan)
    small = tmp_path / "small"
    shutil.copytree(SAMPLE, small)
    assert run_job._one_batch(run_job.sources.plan([str(small)], run_job.sources.Selection()))


def test_nan_is_no_timeout_and_utf16_is_named(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "windows.md").write_bytes("# Notes\n\nSaved by Notepad.\n".encode("utf-16"))
    (src / "wide.md").write_bytes("# Notes\n\nFour bytes each.\n".encode("utf-32"))
    (src / "wide-be.md").write_bytes(b"\x00\x00\xfe\xff" + "# Big end\n".encode("utf-32-be"))
    (src / "ok.md").write_text("# Fine\n\ntext\n")
    result = CliRunner().invoke(
        main, ["run", str(src), "--out", str(tmp_path / "o"), "--doc-timeout", "nan"]
    )
    assert result.exit_code == 2 and "nan is not a number of seconds" in result.output
    with pytest.raises(ValueError, match="doc_timeout"):
        api.run([str(src)], tmp_path / "o2", doc_timeout=float("nan"))
    result = CliRunner().invoke(main, ["run", str(src), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    rejects = pl.read_parquet(runstore.resolve(tmp_path / "o") / "rejects.parquet")
    assert dict(zip(rejects["path"], rejects["detail"])) == {
        "windows.md": "UTF-16 text (byte order mark at byte 0): save it as UTF-8",
        "wide.md": "UTF-32 text (byte order mark at byte 0): save it as UTF-8",
        "wide-be.md": "UTF-32 text (byte order mark at byte 0): save it as UTF-8",
    }
