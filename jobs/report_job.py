"""The report job: gather a run's figures, draw the charts, write one HTML page."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from chunkmill.pipeline import runstore
from chunkmill.pipeline.report.figures import Options

INSTALL_HINT = (
    "chunkmill report draws with plotly, which is not installed: pip install 'chunkmill[report]'"
)


class ReportUnavailable(ImportError):
    """The optional ``report`` extra (plotly) is not installed."""


@dataclass
class ReportSummary:
    page: Path
    bytes: int
    charts: list[str]  # the keys of the charts drawn
    notes: dict[str, str]  # the charts with nothing to draw, and why
    runs: list[str]  # this run, then the one it is compared with


def available() -> bool:
    return importlib.util.find_spec("plotly") is not None


def charts(runs):
    from chunkmill.pipeline.report import charts, charts_detail, charts_tokens

    order = [
        charts.histogram,
        charts.folders_size,
        charts.folders_context,
        charts_detail.top_documents,
        charts_detail.splits,
        charts_detail.rejects,
        charts_tokens.tokenizer,
        charts_detail.runs_history,
    ]
    return [draw(runs) for draw in order]


def run(out: Path, page: Path | None, compare: str | None, opts: Options) -> ReportSummary:
    """Write the report of ``out`` (compared with a run id or another folder) to ``page``
    (default ``out/report.html``), atomically."""
    from importlib.metadata import version

    from chunkmill.pipeline.report import figures as report
    from chunkmill.pipeline.report import page as page_mod

    if not available():
        raise ReportUnavailable(INSTALL_HINT)
    runs = report.gather_all(Path(out), compare, opts)
    drawn = charts(runs)
    html = page_mod.render(runs, drawn, str(out), version("chunkmill"))
    page = Path(page) if page is not None else Path(out) / "report.html"
    data = html.encode("utf-8")
    runstore.write_atomic(page, data)
    return ReportSummary(
        page=page,
        bytes=len(data),
        charts=[c.key for c in drawn if c.figure is not None],
        notes={c.key: c.note for c in drawn if c.figure is None},
        runs=[r.label for r in runs],
    )
