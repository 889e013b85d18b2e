"""The ``chunkmill`` command line."""

from __future__ import annotations

import dataclasses
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import click

from chunkmill.jobs import consumer_cli, errors, query_cli, report_cli, search_cli, sync_cli
from chunkmill.jobs.options import InputOptions, RunOptions, click_options, policy_options
from chunkmill.pipeline.policy import Policy, PolicyError

POLICY_FIELDS = tuple(f.name for f in dataclasses.fields(Policy))

# Heavy modules (polars, pyarrow, duckdb, parsers, tokenizers, Ray) are imported inside the
# commands that use them, so `chunkmill --help` and `--version` start fast.

OUT = click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder (created if missing).",
)


POLICY_FILE = click.option(
    "--policy",
    "policy_file",
    type=click.Path(exists=True, dir_okay=False),
    help="YAML file of policy fields (target_tokens: 500, ...); a flag overrides it.",
)


def _run_out(ctx, param, value: str):
    """`chunkmill run --out`: a folder, or an object-store prefix kept as the URI it is."""
    return value if "://" in value else Path(value)


RUN_OUT = click.option(
    "--out",
    "-o",
    required=True,
    callback=_run_out,
    metavar="DIR",
    help="Output folder (created if missing; an existing one must be empty or hold runs), "
    "or an object-store prefix such as s3://bucket/prefix (any URI pyarrow's filesystems "
    "open).",
)


@contextmanager
def _input_errors():
    """An unusable INPUT (missing, a table without a text column) is a usage error."""
    from chunkmill.pipeline import sources

    try:
        yield
    except sources.InputError as exc:
        raise click.UsageError(str(exc)) from exc


class _Progress:
    """A progress bar on stderr for ``progress(done, total)`` callbacks, opened on the first
    call (only drawn on a terminal)."""

    def __init__(self, label: str):
        self.label, self.bar, self.done = label, None, 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = _progress(total, self.label).__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _finish(command: str, lines: list[str], documents: int) -> None:
    for line in lines:
        click.echo(f"chunkmill {command}: {line}", err=True)
    if documents == 0:
        click.echo(f"chunkmill {command}: no document could be read from INPUT", err=True)
        sys.exit(1)


def _progress(total: int, label: str):
    """A progress bar on stderr, on a terminal only: elsewhere (a log file, a pipe) click
    would still print the bare label as a line among the stage lines."""
    if not sys.stderr.isatty():
        return _NoBar()
    return click.progressbar(
        length=max(total, 1), label=label, file=sys.stderr, show_pos=True, show_eta=True
    )


