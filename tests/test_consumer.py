"""An embedding job that follows `chunkmill changes --since` after
irregular gaps (nights skipped, a crash mid-apply and a retry, a rollback) always ends with
exactly the published run's chunks, also after --keep 2 pruned the runs it last saw; with
`--updates`, with exactly their rows (every column), not only their ids and texts."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from chunkmill.pipeline.runstore.runs_table import read_history
from tests.conftest import SAMPLE
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

    def shift(self) -> None:
        """A blank line after the title: every chunk below keeps its id, not its lines."""
        path = self.rng.choice(sorted(self.root.iterdir()))
        path.write_text(path.read_text().replace("\n", "\n\n", 1))

    def night(self) -> None:
        for _ in range(self.rng.randint(1, 3)):
            self.edit()
        self.shift()
        if self.rng.random() < 0.6:
            self.add()
        if self.rng.random() < 0.5:
            self.delete()


def collapse(text: str) -> str:
    """A kept id holds the same blocks, so the same text up to the blank lines between
    them (`shift` adds one): what an embedding model reads the same way."""
    return " ".join(text.split())


class Consumer:
    """A vector store kept in step with the published chunks: chunk_id -> embed_text, or
    with ``updates`` chunk_id -> the whole row (what a store that keeps line numbers, urls
    and front matter beside its vectors holds)."""

    def __init__(self, out: Path, tmp: Path, updates: bool = False):
        self.out, self.tmp, self.updates = out, tmp, updates
        self.store: dict = {}
        self.applied: str | None = None  # the run id stored after a complete apply
        self.seen_updates = 0

    def published(self) -> dict:
        rows = pq.read_table(runstore.resolve(self.out) / "chunks.parquet").to_pylist()
        if self.updates:
            return {r["chunk_id"]: r for r in rows}
        return {r["chunk_id"]: collapse(r["embed_text"]) for r in rows}

    def sync(self, crash_after: int | None = None) -> None:
        # the first time, every published chunk (--all), with the run it brings us to
        start = ["--since", self.applied] if self.applied else ["--all"]
        todo = self.tmp / "todo.parquet"
        result = CliRunner().invoke(
            main,
            [
                "changes",
                str(self.out),
                *start,
                "--format",
                "parquet",
                "--out",
                str(todo),
                *(["--updates"] if self.updates else []),
            ],
        )
        assert result.exit_code == 0, result.output
        table = pq.read_table(todo)
        assert set(table["op"].to_pylist()) <= {"add", "remove", "update"}
        assert self.updates or "update" not in table["op"].to_pylist()
        for k, row in enumerate(table.to_pylist()):
            if crash_after is not None and k == crash_after:
                return  # the job died: nothing stored, the next sync starts over
            op, chunk_id = row.pop("op"), row["chunk_id"]
            if op == "add":
                self.store[chunk_id] = row if self.updates else collapse(row["embed_text"])
            elif op == "update":  # the same words, so the vector stays: no embedding
                assert collapse(self.store[chunk_id]["embed_text"]) == collapse(row["embed_text"])
                assert self.store[chunk_id] != row
                self.store[chunk_id] = row
            else:
                self.store.pop(chunk_id, None)
        self.applied = table.schema.metadata[b"chunkmill.until"].decode()
        self.seen_updates += table["op"].to_pylist().count("update")

    def in_step(self) -> bool:
        return self.store == self.published()


def nightly(src: Path, out: Path) -> str:
    result = CliRunner().invoke(
        main, ["run", str(src), "--out", str(out), "--keep", "2", *SMALL_FLAGS]
    )
    assert result.exit_code == 0, result.output
    return runstore.published(out).name


@pytest.mark.parametrize("updates", [False, True], ids=["ids", "rows"])
def test_consumer_with_gaps_crashes_and_pruned_runs(tmp_path, updates):
    rng = random.Random(13)
    corpus = Corpus(tmp_path / "src", rng)
    out = tmp_path / "out"
    consumer = Consumer(out, tmp_path, updates)
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
    # the shifted lines reached the consumer as updates (without --updates it never saw them)
    assert (consumer.seen_updates > 0) == updates


def test_changes_since_an_unknown_run_is_a_clear_error(tmp_path):
    src = tmp_path / "src"
    Corpus(src, random.Random(1))
    nightly(src, tmp_path / "out")
    result = CliRunner().invoke(main, ["changes", str(tmp_path / "out"), "--since", "nope"])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "--since nope: unknown run id" in result.output
    # what to do instead: start from a snapshot, or find the run ids; no SQL
    assert "--all" in result.output and f"chunkmill runs {tmp_path / 'out'}" in result.output
    assert "FROM" not in result.output
    run = runstore.published(tmp_path / "out").name
    for fmt in ("parquet", "jsonl"):
        args = ["--since", run, "--format", fmt, "--out", str(tmp_path / "no" / "such.file")]
        result = CliRunner().invoke(main, ["changes", str(tmp_path / "out"), *args])
        assert result.exit_code == 2 and "cannot write there" in result.output
        assert len(result.output.strip().splitlines()) == 1


def _changes(out: Path, since: str, *flags: str) -> list[dict]:
    result = CliRunner().invoke(main, ["changes", str(out), "--since", since, *flags])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_front_matter_and_moved_lines_are_updates_of_kept_ids(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    doc = src / "guide.md"
    body = "\n\n".join(f"## Part {j}\n\n{sentences(6, start=j * 10)}" for j in range(4))
    doc.write_text(f"---\ntags: [alpha]\n---\n# Guide\n\nIntro.\n\n{body}\n")
    first = nightly(src, out)
    chunks = pq.read_table(runstore.resolve(out) / "chunks.parquet").to_pylist()
    assert len(chunks) >= 4

    # a front matter field that embed_text does not show: every id stays, every row changes
    doc.write_text(doc.read_text().replace("[alpha]", "[beta]"))
    second = nightly(src, out)
    runs = {r["run_id"]: r for r in runstore.history(out)}
    assert runs[second]["chunks_added"] == runs[second]["chunks_removed"] == 0
    assert runs[second]["chunks_updated"] == len(chunks)
    assert pq.read_metadata(runstore.resolve(out) / "changes.parquet").num_rows == 0
    assert _changes(out, first) == []  # without --updates: the ops consumers know, none
    rows = _changes(out, first, "--updates")
    assert [r["op"] for r in rows] == ["update"] * len(chunks)
    assert [r["chunk_id"] for r in rows] == [c["chunk_id"] for c in chunks]
    assert all(r["front_matter"] == {"tags": ["beta"]} for r in rows)
    chunks = pq.read_table(runstore.resolve(out) / "chunks.parquet").to_pylist()

    # a longer first paragraph: its chunk is new, the chunks below keep their ids and move
    doc.write_text(doc.read_text().replace("Intro.", "Intro, a little longer."))
    third = nightly(src, out)
    rows = _changes(out, second, "--updates")
    ops = [r["op"] for r in rows]
    assert ops.count("add") == ops.count("remove") == 1
    moved = [r for r in rows if r["op"] == "update"]
    before = {c["chunk_id"]: c for c in chunks}
    assert len(moved) == len(chunks) - 1
    shift = len("Intro, a little longer.") - len("Intro.")
    assert all(r["char_start"] == before[r["chunk_id"]]["char_start"] + shift for r in moved)
    # since the first run: the same ids updated once or twice are listed once
    assert [r["op"] for r in _changes(out, first, "--updates")].count("update") == len(moved)
    listing = CliRunner().invoke(main, ["runs", str(out)])
    assert f"-1 ~{len(moved)} =" in listing.output

    # a folder written before updates were recorded: its ledger and runs table lack the
    # columns; they read as none recorded, and the next runs record them
    for name, column in (("ledger.parquet", "updated"), ("runs.parquet", "chunks_updated")):
        table = pq.read_table(out / name)
        pq.write_table(table.drop_columns([column]).replace_schema_metadata(
            table.schema.metadata), out / name)  # fmt: skip
    data = (out / "ledger.parquet").read_bytes()
    stamp = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "previous": None}
    (out / "ledger.sha256").write_text(json.dumps(stamp))
    old_runs = read_history(out / "runs.parquet")  # read as it is, not rebuilt
    assert old_runs is not None and {r["chunks_updated"] for r in old_runs} == {None}
    # the recorded updates are gone, the adds and removes are not
    assert sorted(r["op"] for r in _changes(out, second, "--updates")) == ["add", "remove"]
    doc.write_text(doc.read_text().replace("[beta]", "[gamma]"))
    fourth = nightly(src, out)
    rows = _changes(out, third, "--updates")
    assert [r["op"] for r in rows] == ["update"] * len(chunks)
    assert {r["run_id"] for r in runstore.history(out)} == {first, second, third, fourth}


def test_a_new_link_template_updates_urls_and_keeps_every_id(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(SAMPLE, src)
    first = nightly(src, out)
    before = pq.read_table(runstore.resolve(out) / "chunks.parquet")
    template = "https://docs.example.com/{path_stem}#{anchor}"
    flags = ["run", str(src), "--out", str(out), *SMALL_FLAGS, "--link-template", template]
    result = CliRunner().invoke(main, flags)
    assert result.exit_code == 4, result.output  # every url changes: held, as any field
    assert "no chunk id changes" in result.output
    result = CliRunner().invoke(main, [*flags, "--new-policy"])
    assert result.exit_code == 0, result.output  # accepted: no id changes
    after = pq.read_table(runstore.resolve(out) / "chunks.parquet")
    assert after["chunk_id"].to_pylist() == before["chunk_id"].to_pylist()
    assert after["policy_hash"][0] != before["policy_hash"][0]
    rows = _changes(out, first, "--updates")
    assert [r["op"] for r in rows] == ["update"] * after.num_rows
    assert all(r["url"].startswith("https://docs.example.com/") for r in rows)
    # a field that moves boundaries still asks for --new-policy
    result = CliRunner().invoke(
        main, ["run", str(src), "--out", str(out), "--link-template", template]
    )
    assert result.exit_code == 4 and "published chunk ids would change" in result.output


def test_table_metadata_reaches_the_chunks_search_and_updates(tmp_path):
    import pyarrow as pa

    rows = [
        {"id": f"pump-{i}.md", "text": f"# Pump {i}\n\n{sentences(5, start=i * 9)}", "team": t}
        for i, t in enumerate(["ops", "dev", "ops"])
    ]
    rows[2]["text"] = "---\nteam: field\n---\n" + rows[2]["text"]  # its own key wins
    table = tmp_path / "pumps.parquet"
    pq.write_table(pa.Table.from_pylist(rows), table)
    out = tmp_path / "out"
    first = nightly(table, out)
    chunks = pq.read_table(runstore.resolve(out) / "chunks.parquet").to_pylist()
    teams = {c["path"]: dict(c["front_matter"])["team"] for c in chunks}
    assert teams == {"pump-0.md": "ops", "pump-1.md": "dev", "pump-2.md": "field"}
    found = CliRunner().invoke(main, ["search", str(out), "pump", "--meta", "team=ops", "--json"])
    assert found.exit_code == 0, found.output
    assert {r["path"] for r in json.loads(found.stdout)} == {"pump-0.md"}
    # a change to the column alone: the same ids, their rows updated
    rows[1]["team"] = "ops"
    pq.write_table(pa.Table.from_pylist(rows), table)
    nightly(table, out)
    updates = _changes(out, first, "--updates")
    assert updates and {r["op"] for r in updates} == {"update"}
    assert {r["path"] for r in updates} == {"pump-1.md"}
    assert all(r["front_matter"]["team"] == "ops" for r in updates)


TYPED = """---
title: Guide
tags: [alpha, beta]
draft: true
weight: 3
ratio: 0.5
version: "1.0"
code: "[1, 2]"
nested: {b: 1, a: [x, 2024-01-02]}
created: 2024-12-23
empty:
---
# Guide

