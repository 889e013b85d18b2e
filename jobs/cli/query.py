"""Commands that read an output folder through DuckDB: search, stats, check, sql."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

# polars and duckdb (through chunkmill.pipeline.queries) are imported inside the commands, so
# that `chunkmill --help` does not pay for them.


def _out_dir(ctx, param, value: str):
    """DIR: a local output folder (it must exist), or an object-store URI (s3://...)."""
    if "://" in value:
        return value
    path = Path(value)
    if not path.is_dir():
        what = "a file, not an output folder" if path.exists() else "no such folder"
        raise click.BadParameter(f"{value}: {what}", ctx=ctx, param=param)
    return path


OUT_DIR = click.argument("out", metavar="DIR", callback=_out_dir)


def _open(fn, *args, **kwargs):
    """``fn(...)``; a folder that is no output a usage error (2), a damaged published run a
    failure (1, as `check` fails on it)."""
    from chunkmill.pipeline.runstore import DamagedRunError, RunStoreError

    try:
        return fn(*args, **kwargs)
    except DamagedRunError as exc:
        raise click.ClickException(str(exc)) from exc
    except (FileNotFoundError, RunStoreError) as exc:
        raise click.UsageError(str(exc)) from exc


TOKENIZER = click.option(
    "--tokenizer",
    metavar="SPEC",
    help="Count every embed_text again with this tokenizer: tiktoken:cl100k_base, "
    "tiktoken:o200k_base or hf:PATH/tokenizer.json (counted in the core; several, "
    "comma-separated: the largest count), or tiktoken:FILE.tiktoken (the 'tokenizers' "
    "extra).",
)


def _recount(out, tokenizer: str, max_tokens: int | None = None):
    """Load the tokenizer (one clear line when it cannot be), then recount DIR's chunks
    (over ``max_tokens``, else over the run's cap)."""
    from chunkmill.pipeline import queries
    from chunkmill.pipeline.tokens import make_counter

    try:
        counter = make_counter(tokenizer)
    except ImportError as exc:
        raise click.UsageError(
            f"--tokenizer {tokenizer}: {exc}; install the 'tokenizers' extra "
            "(pip install 'chunkmill[tokenizers]')"
        ) from exc
    except Exception as exc:  # a file that is missing or not a tokenizer: no traceback
        raise click.UsageError(f"--tokenizer {tokenizer}: {exc}") from exc
    return _open(queries.recount, out, counter, max_tokens)


def _jsonable(frame) -> list[dict]:
    return json.loads(frame.write_json())


def _bar(n: int, most: int, width: int = 40) -> str:
    return "█" * (round(width * n / most) if most else 0)


@click.command("stats")
@OUT_DIR
@TOKENIZER
@click.option("--json", "as_json", is_flag=True, help="The same figures as JSON.")
@click.option(
    "--bins",
    default=20,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Equal-width histogram bins from 0 to max_tokens.",
)
def stats_cmd(out, tokenizer, as_json, bins):
    """Chunk-quality statistics of DIR, computed by the SQL files in sql/stats/.

    Token sizes (min, p10, p50, p90, p99, max, a histogram), the shares under min_tokens,
    at and over the cap and starting with a heading, chunks per document, strategy,
    chunk-type and block-kind mix, split sections, the largest and smallest chunks.

    With --tokenizer, also the real tokens of every embed_text against the chunks' own
    n_tokens, per top folder of the input (sql/recount/by_folder.sql): a ratio above 1
    means the counts of the run under-count that tokenizer there.

    \b
    Example:
      chunkmill stats out/ --tokenizer tiktoken:cl100k_base
    """
    import polars as pl

    from chunkmill import api
    from chunkmill.pipeline import queries

    figures = _open(api.stats, out, bins=bins)
    policy = queries.policy_of(out)
    recount = _recount(out, tokenizer) if tokenizer else None
    if as_json:
        data = {name: _jsonable(frame) for name, frame in figures.items()}
        data["policy"] = json.loads(policy.canonical_json())
        if recount is not None:
            data["recount"] = {"tokenizer": tokenizer, "by_folder": _jsonable(recount["by_folder"])}
        click.echo(json.dumps(data, indent=1, ensure_ascii=False))
        return
    o = figures["overview"].row(0, named=True)
    t = figures["tokens"].row(0, named=True)
    echo = click.echo
    echo(
        f"{o['documents']} documents, {o['blocks']} blocks, {o['chunks']} chunks "
        f"({o['image_chunks']} image), {o['rejects']} rejects   policy {policy.policy_hash}"
    )
    for r in figures["rejects_by_reason"].iter_rows(named=True):
        echo(f"  rejected at {r['stage']}: {r['documents']} {r['reason']} (e.g. {r['example']})")
    echo(
        f"\ntokens: min {t['min']}  p10 {t['p10']}  p50 {t['p50']}  p90 {t['p90']}  "
        f"p99 {t['p99']}  max {t['max']}  mean {t['mean'] or 0:.0f}"
    )
    echo(
        f"  under min_tokens ({policy.min_tokens}): {t['share_under_min'] or 0:.1%}   "
        f"at cap ({policy.max_tokens}): {t['share_at_cap'] or 0:.1%}   "
        f"over cap: {t['share_over_cap'] or 0:.1%}"
    )
    echo(f"  starting with a heading: {t['share_starting_with_heading'] or 0:.1%}")
    hist = figures["histogram"]
    most = hist["chunks"].max() or 0
    for r in hist.iter_rows(named=True):
        echo(f"  {r['lo']:>5}-{r['hi']:<5} {r['chunks']:>7}  {_bar(r['chunks'], most)}")
    d = figures["per_document"].row(0, named=True)
    echo(
        f"\nchunks per document: min {d['min']}  p50 {d['p50']}  p90 {d['p90']}  max {d['max']}"
        f"  mean {d['mean'] or 0:.1f}  ({d['documents_without_chunks']} with none)"
    )
    s = figures["splits"].row(0, named=True)
    echo(
        f"split sections: {s['split_sections']} ({s['split_chunks']} chunks, "
        f"{s['share_split'] or 0:.1%} of text chunks), most parts {s['max_parts']}"
    )
    echo("\nstrategy / chunk type:")
    for r in figures["mix"].iter_rows(named=True):
        echo(
            f"  {r['strategy']:<10} {r['chunk_type']:<9} {r['chunks']:>7}  "
            f"mean {r['mean_tokens'] or 0:.0f} tokens"
        )
    echo("block kinds:")
    for r in figures["block_kinds"].iter_rows(named=True):
        echo(f"  {r['kind']:<15} {r['blocks']:>8}")
    for which in ("largest", "smallest"):
        echo(f"\n{which} chunks:")
        for r in figures["extremes"].filter(pl.col("which") == which).iter_rows(named=True):
            echo(
                f"  {r['n_tokens']:>6}  {r['path']}:{r['line_start']}-{r['line_end']}  "
                f"{' > '.join(r['breadcrumb'])}"
            )
    if recount is not None:
        _echo_by_folder(recount["by_folder"], tokenizer, policy.max_tokens)


def _echo_by_folder(rows, tokenizer: str, cap: int) -> None:
    click.echo(f"\n{tokenizer} tokens / n_tokens per folder (ratio above 1: under-counted):")
    click.echo(
        f"  {'folder':<24} {'chunks':>7} {'ratio':>6} {'max':>6} {'over cap ' + str(cap):>13}"
    )
    for r in rows.iter_rows(named=True):
        click.echo(
            f"  {r['folder']:<24} {r['chunks']:>7} {r['ratio']:>6.3f} {r['max_ratio']:>6.3f} "
            f"{r['over_cap']:>13}"
        )


@click.command("check")
@OUT_DIR
@TOKENIZER
@click.option(
    "--max-tokens",
    type=click.IntRange(1),
    metavar="N",
    help="A model's input limit: the chunks whose embed_text has more than N tokens of "
    "--tokenizer (the run's own when it counted exactly), special tokens included, are the "
    "ones that model would truncate.",
)
@click.option("--show", default=5, show_default=True, help="Offending rows to print per check.")
def check_cmd(out, tokenizer, max_tokens, show):
    """Run the data checks in sql/checks/ on DIR; exit 1 if any finds offending rows.

    First every file of the published run is checked against the size and sha256 in its
    manifest.json (checksums). Then each check is one SQL file returning the rows that
    break it (no rows = it holds): unique chunk ids, spans inside their document, n_tokens
    within the cap, balanced code fences, every document with text has chunks, every
    chunk's document exists.

    n_tokens is what the run counted (with the estimate, an estimate). With --tokenizer,
    one more check counts every embed_text with that tokenizer and lists the chunks over
    the cap (sql/recount/over_cap.sql), largest first; with --max-tokens, over a model's
    limit instead of the run's cap: the chunks that model would truncate.

    \b
    Examples:
      chunkmill check out/ --tokenizer tiktoken:cl100k_base
      chunkmill check out/ --tokenizer hf:minilm/tokenizer.json --max-tokens 256
    """
    import polars as pl

    from chunkmill.pipeline import queries, runstore
    from chunkmill.pipeline.runstore import manifest

    try:
        folder = queries.folder_of(out)
    except runstore.RunStoreError:  # a damaged CURRENT: a failed check below, not usage
        folder = None
    if folder is not None and not (folder / manifest.MANIFEST).exists():
        # no run's manifest to hold the files to: a folder that is no output at all (or
        # has nothing published) is a usage error, once, not every check failing alike
        _open(queries.connect, out, tables=()).close()
    try:
        results = queries.checks(out)
    except runstore.RunStoreError as exc:
        click.echo(f"FAIL  published run: {exc}")
        sys.exit(1)
    if max_tokens and not tokenizer:
        tokenizer = _exact_tokenizer(out)
    if tokenizer:
        within = f"within_{max_tokens}" if max_tokens else "within_cap"
        rows = _recount(out, tokenizer, max_tokens)["over_cap"]
        results[f"real_tokens_{within} ({tokenizer})"] = rows
    failed = 0
    for name, rows in results.items():
        if rows.is_empty():
            click.echo(f"ok    {name}")
            continue
        failed += 1
        if rows.columns == ["error"]:  # the check could not run (damaged files)
            click.echo(f"FAIL  {name}: {rows['error'][0]}")
            continue
        click.echo(f"FAIL  {name}: {rows.height} offending row(s)")
        with pl.Config(tbl_rows=show, fmt_str_lengths=60, tbl_width_chars=160):
            click.echo(str(rows.head(show)))
    click.echo(f"{len(results) - failed} of {len(results)} checks hold", err=True)
    sys.exit(1 if failed else 0)


def _exact_tokenizer(out) -> str:
    """The run's own tokenizer, for --max-tokens without --tokenizer; a usage error when
    the run's counts are the estimate (a model's limit is in its own tokens)."""
    from chunkmill.pipeline import queries

    spec = _open(queries.policy_of, out).tokenizer
    if spec == "estimate":
        raise click.UsageError(
            "--max-tokens needs --tokenizer: the run counted with the estimate, and a "
            "model's limit is in its own tokens (e.g. --tokenizer hf:PATH/tokenizer.json)"
        )
    return spec


@click.command("sql")
@OUT_DIR
@click.argument("query")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "parquet"]),
    default="table",
    show_default=True,
)
@click.option(
    "--output",
    "--out",
    "output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE instead of the terminal (needed for parquet); --out as in "
    "`changes` and `report`.",
)
@click.option(
    "--rows",
    default=50,
    show_default=True,
    type=click.IntRange(0),
    help="Rows the table format shows (0: all); the other formats write every row.",
)
def sql_cmd(out, query, fmt, output, rows):
    """Run any SQL QUERY over DIR with the views documents, blocks, chunks, rejects and
    postings in place. The files of the views QUERY names are checked against the run's
    manifest first; a damaged one is refused (exit 1). Blocks or postings the run did not
    write (`chunkmill run --table`) are made in memory when QUERY names them.

    The table format shows the first --rows rows and says on stderr when there are more;
    csv, json and parquet hold every row.

    \b
    Example:
      chunkmill sql out/ "SELECT kind, count(*) FROM blocks GROUP BY ALL"
      chunkmill sql out/ "FROM chunks WHERE n_tokens > 900" --format parquet --output big.parquet
    """
    import duckdb
    import polars as pl

    from chunkmill.pipeline import queries

    con = _open(queries.connect, out, queries.tables_in(query))
    try:
        rel = con.sql(query)
        if rel is None:  # a statement that returns nothing (SET, CREATE VIEW, an empty one)
            raise click.UsageError("QUERY returned no result: give a SELECT (or FROM ...)")
        frame = _as_text(rel, _NO_POLARS_TYPE).pl()
    except duckdb.Error as exc:
        raise click.UsageError(f"query failed: {exc}") from exc
    if fmt == "parquet":
        if output is None:
            raise click.UsageError("--format parquet needs --output FILE")
        frame.write_parquet(output, compression="zstd")
    elif fmt == "csv":
        text = _flat(frame).write_csv()
    elif fmt == "json":
        text = json.dumps(_jsonable(frame), indent=1, ensure_ascii=False)
    else:
        shown = frame.height if rows == 0 else min(rows, frame.height)
        with pl.Config(tbl_rows=shown, fmt_str_lengths=80, tbl_width_chars=200):
            text = str(frame.head(shown))
        if shown < frame.height:
            click.echo(
                f"chunkmill sql: showing {shown} of {frame.height} rows (--rows 0 shows all; "
                "--format csv, json or parquet writes every row)",
                err=True,
            )
    if fmt != "parquet":
        if output:
            output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        else:
            click.echo(text, nl=not text.endswith("\n"))


# DuckDB types that polars cannot take from Arrow (month_day_nano intervals, `now() -
# started_at`): such columns are shown as DuckDB prints them.
_NO_POLARS_TYPE = ("INTERVAL", "BIT", "TIME WITH TIME ZONE")


def _as_text(rel, types: tuple[str, ...]):
    """``rel`` with its columns of ``types`` cast to VARCHAR."""
    if not any(str(t) in types for t in rel.types):
        return rel
    names = ['"' + c.replace('"', '""') + '"' for c in rel.columns]
    return rel.project(
        ", ".join(
            f"CAST({n} AS VARCHAR) AS {n}" if str(t) in types else n
            for n, t in zip(names, rel.types)
        )
    )


def _flat(frame):
    """CSV has no lists or structs: such cells become JSON text (breadcrumb, spans, ...)."""
    import polars as pl

    nested = [c for c, t in frame.schema.items() if t.is_nested()]
    return frame.with_columns(
        pl.Series(
            c,
            [
                None if v is None else json.dumps(v, default=str, ensure_ascii=False)
                for v in frame[c].to_list()
            ],
            dtype=pl.String,
        )
        for c in nested
    )


COMMANDS = [stats_cmd, check_cmd, sql_cmd]
