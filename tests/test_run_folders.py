"""The run folders of an output folder: cleanup removes only what the run store made and
says what it could not remove; --keep counts the runs that changed something; --out must
be empty, missing, or a run store."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from chunkmill import Policy
from chunkmill import run as api_run
from chunkmill.jobs.cli.main import main
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline import runstore
from tests.conftest import SAMPLE
from tests.helpers import SMALL_FLAGS

POLICY = Policy(target_tokens=60, max_tokens=100, min_tokens=20, overlap_tokens=10)


def _run(src: Path, out: Path, **options):
    stream = io.StringIO()
    log = RunLog(stream=stream)
    summary = api_run([str(src)], out, policy=POLICY, workers=1, log=log, **options)
    return summary, stream.getvalue()


def _edit(src: Path, n: int) -> None:
    index = src / "index.md"
    index.write_text(index.read_text() + f"\n## Note {n}\n\nA closing note, number {n}.\n")


@pytest.fixture
def src(tmp_path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "src")
    return tmp_path / "src"


def test_cleanup_leaves_look_alikes_the_store_did_not_make(src, tmp_path):
    out = tmp_path / "out"
    _run(src, out)
    runs = out / runstore.RUNS
    folder, plain, link = (runs / f"20200101T00000{i}Z-abcdef" for i in range(3))
    folder.mkdir()
    (folder / "mine.txt").write_text("not a run")
    plain.write_text("a plain file")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "mine.txt").write_text("not a run either")
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    _edit(src, 1)
    _run(src, out, keep=1)  # a start and a prune
    assert (folder / "mine.txt").exists() and plain.read_text() == "a plain file"
    assert link.is_symlink() and (tmp_path / "elsewhere" / "mine.txt").exists()
    recorded = {r["run_id"] for r in runstore.history(out)}
    assert not recorded & {folder.name, plain.name, link.name}


def _failing_rmtree(monkeypatch, name: str) -> None:
    """The folder ``name`` cannot be removed (as when its parent is read-only)."""
    real = os.rmdir

    def rmdir(path, *args, **kwargs):
        if Path(path).name == name:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", rmdir)


def test_a_run_folder_that_cannot_be_pruned_is_reported(src, tmp_path, monkeypatch):
    out = tmp_path / "out"
    first, _ = _run(src, out)
    _edit(src, 1)
    _failing_rmtree(monkeypatch, first.run_id)
    _, log = _run(src, out, keep=1)
    lines = [line for line in log.splitlines() if first.run_id in line and "warning" in line]
    assert len(lines) == 1 and "could not be removed" in lines[0]
    monkeypatch.undo()
    _edit(src, 2)
    _run(src, out, keep=1)
    assert not runstore.run_dir(out, first.run_id).exists()  # the next run removes it


def test_a_left_over_run_folder_that_cannot_be_removed_is_reported(src, tmp_path, monkeypatch):
    out = tmp_path / "out"
    _run(src, out)
    left = runstore.run_dir(out, "20200101T000000Z-abcdef")
    left.mkdir()  # an empty run folder, as a run killed at its start leaves it
    _failing_rmtree(monkeypatch, left.name)
    _, log = _run(src, out)
    lines = [line for line in log.splitlines() if left.name in line and "warning" in line]
    assert len(lines) == 1 and "could not be removed" in lines[0]
    monkeypatch.undo()
    _run(src, out)
    assert not left.exists()


# --- --keep counts the runs that changed something ----------------------------------------


def test_keep_does_not_count_runs_that_changed_nothing(src, tmp_path):
    out = tmp_path / "out"
    keep = 2
    first, _ = _run(src, out, keep=keep)
    _edit(src, 1)
    second, _ = _run(src, out, keep=keep)
    for _ in range(keep + 1):
        quiet, _ = _run(src, out, keep=keep)
        assert quiet.record["chunks_added"] == quiet.record["chunks_removed"] == 0
    assert runstore.run_dir(out, first.run_id).is_dir()
    assert runstore.run_dir(out, second.run_id).is_dir()
    assert runstore.run_folders(out) == [first.run_id, second.run_id, quiet.run_id]
    result = CliRunner().invoke(main, ["publish", str(out), first.run_id])
    assert result.exit_code == 0, result.output
    assert runstore.pointed(out).run_id == first.run_id


# --- --out holds a run store, or nothing -----------------------------------------------------


def _cli_run(src: Path, out: Path):
    args = ["run", str(src), "--out", str(out), "--workers", "1", *SMALL_FLAGS]
    return CliRunner().invoke(main, args)


def test_out_of_the_users_own_files_is_refused(src, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my own notes")
    result = _cli_run(src, out)
    assert result.exit_code == 2 and str(out) in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("where", ["missing", "empty", "a run store", "inside INPUT"])
def test_out_that_is_empty_missing_or_a_run_store_is_used(src, tmp_path, where):
    out = src / "out" if where == "inside INPUT" else tmp_path / "out"
    if where == "empty":
        out.mkdir()
    if where == "a run store":
        assert _cli_run(src, out).exit_code == 0
    result = _cli_run(src, out)
    assert result.exit_code == 0, result.output
    assert runstore.pointed(out).run_id is not None
    if where == "inside INPUT":  # the second run lists INPUT with the run store in it
        assert _cli_run(src, out).exit_code == 0
