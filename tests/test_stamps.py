"""Unchanged runs read nothing: a file whose stamp (size, mtime, ctime, inode) is as the
published run recorded it is reused without being read; any other file is read and hashed."""

from __future__ import annotations

import os
import shutil

import pyarrow.parquet as pq
import pytest

from chunkmill import api
from chunkmill.pipeline import runstore
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.runstore import manifest, stamps
from tests.conftest import SAMPLE
from tests.helpers import SMALL_FLAGS, fresh_python, table_bytes

N_DOCS = 11  # documents in sample_data


@pytest.fixture
def corpus(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    return src


@pytest.fixture
def reads(monkeypatch):
    """The paths read through sources.fetch, in order."""
    seen: list[str] = []
    fetch = sources.fetch

    def counting(uri, *args):
        seen.append(uri)
        return fetch(uri, *args)

    monkeypatch.setattr(sources, "fetch", counting)
    return seen


@pytest.fixture
def trusting(monkeypatch):
    """Trust files written a moment ago (tests write them just before running)."""
    monkeypatch.setattr(stamps, "RACY_NS", 0)


def _small_policy() -> dict:
    flags = dict(zip(SMALL_FLAGS[::2], SMALL_FLAGS[1::2]))
    return {k.removeprefix("--").replace("-", "_"): int(v) for k, v in flags.items()}


def run(src, out, **options) -> dict:
    policy = api.resolve_policy(None, **_small_policy())
    return api.run(src, out, policy=policy, workers=1, **options).record


def _inputs(out):
    return pq.read_table(runstore.resolve(out) / "inputs.parquet")


def test_unchanged_run_reads_no_file(corpus, tmp_path, reads, trusting):
    out = tmp_path / "out"
    run(corpus, out)
    assert len(reads) == N_DOCS
    assert _inputs(out).num_rows == N_DOCS
    first = table_bytes(runstore.resolve(out), "chunks")
    reads.clear()
    second = run(corpus, out)
    assert reads == []
    assert second["documents_unchanged"] == N_DOCS and second["chunks_added"] == 0
    assert second["documents_parsed"] == 0 and second["chunks_removed"] == 0
    assert _inputs(out).num_rows == N_DOCS  # the stamps carry on to the next run
    assert table_bytes(runstore.resolve(out), "chunks") == first


def test_unchanged_stamps_are_linked_and_new_ones_written(corpus, tmp_path, trusting):
    """When every file is trusted on the very stamp the published run recorded, its
    inputs.parquet is linked (not rewritten); any new stamp gets a fresh file."""
    out = tmp_path / "out"
    run(corpus, out)
    first = runstore.resolve(out)
    run(corpus, out)
    second = runstore.resolve(out)
    assert second != first
    assert os.path.samefile(first / "inputs.parquet", second / "inputs.parquet")
    assert manifest.verify(second, manifest.load(second)) == []
    linked = (second / "inputs.parquet").stat().st_ino  # the no-op run may be pruned later
    edited = corpus / "index.md"
    edited.write_text(edited.read_text() + "\nOne more line.\n")
    os.utime(edited, ns=(1_000_000_000, 1_000_000_000))  # old enough to be stamped
    run(corpus, out)
    third = runstore.resolve(out)
    assert (third / "inputs.parquet").stat().st_ino != linked
    sizes = dict(zip(_inputs(out)["uri"].to_pylist(), _inputs(out)["size"].to_pylist()))
    assert sizes[str(edited)] == edited.stat().st_size and len(sizes) == N_DOCS
    run(corpus, out, verify=True)  # trusts no stamp: writes them all again
    fourth = runstore.resolve(out)
    assert not os.path.samefile(third / "inputs.parquet", fourth / "inputs.parquet")
    assert _inputs(out).num_rows == N_DOCS


def test_verify_reads_every_file(corpus, tmp_path, reads, trusting):
    out = tmp_path / "out"
    run(corpus, out)
    reads.clear()
    record = run(corpus, out, verify=True)
    assert len(reads) == N_DOCS and record["documents_parsed"] == 0


def test_only_files_with_a_new_stamp_are_read(corpus, tmp_path, reads, trusting):
    out = tmp_path / "out"
    run(corpus, out)
    touched = corpus / "guides" / "getting-started.md"
    os.utime(touched, ns=(1_000_000_000, 1_000_000_000))  # same bytes, another mtime
    reads.clear()
    record = run(corpus, out)
    assert reads == [str(touched)]
    assert record["documents_parsed"] == 0 and record["chunks_added"] == 0


def test_an_edit_that_keeps_size_and_mtime_is_seen(corpus, tmp_path, trusting):
    """cp -p, touch -r: the size and mtime come back, the ctime does not."""
    out = tmp_path / "out"
    path = corpus / "guides" / "getting-started.md"
    run(corpus, out)
    st = os.stat(path)
    text = path.read_text()
    assert "folder" in text
    path.write_text(text.replace("folder", "fOlder", 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size and os.stat(path).st_mtime_ns == st.st_mtime_ns
    record = run(corpus, out)
    assert record["documents_changed"] == 1 and record["documents_parsed"] == 1


def test_a_file_replaced_by_another_is_seen(corpus, tmp_path, trusting):
    out = tmp_path / "out"
    path = corpus / "guides" / "getting-started.md"
    run(corpus, out)
    other = tmp_path / "other.md"
    other.write_text(path.read_text().replace("folder", "fOlder", 1))
    st = os.stat(path)
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, path)  # a new inode under the same name
    record = run(corpus, out)
    assert record["documents_changed"] == 1


def test_a_file_written_just_before_the_run_is_not_trusted(corpus, tmp_path, reads):
    """Its stamp could stay the same through another write within the clock's granularity,
    so it is not recorded, and the next run reads it again."""
    out = tmp_path / "out"
    run(corpus, out)  # every file was copied a moment ago
    assert _inputs(out).num_rows == 0
    reads.clear()
    record = run(corpus, out)
    assert len(reads) == N_DOCS and record["documents_parsed"] == 0


def test_a_lower_max_bytes_reads_a_stamped_file_again(corpus, tmp_path, reads, trusting):
    out = tmp_path / "out"
    run(corpus, out)
    reads.clear()
    big = max(corpus.rglob("*.md"), key=lambda p: p.stat().st_size)
    record = run(corpus, out, max_bytes=big.stat().st_size - 1)
    assert record["rejects"] >= 1
    rejects = pq.read_table(runstore.resolve(out) / "rejects.parquet").to_pylist()
    assert any(r["reason"] == "too_large" and big.name in r["path"] for r in rejects)


def test_stamp_refuses_recent_times():
    st = os.stat(SAMPLE / "index.md")
    assert stamps.of(st, now_ns=max(st.st_mtime_ns, st.st_ctime_ns)) is None
    later = max(st.st_mtime_ns, st.st_ctime_ns) + stamps.RACY_NS + 1
    assert stamps.of(st, now_ns=later) == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def test_object_store_runs_keep_their_stamps(corpus, s3_bucket, reads, trusting):
    """inputs.parquet is a file of the run like the others: pulled and pushed with it."""
    out = f"{s3_bucket}/out"
    run(corpus, out)
    reads.clear()
    record = run(corpus, out)
    assert reads == [] and record["documents_unchanged"] == N_DOCS
    edited = corpus / "index.md"
    edited.write_text(edited.read_text() + "\nOne more line.\n")
    record = run(corpus, out)
    assert reads == [str(edited)] and record["documents_changed"] == 1


def test_unchanged_run_loads_no_parser_or_polars(corpus, tmp_path):
    """A run with nothing to parse or pack imports neither the parsers nor polars, nor
    pandas and pyarrow.dataset (which pyarrow loads on its own unless asked not to)."""
    out = tmp_path / "out"
    run(corpus, out)
    code = (
        "import sys\n"
        "from chunkmill import api\n"
        "from chunkmill.pipeline.runstore import stamps\n"
        "stamps.RACY_NS = 0\n"
        f"policy = api.resolve_policy(None, **{_small_policy()!r})\n"
        f"record = api.run({str(corpus)!r}, {str(out)!r}, policy=policy, workers=1).record\n"
        "assert record['chunks_added'] == 0 and record['documents_unchanged'] == 11, record\n"
        "heavy = ('polars', 'chunkmill._core', 'markdown_it', 'pandas', 'pyarrow.dataset')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    assert fresh_python(code) == "[]"
