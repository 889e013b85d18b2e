"""The Python API: the same rows as a run, light imports (its documented examples run in
test_docs)."""

from __future__ import annotations

import dataclasses
import os
import random
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import chunkmill
from chunkmill import (
    Chunk,
    Policy,
    PolicyError,
    RejectedError,
    chunk_table,
    chunk_text,
    chunk_texts,
)
from chunkmill.pipeline import schemas
from tests.helpers import fresh_python

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"


def _run_chunks(inputs: list[str], out: Path) -> pa.Table:
    summary = chunkmill.run(inputs, out, workers=1)
    return pq.read_table(summary.folder / "chunks.parquet")


def _rejected_paths(out: Path) -> set[str]:
    return set(pq.read_table(out / "published" / "rejects.parquet")["path"].to_pylist())


def test_chunk_fields_are_the_chunks_schema():
    assert [f.name for f in dataclasses.fields(Chunk)] == schemas.CHUNKS.names


def test_chunk_text_equals_the_run_rows(tmp_path):
    docs = sorted(p for p in SAMPLE.rglob("*") if p.suffix in (".md", ".mdx", ".txt"))
    assert len(docs) >= 5
    table = _run_chunks([str(SAMPLE)], tmp_path / "out")
    rejected = _rejected_paths(tmp_path / "out")
    checked = 0
    for doc in docs:
        rel = doc.relative_to(SAMPLE).as_posix()
        rows = table.filter(pa.compute.equal(table["path"], rel)).to_pylist()
        text = doc.read_bytes().decode("utf-8", "surrogateescape").removeprefix("\ufeff")
        if rel in rejected:  # a document the run rejected: chunk_text rejects it too
            with pytest.raises(RejectedError):
                chunk_text(text, path=rel)
            continue
        got = chunk_text(text, path=rel)
        want = [Chunk.from_row(r) for r in rows]
        assert [c.chunk_id for c in got] == [c.chunk_id for c in want], rel
        assert got == want, rel
        checked += 1
    assert checked >= 5


def test_chunk_table_equals_a_run_over_the_same_table(tmp_path):
    docs = sorted(p for p in SAMPLE.rglob("*.md"))
    table = pa.table(
        {
            "path": [p.relative_to(SAMPLE).as_posix() for p in docs],
            "text": [p.read_text(encoding="utf-8") for p in docs],
            "lang": ["en"] * len(docs),
        }
    )
    pq.write_table(table, tmp_path / "docs.parquet")
    want = _run_chunks([str(tmp_path / "docs.parquet")], tmp_path / "out")
    got = chunk_table(table, text_column="text", id_column="path")
    assert isinstance(got, pa.Table)
    assert got.num_rows == want.num_rows > 0
    assert got.cast(schemas.CHUNKS).equals(want.cast(schemas.CHUNKS))
    frame = chunk_table(pl.from_arrow(table))
    assert isinstance(frame, pl.DataFrame)
    assert frame["chunk_id"].to_list() == want["chunk_id"].to_pylist()


def test_chunk_texts_equals_chunk_text_for_each_document_on_any_number_of_threads():
    docs = sorted(SAMPLE.rglob("*.md"))
    paths = [p.relative_to(SAMPLE).as_posix() for p in docs]
    texts = [p.read_text(encoding="utf-8") for p in docs]
    one = chunk_texts(
        texts, paths=paths, target_tokens=150, max_tokens=200, min_tokens=40, threads=1
    )
    want = [
        c.chunk_id
        for p, t in zip(paths, texts)
        for c in chunk_text(t, path=p, target_tokens=150, max_tokens=200, min_tokens=40)
    ]
    assert one["chunk_id"].to_pylist() == want
    assert len(set(one["path"].to_pylist())) > 1
    for threads in (2, 5, None):
        assert chunk_texts(
            texts, paths=paths, target_tokens=150, max_tokens=200, min_tokens=40, threads=threads
        ).equals(one)
    named = chunk_texts(["# A\n\ntext", "plain words"])
    assert sorted(set(named["path"].to_pylist())) == ["doc-0.md", "doc-1.md"]


def test_a_lone_surrogate_rejects_its_document_not_the_call():
    texts = ["# A\n\nalpha", "bad \ud800 text", "# C\n\ngamma"]
    with pytest.warns(UserWarning, match="1 document.* rejected, e.g. b.md: invalid_utf8"):
        table = chunk_texts(texts, paths=["a.md", "b.md", "c.md"])
    assert table["path"].to_pylist() == ["a.md", "c.md"]
    alone = chunk_texts([texts[0], texts[2]], paths=["a.md", "c.md"])
    assert table["chunk_id"].to_pylist() == alone["chunk_id"].to_pylist()


def test_chunk_texts_names_what_it_does_not_take():
    with pytest.raises(TypeError, match="list of str"):
        chunk_texts("# one document")
    with pytest.raises(ValueError, match="2 texts but 1 paths"):
        chunk_texts(["a", "b"], paths=["a.md"])
    with pytest.raises(ValueError, match="threads must be"):
        chunk_texts(["a"], threads=0)


