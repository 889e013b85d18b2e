"""pipeline/package_versions.py gives importlib.metadata's version without importing it."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as metadata_version

import pytest

from chunkmill.pipeline import package_versions
from tests.helpers import fresh_python


@pytest.mark.parametrize("dist", ["markdown-it-py", "pyarrow", "PyYAML", "click", "numpy"])
def test_the_same_version_as_importlib_metadata(dist):
    assert package_versions.version(dist) == metadata_version(dist)


def test_a_missing_distribution_raises_as_importlib_metadata_does():
    with pytest.raises(PackageNotFoundError):
        package_versions.version("no-such-distribution-here")


def test_two_versions_side_by_side_ask_importlib_metadata(tmp_path, monkeypatch):
    for v in ("1.0", "2.0"):
        (tmp_path / f"twin_pkg-{v}.dist-info").mkdir()
        (tmp_path / f"twin_pkg-{v}.dist-info" / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: twin-pkg\nVersion: {v}\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert package_versions.version("twin-pkg") == metadata_version("twin-pkg")


def test_the_parser_key_loads_no_importlib_metadata():
    code = (
        "import sys\n"
        "from chunkmill.pipeline.parse import parser_key\n"
        "print(parser_key('markdown-it'), 'importlib.metadata' in sys.modules)\n"
    )
    key, loaded = fresh_python(code).split()
    assert key.endswith(f"markdown-it-{metadata_version('markdown-it-py')}") and loaded == "False"


def test_the_default_parser_keeps_its_key():
    """The Rust core gives the blocks the pyromark backend gave: stored blocks stay reused."""
    from chunkmill.pipeline.parse import DEFAULT_BACKEND, parser_key

    assert parser_key(DEFAULT_BACKEND) == "blocks-1|pyromark-0.10.3"