Some text.
"""


def test_jsonl_front_matter_is_an_object_of_the_values_written(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "guide.md").write_text(TYPED)
    run = nightly(src, out)
    result = CliRunner().invoke(main, ["changes", str(out), "--all"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and {r["op"] for r in rows} == {"add"}
    # strings stay strings, also those that read as JSON ("1.0", "[1, 2]"); dates as text
    assert rows[0]["front_matter"] == {
        "title": "Guide",
        "tags": ["alpha", "beta"],
        "draft": True,
        "weight": 3,
        "ratio": 0.5,
        "version": "1.0",
        "code": "[1, 2]",
        "nested": {"a": ["x", "2024-01-02"], "b": 1},
        "created": "2024-12-23",
        "empty": None,
    }
    assert {r["next_since"] for r in rows} == {run}
    # the Python API gives the same records
    import chunkmill

    assert chunkmill.change_records(out, None) == rows


def test_a_jsonl_consumer_takes_the_run_to_store_from_the_output_alone(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    corpus = Corpus(src, random.Random(5))
    nightly(src, out)

    def sync(applied: str | None) -> tuple[list[dict], str | None]:
        start = ["--since", applied] if applied else ["--all"]
        result = CliRunner().invoke(main, ["changes", str(out), *start, "--updates"])
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        return rows, rows[-1]["next_since"] if rows else applied

    rows, applied = sync(None)
    assert rows and applied == runstore.published(out).name
    store = {r["chunk_id"]: r["embed_text"] for r in rows}
    for _ in range(3):
        corpus.night()
        nightly(src, out)
        rows, applied = sync(applied)
        for row in rows:
            if row["op"] == "remove":
                store.pop(row["chunk_id"])
            else:
                store[row["chunk_id"]] = row["embed_text"]
        assert applied == runstore.published(out).name
    published = pq.read_table(runstore.resolve(out) / "chunks.parquet").to_pylist()
    assert store == {c["chunk_id"]: c["embed_text"] for c in published}


def test_a_cursor_file_moves_on_only_when_the_changes_are_applied(tmp_path):
    """`changes --cursor FILE` hands out the changes since the run FILE names (no FILE: all of
    them) and moves FILE on only with --applied: a consumer that crashes before saying so is
    handed the same changes again; a store kept by cursor ends equal to the published run."""
    corpus = Corpus(tmp_path / "src", random.Random(5))
    out, cursor, todo = tmp_path / "out", tmp_path / "applied", tmp_path / "todo.parquet"
    store: dict[str, str] = {}

    def changes(*flags: str):
        return CliRunner().invoke(main, ["changes", str(out), "--cursor", str(cursor), *flags])

    def ask() -> list[dict]:
        result = changes("--format", "parquet", "--out", str(todo))
        assert result.exit_code == 0, result.output
        return pq.read_table(todo).to_pylist()

    def applied() -> None:
        result = changes("--applied")
        assert result.exit_code == 0, result.output

    def apply(rows: list[dict]) -> None:
        for row in rows:
            if row["op"] == "add":
                store[row["chunk_id"]] = collapse(row["embed_text"])
            else:
                store.pop(row["chunk_id"], None)

    def published() -> dict[str, str]:
        chunks = pq.read_table(runstore.resolve(out) / "chunks.parquet").to_pylist()
        return {c["chunk_id"]: collapse(c["embed_text"]) for c in chunks}

    first = nightly(corpus.root, out)
    rows = ask()
    assert {r["op"] for r in rows} == {"add"} and not cursor.exists()
    apply(rows)
    applied()
    assert cursor.read_text().strip() == first and store == published()
    for _ in range(2):
        corpus.night()
        nightly(corpus.root, out)
        rows = ask()
        assert rows and ask() == rows  # not applied yet: the same changes again
        apply(rows)
        applied()
        assert store == published()
    assert cursor.read_text().strip() == runstore.published(out).name
    assert ask() == []  # nothing new since the cursor's run
    result = changes("--applied")
    assert result.exit_code == 0 and cursor.read_text().strip() == runstore.published(out).name
    result = changes("--applied")  # nothing handed out since
    assert result.exit_code == 2 and "no change set is waiting" in result.output
    assert len(result.output.strip().splitlines()) == 1
    cursor.write_text("no-such-run\n")
    result = changes()
    assert result.exit_code == 2 and f"remove {cursor} to start from a snapshot" in result.output
    assert "not both" in changes("--all").output
