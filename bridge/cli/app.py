"""The ``bridge`` typer app, its exit codes and its one-line errors.

Exit status: 0 when everything agrees, 1 when engines disagree, 2 for bad input or misuse (one line
on stderr, ``error: ...``, names the problem; no traceback, no usage box), :data:`EXIT_SKIPPED` for
``check --all --fail-on-skip`` when robots were skipped and none disagreed. The commands live in
their own modules (``check``, ``info``, ``convert``, ``convert_states``, ``models``) and register
themselves on :data:`app`; heavy imports happen inside them, so ``bridge --help`` stays fast.
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.2x carries its own copy of click
    from typer._click import exceptions as _click_errors
except ImportError:  # pragma: no cover - older typer on click
    from click import exceptions as _click_errors

__all__ = ["EXIT_CODES", "EXIT_SKIPPED", "app", "fail"]

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


def _one_line(message: object) -> str:
    return " ".join(str(message).split())


class _OneLineErrors(TyperGroup):
    """The command group, with every usage error (bad option value, missing option, unknown
    command) and every stray :class:`bridge.BridgeError` printed as one ``error:`` line, exit 2."""

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:  # fmt: skip
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        from bridge.errors import BridgeError

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
