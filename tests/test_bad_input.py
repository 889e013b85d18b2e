"""Bad input never crashes a run and never silently disappears."""

from __future__ import annotations

import polars as pl
import pytest
from click.testing import CliRunner

from chunkmill.jobs.cli.main import main

SECTION = (
    "## Section {i}\n\nSome text for section {i}, long enough to matter.\n\n```py\nx = {i}\n```\n\n"
)


def _write_bad_folder(root):
    files = {
        "invalid-utf8.md": b"# Title\n\ncaf\xe9 latin-1\n",
        "binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "empty.md": b"",
        "only-front-matter.md": b"---\ntitle: nothing else\n---\n",
        "malformed-yaml.md": b"---\ntitle: [unclosed\n  : :\n---\n# Body\n",
        "unclosed-fence.md": b"# Code\n\n```python\nprint('never closed')\n\n# not a heading\n",
        "deep-quotes.md": ("> " * 10_000 + "deep\n").encode(),
        "deep-lists.md": "".join("  " * i + "- level\n" for i in range(5_000)).encode(),
        "huge.md": "".join(SECTION.format(i=i) for i in range(230_000)).encode()[:20_000_000],
        "bom-crlf.md": "\ufeff# BOM\r\n\r\nWindows text\r\n".encode(),
        "notes.txt": b"plain text file\n\nsecond paragraph\n",
        "image.png": b"\x89PNG not read",
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    return files


@pytest.mark.slow
def test_every_file_is_a_document_or_a_reject(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    files = _write_bad_folder(src)
    assert len(files["huge.md"]) == 20_000_000
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["blocks", str(src), "--out", str(out)])
    assert result.exit_code == 0, result.output
    docs = pl.read_parquet(out / "documents.parquet")
    rejects = pl.read_parquet(out / "rejects.parquet")
    blocks = pl.read_parquet(out / "blocks.parquet")
    doc_paths, reject_paths = set(docs["path"]), set(rejects["path"])
    read = set(files) - {"image.png"}
    assert doc_paths | reject_paths == read and not doc_paths & reject_paths
    reasons = dict(zip(rejects["path"], rejects["reason"]))
    assert reasons == {"invalid-utf8.md": "invalid_utf8", "binary.md": "binary"}
    assert all(rejects["detail"].str.len_chars() > 10)

    per_doc = dict(
        zip(
            *blocks.join(docs, on="doc_id")
            .group_by("path")
            .len()
            .select("path", "len")
            .to_dict(as_series=False)
            .values()
        )
    )
    assert "empty.md" not in per_doc  # an empty file is a document with no blocks
    assert per_doc["only-front-matter.md"] == 1
    assert per_doc["huge.md"] > 100_000
    fm = docs.filter(pl.col("path") == "malformed-yaml.md").row(0, named=True)
    assert fm["front_matter"] is None and "invalid YAML" in fm["front_matter_error"]
    bom = docs.filter(pl.col("path") == "bom-crlf.md").row(0, named=True)
    assert bom["had_bom"] and bom["newline"] == "crlf" and bom["text"].startswith("# BOM\r\n")
    kinds = blocks.join(docs, on="doc_id").filter(pl.col("path") == "unclosed-fence.md")["kind"]
    assert kinds.to_list() == ["heading", "code"]
    assert "2 rejects (1 binary, 1 invalid_utf8)" in result.output
    assert "1 skipped (1 not markdown)" in result.output
