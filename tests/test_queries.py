"""The DuckDB layer: views, BM25 search, statistics and data checks."""

from __future__ import annotations

import json
import math
import re
from collections import Counter

import duckdb
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import queries, runstore
from chunkmill.pipeline.fence import unbalanced
from chunkmill.pipeline.runstore import parquet_files
from tests.conftest import SAMPLE
from tests.helpers import EVERY_TABLE, SMALL_FLAGS


@pytest.fixture(scope="module")
def sample_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    args = ["run", str(SAMPLE), "--out", str(out), *SMALL_FLAGS, *EVERY_TABLE]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return runstore.resolve(out)  # the published run folder


def test_views_over_an_output_folder(sample_out):
    assert (queries.sql_dir() / "views.sql").exists()
    con = queries.connect(sample_out)
    (n_docs,) = con.execute("SELECT count(*) FROM documents").fetchone()
    assert n_docs == 11
    (title,) = con.execute(
        "SELECT front_matter['title'] FROM documents WHERE path = 'index.md'"
    ).fetchone()
    assert title == "Pebble handbook"


def test_search_section_filter(sample_out):
    hits = queries.search(sample_out, "pebble store data", section="STORE", limit=50)
    assert hits.height > 0
    chunks = pl.read_parquet(sample_out / "chunks.parquet").select(
        "chunk_id", "breadcrumb", "headings"
    )
    for row in hits.join(chunks, on="chunk_id").iter_rows(named=True):
        names = [h.lower() for h in row["breadcrumb"] + row["headings"]]
        assert any("store" in h for h in names), names
    everything = queries.search(sample_out, "pebble store data", limit=50)
    assert everything.height > hits.height  # the filter did remove something


def test_search_level_type_path_and_front_matter_filters(sample_out):
    level2 = queries.search(sample_out, "pebble", level=2, limit=50)
    assert level2.height > 0 and set(level2["header_level"]) == {2}
    assert queries.search(sample_out, "pebble", level=1, limit=50)["header_level"].to_list()
    guides = queries.search(sample_out, "pebble", path="guides/*", limit=50)
    assert guides.height > 0 and all(p.startswith("guides/") for p in guides["path"])
    pre = queries.search(sample_out, "pebble", chunk_type="preamble", limit=50)
    assert set(pre["chunk_type"]) <= {"preamble"}
    fm = queries.search(sample_out, "pebble", fm_key="title", fm_value="Getting started", limit=50)
    assert fm.height > 0 and set(fm["path"]) == {"guides/getting-started.md"}


def _bm25(chunks: pl.DataFrame, query: str, k1=1.2, b=0.75) -> list[tuple[str, float]]:
    """Textbook BM25 (Lucene idf), written independently of sql/search.sql."""
    tokenize = lambda s: re.findall(r"[^\W_]+", s.lower())  # noqa: E731
    docs = {cid: Counter(tokenize(t)) for cid, t in zip(chunks["chunk_id"], chunks["embed_text"])}
    n = len(docs)
    avgdl = sum(sum(c.values()) for c in docs.values()) / n
    scores = {}
    for term in set(tokenize(query)):
        df = sum(1 for c in docs.values() if term in c)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for cid, counts in docs.items():
            tf = counts.get(term, 0)
            if tf:
                dl = sum(counts.values())
                scores[cid] = scores.get(cid, 0.0) + idf * tf * (k1 + 1) / (
                    tf + k1 * (1 - b + b * dl / avgdl)
                )
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:10]


@pytest.mark.parametrize(
    "query",
    [
        "pebble store",
        "install the package manager",
        "compactor segments merge",
        "windows line endings offsets",
        "heading quote fence code",
    ],
)
def test_bm25_matches_an_independent_implementation(sample_out, query):
    chunks = pl.read_parquet(sample_out / "chunks.parquet")
    expected = _bm25(chunks, query)
    got = queries.search(sample_out, query, limit=10)
    assert got["chunk_id"].to_list() == [cid for cid, _ in expected]
    for score, (_, want) in zip(got["score"], expected):
        assert score == pytest.approx(want, rel=1e-9)


