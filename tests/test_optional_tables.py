"""The optional tables (blocks, postings): written only when a run is asked for them
(``--table``), made in memory by the queries that read them otherwise, the same rows
either way; the other tables byte for byte the same whichever a run writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import queries, runstore
from chunkmill.pipeline.runstore import parquet_files
from tests.conftest import SAMPLE
from tests.helpers import EVERY_TABLE, SMALL_FLAGS, table_bytes

ALWAYS = ("documents", "chunks", "rejects")


def run(src: Path, out: Path, *flags: str) -> tuple[dict, str]:
    """A run of ``src`` into ``out`` (the small policy): its record, its output."""
    args = ["run", str(src), "--out", str(out), "--workers", "1", *SMALL_FLAGS, *flags]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return runstore.history(out)[-1], result.output


@pytest.fixture
def corpus(tmp_path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    return src


def _same(a: Path, b: Path, names=ALWAYS) -> None:
    for name in names:
        assert table_bytes(runstore.resolve(a), name) == table_bytes(runstore.resolve(b), name), (
            name
        )


def _written(out: Path) -> set[str]:
    return {p.name.removesuffix(".parquet") for p in runstore.resolve(out).glob("*.parquet")}


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> tuple[Path, Path]:
    """The sample run without and with the optional tables (read only)."""
    root = tmp_path_factory.mktemp("optional")
    lean, every = root / "lean", root / "every"
    run(SAMPLE, lean)
    run(SAMPLE, every, *EVERY_TABLE)
    return lean, every


def test_a_run_writes_the_optional_tables_only_when_asked(both):
    lean, every = both
    assert not {"blocks", "postings"} & _written(lean)
    assert {"blocks", "postings"} <= _written(every)
    _same(lean, every)


def test_queries_make_an_absent_table_as_the_run_would_have_written_it(both):
    lean, every = both
    for name in ("blocks", "postings"):
        stored = parquet_files.read(runstore.resolve(every), name)
        made = queries.made(runstore.resolve(lean), name)
        assert made.num_rows > 0 and made.cast(stored.schema).equals(stored), name
    assert queries.search(lean, "compactor segments").equals(
        queries.search(every, "compactor segments")
    )
    got, want = queries.stats(lean), queries.stats(every)
    assert got.keys() == want.keys()
    for name in got:
        assert got[name].equals(want[name]), name
    assert {n: f.height for n, f in queries.checks(lean).items()} == {
        n: f.height for n, f in queries.checks(every).items()
    }


def test_a_new_policy_without_stored_blocks_parses_the_stored_texts(corpus, tmp_path):
    """A re-pack needs blocks: without stored ones, the published documents' texts are
    parsed again (the input files are not read again); the run is a --full run's."""
    out, full = tmp_path / "out", tmp_path / "full"
    run(corpus, out)
    record, _ = run(corpus, out, "--target-tokens", "80", "--new-policy")
    assert record["documents_parsed"] == record["documents_repacked"] == 11
    assert record["documents_unchanged"] == 11
    run(corpus, full, "--target-tokens", "80", "--full")
    _same(out, full)


def test_a_table_the_published_run_lacks_has_every_document_made_again(corpus, tmp_path):
    out, full = tmp_path / "out", tmp_path / "full"
    run(corpus, out)
    record, output = run(corpus, out, "--table", "blocks")
    assert "has no blocks table" in output
    assert record["documents_parsed"] == 11
    assert (record["chunks_added"], record["chunks_removed"], record["chunks_updated"]) == (0, 0, 0)
    assert "blocks" in _written(out) and "postings" not in _written(out)
    run(corpus, full, "--table", "blocks", "--full")
    _same(out, full, (*ALWAYS, "blocks"))


def test_a_table_no_longer_asked_for_is_dropped_without_work(corpus, tmp_path):
    out, lean = tmp_path / "out", tmp_path / "lean"
    run(corpus, out, *EVERY_TABLE)
    (corpus / "extra.md").write_text("# Extra\n\nOne more document, new tonight.\n")
    record, _ = run(corpus, out)
    assert record["documents_parsed"] == 1 and record["documents_added"] == 1
    assert not {"blocks", "postings"} & _written(out)
    assert runstore.resolve(out).joinpath("manifest.json").exists()
    run(corpus, lean, "--full")
    _same(out, lean)


def test_a_table_that_is_not_optional_is_refused(corpus, tmp_path):
    import chunkmill

    with pytest.raises(ValueError, match="no optional table 'chunks'"):
        chunkmill.run(corpus, tmp_path / "out", tables=["chunks"])
    result = CliRunner().invoke(main, ["run", str(corpus), "--out", str(tmp_path / "o"),
                                       "--table", "chunks"])  # fmt: skip
    assert result.exit_code == 2 and "--table" in result.output
