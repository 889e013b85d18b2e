"""Same input + same policy -> byte-identical Parquet; chunk ids follow the recipe."""

from __future__ import annotations

import hashlib

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from chunkmill.pipeline.policy import CHUNKER_VERSION, Policy
from tests.conftest import SAMPLE
from tests.helpers import EVERY_TABLE, table_bytes


def _run(out, *flags):
    args = ["run", str(SAMPLE), "--out", str(out), *EVERY_TABLE, *flags]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return runstore.resolve(out)


def test_two_runs_are_byte_identical(tmp_path):
    a, b = _run(tmp_path / "a"), _run(tmp_path / "b")
    for name in ("documents", "blocks", "chunks", "rejects"):
        assert table_bytes(a, name) == table_bytes(b, name)


def test_an_incremental_run_equals_a_full_one_whatever_the_spelling_of_input(tmp_path):
    import os
    import shutil

    shutil.copytree(SAMPLE, tmp_path / "docs")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        for spelling in ("docs", f"{tmp_path}/docs"):
            with open("docs/index.md", "a") as fh:
                fh.write("\nOne more line.\n")
            args = ["run", spelling, "--out", "night", *EVERY_TABLE]
            assert CliRunner().invoke(main, args).exit_code == 0
        full = ["run", f"{tmp_path}/docs", "--out", "full", "--full", *EVERY_TABLE]
        assert CliRunner().invoke(main, full).exit_code == 0
    finally:
        os.chdir(here)
    night, full = runstore.resolve(tmp_path / "night"), runstore.resolve(tmp_path / "full")
    for name in ("documents", "blocks", "chunks", "postings", "rejects"):
        assert table_bytes(night, name) == table_bytes(full, name)


def test_chunk_id_recipe_and_policy_change(tmp_path):
    chunks = pl.read_parquet(_run(tmp_path / "a") / "chunks.parquet")
    for row in chunks.head(20).iter_rows(named=True):
        embed, text = row["embed_text"], row["text"]
        prefix = embed[: len(embed) - len(text) - 2] if embed != text else ""  # the header
        assert embed == (f"{prefix}\n\n{text}" if prefix else text)
        recipe = [row["doc_id"], CHUNKER_VERSION, *row["block_ids"], Policy().policy_hash]
        payload = "\x1f".join([*recipe, prefix, row["anchor"] or ""])
        assert row["chunk_id"] == hashlib.sha256(payload.encode()).hexdigest()[:32]
    assert chunks["chunk_id"].n_unique() == chunks.height
    other = pl.read_parquet(_run(tmp_path / "b", "--max-tokens", "900") / "chunks.parquet")
    assert set(other["policy_hash"]) != set(chunks["policy_hash"])
    assert not set(other["chunk_id"]) & set(chunks["chunk_id"])


def test_output_is_identical_for_one_and_two_workers(tmp_path):
    """Batches of 256 documents, so the corpus must span several batches to mean anything."""
    src = tmp_path / "src"
    for i in range(700):
        folder = src / f"part{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(f"## S{j}\n\nText {i} {j} " + "word " * (i % 50) for j in range(i % 9))
        (folder / f"d{i:03d}.md").write_text(f"# Doc {i}\n\n{body}\n")
    (src / "bad.md").write_bytes(b"\xff\xfe broken")
    one = _run_workers(src, tmp_path / "one", 1)
    two = _run_workers(src, tmp_path / "two", 2)
    for name in ("documents", "blocks", "chunks", "postings", "rejects"):
        assert table_bytes(one, name) == table_bytes(two, name)
    assert pl.read_parquet(one / "documents.parquet").height == 700


