"""The policy: defaults, validation, YAML loading, the stable hash."""

from __future__ import annotations

import hashlib
import resource
import subprocess
import sys

import pytest

from chunkmill.pipeline.policy import Policy, PolicyError, cap_sizes, load
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
        "tiktoken:cl100k_base",
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
        '"strategy":"auto","target_tokens":750,"title_keys":["title"],'
        '"tokenizer":"tiktoken:cl100k_base"}'
    )
    assert Policy().canonical_json() == expected_json
    assert Policy().policy_hash == hashlib.sha256(expected_json.encode()).hexdigest()[:16]
    assert Policy(max_tokens=999).policy_hash != Policy().policy_hash


def test_yaml_then_flags(tmp_path):
    f = tmp_path / "policy.yaml"
    f.write_text("target_tokens: 400\nmax_tokens: 512\nmin_tokens: 100\n")
    p = load(f, max_tokens=600, overlap_tokens=None)
    # the overlap, set nowhere, comes with the cap and the target: 8/75 of 400
    assert (p.target_tokens, p.max_tokens, p.min_tokens, p.overlap_tokens) == (400, 600, 100, 42)


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

    cmd = [sys.executable, "-m", "chunkmill", *args]
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


def test_the_default_sizes_are_what_the_default_cap_brings():
    assert cap_sizes(Policy().max_tokens) == {
        "target_tokens": Policy().target_tokens,
        "min_tokens": Policy().min_tokens,
        "overlap_tokens": Policy().overlap_tokens,
    }
    assert load(max_tokens=1000).policy_hash == Policy().policy_hash


@pytest.mark.parametrize(
    ("given", "sizes"),
    [
        # (target, min, overlap): the target 3/4 of the cap, min and overlap 4/15 and 8/75
        # of the target, rounded down
        ({"max_tokens": 256}, (192, 51, 20)),
        ({"max_tokens": 8192}, (6144, 1638, 655)),
        ({"max_tokens": 16}, (12, 3, 1)),
        # a size given beside the cap is kept; the others come with the cap and the target
        ({"max_tokens": 256, "target_tokens": 240}, (240, 64, 25)),
        ({"max_tokens": 256, "overlap_tokens": 0}, (192, 51, 0)),
        ({"max_tokens": 5000, "target_tokens": 500}, (500, 133, 53)),  # min under target
        # no cap given: the defaults, whatever else is
        ({"target_tokens": 500}, (500, 200, 80)),
    ],
)
def test_a_cap_brings_the_sizes_not_given_beside_it(given, sizes):
    p = load(**given)
    assert (p.target_tokens, p.min_tokens, p.overlap_tokens) == sizes


def test_a_cap_in_a_policy_file_brings_its_sizes(tmp_path):
    f = tmp_path / "policy.yaml"
    f.write_text("max_tokens: 512\n")
    p = load(f)
    assert (p.target_tokens, p.max_tokens, p.min_tokens, p.overlap_tokens) == (384, 512, 102, 40)
    assert load(f, min_tokens=10).min_tokens == 10


def test_contradicting_sizes_are_refused_once_with_every_size_that_fits():
    with pytest.raises(PolicyError) as refused:
        load(max_tokens=256, target_tokens=300, min_tokens=400)
    message = str(refused.value)
    assert "min_tokens (400) > target_tokens (300)" in message
    assert "target_tokens (300) > max_tokens (256)" in message
    assert message.count("alone sets") == 1
    assert message.endswith(
        "(--max-tokens 256 alone sets --target-tokens 192 --min-tokens 51 --overlap-tokens 20)"
    )


def test_the_bias_presets_are_the_estimates_with_their_factors():
    from dataclasses import fields

    from chunkmill.pipeline import policy, token_estimate

    assert sorted(policy.BIASES) == sorted(token_estimate.BIAS_FACTORS)
    help_text = next(f.metadata["help"] for f in fields(Policy) if f.name == "bias")
    for name, factor in token_estimate.BIAS_FACTORS.items():
        assert f"{factor} ({name}" in help_text, (name, factor)
