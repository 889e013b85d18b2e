"""A part written whole by its worker (jobs/part_work.py) is the part the run's process
writes from the part's documents run alone after that worker failed: the same bytes."""

from __future__ import annotations

from chunkmill.jobs import part_work
from chunkmill.jobs.chunks_job import run_metadata
from chunkmill.pipeline import batch, schemas
from chunkmill.pipeline.document import RawDocument, make_doc_id
from chunkmill.pipeline.parse import DEFAULT_BACKEND
from chunkmill.pipeline.policy import Policy
from chunkmill.pipeline.runstore import manifest, parquet_files

POLICY = Policy()
# every table, the optional ones too
STEP = {"policy": POLICY, "max_bytes": 1 << 20, "parser": DEFAULT_BACKEND,
        "tables": schemas.OPTIONAL_TABLES}  # fmt: skip


def _part(folder) -> part_work.PartWork:
    """Two batches of documents (one of them not markdown enough to pass: a reject)."""
    items = []
    for i in range(8):
        body = "\n\n".join(f"## S{j}\n\nText {i} {j} " + "word " * (20 + 40 * i) for j in range(9))
        data = f"# Doc {i}\n\n{body}\n".encode() if i != 6 else b"\x00" * 10
        items.append(RawDocument(f"d{i:03d}.md", "src", data, None))
    batches = [batch.Batch(items[:5]), batch.Batch(items[5:])]
    return part_work.PartWork(batches, 0, str(folder), run_metadata(POLICY), chunk_rows=True)


def _files(folder) -> dict[str, bytes]:
    return {
        name: (folder / f"{name}.parquet" / parquet_files.PART.format(0)).read_bytes()
        for name in schemas.PARTITIONED
    }


def test_a_part_written_by_its_worker_equals_the_part_written_from_its_documents(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    metadata = run_metadata(POLICY)
    with parquet_files.OutputSet(a, schemas.CONTENT_TABLES, metadata) as output:
        written = part_work.work(_part(a), **STEP)
        output.adopt_part(written.index)
        for tables, _ in written.batches:
            output.write("rejects", tables["rejects"])

    pieces = part_work.split(_part(b))
    assert len(pieces) == 8 and {p.batch for p in pieces} == {0, 1}
    failed_doc = pieces[3]  # its worker died: a reject of stage "worker", in batch 0
    results = [
        part_work.failed(p, "crashed", "killed by SIGSEGV")
        if p is failed_doc
        else part_work.work(p, **STEP)
        for p in pieces
    ]
    merged = part_work.merge(results)
    assert isinstance(merged, part_work.PartTables) and len(merged.results) == 2
    rejects = merged.results[0][0]["rejects"]
    stages = dict(zip(rejects["doc_id"].to_pylist(), rejects["stage"].to_pylist()))
    assert stages[make_doc_id("d003.md")] == "worker"
    later = merged.results[1][0]["rejects"]["doc_id"].to_pylist()
    assert later == [make_doc_id("d006.md")]  # rejected by the documents stage

    # the same part without the crash, written by the run's process batch by batch
    c = tmp_path / "c"
    alone = part_work.merge([part_work.work(p, **STEP) for p in part_work.split(_part(c))])
    with parquet_files.OutputSet(c, schemas.CONTENT_TABLES, metadata) as output:
        for tables, _ in alone.results:
            for name, table in tables.items():
                output.write(name, table)
        output.end_part()
    assert _files(a) == _files(c)
    assert (a / "rejects.parquet").read_bytes() == (c / "rejects.parquet").read_bytes()
    for name, entry in written.entries.items():
        assert entry == manifest.file_entry(c / name, name)

    # what travels back: every chunk row asked for, no block row, rejects whole
    got = [t for t, _ in written.batches]
    want = [t for t, _ in alone.results]
    assert [t["chunks"] for t in got] == [t["chunks"] for t in want]
    assert [t["blocks"].num_rows for t in got] == [t["blocks"].num_rows for t in want]
    assert all(t["blocks"].num_columns == 0 for t in got)
    assert [t["rejects"] for t in got] == [t["rejects"] for t in want]
    assert sum(c["items"] for _, c in written.batches) == 8
