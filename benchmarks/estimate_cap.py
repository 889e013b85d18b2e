"""Does a counter keep the cap, and how many chunks does it make? Chunks of every shared
corpus, recounted for real.

    python benchmarks/estimate_cap.py [--tokenizers cl100k,o200k,minilm] [--packed-by SPEC]

Chunks every shared corpus with the estimate (or ``--packed-by``: the policy's tokenizer,
e.g. tiktoken:cl100k_base, the default's) at the default policy's sizes and at target 400 /
max 512 / min 100 / overlap 50 (from the stored blocks, in this process), then counts every
``embed_text`` with cl100k, o200k and MiniLM's WordPiece (when installed) and reports per
corpus: chunks, the share over ``max_tokens`` and the largest excess.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fit_estimate import CORPORA, minilm_path  # noqa: E402
from chunkmill.pipeline import chunk, token_estimate, tokens  # noqa: E402
from chunkmill.pipeline.policy import Policy  # noqa: E402

POLICIES = {
    "default": Policy(tokenizer="estimate"),
    "small": Policy(
        target_tokens=400, max_tokens=512, min_tokens=100, overlap_tokens=50, tokenizer="estimate"
    ),
}


def specs(names: list[str]) -> dict[str, str]:
    known = {"cl100k": "tiktoken:cl100k_base", "o200k": "tiktoken:o200k_base"}
    path = minilm_path()
    if path is not None:
        known["minilm"] = f"hf:{path}"
    return {n: known[n] for n in names if n in known}


def stored_blocks(corpora: Path, folder: Path):
    from chunkmill.jobs import blocks_job
    from chunkmill.pipeline.inputs import sources

    if not (folder / "blocks.parquet").exists():
        selection = sources.Selection()
        blocks_job.run(sources.plan([str(corpora)], selection), folder, selection)
    return pq.read_table(folder / "documents.parquet"), pq.read_table(folder / "blocks.parquet")


def chunked(docs, blocks, policy: Policy) -> tuple[pl.DataFrame, float]:
    start = time.perf_counter()
    table, rejects = chunk.chunks(docs, blocks, policy)
    seconds = time.perf_counter() - start
    frame = pl.from_arrow(table.select(["path", "chunk_type", "embed_text", "n_tokens"]))
    frame = frame.filter(pl.col("chunk_type") != "image").with_columns(
        corpus=pl.col("path").str.split("/").list.get(0)
    )
    return frame, seconds


def over_cap(frame: pl.DataFrame, counts: dict[str, list[int]], cap: int) -> pl.DataFrame:
    """Per corpus: chunks, and per tokenizer the share over the cap and the largest excess."""
    frame = frame.with_columns(**{n: pl.Series(c) for n, c in counts.items()})
    aggs = [pl.len().alias("chunks")]
    for name in counts:
        aggs += [
            (pl.col(name) > cap).mean().mul(100).round(3).alias(f"{name} over %"),
            ((pl.col(name).max() / cap - 1) * 100).round(1).alias(f"{name} worst %"),
        ]
    per = frame.group_by("corpus").agg(aggs).sort("corpus")
    total = frame.select(aggs).with_columns(corpus=pl.lit("all")).select(per.columns)
    return pl.concat([per, total])


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--tokenizers", default="cl100k,o200k,minilm")
    ap.add_argument("--blocks", type=Path, help="a `chunkmill blocks` folder to reuse")
    ap.add_argument("--weights", help="JSON weights to try instead of token_estimate.WEIGHTS")
    ap.add_argument("--packed-by", default="estimate", help="the policies' tokenizer")
    args = ap.parse_args(argv)
    if args.weights:
        token_estimate.WEIGHTS.update(json.loads(args.weights))
    counters = {n: tokens.make_counter(s) for n, s in specs(args.tokenizers.split(",")).items()}
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        docs, blocks = stored_blocks(args.corpora, args.blocks or Path(tmp))
        for name, policy in POLICIES.items():
            policy = policy.replace(tokenizer=args.packed_by)
            frame, seconds = chunked(docs, blocks, policy)
            texts = frame["embed_text"].to_list()
            counts = {n: tokens.input_tokens(c, texts) for n, c in counters.items()}
            table = over_cap(frame, counts, policy.max_tokens)
            print(
                f"== {name} ({policy.tokenizer}): {frame.height} chunks, chunk stage "
                f"{seconds:.1f} s (one process)"
            )
            with pl.Config(tbl_rows=40, tbl_cols=20, tbl_width_chars=200):
                print(table)
            out[name] = {"seconds": seconds, "table": table.to_dicts()}
    return out


if __name__ == "__main__":
    main()
