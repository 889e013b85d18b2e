"""Commands for the consumers of an output folder: what changed since a run, and rollback."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from chunkmill.jobs import errors


def _folder_or_uri(ctx, param, value: str):
    """DIR: an output folder that exists, or an object-store prefix (s3://...)."""
    if "://" in value:
        return value
    if not Path(value).is_dir():
        raise click.BadParameter(f"{value}: no such output folder", param_hint="DIR")
    return Path(value)


@click.command("changes")
@click.argument("out", metavar="DIR", callback=_folder_or_uri)
@click.option(
    "--since",
    metavar="RUN_ID",
    help="The last run you applied (any run published in DIR, also one pruned since).",
)
@click.option(
    "--all",
    "snapshot",
    is_flag=True,
    help="Instead of --since: every published chunk as an add, with the run it brings you "
    "to in the same file (how a new consumer starts).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "parquet"]),
    default="jsonl",
    show_default=True,
)
@click.option(
    "--out",
    "output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE (needed for parquet); jsonl goes to stdout without it.",
)
@click.option(
    "--updates",
    is_flag=True,
    help="Also op update: the new rows of kept chunks whose other columns changed.",
)
@click.option(
    "--cursor",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Instead of --since/--all: the run applied last is read from FILE (no FILE: "
    "nothing applied yet, every published chunk is an add). FILE is not moved on until "
    "--applied says the changes were applied.",
)
@click.option(
    "--applied",
    is_flag=True,
    help="With --cursor: the change set handed out last is applied; move FILE on to the run "
    "it brings you to, and print nothing else.",
)
def changes_cmd(out, since, snapshot, fmt, output, updates, cursor, applied):
    """What changed between run RUN_ID and the published run of DIR: the chunks to embed
    (op add, whole rows) and the chunk ids to delete (op remove). With --updates also the
    kept chunks whose embed_text (so their vector) is the same but another column changed
    (op update, whole new rows: line numbers moved by an edit above, url, front matter,
    n_tokens), for a consumer that stores such columns beside its vectors.

    \b
    The consumer pattern with a cursor file that chunkmill keeps:
      chunkmill changes out/ --cursor applied --updates --format parquet --out todo.parquet
      # embed and upsert the adds, upsert the updates' columns, delete the removes
      chunkmill changes out/ --cursor applied --applied
    Until --applied, asking again gives the same changes (after a crash, apply them again).

    \b
    The same with the run ids in your hands (an embedding job that may miss nights or crash):
      chunkmill changes out/ --since "$(cat applied)" --updates --format parquet --out todo.parquet
      # embed and upsert the adds, upsert the updates' columns (no embedding: same
      # embed_hash), delete the removes (all idempotent), then store the run they
      # bring you to (footer key chunkmill.until; also printed on stderr):
      duckdb -noheader -list -c "SELECT value FROM parquet_kv_metadata('todo.parquet')
               WHERE key = 'chunkmill.until'" > applied
    With jsonl, every line holds the run to store as `next_since` (no line: nothing to
    apply, keep your run), and `front_matter` is an object of the values as written.
    After a crash, ask again since the same run. DIR/ledger.parquet keeps the chunk ids of
    every publication, so this works after the runs you saw were pruned. A new consumer
    starts with --all: every published chunk, and the run to store, in one file. DIR may
    be an object-store prefix (s3://bucket/prefix) written by `chunkmill run`. The published
    chunks file is checked against its run's manifest first; a damaged one is refused
    (exit 1).
    """
    import pyarrow.parquet as pq

    from chunkmill.pipeline import runstore
    from chunkmill.pipeline.runstore import ledger
    from chunkmill.pipeline.runstore.consumer import Changes, Cursor

    if cursor is None and applied:
        raise click.UsageError("--applied needs --cursor FILE")
    if cursor is not None:
        if since is not None or snapshot:
            raise click.UsageError("give --cursor FILE or --since/--all, not both")
        kept = Cursor(cursor)
        try:
            if applied:
                return click.echo(f"chunkmill changes: {cursor} now at run {kept.advance()}")
            since = kept.applied()
        except (ValueError, OSError) as exc:
            raise click.UsageError(str(exc)) from exc
    elif (since is None) == (not snapshot):
        raise click.UsageError(
            "give --since RUN_ID (the last run you applied), --all or --cursor FILE"
        )
    try:
        run = ledger.published_run(out)
        table = ledger.changes_of(out, run, since, updates)
    except ledger.UnknownRunError as exc:
        hint = f"remove {cursor} to start from a snapshot" if cursor else _start_over(out)
        raise click.UsageError(f"{exc}; {hint}") from exc
    except (ledger.LedgerDamaged, runstore.DamagedRunError) as exc:
        errors.finish("changes", str(exc), 1)  # exit 1, as `chunkmill check` fails on it
    except ledger.LedgerError as exc:
        raise click.UsageError(str(exc)) from exc
    if fmt == "parquet" and output is None:
        raise click.UsageError("--format parquet needs --out FILE")
    try:
        if fmt == "parquet":
            pq.write_table(table, output, compression="zstd")
        else:
            import json

            from chunkmill.pipeline.runstore.change_records import records_of

            rows = records_of(table, run[0])
            lines = (json.dumps(row, default=str, ensure_ascii=False) for row in rows)
            text = "".join(line + "\n" for line in lines)
            if output is None:
                click.echo(text, nl=False)
            else:
                output.write_text(text, encoding="utf-8")
    except OSError as exc:  # a missing folder, no permission, a full disk
        raise click.UsageError(
            f"--out {output}: cannot write there: {exc.strerror or exc}"
        ) from exc
    ops = table.column("op").to_pylist()
    until = Changes.of(table).until
    if cursor is not None:
        try:
            Cursor(cursor).offer(until)
        except OSError as exc:
            raise click.UsageError(f"--cursor {cursor}: cannot write there: {exc}") from exc
    click.echo(
        f"chunkmill changes: {ops.count('add')} to add, "
        + (f"{ops.count('update')} to update, " if updates else "")
        + f"{ops.count('remove')} to remove, from {since or 'nothing'} to the published run "
        + until,
        err=True,
    )


def _start_over(out) -> str:
    """What a consumer with a run id DIR does not know can do."""
    listing = (
        f'`chunkmill sql {out} "SELECT run_id FROM runs"`'
        if isinstance(out, str)
        else f"`chunkmill runs {out}`"
    )
    return f"start from a snapshot with --all, or list the run ids with {listing}"


@click.command("publish")
@click.argument("out", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_id", metavar="RUN_ID")
def publish_cmd(out, run_id):
    """Publish run RUN_ID of DIR again: a rollback to a run still on disk.

    \b
    Example:
      chunkmill runs out/                      # the runs, * marks the published one
      chunkmill publish out/ 20250101T020000Z-1a2b3c

    Its changes.parquet is rewritten relative to the run published until now (so
    `SELECT ... FROM changes` undoes what the newer run did) and the ledger records it, so
    `chunkmill changes --since` stays right. The next `chunkmill run` builds on it. Local
    output folders only.
    """
    from chunkmill.jobs import rollback
    from chunkmill.pipeline import runstore

    try:
        counts = rollback.publish(out, run_id, lambda m: errors.emit("publish", f"warning: {m}"))
    except rollback.RollbackError as exc:
        raise click.UsageError(str(exc)) from exc
    except runstore.LockedError as exc:
        click.echo(f"chunkmill publish: refused: {exc}", err=True)
        sys.exit(3)
    if counts["unchanged"]:
        click.echo(f"chunkmill publish: {run_id} is already the published run", err=True)
        return
    click.echo(
        f"chunkmill publish: {run_id} published; changes.parquet: {counts['added']} to add, "
        f"{counts['removed']} to remove ({counts['updated']} kept chunks updated: "
        f"`chunkmill changes --updates`)",
        err=True,
    )


COMMANDS = [changes_cmd, publish_cmd]
