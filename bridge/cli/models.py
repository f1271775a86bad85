"""``bridge models``: the robot names MODEL accepts."""

from __future__ import annotations

import typer

from bridge.cli.app import app

__all__ = ["models"]


@app.command()
def models() -> None:
    """List the robot names MODEL accepts (from the installed icub-models / example-robot-data)."""
    from bridge.robots import robot_names, robot_path

    for name in robot_names():
        typer.echo(f"{name}\t{robot_path(name)}")
