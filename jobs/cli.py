"""The ``mdchunk`` command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from jobs import blocks_job
from pipeline import sources
from pipeline.document import DEFAULT_MAX_BYTES
from pipeline.tokens import BIAS_DIVISORS


def _progress(total: int, label: str):
    """A progress bar on stderr (only drawn on a terminal)."""
    return click.progressbar(length=max(total, 1), label=label, file=sys.stderr,
                             show_pos=True, show_eta=True)


def input_options(f):
    """Options shared by every command that reads INPUT."""
    opts = [
        click.option("--include", multiple=True, metavar="GLOB",
                     help="Only read paths (relative to INPUT) matching GLOB; repeatable. "
                          "'*' also matches '/', so '*.md' means every .md file."),
        click.option("--exclude", multiple=True, metavar="GLOB",
                     help="Skip paths matching GLOB; repeatable. Hidden folders are always skipped."),
        click.option("--mdx", type=click.Choice(["auto", "on", "off"]), default="auto",
                     show_default=True,
                     help="Parse MDX import/export and JSX blocks: auto = for .mdx files only."),
        click.option("--text-column", default=None,
                     help="For Parquet/JSONL input: the column holding the document text "
                          "(default: text, content, body or markdown)."),
        click.option("--id-column", default=None,
                     help="For Parquet/JSONL input: the column naming each document "
                          "(default: path, id, doc_id, url or name; else the row number)."),
        click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True,
                     help="Documents larger than this are rejected (reason too_large)."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="mdchunk")
def main() -> None:
    """mdchunk turns markdown corpora into retrieval-ready chunks.

    \b
    Stages (each writes Parquet into --out):
      blocks  INPUT -> documents.parquet, blocks.parquet, rejects.parquet

    INPUT is a folder (read recursively: .md .mdx .markdown are markdown, .txt is plain
    text, anything else is counted and skipped), single files, or a Parquet/JSONL table
    with one document per row. Bad documents never stop a run: they land in
    rejects.parquet with a reason. Query the output with DuckDB or polars directly.
    """


@main.command("blocks")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder (created if missing).")
@input_options
@click.option("--bias", type=click.Choice(sorted(BIAS_DIVISORS)), default="balanced",
              show_default=True,
              help="Token-estimate preset: characters per token for prose and code blocks "
                   "(balanced 4.0/2.75, prose 4.4/3.0, code 3.6/2.4).")
def blocks_cmd(inputs, out, include, exclude, mdx, text_column, id_column, max_bytes, bias):
    """Read documents and explode them into structural blocks.

    \b
    Example:
      mdchunk blocks docs/ --out out/ --exclude 'drafts/*'
      duckdb -c "SELECT kind, count(*) FROM 'out/blocks.parquet' GROUP BY kind"

    One row per top-level block (heading, paragraph, list, table, code, blockquote, html,
    thematic_break, front_matter, mdx_esm, mdx_jsx, image) with its exact source slice,
    character and line offsets, heading path and token estimate. Files that cannot be
    used (invalid UTF-8, binary, unreadable) go to rejects.parquet with a reason; the exit
    code is non-zero only when no document at all could be read.
    """
    selection = sources.Selection(include, exclude, text_column, id_column)
    try:
        total = len(sources.plan(list(inputs), sources.Selection(include, exclude)))
    except sources.InputError as exc:
        raise click.UsageError(str(exc)) from exc
    with _progress(total, "blocks") as bar:
        try:
            summary = blocks_job.run(list(inputs), out, selection, mdx, bias, max_bytes,
                                     progress=bar.update)
        except sources.InputError as exc:
            raise click.UsageError(str(exc)) from exc
    click.echo(f"mdchunk blocks: {summary.line(out)}", err=True)
    if summary.documents == 0:
        click.echo("mdchunk blocks: no document could be read from INPUT", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
