"""The report's tokenizer chart: the estimate against a real tokenizer on a sample."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from chunkmill.pipeline.report.charts import CAP_COLOR, MUTED, RUN_COLORS, Chart, name_of, style
from chunkmill.pipeline.report.charts_detail import FOLDER_COLORS
from chunkmill.pipeline.report.figures import RunFigures


def summary(sample: pl.DataFrame, cap: int) -> dict:
    """Figures of a recounted sample: how often and how far the estimate under-counts."""
    return sample.select(
        sampled=pl.len(),
        share_under_counted=(pl.col("real") > pl.col("estimate")).mean(),
        over_cap_real=(pl.col("real") > cap).sum(),
        ratio=pl.col("real").sum() / pl.col("estimate").sum(),
        worst_ratio=(pl.col("real") / pl.col("estimate").clip(lower_bound=1)).max(),
    ).row(0, named=True)


def tokenizer(runs: list[RunFigures]) -> Chart:
    counted = [r for r in runs if r.tokens is not None and not r.tokens.is_empty()]
    spec = next((r.token_counter for r in runs if r.token_counter), None)
    caption = (
        "Points above the diagonal are chunks the estimate under-counts; a point above the "
        "red line passes the cap in real tokens (the embedding model truncates it)."
    )
    chart = Chart("tokenizer", f"The estimate against {spec or 'a real tokenizer'}", caption)
    if spec and not counted:
        chart.note = "No text chunk to recount in this run."
        return chart
    if not counted:
        chart.note = (
            "This run counted with the estimate. Give a tokenizer to see how the estimate "
            "compares: chunkmill report DIR --tokenizer tiktoken:cl100k_base"
        )
        return chart
    fig = go.Figure()
    top = 0
    for i, r in enumerate(runs):
        if r.tokens is None or r.tokens.is_empty():
            continue
        top = max(top, r.tokens["estimate"].max() or 0, r.tokens["real"].max() or 0)
        groups = [(name_of(runs, i), r.tokens, RUN_COLORS[i])] if len(runs) > 1 else [
            (folder, part, FOLDER_COLORS[k % len(FOLDER_COLORS)])
            for k, ((folder,), part) in enumerate(r.tokens.group_by("folder", maintain_order=True))
        ]  # fmt: skip
        for name, part, color in groups:
            fig.add_trace(go.Scatter(
                x=part["estimate"].to_list(), y=part["real"].to_list(), mode="markers",
                name=name, customdata=part["path"].to_list(),
                marker=dict(color=color, size=6, opacity=0.55, line=dict(width=0)),
                hovertemplate="%{customdata}<br>estimate %{x:,} · real <b>%{y:,}</b>"
                "<extra></extra>",
            ))  # fmt: skip
        s = summary(r.tokens, r.policy.max_tokens)
        chart.summary = (chart.summary + " · " if chart.summary else "") + _line(runs, i, s)
    cap = runs[0].policy.max_tokens
    top = max(top, cap) * 1.05
    fig.add_shape(type="line", x0=0, y0=0, x1=top, y1=top, line=dict(color=MUTED, dash="dash"))
    fig.add_hline(y=cap, line=dict(color=CAP_COLOR, width=1.5),
                  annotation_text=f"cap {cap}", annotation_position="top left")  # fmt: skip
    what = (
        "n_tokens, what the cap was checked on" if runs[0].estimate_is_n_tokens else "of embed_text"
    )
    fig.update_xaxes(title_text=f"estimated tokens ({what})", range=[0, top])
    fig.update_yaxes(title_text=f"{spec} tokens", range=[0, top])
    chart.figure = style(fig, 460)
    return chart


def _line(runs, i: int, s: dict) -> str:
    who = "" if len(runs) == 1 else f"{'this run' if i == 0 else 'compared'}: "
    return (
        f"{who}{s['sampled']:,} chunks sampled, {s['share_under_counted']:.1%} under-counted, "
        f"{s['over_cap_real']:,} over the cap, real/estimate {s['ratio']:.2f} "
        f"(worst chunk {s['worst_ratio']:.2f})"
    )
