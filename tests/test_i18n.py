"""Outside English: sentence ends, cuts between grapheme clusters, headings kept
with their first piece, token caps in scripts the old estimate under-counted."""

from __future__ import annotations

import random
import re

import pytest
import regex
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main
from chunkmill.pipeline.policy import Policy
from chunkmill.pipeline.tokens import make_counter
from tests import split
from tests.conftest import corpus_dir
from tests.helpers import chunk_text, sentences

ENDS = "。！？"


def _japanese_paragraph(n: int) -> str:
    """n sentences of our own Japanese, no spaces, ending in 。, ！ or ？ in turn."""
    bodies = [
        "この段落は説明を続けていますが、まだ終わりではありません",
        "設定ファイルを読み込んでから、コンポーネントを順番に表示します",
        "本当にこの方法で正しいのでしょうか",
        "テンプレートの中では式を書くことができます",
    ]
    return "".join(f"{bodies[i % 4]}（例{i}）{ENDS[i % 3]}" for i in range(n))


def test_japanese_paragraph_splits_only_after_sentence_ends():
    para = _japanese_paragraph(200)
    doc = f"# 長い段落\n\n{para}\n"
    start = doc.index(para)
    chunks = chunk_text(
        doc, Policy(target_tokens=200, max_tokens=256, min_tokens=50, overlap_tokens=20)
    )
    assert len(chunks) > 10
    for c in chunks:
        assert c["n_tokens"] <= 256
        for span in c["spans"]:
            s, e = span["start"], span["end"]
            assert s in (0, start) or doc[s - 1] in ENDS, doc[s - 5 : s + 5]
            assert e == len(doc.rstrip("\n")) or doc[e - 1] in ENDS, doc[e - 5 : e + 5]
        # pieces of the paragraph are joined as they were written: no blank line inserted
        assert "\n" not in c["text"].split("\n\n", 1)[-1]


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("これはペンです。次の文！最後？", ["これはペンです。", "次の文！", "最後？"]),
        ("「引用です。」続き。", ["「引用です。」", "続き。"]),
        ("यह पहला है। यह दूसरा॥ अंत", ["यह पहला है।", "यह दूसरा॥", "अंत"]),
        ("هل هذا سؤال؟ نعم.", ["هل هذا سؤال؟", "نعم."]),
        ("版本 v1.2 可用。example.com 也是。", ["版本 v1.2 可用。", "example.com 也是。"]),
    ],
)
def test_sentence_ends_outside_english(text, pieces):
    assert [text[a:b] for a, b in split._sentences(text, 0, len(text))] == pieces


# Combining sequences of our own: accented letters spelled with marks, emoji with skin tones,
# ZWJ families, flags, Hangul syllables spelled in jamo, Devanagari with vowel signs.
CLUSTERS = [
    "e\u0301\u0323",
    "a\u0308",
    "\U0001f44d\U0001f3fd",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\U0001f1ef\U0001f1f5",
    "\u1100\u1161\u11a8",
    "\u0915\u093f",
    "\u0d15\u0d4d\u0d37",
    "x",
]


def _cluster_run(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(CLUSTERS) for _ in range(n))


@pytest.mark.parametrize("seed", range(4))
def test_no_chunk_boundary_inside_a_combining_sequence(seed):
    run = _cluster_run(600, seed)  # one run without spaces: only character cuts can split it
    doc = f"# Clusters\n\n{run}\n\nAfter.\n"
    bounds = {m.start() for m in regex.finditer(r"\X", doc)} | {len(doc)}
    chunks = chunk_text(
        doc, Policy(target_tokens=40, max_tokens=64, min_tokens=10, overlap_tokens=8)
    )
    assert sum(1 for c in chunks if run[:20] in c["text"] or "x" in c["text"]) > 3
    for c in chunks:
        for span in c["spans"]:
            assert span["start"] in bounds and span["end"] in bounds, (span, c["text"][:20])
        assert regex.fullmatch(r"\X*", c["text"])  # trivially true; the spans are the test
    covered = "".join(doc[s["start"] : s["end"]] for c in chunks for s in c["spans"])
    assert run[:50] in covered


def test_character_cuts_respect_clusters_directly():
    text = _cluster_run(200, 9)
    bounds = set(split.graphemes(text, 0, len(text)))
    pieces = split._chars(text, 0, len(text), 7, lambda ts: [len(t) for t in ts])
    assert pieces[0][0] == 0 and pieces[-1][1] == len(text)
    assert all(a in bounds and b in bounds for a, b in pieces)
    assert all(b - a <= 7 or len(split.graphemes(text, a, b)) == 2 for a, b in pieces)


def _only_headings(text: str) -> bool:
    return all(re.match(r"#{1,6} ", block) for block in text.split("\n\n") if block.strip())


def test_heading_is_never_left_alone_by_a_split_first_paragraph():
    # The first sentence of the paragraph swept through every size near the cap: a piece
    # that fits the cap alone but not with its heading used to leave the heading alone.
    policy = Policy(target_tokens=100, max_tokens=128, min_tokens=20, overlap_tokens=0)
    for n in range(60, 110):
        first = " ".join(f"word{chr(97 + i % 26)}" for i in range(n)) + "."
        body = f"{first} {sentences(12)}"
        doc = f"# Top\n\n## A heading of several words\n\n{body}\n\n## Next\n\nShort.\n"
        chunks = chunk_text(doc, policy)
        lonely = [c["text"] for c in chunks if _only_headings(c["text"])]
        assert not lonely, (n, lonely)
        assert all(c["n_tokens"] <= policy.max_tokens for c in chunks)


