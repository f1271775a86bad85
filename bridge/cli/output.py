"""Where the commands write: output files checked before any work, the rich console and tables."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bridge.cli.app import fail

__all__ = ["check_output", "console", "table", "write"]


def check_output(path: Path | None, option: str, force: bool, inputs: Iterable[Path] = ()) -> None:
    """Fail (exit 2) before any work if ``path`` cannot be written: its directory does not exist,
    it is a directory, a FIFO or a device, it is one of the command's ``inputs`` (even with
    ``--force``: nothing the user gave is overwritten), it exists and ``--force`` was not given, or
    its directory is not writable (:func:`bridge._files.check_output`)."""
    if path is None:
        return
    from bridge._files import check_output as check
    from bridge.errors import BridgeError

    try:
        check(path, replace=force, inputs=inputs, what=option, hint="add --force to replace it")
    except BridgeError as exc:
        raise fail(exc) from None


def write(path: Path, text: str, option: str, force: bool, inputs: Iterable[Path] = ()) -> None:
    """Write ``text`` (UTF-8, whatever the locale) to ``path`` atomically: a temporary file in its
    folder, fsynced, renamed over it (``--force``) or linked to its name, which fails if the name
    was taken meanwhile; on any failure the old file is as it was (exit 2 with one line)."""
    from bridge._files import write_atomic
    from bridge.errors import BridgeError

    try:
        write_atomic(path, text, replace=force, inputs=inputs, what=option, hint="add --force to replace it")
    except BridgeError as exc:
        raise fail(exc) from None


def console() -> Any:
    """A rich console: the terminal's width, or (piped) as wide as the tables need (nothing cut).

    The commands call it as ``bridge.cli._console()``, so that tests can swap it."""
    from rich.console import Console

    out = Console()
    if not out.is_terminal:
        out = Console(width=max(out.width, 200))
    return out


def table(title: str, first: str, columns: list[str], caption: str | None = None) -> Any:
    """A compact table (one space between columns): the first column never truncated (folded if it
    has to), numbers right-aligned."""
    from rich import box
    from rich.table import Table

    out = Table(
        title=title,
        caption=caption,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        title_justify="left",
    )
    out.add_column(first, no_wrap=True, overflow="fold")
    for col in columns:
        out.add_column(col, justify="right", overflow="fold")
    return out
