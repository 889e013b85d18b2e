"""The embedders of the sync tests (``python:tests.sync_embedder:NAME``): vectors that
depend only on the text (so any row can be checked against a fresh embedding), every text
the embedder was asked for written to the file CHUNKMILL_TEST_EMBED_LOG (one line each,
appended as the vectors are returned), so tests count exactly what was paid for."""

from __future__ import annotations

import hashlib
import os

import numpy as np

DIMENSIONS = 8


def vector(text: str) -> np.ndarray:
    """The fake model: 8 floats from the text's sha256."""
    raw = np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.uint32)
    return (raw.astype(np.float32) / np.float32(2**32)).astype(np.float32)


def _log(texts: list[str]) -> None:
    path = os.environ.get("CHUNKMILL_TEST_EMBED_LOG")
    if not path:
        return
    lines = "".join(hashlib.sha256(t.encode()).hexdigest()[:32] + "\n" for t in texts)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, lines.encode())
    finally:
        os.close(fd)


def embed(texts: list[str]) -> np.ndarray:
    _log(texts)
    return np.stack([vector(t) for t in texts]) if texts else np.zeros((0, DIMENSIONS))


embed.dimensions = DIMENSIONS
embed.batch_size = 16


def other(texts: list[str]) -> np.ndarray:
    """Another model: the same vectors negated."""
    return -embed(texts)


other.dimensions = DIMENSIONS
other.embedder_id = "negated"


def short(texts: list[str]) -> np.ndarray:
    """A model that reads at most 40 cl100k tokens."""
    return embed(texts)


short.dimensions = DIMENSIONS
short.tokenizer = "cl100k_base"
short.max_tokens = 40
