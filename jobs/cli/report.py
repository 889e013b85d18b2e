"""`chunkmill report`: the chunk-quality report of an output folder as one HTML page."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from chunkmill.jobs.cli.query import OUT_DIR


@click.command("report")
@OUT_DIR
@click.option(
    "--out",
    "page",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the page.  [default: DIR/report.html]",
)
@click.option(
    "--compare",
    metavar="RUN_ID|DIR2",
    help="Show another run side by side: a run id of DIR (see `chunkmill runs DIR`; only "
    "kept runs) or another output folder. What did a policy change do?",
)
@click.option(
    "--tokenizer",
    metavar="SPEC",
    help="Recount a sample of embed_text with this tokenizer (tiktoken:NAME, "
    "hf:PATH/tokenizer.json) to chart the estimate against it. Default: the run's own "
    "tokenizer, when it used one.",
)
@click.option("--sample", default=2000, show_default=True, type=click.IntRange(1, 1_000_000),
              help="Chunks to recount with the tokenizer.")  # fmt: skip
@click.option("--bins", default=40, show_default=True, type=click.IntRange(1, 1000),
              help="Histogram bins from 0 to the cap (as `chunkmill stats --bins`).")  # fmt: skip
@click.option("--top", default=15, show_default=True, type=click.IntRange(1, 500),
              help="Documents shown in 'the most chunks'.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def report_cmd(out, page, compare, tokenizer, sample, bins, top, as_json):
    """Write a chunk-quality report of DIR: one self-contained HTML page (it opens offline;
    nothing is loaded from the network) with interactive charts.

    \b
    Charts: token sizes per strategy against the target and the cap; tiny chunks and
    chunks at the cap per top folder; the shares of chunks that start with a heading and
    whose embed_text names their section; blocks cut into parts per block kind; rejects
    by reason; documents with the most chunks; the estimate against a real tokenizer
    (with --tokenizer, or when the run used one); chunks added and removed per run. The
    tiles equal `chunkmill stats --json --bins N`.

    \b
    Examples:
      chunkmill report out/                      # -> out/report.html
      chunkmill report out/ --compare 20250101T020000Z-1a2b3c --out policy-change.html
      chunkmill report out/ --compare out-small/ --tokenizer tiktoken:cl100k_base

    Needs the report extra (plotly): pip install 'chunkmill[report]'.
    """
    from chunkmill import api
    from chunkmill.jobs import report_job
    from chunkmill.pipeline.report.figures import ReportError
    from chunkmill.pipeline.runstore import DamagedRunError

    if not report_job.available():
        click.echo(f"chunkmill report: {report_job.INSTALL_HINT}", err=True)
        sys.exit(2)
    _check_tokenizer(tokenizer)
    if page is not None and not page.parent.is_dir():
        raise click.BadParameter(f"folder {page.parent} does not exist", param_hint="--out")
    try:
        summary = api.report(out, page, compare=compare, tokenizer=tokenizer, sample=sample,
                             bins=bins, top=top)  # fmt: skip
    except (ReportError, FileNotFoundError) as exc:
        raise click.UsageError(str(exc)) from exc
    except DamagedRunError as exc:  # exit 1, as `chunkmill check` fails on it
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot write {page or out / 'report.html'}: {exc}") from exc
    if as_json:
        record = {**summary.__dict__, "page": str(summary.page)}
        click.echo(json.dumps(record, indent=1, ensure_ascii=False))
    size = summary.bytes / 1e6
    click.echo(
        f"chunkmill report: wrote {summary.page} ({size:.1f} MB, {len(summary.charts)} charts"
        f"{', ' + str(len(summary.notes)) + ' with nothing to draw' if summary.notes else ''})"
        f" for run {' vs '.join(summary.runs)}",
        err=True,
    )


def _check_tokenizer(spec: str | None) -> None:
    """A bad --tokenizer stops the command before any work, with the reason."""
    if spec is None:
        return
    if spec == "estimate":
        raise click.BadParameter("give a real tokenizer to compare the estimate with",
                                 param_hint="--tokenizer")  # fmt: skip
    from chunkmill.pipeline.tokens import make_counter

    try:
        make_counter(spec)
    except Exception as exc:  # tiktoken and HF tokenizers raise errors of their own
        raise click.BadParameter(f"{spec}: {exc}", param_hint="--tokenizer") from exc
