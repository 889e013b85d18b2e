"""The run store under kills, races and damage: one source of truth for
"published", a lock the kernel keeps honest, checksums verified before reuse."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill import Policy
from chunkmill import run as api_run
from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import queries, runstore
from chunkmill.pipeline.runstore import lock, manifest, parquet_files
from chunkmill.pipeline.table_names import OPTIONAL_TABLES
from tests.conftest import REPO, SAMPLE
from tests.helpers import EVERY_TABLE, table_bytes

POLICY_A = Policy(target_tokens=60, max_tokens=100, min_tokens=20, overlap_tokens=10)
POLICY_B = Policy(target_tokens=90, max_tokens=140, min_tokens=30, overlap_tokens=15)
CONTENT = ["documents", "blocks", "chunks", "postings", "rejects"]

# A run in a child process that SIGKILLs itself right after one step of runstore.commit.
KILLED_RUN = """
import os, signal, sys
from chunkmill import Policy, run
from chunkmill.pipeline import runstore

step, src, out = sys.argv[1:4]
def checkpoint(name):
    if name == step:
        os.kill(os.getpid(), signal.SIGKILL)
runstore.checkpoint = checkpoint
run([src], out, policy=Policy(**{policy}), workers=1, new_policy=True)
"""


def _policy_kwargs(policy: Policy) -> str:
    return repr({f: getattr(policy, f) for f in ("target_tokens", "max_tokens", "min_tokens")}
                | {"overlap_tokens": policy.overlap_tokens})  # fmt: skip


def _quiet_run(src: Path, out: Path, policy: Policy, **options):
    from chunkmill.jobs.runlog import RunLog

    options.setdefault("tables", OPTIONAL_TABLES)  # every table: damage to any is tested
    return api_run([str(src)], out, policy=policy, workers=1, log=RunLog(quiet=True), **options)


def _chunks(out: Path) -> pl.DataFrame:
    return pl.read_parquet(runstore.resolve(out) / "chunks.parquet")


def _all_checks_hold(out: Path) -> bool:
    return all(rows.is_empty() for rows in queries.checks(out).values())


def _published_consistently(out: Path) -> str:
    """CURRENT names a complete run whose every chunk carries the policy its manifest
    records, all checks hold, and the history agrees. Returns the run id."""
    pub = runstore.current(out)
    assert pub.usable, pub.problem
    hashes = set(_chunks(out)["policy_hash"])
    assert hashes == {pub.manifest["policy_hash"]}
    assert _all_checks_hold(out)
    published = [r["run_id"] for r in runstore.history(out) if r["status"] == "published"]
    assert published[-1] == pub.run_id
    return pub.run_id


@pytest.fixture(scope="module")
def published_a(tmp_path_factory):
    """An output folder with one run of the sample corpus under policy A published."""
    root = tmp_path_factory.mktemp("published_a")
    src = root / "src"
    shutil.copytree(SAMPLE, src)
    _quiet_run(src, root / "out", POLICY_A)
    return src, root / "out"


def _copy(published_a, tmp_path) -> tuple[Path, Path]:
    src, out = published_a
    shutil.copytree(out, tmp_path / "out", symlinks=True)
    return src, tmp_path / "out"


@pytest.mark.parametrize("step", runstore.STEPS)
def test_a_kill_at_each_step_of_publishing_leaves_one_run_published(published_a, tmp_path, step):
    src, out = _copy(published_a, tmp_path)
    old_id = runstore.pointed(out).run_id
    script = KILLED_RUN.replace("{policy}", _policy_kwargs(POLICY_B))
    proc = subprocess.run(
        [sys.executable, "-c", script, step, str(src), str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # either the old run or the new one is published, consistently (history included)
    now = _published_consistently(out)
    flipped = runstore.STEPS.index(step) >= runstore.STEPS.index("pointer")
    assert (now != old_id) == flipped
    expected_hash = POLICY_B.policy_hash if flipped else POLICY_A.policy_hash
    assert set(_chunks(out)["policy_hash"]) == {expected_hash}
    before = set(_chunks(out)["chunk_id"])
    (out / ".CURRENT.99999.tmp").write_text("a temporary file left by a killed writer")
    (out / ".notes.tmp").write_text("a file of someone else's, named like a temporary one")

    # the next run, under policy B, builds on what is published and nothing else
    summary = _quiet_run(src, out, POLICY_B, new_policy=True)
    newest = _published_consistently(out)
    assert newest == summary.run_id
    assert set(_chunks(out)["policy_hash"]) == {POLICY_B.policy_hash}
    after = set(_chunks(out)["chunk_id"])
    changes = pl.read_parquet(runstore.resolve(out) / "changes.parquet")
    assert set(changes.filter(pl.col("op") == "add")["chunk_id"]) == after - before
    assert set(changes.filter(pl.col("op") == "remove")["chunk_id"]) == before - after
    assert summary.record["previous_run"] == now
    statuses = {r["run_id"]: r["status"] for r in runstore.history(out)}
    killed = [r for r in statuses if r not in (old_id, newest)]
    assert len(killed) == 1 and statuses[killed[0]] == ("published" if flipped else "abandoned")
    assert flipped or not runstore.run_dir(out, killed[0]).exists()
    assert not (out / ".CURRENT.99999.tmp").exists() and not (out / lock.LOCK).exists()
    assert (out / ".notes.tmp").exists()


# --- the lock ------------------------------------------------------------------------------

HOLDER = """
import json, sys, time
from pathlib import Path
from chunkmill.pipeline.runstore.lock import Lock, LockedError

