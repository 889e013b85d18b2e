"""Publish guards: a run that would do damage publishes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chunkmill.jobs import run_job
from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from tests.conftest import SAMPLE
from tests.helpers import SMALL_FLAGS


def cli(src: Path, out: Path, *flags: str):
    return CliRunner().invoke(main, ["run", str(src), "--out", str(out), *SMALL_FLAGS, *flags])


@pytest.fixture
def published(tmp_path):
    """A copy of the sample corpus and an output folder with one published run."""
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    out = tmp_path / "out"
    result = cli(src, out)
    assert result.exit_code == 0, result.output
    return src, out, runstore.published(out).name


def state(out: Path) -> tuple:
    """What readers see: the published run, and the run folders on disk."""
    folder = runstore.published(out)
    return (folder and folder.name, sorted(p.name for p in (out / "runs").iterdir()))


def test_empty_input_publishes_nothing(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli(empty, tmp_path / "new")
    assert result.exit_code == 1
    assert "no document was read from INPUT" in result.output
    assert "Nothing was published" in result.output
    assert not (tmp_path / "new").exists()  # the folder it made is gone with the run
    missing = cli(tmp_path / "no-such-input", tmp_path / "new")
    assert missing.exit_code == 2 and not (tmp_path / "new").exists()
    # into a folder that was there: the refusal is recorded in it
    (tmp_path / "out").mkdir()
    result = cli(empty, tmp_path / "out")
    assert result.exit_code == 1 and "Nothing was published" in result.output
    assert runstore.published(tmp_path / "out") is None
    assert [r["status"] for r in runstore.history(tmp_path / "out")] == ["refused"]
    # the readers say there is no published run yet, once, as a usage error
    for command in ("stats", "check", "search"):
        args = [command, str(tmp_path / "out")] + (["word"] if command == "search" else [])
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, result.output
        assert result.output.count("no published run yet (1 refused)") == 1, result.output
    # every file rejected: the refusal says why, by reason
    (empty / "a.md").write_bytes(b"\xff\xfe not UTF-8")
    (empty / "b.md").write_text("# B\n\n" + "words " * 100)
    (empty / "notes.txt.orig").write_text("x")
    result = cli(empty, tmp_path / "out2", "--max-bytes", "200")
    assert result.exit_code == 1
    assert "(2 rejected (1 invalid_utf8, 1 too_large); 1 skipped (1 not markdown))" in (
        result.output
    )
    result = cli(empty, tmp_path / "out3", "--max-bytes", "-1")
    assert result.exit_code == 2 and "--max-bytes" in result.output


def test_a_mistyped_include_publishes_nothing(published):
    src, out, before = published
    history = len(runstore.history(out))
    result = cli(src, out, "--include", "*.mdd")
    assert result.exit_code == 1
    assert "no document was read" in result.output and "remove all" in result.output
    assert state(out) == (before, [before])
    assert runstore.history(out)[-1]["status"] == "refused"
    assert len(runstore.history(out)) == history + 1
    # intended: allowed, and then the empty run is published
    result = cli(src, out, "--include", "*.mdd", "--allow-mass-delete")
    assert result.exit_code == 0, result.output
    assert runstore.published(out).name != before


def test_removing_most_chunks_is_refused_naming_the_counts(published):
    src, out, before = published
    total = runstore.history(out)[-1]["chunks_total"]
    for path in sorted(src.rglob("*.md"))[:8]:
        path.unlink()
    result = cli(src, out)
    assert result.exit_code == 4, result.output
    assert f"of the {total} published chunks" in result.output and "--max-removed 50%" in (
        result.output
    )
    assert state(out) == (before, [before])
    assert cli(src, out, "--max-removed", "0.99").exit_code == 0


def test_edits_that_replace_most_chunks_are_not_a_mass_removal(published):
    """The guard counts the chunks of documents the run no longer holds (gone or
    rejected), not chunks replaced by new ones of the same document: a new title in every
    front matter changes every context header, so every chunk id, and removes nothing."""
    src, out, before = published
    total = runstore.history(out)[-1]["chunks_total"]
    for path in sorted(src.rglob("*.md")):
        path.write_text(f"---\ntitle: Renamed {path.stem}\n---\n" + path.read_text())
    result = cli(src, out)
    assert result.exit_code == 0, result.output
    record = runstore.history(out)[-1]
    assert record["chunks_removed"] > total / 2 and record["documents_deleted"] == 0
    # rejected documents still count as lost: most of them over --max-bytes is refused
    now = runstore.published(out).name
    result = cli(src, out, "--max-bytes", "200")
    assert result.exit_code == 4, result.output
    assert "those of documents it no longer reads or rejects" in result.output
    assert state(out)[0] == now


def test_a_policy_change_is_refused_naming_the_fields(published):
    src, out, before = published
    total = runstore.history(out)[-1]["chunks_total"]
    flags = ["--target-tokens", "90", "--max-tokens", "110", "--min-tokens", "20"]
    result = CliRunner().invoke(main, ["run", str(src), "--out", str(out), *flags])
    assert result.exit_code == 4, result.output
    assert "max_tokens 100 -> 110" in result.output
    assert "target_tokens 60 -> 90" in result.output
    assert "overlap_tokens 10 -> 9" in result.output  # the forgotten flag: 8/75 of 90
    assert f"all {total} published chunk ids would change" in result.output
    assert state(out) == (before, [before])
    result = CliRunner().invoke(
        main, ["run", str(src), "--out", str(out), *flags, "--overlap-tokens", "10", "--new-policy"]
    )
    assert result.exit_code == 0, result.output
    assert runstore.history(out)[-1]["chunks_removed"] == total  # every id changed


def test_output_of_the_estimate_default_is_refused_by_the_exact_default(tmp_path):
    # output made when the estimate was the default counter: the default's cl100k counts
    # would change every id; the message says how to keep the published counts
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(SAMPLE, src)
    assert cli(src, out, "--tokenizer", "estimate").exit_code == 0
    total = runstore.history(out)[-1]["chunks_total"]
    before = state(out)
    result = cli(src, out)
    assert result.exit_code == 4, result.output
    assert "tokenizer 'estimate' -> 'tiktoken:cl100k_base'" in result.output
    assert f"all {total} published chunk ids would change" in result.output
    assert "`--tokenizer estimate` keeps the published counts" in result.output
    assert state(out) == before
    result = cli(src, out, "--tokenizer", "estimate")
    assert result.exit_code == 0, result.output
    assert runstore.history(out)[-1]["chunks_kept"] == total


def test_a_new_chunker_version_is_a_policy_change(published, monkeypatch):
    src, out, before = published
    published_version = run_job.CHUNKER_VERSION
    monkeypatch.setattr(run_job, "CHUNKER_VERSION", "chunkmill-next")
    result = cli(src, out)
    assert result.exit_code == 4
    assert f"chunker_version '{published_version}' -> 'chunkmill-next'" in result.output
    assert state(out) == (before, [before])


def test_dry_run_publishes_nothing(published):
    src, out, before = published
    history = runstore.history(out)
    (src / "index.md").write_text("# Changed\n\nAll new text.\n")
    result = cli(src, out, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "dry run, nothing published" in result.output
    assert "documents +0 ~1" in result.output
    assert state(out) == (before, [before])
    assert runstore.history(out) == history
    # a dry run is how a policy change is previewed: not refused, the change named
    result = cli(src, out, "--dry-run", "--overlap-tokens", "11")
    assert result.exit_code == 0, result.output
    assert "overlap_tokens 10 -> 11" in result.output and "needs --new-policy" in result.output
    assert state(out) == (before, [before])
    assert runstore.history(out) == history


def test_a_policy_change_over_no_chunk_is_not_refused(tmp_path):
    # the published run holds no chunk: no id can change, nothing to embed again
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    assert cli(empty, out, "--allow-mass-delete").exit_code == 0
    (empty / "a.md").write_text("# A\n\nSome text.\n")
    result = cli(empty, out, "--context-keys", "")
    assert result.exit_code == 0, result.output


def test_the_python_api_has_the_same_guards(published, tmp_path):
    import chunkmill
    from chunkmill.jobs.runlog import RunLog

    src, out, before = published
    quiet = dict(workers=1, log=RunLog(quiet=True))
    small = chunkmill.Policy(target_tokens=60, max_tokens=100, min_tokens=20, overlap_tokens=10)
    with pytest.raises(chunkmill.Refused) as refused:
        chunkmill.run(src, out, **quiet)  # the default policy is not the published one
    assert refused.value.code == 4 and "max_tokens 100 -> 1000" in str(refused.value)
    with pytest.raises(chunkmill.Refused) as refused:
        chunkmill.run(src, out, policy=small, include=["*.nothing"], **quiet)
    assert refused.value.code == 1
    (src / "index.md").write_text("# Changed\n\nAll new text.\n")
    summary = chunkmill.run(src, out, policy=small, dry_run=True, **quiet)
    assert summary.dry_run and summary.record["documents_changed"] == 1
    assert state(out) == (before, [before])
    summary = chunkmill.run(
        src, out, policy=small.replace(max_tokens=120), new_policy=True, **quiet
    )
    assert runstore.published(out).name == summary.run_id != before
    assert [r["status"] for r in runstore.history(out)][-3:] == ["refused", "refused", "published"]


def test_a_forgotten_link_template_is_refused_and_new_policy_keeps_the_ids(tmp_path):
    # every url would go (op update to consumers) though no id changes: held like any
    # other policy field, and --new-policy accepts it without changing an id
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(SAMPLE, src)
    template = "https://docs.example.com/{path_stem}#{anchor}"
    assert cli(src, out, "--link-template", template).exit_code == 0
    before = runstore.published(out).name
    ids = pq.read_table(runstore.published(out) / "chunks.parquet")["chunk_id"].to_pylist()
    result = cli(src, out)  # the nightly command without --link-template
    assert result.exit_code == 4, result.output
    assert f"link_template {template!r} -> ''" in result.output
    assert "no chunk id changes" in result.output and "--new-policy" in result.output
    assert state(out) == (before, [before])
    result = cli(src, out, "--dry-run")
    assert result.exit_code == 0 and "needs --new-policy" in result.output
    result = cli(src, out, "--new-policy")
    assert result.exit_code == 0, result.output
    chunks = pq.read_table(runstore.published(out) / "chunks.parquet")
    assert chunks["chunk_id"].to_pylist() == ids
    assert chunks["url"].null_count == chunks.num_rows
    assert runstore.history(out)[-1]["chunks_updated"] == len(ids)


def _sections(n: int) -> str:
    part = "## Part {i}\n\nSome words about part {i}, long enough.\n\n```py\nx = {i}\n```\n\n"
    return "".join(part.format(i=i) for i in range(n))


@pytest.mark.parametrize(
    "option, value",
    [
        ("--doc-memory", "260"),  # 60,000 sections need more than that in a worker
        ("--doc-timeout", "0.3"),  # and take about a second
    ],
)
def test_documents_rejected_at_a_worker_limit_name_that_limit(tmp_path, option, value):
    """A document rejected at --doc-memory or --doc-timeout is read by raising that limit:
    every message about the run says so (not --max-bytes, not --allow-mass-delete)."""
    src, out = tmp_path / "src", tmp_path / "out"
    unit = "MB" if option == "--doc-memory" else "s"
    raise_it = f"run again with {option} above {value} {unit}"
    src.mkdir()
    shutil.copy(SAMPLE / "index.md", src / "index.md")
    (src / "big.md").write_text(_sections(200))
    assert cli(src, out).exit_code == 0
    (src / "big.md").write_text(_sections(60_000))
    # its published chunks (most of the run's) would go: refused, naming the limit
    result = cli(src, out, option, value)
    assert result.exit_code == 4, result.output
    assert raise_it in result.output and "--allow-mass-delete" not in result.output
    # published beside another document: the summary names the limit
    result = cli(src, tmp_path / "fresh", option, value)
    assert result.exit_code == 0, result.output
    assert f"at {option} {value} {unit}" in result.output
    # alone: no document read, refused, naming the limit
    (src / "index.md").unlink()
    result = cli(src, tmp_path / "alone", option, value)
    assert result.exit_code == 1, result.output
    assert raise_it in result.output
    assert "--max-bytes" not in result.output and "--allow-mass-delete" not in result.output
