"""The Ray engine gives the same rows, reuse and change sets as the local engine.

The engine runs on a real two-node local Ray cluster (tests/servers.py: one CPU per node,
so batches really cross raylets)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill.jobs import ray_job
from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from tests.conftest import SAMPLE, corpus_dir
from tests.helpers import EVERY_TABLE

TABLES = ("documents", "blocks", "chunks", "postings", "rejects")


def _run(src, out, *flags) -> dict[str, pl.DataFrame]:
    """A run writing every table (the optional ones too), and its tables."""
    result = CliRunner().invoke(main, ["run", str(src), "--out", str(out), *EVERY_TABLE, *flags])
    assert result.exit_code == 0, result.output
    folder = runstore.resolve(out)
    return {name: pl.read_parquet(folder / f"{name}.parquet") for name in TABLES}


def _ray(src, out, address, *flags):
    return _run(src, out, "--engine", "ray", "--ray-address", address, *flags)


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("corpus", "at_least"),
    [("electron_docs", 900), pytest.param(None, 15_000, marks=pytest.mark.slow, id="all")],
)
def test_two_node_cluster_equals_local_on_the_corpora(ray_cluster, tmp_path, corpus, at_least):
    """One corpus in the quicker lanes; every corpus when slow tests run."""
    src = corpus_dir(corpus)
    local = _run(src, tmp_path / "local")
    remote = _ray(src, tmp_path / "ray", ray_cluster)
    assert local["chunks"].height > at_least
    for name in TABLES:
        assert local[name].equals(remote[name]), name


def _changes(out) -> pl.DataFrame:
    folder = runstore.resolve(out)
    return (
        pl.read_parquet(folder / "changes.parquet").select("op", "chunk_id").sort("op", "chunk_id")
    )


@pytest.mark.corpus
def test_ray_reuses_unchanged_documents_like_local(ray_cluster, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(corpus_dir("electron_docs"), src)
    files = sorted(p for p in src.rglob("*.md"))
    _run(src, tmp_path / "local")
    _ray(src, tmp_path / "ray", ray_cluster)
    edited = random.Random(7).sample(files, max(1, len(files) // 100))
    for path in edited:
        path.write_text(path.read_text(encoding="utf-8") + "\n\nOne more paragraph.\n")
    local = _run(src, tmp_path / "local")
    remote = _ray(src, tmp_path / "ray", ray_cluster)
    for name in TABLES:
        assert local[name].equals(remote[name]), name
    runs = runstore.history(tmp_path / "ray")[-1]
    assert runs["documents_parsed"] == len(edited)
    assert runs["documents_changed"] == len(edited)
    assert runs["documents_unchanged"] == len(files) - len(edited)
    assert _changes(tmp_path / "local").equals(_changes(tmp_path / "ray"))
    assert _changes(tmp_path / "ray").height > 0
    # a policy change re-packs stored blocks in the tasks: nothing is parsed
    _ray(src, tmp_path / "ray", ray_cluster, "--max-tokens", "900", "--new-policy")
    assert runstore.history(tmp_path / "ray")[-1]["documents_parsed"] == 0
    local = _run(src, tmp_path / "local", "--max-tokens", "900", "--new-policy")
    assert _changes(tmp_path / "local").equals(_changes(tmp_path / "ray"))


def test_rejects_land_the_same_way(ray_cluster, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    (src / "latin1.md").write_bytes(b"caf\xe9\n")
    (src / "binary.md").write_bytes(b"\x00\x01\x02")
    (src / "dangling.md").symlink_to(src / "nowhere.md")  # listed, but cannot be read
    local = _run(src, tmp_path / "local")
    remote = _ray(src, tmp_path / "ray", ray_cluster)
    assert sorted(local["rejects"]["reason"]) == ["binary", "invalid_utf8", "unreadable"]
    assert local["rejects"].equals(remote["rejects"])
    assert local["chunks"].equals(remote["chunks"])
    history = runstore.history(tmp_path / "ray")
    assert history[-1]["status"] == "published"


def test_without_ray_the_message_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ray_job.EngineError, match=r"pip install 'chunkmill\[ray\]'"):
        ray_job.start(None, 1)
    result = CliRunner().invoke(
        main, ["run", str(SAMPLE), "--out", str(tmp_path / "o"), "--engine", "ray"]
    )
    assert result.exit_code == 2 and "pip install 'chunkmill[ray]'" in result.output


def test_ray_reads_uri_inputs(ray_cluster, tmp_path):
    local = _run(SAMPLE, tmp_path / "local")
    remote = _ray(f"file://{SAMPLE}", tmp_path / "ray", ray_cluster)
    assert local["chunks"].equals(remote["chunks"])
    assert local["documents"].drop("source").equals(remote["documents"].drop("source"))


def test_without_an_address_a_run_starts_its_own_ray_beside_a_running_cluster(
    ray_cluster, tmp_path
):
    """Ray joins the latest cluster started on the machine (its file in /tmp/ray) unless
    told otherwise; the documented default is a local Ray of --workers CPUs."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run(
        [sys.executable, "-m", "chunkmill", "run", str(SAMPLE), "--out", str(tmp_path / "ray"),
         "--engine", "ray", "--workers", "1"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    local = _run(SAMPLE, tmp_path / "local")
    ray = pl.read_parquet(runstore.resolve(tmp_path / "ray") / "chunks.parquet")
    assert local["chunks"].equals(ray)
