"""Shared test fixtures: paths to the shared corpora (tests skip cleanly without them)."""

from __future__ import annotations

from pathlib import Path

import pytest

# Fixtures that start real servers on 127.0.0.1 (S3, a two-node Ray cluster, PostgreSQL).
pytest_plugins = ["tests.servers"]

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_data"
CORPORA = REPO.parent / "shared" / "corpora"
CORPUS_NAMES = sorted(p.name for p in CORPORA.iterdir() if p.is_dir()) if CORPORA.is_dir() else []


def corpus_dir(name: str | None = None) -> Path:
    """The shared corpora folder (or one corpus in it); skips the test when absent."""
    path = CORPORA / name if name else CORPORA
    if not path.is_dir():
        pytest.skip(f"shared corpus not present: {path}")
    return path


@pytest.fixture(scope="package")
def corpora_blocks(tmp_path_factory):
    """documents/blocks/rejects of every shared corpus, written once per test run."""
    from chunkmill.jobs import blocks_job
    from chunkmill.pipeline.inputs import sources

    root = corpus_dir()
    out = tmp_path_factory.mktemp("corpora_blocks")
    selection = sources.Selection()
    blocks_job.run(sources.plan([str(root)], selection), out, selection)
    return out


# Tests that take these fixtures get the marker of what they need (pyproject.toml lists the
# markers; `make test-fast` leaves them out). Tests that read a corpus by path are marked
# where they are written.
_FIXTURE_MARKS = {"ray_cluster": "cluster", "chromium": "browser", "corpora_blocks": "corpus"}
# Modules whose module-scoped fixtures cost tens of seconds (the corpora chunked under five
# policies; a wheel built and installed twice): all their tests in one test process, so
# each is made once, not once per process (`make test` runs with --dist loadgroup).
_ONE_PROCESS = ("test_chunk_corpora.py", "test_package_layout.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        for fixture, mark in _FIXTURE_MARKS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(mark)
    # one test process runs the tests that start Ray, one Ray cluster at a time (`make
    # test` runs with --dist loadgroup; the others go to either process); a module of
    # _ONE_PROCESS that starts Ray joins them, so its fixtures are still made once
    with_ray = {item.path.name for item in items if item.get_closest_marker("cluster")}
    for item in items:
        if item.get_closest_marker("cluster") or (
            item.path.name in _ONE_PROCESS and item.path.name in with_ray
        ):
            item.add_marker(pytest.mark.xdist_group("ray"))
        elif item.path.name in _ONE_PROCESS:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
