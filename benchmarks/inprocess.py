"""The library use: a loop of one call per document in one process, as an ingestion script
replacing another chunker would write it.

Every document of the shared corpora is read once into memory; then, alone on the machine,
each chunker splits every text in a loop, timed with the process's CPU clock and the wall
clock (best of ``--repeat``):

- chunkmill: ``chunkmill.chunk_text(text, path=..., target_tokens=400, max_tokens=512)``;
- text-splitter: ``MarkdownSplitter(2048, overlap=204).chunks(text)`` (2,048 characters,
  about 512 tokens at 4 characters a token);
- LangChain: ``MarkdownHeaderTextSplitter`` (h1-h3) then ``RecursiveCharacterTextSplitter
  (2048, 204)``;
- and chunkmill's batch API once: ``chunkmill.chunk_texts(texts, paths=..., target_tokens=400,
  max_tokens=512)`` over every document in one call, on every core (``chunkmill-batch``),
  against the loops above.

    python benchmarks/inprocess.py [--repeat N] [--only NAME]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.anchor_process import files  # noqa: E402

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"
CHARS, OVERLAP = 2048, 204


def chunkers() -> dict[str, Callable[[str, str], object]]:
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter
    from semantic_text_splitter import MarkdownSplitter

    import chunkmill

    splitter = MarkdownSplitter(CHARS, overlap=OVERLAP)
    headers = MarkdownHeaderTextSplitter(
        [("#", "h1"), ("##", "h2"), ("###", "h3")], strip_headers=False
    )
    recursive = RecursiveCharacterTextSplitter(chunk_size=CHARS, chunk_overlap=OVERLAP)

    def chunkmill_one(path: str, text: str):
        try:
            return chunkmill.chunk_text(text, path=path, target_tokens=400, max_tokens=512)
        except chunkmill.RejectedError:
            return []

    return {
        "chunkmill": chunkmill_one,
        "text-splitter": lambda path, text: splitter.chunks(text),
        "langchain": lambda path, text: recursive.split_documents(headers.split_text(text)),
    }


def documents() -> list[tuple[str, str]]:
    out = []
    for path in files(str(CORPORA)):
        with open(path, encoding="utf-8", errors="replace") as f:
            out.append((str(Path(path).relative_to(CORPORA)), f.read()))
    return out


def measure(split, docs: list[tuple[str, str]], repeat: int) -> dict:
    best = None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        n = sum(len(split(path, text)) for path, text in docs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if best is None or wall < best["seconds"]:
            best = {"seconds": round(wall, 3), "cpu_seconds": round(cpu, 3), "chunks": n}
    return best


def measure_batch(docs: list[tuple[str, str]], repeat: int) -> dict:
    import warnings

    import chunkmill

    paths, texts = [p for p, _ in docs], [t for _, t in docs]
    best = None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():  # the rejects of the corpora, counted in a warning
            warnings.simplefilter("ignore")
            n = chunkmill.chunk_texts(
                texts, paths=paths, target_tokens=400, max_tokens=512
            ).num_rows
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if best is None or wall < best["seconds"]:
            best = {"seconds": round(wall, 3), "cpu_seconds": round(cpu, 3), "chunks": n}
    return best


def main(argv: list[str] | None = None) -> dict:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--repeat", type=int, default=2)
    args.add_argument("--only", action="append")
    opts = args.parse_args(argv)
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} is absent")
        return {"skipped": str(CORPORA)}
    docs = documents()
    mb = sum(len(t.encode("utf-8")) for _, t in docs) / 1e6
    rows = {}
    runs = {
        name: (lambda s=split: measure(s, docs, opts.repeat)) for name, split in chunkers().items()
    }
    runs["chunkmill-batch"] = lambda: measure_batch(docs, opts.repeat)
    for name, timed in runs.items():
        if opts.only and name not in opts.only:
            continue
        rows[name] = timed()
        rows[name]["mb_per_s"] = round(mb / rows[name]["seconds"], 2)
        print(
            f"{name:14} {rows[name]['seconds']:8.2f} s  {rows[name]['mb_per_s']:6.2f} MB/s  "
            f"{rows[name]['chunks']:7d} chunks"
        )
    ours = rows.get("chunkmill")
    ratios = {
        name: round(r["seconds"] / ours["seconds"], 3)
        for name, r in rows.items()
        if ours and name not in ("chunkmill", "chunkmill-batch")
    }
    for name, ratio in ratios.items():
        print(f"chunkmill vs {name}: {ratio}x")
    batch, loop = rows.get("chunkmill-batch"), rows.get("text-splitter")
    if batch and loop:
        ratios["batch_vs_text-splitter"] = round(loop["seconds"] / batch["seconds"], 3)
        print(f"chunkmill-batch vs text-splitter's loop: {ratios['batch_vs_text-splitter']}x")
    return {"documents": len(docs), "mb": round(mb, 2), "rows": rows, "ratios": ratios}


if __name__ == "__main__":
    main()
