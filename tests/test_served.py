"""Readers serve only verified files: `changes`, `search`, `sql` (and the API) check the
files they read against the run's manifest first and refuse damaged ones in one line; a
run that repairs a damaged published run tells its chunks again as updates; `check` fails
on a run without its manifest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chunkmill import api
from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from chunkmill.pipeline.runstore import manifest, parquet_files
from tests.conftest import SAMPLE
from tests.helpers import EVERY_TABLE, SMALL_FLAGS, sentences


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("served") / "out"
    result = CliRunner().invoke(
        main, ["run", str(SAMPLE), "--out", str(out), "--workers", "1", *SMALL_FLAGS, *EVERY_TABLE]
    )
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def out(published, tmp_path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(published, copy, symlinks=True)
    return copy


def _first_part(out: Path, name: str) -> Path:
    return parquet_files.parts(runstore.resolve(out), name)[0]


def _flip_in_column(path: Path, column: str) -> None:
    """One bit flipped in the middle of a column's pages of the first row group: the size
    stays, the file still opens."""
    meta = pq.ParquetFile(path).metadata.row_group(0)
    names = [meta.column(i).path_in_schema for i in range(meta.num_columns)]
    col = meta.column(names.index(column))
    start = col.dictionary_page_offset or col.data_page_offset
    data = bytearray(path.read_bytes())
    data[start + col.total_compressed_size // 2] ^= 0x10
    path.write_bytes(bytes(data))


def _invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def _refused(result, name: str) -> None:
    """Exit 1 (damage, as `check`), one line naming the file and what to do."""
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert f"{name}/part-000000.parquet: damaged" in lines[0] and "chunkmill run" in lines[0]


def test_undamaged_runs_are_served(out):
    run_id = runstore.pointed(out).run_id
    assert _invoke("changes", out, "--since", run_id, "--updates").exit_code == 0
    assert _invoke("changes", out, "--all").exit_code == 0
    assert _invoke("search", out, "compactor").exit_code == 0
    result = _invoke("sql", out, "SELECT count(*) AS n FROM chunks", "--format", "csv")
    assert result.exit_code == 0 and result.stdout.splitlines()[1] != "0"
    assert api.changes(out, None).adds.num_rows > 0


def test_readers_refuse_a_bit_flip_in_the_chunks(out):
    run_id = runstore.pointed(out).run_id
    _flip_in_column(_first_part(out, "chunks"), "embed_text")
    _refused(_invoke("changes", out, "--since", run_id, "--updates"), "chunks.parquet")
    _refused(_invoke("changes", out, "--all"), "chunks.parquet")
    _refused(_invoke("search", out, "compactor"), "chunks.parquet")
    _refused(_invoke("sql", out, "SELECT embed_text FROM chunks"), "chunks.parquet")
    _refused(_invoke("sql", out, 'select * from "CHUNKS" limit 1'), "chunks.parquet")
    for read in (
        lambda: api.changes(out, run_id, updates=True),
        lambda: api.changes(out, None),
        lambda: api.search(out, "compactor"),
        lambda: api.connect(out),
    ):
        with pytest.raises(runstore.DamagedRunError, match="part-000000.parquet: damaged"):
            read()
    # only the files a reader serves are checked: the documents are sound
    result = _invoke("sql", out, "SELECT count(*) AS n FROM documents", "--format", "csv")
    assert result.exit_code == 0 and result.stdout.splitlines() == ["n", "11"]


def test_search_refuses_damaged_postings(out):
    _flip_in_column(_first_part(out, "postings"), "term")
    _refused(_invoke("search", out, "compactor"), "postings.parquet")
    assert _invoke("sql", out, "FROM chunks").exit_code == 0


def test_a_run_without_its_manifest_fails_check_and_is_not_served(out):
    assert _invoke("check", out).exit_code == 0
    (runstore.resolve(out) / manifest.MANIFEST).unlink()
    result = _invoke("check", out)
    assert result.exit_code == 1
    failed = [line for line in result.output.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and "checksums" in failed[0]
    assert "manifest.json is missing" in failed[0]
    result = _invoke("sql", out, "FROM chunks")
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert "manifest.json is missing" in result.output


def _damage_chunk_ids(path: Path) -> None:
    _flip_in_column(path, "chunk_id")


def _damage_embed_text(path: Path) -> None:
    _flip_in_column(path, "embed_text")


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize("damage", [_damage_embed_text, _damage_chunk_ids, _truncate])
def test_a_run_that_repairs_the_published_chunks_tells_them_again(tmp_path, damage):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for i in range(6):
        (src / f"page-{i}.md").write_text(f"# Page {i}\n\n{sentences(12, start=i * 40)}\n")
    flags = ["--workers", "1", *SMALL_FLAGS]
    assert _invoke("run", src, "--out", out, *flags).exit_code == 0
    first = runstore.pointed(out).run_id
    sound = pq.read_table(runstore.resolve(out) / "chunks.parquet").to_pylist()
    damage(_first_part(out, "chunks"))
    result = _invoke("run", src, "--out", out, *flags)
    assert result.exit_code == 0, result.output
    repaired = pq.read_table(runstore.resolve(out) / "chunks.parquet").to_pylist()
    assert repaired == sound  # the same inputs: the same rows, now sound again
    told = api.changes(out, first, updates=True)
    assert told.adds.num_rows == 0 and told.removes == []
    assert told.updates.to_pylist() == repaired
    # without --updates nothing is new: the ids were published before
    assert not api.changes(out, first)
