"""``chunk_text`` chunks one document without building tables (``chunk.document_rows``):
its chunks and rejects are those the batch stages give the same document, field by field."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from chunkmill import chunking as api
from chunkmill.pipeline import chunk
from chunkmill.pipeline.document import RawDocument
from tests.conftest import corpus_dir

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"

POLICIES = [
    {},
    {"target_tokens": 400, "max_tokens": 512},
    {"target_tokens": 60, "max_tokens": 100, "min_tokens": 20, "overlap_tokens": 10},
    {"front_matter": "include"},
    {"link_template": "https://docs.example/{path}#{anchor}", "heading_depth": 2},
    {
        "strategy": "fixed",
        "target_tokens": 80,
        "max_tokens": 120,
        "min_tokens": 20,
        "overlap_tokens": 8,
    },
    {"pack_siblings": False, "breadcrumb_prefix": False},
]

# what the one-document path must carry over exactly: markup in headings (reduced by
# markdown-it-py), images with reference definitions, front matter, a BOM, CRLF, MDX,
# plain text, empty and blank documents, and documents a run rejects
EDGES = {
    "markup.md": "# The `run` *command* [link][r]\n\nText.\n\n[r]: https://x.example\n",
    "image.md": "# Pics\n\n![alt text][logo]\n\n[logo]: /img/logo.png\n\nMore text here.\n",
    "front.md": "---\ntitle: Front\ntags: [a, b]\n---\n\n# Head\n\nBody text.\n",
    "bom.md": "\ufeff# Bom\n\nText after a byte order mark.\n",
    "crlf.md": "# One\r\n\r\nFirst.\r\n\r\n## Two\r\n\r\nSecond.\r\n",
    "page.mdx": "import X from './x'\n\n# Title\n\n<X prop={1} />\n\nProse.\n",
    "notes.txt": "Plain text.\n\nAnother paragraph of plain text.\n",
    "empty.md": "",
    "blank.md": "   \n\n  \n",
    "nul.md": "a\x00b",
    "surrogate.md": "bad \ud800 text",
    "code.md": "# Code\n\n```python\n" + "x = 1\n" * 400 + "```\n",
    "table.md": "# T\n\n| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 300,
    "cjk.md": "# 标题\n\n" + "中文句子。" * 300 + "\n",
}


def _both(text: str, path: str, overrides: dict):
    """(chunk_text's result, the batch stages' result): chunks, or the reject raised."""
    policy = api.resolve_policy(None, **overrides)
    results = []
    for run in (
        lambda: api.chunk_text(text, path=path, policy=policy),
        lambda: api._chunk_one(
            RawDocument(path, "<memory>", text.encode("utf-8", "surrogatepass")), policy
        ),
    ):
        try:
            results.append(run())
        except api.RejectedError as exc:
            results.append((exc.reason, exc.detail))
    return results


@pytest.mark.parametrize("overrides", POLICIES, ids=range(len(POLICIES)))
def test_edge_documents_same_as_the_batch_stages(overrides):
    for path, text in EDGES.items():
        fast, batch = _both(text, path, overrides)
        assert fast == batch, path


def test_the_edges_reach_the_path_they_test():
    policy = api.resolve_policy(None)
    counting = chunk.Counting(policy)
    doc = {"doc_id": "d", "path": "markup.md", "format": "markdown", "mdx": False}
    doc |= {"front_matter": None, "metadata": None}
    rows, rejects = chunk.document_rows(doc, EDGES["markup.md"].encode(), policy, counting)
    assert rejects == [] and rows[0][7] == ("The run command link",)  # breadcrumb
    assert [c.chunk_type for c in api.chunk_text(EDGES["image.md"], path="image.md")]
    with pytest.raises(api.RejectedError) as caught:
        api.chunk_text(EDGES["nul.md"], path="nul.md")
    assert caught.value.reason == "binary"


def test_sample_data_same_as_the_batch_stages():
    paths = sorted(p for p in SAMPLE.rglob("*") if p.suffix in {".md", ".mdx", ".txt"})
    assert paths
    for i, p in enumerate(paths):
        text = p.read_bytes().decode("utf-8", "surrogateescape")
        fast, batch = _both(text, p.name, POLICIES[i % len(POLICIES)])
        assert fast == batch, p.name


@pytest.mark.corpus
def test_corpus_documents_same_as_the_batch_stages():
    root = corpus_dir()
    paths = sorted(p for p in root.rglob("*") if p.suffix in {".md", ".mdx", ".markdown"})
    random.Random(7).shuffle(paths)
    for i, p in enumerate(paths[:1500]):
        text = p.read_text("utf-8", errors="replace")
        fast, batch = _both(text, str(p.relative_to(root)), POLICIES[i % len(POLICIES)])
        assert fast == batch, p


def test_a_core_failure_on_the_document_goes_to_the_batch_stages(monkeypatch):
    from chunkmill import _core

    text, expected = EDGES["markup.md"], api.chunk_text(EDGES["markup.md"], path="markup.md")
    calls = []

    def failing(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("the core failed")

    monkeypatch.setattr(_core, "chunk_pass", failing)
    monkeypatch.setattr(_core, "blocks", failing)
    assert api.chunk_text(text, path="markup.md") == expected  # the reference parser's blocks
    assert len(calls) == 3  # the one-document path, the batch's one pass, its blocks stage


def _stages(text: str):
    """The chunks stage's core call (``_core.chunk_documents``) on one document's blocks."""
    from chunkmill.pipeline import batch

    policy = api.resolve_policy(None)
    raws = [RawDocument("a.md", "<memory>", text.encode())]
    docs, blocks, _ = batch.documents_and_blocks(raws, "auto", policy.bias, 1 << 20)
    return chunk.chunks(docs, blocks, policy, estimated=True)


def test_block_buffers_of_the_wrong_size_are_refused_by_the_core(monkeypatch):
    """The core reads the block columns from buffers in place: one of the wrong length is a
    ValueError naming it, never a read past its end."""
    from chunkmill import _core

    real = _core.chunk_documents

    def short_tokens(docs, blocks, *args):
        *head, tokens = blocks
        return real(docs, (*head, memoryview(tokens)[:-4]), *args)

    monkeypatch.setattr(_core, "chunk_documents", short_tokens)
    with pytest.raises(ValueError, match="tokens has"):
        _stages("# A\n\ntext\n\n## B\n\nmore\n")
    monkeypatch.setattr(
        _core, "chunk_documents", lambda d, b, *a: real(d, (*b[:4], b"\0", *b[5:]), *a)
    )
    with pytest.raises(ValueError, match="level has"):
        _stages("# A\n\ntext\n")


def _tables(raws: list, overrides: dict, monkeypatch, one_pass: bool) -> dict:
    """Every table ``batch.process`` makes of ``raws``, by the one pass or by the stages."""
    from chunkmill.pipeline import batch

    with monkeypatch.context() as m:
        if not one_pass:
            m.setattr(chunk, "passed", lambda *a, **k: None)
        policy = api.resolve_policy(None, **overrides)
        return batch.process(batch.Batch(raws), policy, 1 << 22)[0]


def _one_pass_equals_the_stages(raws: list, monkeypatch) -> None:
    for i, overrides in enumerate(POLICIES):
        by_pass = _tables(raws, overrides, monkeypatch, True)
        by_stages = _tables(raws, overrides, monkeypatch, False)
        for name, table in by_stages.items():
            assert by_pass[name].equals(table), (i, name)


def test_the_one_pass_makes_the_tables_of_the_stages(monkeypatch):
    """A batch of fresh documents is parsed, estimated and chunked by one core call
    (``chunk.passed``); every table is the one the blocks and chunks stages make."""
    raws = [
        RawDocument(p, "<memory>", t.encode("utf-8", "surrogatepass")) for p, t in EDGES.items()
    ]
    raws += [
        RawDocument(str(p.relative_to(SAMPLE)), "<memory>", p.read_bytes())
        for p in sorted(SAMPLE.rglob("*"))
        if p.suffix in {".md", ".mdx", ".txt"}
    ]
    tables = _tables(raws, {}, monkeypatch, True)
    assert tables["chunks"].num_rows and tables["blocks"].num_rows and tables["rejects"].num_rows
    _one_pass_equals_the_stages(raws, monkeypatch)
    # and the pass ran: it leaves no document of these to the stages
    from chunkmill.pipeline import batch, document

    policy = api.resolve_policy(None)
    docs, _ = document.documents(raws, policy.mdx, 1 << 22)
    assert chunk.passed(docs, policy, batch.counting_of(policy), blocks=True) is not None


@pytest.mark.corpus
def test_the_one_pass_makes_the_tables_of_the_stages_on_the_corpora(monkeypatch):
    root = corpus_dir()
    paths = sorted(p for p in root.rglob("*") if p.suffix in {".md", ".mdx", ".markdown", ".txt"})
    random.Random(11).shuffle(paths)
    raws = [RawDocument(str(p.relative_to(root)), "<memory>", p.read_bytes()) for p in paths[:600]]
    _one_pass_equals_the_stages(raws, monkeypatch)
