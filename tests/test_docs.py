"""The README and docs/ stay true: every ``python`` and ``sh`` code block runs as written,
and every relative link points at a file (and heading) that exists.

A block that cannot run here (it installs, or names a cluster or a bucket of yours) says
so in a comment just above it, ``<!-- not run: why -->``; the reason must be given.
Blocks run in order, per file, in one scratch folder that holds a copy of sample_data/,
its output in out/sample (``make run``'s), the repository's sql/ and .venv, and a home
folder with ~/docs (a copy of sample_data/), its output ~/chunks, and ``applied`` (the
run an embedding job last applied, as the README's recipe expects).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", REPO / "CHANGELOG.md", REPO / "benchmarks" / "RESULTS.md"]
PAGES += sorted((REPO / "docs").glob("*.md"))
BLOCK = re.compile(r"(<!-- not run:([^>]*)-->\n)?```(python|sh)\n(.*?)```", re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
BIN = Path(sys.executable).parent


def _blocks(page: Path) -> list[tuple[str, str, str | None]]:
    """(language, code, reason it is not run or None) of every python and sh block."""
    text = page.read_text(encoding="utf-8")
    return [(m[3], m[4], None if m[1] is None else m[2].strip()) for m in BLOCK.finditer(text)]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    shutil.copytree(REPO / "sample_data", root / "sample_data")
    (root / ".venv").symlink_to(BIN.parent)
    (root / "sql").symlink_to(REPO / "sql")
    home = root / "home"
    shutil.copytree(REPO / "sample_data", home / "docs")
    minilm = ["--tokenizer", "embedder:minilm", "--max-tokens", "256"]  # as `make run` packs
    for src, out, policy in (
        (root / "sample_data", root / "out" / "sample", minilm),
        (home / "docs", home / "chunks", []),
    ):
        subprocess.run(
            [BIN / "chunkmill", "run", src, "--out", out, *policy], check=True, capture_output=True
        )
    current = json.loads((home / "chunks" / "CURRENT").read_text())["run"]
    (root / "applied").write_text(current + "\n")
    return root


def _run(language: str, code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(cwd / "home"), "PATH": f"{BIN}:{os.environ['PATH']}"}
    command = [sys.executable, "-c", code] if language == "python" else ["bash", "-e", "-c", code]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # runs the commands of every page: make test, not the fast lanes
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_code_block_runs_as_written(page, scratch):
    ran = 0
    for language, code, not_run in _blocks(page):
        if not_run is not None:
            assert not_run, f"{page.name}: a block not run must say why"
            continue
        done = _run(language, code, scratch)
        assert done.returncode == 0, f"{page.name}:\n{code}\n{done.stderr[-2000:]}"
        if language == "python":
            assert done.stdout.strip(), code  # every example prints what it shows
        ran += 1
    if page.name == "reference.md":
        assert ran >= 3 and (scratch / "out" / "api-example" / "CURRENT").exists()


def test_the_readme_runs_its_blocks():
    blocks = _blocks(REPO / "README.md")
    run = [b for b in blocks if b[2] is None]
    assert len(run) >= 4 and any(lang == "python" for lang, _, _ in run)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = "".join(c for c in text if c in " -" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _prose(page: Path) -> str:
    """The page without its fenced blocks (a fence opens and closes on a line of its own)."""
    kept, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)


def _anchors(page: Path) -> set[str]:
    return {_slug(m) for m in re.findall(r"(?m)^#{1,6} (.+)$", _prose(page))}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_relative_link_resolves(page):
    for target in LINK.findall(_prose(page)):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        assert where.exists(), f"{page.name}: {target}"
        if anchor and where.suffix == ".md":
            assert anchor in _anchors(where), f"{page.name}: {target}"


def _map_entries(page: Path, after: str = "") -> dict[str, str]:
    """The entries of the first folder map (a code block of lines ``folder/  what it
    holds``, continued by indented lines) after the line ``after``: folder -> its text."""
    text = page.read_text(encoding="utf-8")
    text = text[text.index(after) :]
    block = re.search(r"```(?:text)?\n(.*?)```", text, re.S).group(1)
    entries: dict[str, str] = {}
    name = None
    for line in block.splitlines():
        head = re.match(r"(\S+/)\s", line + " ")
        if head:
            name = head.group(1)
            entries[name] = line[len(name) :]
        elif name is not None:
            entries[name] += " " + line
    return entries


def _python_folders() -> dict[str, set[str]]:
    """Every package folder under pipeline/ and jobs/, and src/chunkmill/ -> its modules and
    subpackages."""
    folders = {}
    for top in ("pipeline", "jobs"):
        for init in sorted((REPO / top).rglob("__init__.py")):
            folder = init.parent
            names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
            names |= {p.name for p in folder.iterdir() if (p / "__init__.py").exists()}
            folders[str(folder.relative_to(REPO)) + "/"] = names
    folders["src/chunkmill/"] = {p.stem for p in (REPO / "src" / "chunkmill").glob("*.py")}
    return folders


def test_the_module_maps_match_the_folders():
    """The README's map names every package folder; docs/development.md's names every
    folder and, in its entry, every module of it, Python and Rust (two levels of the crates:
    each folder's own map is in its mod.rs, checked by test_package_layout)."""
    readme = _map_entries(REPO / "README.md", "## Development")
    development = _map_entries(REPO / "docs" / "development.md")
    for folder, modules in _python_folders().items():
        assert folder in readme, f"README.md: {folder}"
        named = set(re.findall(r"\w+", development.get(folder, "")))
        assert modules <= named, (folder, sorted(modules - named))
    for crate in ("rust/core/src/", "rust/py/src/"):
        top = REPO / crate
        assert crate in readme, f"README.md: {crate}"
        expected = {p.stem for p in top.glob("*.rs")} | {
            p.name for p in top.iterdir() if p.is_dir()
        }
        for sub in (p for p in top.iterdir() if p.is_dir()):
            expected |= {p.stem for p in sub.glob("*.rs")} | {
                p.name for p in sub.iterdir() if p.is_dir()
            }
        expected -= {"lib", "mod", "tests"}
        named = set(re.findall(r"\w+", development.get(crate, "")))
        assert expected <= named, (crate, sorted(expected - named))


def test_the_policy_table_shows_the_policy_defaults():
    from dataclasses import fields

    from chunkmill.jobs.options import _shown
    from chunkmill.pipeline.policy import Policy

    text = (REPO / "docs" / "reference.md").read_text(encoding="utf-8")
    rows = re.findall(r"(?m)^\| `--([a-z-]+)[^`]*` \| ([^|]+) \|", text)
    table = {flag.replace("-", "_"): default.strip() for flag, default in rows}
    wanted = {f.name: _shown(f.default) for f in fields(Policy) if f.name != "mdx"}
    assert table == wanted  # --mdx is an input option there, its default in the prose


def test_the_output_section_names_every_column_of_the_tables():
    """docs/reference.md, Output: the bullet of each table names every column its schema
    declares (``a/b`` names two)."""
    from chunkmill.pipeline import schemas

    text = (REPO / "docs" / "reference.md").read_text(encoding="utf-8")
    for name, schema in (
        ("blocks", schemas.BLOCKS),
        ("chunks", schemas.CHUNKS),
        ("postings", schemas.POSTINGS),
        ("rejects", schemas.REJECTS),
    ):
        bullet = re.search(rf"(?ms)^- `{name}\.parquet`:(.*?)(?=^- `|^\S)", text).group(1)
        named = {n for quoted in re.findall(r"`([^`]+)`", bullet) for n in quoted.split("/")}
        assert set(schema.names) <= named, (name, sorted(set(schema.names) - named))


def test_the_results_page_is_rendered_from_the_latest_results():
    sys.path.insert(0, str(REPO))
    from benchmarks import results_page

    assert results_page.main(["--check"]) == 0  # else: python benchmarks/results_page.py


def test_the_readme_chunk_row_is_what_a_run_makes(tmp_path):
    """The README's example row, run with the flags it names: the same values, and what it
    says of ``text`` and ``is_slice`` holds for that row."""
    import polars as pl

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    flags = re.search(r"One chunk row \(of\s+`sample_data/` at `([^`]+)`", readme)[1].split()
    row = re.search(r"```text\n(chunk_id .*?)```", readme, re.S)[1]
    shown = dict(re.findall(r"(\w+)\s+(\d+|true|false|[0-9a-f]{32})(?=\s|$)", row))
    out = tmp_path / "out"
    subprocess.run([BIN / "chunkmill", "run", REPO / "sample_data", "--out", out, *flags],
                   check=True, capture_output=True)  # fmt: skip
    chunks = pl.read_parquet(out / "published" / "chunks.parquet")
    got = chunks.filter(pl.col("chunk_id") == shown["chunk_id"]).row(0, named=True)
    for name in ("n_tokens", "char_start", "char_end", "line_start"):
        assert str(got[name]) == shown[name], name
    assert str(got["is_slice"]).lower() == shown["is_slice"]
    text = pl.read_parquet(out / "published" / "documents.parquet").filter(
        pl.col("doc_id") == got["doc_id"]
    )["text"][0]
    assert (text[got["char_start"] : got["char_end"]] == got["text"]) == got["is_slice"]
    assert got["text"].startswith(re.search(r"(?m)^text +(.+)$", row)[1])
    assert f"{len(chunks.columns)} columns" in readme