root, me, partner = Path(sys.argv[1]), sys.argv[2], sys.argv[3]

def wait_for(name):  # bounded: with a broken lock both wait here, then the overlap shows
    deadline = time.time() + 30
    while not (root / name).exists() and time.time() < deadline:
        time.sleep(0.005)

root.mkdir(parents=True, exist_ok=True)
(root / f"arrived-{me}").touch()
wait_for(f"arrived-{partner}")
try:
    with Lock(root):
        t0 = time.time()
        folder = root / "runs" / me
        folder.mkdir(parents=True)
        (folder / "part").write_text("being written")
        wait_for(f"tried-{partner}")  # held until the partner has tried, however late
        intact = (folder / "part").exists()
        t1 = time.time()
    print(json.dumps({"who": me, "in": t0, "out": t1, "intact": intact}))
except LockedError as exc:
    print(json.dumps({"who": me, "refused": str(exc)}))
(root / f"tried-{me}").touch()
"""


@pytest.mark.slow
def test_fifty_simultaneous_pairs_never_both_proceed(tmp_path):
    """Each pair meets at a barrier, then both take the lock of one output folder; a holder
    keeps it until its partner has tried. Whatever the machine's speed, a working lock lets
    exactly one of each pair in and refuses the other while the first holds it; a lock
    that let both in shows as two overlapping holders. Every process reports (no record
    lost) and the holder's files are intact."""
    results = []
    for wave in range(5):  # 10 pairs at a time, each pair on its own output folder
        procs = []
        for pair in range(10):
            root = tmp_path / f"out{wave}-{pair}"
            procs.append(
                [
                    subprocess.Popen(
                        [sys.executable, "-c", HOLDER, str(root), me, other],
                        cwd=REPO,
                        stdout=subprocess.PIPE,
                        text=True,
                    )
                    for me, other in (("a", "b"), ("b", "a"))
                ]
            )
        for pair in procs:
            results.append([json.loads(p.communicate(timeout=300)[0]) for p in pair])
    assert len(results) == 50 and all(len(pair) == 2 for pair in results)
    for a, b in results:
        assert {a["who"], b["who"]} == {"a", "b"}
        entered = [r for r in (a, b) if "in" in r]
        assert all(r["intact"] for r in entered)
        if len(entered) == 2:  # what a broken lock does: say whether they overlapped
            first, second = sorted(entered, key=lambda r: r["in"])
            assert first["out"] <= second["in"], "both held the lock at once"
        assert len(entered) == 1, "the partner was not refused while the lock was held"
        refused = a.get("refused") or b.get("refused")
        assert "is held by" in refused


LOCK_AND_WAIT = """
import sys, time
from pathlib import Path
from chunkmill.pipeline.runstore.lock import Lock

Lock(Path(sys.argv[1])).__enter__()
print("locked", flush=True)
time.sleep(60)
"""


def _unshare_works() -> str | None:
    if shutil.which("unshare") is None:
        return "no unshare command"
    probe = subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare --pid is not permitted here: {probe.stderr.strip()}"
    return None


