"""Today's outputs, document by document, against the committed golden fingerprints
(tests/golden.py): a chunk id, text, embed_text, span, breadcrumb or posting that changes
shows here, named by document, table, column and the first row whose value differs (the
value it held, where a snapshot keeps it, and the value it has now). A change of output
that is decided is recorded with `make golden`, and listed in the commit that makes it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests import golden
from tests.conftest import CORPUS_NAMES

# Differences kept on purpose, (set, path, table) -> why. None today.
KEPT: dict[tuple[str, str, str], str] = {}


def _differences(name: str, **run) -> list[tuple[str, str, str]]:
    want = {(r["path"], r["policy"]): r for r in golden.load([name]).to_pylist()}
    got = {(r["path"], r["policy"]): r for r in golden.compute([name], **run).to_pylist()}
    assert want, f"no fingerprints recorded for {name}: run `make golden`"
    assert got.keys() == want.keys(), sorted(got.keys() ^ want.keys())[:10]
    return [
        (path, policy, table)
        for (path, policy), row in sorted(got.items())
        for table in golden.TABLES
        if row[table] != want[(path, policy)][table] and (name, path, table) not in KEPT
    ]


def _explained(name: str, differences: list[tuple[str, str, str]], show: int = 5) -> str:
    """What changed, for the first ``show`` differences: the set is made again with its
    rows kept, and each difference named by document, table, column and value."""
    lines = [f"{len(differences)} document tables of {name} differ from their fingerprints:"]
    outputs: dict[str, golden.Output] = {}
    for path, policy, table in differences[:show]:
        if policy not in outputs:
            outputs[policy] = golden.output(name, golden.sets()[name], policy, keep_rows=True)
        recorded = golden.load_columns([name])
        recorded = recorded.filter(pc.equal(recorded["policy"], policy))
        snapshot = golden.load_snapshot(name, policy)
        lines.append(
            f"[{policy}] " + golden.explain(outputs[policy], recorded, snapshot, path, table)
        )
    return "\n".join(lines)


def _check(name: str, **run) -> None:
    differences = _differences(name, **run)
    assert not differences, _explained(name, differences)


@pytest.mark.parametrize("name", ["sample", "generated"])
def test_documents_of_the_project_match_their_fingerprints(name):
    _check(name)


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_every_corpus_document_matches_its_fingerprints(name):
    _check(name)


@pytest.mark.parametrize("workers", [1, 2])
def test_one_or_two_workers_give_the_fingerprints(workers):
    _check("generated", workers=workers)


def test_the_ray_engine_gives_the_fingerprints(ray_cluster):
    for name in ("sample", "generated"):
        _check(name, engine="ray", ray_address=ray_cluster)


def test_a_changed_chunk_is_named_by_document_table_column_and_value(monkeypatch):
    """A chunk's text changed (as a change of the chunker would change it): the message
    names the document, the table, the column, the value it held and the value it has."""
    import pyarrow.parquet as pq

    read, digest = pq.read_table, golden._digest

    def read_changed(path, *args, **kwargs):  # one document's chunk texts get a word more
        table = read(path, *args, **kwargs)
        if Path(path).name != "chunks.parquet":
            return table
        texts = [
            t + " more" if p == "guides/fences.md" else t
            for t, p in zip(table["text"].to_pylist(), table["path"].to_pylist())
        ]
        at = table.column_names.index("text")
        return table.set_column(at, "text", pa.array(texts, table.schema.field("text").type))

    def digest_changed(*args):
        with monkeypatch.context() as patch:  # the run reads what it wrote; only the
            patch.setattr(pq, "read_table", read_changed)  # fingerprints see the change
            return digest(*args)

    monkeypatch.setattr(golden, "_digest", digest_changed)
    differences = _differences("sample")
    assert ("guides/fences.md", "default", "chunks") in differences
    message = _explained("sample", differences)
    line = next(x for x in message.splitlines() if x.startswith("[default] guides/fences.md"))
    assert "table chunks" in line and "column text" in line
    held, now = line.split(": was ", 1)[1].split(", now ", 1)
    assert ' more"' in now and ' more"' not in held
