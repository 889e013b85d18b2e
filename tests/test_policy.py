"""The policy: defaults, validation, YAML loading, the stable hash."""

from __future__ import annotations

import hashlib
import resource
import subprocess
import sys

import pytest

from chunkmill.pipeline.policy import Policy, PolicyError, load
from tests.conftest import REPO, SAMPLE


def test_defaults():
    p = Policy()
    assert (p.target_tokens, p.max_tokens, p.min_tokens, p.overlap_tokens, p.heading_depth) == (
        750,
        1000,
        200,
        80,
        3,
    )
    assert (p.front_matter, p.mdx, p.bias, p.strategy, p.tokenizer, p.breadcrumb_prefix) == (
        "metadata",
        "auto",
        "balanced",
        "auto",
        "estimate",
        True,
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"min_tokens": 800}, "min_tokens (800) > target_tokens (750)"),
        ({"target_tokens": 1200}, "target_tokens (1200) > max_tokens (1000)"),
        ({"overlap_tokens": 750}, "overlap_tokens (750) must be < target_tokens (750)"),
        ({"heading_depth": 0}, "heading_depth must be 1-6"),
        ({"heading_depth": 7}, "heading_depth must be 1-6"),
        ({"tokenizer": "gpt2"}, "unknown tokenizer 'gpt2'"),
        ({"tokenizer": "hf:"}, "unknown tokenizer"),
        ({"strategy": "semantic"}, "strategy must be one of"),
        ({"front_matter": "keep"}, "front_matter must be one of"),
        ({"target_tokens": -1}, "target_tokens must be a whole number"),
        # one message for every max_tokens too small, negative or not
        ({"max_tokens": -5, "target_tokens": 4}, "max_tokens must be a whole number >= 16"),
        ({"max_tokens": 0, "target_tokens": 0}, "max_tokens must be a whole number >= 16"),
    ],
)
def test_contradictions_raise(changes, message):
    with pytest.raises(PolicyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Policy(**changes)


def test_hash_is_sha256_of_canonical_json():
    # canonical JSON written out by hand: keys sorted, no spaces
    expected_json = (
        '{"bias":"balanced","breadcrumb_prefix":true,"context_keys":["description"],'
        '"front_matter":"metadata","heading_depth":3,"link_template":"","max_tokens":1000,'
        '"mdx":"auto","min_tokens":200,"overlap_tokens":80,"pack_siblings":true,'
        '"strategy":"auto","target_tokens":750,"title_keys":["title"],"tokenizer":"estimate"}'
    )
    assert Policy().canonical_json() == expected_json
    assert Policy().policy_hash == hashlib.sha256(expected_json.encode()).hexdigest()[:16]
    assert Policy(max_tokens=999).policy_hash != Policy().policy_hash


def test_yaml_then_flags(tmp_path):
    f = tmp_path / "policy.yaml"
    f.write_text("target_tokens: 400\nmax_tokens: 512\nmin_tokens: 100\n")
    p = load(f, max_tokens=600, overlap_tokens=None)
    assert (p.target_tokens, p.max_tokens, p.min_tokens, p.overlap_tokens) == (400, 600, 100, 80)


def test_yaml_unknown_field(tmp_path):
    f = tmp_path / "policy.yaml"
    f.write_text("target: 400\n")
    with pytest.raises(PolicyError, match="unknown policy field"):
        load(f)


def test_broken_yaml_is_one_line_naming_where(tmp_path):
    f = tmp_path / "policy.yaml"
    f.write_text("target_tokens: 400\n  max_tokens: 512\n")
    with pytest.raises(PolicyError) as err:
        load(f)
    message = str(err.value)
    assert "\n" not in message and "not valid YAML" in message and "line 2" in message


BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "\n".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")
)


def _capped(*args: str) -> subprocess.CompletedProcess:
    """The command line in a child process that may not grow past 2 GiB."""

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    cmd = [sys.executable, "-m", "chunkmill.jobs.cli", *args]
    return subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, timeout=120, preexec_fn=cap
    )


@pytest.mark.parametrize("under", ["", "max_tokens:\n"])
def test_an_alias_bomb_in_a_policy_file_is_refused_in_one_line(tmp_path, under):
    f = tmp_path / "policy.yaml"
    indent = "  " if under else ""
    f.write_text(under + "".join(indent + line + "\n" for line in BILLION_LAUGHS.splitlines()))
    proc = _capped("run", str(SAMPLE), "--out", str(tmp_path / "out"), "--policy", str(f))
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and str(f) in line
    assert "aliases expand to more than 10000 values" in line


def test_a_policy_file_that_is_not_utf8_is_one_line_naming_it(tmp_path):
    f = tmp_path / "policy.yaml"
    f.write_bytes(b"target_tokens: 400\ntitle_keys: [caf\xe9]\n")
    with pytest.raises(PolicyError) as err:
        load(f)
    message = str(err.value)
    assert "\n" not in message and str(f) in message and "not UTF-8" in message
