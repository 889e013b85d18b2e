"""Characters that Python takes for line breaks and CommonMark does not (U+2028, NEL, VT,
FF, ...): fences, chunk texts and the data checks agree with the parser on them."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from chunkmill import chunk_text
from chunkmill.jobs.cli.main import main
from chunkmill.pipeline import fence, queries

# Characters that str.splitlines() takes for line breaks but CommonMark (and our parser)
# does not: U+2028, U+2029, NEL, VT, FF, FS, GS, RS.
NOT_LINE_BREAKS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


def _run(src, out, *flags) -> None:
    result = CliRunner().invoke(
        main, ["run", str(src), "--out", str(out), "--workers", "1", *flags]
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("sep", NOT_LINE_BREAKS)
def test_fence_lines_are_the_parsers_lines(sep):
    text = f"Some words{sep}```\nmore words"
    assert fence.open_fence(text) is None and fence.closed(text) == text
    assert fence.unbalanced(f"~~~{sep}~~~") is True  # one line: a fence opened, never closed
    assert not fence.closes_fence(f"```{sep}", "```")  # only spaces or tabs may follow
    doc = f"# Title\n\nA paragraph that ends{sep}```\n\nAnother paragraph.\n"
    for c in chunk_text(doc):
        assert c.text == doc[c.char_start : c.char_end]  # source-faithful: nothing appended
        assert not fence.unbalanced(c.text)


def test_balanced_fences_check_agrees_on_unicode_separators(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i, sep in enumerate(NOT_LINE_BREAKS):
        (src / f"d{i}.md").write_text(f"# T{i}\n\nwords{sep}```\n\nmore\n", encoding="utf-8")
    _run(src, tmp_path / "out")
    assert queries.checks(tmp_path / "out")["balanced_fences"].is_empty()


def test_check_passes_on_a_document_of_unicode_spaces(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    spaces = "\u3000\u2003\u00a0\u2028\u2029\u202f\u205f\u1680\x85\x1c\x1f\t\x0b\x0c"
    (src / "spaces.md").write_text(f"{spaces}\n{spaces}\r\n", encoding="utf-8")
    (src / "fm-spaces.md").write_text(f"---\ntitle: t\n---\n{spaces}\n", encoding="utf-8")
    (src / "real.md").write_text("# Real\n\ntext\n", encoding="utf-8")
    _run(src, tmp_path / "out")
    assert queries.checks(tmp_path / "out")["documents_have_chunks"].is_empty()
    result = CliRunner().invoke(main, ["check", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
