"""Per corpus: chunk count, share under 50 tokens, and the share of chunks that name their
section, two ways (``sc001_*`` in the results).

The aim: 80 % or more of chunks from markdown documents start with a header or contain
complete section content. On ``embed_text`` (what is embedded): the chunk opens,
after its context header, with a heading, or the header names its section
(``tests.chunk_quality.names_its_section``). On ``text`` (the section test): the text
starts with a heading or the chunk is a whole section; where 80 % is out of reach, the
bound is the best share any packing could reach (sections over the cap need several
chunks). Image chunks are left out; markdown documents only.

``python benchmarks/sections.py`` runs the default policy over all shared corpora
(``--no-pack-siblings``: without sibling packing, as the text-level test judges);
``--out DIR`` measures an existing run folder instead (to compare with an older build).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import polars as pl  # noqa: E402

from chunkmill.pipeline import queries  # noqa: E402
from tests.chunk_quality import (  # noqa: E402
    best_possible_share,
    names_its_section,
    section_sizes,
    starts_with_heading,
)

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"


def measure(folder: Path, cap: int, depth: int) -> dict[str, dict]:
    """The figures of one run folder, per corpus (the first path segment)."""
    docs = pl.read_parquet(folder / "documents.parquet", columns=["doc_id", "path", "format"])
    chunks = pl.read_parquet(folder / "chunks.parquet").join(
        docs.select("doc_id", "format"), on="doc_id"
    )
    corpus = pl.col("path").str.split("/").list.first()
    chunks = chunks.with_columns(corpus=corpus)
    out = {}
    for (name,), part in sorted(chunks.partition_by("corpus", as_dict=True).items()):
        if name.endswith(".md"):
            continue
        text = part.filter((pl.col("chunk_type") != "image") & (pl.col("format") == "markdown"))
        title = text["title"] if "title" in text.columns else pl.Series([""] * text.height)
        embed_ok = [
            names_its_section(e, t, s, ti)
            for e, t, s, ti in zip(text["embed_text"], text["text"], text["section_title"], title)
        ]
        text_ok = [starts_with_heading(t) or p == 1 for t, p in zip(text["text"], text["parts"])]
        n = max(text.height, 1)
        out[name] = {
            "chunks": part.height,
            "under_50": (part.filter(pl.col("chunk_type") != "image")["n_tokens"] < 50).mean(),
            "sc001_embed": sum(embed_ok) / n,
            "sc001_text": sum(text_ok) / n,
            "bound": _bound(folder, docs, name, cap, depth),
        }
    return out


def _bound(folder: Path, docs: pl.DataFrame, corpus: str, cap: int, depth: int) -> float:
    blocks = pl.from_arrow(queries.table(folder, "blocks")).join(
        docs.filter(pl.col("format") == "markdown").select("doc_id", "path"), on="doc_id"
    )
    blocks = blocks.filter(pl.col("path").str.starts_with(corpus + "/"))
    return best_possible_share(section_sizes(blocks, depth), cap)


def print_table(rows: dict[str, dict]) -> None:
    head = ["corpus", "chunks", "<50 tok", "names section", "text", "bound"]
    print(f"{head[0]:<20} {head[1]:>7} {head[2]:>8} {head[3]:>13} {head[4]:>7} {head[5]:>7}")
    for name, r in rows.items():
        print(
            f"{name:<20} {r['chunks']:>7} {r['under_50']:>8.1%} {r['sc001_embed']:>13.1%} "
            f"{r['sc001_text']:>7.1%} {min(0.8, 0.9 * r['bound']):>7.1%}"
        )


def main(out: Path | None = None, pack_siblings: bool = True) -> dict:
    from chunkmill.pipeline.policy import Policy

    policy = Policy(pack_siblings=pack_siblings)
    if out is not None:
        rows = measure(out, policy.max_tokens, policy.heading_depth)
    elif not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return {"skipped": True}
    else:
        from chunkmill import run
        from chunkmill.jobs.runlog import RunLog

        with tempfile.TemporaryDirectory() as tmp:
            summary = run(CORPORA, Path(tmp) / "out", policy=policy, log=RunLog(quiet=True))
            rows = measure(summary.folder, policy.max_tokens, policy.heading_depth)
    print_table(rows)
    return rows


if __name__ == "__main__":
    args = sys.argv[1:]
    result = main(
        Path(args[args.index("--out") + 1]) if "--out" in args else None,
        pack_siblings="--no-pack-siblings" not in args,
    )
    if "--json" in args:
        print(json.dumps(result, indent=1))
