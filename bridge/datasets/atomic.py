"""Files written atomically: a temporary file in the target's folder, fsync, then a rename.

:func:`atomic_output` is this package's one way of writing a file, so that it can be swapped for a
shared helper of the same contract (the command line's, once it has one):

* nothing is ever half-written: the data go to a temporary file beside the target (same file
  system), which is flushed to disk and renamed into place only when the writer finished without
  an error (the folder is synced too); on any error the temporary file is removed;
* an existing file is replaced only with ``force`` (otherwise the target is created exclusively:
  a file that appeared meanwhile is not overwritten either);
* a file given as an input is never the output, even with ``force``.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bridge.errors import DatasetError

__all__ = ["atomic_output", "check_output"]


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output(path: Path, force: bool = False, inputs: Sequence[Path] = ()) -> None:
    """Raise :class:`~bridge.errors.DatasetError` if ``path`` may not be written: it is one of
    ``inputs``, a directory, in a folder that does not exist, or exists without ``force``."""
    path = Path(path)
    for source in inputs:
        if _same(path, Path(source)) or path.resolve() == Path(source).resolve():
            raise DatasetError(f"{path}: the output is the input file {source}; write to another file")
    if path.is_dir():
        raise DatasetError(f"{path} is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise DatasetError(f"{path}: folder {str(parent)!r} does not exist")
    if path.exists() and not force:
        raise DatasetError(f"{path} exists; add --force (force=True) to replace it")


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # (some file systems cannot open or sync a folder)
        _fsync(folder)


@contextmanager
def atomic_output(path: Path | str, force: bool = False, inputs: Sequence[Path | str] = ()) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write to; on success it becomes ``path`` (module
    docstring). Raises :class:`~bridge.errors.DatasetError` when ``path`` may not be written
    (:func:`check_output`) or cannot be moved into place."""
    path = Path(path)
    check_output(path, force, [Path(p) for p in inputs])
    parent = path.parent if str(path.parent) else Path(".")
    tmp = parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        yield tmp
        try:
            if not tmp.exists():  # pragma: no cover - a writer that wrote nothing
                tmp.touch()
            _fsync(tmp)
            if force:
                os.replace(tmp, path)
            else:
                _create_exclusively(tmp, path)
            _fsync_dir(parent)
        except OSError as exc:
            raise DatasetError(f"{path}: cannot write ({exc.strerror or exc})") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _create_exclusively(tmp: Path, path: Path) -> None:
    """Move ``tmp`` to ``path`` unless ``path`` exists (a hard link, then the temporary name
    removed; where hard links are not supported, an exclusive placeholder replaced)."""
    try:
        os.link(tmp, path)
        return
    except FileExistsError:
        raise DatasetError(f"{path} exists; add --force (force=True) to replace it") from None
    except OSError:
        pass
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        raise DatasetError(f"{path} exists; add --force (force=True) to replace it") from None
    os.close(fd)
    os.replace(tmp, path)
