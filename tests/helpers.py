"""Helpers shared by tests (not a test module itself)."""

from __future__ import annotations

from mdchunk.pipeline import block, chunk, document
from mdchunk.pipeline.document import RawDocument
from mdchunk.pipeline.policy import Policy

# A small policy, so that the little sample corpus gets split sections and overlap.
SMALL_FLAGS = ["--target-tokens", "60", "--max-tokens", "100", "--min-tokens", "20",
               "--overlap-tokens", "10"]  # fmt: skip


def chunk_text(
    text: str,
    policy: Policy | None = None,
    path: str = "doc.md",
    counting: chunk.Counting | None = None,
) -> list[dict]:
    """Run the three stages on one in-memory document; return its chunk rows."""
    policy = policy or Policy()
    docs, _ = document.documents([RawDocument(path, "test", text.encode("utf-8"))], policy.mdx)
    blocks, _ = block.blocks(docs, policy.bias)
    chunks, rejects = chunk.chunks(docs, blocks, policy, counting)
    assert rejects.num_rows == 0, rejects.to_pylist()
    return chunks.to_pylist()


def words(n: int, start: int = 0) -> str:
    """n distinct words (so no two sentences are identical), 5 characters each with the space.

    Letters only ("wabc" for 12): the estimate weighs a letter/digit mix like "w012" as the
    identifier it looks like, which is not the prose these tests are sized for. Every fourth
    word is "with", an English function word of the same shape, so that the estimate reads
    the words as English (tokens.FOREIGN_LETTER) and counts them as it always has."""
    return " ".join(_word(start + i) for i in range(n))


def _word(i: int) -> str:
    return "with" if i % 4 == 3 else "w" + f"{i % 1000:03d}".translate(_LETTERS)


_LETTERS = str.maketrans("0123456789", "abcdefghij")


def sentences(n: int, words_each: int = 10, start: int = 0) -> str:
    return " ".join(f"S{start + i:03d} {words(words_each - 1, start * 7 + i)}." for i in range(n))


def misbehave(items: list[tuple[str, object]]) -> list:
    """A work item for the worker-pool tests: each (what, value) pair returns value, or
    crashes the worker, sleeps, eats memory or raises, as ``what`` says."""
    import ctypes
    import time

    out = []
    for what, value in items:
        if what == "segfault":
            ctypes.string_at(0)
        elif what == "sleep":
            time.sleep(value)
        elif what == "memory":
            hog = b"x" * (value * 2**20)  # bytes are written, so they are resident
            time.sleep(10)
            del hog
        elif what == "raise":
            raise ValueError(value)
        out.append(value)
    return out


def fresh_python(code: str) -> str:
    """The standard output of ``code`` run by a fresh interpreter (what a new process
    imports, say), which must exit 0."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
