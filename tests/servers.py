"""Real servers for the scale-out tests, started by the tests themselves on 127.0.0.1.

- ``s3_bucket``: an S3-compatible server (moto's server mode) on a free port, one bucket,
  dummy credentials in the environment; pyarrow's S3 filesystem reaches it through
  ``AWS_ENDPOINT_URL``. Stopped after the test.
- ``ray_cluster``: a local Ray cluster of two nodes with one CPU each
  (``ray.cluster_utils.Cluster``), so tasks really cross raylets. Shut down after the module.

Both skip with a reason when their package is missing; CI installs them (dev extra) and
must not skip them: with CI=true a missing package fails the test instead.
"""

from __future__ import annotations

import os
import socket
import uuid

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
