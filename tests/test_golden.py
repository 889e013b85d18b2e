"""Today's outputs, document by document, against the committed golden fingerprints
(tests/golden.py): a chunk id, text, embed_text, span, breadcrumb or posting that changes
shows here. A change of output that is decided is recorded with `make golden`, and listed
in the commit that makes it."""

from __future__ import annotations

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


@pytest.mark.parametrize("name", ["sample", "generated"])
def test_documents_of_the_project_match_their_fingerprints(name):
    assert _differences(name) == []


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_every_corpus_document_matches_its_fingerprints(name):
    differences = _differences(name)
    assert not differences, (len(differences), differences[:10])


@pytest.mark.parametrize("workers", [1, 2])
def test_one_or_two_workers_give_the_fingerprints(workers):
    assert _differences("generated", workers=workers) == []


def test_the_ray_engine_gives_the_fingerprints(ray_cluster):
    for name in ("sample", "generated"):
        assert _differences(name, engine="ray", ray_address=ray_cluster) == []
