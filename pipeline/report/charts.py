"""The charts of the report, one function each, from the figures of one or two runs.

Plotly figures (``plotly`` is the optional ``report`` extra, imported here only). Each
function takes the list of ``RunFigures`` (this run first, then the one it is compared with)
and returns a ``Chart``: a title, a caption that says what to look for, and either a
figure or, when there is nothing to draw, a note saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from chunkmill.pipeline.report.figures import RunFigures

FONT = "Inter, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
INK = "#1f2937"
MUTED = "#6b7280"
RUN_COLORS = ["#2563eb", "#f97316"]  # this run, the compared run
STRATEGY_COLORS = {"markdown": "#2563eb", "sentence": "#0d9488", "recursive": "#7c3aed"}
CAP_COLOR = "#dc2626"
ROW = 26  # pixels per bar row of a horizontal bar chart


@dataclass
class Chart:
    key: str
    title: str
    caption: str
    figure: go.Figure | None = None
    note: str | None = None  # shown instead of a figure when there is nothing to draw
    wide: bool = False
    summary: str | None = None  # a line of figures under the caption


def style(fig: go.Figure, height: int, legend: bool = True) -> go.Figure:
    fig.update_layout(
        template="plotly_white",
        height=height,
        margin=dict(l=8, r=16, t=36, b=36),
        font=dict(family=FONT, size=12, color=INK),
        showlegend=legend,
        legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom", bgcolor="rgba(0,0,0,0)"),
        hoverlabel=dict(font=dict(family=FONT, size=12)),
        bargap=0.08,
    )
    # subplot titles (annotations with no colour of their own) in grey
    fig.update_annotations(font=dict(size=12, color=MUTED), selector=lambda a: not a.font.color)
    return fig


# What Plotly reads as markup (<b>, <br>, <a href>, <span style>) in the values it shows;
# the hover templates, ours, keep theirs.
_SHOWN = ("x", "y", "text", "customdata", "hovertext", "name", "labels")


def as_text(figure: go.Figure) -> dict:
    """The figure as Plotly JSON with every value it shows escaped (``<`` as ``&lt;``, which
    Plotly draws as the character): a path or a run label is shown as it is spelled, never
    as a link, a font or a line break."""
    data = figure.to_plotly_json()
    for trace in data["data"]:
        for key in _SHOWN:
            if key in trace:
                trace[key] = _escaped(trace[key])
    layout = data["layout"]
    for note in layout.get("annotations", ()):
        note["text"] = _escaped(note.get("text"))
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            if isinstance(axis.get("title"), dict) and "text" in axis["title"]:
                axis["title"]["text"] = _escaped(axis["title"]["text"])
            if "ticktext" in axis:
                axis["ticktext"] = _escaped(axis["ticktext"])
    return data


def _escaped(value):
    import numpy as np

    if isinstance(value, str):
        return escape(value, quote=False)
    if isinstance(value, np.ndarray):
        return _escaped(value.tolist()) if value.dtype == object else value
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    return value


def name_of(runs: list[RunFigures], i: int) -> str:
    if len(runs) == 1:
        return "chunks"
    return f"{'this run' if i == 0 else 'compared'} · {runs[i].label}"


def _strategy_color(runs, i: int, strategy: str) -> str:
    return RUN_COLORS[i] if len(runs) > 1 else STRATEGY_COLORS.get(strategy, "#db2777")


def histogram(runs: list[RunFigures]) -> Chart:
    frames = [r.report["histogram_by_strategy"] for r in runs]
    strategies = sorted({s for f in frames for s in f["strategy"].unique().to_list()})
    caption = (
        "Most chunks should sit between min_tokens and the target (dashed); a wall at the "
        "cap (red) means sections cut by force, a spike at the left means tiny sections."
    )
    chart = Chart("histogram", "Chunk sizes per strategy", caption, wide=True)
    if not strategies:
        chart.note = "No text chunk in this run."
        return chart
    totals = [
        {s: sum(f.filter(f["strategy"] == s)["chunks"].to_list()) for s in strategies}
        for f in frames
    ]
    titles = [f"{s} · " + " / ".join(f"{t[s]:,}" for t in totals) + " chunks" for s in strategies]
    fig = make_subplots(
        rows=len(strategies), cols=1, shared_xaxes=True, subplot_titles=titles,
        vertical_spacing=0.22 / len(strategies),
    )  # fmt: skip
    for i, frame in enumerate(frames):
        for row, s in enumerate(strategies, start=1):
            part = frame.filter(frame["strategy"] == s)
            fig.add_trace(_bars(runs, i, s, part), row=row, col=1)
    _mark_policy(fig, runs)
    top = max(f["hi"].max() or 0 for f in frames)
    fig.update_xaxes(range=[0, top], title_text="tokens per chunk", row=len(strategies))
    fig.update_yaxes(title_text="chunks", rangemode="tozero")
    style(fig, 90 + 170 * len(strategies), legend=False)
    fig.update_layout(barmode="overlay", margin=dict(t=64 + 14 * len(runs)))
    chart.figure = fig
    return chart


def _bars(runs, i: int, strategy: str, part) -> go.Bar | go.Scatter:
    """This run as bars; the compared run as a step outline over the same bins."""
    lo, hi, n = part["lo"].to_list(), part["hi"].to_list(), part["chunks"].to_list()
    hover = (
        "%{customdata[0]}–%{customdata[1]} tokens: <b>%{customdata[2]:,}</b> chunks"
        f"<extra>{strategy} · {name_of(runs, i)}</extra>"
    )
    bins = list(zip(lo, hi, n))
    if i > 0:
        return go.Scatter(
            x=lo + hi[-1:], y=n + n[-1:], customdata=bins + bins[-1:],
            mode="lines", line=dict(shape="hv", color=RUN_COLORS[i], width=2.5),
            name=name_of(runs, i), showlegend=False, hovertemplate=hover,
        )  # fmt: skip
    return go.Bar(
        x=[(a + b) / 2 for a, b in zip(lo, hi)],
        y=n,
        width=[b - a for a, b in zip(lo, hi)],
        customdata=bins,
        name=name_of(runs, i),
        showlegend=False,
        marker=dict(color=_strategy_color(runs, i, strategy), line=dict(width=0)),
        opacity=0.85,
        hovertemplate=hover,
    )


def _mark_policy(fig: go.Figure, runs: list[RunFigures]) -> None:
    """min_tokens (dotted), the target (dashed) and the cap (red) of each run's policy."""
    for i, r in enumerate(runs):
        p = r.policy
        color = MUTED if len(runs) == 1 else RUN_COLORS[i]
        for x, dash, label, c in (
            (p.min_tokens, "dot", "min", color),
            (p.target_tokens, "dash", "target", color),
            (p.max_tokens, "solid", "cap", CAP_COLOR if len(runs) == 1 else color),
        ):
            fig.add_vline(x=x, line=dict(color=c, dash=dash, width=1.5), row="all", col=1)
            fig.add_annotation(
                x=x, y=1.0, xref="x", yref="paper", yanchor="bottom", showarrow=False,
                text=f"{label} {x}", font=dict(size=11, color=c),
                yshift=22 + 14 * i, xanchor={"min": "right", "cap": "right"}.get(label, "left"),
            )  # fmt: skip


