"""Unicode spaces are text, not markdown whitespace: code indented with no-break spaces
(pasted from web pages) is split with balanced fences and keeps its indentation."""

from __future__ import annotations

import shutil

import pytest

from chunkmill.jobs import run_job
from chunkmill.jobs.runlog import RunLog
from chunkmill.pipeline import fence, queries, runstore
from chunkmill.pipeline.inputs import sources
from chunkmill.pipeline.policy import Policy
from tests.conftest import corpus_dir
from tests.helpers import chunk_text, words

NBSP = "\u00a0"


def _code(n: int) -> list[str]:
    """Lines of C# indented with no-break spaces, every other one deeper."""
    return [NBSP * (4 if i % 2 else 8) + f"Call{i}({words(3, i)});" for i in range(n)]


def test_nbsp_indented_code_split_keeps_fences_and_indentation():
    lines = _code(60)
    doc = "# Code\n\nIntro.\n\n```csharp\n" + "\n".join(lines) + "\n```\n"
    rows = chunk_text(
        doc, Policy(target_tokens=60, max_tokens=100, min_tokens=20, overlap_tokens=10)
    )
    parts = [r["text"] for r in rows if "Call" in r["text"]]
    assert len(parts) > 2
    for text in parts:
        assert not fence.unbalanced(text), text
        assert text.count("```csharp") == 1
        # a reopened fence stands at its line start: nothing before it on the line
        assert all(line.startswith("```") for line in text.splitlines() if "```" in line)
    kept = {line for text in parts for line in text.splitlines()}
    assert set(lines) <= kept  # every line whole, its indentation included


DOTNET = "owasp_cheatsheets/cheatsheets/DotNet_Security_Cheat_Sheet.md"


@pytest.mark.parametrize("cap, target", [(400, 300), (300, 200), (150, 100)])
def test_dotnet_cheat_sheet_passes_check(tmp_path, cap, target):
    path = corpus_dir() / DOTNET
    if not path.is_file():
        pytest.skip(f"shared corpus file not present: {path}")
    (tmp_path / "src").mkdir()
    shutil.copy(path, tmp_path / "src" / path.name)  # one document, outside the project
    selection = sources.Selection()
    plan = sources.plan([str(tmp_path / "src")], selection)
    policy = Policy(target_tokens=target, max_tokens=cap, min_tokens=min(200, target // 2))
    out = tmp_path / "out"
    run_job.run(plan, out, selection, policy, log=RunLog(quiet=True))
    offending = {k: v.height for k, v in queries.checks(runstore.resolve(out)).items()}
    assert offending and not any(offending.values()), offending