@pytest.mark.parametrize("body", [_japanese_paragraph(120), sentences(80)])
def test_headings_stay_with_split_paragraphs(body):
    doc = f"# Top\n\n## A heading of several words\n\n{body}\n\n## Next\n\nShort.\n"
    policy = Policy(target_tokens=200, max_tokens=256, min_tokens=50, overlap_tokens=30)
    chunks = chunk_text(doc, policy)
    assert not [c["text"] for c in chunks if _only_headings(c["text"])]
    first = next(c for c in chunks if "## A heading" in c["text"])
    assert first["text"].startswith(("# Top", "## A heading")) and len(first["text"]) > 60


def _syllables(consonants: range, signs: list[int], n: int, seed: int) -> str:
    """Random words of our own from a script's letters and vowel signs (a worst case for a
    BPE tokenizer: no merges learnt for them)."""
    rng = random.Random(seed)
    words = [
        "".join(
            chr(rng.choice(consonants)) + rng.choice([chr(v) for v in signs] + [""])
            for _ in range(rng.randint(2, 5))
        )
        for _ in range(n)
    ]
    return " ".join(words)


MALAYALAM = (range(0x0D15, 0x0D3A), [0x0D3E, 0x0D3F, 0x0D40, 0x0D41, 0x0D46, 0x0D4D, 0x0D02])
HINDI = (range(0x0915, 0x0939), [0x093E, 0x093F, 0x0940, 0x0941, 0x0947, 0x094B, 0x094D, 0x0902])


@pytest.mark.parametrize(("name", "script"), [("malayalam", MALAYALAM), ("hindi", HINDI)])
def test_malayalam_and_hindi_pages_stay_within_the_cap_in_cl100k(name, script):
    pytest.importorskip("tiktoken")
    cl100k = make_counter("tiktoken:cl100k_base")
    paragraphs = [_syllables(*script, 60, seed) + "।" for seed in range(40)]
    page = (
        "# "
        + name
        + "\n\n"
        + "\n\n".join(
            (f"## Part {i}\n\n" if i % 8 == 0 else "") + p for i, p in enumerate(paragraphs)
        )
    )
    page += "\n\n" + _syllables(*script, 2000, 99) + "\n"  # one paragraph far over any cap
    for policy in (Policy(), Policy(target_tokens=400, max_tokens=512, min_tokens=100)):
        chunks = chunk_text(page, policy)
        real = cl100k.count([c["embed_text"] for c in chunks])
        assert max(real) <= policy.max_tokens, sorted(real)[-3:]
        assert len(chunks) > 5


@pytest.mark.corpus
def test_tldr_malayalam_and_hindi_pages_stay_within_the_cap_in_cl100k():
    """The same with real text: every tldr page of the two languages as one long page."""
    pytest.importorskip("tiktoken")
    cl100k = make_counter("tiktoken:cl100k_base")
    for lang in ("pages.ml", "pages.hi"):
        folder = corpus_dir("tldr_i18n") / lang
        texts = [p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.md"))]
        page = "\n\n".join(t.replace("\n# ", "\n## ") for t in texts)
        chunks = chunk_text(page, Policy(target_tokens=400, max_tokens=512, min_tokens=100))
        real = cl100k.count([c["embed_text"] for c in chunks])
        assert len(chunks) > 50 and max(real) <= 512


def test_check_with_a_tokenizer_reports_what_the_estimate_under_counts(tmp_path):
    pytest.importorskip("tiktoken")
    rng = random.Random(5)
    # random lower-case letters without spaces in a code block: about 0.5 cl100k tokens per
    # letter, where the code weights count a run of letters as one identifier (docs/design.md,
    # Token estimate: letter runs that are no language are left to the real tokenizer)
    blob = " ".join("".join(rng.choice("qxzjkvwyfgpbm") for _ in range(150)) for _ in range(12))
    src = tmp_path / "docs"
    src.mkdir()
    (src / "strange.md").write_text(f"# Strange\n\n```\n{blob}\n```\n", encoding="utf-8")
    out = tmp_path / "out"
    flags = ["--target-tokens", "400", "--max-tokens", "512", "--min-tokens", "100"]
    flags += ["--tokenizer", "estimate"]
    ran = CliRunner().invoke(main, ["run", str(src), "--out", str(out), *flags])
    assert ran.exit_code == 0, ran.output
    plain = CliRunner().invoke(main, ["check", str(out)])
    assert plain.exit_code == 0, plain.output  # the estimate believes the cap holds
    real = CliRunner().invoke(main, ["check", str(out), "--tokenizer", "tiktoken:cl100k_base"])
    assert real.exit_code == 1, real.output
    assert "FAIL  real_tokens_within_cap (tiktoken:cl100k_base)" in real.output
    assert "strange.md" in real.output
