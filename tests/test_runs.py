"""Nightly runs: incremental reuse, change sets, atomic publish, locking, kills."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import queries, runstore
from chunkmill.pipeline.batching import Reused
from tests.conftest import REPO, SAMPLE
from tests.helpers import EVERY_TABLE, SMALL_FLAGS, document_metadata, sentences, table_bytes


def run(src: Path, out: Path, *flags: str) -> dict:
    """A run writing every table (the optional ones too: their reuse is tested here)."""
    args = ["run", str(src), "--out", str(out), *SMALL_FLAGS, *EVERY_TABLE, *flags]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return runstore.history(out)[-1]


def published_table(out: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(runstore.resolve(out) / f"{name}.parquet")


@pytest.fixture
def corpus(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    return src


def test_second_run_without_changes_reuses_everything(corpus, tmp_path):
    out = tmp_path / "out"
    first = run(corpus, out)
    assert first["documents_added"] == 11 and first["chunks_added"] == first["chunks_total"]
    first_dir = runstore.resolve(out)
    second = run(corpus, out)
    assert (second["chunks_added"], second["chunks_removed"]) == (0, 0)
    assert second["chunks_kept"] == first["chunks_total"]
    assert second["documents_parsed"] == 0 and second["documents_unchanged"] == 11
    assert published_table(out, "changes").height == 0
    second_dir = runstore.resolve(out)
    assert second_dir != first_dir
    assert (out / "published").resolve() == second_dir.resolve()
    for name in ("documents", "blocks", "chunks", "postings", "rejects"):
        assert table_bytes(first_dir, name) == table_bytes(second_dir, name)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("file", "old", "new", "section"),
    [
        (
            "guides/getting-started.md",
            "refuses to open a folder",
            "declines to open a folder",
            "Create a store",
        ),
        (
            "reference/config.md",
            "Pebble does not listen on a network by default.",
            "Pebble listens on no network at all by default.",
            "Network",
        ),
        (
            "notes/quotes-and-html.md",
            "Text after the HTML block",
            "The text after the HTML block",
            "After the HTML",
        ),
    ],
)
def test_an_edit_changes_only_its_own_section(corpus, tmp_path, file, old, new, section):
    out = tmp_path / "out"
    run(corpus, out)
    before = published_table(out, "chunks")
    _edit(corpus / file, old, new)
    record = run(corpus, out)
    after = published_table(out, "chunks")
    changes = published_table(out, "changes")
    assert record["documents_changed"] == 1 and record["documents_parsed"] == 1
    assert record["chunks_added"] >= 1
    added = set(changes.filter(pl.col("op") == "add")["chunk_id"])
    removed = set(changes.filter(pl.col("op") == "remove")["chunk_id"])

    def in_section(df: pl.DataFrame) -> set[str]:
        mask = (pl.col("path") == file) & (pl.col("section_title") == section)
        return set(df.filter(mask)["chunk_id"])

    assert added and added <= in_section(after)
    assert removed and removed <= in_section(before)

    def untouched(df: pl.DataFrame) -> set[str]:
        return set(df["chunk_id"]) - in_section(df)

    assert untouched(before) == untouched(after)
    # the added rows carry what an embedding job needs
    adds = changes.filter(pl.col("op") == "add")
    assert adds["embed_text"].null_count() == 0 and adds["n_tokens"].null_count() == 0


def test_incremental_output_equals_a_full_run(corpus, tmp_path):
    out, full = tmp_path / "out", tmp_path / "full"
    run(corpus, out)
    _edit(corpus / "index.md", "imaginary key-value store", "imaginary key/value store")
    (corpus / "notes" / "plain-notes.md").unlink()
    (corpus / "guides" / "new.md").write_text("# New page\n\nA page added between runs.\n")
    record = run(corpus, out)
    assert (
        record["documents_added"],
        record["documents_changed"],
        record["documents_deleted"],
    ) == (1, 1, 1)
    run(corpus, full, "--full")
    a, b = runstore.resolve(out), runstore.resolve(full)
    for name in ("documents", "blocks", "chunks", "postings", "rejects"):
        assert table_bytes(a, name) == table_bytes(b, name), name


def test_a_table_row_whose_metadata_changes_is_a_changed_document(tmp_path):
    # the text stays, a metadata column changes: the incremental run takes the new value,
    # and its tables are the bytes of a full run's
    rows = [
        {"doc": "a.md", "body": "# A\n\nalpha text", "lang": "fr", "tags": ["x", "y"]},
        {"doc": "b.md", "body": "# B\n\nbeta text", "lang": "en", "tags": []},
    ]
    src, out, full = tmp_path / "docs.jsonl", tmp_path / "out", tmp_path / "full"
    src.write_text("\n".join(json.dumps(r) for r in rows))
    flags = ("--text-column", "body", "--id-column", "doc")
    run(src, out, *flags)
    rows[0]["lang"] = "es"
    src.write_text("\n".join(json.dumps(r) for r in rows))
    record = run(src, out, *flags)
    assert (record["documents_changed"], record["documents_unchanged"]) == (1, 1)
    assert record["documents_parsed"] == 1  # b.md, text and metadata as they were, is reused
    metadata = document_metadata(runstore.resolve(out) / "documents.parquet")
    assert metadata["a.md"] == {"lang": "es", "tags": '["x", "y"]'}  # lists as JSON
    run(src, full, "--full", *flags)
    a, b = runstore.resolve(out), runstore.resolve(full)
    for name in ("documents", "blocks", "chunks", "postings", "rejects"):
        assert table_bytes(a, name) == table_bytes(b, name), name


def test_deleted_document_drops_its_chunks(corpus, tmp_path):
    out = tmp_path / "out"
    run(corpus, out)
    gone = set(
        published_table(out, "chunks").filter(pl.col("path") == "guides/fences.md")["chunk_id"]
    )
    (corpus / "guides" / "fences.md").unlink()
    record = run(corpus, out)
    changes = published_table(out, "changes")
    assert record["documents_deleted"] == 1
    assert set(changes.filter(pl.col("op") == "remove")["chunk_id"]) == gone
    assert changes.filter(pl.col("op") == "add").height == 0


def test_a_new_assembly_packs_stored_blocks_once_and_keeps_the_ids(corpus, tmp_path, monkeypatch):
    """Chunks assembled by another version (embed_text, splits) are not reused: the stored
    blocks are packed again, nothing is parsed, ids whose boundaries stay are kept, and the
    run after it reuses everything again."""
    from chunkmill.jobs import reuse

    out = tmp_path / "out"
    run(corpus, out)
    ids = published_table(out, "chunks")["chunk_id"].to_list()
    monkeypatch.setattr(reuse, "ASSEMBLY_VERSION", "assembly-next")
    record = run(corpus, out)
    assert record["documents_parsed"] == 0
    assert record["documents_repacked"] == record["documents_unchanged"] == 11
    assert published_table(out, "chunks")["chunk_id"].to_list() == ids
    assert record["chunks_added"] == record["chunks_removed"] == 0
    assert (
        json.loads((runstore.resolve(out) / "manifest.json").read_text())["assembly_key"]
        == "assembly-next"
    )
    assert run(corpus, out)["documents_repacked"] == 0


def test_policy_change_repacks_without_parsing(corpus, tmp_path):
    out = tmp_path / "out"
    first = run(corpus, out)
    old_ids = set(published_table(out, "chunks")["chunk_id"])
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(corpus),
            "--out",
            str(out),
            "--target-tokens",
            "70",
            "--max-tokens",
            "110",
            "--min-tokens",
            "20",
            "--overlap-tokens",
            "10",
            "--new-policy",
            *EVERY_TABLE,
        ],
    )
    assert result.exit_code == 0, result.output
    record = runstore.history(out)[-1]
    assert record["documents_parsed"] == 0 and record["documents_repacked"] == 11
    new_ids = set(published_table(out, "chunks")["chunk_id"])
    assert not old_ids & new_ids
    assert (record["chunks_removed"], record["chunks_added"]) == (
        first["chunks_total"],
        len(new_ids),
    )
    # a bias change also re-packs from stored blocks (estimates redone, nothing parsed)
    result = CliRunner().invoke(
        main,
        ["run", str(corpus), "--out", str(out), "--bias", "code", "--new-policy", *EVERY_TABLE],
    )
    assert result.exit_code == 0, result.output
    assert runstore.history(out)[-1]["documents_parsed"] == 0
    blocks = published_table(out, "blocks")
    full = tmp_path / "full"
    CliRunner().invoke(
        main, ["run", str(corpus), "--out", str(full), "--bias", "code", *EVERY_TABLE]
    )
    assert blocks.equals(published_table(full, "blocks"))


def test_run_ids_sort_in_the_order_runs_started():
    # Runs that start within one second (CI made them) must still sort by start: pruning
    # and the object store keep the last ids in sorted order.
    ids = []
    for _ in range(50):
        ids.append(runstore.new_run_id())
        time.sleep(0.002)
    assert ids == sorted(ids) and len(set(ids)) == 50
    assert all(runstore.RUN_ID.fullmatch(i) for i in [*ids, "20261122T112542Z-fdb96f"])


def test_keep_prunes_old_runs_and_runs_lists_them(corpus, tmp_path):
    out = tmp_path / "out"
    for i in range(4):
        _edit(corpus / "index.md", "Pebble handbook\n\nPebble", f"Pebble handbook\n\nPebble{i}")
        run(corpus, out, "--keep", "2")
    assert len(list((out / "runs").iterdir())) == 2
    history = runstore.history(out)
    assert [r["status"] for r in history] == ["published"] * 4
    result = CliRunner().invoke(main, ["runs", str(out)])
    assert result.exit_code == 0
    assert [line[2:].split()[1] for line in result.output.splitlines()] == [
        "pruned", "pruned", "published", "published"
    ]  # fmt: skip
    assert result.output.splitlines()[-1].startswith("*")
    listed = json.loads(CliRunner().invoke(main, ["runs", str(out), "--json"]).output)
    assert [r["pruned"] for r in listed] == [True, True, False, False]


def test_log_json_one_line_per_stage(corpus, tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "chunkmill",
            "run",
            str(corpus),
            "--out",
            str(out),
            "--log-json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    stages = [line["stage"] for line in lines]
    assert stages == ["parse", "chunk", "changes", "publish", "summary"]
    assert all("seconds" in line for line in lines)
    assert lines[1]["chunks"] > 0 and lines[1]["strategies"]


def test_stage_seconds_are_not_shown_as_if_they_added_up(corpus, tmp_path):
    """Workers parse and chunk alongside the main process, which reads, writes and builds
    the change set: the log keeps the wall time apart from the workers' summed seconds."""
    out = tmp_path / "out"
    args = ["run", str(corpus), "--out", str(out), "--workers", "2"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    lines = {line.split()[1]: line for line in result.stderr.splitlines() if "] " in line}
    for stage in ("[parse]", "[chunk]"):
        assert " summed_worker_seconds=" in lines[stage] and " workers=" in lines[stage]
        assert " seconds=" not in lines[stage]
    publish = lines["[publish]"]
    assert " wall_seconds=" in publish and " main_seconds=" in publish
    assert " summed_worker_seconds=parse:" in publish and " workers=" in publish
    assert " seconds=" not in publish and "total:" not in publish
    # --log-json keeps its fields and adds the same split
    result = CliRunner().invoke(main, [*args, "--full", "--log-json"])
    assert result.exit_code == 0, result.output
    stages = {r["stage"]: r for r in map(json.loads, result.stderr.splitlines())}
    record = stages["publish"]
    assert record["wall_seconds"] == record["seconds"]["total"]
    assert set(record["main_seconds"]) | set(record["summed_worker_seconds"]) | {"total"} == set(
        record["seconds"]
    )
    assert sum(record["main_seconds"].values()) <= record["wall_seconds"]
    assert stages["parse"]["summed_worker_seconds"] == stages["parse"]["seconds"]


def _big_corpus(root: Path, n: int = 400) -> Path:
    """Enough generated documents that a run takes about a second (room to be killed)."""
    root.mkdir(parents=True)
    para = "Words about the store, its log, its index and its compactor. " * 12
    for i in range(n):
        body = "\n\n".join(f"## Part {j}\n\n{para}\n\n```py\nx = {i * j}\n```" for j in range(8))
        (root / f"doc{i:04d}.md").write_text(f"# Document {i}\n\n{body}\n")
    return root


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _assert_gone(pids: list[int], seconds: float = 5.0) -> None:
    deadline = time.time() + seconds
    alive = pids
    while alive and time.time() < deadline:
        time.sleep(0.05)
        alive = [
            p
            for p in alive
            if Path(f"/proc/{p}").exists()
            and "Z" not in Path(f"/proc/{p}/stat").read_text().split()[2]
        ]
    assert not alive, f"worker processes outlived their killed run: {alive}"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "chunkmill", *args]


