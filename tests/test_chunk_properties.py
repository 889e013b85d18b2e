"""Properties of chunking on generated markdown: coverage, cap, fences."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkmill.pipeline.policy import Policy
from tests.chunk_quality import unbalanced_fence
from tests.helpers import chunk_text, sentences
from tests.test_rebuild import documents

POLICY = Policy(target_tokens=60, max_tokens=80, min_tokens=10, overlap_tokens=15)


@st.composite
def long_documents(draw):
    base = draw(documents())
    extra = draw(
        st.lists(
            st.sampled_from(
                [
                    sentences(12),
                    "```py\n" + "\n".join(f"x{i} = {i}" for i in range(60)) + "\n```",
                    "| a | b |\n|---|---|\n" + "\n".join(f"| {i} | {i * i} |" for i in range(60)),
                    "- " + "\n- ".join(sentences(2, start=i) for i in range(12)),
                    "> " + "\n> ".join(sentences(3, start=i) for i in range(8)),
                ]
            ),
            max_size=3,
        )
    )
    return "\n\n".join([base, *extra])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=long_documents(), mode=st.sampled_from(["metadata", "include", "strip"]))
def test_chunks_cover_the_body_and_fit(text, mode):
    policy = POLICY.replace(front_matter=mode)
    chunks = chunk_text(text, policy)
    from chunkmill.pipeline import frontmatter

    fm = frontmatter.locate(text)
    start = fm[3] if fm and mode != "include" else 0
    cover = bytearray(len(text))
    for c in chunks:
        assert c["n_tokens"] <= policy.max_tokens
        assert not unbalanced_fence(c["text"])
        for s in c["spans"]:
            cover[s["start"] : s["end"]] = b"\x01" * (s["end"] - s["start"])
    missing = [i for i in range(start, len(text)) if not cover[i] and not text[i].isspace()]
    assert not missing, repr(text[missing[0] : missing[0] + 40])
    if mode == "include" and fm:
        assert any(s["start"] == 0 for c in chunks for s in c["spans"])
