"""The core's counts of Hugging Face tokenizers (hf:PATH, chunkmill_core::tokens::hf)
against the tokenizers package's own ``encode`` (the oracle), for two real models'
tokenizer.json files that packages bundle (tests/bundled.py): MiniLM's WordPiece and
multilingual-e5's SentencePiece Unigram. Edge cases, generated text, and the chunks of
every shared corpus at MiniLM's 256-token input."""

from __future__ import annotations

import os
import subprocess
import sys

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkmill import _core
from chunkmill.jobs import run_job
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline import runstore
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.policy import load
from chunkmill.pipeline.tokens import make_counter
from tests import bundled
from tests.chunk_quality import unbalanced_fence
from tests.conftest import REPO, corpus_dir

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers extra not installed")


def _path(name: str) -> str:
    path = bundled.tokenizer_json(name)
    package = bundled.TOKENIZER_FILES[name][0]
    assert path is not None, f"{package} is not installed (make install-dev installs it)"
    return str(path)


@pytest.fixture(scope="module", params=sorted(bundled.TOKENIZER_FILES))
def model(request):
    """(hf:PATH, the tokenizers package's Tokenizer of that file, without truncation)."""
    path = _path(request.param)
    tok = tokenizers.Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    return f"hf:{path}", tok


def minilm():
    """(hf:PATH, the package's Tokenizer) of MiniLM, as the model reads: special tokens added,
    nothing truncated or padded (its file pads and truncates to 128)."""
    path = _path("minilm")
    tok = tokenizers.Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    return f"hf:{path}", tok


def differences(spec: str, tok, texts: list[str], threads: int = 2) -> list:
    ours = _core.count_tokens(spec, texts, threads)
    theirs = [len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)]
    return [(t[:80], a, b) for t, a, b in zip(texts, ours, theirs) if a != b]


EDGES = [
    "",
    " ",
    "\n\n\n",
    "x   y",
    " leading and trailing ",
    "Hello, World! It's chunkmill's (small) test.",
    "naïve café — “quotes” … ½ Ǆ ﬁ",
    "日本語の文章です。中文句子。한국어 문장입니다.",
    "emoji 👍🏽 family 👨‍👩‍👧 flags 🇫🇷",
    "\u00a0non\u2009breaking\u3000ideographic\u2028line\u2029para\u0085next",
    "zero\u200bwidth\ufeffbom soft\u00adhyphen \x00nul \x7fdel \x1besc",
    "a\u0301e\u0301 combining ΟΔΟΣ Σίσυφος",
    "[CLS] [SEP] [MASK] <s> </s> <unk> [CLS]x y[SEP] a.[MASK].b [[CLS]] [CL S]",
    "why\u037e why\u0387 \u1fefgrave ！fullwidth、・ «guillemets» x\u0301! !\u0301x",
    "İstanbul ǅemal ﬁne ½ ㎏ 漢字かな交じり文 中文，标点。",
    "```py\nprint('hi')\n```\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "https://example.com/a/very/long/path?with=query&and=more#fragment-" * 3,
    "unbelievablyLongIdentifierWithoutAnySpacesAtAllThatGoesOnAndOnForMoreThanAHundredChars",
    "0x1F600 3.14159 1,234,567 2026-11-29T23:59:59Z",
    "ab" * 3000,
    " " * 300 + "x",
]


def test_edge_cases_count_as_the_tokenizers_package_counts_them(model):
    spec, tok = model
    assert differences(spec, tok, EDGES) == []
    assert differences(spec, tok, EDGES, threads=1) == []


# words that meet at the pre-tokenizer's edges: every kind of whitespace and control
# character, punctuation, accents, scripts, the models' special tokens
TEXT = st.lists(
    st.sampled_from(
        list("aZé日한'1 \t\r\n\u00a0\u3000\u2028\u0085\u200b\ufeff\x00.,!?-_`|#*()[]")
        + ["👍", "\u0301", "ß", "İ", "[CLS]", "<s>", "##", "▁", "\u037e", "\u1fef", "！", "・"]
    ),
    max_size=60,
).map("".join)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(TEXT, min_size=1, max_size=20))
def test_generated_texts_count_as_the_tokenizers_package_counts_them(model, texts):
    spec, tok = model
    assert differences(spec, tok, texts) == []


