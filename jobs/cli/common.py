"""What the commands of the ``chunkmill`` command line share: the output and policy
options, the policy they resolve, input errors as usage errors, progress bars on a
terminal, and the closing lines of a stage."""

from __future__ import annotations

import dataclasses
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import click

from chunkmill.pipeline.policy import Policy, PolicyError

POLICY_FIELDS = tuple(f.name for f in dataclasses.fields(Policy))

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


def run_out(ctx, param, value: str):
    """`chunkmill run --out`: a folder, or an object-store prefix kept as the URI it is."""
    return value if "://" in value else Path(value)


RUN_OUT = click.option(
    "--out",
    "-o",
    required=True,
    callback=run_out,
    metavar="DIR",
    help="Output folder (created if missing; an existing one must be empty or hold runs), "
    "or an object-store prefix such as s3://bucket/prefix (any URI pyarrow's filesystems "
    "open).",
)


@contextmanager
def input_errors():
    """An unusable INPUT (missing, a table without a text column) is a usage error."""
    from chunkmill.pipeline.inputs import sources

    try:
        yield
    except sources.InputError as exc:
        raise click.UsageError(str(exc)) from exc


class Progress:
    """A progress bar on stderr for ``progress(done, total)`` callbacks, opened on the first
    call (only drawn on a terminal)."""

    def __init__(self, label: str):
        self.label, self.bar, self.done = label, None, 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = progress_bar(total, self.label).__enter__()
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def finish(command: str, lines: list[str], documents: int) -> None:
    for line in lines:
        click.echo(f"chunkmill {command}: {line}", err=True)
    if documents == 0:
        click.echo(f"chunkmill {command}: no document could be read from INPUT", err=True)
        sys.exit(1)


def progress_bar(total: int, label: str):
    """A progress bar on stderr, on a terminal only: elsewhere (a log file, a pipe) click
    would still print the bare label as a line among the stage lines."""
    if not sys.stderr.isatty():
        return NoBar()
    return click.progressbar(
        length=max(total, 1), label=label, file=sys.stderr, show_pos=True, show_eta=True
    )


class NoBar:
    """What progress_bar gives off a terminal: a bar that draws nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def update(self, n: int) -> None:
        pass


def policy_of(policy_file, mdx=None, **flags):
    """The policy of the flags over the file over the defaults; its tokenizer loads."""
    from chunkmill.chunking import resolve_policy

    try:
        return resolve_policy(policy_file, mdx=mdx, **flags)
    except PolicyError as exc:  # one line: "chunkmill run: invalid policy: ..."
        raise click.UsageError(str(exc)) from exc


def not_an_input(out: Path, inputs) -> None:
    """--out may lie inside an INPUT folder (it is skipped when listing), but may not be one:
    its runs would be written among the documents."""
    here = out.resolve()
    for item in inputs:
        if "://" not in item and Path(item).resolve() == here:
            raise click.UsageError(
                f"--out {out}: is INPUT {item} itself; write the runs to another folder"
            )


def writable(out: Path) -> None:
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


def names_of(pairs: tuple[str, ...], inputs: tuple[str, ...]) -> dict[str, str]:
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
