"""The report page: one self-contained HTML file (plotly.js inlined, no network at all).

Every chart's figure is a JSON island (``<script type="application/json">``) drawn by a few
lines of script once the page loads; the headline figures are tiles whose ``data-value``
holds the exact number that `chunkmill stats --json` prints.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape

from chunkmill.pipeline.report.charts import Chart, as_text
from chunkmill.pipeline.report.figures import RunFigures

# (stats table, column, label, format): the headline figures, all from sql/stats/
TILES = [
    ("overview", "documents", "documents", "int"),
    ("overview", "chunks", "chunks", "int"),
    ("overview", "rejects", "rejected documents", "int"),
    ("tokens", "p50", "median chunk, tokens", "int"),
    ("tokens", "p90", "p90 chunk, tokens", "int"),
    ("tokens", "max", "largest chunk, tokens", "int"),
    ("tokens", "share_under_min", "under min_tokens", "pct"),
    ("tokens", "share_over_cap", "over the cap", "pct"),
    ("tokens", "share_starting_with_heading", "start with a heading", "pct"),
    ("per_document", "p50", "chunks per document, median", "int"),
    ("per_document", "max", "chunks per document, most", "int"),
    ("splits", "split_sections", "sections cut into chunks", "int"),
]
POLICY_FIELDS = ["target_tokens", "max_tokens", "min_tokens", "overlap_tokens", "heading_depth",
                 "strategy", "tokenizer", "bias", "front_matter", "breadcrumb_prefix"]  # fmt: skip

BOOT = """
(function () {
  var config = {displaylogo: false, responsive: true,
                modeBarButtonsToRemove: ['select2d', 'lasso2d', 'autoScale2d']};
  document.querySelectorAll('script[data-figure-for]').forEach(function (node) {
    var el = document.getElementById(node.getAttribute('data-figure-for'));
    var fig = JSON.parse(node.textContent);
    Plotly.newPlot(el, fig.data, fig.layout, config).then(function () {
      el.setAttribute('data-rendered', 'true');
    });
  });
})();
"""


def value(run: RunFigures, table: str, column: str):
    frame = run.stats[table]
    return frame[column][0] if frame.height and column in frame.columns else None


def fmt(v, kind: str) -> str:
    if v is None:
        return "–"
    return f"{v:.1%}" if kind == "pct" else f"{int(v):,}"


def _tile(runs: list[RunFigures], table: str, column: str, label: str, kind: str) -> str:
    v = value(runs[0], table, column)
    attrs = f'data-figure="{table}.{column}" data-value="{escape(json.dumps(v))}"'
    other = ""
    if len(runs) > 1:
        w = value(runs[1], table, column)
        attrs += f' data-compare-value="{escape(json.dumps(w))}"'
        delta = "" if v is None or w is None else _delta(v - w, kind)
        other = f'<div class="was">compared {fmt(w, kind)} {delta}</div>'
    tone = _tone(column, v)
    return (
        f'<div class="tile{tone}" {attrs}><div class="value">{fmt(v, kind)}</div>'
        f'<div class="label">{escape(label)}</div>{other}</div>'
    )


def _delta(d, kind: str) -> str:
    if not d:
        return '<span class="delta">±0</span>'
    text = f"{d * 100:+.1f} pt" if kind == "pct" else f"{int(d):+,}"
    return f'<span class="delta">{text}</span>'


def _tone(column: str, v) -> str:
    bad = {"share_over_cap": lambda x: x > 0, "rejects": lambda x: x > 0}
    return " warn" if column in bad and v is not None and bad[column](v) else ""


def _policy_table(runs: list[RunFigures]) -> str:
    head = "".join(f"<th>{escape(r.label)}</th>" for r in runs) if len(runs) > 1 else ""
    rows = []
    for name in POLICY_FIELDS:
        values = [getattr(r.policy, name, None) for r in runs]
        changed = len(runs) > 1 and values[0] != values[1]
        cells = "".join(f"<td>{escape(str(v))}</td>" for v in values)
        rows.append(f"<tr{' class=changed' if changed else ''}><th>{name}</th>{cells}</tr>")
    hashes = "".join(f"<td><code>{r.policy.policy_hash}</code></td>" for r in runs)
    rows.append(f"<tr><th>policy_hash</th>{hashes}</tr>")
    return (
        f'<table class="policy"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _policy_line(run: RunFigures) -> str:
    p = run.policy
    return escape(
        f"target {p.target_tokens} · cap {p.max_tokens} · min {p.min_tokens} · "
        f"{p.tokenizer} · policy {p.policy_hash}"
    )


def _card(chart: Chart) -> str:
    body = (
        f'<div class="chart" id="chart-{chart.key}"></div>'
        if chart.figure is not None
        else f'<p class="note">{escape(chart.note or "")}</p>'
    )
    summary = f'<p class="summary">{escape(chart.summary)}</p>' if chart.summary else ""
    return (
        f'<section class="card{" wide" if chart.wide else ""}" data-card="{chart.key}">'
        f'<h2>{escape(chart.title)}</h2><p class="caption">{escape(chart.caption)}</p>'
        f"{summary}{body}</section>"
    )


def _island(chart: Chart) -> str:
    from plotly.io.json import to_json_plotly

    # as plotly does: no tag ends the island
    data = to_json_plotly(as_text(chart.figure)).replace("<", "\\u003c")
    return f'<script type="application/json" data-figure-for="chart-{chart.key}">{data}</script>'


def render(runs: list[RunFigures], charts: list[Chart], source: str, version: str) -> str:
    from plotly.offline import get_plotlyjs

    from chunkmill.pipeline.report.style import CSS

    first = runs[0]
    compared = (
        f'<p class="key"><span class="swatch"></span>this run <b>{escape(first.label)}</b>'
        f'<span class="swatch other"></span>compared with <b>{escape(runs[1].label)}</b></p>'
        if len(runs) > 1
        else ""
    )
    made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    tiles = "".join(_tile(runs, *t) for t in TILES)
    cards = "".join(_card(c) for c in charts)
    islands = "".join(_island(c) for c in charts if c.figure is not None)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chunkmill report · {escape(first.label)}</title><style>{CSS}</style></head>
<body><header><div class="wrap">
<h1>Chunk-quality report</h1>
<p class="sub"><code>{escape(source)}</code> · run <b>{escape(first.label)}</b> ·
{_policy_line(first)}</p>{compared}
</div></header>
<main class="wrap">
<section class="tiles">{tiles}</section>
<details class="card wide policy-card"{" open" if len(runs) > 1 else ""}>
<summary>Policy{" (changed fields highlighted)" if len(runs) > 1 else ""}</summary>
{_policy_table(runs)}</details>
<div class="grid">{cards}</div>
<footer>Made {made} by chunkmill {escape(version)} from the SQL in <code>sql/stats/</code> and
<code>sql/report/</code>; the tiles equal <code>chunkmill stats --json</code>. Charts are
interactive: hover for figures, click a legend entry to hide it, drag to zoom.</footer>
</main>
{islands}
<script>{get_plotlyjs()}</script>
<script>{BOOT}</script>
</body></html>
"""
