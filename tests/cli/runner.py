"""What the command-line tests share: the models folder and the command run through typer's CliRunner."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from bridge.cli import app

MODELS = Path(__file__).resolve().parents[2] / "models"
_runner = CliRunner()


def run(*args: str):
    """``bridge ARGS`` in a 200-column environment; the click Result."""
    return _runner.invoke(app, list(args), env={"COLUMNS": "200"})
