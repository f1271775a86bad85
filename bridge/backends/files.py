"""A model file read, whatever its format: :func:`load_model`, through the format table.

The file's kind comes from its root element (:func:`bridge.model.formats.file_kind`; a file whose
root no format claims is read as URDF, whose reader says what is wrong), its reader from the table
through the registry (:func:`bridge.backends.registry.importer`: bridge's own reader, or the library
record offering it, with the extra named when the library is missing). It lives with the backends,
not in :mod:`bridge.model`, because a reader may be a backend's (MJCF: MuJoCo's compiler): the
neutral layers name such a function as a string but never import it.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge._files import check_model_file, file_status
from bridge.backends.registry import importer
from bridge.errors import ModelError, ModelFileNotFoundError
from bridge.model import formats

if TYPE_CHECKING:
    from bridge.model.model import Model

__all__ = ["load_model", "options_refused"]


def options_refused(fmt: formats.Format, given: list[str], where: str) -> str:
    """The message refusing the loading options ``given`` (their names) for a file of a format that
    takes none (``fmt.options`` False): the formats they apply to named."""
    takers = [f.title for f in formats.FORMATS.values() if f.options]
    verb = "apply" if len(given) > 1 else "applies"
    also = f" (and to {' and '.join(takers[1:])} files)" if len(takers) > 1 else ""
    return f"{where} is read as {fmt.title}: {', '.join(given)} {verb} to {takers[0]} files only{also}"


def load_model(path: str | os.PathLike, **kwargs: Any) -> Model:
    """Load a model file of any kind of the format table (URDF, SDFormat, MJCF, and any format
    registered with :func:`bridge.model.formats.register_format`), chosen by its root element
    (``<robot>``, ``<sdf>``, ``<mujoco>``, ...), whatever its name ends with.

    ``kwargs`` are the loading options of :func:`bridge.load_urdf` (``base``, ``joints``,
    ``floating``, ``locked``, ``check_inertia``, ``mimic``, ``strict``), for the formats taking them
    (URDF, SDFormat); for another one (MJCF) they are refused by name, not ignored.
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ModelFileNotFoundError(f"load_model: expected a file path, got {path!r}")
    p = Path(path)
    if file_status(p, "model file") == "missing":
        raise ModelFileNotFoundError(f"{p}: no such file")
    check_model_file(p)  # (a regular file, readable, not huge)
    fmt = formats.format_named(formats.input_kind(p))
    if kwargs and not fmt.options:
        raise ModelError(options_refused(fmt, sorted(kwargs), str(p)))
    read = importer(fmt.name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = read(p, **kwargs)
    for w in caught:  # issued again one frame up: at the caller's line
        warnings.warn(w.message, w.category, stacklevel=2)
    return model
