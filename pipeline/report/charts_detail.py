"""The report's detail charts: split blocks, rejects, documents, runs, a real tokenizer."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from chunkmill.pipeline.report.charts import (
    CAP_COLOR,
    MUTED,
    ROW,
    RUN_COLORS,
    Chart,
    hbar,
    name_of,
    style,
)
from chunkmill.pipeline.report.figures import RunFigures

FOLDER_COLORS = [
    "#2563eb", "#f97316", "#16a34a", "#db2777", "#7c3aed", "#0d9488",
    "#ca8a04", "#dc2626", "#4b5563", "#0891b2", "#65a30d", "#9333ea",
]  # fmt: skip


def splits(runs: list[RunFigures]) -> Chart:
    caption = (
        "Which kinds of block alone exceed the budget and into how many parts they are cut; "
        "many-part code or tables read badly on their own (raise the cap or accept it)."
    )
    chart = Chart("splits", "Blocks cut into parts, per block kind", caption)
    kinds = []
    for r in runs:
        frame = r.report["split_blocks"]
        kinds += [k for k in frame.filter(frame["split_blocks"] > 0)["kind"] if k not in kinds]
    if not kinds:
        chart.note = "No block was cut: every block fit within its budget."
        return chart
    fig = make_subplots(
        rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
        subplot_titles=["blocks cut", "parts per cut block"],
    )  # fmt: skip
    for i, r in enumerate(runs):
        by = {row["kind"]: row for row in r.report["split_blocks"].iter_rows(named=True)}
        got = [by.get(k) or {"split_blocks": 0, "blocks": 0, "share_split": 0.0} for k in kinds]
        cut = [g["split_blocks"] for g in got]
        custom = [(g["blocks"], g["share_split"] or 0.0) for g in got]
        hover = "%{y}: <b>%{x:,}</b> cut of %{customdata[0]:,} (%{customdata[1]:.1%})"
        fig.add_trace(hbar(runs, i, kinds, cut, cut, hover, custom), row=1, col=1)
        ys = [k for k, g in zip(kinds, got) for _ in g.get("parts") or []]
        xs = [n for g in got for n in g.get("parts") or []]
        fig.add_trace(
            go.Box(
                x=xs, y=ys, orientation="h", name=name_of(runs, i), showlegend=False,
                marker=dict(color=RUN_COLORS[i], size=5, opacity=0.6),
                boxpoints="all", jitter=0.4, pointpos=0, line=dict(width=1.5),
                hovertemplate="%{y}: %{x} parts<extra></extra>",
            ),
            row=1, col=2,
        )  # fmt: skip
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(rangemode="tozero")
    style(fig, max(220, 90 + ROW * 1.6 * len(kinds) * len(runs)), legend=False)
    fig.update_layout(barmode="group", boxmode="group", margin=dict(t=48))
    chart.figure = fig
    return chart


def rejects(runs: list[RunFigures]) -> Chart:
    caption = (
        "Rejected documents are missing from search: fix the longest bar first "
        '(hover for an example path; `chunkmill sql DIR "FROM rejects"` lists them all).'
    )
    chart = Chart("rejects", "Rejected documents by reason", caption)
    labels = []
    for r in runs:
        labels += [f"{s}: {x}" for s, x in r.stats["rejects_by_reason"].select("stage", "reason")
                   .iter_rows() if f"{s}: {x}" not in labels]  # fmt: skip
    if not labels:
        chart.note = "No document was rejected: every readable document has chunks."
        return chart
    fig = go.Figure()
    for i, r in enumerate(runs):
        by = {f"{x['stage']}: {x['reason']}": x for x in r.stats["rejects_by_reason"]
              .iter_rows(named=True)}  # fmt: skip
        n = [by[k]["documents"] if k in by else 0 for k in labels]
        example = [by[k]["example"] if k in by else "" for k in labels]
        hover = "%{y}: <b>%{x:,}</b> documents<br>e.g. %{customdata}"
        fig.add_trace(hbar(runs, i, labels, n, n, hover, example))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text="documents", rangemode="tozero")
    chart.figure = style(fig, 90 + ROW * 1.5 * len(labels) * len(runs), legend=False)
    fig.update_layout(barmode="group")
    return chart


def top_documents(runs: list[RunFigures]) -> Chart:
    caption = (
        "The documents that weigh most in the index; an outsized one is often generated or "
        "concatenated text worth excluding (--exclude GLOB)."
    )
    chart = Chart("top_documents", "Documents with the most chunks", caption)
    paths = runs[0].report["top_documents"]["path"].to_list()
    if not paths:
        chart.note = "No chunk in this run."
        return chart
    short = [p if len(p) <= 48 else "…" + p[-47:] for p in paths]
    fig = go.Figure()
    for i, r in enumerate(runs):
        by = {row["path"]: row for row in r.report["top_documents"].iter_rows(named=True)}
        got = [by.get(p) or {"chunks": 0, "tokens": 0, "largest": 0} for p in paths]
        n = [g["chunks"] for g in got]
        custom = [(p, g["tokens"], g["largest"]) for p, g in zip(paths, got)]
        hover = (
            "%{customdata[0]}<br><b>%{x:,}</b> chunks, %{customdata[1]:,} tokens, "
            "largest %{customdata[2]:,}"
        )
        fig.add_trace(hbar(runs, i, short, n, n, hover, custom))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text="chunks", rangemode="tozero")
    chart.figure = style(fig, 90 + ROW * len(paths) * len(runs), legend=False)
    fig.update_layout(barmode="group")
    return chart


def runs_history(runs: list[RunFigures]) -> Chart:
    caption = (
        "A quiet night adds and removes a little; a tall pair is a policy change (◆) or a mass "
        "edit, and means re-embedding that many chunks."
    )
    chart = Chart("runs", "Chunks added and removed per run", caption, wide=True)
    history = runs[0].report["runs"]
    if history.is_empty():
        chart.note = "No run is recorded in this folder's runs table."
        return chart
    x = [f"{t:%Y-%m-%d %H:%M}<br>{rid[-6:]}" for t, rid in zip(history["started_at"],
                                                                history["run_id"])]  # fmt: skip
    status = history["status"].to_list()
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for col, sign, color, label in (
        ("chunks_added", 1, "#16a34a", "added"),
        ("chunks_removed", -1, CAP_COLOR, "removed"),
    ):
        fig.add_trace(go.Bar(
            x=x, y=[sign * v for v in history[col].to_list()], name=label,
            marker=dict(color=color), customdata=list(zip(history[col].to_list(), status)),
            hovertemplate=f"%{{x}}<br><b>%{{customdata[0]:,}}</b> {label} (%{{customdata[1]}})"
            "<extra></extra>",
        ))  # fmt: skip
    fig.add_trace(go.Scatter(
        x=x, y=history["chunks_total"].to_list(), name="chunks in the run", mode="lines+markers",
        line=dict(color=MUTED, width=2), hovertemplate="%{y:,} chunks<extra></extra>",
    ), secondary_y=True)  # fmt: skip
    for label, changed in zip(x, history["policy_changed"].to_list()):
        if changed:
            fig.add_annotation(x=label, y=1.0, yref="paper", text="◆ policy", showarrow=False,
                               font=dict(color=RUN_COLORS[1], size=11))  # fmt: skip
    fig.update_yaxes(title_text="chunks added / removed", secondary_y=False)
    big = (history["chunks_total"].max() or 0) >= 1000
    fig.update_yaxes(title_text="chunks in the run", secondary_y=True, rangemode="tozero",
                     showgrid=False, tickmode="auto", tickformat="~s" if big else "")  # fmt: skip
    if len(x) < 8:  # a few runs: slim bars, not a wall
        fig.update_traces(width=0.08 * len(x) + 0.1, selector=dict(type="bar"))
    style(fig, 340)
    fig.update_layout(barmode="relative", margin=dict(t=48))
    chart.figure = fig
    return chart
