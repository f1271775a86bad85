"""Files written atomically: a temporary file in the target's folder, fsync, then a rename.

:func:`atomic_output` is this package's one way of writing a file: bridge's shared atomic writer
(:func:`bridge._files.atomic_file`, the command line's too) with the datasets' error type:

* nothing is ever half-written: the data go to a temporary file beside the target (same file
  system), which is flushed to disk and renamed into place only when the writer finished without
  an error (the folder is synced too); on any error the temporary file is removed;
* an existing file is replaced only with ``force`` (otherwise the target is created exclusively:
  a file that appeared meanwhile is not overwritten either);
* a file given as an input is never the output, even with ``force``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bridge import _files as files
from bridge.errors import DatasetError, FileAccessError

__all__ = ["atomic_output", "check_output"]

_HINT = "add --force (force=True) to replace it"


def _inputs(inputs: Sequence[Path | str]) -> list[str]:
    return [str(p) for p in inputs]


def check_output(path: Path, force: bool = False, inputs: Sequence[Path] = ()) -> None:
    """Raise :class:`~bridge.errors.DatasetError` if ``path`` may not be written (the checks of
    :func:`bridge._files.check_output`: one of ``inputs``, not a regular file, in a folder that does
    not exist, or existing without ``force``)."""
    try:
        files.check_output(path, replace=force, inputs=_inputs(inputs), what="output", hint=_HINT)
    except FileAccessError as exc:
        raise DatasetError(str(exc)) from None


@contextmanager
def atomic_output(path: Path | str, force: bool = False, inputs: Sequence[Path | str] = ()) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write to; on success it becomes ``path``
    (:func:`bridge._files.atomic_file`). Raises :class:`~bridge.errors.DatasetError` when ``path``
    may not be written or cannot be moved into place."""
    try:
        with files.atomic_file(path, replace=force, inputs=_inputs(inputs), what="output", hint=_HINT) as tmp:
            yield Path(tmp)
    except FileAccessError as exc:
        raise DatasetError(str(exc)) from None