def test_statistics_match_polars(sample_out):
    figures = queries.stats(sample_out)
    chunks = pl.read_parquet(sample_out / "chunks.parquet")
    docs = pl.read_parquet(sample_out / "documents.parquet")
    blocks = pl.read_parquet(sample_out / "blocks.parquet")
    policy = queries.policy_of(sample_out)
    assert (policy.min_tokens, policy.max_tokens) == (20, 100)
    text = chunks.filter(pl.col("chunk_type") != "image")
    tok = text["n_tokens"]
    o = figures["overview"].row(0, named=True)
    assert (o["documents"], o["chunks"], o["blocks"], o["rejects"]) == (
        docs.height,
        chunks.height,
        blocks.height,
        0,
    )
    t = figures["tokens"].row(0, named=True)
    ordered = sorted(tok.to_list())
    for name, q in (("p10", 0.1), ("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        # nearest-rank percentile: the value at rank ceil(q * n)
        assert t[name] == ordered[math.ceil(q * len(ordered)) - 1], name
    assert (t["min"], t["max"]) == (tok.min(), tok.max())
    assert t["share_under_min"] == pytest.approx((tok < 20).mean())
    assert t["share_at_cap"] == pytest.approx((tok == 100).mean())
    assert t["share_over_cap"] == 0
    from tests.chunk_quality import starts_with_heading

    assert t["share_starting_with_heading"] == pytest.approx(
        sum(map(starts_with_heading, text["text"])) / text.height
    )
    hist = figures["histogram"]
    assert hist["chunks"].sum() == text.height
    assert hist["chunks"][0] == (tok < 5).sum()  # 20 bins of 5 tokens
    mix = {
        (r["strategy"], r["chunk_type"]): r["chunks"] for r in figures["mix"].iter_rows(named=True)
    }
    assert mix == {
        (s, c): n for s, c, n in chunks.group_by("strategy", "chunk_type").len().iter_rows()
    }
    kinds = dict(figures["block_kinds"].select("kind", "blocks").iter_rows())
    assert kinds == dict(blocks.group_by("kind").len().iter_rows())
    per_doc = docs.join(chunks.group_by("doc_id").len(), on="doc_id", how="left").fill_null(0)
    d = figures["per_document"].row(0, named=True)
    assert (d["min"], d["max"], d["documents_without_chunks"]) == (
        per_doc["len"].min(),
        per_doc["len"].max(),
        (per_doc["len"] == 0).sum(),
    )
    largest = figures["extremes"].filter(pl.col("which") == "largest")["n_tokens"].to_list()
    assert largest == tok.sort(descending=True).head(10).to_list()
    s = figures["splits"].row(0, named=True)
    assert s["split_chunks"] == chunks["is_split"].sum()


def test_stats_and_search_commands(sample_out):
    runner = CliRunner()
    result = runner.invoke(main, ["stats", str(sample_out)])
    assert result.exit_code == 0, result.output
    assert "p50" in result.output and "█" in result.output and "largest chunks" in result.output
    result = runner.invoke(main, ["stats", str(sample_out), "--json"])
    assert result.exit_code == 0 and '"tokens"' in result.output
    result = runner.invoke(main, ["search", str(sample_out), "compactor", "--level", "2"])
    assert result.exit_code == 0 and "reference/config.md" in result.output
    result = runner.invoke(main, ["search", str(sample_out), "compactor", "--json"])
    assert result.exit_code == 0 and result.output.lstrip().startswith("[")
    result = runner.invoke(
        main, ["sql", str(sample_out), "SELECT count(*) AS n FROM chunks", "--format", "csv"]
    )
    assert result.exit_code == 0 and result.output.startswith("n\n")


def test_missing_policy_footer_warns(sample_out, tmp_path):
    import shutil

    shutil.copytree(sample_out, tmp_path / "o")
    shutil.rmtree(tmp_path / "o" / "chunks.parquet")  # one file in its place, as other tools write
    pl.read_parquet(sample_out / "chunks.parquet").write_parquet(tmp_path / "o" / "chunks.parquet")
    with pytest.warns(UserWarning, match="no policy in its footer"):
        assert queries.policy_of(tmp_path / "o").max_tokens == 1000


def test_checks_hold_on_sample(sample_out):
    assert all(rows.is_empty() for rows in queries.checks(sample_out).values())
    result = CliRunner().invoke(main, ["check", str(sample_out)])
    assert result.exit_code == 0 and "7 of 7 checks hold" in result.output  # + checksums


def test_checks_catch_corruption(sample_out, tmp_path):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(sample_out, bad)
    chunks = pl.read_parquet(bad / "chunks.parquet")
    n_chars = dict(
        pl.read_parquet(bad / "documents.parquet").select("doc_id", "n_chars").iter_rows()
    )
    first = chunks.row(0, named=True)
    corrupt = (
        chunks.with_row_index()
        .with_columns(
            # row 1 takes row 0's id; row 2 goes over the cap; row 3 points past its document
            chunk_id=pl.when(pl.col("index") == 1)
            .then(pl.lit(first["chunk_id"]))
            .otherwise(pl.col("chunk_id")),
            n_tokens=pl.when(pl.col("index") == 2).then(pl.lit(101)).otherwise(pl.col("n_tokens")),
        )
        .drop("index")
    )
    row3 = corrupt.row(3, named=True)
    spans = corrupt["spans"].to_list()
    spans[3] = [{"start": 0, "end": n_chars[row3["doc_id"]] + 10}]
    corrupt = corrupt.with_columns(pl.Series("spans", spans, dtype=chunks.schema["spans"]))
    import pyarrow.parquet as pq

    footer = pq.read_schema(parquet_files.parts(sample_out, "chunks")[0]).metadata  # the policy
    shutil.rmtree(bad / "chunks.parquet")  # one file in its place
    pq.write_table(corrupt.to_arrow().replace_schema_metadata(footer), bad / "chunks.parquet")
    failed = {name for name, rows in queries.checks(bad).items() if not rows.is_empty()}
    # the rewritten file no longer matches the run's manifest either
    assert failed == {"checksums", "unique_chunk_id", "tokens_within_cap", "spans_inside_document"}
    result = CliRunner().invoke(main, ["check", str(bad)])
    assert result.exit_code == 1 and "FAIL  unique_chunk_id" in result.output


FENCE_LINES = [
    "```",
    "```py",
    "````",
    "~~~",
    "~~~~ x",
    "  ```",
    "\t```js",
    "> ```",
    "- ```",
    "1. ~~~",
    "\u0661\u0662. ```",  # a list item numbered in Arabic-Indic digits
    "\u0967) ~~~",  # and in Devanagari
    "``` `x`",
    "text",
    "",
    "    ```",
    "`````",
    "  ~~~  ",
]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(FENCE_LINES), max_size=8), min_size=1, max_size=20))
def test_sql_fence_check_agrees_with_python(texts):
    texts = ["\n".join(lines) for lines in texts]
    con = duckdb.connect()
    frame = pl.DataFrame(
        {
            "chunk_id": [str(i) for i in range(len(texts))],
            "path": "p",
            "line_start": 1,
            "text": texts,
        }
    )
    con.register("chunks", frame)
    flagged = set(con.sql(queries.load("checks/balanced_fences.sql")).pl()["chunk_id"])
    assert flagged == {str(i) for i, t in enumerate(texts) if unbalanced(t)}


