"""Search terms outside English: bigrams for scripts written without spaces, the
same rule in postings and queries, English unchanged."""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import postings, queries, runstore
from tests.conftest import SAMPLE, corpus_dir
from tests.helpers import EVERY_TABLE, SMALL_FLAGS

TEXTS = [
    "インテグレーションを使う",
    "Vue文档 集成测试。",
    "한국어 텍스트",
    "ภาษาไทย ok ລາວ ខ្មែរ မြန်မာ",
    "हिन्दी भाषा naïve café",
    "カ 中 x",
    "Hello, World! hello again: v1.2 API_KEY",
    "コンポーネント・テンプレート",
]


def _query_terms(con, query: str) -> list[str]:
    """The query_terms CTE of sql/search.sql, run alone."""
    sql = queries.load("search.sql")
    cte = sql[sql.index("WITH") : sql.index("collection AS")].rstrip().rstrip(",")
    rows = con.execute(cte + "\nSELECT term FROM query_terms", {"query": query}).fetchall()
    return sorted(r[0] for r in rows)


@pytest.mark.parametrize("text", TEXTS)
def test_postings_and_queries_make_the_same_terms(text):
    frame = pl.DataFrame({"key": [0], "text": [text]})
    indexed = sorted(set(postings.terms(frame)["term"].to_list()))
    assert _query_terms(duckdb.connect(), text) == indexed


def test_bigrams_of_runs_without_spaces():
    frame = pl.DataFrame({"key": [0, 1, 2], "text": ["インテグ", "vue文档", "한 국어"]})
    got = postings.terms(frame).group_by("key", maintain_order=True).agg("term")
    assert got["term"].to_list() == [["イン", "ンテ", "テグ"], ["vue", "文档"], ["한", "국어"]]


def _old_postings(chunks: pa.Table) -> pl.DataFrame:
    """The earlier rule, for Latin text: runs of letters and digits, lower-cased."""
    terms = pl.from_arrow(chunks.select(["chunk_id", "embed_text"])).select(
        "chunk_id",
        pl.col("embed_text").str.to_lowercase().str.extract_all(r"[\p{L}\p{N}]+").alias("term"),
    )
    return (
        terms.with_columns(doc_len=pl.col("term").list.len().cast(pl.Int32))
        .explode("term")
        .drop_nulls("term")
        .group_by("term", "chunk_id", "doc_len", maintain_order=True)
        .agg(tf=pl.len().cast(pl.Int32))
        .select("term", "chunk_id", "tf", "doc_len")
    )


def test_english_postings_and_results_are_unchanged(tmp_path):
    out = tmp_path / "o"
    args = ["run", str(SAMPLE), "--out", str(out), *SMALL_FLAGS, *EVERY_TABLE]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    folder = runstore.resolve(out)
    chunks = pl.read_parquet(folder / "chunks.parquet")
    new = pl.read_parquet(folder / "postings.parquet")
    assert new.equals(_old_postings(chunks.to_arrow()))
    con = duckdb.connect()
    for q in ("compactor segments", "Install the package manager", "windows line endings"):
        old = sorted(set(q.lower().replace(",", " ").split()))
        assert _query_terms(con, q) == old


JA_WORDS = [
    "テンプレート",
    "リアクティブ",
    "レンダリング",
    "スロット",
    "イベント",
    "プラグイン",
    "ウォッチャー",
    "依存関係",
    "双方向",
    "ルーティング",
]
ZH_WORDS = [
    "响应式",
    "计算属性",
    "生命周期",
    "渲染函数",
    "侦听器",
    "依赖注入",
    "服务端渲染",
    "单文件组件",
    "选项式",
    "组件实例",
]


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("corpus", "words"), [("vue_docs_ja", JA_WORDS), ("vue_docs_zh", ZH_WORDS)]
)
def test_search_finds_the_chunks_that_contain_a_word(tmp_path, corpus, words):
    out = tmp_path / corpus
    result = CliRunner().invoke(main, ["run", str(corpus_dir(corpus)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with queries.connect(out) as con:
        for word in words:
            assert 3 <= len(word) <= 6
            truth = {
                r[0]
                for r in con.execute(
                    "SELECT chunk_id FROM chunks WHERE contains(embed_text, ?)", [word]
                ).fetchall()
            }
            assert len(truth) >= 5, word  # a word of the corpus
            found = CliRunner().invoke(
                main, ["search", str(out), word, "--limit", "1000", "--json"]
            )
            assert found.exit_code == 0, found.output
            hits = {h["chunk_id"] for h in pl.read_json(found.output.encode()).to_dicts()}
            assert len(truth & hits) >= 0.9 * len(truth), (word, len(truth & hits), len(truth))
