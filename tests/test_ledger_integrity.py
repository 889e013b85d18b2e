"""The ledger of an output folder is checked against the checksum written beside it: a
damaged ledger fails `chunkmill check`, is refused by a run (which says how to recover) and by
`chunkmill changes`, and `chunkmill run --full` starts a new one. When the published run cannot
be read, its chunk ids come from the ledger, so changes.parquet removes what the ledger
removes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill import Policy
from chunkmill import run as api_run
from chunkmill.jobs.cli.main import main
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline import queries, runstore
from chunkmill.pipeline.runstore import ledger, parquet_files
from tests.conftest import SAMPLE
from tests.helpers import SMALL_FLAGS

POLICY = Policy(target_tokens=60, max_tokens=100, min_tokens=20, overlap_tokens=10)


def _run(src: Path, out: Path, **options):
    return api_run([str(src)], out, policy=POLICY, workers=1, log=RunLog(quiet=True), **options)


def _cli_run(src: Path, out: Path, *flags: str):
    args = ["run", str(src), "--out", str(out), "--workers", "1", *SMALL_FLAGS, *flags]
    return CliRunner().invoke(main, args)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """An output folder with two published runs of the sample corpus (an edit between)."""
    root = tmp_path_factory.mktemp("two_runs")
    src = root / "src"
    shutil.copytree(SAMPLE, src)
    first = _run(src, root / "out").run_id
    index = src / "index.md"
    index.write_text(index.read_text() + "\n## Added later\n\nA new closing section.\n")
    second = _run(src, root / "out").run_id
    return src, root / "out", first, second


def _copy(two_runs, tmp_path: Path):
    src, out, first, second = two_runs
    shutil.copytree(src, tmp_path / "src")
    shutil.copytree(out, tmp_path / "out", symlinks=True)
    return tmp_path / "src", tmp_path / "out", first, second


def _flip(path: Path, share: float) -> None:
    data = bytearray(path.read_bytes())
    data[int((len(data) - 1) * share)] ^= 0x04
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("share", [i / 19 for i in range(20)])
def test_a_flipped_byte_anywhere_in_the_ledger_is_found(two_runs, tmp_path, share):
    _, out, _, _ = _copy(two_runs, tmp_path)
    assert ledger.problem(out) is None
    _flip(out / ledger.LEDGER, share)
    assert ledger.LEDGER in ledger.problem(out)
    with pytest.raises(ledger.LedgerDamaged):
        ledger.read(out / ledger.LEDGER)


def test_a_damaged_ledger_fails_check_refuses_the_run_and_full_starts_a_new_one(two_runs, tmp_path):
    src, out, first, second = _copy(two_runs, tmp_path)
    _flip(out / ledger.LEDGER, 0.5)

    result = CliRunner().invoke(main, ["check", str(out)])
    assert result.exit_code == 1 and "FAIL  ledger" in result.output
    assert ledger.LEDGER in result.output

    result = CliRunner().invoke(main, ["changes", str(out), "--since", first])
    assert result.exit_code == 1 and ledger.LEDGER in result.output
    assert "--full" in result.output and len(result.output.strip().splitlines()) == 1

    result = _cli_run(src, out)
    assert result.exit_code == 4, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert ledger.LEDGER in result.output and "--full" in result.output
    assert runstore.pointed(out).run_id == second  # nothing published
    assert runstore.history(out)[-1]["status"] == "refused"

    (src / "guides").rename(tmp_path / "guides")  # removes to tell apart, after recovery
    result = _cli_run(src, out, "--full", "--allow-mass-delete")
    assert result.exit_code == 0, result.output
    assert ledger.problem(out) is None
    assert all(rows.is_empty() for rows in queries.checks(out).values())
    _, pubs = ledger.read(out / ledger.LEDGER)
    now = runstore.pointed(out).run_id
    assert [(p["run"], p["kind"]) for p in pubs] == [(second, "start"), (now, "run")]
    changes = pl.read_parquet(runstore.resolve(out) / "changes.parquet")
    since = ledger.changes_since(out, second)
    assert _ops(since) == _ops(changes) and _ops(changes)["remove"]
    result = CliRunner().invoke(main, ["changes", str(out), "--since", first])
    assert result.exit_code == 2 and "never published here" in result.output


def _ops(table) -> dict[str, set[str]]:
    frame = table if isinstance(table, pl.DataFrame) else pl.from_arrow(table)
    return {op: set(frame.filter(pl.col("op") == op)["chunk_id"]) for op in ("add", "remove")}


def test_a_damaged_checksum_file_is_damage_too(two_runs, tmp_path):
    _, out, _, _ = _copy(two_runs, tmp_path)
    (out / ledger.CHECKSUM).write_text("{not json")
    assert ledger.CHECKSUM in ledger.problem(out)


def test_a_write_stopped_between_checksum_and_ledger_leaves_a_sound_ledger(
    two_runs, tmp_path, monkeypatch
):
    src, out, _, second = _copy(two_runs, tmp_path)
    before = (out / ledger.LEDGER).read_bytes()
    real = ledger.write_atomic

    def stop_at_the_ledger(path, data, durable=True):
        if path.name == ledger.LEDGER:
            raise KeyboardInterrupt
        real(path, data, durable)

    monkeypatch.setattr(ledger, "write_atomic", stop_at_the_ledger)
    index = src / "index.md"
    index.write_text(index.read_text() + "\nOne more line.\n")
    with pytest.raises(KeyboardInterrupt):
        _run(src, out)
    monkeypatch.undo()
    assert json.loads((out / ledger.CHECKSUM).read_text())["previous"] is not None
    assert (out / ledger.LEDGER).read_bytes() == before and ledger.problem(out) is None
    assert runstore.pointed(out).run_id == second
    _run(src, out)  # the next run goes on from the ledger as it was
    changes = pl.read_parquet(runstore.resolve(out) / "changes.parquet")
    assert _ops(ledger.changes_since(out, second)) == _ops(changes) and ledger.problem(out) is None


def test_a_ledger_without_its_checksum_is_damaged_not_read_unchecked(two_runs, tmp_path):
    src, out, first, _ = _copy(two_runs, tmp_path)
    (out / ledger.CHECKSUM).unlink()
    assert "ledger.sha256 is missing" in ledger.problem(out)
    with pytest.raises(ledger.LedgerDamaged, match="--full"):
        ledger.changes_since(out, first)
    result = CliRunner().invoke(main, ["check", str(out)])
    assert result.exit_code == 1 and "FAIL  ledger" in result.output
    refused = _cli_run(src, out)
    assert refused.exit_code == 4 and "--full" in refused.output
    assert not (out / ledger.CHECKSUM).exists()  # not stamped again as if it were sound
    assert _cli_run(src, out, "--full").exit_code == 0
    assert ledger.problem(out) is None


# --- the published run cannot be read: the removes come from the ledger ------------------


def _delete_published(out: Path) -> None:
    shutil.rmtree(runstore.resolve(out))


def _garble_pointer(out: Path) -> None:
    (out / runstore.POINTER).write_text("garbage")


def _truncate_chunks(out: Path) -> None:
    path = parquet_files.parts(runstore.resolve(out), "chunks")[0]
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _delete_pointer(out: Path) -> None:
    (out / runstore.POINTER).unlink()
    (out / runstore.LINK).unlink()


def _point_nowhere(out: Path) -> None:
    (out / runstore.POINTER).write_text(json.dumps({"run": "20990101T000000000Z-abcdef"}))


UNREADABLE = {
    "published folder deleted": _delete_published,
    "CURRENT damaged": _garble_pointer,
    "chunks file truncated": _truncate_chunks,
    "CURRENT deleted": _delete_pointer,
    "CURRENT names no run": _point_nowhere,
}


@pytest.mark.parametrize("damage", UNREADABLE)
def test_an_unreadable_published_run_removes_what_the_ledger_removes(two_runs, tmp_path, damage):
    src, out, _, second = _copy(two_runs, tmp_path)
    shutil.rmtree(src / "guides")
    UNREADABLE[damage](out)
    _run(src, out, allow_mass_delete=True)
    changes = pl.read_parquet(runstore.resolve(out) / "changes.parquet")
    removed = set(changes.filter(pl.col("op") == "remove")["chunk_id"])
    expected = _ops(ledger.changes_since(out, second))["remove"]
    assert removed == expected and len(expected) > 0
    paths = changes.filter(pl.col("op") == "remove")["path"]
    assert all(p.startswith("guides/") for p in paths)


@pytest.mark.parametrize("damage", ["CURRENT deleted", "CURRENT names no run"])
def test_a_run_over_a_lost_pointer_says_so(two_runs, tmp_path, damage):
    src, out, _, second = _copy(two_runs, tmp_path)
    UNREADABLE[damage](out)
    result = _cli_run(src, out, "--allow-mass-delete")
    assert result.exit_code == 0, result.output
    warning = [line for line in result.output.splitlines() if "warning" in line]
    assert any(str(out / runstore.POINTER) in w or "CURRENT" in w for w in warning), warning
    assert any(f"run {second}" in w for w in warning), warning


def test_a_rollback_over_a_damaged_ledger_is_refused_before_it_writes(two_runs, tmp_path):
    _, out, first, second = _copy(two_runs, tmp_path)
    _flip(out / ledger.LEDGER, 0.3)
    folder = runstore.run_dir(out, first)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    result = CliRunner().invoke(main, ["publish", str(out), first])
    assert result.exit_code == 2 and ledger.LEDGER in result.output and "--full" in result.output
    assert runstore.pointed(out).run_id == second
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_the_checksum_travels_with_the_ledger_to_an_object_store(tmp_path):
    out = f"file://{tmp_path}/store/out"
    assert _cli_run(SAMPLE, out).exit_code == 0
    assert (tmp_path / "store" / "out" / ledger.CHECKSUM).exists()
    _flip(tmp_path / "store" / "out" / ledger.LEDGER, 0.5)
    result = CliRunner().invoke(main, ["check", out])
    assert result.exit_code == 1 and "FAIL  ledger" in result.output
    result = _cli_run(SAMPLE, out)
    assert result.exit_code == 4 and "--full" in result.output
    assert _cli_run(SAMPLE, out, "--full").exit_code == 0
    result = CliRunner().invoke(main, ["check", out])
    assert result.exit_code == 0 and "ok    ledger" in result.output