# Holds OUT's run lock until its standard input closes: a run that would finish before the
# second one starts (as a small run does on a fast machine) cannot stand in for it.
HOLD_THE_LOCK = """
import sys
from pathlib import Path
from chunkmill.pipeline.runstore import Lock

with Lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_second_concurrent_run_is_refused(tmp_path):
    src = _big_corpus(tmp_path / "src", 20)
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        second = subprocess.run(
            _cli("run", str(src), "--out", str(out)), cwd=REPO, capture_output=True, text=True
        )
        assert second.returncode == 3
        assert str(out / runstore.LOCK) in second.stderr
        assert f"PID {holder.pid}" in second.stderr
        assert runstore.published(out) is None
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert holder.returncode == 0
    again = subprocess.run(_cli("run", str(src), "--out", str(out)), cwd=REPO, capture_output=True)
    assert again.returncode == 0, again.stderr


@pytest.mark.slow
def test_killed_runs_leave_the_published_run_intact(tmp_path):
    n_docs = 200  # 17 runs of it; the kill moments scale with a run's time
    src = _big_corpus(tmp_path / "src", n_docs)
    out = tmp_path / "out"
    started = time.perf_counter()
    assert (
        subprocess.run(
            _cli("run", str(src), "--out", str(out)), cwd=REPO, capture_output=True
        ).returncode
        == 0
    )
    # kill moments within the first 60 % of a whole run, however fast the machine and the
    # run: a kill after the run's end would test nothing
    span = 0.6 * (time.perf_counter() - started)
    rng = random.Random(20)
    kills = left_folders = 0
    # Random kill moments; the deterministic kill at every commit step is
    # test_runstore.py's. Eight kills cover reading, workers and publishing.
    for i in range(8):
        doc = src / f"doc{rng.randrange(n_docs):04d}.md"
        doc.write_text(doc.read_text() + f"\n\nEdit number {i}.\n")
        proc = subprocess.Popen(
            _cli("run", str(src), "--out", str(out), "--full"),
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 30
        while not (out / runstore.LOCK).exists() and proc.poll() is None:
            assert time.time() < deadline
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, span))  # a random moment of the run's real work
        if proc.poll() is None:
            workers = _children(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
            _assert_gone(workers)  # a killed run leaves no worker process behind
            history = runstore.history(out)
            published = {r["run_id"] for r in history if r["status"] == "published"}
            left_folders += len(set(runstore.unpublished(out)) - published)
        proc.wait()
        # whatever happened, the published run is complete and consistent
        assert all(rows.is_empty() for rows in queries.checks(out).values())
        # and the next run takes over the stale lock, completes and publishes
        nxt = subprocess.run(
            _cli("run", str(src), "--out", str(out)), cwd=REPO, capture_output=True, text=True
        )
        assert nxt.returncode == 0, nxt.stderr
        assert runstore.history(out)[-1]["status"] == "published"
        assert all(rows.is_empty() for rows in queries.checks(out).values())
        assert runstore.unpublished(out) == [] or set(runstore.unpublished(out)) <= {
            r["run_id"] for r in runstore.history(out) if r["status"] == "published"
        }
    assert kills >= 4  # most runs really were killed mid-way
    statuses = [r["status"] for r in runstore.history(out)]
    assert statuses.count("abandoned") == left_folders > 0
    assert not (out / runstore.LOCK).exists()


def _two_documents():
    from chunkmill.pipeline import batch
    from chunkmill.pipeline.document import RawDocument, make_doc_id
    from chunkmill.pipeline.policy import Policy

    raws = [
        RawDocument("a.md", "s", b"# Alpha\n\nThe first page, about alpha terms.\n"),
        RawDocument("b.md", "s", b"# Beta\n\nThe second page.\n\n## More\n\nBeta again, more.\n"),
    ]
    tables, _ = batch.process(batch.Batch(raws), Policy(), 1 << 20)
    return batch, raws, tables, make_doc_id("b.md"), Policy()


def _b_reused(mark=None):
    """A batch of a.md (fresh) and b.md (reused: its rows, chunks and postings taken from a
    batch of both, the postings passed through ``mark`` when given)."""
    import pyarrow.compute as pc

    batch, raws, whole, b_id, policy = _two_documents()

    def of_b(t):
        return t.filter(pc.equal(t["doc_id"], b_id))

    b_chunks = of_b(whole["chunks"])
    stored = whole["postings"].filter(pc.is_in(whole["postings"]["chunk_id"], b_chunks["chunk_id"]))
    mixed = batch.Batch(
        [raws[0], Reused(b_id, len(raws[1].data))],
        of_b(whole["documents"]),
        of_b(whole["blocks"]),
        b_chunks,
        mark(stored) if mark else stored,
    )
    return batch, whole, policy, mixed, stored


def test_reused_chunks_take_their_postings_rows_from_the_published_run():
    import pyarrow as pa
    import pyarrow.compute as pc

    def marked(stored):
        return stored.set_column(2, "tf", pa.array([999] * stored.num_rows, pa.int32()))

    batch, whole, policy, reused, stored = _b_reused(marked)
    b_chunks = reused.reused_chunks
    tables, work = batch.process(reused, policy, 1 << 20)
    assert work["repacked"] == 1  # only a.md was packed
    got = tables["postings"]
    is_b = pc.is_in(got["chunk_id"], b_chunks["chunk_id"])
    assert got.filter(is_b)["tf"].to_pylist() == [999] * stored.num_rows  # taken, not made
    assert got.filter(pc.invert(is_b)).equals(
        whole["postings"].filter(
            pc.invert(pc.is_in(whole["postings"]["chunk_id"], b_chunks["chunk_id"]))
        )
    )
    # without stored rows they are made again: the same table as one batch of both makes
    again, _ = batch.process(
        batch.Batch(reused.items, reused.reused_docs, reused.reused_blocks, b_chunks),
        policy,
        1 << 20,
    )
    assert again["postings"].equals(whole["postings"])
    assert got["chunk_id"].to_pylist() == whole["postings"]["chunk_id"].to_pylist()  # in order


def test_stored_postings_are_linked_only_when_made_with_the_same_terms(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from chunkmill.pipeline import schemas
    from chunkmill.pipeline.policy import POSTINGS_VERSION
    from chunkmill.pipeline.runstore.published_run import Parts, Previous

    def footer_says(version):
        folder = tmp_path / str(version)
        folder.mkdir()
        meta = {} if version is None else {"mdchunk.postings_version": version}
        pq.write_table(
            schemas.empty(schemas.POSTINGS.with_metadata(meta)), folder / "postings.parquet"
        )
        docs = pa.table({"doc_id": pa.array([], pa.string())})
        return Previous(folder, {}, docs, Parts({}, [])).postings_reusable

    assert footer_says(POSTINGS_VERSION)
    assert not footer_says("postings-0")
    assert not footer_says(None)  # a run of an chunkmill before postings had a version


def test_a_batch_of_reused_documents_only_is_settled_without_a_worker():
    import pyarrow.compute as pc

    batch, raws, whole, b_id, policy = _two_documents()
    ids = whole["documents"]["doc_id"].to_pylist()
    chunks = whole["chunks"]
    reused = batch.Batch(
        [Reused(d, 1) for d in ids],
        whole["documents"],
        whole["blocks"],
        chunks,
        whole["postings"].filter(pc.is_in(whole["postings"]["chunk_id"], chunks["chunk_id"])),
    )
    tables, counts = batch.settled(reused)
    made, _ = batch.process(reused, policy, 1 << 20)
    assert tables.keys() == made.keys()
    for name in tables:
        assert tables[name].equals(made[name]), name
    assert counts["items"] == 2 and counts["parsed"] == counts["repacked"] == 0
    assert batch.settled(batch.Batch([raws[0]])) is None  # something to parse
    lean = batch.Batch(reused.items, whole["documents"], None, chunks)  # a run without them
    tables, _ = batch.settled(lean)
    assert tables["blocks"].num_rows == tables["postings"].num_rows == 0
    assert tables["chunks"].equals(made["chunks"])


def test_a_nightly_run_sends_only_batches_with_changes_to_workers(corpus, tmp_path, monkeypatch):
    """Batches whose documents are all unchanged are written from the published run's rows
    without a worker; the files are byte for byte a full run's, and a run that only deleted
    a document starts no worker at all."""
    from chunkmill.jobs import pool
    from chunkmill.pipeline import batching

    monkeypatch.setattr(batching, "BATCH_DOCS", 2)  # many batches from a small corpus
    out, full = tmp_path / "out", tmp_path / "full"
    run(corpus, out)
    starts = []
    real_start = pool.Worker.start
    monkeypatch.setattr(pool.Worker, "start", lambda *a: starts.append(1) or real_start(*a))
    pool.shutdown()  # no parked worker from an earlier test
    (corpus / "notes" / "plain-notes.md").unlink()
    run(corpus, out)
    assert starts == []
    _edit(corpus / "index.md", "imaginary key-value store", "imaginary key/value store")
    record = run(corpus, out)
    assert record["documents_changed"] == 1 and starts
    run(corpus, full, "--full")
    a, b = runstore.resolve(out), runstore.resolve(full)
    for name in ("documents", "blocks", "chunks", "postings", "rejects"):
        assert table_bytes(a, name) == table_bytes(b, name), name


def test_a_batch_with_stored_postings_split_after_a_crash_gives_the_same_tables():
    """When a worker dies on a batch, its documents are processed one by one (batch.split)
    and merged back; the stored postings of each reused document go with it."""
    batch, whole, policy, mixed, stored = _b_reused()
    parts = batch.split(mixed)
    assert len(parts) == 2 and parts[1].reused_postings.equals(stored)
    merged, _ = batch.merge([batch.process(p, policy, 1 << 20) for p in parts])
    together, _ = batch.process(mixed, policy, 1 << 20)
    for name in together:
        assert merged[name].equals(together[name]), name


def _run_once(src, out, *flags) -> None:
    result = CliRunner().invoke(
        main, ["run", str(src), "--out", str(out), "--workers", "1", *flags]
    )
    assert result.exit_code == 0, result.output


def _rejects(out):
    return (runstore.resolve(out) / "rejects.parquet").read_bytes()


def test_incremental_rejects_equal_full_in_input_order(tmp_path):
    """Rejects of reused and re-read documents come out in input order, the same for an
    incremental run and a --full run. (Chunk-stage over_cap rejects, which this test used
    to make, no longer happen: nothing is rejected for its size.)"""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("a", "b", "c"):
        (src / f"{name}.md").write_text(f"# {name}\n\n{sentences(40, start=ord(name))}\n")
    (src / "z.md").write_text("# Z\n\nA document every run can read.\n")
    inc, full = tmp_path / "inc", tmp_path / "full"
    _run_once(src, inc)  # the default --max-bytes reads them all
    (src / "b.md").write_text((src / "b.md").read_text() + "\nOne more line.\n")
    # a and c reused, b read again: all too large (3 of 4 chunks go: a deliberate removal)
    _run_once(src, inc, "--max-bytes", "1000", "--allow-mass-delete")
    _run_once(src, full, "--max-bytes", "1000", "--full")
    got = pl.read_parquet(runstore.resolve(inc) / "rejects.parquet")
    assert got["path"].to_list() == ["a.md", "b.md", "c.md"]
    assert set(got["reason"]) == {"too_large"}
    assert _rejects(inc) == _rejects(full)
