"""``bridge models``: the robot names MODEL accepts."""

from __future__ import annotations

import typer

from bridge.cli.app import app

__all__ = ["models"]


@app.command()
def models() -> None:
    """List the robot names MODEL accepts (from the installed icub-models / example-robot-data).

    Without those packages (a base install), says on stderr which packages provide named robots
    and the extra that installs them: pip install 'bridge-dynamics[robots]'.
    """
    from bridge.robots import robot_names, robot_path, robots_hint

    names = robot_names()
    for name in names:
        typer.echo(f"{name}\t{robot_path(name)}")
    hint = robots_hint()
    if hint:
        typer.echo(f"{'no named robots' if not names else 'note'}: {hint}", err=True)
