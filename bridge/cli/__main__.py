"""``python -m bridge.cli``: the ``bridge`` command."""

from bridge.cli import app

app()
