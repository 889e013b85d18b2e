"""The zero-cost embedder of benchmarks/sync.py (``python:benchmarks.zero_embedder:zero``):
MiniLM's width, no model, so a sync's own cost is what is timed. A module of its own: the
sync process imports only this."""

import numpy as np


def zero(texts: list[str]) -> np.ndarray:
    return np.zeros((len(texts), 384), dtype=np.float32)


zero.dimensions = 384
zero.batch_size = 4096