def test_a_lock_left_in_a_pid_namespace_is_taken_over(tmp_path):
    why = _unshare_works()
    if why:
        pytest.skip(why)
    out = tmp_path / "out"
    holder = subprocess.Popen(
        ["unshare", "--pid", "--fork", sys.executable, "-c", LOCK_AND_WAIT, str(out)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "locked"
    recorded = json.loads((out / lock.LOCK).read_text())
    assert recorded["pid"] == 1  # the run is PID 1 in its namespace, as in a container
    with pytest.raises(lock.LockedError, match="PID 1"):
        lock.Lock(out).__enter__()
    inner = [
        int(c) for c in Path(f"/proc/{holder.pid}/task/{holder.pid}/children").read_text().split()
    ]
    os.kill(inner[0], signal.SIGKILL)  # from outside the namespace: a real kill
    holder.wait(timeout=10)
    assert json.loads((out / lock.LOCK).read_text())["pid"] == 1  # left behind
    result = CliRunner().invoke(main, ["run", str(SAMPLE), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert not (out / lock.LOCK).exists()


def test_a_lock_naming_a_live_unrelated_pid_is_taken_over(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    unrelated = subprocess.Popen(["sleep", "30"])
    try:
        for content in (
            json.dumps({"pid": unrelated.pid, "host": socket.gethostname(), "since": "?"}),
            json.dumps({"pid": 1, "host": "another-host", "since": "?"}),
            str(unrelated.pid),  # the bare PID an older chunkmill wrote
            "",  # a starter killed before it wrote anything
        ):
            (out / lock.LOCK).write_text(content)
            with lock.Lock(out) as held:
                assert json.loads((out / lock.LOCK).read_text())["pid"] == os.getpid()
                assert held.fd is not None
            assert not (out / lock.LOCK).exists()
    finally:
        unrelated.kill()
        unrelated.wait()


def test_a_live_holder_is_refused_with_its_pid(tmp_path):
    out = tmp_path / "out"
    with lock.Lock(out):
        with pytest.raises(lock.LockedError) as refused:
            lock.Lock(out).__enter__()
    assert f"PID {os.getpid()} on {socket.gethostname()}" in str(refused.value)


# --- damage --------------------------------------------------------------------------------


def _cold(src: Path, tmp_path: Path, policy: Policy) -> Path:
    fresh = tmp_path / "cold"
    _quiet_run(src, fresh, policy)
    return runstore.resolve(fresh)


def _same_rows_as_cold(out: Path, cold: Path) -> None:
    folder = runstore.resolve(out)
    for name in CONTENT:
        assert table_bytes(folder, name) == table_bytes(cold, name)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip(offset_share: float):
    def flip(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[int(len(data) * offset_share)] ^= 0x10
        path.write_bytes(bytes(data))

    return flip


DAMAGE = {
    "truncated chunks": ("chunks.parquet", _truncate),
    "deleted chunks": ("chunks.parquet", Path.unlink),
    "bit flip early in chunks": ("chunks.parquet", _flip(0.2)),
    "bit flip late in chunks": ("chunks.parquet", _flip(0.97)),
    "bit flip in documents": ("documents.parquet", _flip(0.5)),
    "bit flip in blocks": ("blocks.parquet", _flip(0.5)),
}


@pytest.mark.parametrize("full", [False, True], ids=["incremental", "full"])
@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_published_file_is_found_and_recomputed(published_a, tmp_path, damage, full):
    src, out = _copy(published_a, tmp_path)
    name, spoil = DAMAGE[damage]
    folder = runstore.resolve(out)
    old_ids = set(_chunks(out)["chunk_id"])
    spoil(parquet_files.parts(folder, name.removesuffix(".parquet"))[0])

    result = CliRunner().invoke(main, ["check", str(out)])
    assert result.exit_code == 1 and "FAIL  checksums" in result.output
    assert name in result.output

    flags = ["--full"] if full else []
    args = ["run", str(src), "--out", str(out), "--workers", "1", *flags, *EVERY_TABLE]
    args += ["--target-tokens", "60", "--max-tokens", "100", "--min-tokens", "20"]
    result = CliRunner().invoke(main, [*args, "--overlap-tokens", "10"])
    assert result.exit_code == 0, result.output
    warning = [line for line in result.output.splitlines() if "warning" in line]
    assert len(warning) == 1 and name in warning[0] and "recomputed" in warning[0]
    _published_consistently(out)
    _same_rows_as_cold(out, _cold(src, tmp_path, POLICY_A))
    record = runstore.history(out)[-1]
    assert record["documents_parsed"] == 11 and record["previous_run"] == folder.name
    changes = pl.read_parquet(runstore.resolve(out) / "changes.parquet")
    assert changes.filter(pl.col("op") == "remove").is_empty()  # nothing was deleted
    added = set(changes.filter(pl.col("op") == "add")["chunk_id"])
    if name == "chunks.parquet":  # ids that could not be read come back as adds
        assert added <= old_ids
    else:
        assert added == set()


def test_damage_in_one_row_group_keeps_the_readable_ids_for_removes(tmp_path):
    import pyarrow.parquet as pq

    src = tmp_path / "src"
    src.mkdir()
    for i in range(700):  # a part of 490 documents: two row groups (256 per batch)
        (src / f"d{i:03d}.md").write_text(f"# Doc {i}\n\nText of document {i}.\n")
    out = tmp_path / "out"
    _quiet_run(src, out, POLICY_A)
    folder = runstore.resolve(out)
    part = next(
        p for p in parquet_files.parts(folder, "chunks") if pq.ParquetFile(p).num_row_groups == 2
    )
    first = pq.ParquetFile(part).read_row_group(0)
    meta = pq.ParquetFile(part).metadata
    column = meta.row_group(1).column(0)  # the chunk_id pages of group 2
    start = column.dictionary_page_offset or column.data_page_offset
    data = bytearray(part.read_bytes())
    data[start + column.total_compressed_size // 2] ^= 0x01
    part.write_bytes(bytes(data))
    _, readable, groups = parquet_files.salvage(folder, "chunks", ["chunk_id"])
    assert readable == groups - 1  # the page checksum gives the damaged group away
    deleted = first["path"].to_pylist()[:5]  # five documents of the readable group
    for path in deleted:
        (src / path).unlink()
    summary = _quiet_run(src, out, POLICY_A)
    changes = pl.read_parquet(runstore.resolve(out) / "changes.parquet")
    removed = set(changes.filter(pl.col("op") == "remove")["path"])
    assert removed == set(deleted)
    assert first.num_rows == 256 and summary.record["documents_deleted"] == 5
    assert _all_checks_hold(out)


@pytest.mark.parametrize("full", [False, True], ids=["incremental", "full"])
def test_a_missing_run_folder_or_garbage_pointer_is_survived(published_a, tmp_path, full):
    src, out = _copy(published_a, tmp_path)
    cold = _cold(src, tmp_path, POLICY_A)
    flags = {"full": full}
    shutil.rmtree(runstore.resolve(out))
    result = CliRunner().invoke(main, ["check", str(out)])
    assert result.exit_code != 0 and "missing" in result.output
    _quiet_run(src, out, POLICY_A, **flags)
    _same_rows_as_cold(out, cold)
    (out / runstore.POINTER).write_text("garbage")
    result = CliRunner().invoke(main, ["check", str(out)])
    assert result.exit_code == 1 and "CURRENT is damaged" in result.output
    _quiet_run(src, out, POLICY_A, **flags)
    _same_rows_as_cold(out, cold)
    assert _all_checks_hold(out)


def test_foreign_folders_and_a_damaged_history_are_survived(published_a, tmp_path):
    src, out = _copy(published_a, tmp_path)
    (out / "runs" / "old").mkdir()
    (out / "runs" / "old" / "keep.txt").write_text("not ours")
    (out / "runs" / "notes.txt").write_text("not ours either")
    first = runstore.pointed(out).run_id
    (out / runstore.HISTORY).write_bytes(b"garbage")
    assert [r["run_id"] for r in runstore.history(out)] == [first]  # from the run's own copy
    summary = _quiet_run(src, out, POLICY_A)
    assert (out / "runs" / "old" / "keep.txt").exists() and (out / "runs" / "notes.txt").exists()
    assert [r["run_id"] for r in runstore.history(out)] == [first, summary.run_id]
    assert summary.record["documents_parsed"] == 0  # the published run was sound: reused
    assert _all_checks_hold(out)


def test_nothing_changed_never_links_a_damaged_file(published_a, tmp_path):
    src, out = _copy(published_a, tmp_path)
    folder = runstore.resolve(out)
    (damaged,) = parquet_files.parts(folder, "postings")
    _flip(0.5)(damaged)
    _quiet_run(src, out, POLICY_A)
    new = runstore.resolve(out)
    (now,) = parquet_files.parts(new, "postings")
    assert not os.path.samefile(damaged, now)
    assert manifest.verify(new, manifest.load(new)) == []
    _same_rows_as_cold(out, _cold(src, tmp_path, POLICY_A))
