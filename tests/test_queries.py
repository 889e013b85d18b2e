"""SQL files load from the checkout (or the wheel) and the views read an output folder."""

from __future__ import annotations

from click.testing import CliRunner

from jobs.cli import main
from pipeline.queries import connect, sql_dir
from tests.conftest import SAMPLE


def test_views_over_an_output_folder(tmp_path):
    assert (sql_dir() / "views.sql").exists()
    result = CliRunner().invoke(main, ["run", str(SAMPLE), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    con = connect(tmp_path)
    (n_docs,) = con.execute("SELECT count(*) FROM documents").fetchone()
    assert n_docs == 11
    (title,) = con.execute(
        "SELECT front_matter['title'] FROM documents WHERE path = 'index.md'"
    ).fetchone()
    assert title == "Pebble handbook"
    (orphans,) = con.execute(
        "SELECT count(*) FROM chunks c ANTI JOIN documents d USING (doc_id)"
    ).fetchone()
    assert orphans == 0