def test_a_batch_run_again_document_by_document_writes_the_same_bytes(tmp_path):
    """After a worker dies, its batch runs again one document at a time and the parts are
    merged: the files must not tell (page boundaries included)."""
    from chunkmill.pipeline import batch, schemas
    from chunkmill.pipeline.document import RawDocument
    from chunkmill.pipeline.runstore.parquet_files import TableWriter

    items = []
    for i in range(400):
        body = "\n\n".join(f"## S{j}\n\nText {i} {j} " + "word " * (50 + i % 200) for j in range(9))
        items.append(RawDocument(f"d{i:03d}.md", "src", f"# Doc {i}\n\n{body}\n".encode(), None))
    whole = batch.Batch(items)
    policy = Policy()
    once = batch.process(whole, policy, 1 << 20)[0]
    again = batch.merge([batch.process(b, policy, 1 << 20) for b in batch.split(whole)])[0]
    assert sum(len(t) for t in once["blocks"]["text"].to_pylist()) > 2 << 20  # several pages
    for name in once:
        files = []
        for tag, tables in (("once", once), ("again", again)):
            writer = TableWriter(tmp_path / f"{name}.{tag}.parquet", schemas.TABLES[name])
            writer.write(tables[name])
            writer.close()
            files.append((tmp_path / f"{name}.{tag}.parquet").read_bytes())
        assert files[0] == files[1], name


def _run_workers(src, out, workers):
    result = CliRunner().invoke(
        main, ["run", str(src), "--out", str(out), "--workers", str(workers), *EVERY_TABLE]
    )
    assert result.exit_code == 0, result.output
    return runstore.resolve(out)


def test_batch_results_do_not_depend_on_batch_boundaries():
    """process over one batch equals the same documents cut into three batches."""
    import pyarrow as pa

    from chunkmill.pipeline import batch
    from chunkmill.pipeline.document import RawDocument
    from chunkmill.pipeline.policy import Policy

    files = sorted(p for p in SAMPLE.rglob("*") if p.suffix in (".md", ".mdx", ".txt"))
    raws = [RawDocument(p.relative_to(SAMPLE).as_posix(), "s", p.read_bytes()) for p in files]
    whole, _ = batch.process(batch.Batch(raws), Policy(), 1 << 20)
    parts = [batch.process(batch.Batch(raws[a : a + 4]), Policy(), 1 << 20)[0] for a in (0, 4, 8)]
    assert len(raws) > 8
    for name in ("documents", "blocks", "chunks", "postings", "rejects"):
        joined = pa.concat_tables([p[name] for p in parts])
        assert joined.equals(whole[name]), name


def test_doc_rows_takes_runs_and_refuses_scattered_rows():
    import pyarrow as pa

    from chunkmill.pipeline.doc_rows import DocRows

    table = pa.table({"doc_id": ["a", "a", "b", "c", "c", "c"], "i": [0, 1, 2, 3, 4, 5]})
    rows = DocRows(table)
    assert rows.take(["c", "a", "zz"])["i"].to_pylist() == [3, 4, 5, 0, 1]
    assert rows.take([]).num_rows == 0
    with pytest.raises(ValueError, match="not contiguous"):
        DocRows(pa.table({"doc_id": ["a", "b", "a"]}))


def test_document_runs_of_a_dictionary_column_span_its_parts():
    """The key column of a stored table is read dictionary-encoded, one part per row group;
    a key's rows may go on from one part into the next."""
    import pyarrow as pa

    from chunkmill.pipeline.doc_rows import document_runs

    parts = [
        pa.array(["a", "a", "b"]).dictionary_encode(),
        pa.array(["b", "c"]).dictionary_encode(),
    ]
    keys = pa.chunked_array(parts)
    assert document_runs(keys) == {"a": (0, 2), "b": (2, 2), "c": (4, 1)}
    assert document_runs(keys) == document_runs(keys.cast(pa.string()))
    assert document_runs(pa.chunked_array([], pa.dictionary(pa.int32(), pa.string()))) == {}
    with pytest.raises(ValueError, match="not contiguous"):
        document_runs(pa.chunked_array([pa.array(["a", "b", "a"]).dictionary_encode()]))
