"""Where the commands write: output files checked before any work, the rich console and tables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from bridge.cli.app import fail

__all__ = ["check_output", "console", "table", "write"]


def check_output(path: Path | None, option: str, force: bool) -> None:
    """Fail (exit 2) before any work if ``path`` cannot be written: its directory does not exist,
    it is a directory, or it exists and ``--force`` was not given."""
    if path is None:
        return
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise fail(f"{option} {str(path)!r} is a directory; give a file name")
    if not parent.is_dir():
        raise fail(f"{option} {str(path)!r}: directory {str(parent)!r} does not exist")
    if path.exists() and not force:
        raise fail(f"{option} {str(path)!r} exists; add --force to replace it")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise fail(f"{option} {str(path)!r} is not writable")
    _probe(path, option)


def _probe(path: Path, option: str) -> None:
    """Fail (exit 2) unless ``path`` opens for writing (what permissions do not tell: ``/proc``, a
    read-only file system); the file is left as it was (created by the probe: removed)."""
    existed = path.exists()
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise fail(f"{option} {str(path)!r}: cannot write ({exc.strerror or exc})") from None
    if not existed:
        path.unlink(missing_ok=True)


def write(path: Path, text: str, option: str) -> None:
    """Write ``text`` to ``path`` (exit 2 with one line if it cannot be written)."""
    try:
        path.write_text(text)
    except OSError as exc:
        raise fail(f"{option} {str(path)!r}: cannot write ({exc.strerror or exc})") from None


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
