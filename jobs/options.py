"""The options of a run, declared once.

Each field of ``InputOptions`` (how INPUT is read: ``blocks`` and ``run``) and
``RunOptions`` (those and how a run goes) is one option: its name, type, default, flag and
help, in one place. ``click_options`` makes a command's click options of the fields,
``chunkmill.run`` takes the fields as keywords, and a run (``run_job.RunJob``) carries the
object. ``policy_options`` does the same for the Policy's fields: one flag each, with the
help its field declares and the default the Policy has.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any

import click

from chunkmill.pipeline.doc_limits import (
    DEFAULT_DOC_MEMORY_MB,
    DEFAULT_DOC_TIMEOUT,
    DEFAULT_MAX_BYTES,
)
from chunkmill.pipeline.policy import CHOICES, Policy
from chunkmill.pipeline.table_names import OPTIONAL_TABLES

# The block parser backends (pipeline.parse.BACKENDS, named here so that --help does not
# import the parsers; a test checks that the two agree). The first is the default.
PARSERS = ("pyromark", "markdown-it")


def option(default: Any, help: str, flag: str | None = None, **click_kwargs) -> Any:
    """A field that is also a command-line option: ``flag`` (default ``--field-name``),
    ``help``, and what else click's option takes (type, metavar, multiple, ...)."""
    return field(default=default, metadata={"help": help, "flag": flag, "click": click_kwargs})


def _a_number(ctx, param, value: float) -> float:
    """FloatRange lets nan through (every comparison with it is false)."""
    if value != value:
        raise click.BadParameter("nan is not a number of seconds", ctx, param)
    return value


@dataclass(frozen=True)
class InputOptions:
    """How INPUT is read: which files, which table columns, which parser, what limits."""

    include: tuple[str, ...] = option(
        (),
        "Only read paths (relative to INPUT) matching GLOB; repeatable. '*' also matches '/', "
        "so '*.md' means every .md file; '**/x' matches 'x' at the top too, and a folder's "
        "name matches everything below it.",
        multiple=True,
        metavar="GLOB",
    )
    exclude: tuple[str, ...] = option(
        (),
        "Skip paths matching GLOB; repeatable. Hidden folders, links to folders and --out "
        "inside INPUT are always skipped (counted by reason in the summary).",
        multiple=True,
        metavar="GLOB",
    )
    names: Any = option(
        (),
        "With several INPUTs, paths and doc ids start with each input's label (by default "
        "its folder's name; two folders with one label are refused): label INPUT PATH as "
        "LABEL instead. Repeatable. One INPUT keeps plain paths. In Python: a dict "
        "{input: label}.",
        flag="--name",
        multiple=True,
        metavar="LABEL=PATH",
    )
    parser: str = option(
        PARSERS[0],
        "Block parser: pyromark (chunkmill's Rust core on pulldown-cmark) or markdown-it "
        "(markdown-it-py, pure Python, the reference). Both find the same blocks; a run "
        "reuses stored blocks only when they were made by the same parser.",
        type=click.Choice(PARSERS),
        show_default=True,
    )
    text_column: str | None = option(
        None,
        "For Parquet/JSONL input: the column holding the document text (default: text, "
        "content, body or markdown).",
    )
    id_column: str | None = option(
        None,
        "For Parquet/JSONL input: the column naming each document (default: path, id, "
        "doc_id, url or name; else the row number).",
    )
    max_bytes: int = option(
        DEFAULT_MAX_BYTES,
        "Documents larger than this are rejected unread (reason too_large).",
        type=click.IntRange(min=1),
        show_default=True,
    )
    follow_symlinks: bool = option(
        False,
        "Read symbolic links that point outside the input folder (by default they are "
        "rejected, reason outside_root). Links to folders are never followed.",
    )


