"""The ``chunkmill`` command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from chunkmill.jobs import errors
from chunkmill.jobs.cli import consumer as consumer_cli
from chunkmill.jobs.cli import query as query_cli
from chunkmill.jobs.cli import report as report_cli
from chunkmill.jobs.cli import run as run_cli
from chunkmill.jobs.cli import search as search_cli
from chunkmill.jobs.cli import sync as sync_cli
from chunkmill.jobs.cli.common import (
    OUT,
    POLICY_FILE,
    finish,
    input_errors,
    names_of,
    not_an_input,
    policy_of,
    progress_bar,
    writable,
)
from chunkmill.jobs.options import InputOptions, click_options, policy_options
from chunkmill.pipeline.policy import Policy


@click.group(
    cls=errors.Main,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="chunkmill")
@click.option(
    "--debug",
    is_flag=True,
    help="Show the Python traceback of an unexpected error (also CHUNKMILL_DEBUG=1), and "
    "let worker processes write to stderr.",
)
def main(debug: bool) -> None:
    """chunkmill turns markdown corpora into retrieval-ready chunks.

    \b
    Stages (each writes Parquet into --out):
      run     INPUT -> a new published run of DIR: all stages, incremental (nightly)
      runs    the runs of DIR
      changes the chunks to embed and to delete since any run you applied
      publish publish an earlier run of DIR again (rollback)
      blocks  INPUT -> documents.parquet, blocks.parquet, rejects.parquet
      chunks  BLOCKS_DIR -> chunks.parquet (re-pack with a new policy, no re-parsing)
      sync    the published run of DIR into a vector store (LanceDB, PostgreSQL with
              pgvector), each distinct text embedded once

    \b
    Reading an output folder (DuckDB, no extension needed):
      search  BM25 keyword search with section, level, path and front-matter filters;
              with --store, the nearest vectors in a store sync wrote
      stats   chunk-quality statistics
      check   data checks; exit 1 when one fails
      sql     any query over the documents, blocks, chunks, rejects, postings, runs
              (and changes) views
      report  a chunk-quality report: one offline HTML page of charts (report extra)

    INPUT is a folder (read recursively: .md .mdx .markdown are markdown, .txt is plain
    text, anything else is counted and skipped), single files, or a Parquet/JSONL table
    with one document per row; local, or a URI pyarrow reads (s3://, gs://, file://).
    Bad documents never stop a run: they land in rejects.parquet with a reason. Query the
    output with DuckDB or polars directly.

    Errors are one line naming the thing and the cause; exit 2 for usage and configuration
    errors, 1 for a run that read no document or an unexpected error, 3 when DIR is locked,
    4 when a publish guard refused a run, 130 after Ctrl-C (143 after SIGTERM).
    """
    if debug:
        from chunkmill.jobs import worker

        errors.STATE["debug"] = True
        worker.STDERR = None


@main.command("runs")
@click.argument("out", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="The runs table as JSON.")
def runs_cmd(out, as_json):
    """List the runs of DIR, oldest first, with their counts and status. A published run
    whose folder --keep has since removed is shown as pruned: `chunkmill publish` cannot
    bring it back, `chunkmill changes --since` still can start from it."""
    import json

    from chunkmill.pipeline import runstore

    records = runstore.history(out)
    for r in records:
        r["pruned"] = r["status"] == "published" and not runstore.run_dir(out, r["run_id"]).is_dir()
    if as_json:
        click.echo(json.dumps(records, default=str, indent=1))
        return
    if not records:
        click.echo(f"{out}: no runs recorded", err=True)
        return
    current = runstore.published(out)
    for r in records:
        mark = "*" if current is not None and current.name == r["run_id"] else " "
        secs = r["seconds"] or {}
        total = dict(secs).get("total") if secs else None
        status = "pruned" if r["pruned"] else r["status"]
        click.echo(
            f"{mark} {r['run_id']}  {status:<9} "
            f"docs +{r['documents_added'] or 0} ~{r['documents_changed'] or 0} "
            f"={r['documents_unchanged'] or 0} -{r['documents_deleted'] or 0}  "
            f"chunks +{r['chunks_added'] or 0} -{r['chunks_removed'] or 0} "
            f"~{r['chunks_updated'] or 0} ={r['chunks_kept'] or 0}  "
            f"parsed {r['documents_parsed'] or 0}  "
            f"policy {r['policy_hash'] or '-'}  "
            f"{'' if total is None else f'{total:.2f} s'}"
            f"{'  ' + r['error'] if r['error'] else ''}"
        )


@main.command("chunks")
@click.argument("blocks_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@OUT
@policy_options()
@POLICY_FILE
def chunks_cmd(blocks_dir, out, policy_file, **flags):
    """Pack the blocks of BLOCKS_DIR (written by `chunkmill blocks`) into chunks.

    \b
    Example:
      chunkmill blocks docs/ --out stage/
      chunkmill chunks stage/ --out out/ --policy policy.yaml --max-tokens 512

    No markdown is parsed again: changing the policy only re-packs stored blocks. --out may
    be BLOCKS_DIR itself; then only chunks.parquet is written there.
    """
    from chunkmill.jobs import chunks_job

    policy = policy_of(policy_file, **flags)
    for name in ("documents", "blocks"):
        if not (blocks_dir / f"{name}.parquet").exists():
            raise click.UsageError(
                f"{blocks_dir} has no {name}.parquet: run `chunkmill blocks` first"
            )
    from chunkmill.pipeline.runstore import parquet_files

    total = parquet_files.num_rows(blocks_dir, "documents")
    with progress_bar(total, "chunks") as bar:
        summary = chunks_job.run_chunks(blocks_dir, out, policy, progress=bar.update)
    click.echo(
        f"chunkmill chunks: {summary.chunks_line()} (policy {policy.policy_hash}) -> {out}",
        err=True,
    )


@main.command("blocks")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@OUT
@click_options(InputOptions)
@policy_options(only=("mdx", "bias"))
def blocks_cmd(inputs, out, mdx, bias, **values):
    """Read documents and explode them into structural blocks.

    \b
    Example:
      chunkmill blocks docs/ --out out/ --exclude 'drafts/*'
      duckdb -c "SELECT kind, count(*) FROM 'out/blocks.parquet' GROUP BY kind"

    One row per top-level block (heading, paragraph, list, table, code, blockquote, html,
    thematic_break, front_matter, mdx_esm, mdx_jsx, image) with its exact source slice,
    character and line offsets, heading path and token estimate. Files that cannot be
    used (invalid UTF-8, binary, unreadable) go to rejects.parquet with a reason; the exit
    code is non-zero only when no document at all could be read.
    """
    from chunkmill.jobs import blocks_job
    from chunkmill.pipeline.inputs import sources
    from chunkmill.pipeline.inputs.input_labels import input_labels

    not_an_input(out, inputs)
    writable(out)
    opts = InputOptions(**values)
    selection = sources.Selection.of(opts, out)
    with input_errors():
        labels = input_labels(list(inputs), names_of(opts.names, inputs))
        plan = sources.plan(list(inputs), selection, labels)
        with progress_bar(len(plan), "blocks") as bar:
            summary = blocks_job.run(
                plan,
                out,
                selection,
                mdx or Policy().mdx,
                bias or Policy().bias,
                opts.max_bytes,
                opts.parser,
                progress=bar.update,
            )
    unmatched = [f"warning: --include {g!r} matched no path" for g in selection.unmatched()]
    finish("blocks", [*unmatched, summary.blocks_line(out)], summary.documents)


for _command in (
    search_cli.COMMANDS + query_cli.COMMANDS + consumer_cli.COMMANDS + sync_cli.COMMANDS
):
    main.add_command(_command)
main.add_command(report_cli.report_cmd)
main.add_command(run_cli.run_cmd)


def entry() -> None:
    """The ``chunkmill`` command. A ``run`` on the local engine never uses numpy in this
    process (its workers, fresh interpreters of their own, do), yet pyarrow imports it
    whenever it is installed: numpy is declared absent here first, 50-140 ms off every
    run's start-up (an unchanged nightly run takes half a second). The Ray engine imports
    numpy through Ray; other commands may need it (reports, queries); the Python API runs
    in its caller's process and is left alone. Tests run the command so."""
    args = sys.argv[1:]
    if args[:1] == ["run"] and _engine(args) == "local":
        from chunkmill.jobs.worker import Absent

        sys.meta_path.insert(0, Absent("numpy", why="is not used by chunkmill run's main process"))
    main()


def _engine(args: list[str]) -> str:
    """The --engine a command line asks for (local when none)."""
    for i, arg in enumerate(args):
        if arg == "--engine" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--engine="):
            return arg.partition("=")[2]
    return "local"


if __name__ == "__main__":
    entry()
