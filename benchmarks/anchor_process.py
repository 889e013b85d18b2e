"""One anchor chunker as a whole process, the way a user would run it on a corpus: list and
read the files, split every text, write the chunk texts as one Parquet table.

    python benchmarks/anchor_process.py NAME CORPORA OUT.parquet

NAME: langchain, semantic-text-splitter or chonkie (the `bench` extra). Budget: 3,000
characters with 320 of overlap (750 tokens at 4 characters a token), as compare.py says.
Only the named chunker's library is imported, so start-up counts what that tool costs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

SUFFIXES = (".md", ".mdx", ".markdown", ".txt")
CHARS, OVERLAP = 3000, 320


def files(root: str) -> list[str]:
    """Every markdown or text file under ``root``, sorted by path."""
    found = []
    for folder, _, names in os.walk(root):
        found.extend(os.path.join(folder, n) for n in names if n.endswith(SUFFIXES))
    return sorted(found)


def splitter(name: str) -> Callable[[str], list[str]]:
    if name == "langchain":
        from langchain_text_splitters import (
            MarkdownHeaderTextSplitter,
            RecursiveCharacterTextSplitter,
        )

        headers = MarkdownHeaderTextSplitter(
            [("#", "h1"), ("##", "h2"), ("###", "h3")], strip_headers=False
        )
        recursive = RecursiveCharacterTextSplitter(chunk_size=CHARS, chunk_overlap=OVERLAP)
        return lambda t: [d.page_content for d in recursive.split_documents(headers.split_text(t))]
    if name == "semantic-text-splitter":
        from semantic_text_splitter import MarkdownSplitter

        return MarkdownSplitter(CHARS, overlap=OVERLAP).chunks
    if name == "chonkie":
        from chonkie import RecursiveChunker

        chonkie = RecursiveChunker(tokenizer="character", chunk_size=CHARS)
        return lambda t: [c.text for c in chonkie.chunk(t)]
    raise SystemExit(f"unknown anchor {name!r}: langchain, semantic-text-splitter or chonkie")


def main(name: str, root: str, out: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    split = splitter(name)
    texts = []
    for path in files(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.extend(split(f.read()))
    pq.write_table(pa.table({"text": pa.array(texts, pa.large_string())}), out)


if __name__ == "__main__":
    main(*sys.argv[1:4])
