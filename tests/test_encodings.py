"""The core's exact counts of cl100k_base and o200k_base (chunkmill_core::tokens::encoding)
against tiktoken's own ``encode_ordinary`` (the oracle: tiktoken with the ranks its offline
packages bundle), on edge cases, generated text and every shared corpus document;
and a run under ``tiktoken:cl100k_base`` that never imports tiktoken."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkmill import _core
from chunkmill.pipeline import runstore
from chunkmill.pipeline.runstore import parquet_files
from chunkmill.pipeline.tokens import CORE_ENCODINGS, make_counter
from tests.conftest import REPO, corpus_dir

pytest.importorskip("tiktoken", reason="tokenizers extra not installed")


@pytest.fixture(scope="module", params=CORE_ENCODINGS)
def encoding(request):
    """(name, tiktoken's encode_ordinary of that encoding)."""
    import tiktoken

    from tests import bundled

    names = tiktoken.list_encoding_names()
    name = request.param
    enc = (
        tiktoken.get_encoding(f"{name}_offline")
        if f"{name}_offline" in names
        else bundled.encoding(name)
    )
    assert enc is not None, f"no offline ranks of {name}"
    return name, enc


def differences(name: str, enc, texts: list[str]) -> list[tuple[str, int, int]]:
    ours = _core.count_tokens(name, texts, 2)
    theirs = [len(t) for t in enc.encode_ordinary_batch(texts)]
    return [(t[:80], a, b) for t, a, b in zip(texts, ours, theirs) if a != b]


EDGES = [
    "",
    " ",
    "\n",
    "\n\n\n",
    "  \n  \n",
    "a \n\n b",
    "x   y",
    "trailing   ",
    "\r\n\r\n",
    " \r\n \t\n",
    "\t\tcode()\n    more\n",
    "I'M HERE, YOU'LL SEE, THEY'VE GONE, it's, we'd",
    "'s 's's",
    "1234567890 12 1,234.56",
    "<|endoftext|> <|fim_prefix|>",
    "naïve café — “quotes” … ½",
    "日本語の文章です。中文句子。한국어 문장입니다.",
    "emoji 👍🏽 family 👨‍👩‍👧 flags 🇫🇷",
    "\u00a0non\u2009breaking\u3000ideographic",
    "Ω≈ç√∫˜µ≤≥÷ åß∂ƒ©˙∆˚¬…æ",
    "a\u0301e\u0301 combining",
    "```py\nprint('hi')\n```\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    " " * 300 + "x",
    "\n" * 100,
    "ab" * 5000,
]


def test_edge_cases_count_as_tiktoken_counts_them(encoding):
    name, enc = encoding
    assert differences(name, enc, EDGES) == []


# pieces that meet at the split pattern's edges: contractions, runs of spaces and line
# breaks, letters after punctuation, digits, scripts, marks
TEXT = st.lists(
    st.sampled_from(
        list("aZé日한'sS1 0\t\r\n\u00a0\u3000.,!?-_`|#*()<>[]{}\"") + ["👍", "\u0301", "'ll"]
    ),
    max_size=60,
).map("".join)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(TEXT, min_size=1, max_size=20))
def test_generated_texts_count_as_tiktoken_counts_them(encoding, texts):
    name, enc = encoding
    assert differences(name, enc, texts) == []


def test_counts_are_the_same_on_any_number_of_threads():
    texts = [e * 3 for e in EDGES]
    for name in CORE_ENCODINGS:
        assert _core.count_tokens(name, texts, 1) == _core.count_tokens(name, texts, 4)


def test_an_unknown_encoding_is_named():
    with pytest.raises(ValueError, match="cl100k"):
        _core.count_tokens("cl100k", ["x"])


def test_the_counter_of_a_policy_counts_in_the_core():
    counter = make_counter("tiktoken:o200k_base")
    assert counter.encoding == "o200k_base" and counter.enc is None
    assert counter.count(["Hello world!", ""]) == [3, 0]


def test_a_run_in_a_core_encoding_needs_no_tiktoken(tmp_path, encoding):
    """The encodings the core counts need no tokenizers extra: with tiktoken unimportable
    in every process (a module of that name that raises ImportError comes first on the
    path, which the run's workers inherit), chunk_text and a run work, and the counts are
    tiktoken's."""
    name, enc = encoding
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "tiktoken.py").write_text("raise ImportError('no tiktoken here')\n")
    script = (
        "import json, sys\n"
        "import chunkmill\n"
        f"chunks = chunkmill.chunk_text(sys.argv[1], tokenizer='tiktoken:{name}')\n"
        "print(json.dumps([[c.n_tokens, c.embed_text, c.token_source] for c in chunks]))\n"
    )
    text = "# Title\n\nHello world! 日本語 and 👍🏽\n\n```py\nx = 1\n```\n"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "blocked")}
    done = subprocess.run(
        [sys.executable, "-c", script, text], cwd=REPO, env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    chunks = json.loads(done.stdout)
    assert chunks
    for n_tokens, embed_text, source in chunks:
        assert (n_tokens, source) == (len(enc.encode_ordinary(embed_text)), f"tiktoken:{name}")
    out = tmp_path / "out"
    run = [sys.executable, "-m", "chunkmill", "run", "sample_data", "--out", out,
           "--tokenizer", f"tiktoken:{name}"]  # fmt: skip
    done = subprocess.run(run, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    chunks = parquet_files.read(runstore.resolve(out), "chunks", ["n_tokens", "embed_text"])
    counts = [len(t) for t in enc.encode_ordinary_batch(chunks["embed_text"].to_pylist())]
    assert chunks.num_rows > 5 and counts == chunks["n_tokens"].to_pylist()


@pytest.mark.corpus
def test_every_corpus_document_counts_as_tiktoken_counts_them(encoding):
    """Whole documents: the split pattern's pieces are local, so a piece counted otherwise
    shows in its document's count (the chunks of a cl100k run are held to tiktoken in
    tests/test_chunk_corpora.py)."""
    name, enc = encoding
    root = corpus_dir()
    texts = []
    for path in sorted(p for p in root.rglob("*") if p.suffix.lower() in (".md", ".mdx", ".txt")):
        try:
            texts.append(path.read_bytes().decode("utf-8"))
        except UnicodeDecodeError:
            continue
    assert len(texts) > 1000
    assert differences(name, enc, texts) == []


def test_the_encodings_counted_in_the_core_are_the_cores():
    from chunkmill import _core

    assert sorted(CORE_ENCODINGS) == sorted(_core.ENCODINGS)