def _bar_rows(runs, key: str, order_by: str) -> list:
    """The row labels of a per-row chart: this run's order, then rows only the other has."""
    labels = runs[0].report[key].sort(order_by, descending=True, nulls_last=True)
    seen = [x for x in labels[labels.columns[0]].to_list()]
    for r in runs[1:]:
        seen += [x for x in r.report[key][r.report[key].columns[0]].to_list() if x not in seen]
    return seen


def hbar(runs, i: int, labels, values, text, hover: str, customdata=None) -> go.Bar:
    return go.Bar(
        y=labels,
        x=values,
        orientation="h",
        name=name_of(runs, i),
        showlegend=False,
        marker=dict(color=RUN_COLORS[i]),
        text=text,
        textposition="outside",
        cliponaxis=False,
        customdata=customdata,
        hovertemplate=hover + "<extra></extra>",
    )


def _folder_panels(runs, panels: list[tuple[str, str, str]], key_line: float | None) -> go.Figure:
    rows = ["all"] + [f for f in _bar_rows(runs, "by_folder", "chunks") if f is not None]
    fig = make_subplots(
        rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.04,
        subplot_titles=[title for title, _, _ in panels],
    )  # fmt: skip
    for i, r in enumerate(runs):
        frame = r.report["by_folder"].fill_null("all")
        by = {row["folder"]: row for row in frame.iter_rows(named=True)}
        for col, (_, share, count) in enumerate(panels, start=1):
            got = [by.get(f) for f in rows]
            values = [g[share] if g else None for g in got]
            custom = [(g[count], g["chunks"]) if g else (0, 0) for g in got]
            text = [f"{v:.0%}" if v is not None else "" for v in values]
            hover = "%{y}: <b>%{x:.1%}</b> (%{customdata[0]:,} of %{customdata[1]:,} chunks)"
            fig.add_trace(hbar(runs, i, rows, values, text, hover, custom), row=1, col=col)
    fig.update_xaxes(range=[0, 1.18], tickformat=".0%", showticklabels=False)
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=12))
    if key_line is not None:
        fig.add_vline(x=key_line, line=dict(color=CAP_COLOR, dash="dash", width=1.5), col=2)
    style(fig, 80 + ROW * len(rows) * len(runs), legend=False)
    fig.update_layout(barmode="group", margin=dict(t=48))
    return fig


def _no_text_chunks(runs: list[RunFigures]) -> bool:
    return all(not (r.report["by_folder"]["chunks"].max() or 0) for r in runs)


def folders_size(runs: list[RunFigures]) -> Chart:
    p, params = runs[0].policy, runs[0].params
    panels = [
        (f"under {params['tiny_tokens']} tokens", "share_tiny", "tiny"),
        (f"under min_tokens ({p.min_tokens})", "share_under_min", "under_min"),
        (f"at the cap (≥ {params['near_cap']}, 95 % of it)", "share_near_cap", "near_cap"),
    ]
    caption = (
        "Long tiny bars mark folders of short sections (they could merge: lower "
        "heading_depth); long cap bars mark folders whose content is cut at the cap."
    )
    chart = Chart("folders_size", "Tiny chunks and chunks at the cap, per top folder", caption)
    chart.wide = True
    if _no_text_chunks(runs):
        chart.note = "No text chunk in this run."
        return chart
    chart.figure = _folder_panels(runs, panels, None)
    return chart


def folders_context(runs: list[RunFigures]) -> Chart:
    panels = [
        ("text starts with a heading", "share_heading_start", "heading_start"),
        ("embed_text names its section", "share_names_section", "names_section"),
    ]
    caption = (
        "Right: chunks whose embed_text opens with a heading or whose context header "
        "names their section. The aim is 80 % (red line): a folder short of it embeds "
        "chunks that do not say which section they come from; the left panel is the same "
        "on the source text."
    )
    chart = Chart("folders_context", "Chunks that know where they are", caption, wide=True)
    if _no_text_chunks(runs):
        chart.note = "No text chunk in this run."
        return chart
    chart.figure = _folder_panels(runs, panels, 0.8)
    return chart
