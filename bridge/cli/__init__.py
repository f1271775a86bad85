"""The ``bridge`` command line (typer + rich): the app, its commands registered by their modules.

``app`` (:mod:`bridge.cli.app`) with the commands ``check`` (:mod:`bridge.cli.check`), ``info``
(:mod:`bridge.cli.info`), ``convert`` (:mod:`bridge.cli.convert`), ``convert-states``
(:mod:`bridge.cli.convert_states`), ``models`` (:mod:`bridge.cli.models`) and ``version``. Exit
status: 0 when everything agrees, 1 when engines disagree, 2 for bad input or misuse (one
``error:`` line on stderr), :data:`EXIT_SKIPPED` for ``check --all --fail-on-skip`` with skipped
robots. Heavy imports happen inside the commands. The commands get their console from ``_console``
here, so that tests can swap it.
"""

from __future__ import annotations

import sys

from bridge.cli import check, convert, convert_states, info, models  # noqa: F401  (each registers its command)
from bridge.cli.app import EXIT_SKIPPED, app
from bridge.cli.output import console as _console

__all__ = ["EXIT_SKIPPED", "_console", "app", "run"]


def run() -> None:  # pragma: no cover - console entry point alias
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
