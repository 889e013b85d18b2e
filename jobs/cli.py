"""The ``mdchunk`` command line."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import click

from jobs import blocks_job, chunks_job, query_cli
from pipeline import sources
from pipeline.document import DEFAULT_MAX_BYTES
from pipeline.policy import CHOICES, PolicyError, load
from pipeline.tokens import BIAS_DIVISORS

OUT = click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder (created if missing).",
)


@contextmanager
def _input_errors():
    """An unusable INPUT (missing, a table without a text column) is a usage error."""
    try:
        yield
    except sources.InputError as exc:
        raise click.UsageError(str(exc)) from exc


def _finish(command: str, lines: list[str], documents: int) -> None:
    for line in lines:
        click.echo(f"mdchunk {command}: {line}", err=True)
    if documents == 0:
        click.echo(f"mdchunk {command}: no document could be read from INPUT", err=True)
        sys.exit(1)


def _progress(total: int, label: str):
    """A progress bar on stderr (only drawn on a terminal)."""
    return click.progressbar(
        length=max(total, 1), label=label, file=sys.stderr, show_pos=True, show_eta=True
    )


def input_options(f):
    """Options shared by every command that reads INPUT."""
    opts = [
        click.option(
            "--include",
            multiple=True,
            metavar="GLOB",
            help="Only read paths (relative to INPUT) matching GLOB; repeatable. "
            "'*' also matches '/', so '*.md' means every .md file.",
        ),
        click.option(
            "--exclude",
            multiple=True,
            metavar="GLOB",
            help="Skip paths matching GLOB; repeatable. Hidden folders are always skipped.",
        ),
        click.option(
            "--mdx",
            type=click.Choice(["auto", "on", "off"]),
            default="auto",
            show_default=True,
            help="Parse MDX import/export and JSX blocks: auto = for .mdx files only.",
        ),
        click.option(
            "--text-column",
            default=None,
            help="For Parquet/JSONL input: the column holding the document text "
            "(default: text, content, body or markdown).",
        ),
        click.option(
            "--id-column",
            default=None,
            help="For Parquet/JSONL input: the column naming each document "
            "(default: path, id, doc_id, url or name; else the row number).",
        ),
        click.option(
            "--max-bytes",
            type=int,
            default=DEFAULT_MAX_BYTES,
            show_default=True,
            help="Documents larger than this are rejected (reason too_large).",
        ),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def policy_options(f):
    """Every policy field as a flag; a flag overrides --policy FILE, which overrides defaults."""
    opts = [
        click.option(
            "--policy",
            "policy_file",
            type=click.Path(exists=True, dir_okay=False),
            help="YAML file of policy fields (target_tokens: 500, ...).",
        ),
        click.option("--target-tokens", type=int, help="Size chunks are packed toward [750]."),
        click.option(
            "--max-tokens", type=int, help="Hard cap: no chunk's n_tokens exceeds it [1000]."
        ),
        click.option(
            "--min-tokens",
            type=int,
            help="Chunks below this merge with a neighbour of their section [200].",
        ),
        click.option(
            "--overlap-tokens",
            type=int,
            help="Tokens of the previous chunk repeated at the start of the next [80].",
        ),
        click.option(
            "--heading-depth",
            type=int,
            help="Headings of this level or higher start a new chunk [3].",
        ),
        click.option(
            "--front-matter",
            type=click.Choice(CHOICES["front_matter"]),
            help="metadata: parsed into a column; include: chunked as text; "
            "strip: dropped [metadata].",
        ),
        click.option(
            "--strategy",
            type=click.Choice(CHOICES["strategy"]),
            help="auto: markdown for markdown with headings, sentence packing for "
            "markdown without, recursive for plain text [auto].",
        ),
        click.option(
            "--bias",
            type=click.Choice(CHOICES["bias"]),
            help="Token-estimate preset (chars per token, prose/code): balanced "
            "4.0/2.75, prose 4.4/3.0, code 3.6/2.4 [balanced].",
        ),
        click.option(
            "--tokenizer",
            help="estimate | tiktoken:NAME (an installed offline encoding, e.g. "
            "cl100k_base) or tiktoken:PATH.tiktoken | hf:PATH/tokenizer.json. "
            "Nothing is downloaded [estimate].",
        ),
        click.option(
            "--breadcrumb-prefix/--no-breadcrumb-prefix",
            default=None,
            help="Prefix embed_text with 'H1 > H2 > H3' when the chunk does not "
            "start with its heading [on].",
        ),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def _policy(policy_file, mdx=None, **flags):
    try:
        return load(policy_file, mdx=mdx, **flags)
    except PolicyError as exc:
        raise click.BadParameter(str(exc), param_hint="policy") from exc


def _check_tokenizer(policy):
    from pipeline.tokens import make_counter

    try:
        make_counter(policy.tokenizer, policy.bias)
    except (ValueError, ImportError, OSError) as exc:
        raise click.BadParameter(str(exc), param_hint="--tokenizer") from exc


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="mdchunk")
def main() -> None:
    """mdchunk turns markdown corpora into retrieval-ready chunks.

    \b
    Stages (each writes Parquet into --out):
      run     INPUT -> all of the below in one pass (what most people want)
      blocks  INPUT -> documents.parquet, blocks.parquet, rejects.parquet
      chunks  BLOCKS_DIR -> chunks.parquet (re-pack with a new policy, no re-parsing)

    \b
    Reading an output folder (DuckDB, no extension needed):
      search  BM25 keyword search with section, level, path and front-matter filters
      stats   chunk-quality statistics
      check   data checks; exit 1 when one fails
      sql     any query over the documents, blocks, chunks, rejects, postings views

    INPUT is a folder (read recursively: .md .mdx .markdown are markdown, .txt is plain
    text, anything else is counted and skipped), single files, or a Parquet/JSONL table
    with one document per row. Bad documents never stop a run: they land in
    rejects.parquet with a reason. Query the output with DuckDB or polars directly.
    """


@main.command("run")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@OUT
@input_options
@policy_options
def run_cmd(
    inputs, out, include, exclude, mdx, text_column, id_column, max_bytes, policy_file, **flags
):
    """Read, parse and chunk INPUT in one pass.

    \b
    Example:
      mdchunk run docs/ --out out/ --target-tokens 400 --max-tokens 512
      duckdb -c "SELECT breadcrumb, n_tokens FROM 'out/chunks.parquet' LIMIT 5"

    Writes documents, blocks, chunks and rejects as Parquet. chunks.parquet holds one row per
    chunk: text (valid markdown), embed_text (what to embed), n_tokens, breadcrumb, source
    spans, and a chunk_id that stays the same while the chunk's content does.
    """
    policy = _policy(policy_file, mdx=mdx, **flags)
    _check_tokenizer(policy)
    selection = sources.Selection(include, exclude, text_column, id_column)
    with _input_errors():
        plan = sources.plan(list(inputs), selection)
        with _progress(len(plan), "run") as bar:
            bsum, csum = chunks_job.run_all(
                plan, out, selection, policy, max_bytes, progress=bar.update
            )
    lines = [bsum.line(out), f"{csum.line()} (policy {policy.policy_hash})"]
    _finish("run", lines, bsum.documents)


@main.command("chunks")
@click.argument("blocks_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@OUT
@policy_options
def chunks_cmd(blocks_dir, out, policy_file, **flags):
    """Pack the blocks of BLOCKS_DIR (written by `mdchunk blocks`) into chunks.

    \b
    Example:
      mdchunk blocks docs/ --out stage/
      mdchunk chunks stage/ --out out/ --policy policy.yaml --max-tokens 512

    No markdown is parsed again: changing the policy only re-packs stored blocks. --out may
    be BLOCKS_DIR itself; then only chunks.parquet is written there.
    """
    policy = _policy(policy_file, **flags)
    _check_tokenizer(policy)
    for name in ("documents", "blocks"):
        if not (blocks_dir / f"{name}.parquet").exists():
            raise click.UsageError(
                f"{blocks_dir} has no {name}.parquet: run `mdchunk blocks` first"
            )
    import pyarrow.parquet as pq

    total = pq.ParquetFile(blocks_dir / "documents.parquet").metadata.num_rows
    with _progress(total, "chunks") as bar:
        summary = chunks_job.run_chunks(blocks_dir, out, policy, progress=bar.update)
    click.echo(f"mdchunk chunks: {summary.line()} (policy {policy.policy_hash}) -> {out}", err=True)


@main.command("blocks")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@OUT
@input_options
@click.option(
    "--bias",
    type=click.Choice(sorted(BIAS_DIVISORS)),
    default="balanced",
    show_default=True,
    help="Token-estimate preset: characters per token for prose and code blocks "
    "(balanced 4.0/2.75, prose 4.4/3.0, code 3.6/2.4).",
)
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
    with _input_errors():
        plan = sources.plan(list(inputs), selection)
        with _progress(len(plan), "blocks") as bar:
            summary = blocks_job.run(
                plan, out, selection, mdx, bias, max_bytes, progress=bar.update
            )
    _finish("blocks", [summary.line(out)], summary.documents)


for _command in query_cli.COMMANDS:
    main.add_command(_command)


if __name__ == "__main__":
    main()
