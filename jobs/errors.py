"""How the command line fails: one line naming the thing and the cause, never a traceback
(unless --debug or CHUNKMILL_DEBUG=1); exit 2 for usage and configuration errors, 1 for
anything unexpected, 130 after Ctrl-C (143 after SIGTERM). With --log-json every line on
stderr is a JSON object, errors included, and the last one is the summary."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import warnings

import click

STATE = {"json": False, "debug": False}  # set by the group and by `run --log-json`


class EngineError(Exception):
    """The engine cannot run here (Ray missing, or the cluster unreachable). Declared here,
    not in ray_job, so that catching it does not import Ray's side of the run."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the run stops, records itself failed, exits 143."""

    code = 143


def emit(command: str, message: str, **fields) -> None:
    """One line on stderr: ``chunkmill COMMAND: message``, or a JSON object."""
    if STATE["json"]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = json.dumps(
            {
                "ts": stamp,
                "stage": fields.pop("stage", "error"),
                "command": command,
                "message": message,
                **fields,
            },
            default=str,
        )
    else:
        line = (
            f"chunkmill: {message}" if command == "chunkmill" else f"chunkmill {command}: {message}"
        )
    click.echo(line, err=True)


def json_mode() -> None:
    """--log-json: warnings too become JSON lines."""
    STATE["json"] = True

    def show(message, category, filename, lineno, file=None, line=None):
        emit("run", str(message), stage="warning", category=category.__name__)

    warnings.showwarning = show


def _on_sigterm(signum, frame):
    raise Interrupted()


class Main(click.Group):
    """The ``chunkmill`` group: turns what escapes a command into one line and an exit code."""

    def invoke(self, ctx: click.Context):
        from chunkmill.jobs import worker

        # each invocation starts plain (a process may invoke several: tests, scripts)
        STATE.update(json=False, debug=bool(os.environ.get("CHUNKMILL_DEBUG")))
        saved = worker.STDERR, warnings.showwarning
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            return super().invoke(ctx)
        except click.exceptions.Exit:
            raise
        except BaseException as exc:
            self.fail(ctx.invoked_subcommand or "chunkmill", exc)
        finally:
            signal.signal(signal.SIGTERM, previous)
            worker.STDERR, warnings.showwarning = saved

    @staticmethod
    def fail(command: str, exc: BaseException):
        """Report ``exc`` in one line and exit, or raise it again (with --debug; SystemExit;
        `chunkmill` alone, whose help click prints)."""
        if isinstance(exc, BrokenPipeError):  # the reader of our output left (`| head`):
            # nothing went wrong here; stdout to /dev/null so the exit's flush stays quiet
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        if isinstance(exc, click.exceptions.NoArgsIsHelpError):
            raise exc  # `chunkmill` alone: click prints the help
        if isinstance(exc, click.ClickException) and not STATE["debug"]:
            # one line, as every other failure: click's own form is three (usage, a hint,
            # the error). The hint stays, shortened, after click's own parsing errors (ours
            # name the file and the cause already).
            parsing = isinstance(exc, click.UsageError) and (
                type(exc) is not click.UsageError or "No such command" in exc.message
            )
            where = "chunkmill" if command == "chunkmill" else f"chunkmill {command}"
            hint = f" (see {where} --help)" if parsing else ""
            finish(command, exc.format_message() + hint, exc.exit_code)
        if isinstance(exc, click.ClickException):
            raise exc
        if isinstance(exc, KeyboardInterrupt):
            code = getattr(exc, "code", 130)
            what = "SIGTERM" if code == 143 else "Ctrl-C"
            try:
                finish(command, f"interrupted ({what})", code)
            finally:  # the run cleaned up behind it: skip a slow interpreter teardown
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        if isinstance(exc, Exception) and not STATE["debug"]:
            message = f"error: {type(exc).__name__}: {one_line(exc)} (--debug shows where)"
            finish(command, message, 1)
        raise exc


def finish(command: str, message: str, code: int, status: str = "failed"):
    """The error line (and with --log-json the closing summary object); then exit."""
    emit(command, message, stage="error", exit_code=code)
    if STATE["json"]:
        emit(command, status, stage="summary", status=status, exit_code=code)
    sys.exit(code)


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("…" if len(text) > 300 else "")
