"""A run's partitioned tables: a night rewrites the parts its changes fall in and links the
others, and what it publishes is byte for byte what a --full run writes."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from chunkmill import Policy, run
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline import batching, runstore, schemas
from chunkmill.pipeline.batching import Reused, ends_part, parted
from chunkmill.pipeline.document import make_doc_id
from chunkmill.pipeline.runstore import manifest, parquet_files
from tests.helpers import table_bytes

N_DOCS = 2000


def _names() -> list[str]:
    return [f"d{i:04d}.md" for i in range(N_DOCS)]


def _text(i: int) -> str:
    body = "\n\n".join(f"## Part {j}\n\nText {i} {j}, item {i * 7 % 13}. " * 12 for j in range(3))
    return f"# Document {i}\n\n{body}\n"


def _ends(names: list[str]) -> list[int]:
    """The places (in path order) of the documents that end a part."""
    weight = {n: len(_text(int(n[1:5])).encode()) for n in names}
    return [i for i, n in enumerate(sorted(names)) if ends_part(make_doc_id(n), weight[n])]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("parts") / "src"
    src.mkdir()
    for i, name in enumerate(_names()):
        (src / name).write_text(_text(i))
    return src


def _run(src: Path, out: Path, **kw) -> dict:
    """A run writing every table (the optional ones too: their parts are tested here)."""
    return run(src, out, policy=Policy(), workers=1, tables=schemas.OPTIONAL_TABLES, **kw).record


def _same_as_full(src: Path, out: Path, tmp_path: Path) -> None:
    full = tmp_path / "full"
    _run(src, full, full=True)
    for name in schemas.CONTENT_TABLES:
        assert table_bytes(runstore.resolve(out), name) == table_bytes(
            runstore.resolve(full), name
        ), name


def _published(corpus: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(a copy of the corpus, an output folder with a run of it published)."""
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(corpus, src)
    _run(src, out)
    return src, out


def _linked(before: Path, after: Path, name: str) -> list[bool]:
    """Whether each part of ``after`` is a part of ``before``, the same file."""
    old = parquet_files.parts(before, name)
    return [any(os.path.samefile(p, o) for o in old) for p in parquet_files.parts(after, name)]


def test_the_corpus_spans_several_parts():
    assert len(_ends(_names())) >= 2  # else nothing here tests more than one part


def test_where_a_part_ends_depends_on_no_other_document_and_grows_with_its_size():
    names = _names()
    ends = {sorted(names)[i] for i in _ends(names)}
    fewer = names[::3]
    assert {sorted(fewer)[i] for i in _ends(fewer)} == ends & set(fewer)
    ids = [make_doc_id(n) for n in names]
    small, large = (sum(ends_part(d, w) for d in ids) for w in (0, 100_000))
    assert 0 < small < large  # a large document ends a part more often
    assert all(ends_part(d, batching.PART_BYTES) for d in ids)  # a part's worth: always


def test_an_edit_rewrites_its_part_and_links_the_others(corpus, tmp_path):
    src, out = _published(corpus, tmp_path)
    before = runstore.resolve(out)
    parts = len(parquet_files.parts(before, "chunks"))
    assert parts == len(_ends(_names())) + 1
    edited = sorted(_names())[_ends(_names())[0] + 3]  # in the second part
    with open(src / edited, "a") as fh:
        fh.write("\nOne more sentence, about a new thing.\n")
    record = _run(src, out)
    after = runstore.resolve(out)
    assert record["documents_changed"] == 1 and record["chunks_added"] >= 1
    for name in schemas.PARTITIONED:
        linked = _linked(before, after, name)
        assert linked == [k != 1 for k in range(parts)], name
    # the manifest holds every part, the linked ones with the entries they had
    assert manifest.verify(after, manifest.load(after)) == []
    changes = pl.read_parquet(after / "changes.parquet")
    assert set(changes["path"]) == {edited}
    _same_as_full(src, out, tmp_path)


def test_a_new_document_that_ends_a_part_splits_it_and_a_deletion_joins(corpus, tmp_path):
    src, out = _published(corpus, tmp_path)
    text = "# New\n\nA document whose id ends a part.\n"
    found = (f"d0700-{i}.md" for i in range(100_000))  # among the others, not after them
    ending = next(n for n in found if ends_part(make_doc_id(n), len(text)))
    (src / ending).write_text(text)
    before = runstore.resolve(out)
    record = _run(src, out)
    assert record["documents_added"] == 1
    after = runstore.resolve(out)
    linked = _linked(before, after, "chunks")
    assert len(linked) == len(parquet_files.parts(before, "chunks")) + 1
    assert linked.count(False) == 2  # the part it fell in, now two
    _same_as_full(src, out, tmp_path)
    (src / ending).unlink()
    (src / sorted(_names())[_ends(_names())[0]]).unlink()  # the end of the first part
    record = _run(src, out)
    assert record["documents_deleted"] == 2
    shutil.rmtree(tmp_path / "full")
    _same_as_full(src, out, tmp_path)


def test_parted_batches_never_span_a_part_and_offer_all_reused_parts():
    ids = [make_doc_id(n) for n in sorted(_names())]
    ends = [i for i, d in enumerate(ids) if ends_part(d, 3000)]
    items = [Reused(d, 3000) for d in ids]
    cut = list(parted(items, n=100))
    assert [i for i, (b, end) in enumerate(cut) if end] == [
        i for i, (b, _) in enumerate(cut) if ends_part(b[-1].doc_id, 3000)
    ] + ([len(cut) - 1] if not ends_part(ids[-1], 3000) else [])
    assert [x for b, _ in cut for x in b] == items
    assert all(len(b) <= 100 for b, _ in cut)
    offered = []
    linked = list(parted(items, n=100, link=lambda part: offered.append(part) or "linked"))
    assert [u for u, _ in linked] == ["linked"] * (len(ends) + 1)
    assert [x.doc_id for p in offered for x in p] == ids


def test_parts_that_do_not_line_up_are_recomputed_not_a_crash(corpus, tmp_path):
    src, out = _published(corpus, tmp_path)
    folder = runstore.resolve(out)
    gone = parquet_files.parts(folder, "postings")[-1]
    gone.unlink()  # and the manifest agrees: every file left matches it
    found = manifest.load(folder)
    found["files"] = [f for f in found["files"] if f["name"] != f"postings.parquet/{gone.name}"]
    manifest.write(folder, found)
    stream = io.StringIO()
    log = RunLog(stream=stream)
    record = run(src, out, policy=Policy(), workers=1, log=log, tables=schemas.OPTIONAL_TABLES)
    record = record.record
    warning = [line for line in stream.getvalue().splitlines() if "warning" in line]
    assert len(warning) == 1 and "different numbers of parts" in warning[0]
    assert "recomputed" in warning[0]
    assert record["documents_parsed"] == N_DOCS and record["chunks_removed"] == 0
    _same_as_full(src, out, tmp_path)
