"""Helpers shared by tests (not a test module itself)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from chunkmill.pipeline import block, chunk, document
from chunkmill.pipeline.document import RawDocument
from chunkmill.pipeline.policy import Policy

# A small policy, so that the little sample corpus gets split sections and overlap.
SMALL_FLAGS = ["--target-tokens", "60", "--max-tokens", "100", "--min-tokens", "20",
               "--overlap-tokens", "10"]  # fmt: skip
EVERY_TABLE = ["--table", "blocks", "--table", "postings"]  # the optional tables too


def document_metadata(path: Path) -> dict[str, dict[str, str]]:
    """path -> metadata of every row of a documents.parquet, read with pyarrow: its map
    columns are (key, value) pairs in every version (polars has a Map type only from 2.0)."""
    rows = pq.read_table(path, columns=["path", "metadata"]).to_pylist()
    return {r["path"]: dict(r["metadata"]) for r in rows}


def table_bytes(folder: Path, name: str) -> list[bytes]:
    """The bytes of a table's files: every part of a partitioned one, in order."""
    from chunkmill.pipeline.runstore import parquet_files

    return [p.read_bytes() for p in parquet_files.parts(folder, name)]


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
    the words as English (token_estimate.FOREIGN_LETTER) and counts them as it always has."""
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


def numeric_texts(seed: int = 7) -> dict[str, str]:
    """Our own texts of numbers, in the shapes documentation carries them: printed arrays,
    lists and matrices, floats, SVG paths, tables of dates and times, addresses, hex dumps,
    versions, long integers, numbered lines. token_estimate.NUMBER is fitted on them."""
    import random

    r = random.Random(seed)

    def digit() -> str:
        return str(r.randint(0, 9))

    def real() -> str:
        return f"{r.uniform(-99, 99):.{r.randint(1, 6)}f}"

    def svg() -> str:
        a, b, c, d = (r.randint(0, 24) for _ in range(4))
        return f"M{a}.{r.randint(0, 99)} {b}.{r.randint(1, 9)}c0-{d}.5-.{c} 2L{c} {a}z"

    def row() -> str:
        day = f"20{r.randint(10, 29)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"
        time = f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
        return f"| {day} | {time} | {r.randint(0, 9999)} | {r.uniform(0, 100):.1f} |"

    def address() -> str:
        return ".".join(str(r.randint(0, 255)) for _ in range(4)) + f":{r.randint(1, 65535)}"

    def hex_line(i: int) -> str:
        return f"{16 * i:08x}  " + " ".join(f"{r.randint(0, 255):02x}" for _ in range(16))

    def version() -> str:
        return f"{r.randint(0, 20)}.{r.randint(0, 30)}.{r.randint(0, 99)}"

    return {
        "digits and spaces": " ".join(digit() for _ in range(300)),
        "digit list": "[" + ", ".join(digit() for _ in range(250)) + "]",
        "digits and commas": ",".join(digit() for _ in range(300)),
        "digit lines": "\n".join(digit() for _ in range(300)),
        "floats": " ".join(real() for _ in range(120)),
        "float list": ", ".join(real() for _ in range(120)),
        "matrix": "\n".join(
            "[" + " ".join(f"{r.random():.4f}" for _ in range(8)) + "]" for _ in range(20)
        ),
        "int matrix": "\n".join(
            "[" + ", ".join(str(r.randint(0, 255)) for _ in range(12)) + "]," for _ in range(20)
        ),
        "svg path": " ".join(svg() for _ in range(40)),
        "table": "\n".join(row() for _ in range(30)),
        "addresses": "\n".join(address() for _ in range(60)),
        "hex dump": "\n".join(hex_line(i) for i in range(25)),
        "versions": ", ".join(version() for _ in range(120)),
        "long integers": " ".join(str(r.randint(10**8, 10**15)) for _ in range(80)),
        "numbered lines": "\n".join(f"{i} {digit()} {digit()}" for i in range(1, 150)),
    }


def bert_like(path, text: str, special: bool = True):
    """A small WordPiece tokenizer.json over the words of ``text`` whose post-processor adds
    [CLS] and [SEP] around every input, as BERT-style models (MiniLM) do."""
    import pytest

    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers extra not installed")
    from tokenizers import models, pre_tokenizers, processors

    pieces = tokenizers.pre_tokenizers.BertPreTokenizer().pre_tokenize_str(text)
    known = sorted({p for p, _ in pieces} | {"#", ">", ":", "."})
    vocab = {w: i for i, w in enumerate(["[UNK]", "[CLS]", "[SEP]", *known])}
    tok = tokenizers.Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    if special:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
        )
    tok.save(str(path))
    return path
