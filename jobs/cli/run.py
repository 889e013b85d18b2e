"""``chunkmill run``: INPUT into a new published run of DIR, with the checks of DIR
before it and the closing lines after it."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import click

from chunkmill.jobs import errors
from chunkmill.jobs.cli.common import (
    POLICY_FIELDS,
    POLICY_FILE,
    RUN_OUT,
    Progress,
    input_errors,
    names_of,
    not_an_input,
    policy_of,
    writable,
)
from chunkmill.jobs.options import RunOptions, click_options, policy_options


@click.command("run")
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
    from chunkmill.pipeline.runstore import objectstore

    if log_json:
        errors.json_mode()
    policy = policy_of(policy_file, **{k: values.pop(k) for k in POLICY_FIELDS})
    options = {**values, "names": names_of(values["names"], inputs)}
    if objectstore.is_uri(out):
        _run(inputs, out, policy, options, log_json)
        return
    not_an_input(out, inputs)
    _a_run_store_or_empty(out)
    with _made_for_this_run(out):
        writable(out)
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
    from chunkmill.pipeline import runstore
    from chunkmill.pipeline.runstore import objectstore
    from chunkmill.pipeline.runstore.guards import Refused

    log = RunLog(as_json=log_json)
    bar = None if log_json else Progress("run")  # a bar label is not a JSON line
    with input_errors():
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