def test_the_special_tokens_a_model_adds_are_its_post_processors(model):
    spec, tok = model
    counter = make_counter(spec)
    assert counter.added == tok.post_processor.num_special_tokens_to_add(False) == 2
    assert counter.count(["Hello world", ""]) == [
        len(tok.encode("Hello world", add_special_tokens=False).ids),
        0,
    ]


def test_a_tokenizer_file_that_does_not_load_is_named(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{}")
    for path in (bad, tmp_path / "missing.json"):
        with pytest.raises(ValueError, match=str(path)):
            _core.count_tokens(f"hf:{path}", ["x"])


def test_a_changed_file_is_loaded_again(tmp_path):
    """The core keeps a loaded tokenizer while its file stays the same (length and time)."""
    from tests.helpers import bert_like

    path = tmp_path / "tokenizer.json"
    bert_like(path, "alpha beta", special=False)
    assert _core.count_tokens(f"hf:{path}", ["alpha gamma"]) == [2]  # gamma: [UNK]
    bert_like(path, "alpha beta gamma delta", special=True)
    os.utime(path, (1, 1))  # a modification time of its own, whatever the clock
    assert _core.tokens_added(f"hf:{path}") == 2


def test_a_run_under_a_real_model_needs_no_tokenizers_package(tmp_path):
    """hf: tokenizers are counted by the core: with the tokenizers package unimportable in
    every process, a run at MiniLM's input size works, and MiniLM (the package's own
    count, special tokens included) sees at most 256 tokens of any chunk."""
    spec, tok = minilm()
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "tokenizers.py").write_text("raise ImportError('not here')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "blocked")}
    out = tmp_path / "out"
    run = [sys.executable, "-m", "chunkmill", "run", "sample_data", "--out", out,
           "--tokenizer", spec, "--max-tokens", "256"]  # fmt: skip
    done = subprocess.run(run, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    chunks = pl.read_parquet(runstore.resolve(out) / "chunks.parquet")
    seen = [len(e.ids) for e in tok.encode_batch(chunks["embed_text"].to_list())]
    assert chunks.height > 5 and max(seen) <= 256
    assert seen == chunks["n_tokens"].to_list()
    assert set(chunks["token_source"]) == {spec}


@pytest.mark.corpus
def test_every_corpus_chunk_fits_minilm_as_minilm_counts_it(tmp_path):
    """`--tokenizer hf:MiniLM --max-tokens 256` over every shared corpus: each chunk's
    n_tokens is what MiniLM reads of its embed_text ([CLS] and [SEP] included), at most
    256; nothing is rejected and no fence is cut unbalanced. The same texts count in
    multilingual-e5's SentencePiece Unigram as the package counts them (texts it encodes
    whole, where MiniLM's are counted piece by piece)."""
    spec, tok = minilm()
    policy = load(None, tokenizer=spec, max_tokens=256)
    selection = sources.Selection()
    plan = sources.plan([str(corpus_dir())], selection)
    run_job.run(plan, tmp_path, selection, policy, log=RunLog(quiet=True))
    out = runstore.resolve(tmp_path)
    chunks = pl.read_parquet(out / "chunks.parquet", columns=["n_tokens", "embed_text", "text"])
    assert pl.read_parquet(out / "rejects.parquet").height == 0
    assert chunks.height > 40_000
    seen = [len(e.ids) for e in tok.encode_batch(chunks["embed_text"].to_list())]
    assert max(seen) <= 256
    assert seen == chunks["n_tokens"].to_list()
    bad = [t[:200] for t in chunks["text"] if unbalanced_fence(t)]
    assert not bad, bad[:3]
    e5 = _path("multilingual-e5")
    tok = tokenizers.Tokenizer.from_file(e5)
    tok.no_truncation()
    tok.no_padding()
    assert differences(f"hf:{e5}", tok, chunks["embed_text"].to_list()) == []