def test_the_quick_start_commands_work_as_written(tmp_path):
    # the README's Quick start, on `make run`'s output (packed for the bundled MiniLM):
    # every chunkmill command succeeds, its searches (BM25, then by meaning in the store the
    # sync wrote) find the page they name
    import shlex

    from tests.conftest import REPO

    readme = (REPO / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("## ", 1)[0]
    commands = [
        shlex.split(line)[1:]
        for line in block.splitlines()
        if line.startswith(".venv/bin/chunkmill ")
    ]
    assert [c[0] for c in commands] == ["stats", "stats", "search", "sql", "sync", "search"]
    assert ["--tokenizer", "tiktoken:cl100k_base"] == commands[1][-2:]  # real counts shown
    make_run = REPO / "Makefile"
    policy = make_run.read_text().split("chunkmill run sample_data --out $(OUT) ", 1)[1]
    out = tmp_path / "sample"
    result = CliRunner().invoke(main, ["run", str(SAMPLE), "--out", str(out),
                                       *policy.split("\n", 1)[0].split()])  # fmt: skip
    assert result.exit_code == 0, result.output
    mapped = {"out/sample": str(out), "lancedb://out/store": f"lancedb://{tmp_path / 'store'}"}
    for args in commands:
        args = [mapped.get(a, a) for a in args]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (args, result.output)
        assert "no match" not in result.output, args
        if args[0] == "search":
            assert "reference/config.md" in result.output, args


def test_sql_shows_intervals_and_refuses_an_empty_query(sample_out):
    runner = CliRunner()
    query = 'SELECT now() - started_at AS age, INTERVAL 3 DAY AS "odd ""name" FROM runs'
    result = runner.invoke(main, ["sql", str(sample_out), query, "--format", "csv"])
    assert result.exit_code == 0, result.output
    header, first = result.output.splitlines()[:2]
    assert header == 'age,"odd ""name"' and first.endswith(",3 days")
    result = runner.invoke(main, ["sql", str(sample_out), ""])
    assert result.exit_code == 2 and "returned no result" in result.output


def test_search_results_carry_url_anchor_and_text(tmp_path):
    out = tmp_path / "out"
    template = "https://docs.example.com/{path_stem}#{anchor}"
    args = ["run", str(SAMPLE), "--out", str(out), *SMALL_FLAGS, "--link-template", template]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    chunks = pl.read_parquet(runstore.resolve(out) / "chunks.parquet")
    by_id = {r["chunk_id"]: r for r in chunks.iter_rows(named=True)}
    hits = queries.search(out, "compactor", level=2)
    assert hits.height
    for hit in hits.iter_rows(named=True):
        chunk = by_id[hit["chunk_id"]]
        assert (hit["url"], hit["anchor"], hit["text"]) == (
            chunk["url"], chunk["anchor"], chunk["text"]
        )  # fmt: skip
        assert hit["url"].startswith("https://docs.example.com/") and hit["anchor"]
    found = CliRunner().invoke(main, ["search", str(out), "compactor", "--level", "2", "--json"])
    assert found.exit_code == 0, found.output
    rows = json.loads(found.stdout)
    assert [(r["url"], r["anchor"], r["text"]) for r in rows] == list(
        zip(hits["url"], hits["anchor"], hits["text"])
    )
    listing = CliRunner().invoke(main, ["search", str(out), "compactor", "--level", "2", "--full"])
    assert listing.exit_code == 0, listing.output
    first = hits.row(0, named=True)
    assert first["url"] in listing.output
    # --full: the whole text, each line indented under its hit
    assert all(line.strip() in listing.output for line in first["text"].splitlines())


def test_search_prints_a_snippet_around_the_first_match(tmp_path):
    doc = "# Guide\n\n" + "\n".join(f"Filler line {i} about nothing." for i in range(30))
    doc += "\nThe compactor merges segments at night.\n" + "Trailing line.\n" * 20
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "guide.md").write_text(doc)
    out = tmp_path / "out"
    assert (
        CliRunner().invoke(main, ["run", str(tmp_path / "src"), "--out", str(out)]).exit_code == 0
    )
    listing = CliRunner().invoke(main, ["search", str(out), "compactor"])
    assert listing.exit_code == 0, listing.output
    rank, link, *body = [line.strip() for line in listing.output.splitlines()]
    assert rank.endswith("guide.md:1-53  Guide") and link == "#guide"
    assert body[0] == "… Filler line 29 about nothing."
    assert body[1] == "The compactor merges segments at night." and body[-1] == "…"
    assert len(body) == 4 and "Filler line 3 " not in listing.output
    full = CliRunner().invoke(main, ["search", str(out), "compactor", "--full"])
    assert "Filler line 3 about nothing." in full.output and full.output.count("Trailing") == 20


def test_sql_says_when_the_table_shows_fewer_rows_than_the_query_returned(sample_out):
    query = "SELECT * FROM range(200)"
    result = CliRunner().invoke(main, ["sql", str(sample_out), query])
    assert result.exit_code == 0, result.output
    assert "showing 50 of 200 rows" in result.stderr
    assert "│ 49 " in result.stdout and "│ 50 " not in result.stdout
    every = CliRunner().invoke(main, ["sql", str(sample_out), query, "--rows", "0"])
    assert "│ 199 " in every.stdout and "showing" not in every.stderr
    small = CliRunner().invoke(main, ["sql", str(sample_out), "SELECT * FROM range(3)"])
    assert "showing" not in small.stderr
