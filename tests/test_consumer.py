"""Acceptance 3 of issue 13: an embedding job that follows `mdchunk changes --since` after
irregular gaps (nights skipped, a crash mid-apply and a retry, a rollback) always ends with
exactly the published run's chunks, also after --keep 2 pruned the runs it last saw."""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
from click.testing import CliRunner

from mdchunk.jobs.cli import main
from mdchunk.pipeline import runstore
from tests.helpers import SMALL_FLAGS, sentences


class Corpus:
    """Generated documents that change a little every night: edits, adds, deletes."""

    def __init__(self, root: Path, rng: random.Random):
        self.root, self.rng, self.made = root, rng, 0
        root.mkdir()
        for _ in range(24):
            self.add()

    def add(self) -> None:
        self.made += 1
        n = self.made
        parts = [f"# Page {n}\n"] + [
            f"## Part {j}\n\n{sentences(self.rng.randint(3, 30), start=n * 50 + j)}\n"
            for j in range(self.rng.randint(1, 5))
        ]
        (self.root / f"page-{n:03d}.md").write_text("\n".join(parts))

    def edit(self) -> None:
        path = self.rng.choice(sorted(self.root.iterdir()))
        lines = path.read_text().split("\n")
        i = self.rng.choice([k for k, line in enumerate(lines) if line[:1] not in ("", "#")])
        lines[i] = f"Edited {self.rng.random():.6f}. " + lines[i]
        path.write_text("\n".join(lines))

    def delete(self) -> None:
        self.rng.choice(sorted(self.root.iterdir())).unlink()

    def night(self) -> None:
        for _ in range(self.rng.randint(1, 3)):
            self.edit()
        if self.rng.random() < 0.6:
            self.add()
        if self.rng.random() < 0.5:
            self.delete()


class Consumer:
    """A vector store kept in step with the published chunks: chunk_id -> embed_text."""

    def __init__(self, out: Path, tmp: Path):
        self.out, self.tmp = out, tmp
        self.store: dict[str, str] = {}
        self.applied: str | None = None  # the run id stored after a complete apply

    def sync(self, crash_after: int | None = None) -> None:
        if self.applied is None:  # first time: everything published
            rows = pl.read_parquet(runstore.resolve(self.out) / "chunks.parquet")
            self.store = dict(zip(rows["chunk_id"], rows["embed_text"]))
            self.applied = runstore.published(self.out).name
            return
        todo = self.tmp / "todo.parquet"
        result = CliRunner().invoke(
            main,
            [
                "changes",
                str(self.out),
                "--since",
                self.applied,
                "--format",
                "parquet",
                "--out",
                str(todo),
            ],
        )
        assert result.exit_code == 0, result.output
        table = pq.read_table(todo)
        for k, row in enumerate(table.select(["op", "chunk_id", "embed_text"]).to_pylist()):
            if crash_after is not None and k == crash_after:
                return  # the job died: nothing stored, the next sync starts over
            if row["op"] == "add":
                self.store[row["chunk_id"]] = row["embed_text"]
            else:
                self.store.pop(row["chunk_id"], None)
        self.applied = table.schema.metadata[b"mdchunk.until"].decode()

    def in_step(self) -> bool:
        rows = pl.read_parquet(runstore.resolve(self.out) / "chunks.parquet")
        return self.store == dict(zip(rows["chunk_id"], rows["embed_text"]))


def nightly(src: Path, out: Path) -> str:
    result = CliRunner().invoke(
        main, ["run", str(src), "--out", str(out), "--keep", "2", *SMALL_FLAGS]
    )
    assert result.exit_code == 0, result.output
    return runstore.published(out).name


def test_consumer_with_gaps_crashes_and_pruned_runs(tmp_path):
    rng = random.Random(13)
    corpus = Corpus(tmp_path / "src", rng)
    out = tmp_path / "out"
    consumer = Consumer(out, tmp_path)
    runs = []
    # what the consumer does after each night's run: sync, skip, crash mid-apply
    plan = [
        "sync",
        "skip",
        "sync",
        "crash",
        "sync",
        "skip",
        "skip",
        "skip",
        "sync",
        "rollback",
        "skip",
        "sync",
    ]
    for night, action in enumerate(plan):
        if night:
            corpus.night()
        runs.append(nightly(corpus.root, out))
        if action == "crash":
            consumer.sync(crash_after=1)
            assert not consumer.in_step() and consumer.applied == runs[-2]
            consumer.sync()  # the retry, since the same run
        elif action == "rollback":  # the night's run was bad: publish the one before again
            result = CliRunner().invoke(main, ["publish", str(out), runs[-2]])
            assert result.exit_code == 0, result.output
            assert runstore.published(out).name == runs[-2]
            consumer.sync()
        elif action == "sync":
            before = consumer.applied
            consumer.sync()
            if before in runs[:-2]:  # the run it saw last was pruned by --keep 2
                assert not runstore.run_dir(out, before).exists()
        if action != "skip":
            assert consumer.in_step(), f"night {night}: {action}"
            assert consumer.applied == runstore.published(out).name
    assert len(runs) == 12 and len(set(runs)) == 12
    assert len(list((out / "runs").iterdir())) == 2


def test_changes_since_an_unknown_run_is_a_clear_error(tmp_path):
    src = tmp_path / "src"
    Corpus(src, random.Random(1))
    nightly(src, tmp_path / "out")
    result = CliRunner().invoke(main, ["changes", str(tmp_path / "out"), "--since", "nope"])
    assert result.exit_code == 2
    assert "run nope was never published here" in result.output