@dataclass(frozen=True)
class RunOptions(InputOptions):
    """How a run goes: reuse, workers and engine, worker limits, guards. A run's policy is
    not among them: it changes the chunks (``chunkmill.Policy``)."""

    full: bool = option(
        False,
        "Parse and pack every document again, reusing nothing from the previous run (the "
        "change set is still relative to it). Also starts a new ledger when DIR's is damaged.",
    )
    verify: bool = option(
        False,
        "Read and hash every input file to find what changed. Without it, a file whose size, "
        "mtime, ctime and inode are as the published run recorded them (and that was last "
        "changed 2 s or more before that run looked) is taken as unchanged unread.",
    )
    keep: int = option(
        3,
        "Run folders to keep: the N most recent published runs that changed a chunk (added, "
        "removed or updated one), and the published run.",
        type=click.IntRange(1),
        show_default=True,
    )
    tables: tuple[str, ...] = option(
        (),
        "Also write TABLE: blocks (every structural block of every document) or postings "
        "(the BM25 terms of every chunk); repeatable. Without it a run writes documents, "
        "chunks and rejects, and `search`, `stats`, `check`, `report` and `sql` make the "
        "blocks and postings they read in memory. Worth it where those are queried often.",
        flag="--table",
        multiple=True,
        metavar="TABLE",
        type=click.Choice(OPTIONAL_TABLES),
    )
    engine: str = option(
        "local",
        "local: a process pool on this machine; ray: Ray tasks on a Ray cluster (pip install "
        "'chunkmill[ray]'). Same output, same reuse of unchanged documents.",
        type=click.Choice(["local", "ray"]),
        show_default=True,
    )
    ray_address: str | None = option(
        None,
        "Ray cluster to use with --engine ray: HOST:PORT, ray://HOST:PORT, or auto for the "
        "cluster last started on this machine (default: RAY_ADDRESS, else a new local Ray "
        "with --workers CPUs).",
        metavar="ADDR",
    )
    workers: int | None = option(
        None,
        "Worker processes for parsing and packing [the number of CPUs]. The output is the "
        "same for any number.",
        type=click.IntRange(1),
        short="-j",
    )
    doc_timeout: float = option(
        DEFAULT_DOC_TIMEOUT,
        "A worker busy longer than this on one batch is stopped; the batch is run again one "
        "document at a time and the document that overruns is rejected (timeout).",
        type=click.FloatRange(min=0, min_open=True),
        callback=_a_number,
        show_default=True,
        metavar="SECONDS",
    )
    doc_memory: int = option(
        DEFAULT_DOC_MEMORY_MB,
        "Likewise for a worker whose resident memory grows past MB (too_much_memory); a "
        "worker that dies (a crash) rejects its document as crashed.",
        type=click.IntRange(min=64),
        show_default=True,
        metavar="MB",
    )
    dry_run: bool = option(
        False, "Do all the work and print what would change; publish and record nothing."
    )
    allow_mass_delete: bool = option(
        False,
        "Publish even a run that read no document (refused otherwise, exit 1), or that "
        "removes more than --max-removed of the published chunks (refused otherwise, exit 4).",
    )
    max_removed: float = option(
        0.5,
        "Share of the published chunks a run may remove before it is refused.",
        type=click.FloatRange(0, 1),
        show_default=True,
        metavar="SHARE",
    )
    new_policy: bool = option(
        False,
        "Accept a policy (or chunkmill chunker version) that differs from the published "
        "run's: it changes every chunk id, except a new --link-template alone, which keeps "
        "them and updates every url. Refused otherwise (exit 4), naming the fields.",
    )

    def __post_init__(self) -> None:
        # from Python: one name or several, each an optional table
        tables = (self.tables,) if isinstance(self.tables, str) else tuple(self.tables)
        unknown = [t for t in tables if t not in OPTIONAL_TABLES]
        if unknown:
            raise ValueError(
                f"tables: no optional table {', '.join(map(repr, unknown))} "
                f"(they are {', '.join(OPTIONAL_TABLES)})"
            )
        object.__setattr__(self, "tables", tuple(dict.fromkeys(tables)))


def of(cls: type, values: dict[str, Any]) -> Any:
    """``cls(**values)``, or a TypeError naming the unknown options and the known ones."""
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise TypeError(
            f"unknown option(s): {', '.join(unknown)} (the options: {', '.join(sorted(known))})"
        )
    return cls(**values)


def click_options(cls: type, only: tuple[str, ...] | None = None):
    """A decorator adding one click option per field of ``cls`` (or of the fields ``only``
    names), in field order; a command gets each value under the field's name."""
    return _decorator(cls, only, _click_option)


def _decorator(cls: type, only: tuple[str, ...] | None, make):
    """A decorator adding ``make(field)`` for the fields of ``cls`` (``only``: these)."""
    specs = [s for s in fields(cls) if only is None or s.name in only]

    def decorate(f):
        for spec in reversed(specs):
            f = make(spec)(f)
        return f

    return decorate


def _click_option(spec: dataclasses.Field):
    meta = spec.metadata
    kwargs = dict(meta["click"])
    decls = [meta["flag"] or "--" + spec.name.replace("_", "-")]
    short = kwargs.pop("short", None)
    if short:
        decls.append(short)
    if spec.type in ("bool", bool):
        kwargs["is_flag"] = True
    if not kwargs.get("multiple"):
        kwargs.setdefault("default", spec.default)
    return click.option(*decls, spec.name, help=meta["help"], **kwargs)


def policy_options(only: tuple[str, ...] | None = None):
    """A decorator adding one flag per Policy field (or per field ``only`` names): its
    help from the field, its default shown as the Policy has it. A flag left out is None,
    so it does not override ``--policy FILE`` (the command resolves the policy)."""
    return _decorator(Policy, only, _policy_flag)


def _policy_flag(spec: dataclasses.Field):
    name, default = spec.name, spec.default
    flag = "--" + name.replace("_", "-")
    help_text = f"{spec.metadata['help']} [{_shown(default)}]"
    if isinstance(default, bool):
        return click.option(f"{flag}/--no-{flag[2:]}", name, default=None, help=help_text)
    kwargs: dict[str, Any] = {"default": None, "help": help_text}
    if name in CHOICES:
        kwargs["type"] = click.Choice(CHOICES[name])
    elif isinstance(default, tuple):
        kwargs["metavar"] = "KEY,..."
    elif isinstance(default, int):
        kwargs["type"] = int
    else:
        kwargs["metavar"] = spec.metadata.get("metavar")
    return click.option(flag, name, **kwargs)


def _shown(default: Any) -> str:
    """A Policy default as --help shows it."""
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, tuple):
        return ",".join(default) or "none"
    return str(default) if default != "" else "none"
