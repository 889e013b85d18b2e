"""The ``openai:`` embedder against a real HTTP server on 127.0.0.1
(tests/embeddings_server.py): retries through 429s, 500s, a slow answer and a dropped
connection; a bounded number of requests in flight; one-line errors for a wrong key and an
endpoint that keeps failing."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline.sync import endpoint
from tests.conftest import SAMPLE
from tests.embeddings_server import EmbeddingsServer
from tests.sync_nights import assert_exact, lance_rows
from tests.test_sync import nightly

pytest.importorskip("lancedb")


@pytest.fixture
def quick_retries(monkeypatch):
    monkeypatch.setattr(endpoint, "BACKOFF", 0.01)
    monkeypatch.setattr(endpoint, "TIMEOUT", 0.5)


def _sync(out, store, url, *flags):
    return CliRunner().invoke(
        main, ["sync", str(out), "--to", store, "--embedder", f"openai:fake@{url}", *flags]
    )


def test_retries_make_a_flaky_endpoint_exact(tmp_path, quick_retries, monkeypatch):
    out, store = tmp_path / "out", f"lancedb://{tmp_path / 'lance'}"
    nightly(SAMPLE, out)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with EmbeddingsServer(key="test-key") as server:
        server.slow_seconds = 1.0  # past the client's timeout: retried
        server.fail = ["429", "500", "drop", "slow", "429"]
        done = _sync(out, store, server.url, "--batch-size", "8", "--in-flight", "2")
        assert done.exit_code == 0, done.output
        assert_exact(lance_rows(tmp_path / "lance"), out)
        assert server.requests >= 5 + server.answered // 4  # every failure was retried


def test_no_more_requests_at_once_than_in_flight(tmp_path):
    out, store = tmp_path / "out", f"lancedb://{tmp_path / 'lance'}"
    nightly(SAMPLE, out)
    with EmbeddingsServer(delay=0.1) as server:
        done = _sync(out, store, server.url, "--batch-size", "64", "--in-flight", "3")
        assert done.exit_code == 0, done.output
        assert server.requests >= 3 and server.most_in_flight <= 3
    assert_exact(lance_rows(tmp_path / "lance"), out)


def test_a_wrong_key_is_one_line_and_not_retried(tmp_path, quick_retries, monkeypatch):
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    with EmbeddingsServer(key="test-key") as server:
        done = _sync(out, f"lancedb://{tmp_path / 'lance'}", server.url)
        assert server.requests == 1
    assert done.exit_code == 1, done.output
    assert "HTTP 401" in done.stderr and "OPENAI_API_KEY" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_an_endpoint_that_keeps_failing_stops_the_sync(tmp_path, quick_retries, monkeypatch):
    monkeypatch.setattr(endpoint, "ATTEMPTS", 3)
    out = tmp_path / "out"
    nightly(SAMPLE, out)
    with EmbeddingsServer() as server:
        server.fail = ["500"] * 10
        done = _sync(out, f"lancedb://{tmp_path / 'lance'}", server.url)
        assert server.requests == 3
    assert done.exit_code == 1, done.output
    assert "HTTP 500" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Error" not in done.stderr  # said as the endpoint's failure, not a crash