def test_chunk_text_policy_overrides_and_errors():
    text = "# T\n\n" + "\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(30))
    small = chunk_text(text, max_tokens=128, target_tokens=100, min_tokens=20, overlap_tokens=0)
    assert len(small) > len(chunk_text(text)) and max(c.n_tokens for c in small) <= 128
    policy = Policy(max_tokens=128, target_tokens=100, min_tokens=20, overlap_tokens=0)
    assert chunk_text(text, policy=policy) == small
    with pytest.raises(PolicyError, match="target_tokens"):
        chunk_text(text, target_tokens=5000)
    with pytest.raises(PolicyError, match="unknown policy field"):
        chunk_text(text, max_tokenz=5)
    with pytest.raises(TypeError, match="str"):
        chunk_text(b"# bytes")
    with pytest.raises(RejectedError) as err:
        chunk_text("# A\n\nbinary \x00 here")
    assert err.value.reason == "binary"


def test_policy_load_reads_yaml(tmp_path):
    f = tmp_path / "policy.yaml"
    f.write_text("max_tokens: 600\ntarget_tokens: 500\n", encoding="utf-8")
    # the minimum and overlap come with the cap and the target (4/15 and 8/75 of it)
    assert Policy.load(f) == Policy(
        max_tokens=600, target_tokens=500, min_tokens=133, overlap_tokens=53
    )
    assert Policy.load(f, max_tokens=700).max_tokens == 700


def test_command_line_imports_no_heavy_module():
    code = (
        "import sys; from chunkmill.jobs.cli import main; import chunkmill; "
        "heavy = [m for m in ('polars', 'pyarrow', 'duckdb', 'markdown_it', 'ray', "
        "'tiktoken', 'tokenizers', 'yaml') if m in sys.modules]; print(heavy)"
    )
    assert fresh_python(code) == "[]"


def test_help_and_version_work_without_heavy_imports():
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    for args in (["--help"], ["--version"], ["run", "--help"]):
        done = subprocess.run(
            [sys.executable, "-m", "chunkmill", *args],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0, done.stderr
    assert "chunkmill" in done.stdout


def test_api_errors_can_be_caught_by_name(tmp_path):
    with pytest.raises(chunkmill.InputError, match=r"^table: no column 'body'"):
        chunkmill.chunk_table(pl.DataFrame({"text": ["# A"]}), text_column="body")
    from chunkmill.jobs.runlog import RunLog

    out = tmp_path / "out"
    chunkmill.run([str(SAMPLE)], out, workers=1, log=RunLog(quiet=True))
    with pytest.raises(chunkmill.LedgerError):
        chunkmill.changes(out, "no-such-run")
    # since None: every published chunk as an add, and the run it brings a consumer to
    everything = chunkmill.changes(out, None)
    published = pl.read_parquet(chunkmill.pipeline.runstore.resolve(out) / "chunks.parquet")
    assert isinstance(everything, chunkmill.Changes) and everything.since is None
    assert set(everything.table["op"].to_pylist()) == {"add"}
    assert everything.adds["chunk_id"].to_pylist() == published["chunk_id"].to_list()
    assert everything.adds.column_names == published.columns  # the chunk columns, no op
    assert everything.updates.num_rows == 0 and everything.removes == []
    assert everything.until == chunkmill.pipeline.runstore.published(out).name
    meta = everything.table.schema.metadata
    assert meta[b"chunkmill.until"] == meta[b"mdchunk.until"] == everything.until.encode()
    nothing = chunkmill.changes(out, everything.until)
    assert not nothing and nothing.since == nothing.until == everything.until


def test_chunk_table_takes_a_lazy_frame_and_names_what_it_does_not_take():
    import polars as pl

    from chunkmill import chunk_table

    lazy = pl.LazyFrame({"path": ["a.md"], "text": ["# A\n\nhello"]})
    assert chunk_table(lazy)["path"].to_list() == ["a.md"]
    with pytest.raises(TypeError, match="not a list"):
        chunk_table([{"path": "a.md", "text": "# A"}])


def test_a_loop_of_calls_resolves_its_policy_once(tmp_path):
    from chunkmill.chunking import resolve_policy

    first = resolve_policy(None, target_tokens=300, max_tokens=400)
    assert resolve_policy(None, max_tokens=400, target_tokens=300) is first
    assert resolve_policy(first) is resolve_policy(first)
    assert resolve_policy(None, target_tokens=300, max_tokens=600) is not first
    path = tmp_path / "policy.yaml"
    path.write_text("max_tokens: 400\ntarget_tokens: 300\n")
    assert resolve_policy(path).max_tokens == 400
    path.write_text("max_tokens: 500\ntarget_tokens: 300\n")
    assert resolve_policy(path).max_tokens == 500  # a file is read again


def test_fixed_strategy_on_a_front_matter_only_file():
    text = "---\ntitle: Section index\nweight: 3\n---\n"  # a Hugo _index.md
    assert chunkmill.chunk_text(text, path="_index.md", strategy="fixed") == []
    included = chunkmill.chunk_text(
        text, path="_index.md", strategy="fixed", front_matter="include"
    )
    assert [c.text for c in included] == [text.rstrip("\n")]


def test_batches_side_by_side_give_the_chunks_of_one_thread_in_order():
    """Enough documents for several batches: on several threads the batches are chunked
    side by side, and the table is the one a single thread makes, row for row."""
    rng = random.Random(5)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    texts = [
        f"# Doc {i}\n\n"
        + " ".join(rng.choice(words) for _ in range(rng.randint(5, 400)))
        + f"\n\n## Part\n\n- {rng.choice(words)}\n- item {i}\n"
        for i in range(700)
    ]
    one = chunk_texts(texts, threads=1)
    assert one["path"].to_pylist()[-1] == "doc-699.md" and one.num_rows >= 700
    for threads in (2, 3):
        assert chunk_texts(texts, threads=threads).equals(one)