class _NoBar:
    """What _progress gives off a terminal: a bar that draws nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def update(self, n: int) -> None:
        pass


def _policy(policy_file, mdx=None, **flags):
    """The policy of the flags over the file over the defaults; its tokenizer loads."""
    from chunkmill.api import resolve_policy

    try:
        return resolve_policy(policy_file, mdx=mdx, **flags)
    except PolicyError as exc:  # one line: "chunkmill run: invalid policy: ..."
        raise click.UsageError(str(exc)) from exc


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

    \b
    Reading an output folder (DuckDB, no extension needed):
      search  BM25 keyword search with section, level, path and front-matter filters
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


@main.command("run")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@RUN_OUT
@policy_options()
@POLICY_FILE
@click_options(RunOptions)
@click.option(
    "--log-json",
    is_flag=True,
    help="Every line on stderr is one JSON object (stages, warnings, errors), the last one "
    "the summary.",
)
def run_cmd(inputs, out, policy_file, log_json, **values):
    """Read, parse and chunk INPUT into a new run of DIR, then publish it.

    \b
    Example (nightly):
      chunkmill run docs/ --out out/ --target-tokens 400 --max-tokens 512
      chunkmill sql out/ "SELECT op, count(*) FROM changes GROUP BY op"

    \b
    Incremental by default: documents whose bytes did not change reuse their blocks (no
    parsing) and, under the same policy, their chunks. Each run lives in DIR/runs/RUN_ID/
    with a manifest.json (policy, checksums) and is published by replacing DIR/CURRENT,
    atomically: readers (search, stats, check, sql) always see the last complete run, even
    if a run is killed. A published run whose files no longer match their checksums is not
    reused: the run says so and recomputes everything. changes.parquet in the run holds
    the chunk ids to embed (op add, with the chunk rows) and to delete (op remove) relative
    to the published run. A second run on DIR while one is in progress is refused, exit 3
    (DIR/LOCK names its PID); a lock left by a killed run is taken over.

    \b
    Guards (nothing is published, the run is recorded as refused):
      no document read (empty INPUT, a mistyped --include)          exit 1
      more than --max-removed of the published chunks removed       exit 4
      a policy or chunker version other than the published run's   exit 4
    --allow-mass-delete and --new-policy accept the first two and the last; --dry-run
    shows what a run would change and publishes nothing.

    
    Never read: pipes, devices and sockets (not_a_file), files over --max-bytes
    (too_large), links out of the input folder (outside_root), names that are not UTF-8
    (bad_name). A folder that cannot be listed is a reject (unlistable) and its documents
    of the published run are kept as they were: nothing below it is removed.
    """
    from chunkmill.pipeline import objectstore

    if log_json:
        errors.json_mode()
    policy = _policy(policy_file, **{k: values.pop(k) for k in POLICY_FIELDS})
    options = {**values, "names": _names(values["names"], inputs)}
    if objectstore.is_uri(out):
        _run(inputs, out, policy, options, log_json)
        return
    _not_an_input(out, inputs)
    _a_run_store_or_empty(out)
    with _made_for_this_run(out):
        _writable(out)
        _run(inputs, out, policy, options, log_json)


@contextmanager
def _made_for_this_run(out: Path):
    """--out as a run leaves it: a folder this command created is removed again when the run
    published nothing (refused, failed, a dry run, Ctrl-C), so no empty output folder is
    left behind; a folder that existed is left as the run leaves it."""
    import shutil

    from chunkmill.pipeline import runstore

    created = not out.exists()
    try:
        yield
    finally:
        if created and out.is_dir() and not (out / runstore.POINTER).exists():
            try:  # never from under a run that started there meanwhile
                with runstore.Lock(out):
                    if not (out / runstore.POINTER).exists():
                        shutil.rmtree(out, ignore_errors=True)
            except runstore.LockedError:
                pass


def _run(inputs, out, policy, options: dict, log_json: bool) -> None:
    """The run itself, its refusals as exits, then its closing lines."""
    from chunkmill import api
    from chunkmill.jobs.errors import EngineError
    from chunkmill.jobs.runlog import RunLog
    from chunkmill.pipeline import objectstore, runstore
    from chunkmill.pipeline.runstore.guards import Refused

    log = RunLog(as_json=log_json)
    bar = None if log_json else _Progress("run")  # a bar label is not a JSON line
    with _input_errors():
        try:
            result = api.run(list(inputs), out, policy=policy, progress=bar, log=log, **options)
        except runstore.LockedError as exc:
            errors.finish("run", f"refused: {exc}", 3, status="refused")
        except Refused as exc:
            errors.finish("run", f"refused: {exc}", exc.code, status="refused")
        except EngineError as exc:
            raise click.UsageError(str(exc)) from exc
        except objectstore.ObjectStoreError as exc:
            errors.finish("run", f"not published: {exc}", 1)
        finally:
            if bar is not None:
                bar.close()
    _run_summary(result, out, policy, log)


SUMMARY_COUNTS = [
    "documents_added",
    "documents_changed",
    "documents_unchanged",
    "documents_deleted",
    "documents_parsed",
    "chunks_added",
    "chunks_removed",
    "chunks_updated",
    "chunks_kept",
    "chunks_total",
]


def _run_summary(result, out, policy, log) -> None:
    """The closing lines of `chunkmill run` (with --log-json: one summary object)."""
    r = result.record
    if log.as_json:
        log.stage(
            "summary",
            status="dry-run" if result.dry_run else "published",
            run=r["run_id"],
            documents=result.counts.documents,
            blocks=result.counts.blocks,
            rejects=dict(result.counts.rejects),
            skipped=dict(result.counts.skipped),
            chunks=result.counts.chunks,
            parsed_by_reference=result.counts.fallback,
            **{k: r[k] for k in SUMMARY_COUNTS},
            policy=policy.policy_hash,
            seconds=r["seconds"]["total"],
        )
        return
    verb = "dry run, nothing published" if result.dry_run else "published"
    lines = [
        result.counts.blocks_line(out),
        f"{result.counts.chunks_line()} (policy {policy.policy_hash})",
        f"run {r['run_id']} {verb}: documents +{r['documents_added']} "
        f"~{r['documents_changed']} ={r['documents_unchanged']} -{r['documents_deleted']}, "
        f"chunks +{r['chunks_added']} -{r['chunks_removed']} ~{r['chunks_updated']} "
        f"={r['chunks_kept']}, "
        f"parsed {r['documents_parsed']}, {r['seconds']['total']:.2f} s",
    ]
    if policy.tokenizer == "estimate" and r["chunks_added"]:
        lines.append(
            "hint: n_tokens is the estimate, which errs high (up to 2x cl100k: smaller "
            f"chunks, more to embed); `chunkmill stats {out} --tokenizer "
            "tiktoken:cl100k_base` shows real counts, `--tokenizer tiktoken:cl100k_base` "
            "packs by them"
        )
    for line in lines:
        click.echo(f"chunkmill run: {line}", err=True)


def _not_an_input(out: Path, inputs) -> None:
    """--out may lie inside an INPUT folder (it is skipped when listing), but may not be one:
    its runs would be written among the documents."""
    here = out.resolve()
    for item in inputs:
        if "://" not in item and Path(item).resolve() == here:
            raise click.UsageError(
                f"--out {out}: is INPUT {item} itself; write the runs to another folder"
            )


def _a_run_store_or_empty(out: Path) -> None:
    """--out must be missing, empty (hidden files aside) or hold a run store: runs are not
    written among someone's own files."""
    from chunkmill.pipeline import runstore

    if not out.is_dir() or runstore.is_store(out):
        return
    if any(not p.name.startswith(".") for p in out.iterdir()):
        raise click.UsageError(
            f"--out {out}: holds files but no runs of chunkmill run; give an empty or new folder"
        )


