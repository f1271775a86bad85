"""The ``bridge`` command line (typer + rich). Heavy imports happen inside the commands."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="bridge",
    help="Make rigid-body dynamics agree across Pinocchio, iDynTree and Featherstone conventions.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def main() -> None:
    """bridge: convert and cross-validate rigid-body dynamics between libraries."""


@app.command()
def version() -> None:
    """Print the bridge version."""
    from bridge import __version__

    typer.echo(__version__)


if __name__ == "__main__":  # pragma: no cover
    app()
