"""How a run spreads its work: batches cut by count and by bytes, the early worker, and what
the main process and the workers import."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from chunkmill import api
from chunkmill.jobs import pool, reuse
from chunkmill.pipeline import batching
from chunkmill.pipeline.batching import Reused, batched
from chunkmill.pipeline.document import RawDocument
from tests.helpers import fresh_python

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"


def _doc(name: str, size: int) -> RawDocument:
    return RawDocument(name, "src", b"x" * size)


def _sizes(batches) -> list[list[int]]:
    return [[len(x.data) if isinstance(x, RawDocument) else x.n_bytes for x in b] for b in batches]


def test_batches_end_at_the_count_or_the_bytes_whichever_first():
    docs = [_doc(f"{i}.md", 10) for i in range(7)]
    assert _sizes(batched(docs, 3, max_bytes=1000)) == [[10] * 3, [10] * 3, [10]]
    assert _sizes(batched(docs, 100, max_bytes=25)) == [[10, 10], [10, 10], [10, 10], [10]]


def test_a_document_over_the_bytes_is_a_batch_of_its_own():
    docs = [_doc("a.md", 5), _doc("big.md", 500), _doc("b.md", 5), _doc("c.md", 5)]
    assert _sizes(batched(docs, 100, max_bytes=100)) == [[5], [500], [5, 5]]


def test_a_reused_document_weighs_as_if_it_had_been_read():
    """So an incremental run cuts the batches (and Parquet row groups) a full run cuts."""
    read = [_doc("a.md", 40), _doc("b.md", 40), _doc("c.md", 40)]
    mixed = [read[0], Reused("id-b", 40), read[2]]
    assert _sizes(batched(read, 100, max_bytes=100)) == _sizes(batched(mixed, 100, max_bytes=100))
    assert [len(b) for b in batched(mixed, 100, max_bytes=100)] == [2, 1]


def test_a_rejected_file_weighs_nothing():
    docs = [_doc("a.md", 60), RawDocument("gone.md", "src", None, "could not read"), _doc("b", 30)]
    assert [len(b) for b in batched(docs, 100, max_bytes=100)] == [3]


def test_the_early_worker_starts_only_for_runs_that_will_parse_or_pack(tmp_path):
    corpus, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(SAMPLE, corpus)
    policy = api.resolve_policy(None)
    assert reuse.will_pack(out, policy, "pyromark", full=False)  # nothing published
    api.run(corpus, out, policy=policy, workers=1)
    assert not reuse.will_pack(out, policy, "pyromark", full=False)  # maybe unchanged
    assert reuse.will_pack(out, policy, "pyromark", full=True)
    assert reuse.will_pack(out, policy, "markdown-it", full=False)  # other parser key
    other = api.resolve_policy(None, target_tokens=policy.target_tokens - 50)
    assert reuse.will_pack(out, other, "pyromark", full=False)


def _modules_after_arrow_conversions(names: list[str]) -> list[str]:
    """In a worker: convert Python lists as the stages do, then report loaded modules."""
    import pyarrow as pa

    pa.array(["a", "b"])
    pa.Table.from_pylist([{"x": 1}])
    return [m for m in names if m in sys.modules]


def test_workers_never_import_pandas():
    """pyarrow imports pandas on its first conversion of Python lists, only to ask whether
    they are pandas objects: our workers tell it pandas is not installed."""
    results = list(pool.ordered_map(_modules_after_arrow_conversions, [["pandas"]], workers=1))
    assert results == [[]]


def test_a_batch_under_the_default_policy_loads_no_polars():
    """A worker's default path (the estimate, the Rust parser) parses, packs and indexes a
    batch with pyarrow and the core alone: polars cost each worker a quarter second to
    import."""
    code = (
        "import sys\n"
        "from chunkmill.pipeline import batch\n"
        "from chunkmill.pipeline.document import RawDocument\n"
        "from chunkmill.pipeline.policy import Policy\n"
        f"raws = [RawDocument(p.name, 's', p.read_bytes()) for p in "
        f"sorted(__import__('pathlib').Path({str(SAMPLE)!r}).rglob('*.md'))]\n"
        "tables, _ = batch.process(batch.Batch(raws), Policy(), 1 << 20)\n"
        "assert tables['chunks'].num_rows and tables['postings'].num_rows\n"
        "print('polars' in sys.modules)\n"
    )
    assert fresh_python(code).splitlines()[-1] == "False"


def test_the_main_process_of_a_cold_run_a_repack_and_a_nightly_run_loads_no_polars_or_pandas(
    tmp_path,
):
    """The workers parse and pack; the main process lists, reads, writes, keeps the change
    set and settles the batches of unchanged documents (batch.settled) with pyarrow alone
    (pandas and polars cost it most of a second to import; pyarrow's ``pa.array`` and
    ``to_numpy`` import pandas too)."""
    corpus = tmp_path / "src"
    shutil.copytree(SAMPLE, corpus)
    gone = next(p for p in sorted(corpus.rglob("*.md")) if p.name != "index.md")
    code = (
        "import sys, os\n"
        "from chunkmill import api\n"
        "policy = api.resolve_policy(None, target_tokens=300)\n"
        # with the optional tables a re-pack reads the stored blocks; without, it parses
        # the stored texts (in the workers)
        "for tables, parsed in (((), 11), (('blocks', 'postings'), 0)):\n"
        f"    out = {str(tmp_path)!r} + '/out' + str(len(tables))\n"
        f"    first = api.run({str(corpus)!r}, out, workers=1, tables=tables).record\n"
        f"    again = api.run({str(corpus)!r}, out, policy=policy, workers=1,\n"
        "                    new_policy=True, tables=tables).record\n"
        "    assert first['chunks_added'] > 0 and again['documents_parsed'] == parsed, again\n"
        "    assert again['chunks_added'] > 0, again\n"
        f"os.remove({str(gone)!r})\n"
        "for tables in ((), ('blocks', 'postings')):\n"
        f"    out = {str(tmp_path)!r} + '/out' + str(len(tables))\n"
        f"    night = api.run({str(corpus)!r}, out, policy=policy, workers=1,\n"
        "                    tables=tables).record\n"
        "    assert night['documents_deleted'] == 1 and night['documents_parsed'] == 0, night\n"
        "print(sorted(m for m in ('polars', 'pandas') if m in sys.modules))\n"
    )
    assert fresh_python(code) == "[]"


@pytest.fixture(autouse=True)
def _no_parked_workers():
    yield
    pool.shutdown()


def test_stored_rows_are_taken_from_the_row_groups_that_hold_them(tmp_path):
    """A document's rows may sit in one row group or run over several, in one part or
    another; either way the published run's rows come back as the whole table would give
    them, in the order asked."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from chunkmill.pipeline.runstore.published_run import StoredRows

    schema = pa.schema([("doc_id", pa.string()), ("n", pa.int32())])
    ids = ["a", "a", "a", "b", "c", "c", "d", "e", "e", "e", "e", "f", "g", "g"]
    part_of = {"a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 1, "g": 1}
    table = pa.table({"doc_id": ids, "n": list(range(len(ids)))}, schema=schema)
    paths = [tmp_path / "0.parquet", tmp_path / "1.parquet"]
    pq.write_table(table.slice(0, 11), paths[0], row_group_size=3, write_page_checksum=True)
    pq.write_table(table.slice(11), paths[1], row_group_size=2, write_page_checksum=True)
    assert pq.ParquetFile(paths[0]).num_row_groups == 4
    rows = StoredRows(paths, schema)
    for asked in (["e", "a"], ["c"], ["g", "b", "d", "f"], ["a", "b", "c", "d", "e"], []):
        got = rows.take(asked, [part_of[d] for d in asked])
        expected = [(d, n) for want in asked for d, n in zip(ids, range(len(ids))) if d == want]
        assert list(zip(got["doc_id"].to_pylist(), got["n"].to_pylist())) == expected
        assert got.schema == schema


def test_a_batch_table_comes_out_in_document_order_then_by_index():
    import pyarrow as pa

    from chunkmill.pipeline.batch import ordered

    order = {"b": 0, "a": 1, "c": 2}  # the batch's input order
    mixed = pa.table({"doc_id": ["a", "c", "b", "a", "b"], "i": [1, 0, 1, 0, 0]})
    out = ordered(mixed, order, "i")
    assert list(zip(out["doc_id"].to_pylist(), out["i"].to_pylist())) == [
        ("b", 0),
        ("b", 1),
        ("a", 0),
        ("a", 1),
        ("c", 0),
    ]
    assert ordered(out, order, "i") is out  # already in order: the same table, no copy
    rows = pa.table({"doc_id": ["c", "b", "c", "a"], "n": [1, 2, 3, 4]})
    assert ordered(rows, order, None)["n"].to_pylist() == [2, 4, 1, 3]  # stable within a doc
    with pytest.raises(KeyError):
        ordered(pa.table({"doc_id": ["zz"], "i": [0]}), order, "i")


def test_the_run_command_keeps_numpy_out_of_its_main_process(tmp_path):
    """`chunkmill run` (local engine) declares numpy absent before pyarrow loads it: a cold
    run and a nightly run after an edit still publish, and numpy never enters the main
    process (its workers load it)."""
    corpus, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(SAMPLE, corpus)
    edited = corpus / "index.md"
    code = (
        "import sys\n"
        "from chunkmill.jobs.cli import main as cli\n"
        "def run():\n"
        f"    sys.argv = ['chunkmill', 'run', {str(corpus)!r}, '--out', {str(out)!r}]\n"
        "    try:\n"
        "        cli.entry()\n"
        "    except SystemExit as stop:\n"
        "        assert stop.code in (0, None), stop.code\n"
        "run()\n"
        f"open({str(edited)!r}, 'a').write('\\nOne more paragraph.\\n')\n"
        "run()\n"
        "loaded = 'numpy' in sys.modules\n"
        "from chunkmill.pipeline import runstore  # pyarrow, and so numpy, from here on\n"
        f"last = runstore.history({str(out)!r})[-1]\n"
        "assert last['status'] == 'published' and last['documents_changed'] == 1, last\n"
        "print(loaded)\n"
    )
    assert fresh_python(code).splitlines()[-1] == "False"


def test_the_engine_a_command_line_asks_for():
    from chunkmill.jobs.cli.main import _engine

    assert _engine(["run", "docs", "--out", "o"]) == "local"
    assert _engine(["run", "docs", "--engine", "ray"]) == "ray"
    assert _engine(["run", "docs", "--engine=ray", "--out", "o"]) == "ray"
    assert _engine(["run", "ray", "--out", "o"]) == "local"  # a folder named ray


def test_an_incremental_run_reads_its_inputs_as_its_batches_go(tmp_path, monkeypatch):
    """An edit of every file: the run writes its first batches while it still reads, as a
    --full run does, instead of holding every changed document's bytes until the last one
    is read and hashed."""
    from chunkmill.pipeline.inputs import sources
    from chunkmill.pipeline.runstore.changeset import ChangeSet

    corpus, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(SAMPLE, corpus)
    api.run(corpus, out, workers=1)
    for path in corpus.rglob("*.md"):
        path.write_text(path.read_text() + "\nEdited.\n")
    events: list[str] = []
    read_file, add = sources.read_file, ChangeSet.add
    monkeypatch.setattr(sources, "read_file", lambda *a: events.append("read") or read_file(*a))
    monkeypatch.setattr(ChangeSet, "add", lambda s, c: events.append("write") or add(s, c))
    monkeypatch.setattr(batching, "BATCH_DOCS", 1)
    assert api.run(corpus, out, workers=1).record["documents_changed"] > 4
    last_read = len(events) - 1 - events[::-1].index("read")
    assert events.index("write") < last_read, events