def _writable(out: Path) -> None:
    """--out must be a folder we can create and write in: say so in one line if not."""
    if out.exists() and not out.is_dir():
        raise click.UsageError(f"--out {out}: is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".chunkmill-write-test.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise click.UsageError(f"--out {out}: cannot write there: {exc.strerror or exc}") from exc


def _names(pairs: tuple[str, ...], inputs: tuple[str, ...]) -> dict[str, str]:
    """--name LABEL=PATH options as {PATH: LABEL}; PATH must be one of the INPUTs."""
    out: dict[str, str] = {}
    for pair in pairs:
        label, sep, path = pair.partition("=")
        if not sep or not label or not path:
            raise click.BadParameter(f"{pair!r}: use LABEL=PATH", param_hint="--name")
        if path not in inputs:
            raise click.BadParameter(
                f"{path!r} is not one of the INPUTs ({', '.join(inputs)})", param_hint="--name"
            )
        out[path] = label
    return out


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

    policy = _policy(policy_file, **flags)
    for name in ("documents", "blocks"):
        if not (blocks_dir / f"{name}.parquet").exists():
            raise click.UsageError(
                f"{blocks_dir} has no {name}.parquet: run `chunkmill blocks` first"
            )
    from chunkmill.pipeline.runstore import parquet_files

    total = parquet_files.num_rows(blocks_dir, "documents")
    with _progress(total, "chunks") as bar:
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
    from chunkmill.pipeline import sources
    from chunkmill.pipeline.input_labels import input_labels

    _not_an_input(out, inputs)
    _writable(out)
    opts = InputOptions(**values)
    selection = sources.Selection.of(opts, out)
    with _input_errors():
        labels = input_labels(list(inputs), _names(opts.names, inputs))
        plan = sources.plan(list(inputs), selection, labels)
        with _progress(len(plan), "blocks") as bar:
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
    _finish("blocks", [*unmatched, summary.blocks_line(out)], summary.documents)


for _command in (
    search_cli.COMMANDS + query_cli.COMMANDS + consumer_cli.COMMANDS + sync_cli.COMMANDS
):
    main.add_command(_command)
main.add_command(report_cli.report_cmd)


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
