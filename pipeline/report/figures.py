"""The figures of a chunk-quality report: the SQL files of ``sql/stats/`` (what `chunkmill
stats` prints) and ``sql/report/`` over one run, plus a recount of a sample of ``embed_text``
with a real tokenizer. Python only chooses the run, binds parameters and counts tokens; the
charts are drawn by ``chunkmill.pipeline.report.charts``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from chunkmill.pipeline import queries, runstore
from chunkmill.pipeline.policy import Policy

REPORT = ["histogram_by_strategy", "by_folder", "split_blocks", "top_documents", "runs"]


@dataclass(frozen=True)
class Options:
    """What the page shows; none of it changes a figure that `chunkmill stats` prints."""

    bins: int = 40  # histogram bins from 0 to the cap (as `chunkmill stats --bins`)
    top: int = 15  # documents with the most chunks
    sample: int = 2000  # chunks recounted with a real tokenizer
    tiny_tokens: int = 50  # "tiny": under this many tokens (the benchmarks' measure)
    near_cap: float = 0.95  # "at the cap": at least this share of max_tokens
    tokenizer: str | None = None  # recount the sample with this tokenizer spec


@dataclass
class RunFigures:
    """Everything the page shows about one run."""

    label: str  # the run id, or the folder's name for a plain output folder
    folder: Path  # the run folder that was read
    policy: Policy
    stats: dict[str, pl.DataFrame]
    report: dict[str, pl.DataFrame]
    tokens: pl.DataFrame | None = None  # path, folder, estimate, real (the recounted sample)
    token_counter: str | None = None  # the tokenizer of the `real` column
    estimate_is_n_tokens: bool = True  # `estimate` is n_tokens (the run used the estimate)
    params: dict | None = None  # the parameters the sql/report files were run with


class ReportError(ValueError):
    """A report that cannot be made as asked (an unknown run to compare with, say)."""


def locate(out: Path, compare: str | None) -> Path | None:
    """The run folder that ``--compare`` names: another output folder, or a run of ``out``."""
    if compare is None:
        return None
    other = Path(compare)
    if other.is_dir():
        return runstore.resolve(other)
    folder = runstore.run_dir(out, compare)
    if folder.is_dir():
        return folder
    known = [r["run_id"] for r in runstore.history(out)]
    if compare in known:
        raise ReportError(
            f"run {compare} is recorded in {out}/runs.parquet but its folder is gone (only "
            "the last --keep runs are kept); compare with a kept run or another folder"
        )
    kept = sorted(p.name for p in (Path(out) / runstore.RUNS).glob("*") if p.is_dir())
    raise ReportError(
        f"--compare {compare}: neither a folder nor a run of {out}"
        + (f" (kept runs: {', '.join(kept)})" if kept else "")
    )


def gather(
    out: Path, opts: Options, *, hist_max: int | None = None, paths: list[str] | None = None
) -> RunFigures:
    """The figures of the run ``out`` (an output folder, or one run folder inside it).

    ``hist_max`` sets the histogram's range (default: the run's cap), so that two runs of a
    comparison share bins; ``paths`` picks the documents of the top-documents query."""
    folder = runstore.resolve(Path(out))
    read = queries.tables_in(" ".join(queries.load(f"report/{n}.sql") for n in REPORT))
    with queries.connect(folder, sorted({*read, *queries.stats_tables()})) as con:
        policy = queries.policy_of(folder)
        stats = queries.stats(folder, bins=opts.bins, con=con)
        params = dict(
            bins=opts.bins,
            max_tokens=hist_max or policy.max_tokens,
            min_tokens=policy.min_tokens,
            tiny_tokens=min(opts.tiny_tokens, policy.max_tokens),
            near_cap=math.ceil(opts.near_cap * policy.max_tokens),
            n=opts.top,
            paths=paths or [],
        )
        report = {name: queries.run(con, f"report/{name}.sql", **params) for name in REPORT}
        figures = RunFigures(_label(folder), folder, policy, stats, report, params=params)
        _recount(con, figures, opts)
    return figures


def _label(folder: Path) -> str:
    return folder.name if folder.parent.name == runstore.RUNS else str(folder)


def _recount(con, figures: RunFigures, opts: Options) -> None:
    """The sample of embed_text counted by the estimate and by a real tokenizer: the one
    given, else the one the run used. With neither there is nothing to compare."""
    from chunkmill.pipeline.tokens import make_counter

    used = figures.policy.tokenizer
    spec = opts.tokenizer or (used if used != "estimate" else None)
    if spec is None or opts.sample <= 0:
        return
    figures.token_counter = spec
    rows = queries.run(con, "report/token_sample.sql", n=opts.sample)
    texts = rows["embed_text"].to_list()
    counted = rows["n_tokens"].to_list()
    # n_tokens is the count the cap was enforced on: the estimate when the run used it,
    # else the run's own tokenizer (which then needs no recount).
    estimate = counted if used == "estimate" else make_counter("estimate", figures.policy.bias)
    real = counted if spec == used else make_counter(spec, figures.policy.bias)
    figures.tokens = rows.select("path", "folder").with_columns(
        estimate=pl.Series(_counts(estimate, texts), dtype=pl.Int64),
        real=pl.Series(_counts(real, texts), dtype=pl.Int64),
    )
    figures.estimate_is_n_tokens = used == "estimate"


def _counts(counter, texts: list[str]) -> list[int]:
    from chunkmill.pipeline.tokens import input_tokens

    return counter if isinstance(counter, list) else input_tokens(counter, texts)


def gather_all(out: Path, compare: str | None, opts: Options) -> list[RunFigures]:
    """This run, and the one it is compared with (sharing histogram bins and documents)."""
    other = locate(out, compare)
    if other is None:
        return [gather(out, opts)]
    caps = [queries.policy_of(runstore.resolve(p)).max_tokens for p in (Path(out), other)]
    first = gather(out, opts, hist_max=max(caps))
    paths = first.report["top_documents"]["path"].to_list()
    second = gather(other, opts, hist_max=max(caps), paths=paths or None)
    return [first, second]
