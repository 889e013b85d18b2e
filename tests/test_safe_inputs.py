"""Inputs that are not plain readable files end as named rejects, fast and in bounded memory,
and a folder that cannot be listed never turns into deletions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.inputs.sources import Selection
from chunkmill.pipeline.inputs.table_rows import table_documents
from chunkmill.pipeline.runstore import parquet_files
from tests.conftest import REPO, SAMPLE
from tests.helpers import EVERY_TABLE, document_metadata, sentences, table_bytes

# A run in a child process (a FIFO may block a reader forever: never in the test process)
# that prints its own peak memory: VmHWM of its address space (ru_maxrss would also count
# the test process it was forked from).
MEASURED_RUN = """
import json, re, sys
from chunkmill.jobs.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
status = open("/proc/self/status").read()
peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) / 1024
print(json.dumps({"code": code, "peak_mb": peak}))
"""


def _measured(args: list[str], timeout: float = 120) -> tuple[dict, str, float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", MEASURED_RUN, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result, proc.stderr, time.monotonic() - started


def _hostile_folder(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.md").write_text("# Good\n\nA plain document.\n")
    os.mkfifo(src / "pipe.md")
    (src / "zero.md").symlink_to("/dev/zero")
    (src / "random.md").symlink_to("/dev/urandom")
    with open(src / "sparse.md", "wb") as fh:  # 5 GB, no disk used
        fh.truncate(5 * 1024**3)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nNot below the input folder.\n")
    (src / "notes.md").symlink_to(outside / "secret.md")
    (src / "alias.md").symlink_to(src / "good.md")  # inside the root: read as usual
    os.close(os.open(os.fsencode(src) + b"/caf\xe9.md", os.O_CREAT | os.O_WRONLY))
    return src


def _rejects(out: Path) -> dict[str, str]:
    rejects = pl.read_parquet(runstore.resolve(out) / "rejects.parquet")
    return dict(zip(rejects["path"], rejects["reason"]))


def test_hostile_inputs_are_named_rejects_in_seconds_and_bounded_memory(tmp_path):
    src = _hostile_folder(tmp_path)
    out = tmp_path / "out"
    args = ["run", str(src), "--out", str(out), "--workers", "1", "--max-bytes", "1000000"]
    result, stderr, seconds = _measured(args)
    assert result["code"] == 0, stderr
    assert seconds < 60 and result["peak_mb"] < 600
    assert _rejects(out) == {
        "pipe.md": "not_a_file",
        "random.md": "outside_root",
        "zero.md": "outside_root",
        "sparse.md": "too_large",
        "notes.md": "outside_root",
        "caf\\xe9.md": "bad_name",
    }
    docs = pl.read_parquet(runstore.resolve(out) / "documents.parquet")
    assert sorted(docs["path"]) == ["alias.md", "good.md"]
    details = pl.read_parquet(runstore.resolve(out) / "rejects.parquet")
    assert all("not read" in d for d in details.filter(pl.col("reason") != "bad_name")["detail"])

    # following links: devices are still never read, the outside file now is
    out2 = tmp_path / "out2"
    result, stderr, seconds = _measured([*args[:3], str(out2), *args[4:], "--follow-symlinks"])
    assert result["code"] == 0, stderr
    assert seconds < 60 and result["peak_mb"] < 600
    rejects = _rejects(out2)
    assert rejects["zero.md"] == rejects["random.md"] == rejects["pipe.md"] == "not_a_file"
    assert "notes.md" not in rejects
    assert "character device" in " ".join(
        pl.read_parquet(runstore.resolve(out2) / "rejects.parquet")["detail"]
    )


def test_hostile_inputs_reject_the_same_way_through_blocks(tmp_path):
    src = _hostile_folder(tmp_path)
    out = tmp_path / "out"
    args = ["blocks", str(src), "--out", str(out), "--max-bytes", "1000000"]
    result, stderr, _ = _measured(args)
    assert result["code"] == 0, stderr
    rejects = pl.read_parquet(out / "rejects.parquet")
    assert dict(zip(rejects["path"], rejects["reason"]))["pipe.md"] == "not_a_file"


def test_a_file_grown_past_the_limit_after_stat_is_not_read_whole(tmp_path):
    from chunkmill.pipeline.inputs.reading import read_local

    path = tmp_path / "grows.md"
    path.write_bytes(b"x" * 100)
    got = read_local(str(path), 50)
    assert (got.data, got.reason, got.n_bytes) == (None, "too_large", 100)
    assert read_local(str(path), 100).data == b"x" * 100


def _incapable(cmd: list[str]) -> list[str]:
    """The command as a user that file permissions apply to: root without its capabilities."""
    if os.geteuid() != 0:
        return cmd
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all", *cmd]


def _cli_run(src: Path, out: Path, *flags: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "chunkmill", "run", str(src), "--out", str(out)]
    return subprocess.run(
        _incapable([*cmd, "--workers", "1", *EVERY_TABLE, *flags]),  # damage to any table
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_an_unlistable_folder_is_a_reject_and_never_a_deletion(tmp_path):
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root and no setpriv to drop the capabilities that bypass modes")
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    private = src / "guides"
    out = tmp_path / "out"
    first = _cli_run(src, out)
    assert first.returncode == 0, first.stderr
    hidden = set(
        pl.read_parquet(runstore.resolve(out) / "chunks.parquet").filter(
            pl.col("path").str.starts_with("guides/")
        )["chunk_id"]
    )
    assert hidden
    private.chmod(0)
    try:
        probe = subprocess.run(_incapable(["ls", str(private)]), capture_output=True)
        if probe.returncode == 0:
            pytest.skip("this user can list a folder of mode 000 (no way to make one unlistable)")
        for flags in ((), ("--full",), ("--target-tokens", "600", "--new-policy")):
            before = set(pl.read_parquet(runstore.resolve(out) / "chunks.parquet")["chunk_id"])
            started = time.monotonic()
            proc = _cli_run(src, out, *flags)
            assert proc.returncode == 0, proc.stderr
            assert time.monotonic() - started < 60
            folder = runstore.resolve(out)
            rejects = pl.read_parquet(folder / "rejects.parquet")
            assert dict(zip(rejects["path"], rejects["reason"])) == {"guides/": "unlistable"}
            assert "Permission denied" in rejects["detail"][0]
            chunks = pl.read_parquet(folder / "chunks.parquet")
            assert chunks["path"].str.starts_with("guides/").any()  # carried over
            # the change set is exactly the difference of the published ids: after the policy
            # change the carried documents' new ids replace their old ones
            changes = pl.read_parquet(folder / "changes.parquet")
            after = set(chunks["chunk_id"])
            ops = dict(zip(changes["chunk_id"], changes["op"]))
            assert {c for c, op in ops.items() if op == "add"} == after - before
            assert {c for c, op in ops.items() if op == "remove"} == before - after
            record = runstore.history(out)[-1]
            assert record["documents_deleted"] == 0
            if not flags:  # same policy: the very chunk ids are kept
                assert hidden <= set(chunks["chunk_id"])
                assert changes.is_empty()
            if "--new-policy" in flags:
                assert not hidden & after and hidden <= before - after
        # a published run that cannot be reused (damaged) cannot carry them: the run that
        # would remove them is refused, unless told to go on
        published = runstore.resolve(out)
        damaged = parquet_files.parts(published, "blocks")[0]
        damaged.write_bytes(damaged.read_bytes()[:-9] + b"x" * 9)
        proc = _cli_run(src, out, "--target-tokens", "600")
        assert proc.returncode == 4, proc.stderr
        assert "guides/: could not be listed" in proc.stderr
        assert runstore.resolve(out) == published
        proc = _cli_run(src, out, "--target-tokens", "600", "--allow-mass-delete")
        assert proc.returncode == 0, proc.stderr
        folder = runstore.resolve(out)
        assert (
            not pl.read_parquet(folder / "chunks.parquet")["path"].str.starts_with("guides/").any()
        )
        removed = pl.read_parquet(folder / "changes.parquet").filter(pl.col("op") == "remove")
        assert removed["path"].str.starts_with("guides/").any()  # as the ledger says
    finally:
        private.chmod(0o755)
    proc = _cli_run(src, out, "--target-tokens", "600")  # listable again, policy as the last
    assert proc.returncode == 0, proc.stderr
    record = runstore.history(out)[-1]
    assert record["documents_deleted"] == record["chunks_removed"] == 0
    assert record["documents_added"] > 0  # the folder's documents are back


def test_an_unlistable_root_keeps_everything(tmp_path, monkeypatch):
    """The same through the listing function, for any user: the whole input unlistable."""
    from chunkmill import run
    from chunkmill.jobs.runlog import RunLog

    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    out = tmp_path / "out"
    first = run([str(src)], out, workers=1, log=RunLog(quiet=True))
    real_scandir = os.scandir

    def failing_scandir(path="."):
        if os.fspath(path) == str(src):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", failing_scandir)
    summary = run([str(src)], out, workers=1, log=RunLog(quiet=True))
    monkeypatch.setattr(os, "scandir", real_scandir)
    assert _rejects(out) == {"./": "unlistable"}
    assert summary.record["documents_unchanged"] == first.record["documents_added"]
    assert summary.record["chunks_removed"] == summary.record["chunks_added"] == 0


def test_one_bad_jsonl_row_rejects_only_that_row(tmp_path):
    good = [{"path": f"g{i}.md", "text": f"# G{i}\n\nfine"} for i in range(3)]
    lines = [json.dumps(r) for r in good[:2]]
    lines += [
        '{"path": "surrogate.md", "text": "bad \\ud800 half"}',
        '{"path": "number.md", "text": 42}',
        '{"path": "list.md", "text": ["a"]}',
        '{"path": "null.md", "text": null}',
        "[1, 2, 3]",
        '{"path": "broken.md", "text": "no closing',
        "",
        json.dumps(good[2]),
        '{"path": "truncated.md", "text": "the last line was cut',
    ]
    src = tmp_path / "docs.jsonl"
    src.write_text("\n".join(lines))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", str(src), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    docs = pl.read_parquet(runstore.resolve(out) / "documents.parquet")
    assert docs["path"].to_list() == ["g0.md", "g1.md", "g2.md"]
    rejects = pl.read_parquet(runstore.resolve(out) / "rejects.parquet")
    assert set(rejects["reason"]) == {"bad_row"}
    assert rejects["path"].to_list() == [
        "surrogate.md", "number.md", "list.md", "null.md", "(row 6)", "(row 7)", "(row 9)",
    ]  # fmt: skip
    detail = dict(zip(rejects["path"], rejects["detail"]))
    assert "U+D800" in detail["surrogate.md"] and "number" in detail["number.md"]
    assert "line 7" in detail["(row 6)"] and "not an object" in detail["(row 6)"]
    assert "line 11" in detail["(row 9)"]


def _run_jsonl(tmp_path: Path, lines: list[str]) -> Path:
    """Run on a JSONL table of ``lines`` into tmp_path/out; the published run's folder."""
    (tmp_path / "docs.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    args = ["run", str(tmp_path / "docs.jsonl"), "--out", str(out), "--workers", "1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return runstore.resolve(out)


def test_a_broken_line_takes_no_path_a_genuine_id_can_have(tmp_path):
    lines = ["{broken", json.dumps({"id": "row-0", "text": "# A\n\na genuine id"})]
    folder = _run_jsonl(tmp_path, lines)
    assert pl.read_parquet(folder / "documents.parquet")["path"].to_list() == ["row-0"]
    assert _rejects(tmp_path / "out") == {"(row 0)": "bad_row"}


@pytest.mark.parametrize("column", ["meta", "text"])
def test_json_nested_too_deep_rejects_only_its_row(tmp_path, column):
    deep = "[" * 100_000 + "]" * 100_000
    cells = {"meta": f'"text": "# B\\n\\nb", "meta": {deep}', "text": f'"text": {deep}'}
    lines = [
        json.dumps({"path": "a.md", "text": "# A\n\na", "meta": 1}),
        f'{{"path": "b.md", {cells[column]}}}',
        json.dumps({"path": "c.md", "text": "# C\n\nc", "meta": 2}),
    ]
    folder = _run_jsonl(tmp_path, lines)
    docs = pl.read_parquet(folder / "documents.parquet")
    assert docs["path"].to_list() == ["a.md", "c.md"]
    rejects = pl.read_parquet(folder / "rejects.parquet")
    assert rejects.select("path", "reason").rows() == [("(row 1)", "bad_row")]
    assert "line 2" in rejects["detail"][0] and "nested" in rejects["detail"][0]


def test_one_path_is_one_document(tmp_path):
    # two rows of a table with one path: the first is the document, the second a reject
    # (they were packed as one document: its chunks glued the two texts together)
    rows = [
        {"path": "a.md", "text": "# A\n\nalpha"},
        {"path": "b.md", "text": "# B\n\ngamma"},
        {"path": "a.md", "text": "# Other\n\nbeta"},
    ]
    src = tmp_path / "docs.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", str(src), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    folder = runstore.resolve(out)
    assert pl.read_parquet(folder / "documents.parquet")["path"].to_list() == ["a.md", "b.md"]
    chunks = pl.read_parquet(folder / "chunks.parquet")
    assert chunks["text"].to_list() == ["# A\n\nalpha", "# B\n\ngamma"]
    rejects = pl.read_parquet(folder / "rejects.parquet")
    assert rejects.select("path", "reason").rows() == [("a.md", "duplicate")]
    assert "row 2" in rejects["detail"][0] and "row 0" in rejects["detail"][0]
    # the same folder twice, or a file with its folder: each file is read once
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("x.md", "y.md"):
        (docs / name).write_text(f"# {name}\n\n{sentences(3)}\n")
    for i, inputs in enumerate([[docs, docs], [docs, docs / "y.md"]]):
        out = tmp_path / f"twice{i}"
        args = ["run", *map(str, inputs), "--out", str(out), "--workers", "1"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert "listed twice" in result.output
        folder = runstore.resolve(out)
        paths = pl.read_parquet(folder / "documents.parquet")["path"].to_list()
        assert paths == ["docs/x.md", "docs/y.md"]
        chunks = pl.read_parquet(folder / "chunks.parquet")
        assert chunks["chunk_id"].n_unique() == chunks.height == 2


def test_a_fifo_named_as_a_table_is_a_usage_error(tmp_path):
    os.mkfifo(tmp_path / "docs.jsonl")
    result = CliRunner().invoke(
        main, ["run", str(tmp_path / "docs.jsonl"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "not a regular file" in result.output


def test_incremental_rejects_equal_full_after_max_bytes_shrinks(tmp_path):
    """A document over a lower --max-bytes is rejected, not reused unread."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.md").write_text("# Big\n\n" + sentences(40) + "\n")
    (src / "small.md").write_text("# Small\n\ntext\n")
    inc, full = tmp_path / "inc", tmp_path / "full"
    for out, flags in (
        (inc, []),
        (inc, ["--max-bytes", "1000"]),
        (full, ["--max-bytes", "1000", "--full"]),
    ):
        result = CliRunner().invoke(
            main, ["run", str(src), "--out", str(out), "--workers", "1", *flags]
        )
        assert result.exit_code == 0, result.output
    assert _rejects(inc) == {"big.md": "too_large"}
    for name in ("rejects", "documents", "chunks"):
        a = table_bytes(runstore.resolve(inc), name)
        assert a == table_bytes(runstore.resolve(full), name), name


def test_temporal_metadata_never_costs_a_row(tmp_path):
    """Nanosecond timestamps (pandas, Spark), durations, and values out of Python's range
    (DuckDB's 'infinity', a date 2**30 days away) are metadata text, not a failed run."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 4
    table = pa.table(
        {
            "id": [f"k{i}.md" for i in range(n)],
            "text": [f"# Row {i}\n\nAqueduct arches carry water." for i in range(n)],
            "seen": pa.array(
                [1_700_000_000_000_000_123 + i for i in range(n)], pa.timestamp("ns", tz="UTC")
            ),
            "far": pa.array([2**62] + [0] * (n - 1), pa.timestamp("us")),
            "day": pa.array([2**30] + [19_000] * (n - 1), pa.date32()),
            "took": pa.array([5] * n, pa.duration("ns")),
        }
    )
    pq.write_table(table, tmp_path / "rows.parquet")
    proc = _cli_run(tmp_path / "rows.parquet", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    folder = runstore.resolve(tmp_path / "out")
    assert pl.read_parquet(folder / "rejects.parquet").is_empty()
    meta = document_metadata(folder / "documents.parquet")["k0.md"]
    assert meta["seen"] == "2023-11-14 22:13:20.000000123Z"
    assert "out of range" in meta["far"] and "out of range" in meta["day"]


def test_ids_are_paths_or_the_row_is_rejected(tmp_path):
    rows = [
        {"id": None, "text": "# A\n\nnull id"},
        {"id": "row-0", "text": "# B\n\na genuine id that looks like a placeholder"},
        {"id": 7.0, "text": "# C\n\na whole number read as a float"},
        {"id": True, "text": "# D\n\na boolean"},
        {"id": ["l"], "text": "# E\n\na list"},
        {"id": "", "text": "# F\n\nempty"},
        {"id": "../escape.md", "text": "# G\n\nclimbs out"},
        {"id": "/abs.md", "text": "# H\n\nabsolute"},
        {"id": "guide/ok.md", "text": "# I\n\nfine"},
    ]
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    proc = _cli_run(tmp_path / "rows.jsonl", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    folder = runstore.resolve(tmp_path / "out")
    paths = pl.read_parquet(folder / "documents.parquet")["path"].to_list()
    assert paths == ["row-0", "7", "guide/ok.md"]  # the genuine "row-0" is no duplicate
    rejects = pl.read_parquet(folder / "rejects.parquet")
    assert rejects["reason"].to_list() == ["bad_row"] * 6
    assert rejects["path"].to_list() == [f"(row {i})" for i in (0, 3, 4, 5, 6, 7)]
    assert "is null, not an id" in rejects["detail"][0]
    assert "not a relative path" in rejects["detail"][4]


def test_an_empty_or_unreadable_jsonl_meets_the_guard_like_an_empty_parquet(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "broken.jsonl").write_text("not json\n{bad\n")
    proc = _cli_run(tmp_path / "empty.jsonl", tmp_path / "o1")
    assert proc.returncode == 1 and "no document was read from INPUT" in proc.stderr
    proc = _cli_run(tmp_path / "broken.jsonl", tmp_path / "o2")
    assert proc.returncode == 1 and "(2 rejected (2 bad_row)" in proc.stderr


def test_an_arrow_metadata_cell_nested_too_deep_rejects_only_its_row():
    # Arrow holds lists nested deeper than JSON text can be written from Python
    nested = pa.array([[1], [2], [3]])
    offsets = pa.array([0, 1, 2, 3], pa.int32())
    for _ in range(2_000):
        nested = pa.ListArray.from_arrays(offsets, nested)
    nested = pa.ListArray.from_arrays(offsets, nested, mask=pa.array([True, False, True]))
    table = pa.table({"path": ["a.md", "b.md", "c.md"], "text": ["a", "b", "c"], "meta": nested})
    docs = list(table_documents(table, Selection(), "t.parquet"))
    assert [(d.path, d.reason) for d in docs] == [
        ("a.md", None),
        ("b.md", "bad_row"),
        ("c.md", None),
    ]
    assert "'meta'" in docs[1].error and "nested" in docs[1].error


@pytest.mark.parametrize("swap", ["file", "folder"])
def test_a_file_replaced_by_a_link_outside_after_listing_is_not_read(tmp_path, swap):
    src, outside = tmp_path / "src", tmp_path / "outside"
    (src / "sub").mkdir(parents=True)
    outside.mkdir()
    (src / "sub" / "a.md").write_text("# A\n\nlisted\n")
    (src / "b.md").write_text("# B\n\nkept\n")
    (outside / "a.md").write_text("# Secret\n\nnot below the input folder\n")
    planned = sources.plan([str(src)], Selection())
    following = Selection(follow_symlinks=True)
    planned_following = sources.plan([str(src)], following)
    if swap == "file":  # the file itself becomes a link, between listing and reading
        (src / "sub" / "a.md").unlink()
        (src / "sub" / "a.md").symlink_to(outside / "a.md")
    else:  # a folder above it does
        shutil.rmtree(src / "sub")
        (src / "sub").symlink_to(outside)
    docs = {d.path: d for d in sources.read(planned, Selection())}
    assert docs["b.md"].data == b"# B\n\nkept\n"
    assert docs["sub/a.md"].data is None and docs["sub/a.md"].reason == "outside_root"
    assert "outside the input folder" in docs["sub/a.md"].error
    followed = {d.path: d for d in sources.read(planned_following, following)}
    assert followed["sub/a.md"].data.startswith(b"# Secret")


# A Parquet table of three row groups: ordinary documents around one text cell of SIZE bytes
# that zstd shrinks to a few kilobytes (written in a child process: the cell is large).
BOMB_TABLE = """
import sys
import pyarrow as pa, pyarrow.parquet as pq

path, size = sys.argv[1], int(sys.argv[2])
with pq.ParquetWriter(path, pa.schema([("path", pa.string()), ("text", pa.string())]),
                      compression="zstd") as writer:
    writer.write_table(pa.table({"path": ["a.md", "b.md"], "text": ["# A\\n\\nalpha\\n"] * 2}))
    writer.write_table(pa.table({"path": ["bomb.md"], "text": ["x" * size]}))
    writer.write_table(pa.table({"path": ["c.md"], "text": ["# C\\n\\ngamma\\n"]}))
"""


@pytest.mark.slow
def test_a_small_table_declaring_a_huge_cell_is_a_reject_never_decompressed(tmp_path):
    size = 600 * 1024**2
    table = tmp_path / "docs.parquet"
    subprocess.run([sys.executable, "-c", BOMB_TABLE, str(table), str(size)], check=True)
    assert table.stat().st_size < 200_000
    out = tmp_path / "out"
    result, stderr, _ = _measured(["run", str(table), "--out", str(out), "--workers", "1"])
    assert result["code"] == 0, stderr
    assert result["peak_mb"] < size / 1024**2 / 2  # the cell was never decompressed
    docs = pl.read_parquet(runstore.resolve(out) / "documents.parquet")
    assert sorted(docs["path"]) == ["a.md", "b.md", "c.md"]
    rejects = pl.read_parquet(runstore.resolve(out) / "rejects.parquet")
    assert rejects["reason"].to_list() == ["too_large"]
    assert rejects["path"].to_list() == ["(row 2)"]
    assert "row group 1" in rejects["detail"][0] and "column 'text'" in rejects["detail"][0]


def test_a_table_is_read_in_row_batches(tmp_path, monkeypatch):
    """Rows come from the file one batch at a time (never a whole table in memory), in
    order, and a JSONL line over twice --max-bytes is a reject without being parsed."""
    import pyarrow.parquet as pq

    from chunkmill.pipeline.inputs import table_rows

    monkeypatch.setattr(table_rows, "BATCH_ROWS", 7)
    paths = [f"d{i:03}.md" for i in range(50)]
    pq.write_table(pa.table({"path": paths, "text": [f"# {p}\n" for p in paths]}),
                   tmp_path / "t.parquet", row_group_size=20)  # fmt: skip
    read = []
    real = pq.ParquetFile.iter_batches

    def counted(self, *args, **kwargs):
        for batch in real(self, *args, **kwargs):
            read.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counted)
    src = sources.plan([str(tmp_path / "t.parquet")], Selection())[0]
    docs = list(sources.read([src], Selection()))
    assert [d.path for d in docs] == paths
    assert max(read) == 7 and sum(read) == 50

    line = json.dumps({"path": "big.md", "text": "y" * 5000}).encode()
    (tmp_path / "t.jsonl").write_bytes(b'{"path": "a.md", "text": "# A"}\n' + line + b"\n")
    src = sources.plan([str(tmp_path / "t.jsonl")], Selection(max_bytes=1000))[0]
    got = {d.path: d.reason for d in sources.read([src], Selection(max_bytes=1000))}
    assert got == {"a.md": None, "(row 1)": "too_large"}


def test_inside_is_below_a_folder_never_beside_it():
    from chunkmill.pipeline.inputs.reading import inside

    assert inside("/data/docs", "/data/docs") and inside("/data/docs/a/b.md", "/data/docs")
    assert not inside("/data/docs2/a.md", "/data/docs") and not inside("/data", "/data/docs")
    assert inside("/etc/passwd", "/") and not inside("/data/doc", "/data/docs")
