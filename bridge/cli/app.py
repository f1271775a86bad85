"""The ``bridge`` typer app, its exit codes and its one-line errors.

Exit status: 0 when everything agrees, 1 when engines disagree, 2 for bad input or misuse (one line
on stderr, ``error: ...``, names the problem; no traceback, no usage box), :data:`EXIT_SKIPPED` for
``check --all --fail-on-skip`` when robots were skipped and none disagreed. The commands live in
their own modules (``check``, ``info``, ``convert``, ``convert_states``, ``models``) and register
themselves on :data:`app`; heavy imports happen inside them, so ``bridge --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.2x carries its own copy of click
    from typer._click import exceptions as _click_errors
except ImportError:  # pragma: no cover - older typer on click
    from click import exceptions as _click_errors

__all__ = ["EXIT_CODES", "EXIT_SKIPPED", "OUTPUT_FILES", "app", "fail"]

#: exit status of ``check --all --fail-on-skip`` when robots were skipped (and none disagreed)
EXIT_SKIPPED = 3
#: every exit status of the command line and its meaning (the reference, docs/cli.md, lists them)
EXIT_CODES = {
    0: "success: every engine agrees (check), or the command did what was asked",
    1: "check: engines disagree beyond --rtol (with --native: the libraries' own loaders differ from "
    "bridge's model; the findings say why); also an aborted command",
    2: "bad input or misuse (unreadable model, unknown name, options that do not combine): one "
    "`error: ...` line on stderr, no traceback",
    EXIT_SKIPPED: "check --all --fail-on-skip: robots were skipped (they do not load) and none disagreed",
}


#: how every command writes a file (``convert -o``, ``check --json``); the reference lists it
OUTPUT_FILES = (
    "Output files are written atomically: to a temporary file in the target's folder, fsynced, then "
    "renamed over the target, so that a reader never sees half a file and a failure (a full disk, the "
    "file-size limit, an interrupt) leaves the old file as it was and no temporary file behind. "
    "Without `--force` the file is created exclusively: an existing file is refused before any work, "
    "and of two runs writing the same new file at once one succeeds, the other exits 2. With "
    "`--force` an existing file is replaced (a symbolic link is written through, the file keeps its "
    "permissions). Never replaced, even with `--force`: an input of the same command (the model "
    "file and the files it names, such as an MJCF model's includes and meshes; also through a "
    "symbolic link, a hard link or another spelling of the path), and anything that is not a regular "
    "file (a directory, a FIFO, a device). "
    "Files are UTF-8 whatever the locale."
)


def _one_line(message: object) -> str:
    return " ".join(str(message).split())


def _printable_anywhere() -> None:
    """Under a locale that cannot encode a name (``LC_ALL=C`` with a non-ASCII link or path, a
    latin-1 terminal), print it with backslash escapes rather than fail with UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # (a closed or detached stream)
                reconfigure(errors="backslashreplace")


class _OneLineErrors(TyperGroup):
    """The command group, with every usage error (bad option value, missing option, unknown
    command) and every stray :class:`bridge.BridgeError` printed as one ``error:`` line, exit 2."""

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:  # fmt: skip
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        from bridge.errors import BridgeError

        _printable_anywhere()

        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _click_errors.NoArgsIsHelpError as exc:
            exc.show()  # `bridge` alone (or a group without a command): the help, as usual
            sys.exit(exc.exit_code)
        except _click_errors.ClickException as exc:
            command = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "bridge"
            typer.echo(
                f"error: {command}: {_one_line(exc.format_message())} (see {command} --help)", err=True
            )
            sys.exit(2)
        except typer.Abort:
            typer.echo("error: aborted", err=True)
            sys.exit(1)
        except BridgeError as exc:
            typer.echo(f"error: {_one_line(exc)}", err=True)
            sys.exit(2)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    cls=_OneLineErrors,
    name="bridge",
    help="Make rigid-body dynamics agree across Pinocchio, iDynTree, Featherstone and Drake conventions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def fail(message: object, code: int = 2) -> typer.Exit:
    """Print ``error: message`` (one line) on stderr; returns the Exit to raise (status ``code``)."""
    typer.echo(f"error: {_one_line(message)}", err=True)
    return typer.Exit(code)


@app.callback()
def main() -> None:
    """bridge: convert and cross-validate rigid-body dynamics between libraries."""


@app.command()
def version() -> None:
    """Print the bridge version."""
    from bridge import __version__

    typer.echo(__version__)
