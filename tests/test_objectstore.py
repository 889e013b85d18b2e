"""Object-store outputs and inputs against a real S3-compatible server.

tests/servers.py starts moto's server on 127.0.0.1; pyarrow's S3 filesystem reaches it
through AWS_ENDPOINT_URL. Both engines write to and read from s3:// and must give the rows
of a local run."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import polars as pl
import pytest
from click.testing import CliRunner
from pyarrow import fs

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from chunkmill.pipeline.runstore import objectstore
from tests.conftest import SAMPLE
from tests.helpers import EVERY_TABLE

TABLES = ("documents", "blocks", "chunks", "postings", "rejects")


def _upload_folder(local, uri: str) -> None:
    s3, root = fs.FileSystem.from_uri(uri)
    for path in sorted(local.rglob("*")):
        if path.is_file():
            key = f"{root}/{path.relative_to(local).as_posix()}"
            with s3.open_output_stream(key) as out:
                out.write(path.read_bytes())


def _invoke(*args) -> str:
    """A command; a run writes every table (each goes through the object store)."""
    args = [*args, *EVERY_TABLE] if args[0] == "run" else args
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def _tables(folder) -> dict[str, pl.DataFrame]:
    return {name: pl.read_parquet(folder / f"{name}.parquet") for name in TABLES}


@pytest.mark.parametrize("engine", ["local", pytest.param("ray", marks=pytest.mark.cluster)])
def test_s3_in_and_out_equals_a_local_run(engine, s3_bucket, tmp_path, request):
    if engine == "ray":
        request.getfixturevalue("ray_cluster")
    _upload_folder(SAMPLE, f"{s3_bucket}/docs")
    _invoke("run", SAMPLE, "--out", tmp_path / "local")
    out = f"{s3_bucket}/out"
    _invoke("run", f"{s3_bucket}/docs", "--out", out, "--engine", engine)
    local = _tables(runstore.resolve(tmp_path / "local"))
    remote = _tables(objectstore.published_copy(out))
    for name in TABLES:
        frame = remote[name]
        want = local[name]
        if name == "documents":  # where the bytes came from differs, nothing else
            frame, want = frame.drop("source"), want.drop("source")
        assert frame.equals(want), name
    # every reader works on the s3:// output
    assert "checks hold" in CliRunner().invoke(main, ["check", out]).output
    hits = json.loads(_invoke("search", out, "compactor segments", "--json"))
    assert hits and hits[0]["path"].endswith(".md")
    stats = json.loads(_invoke("stats", out, "--json"))
    assert stats["overview"][0]["chunks"] == local["chunks"].height
    counted = _invoke("sql", out, "SELECT count(*) AS n FROM chunks", "--format", "csv")
    assert counted.split() == ["n", str(local["chunks"].height)]


def test_incremental_runs_keep_and_prune_on_s3(s3_bucket, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    out = f"{s3_bucket}/out"
    for i in range(4):
        (src / f"note-{i}.md").write_text(f"# Note {i}\n\nText number {i}.\n")
        _invoke("run", src, "--out", out, "--keep", "2")
        if i == 0:
            first = objectstore.Prefix(out).current()
    prefix = objectstore.Prefix(out)
    assert len(prefix.run_ids()) == 2 and prefix.current() == prefix.run_ids()[-1]
    history = pl.read_parquet(objectstore.published_copy(out) / "runs.parquet")
    assert history.filter(pl.col("status") == "published").height == 4
    assert history["documents_parsed"].to_list()[-1] == 1  # only the new note
    # a consumer that last applied the first run (pruned since) gets the three notes added
    assert first not in prefix.run_ids()
    todo = tmp_path / "todo.parquet"
    _invoke("changes", out, "--since", first, "--format", "parquet", "--out", todo)
    changes = pl.read_parquet(todo)
    assert sorted(changes.filter(pl.col("op") == "add")["path"]) == [
        f"note-{i}.md" for i in (1, 2, 3)
    ]
    assert changes.filter(pl.col("op") == "remove").height == 0
    # a dry run pushes nothing
    (src / "note-0.md").unlink()
    output = _invoke("run", src, "--out", out, "--keep", "2", "--dry-run")
    assert "dry run, nothing published" in output
    assert objectstore.Prefix(out).current() == prefix.current() and len(prefix.run_ids()) == 2


def test_a_night_uploads_the_parts_it_wrote_and_copies_the_others(s3_bucket, tmp_path, monkeypatch):
    from tests.test_parts import _names, _text

    src = tmp_path / "src"
    src.mkdir()
    for i, name in enumerate(_names()):  # several parts
        (src / name).write_text(_text(i))
    out = f"{s3_bucket}/parts"
    _invoke("run", src, "--out", out, "--workers", "1")
    uploads = []
    real = objectstore.Prefix.upload

    def upload(self, local, *key):
        uploads.append(key[-1])
        real(self, local, *key)

    monkeypatch.setattr(objectstore.Prefix, "upload", upload)
    with open(src / _names()[700], "a") as fh:
        fh.write("\nOne more sentence.\n")
    _invoke("run", src, "--out", out, "--workers", "1")
    copy = objectstore.published_copy(out)  # fetched, every file checked against its manifest
    parts = [n for n in uploads if "/part-" in n]
    assert len(parts) == 4  # the one part of each table the edit fell in
    local = tmp_path / "local"
    _invoke("run", src, "--out", local, "--workers", "1")
    for name in TABLES:
        assert _tables(copy)[name].equals(_tables(runstore.resolve(local))[name]), name


def _s3_env() -> dict:
    keys = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION",
            "AWS_ENDPOINT_URL", "AWS_EC2_METADATA_DISABLED")  # fmt: skip
    return {**os.environ, **{k: os.environ[k] for k in keys}}


@pytest.mark.slow
def test_killed_runs_leave_the_published_s3_run_readable(s3_bucket, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    out = f"{s3_bucket}/out"
    _invoke("run", src, "--out", out)
    rng = random.Random(16)
    command = [sys.executable, "-m", "chunkmill", "run", str(src), "--out", out,
               "--workers", "1"]  # fmt: skip
    for i in range(10):
        (src / f"edit-{i}.md").write_text(f"# Edit {i}\n\n{'word ' * rng.randint(5, 500)}\n")
        proc = subprocess.Popen(command, env=_s3_env(), stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 3.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        objectstore._CACHE.clear()
        check = CliRunner().invoke(main, ["check", out])
        assert check.exit_code == 0, check.output
    done = subprocess.run(command, env=_s3_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    objectstore._CACHE.clear()
    chunks = pl.read_parquet(objectstore.published_copy(out) / "chunks.parquet")
    assert set(chunks["path"]) >= {f"edit-{i}.md" for i in range(10)}


def test_a_second_writer_is_detected_and_not_published(s3_bucket, tmp_path, monkeypatch):
    out = f"{s3_bucket}/out"
    _invoke("run", SAMPLE, "--out", out)
    first = objectstore.Prefix(out).current()
    real_pull = objectstore.pull

    def pull_then_race(prefix, staging):
        started = real_pull(prefix, staging)
        prefix.write(json.dumps({"run": "20000101T000000Z-aaaaaa"}).encode(), "CURRENT")
        return started

    monkeypatch.setattr(objectstore, "pull", pull_then_race)
    result = CliRunner().invoke(main, ["run", str(SAMPLE), "--out", out, "--full"])
    assert result.exit_code == 1
    assert "another writer published run 20000101T000000Z-aaaaaa" in result.output
    assert first != "20000101T000000Z-aaaaaa"
    assert objectstore.Prefix(out).current() == "20000101T000000Z-aaaaaa"


def test_a_file_uri_output_is_staged_like_an_object_store(tmp_path):
    # file:// goes through the same pull/push as s3:// (pyarrow's local filesystem, which,
    # unlike an object store, needs its folders made before a file is written)
    out = f"file://{tmp_path}/nested/out"
    _invoke("run", SAMPLE, "--out", out)
    _invoke("run", SAMPLE, "--out", out)
    assert "8 of 8 checks hold" in _invoke("check", out)
    prefix = objectstore.Prefix(out)
    assert len(prefix.run_ids()) == 2 and prefix.current() == prefix.run_ids()[-1]
    objectstore._CACHE.clear()
    local = _tables(objectstore.published_copy(out))
    assert local["chunks"].height > 0 and local["rejects"].height == 0
