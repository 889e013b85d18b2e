"""The Ray engine gives the same rows as the local engine (issue 7)."""

from __future__ import annotations

import shutil
import sys

import polars as pl
import pytest
from click.testing import CliRunner

from mdchunk.jobs import ray_job
from mdchunk.jobs.cli import main
from mdchunk.pipeline import runstore
from tests.conftest import SAMPLE, corpus_dir

TABLES = ("documents", "blocks", "chunks", "postings", "rejects")


@pytest.fixture(scope="module")
def ray():
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    yield ray
    ray.shutdown()


def _run(src, out, *flags) -> dict[str, pl.DataFrame]:
    result = CliRunner().invoke(main, ["run", str(src), "--out", str(out), *flags])
    assert result.exit_code == 0, result.output
    folder = runstore.resolve(out)
    return {name: pl.read_parquet(folder / f"{name}.parquet") for name in TABLES}


def test_ray_run_equals_local_run_on_the_corpora(ray, tmp_path):
    src = corpus_dir()
    local = _run(src, tmp_path / "local")
    remote = _run(src, tmp_path / "ray", "--engine", "ray", "--workers", "2")
    assert local["chunks"].height > 15_000
    assert set(local["chunks"]["chunk_id"]) == set(remote["chunks"]["chunk_id"])
    for name in TABLES:
        assert local[name].equals(remote[name]), name


def test_rejects_land_the_same_way(ray, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    (src / "latin1.md").write_bytes(b"caf\xe9\n")
    (src / "binary.md").write_bytes(b"\x00\x01\x02")
    (src / "dangling.md").symlink_to(src / "nowhere.md")  # listed, but cannot be read
    local = _run(src, tmp_path / "local")
    remote = _run(src, tmp_path / "ray", "--engine", "ray", "--workers", "2")
    assert sorted(local["rejects"]["reason"]) == ["binary", "invalid_utf8", "unreadable"]
    assert local["rejects"].equals(remote["rejects"])
    assert local["chunks"].equals(remote["chunks"])
    history = runstore.history(tmp_path / "ray")
    assert history[-1]["status"] == "published"


def test_without_ray_the_message_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ray_job.EngineError, match=r"pip install 'mdchunk\[ray\]'"):
        ray_job.start(None, 1)
    result = CliRunner().invoke(
        main, ["run", str(SAMPLE), "--out", str(tmp_path / "o"), "--engine", "ray"]
    )
    assert result.exit_code == 2 and "pip install 'mdchunk[ray]'" in result.output


def test_ray_reads_uri_inputs(ray, tmp_path):
    local = _run(SAMPLE, tmp_path / "local")
    remote = _run(f"file://{SAMPLE}", tmp_path / "ray", "--engine", "ray", "--workers", "2")
    assert local["chunks"].equals(remote["chunks"])
    assert local["documents"].drop("source").equals(remote["documents"].drop("source"))
