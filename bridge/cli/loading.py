"""Loading the model a command names (any kind of the format table, :mod:`bridge.model.formats`):
the options that select it (:class:`~bridge.cli.options.LoadOptions`), warnings kept for printing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from bridge.cli.app import fail
from bridge.cli.options import LoadOptions

if TYPE_CHECKING:
    from pathlib import Path

    from bridge.model.model import Model

__all__ = ["LoadOptions", "load_model", "model_inputs", "print_warnings", "split"]


def split(value: str | None) -> list[str] | None:
    """The names of a comma-separated option (blanks dropped); None for an option not given."""
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def _reader_options(options: LoadOptions) -> dict[str, Any]:
    """The loading options as the reader's keyword arguments (``load_urdf``'s): ``floating`` only
    with ``--fixed-base`` (else the format's own default: a URDF floats, an SDF file says itself)."""
    out: dict[str, Any] = {
        "base": options.base,
        "joints": split(options.joints),
        "check_inertia": not options.nonphysical,
        "mimic": options.mimic,
        "strict": options.strict,
    }
    if options.fixed:
        out["floating"] = False
    return out


def load_model(model: str, options: LoadOptions) -> tuple[Model, Path, list[str]]:
    """Resolve and load a model of any kind of the format table (by its root element): (model,
    path, warning messages). BridgeErrors propagate (the caller turns them into exit 2), with a hint
    at the option that avoids them; loading options given for a format that takes none are refused
    (exit 2) rather than ignored; warnings are returned, never raised."""
    import warnings

    from bridge.backends.files import options_refused
    from bridge.backends.registry import importer
    from bridge.errors import BridgeWarning, InertiaError, UnsupportedError
    from bridge.model.formats import format_named, input_kind
    from bridge.robots import resolve_model_path

    path = resolve_model_path(model)
    fmt = format_named(input_kind(path))
    if not fmt.options and options.given():
        raise fail(options_refused(fmt, options.given(), str(path)))
    kwargs = _reader_options(options) if fmt.options else {}
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", BridgeWarning)
            loaded = importer(fmt.name)(path, **kwargs)
    except InertiaError as exc:
        if not fmt.options:
            raise
        raise InertiaError(f"{exc} (without --strict it loads with a warning)") from None
    except UnsupportedError as exc:
        if fmt.options and "mimic" in str(exc):
            raise UnsupportedError(
                f"{str(exc).split('; ')[0]} (use --mimic independent or coupled)"
            ) from None
        raise
    messages = [str(w.message) for w in record if issubclass(w.category, BridgeWarning)]
    return loaded, path, messages


def model_inputs(model: str | None) -> list[Path]:
    """The files a command reads for MODEL (None: every robot of ``bridge models``): the model file
    and the files it names (MJCF includes, meshes), which no output file may replace; nothing for
    a MODEL that does not resolve (loading it then says why)."""
    from bridge._files import referenced_files
    from bridge.errors import BridgeError
    from bridge.robots import resolve_model_path, robot_entries

    if model is None:
        return [entry.path for entry in robot_entries()]
    try:
        path = resolve_model_path(model)
    except BridgeError:
        return []
    return [path, *referenced_files(path)]


def print_warnings(messages: list[str]) -> None:
    """Each message as a ``warning:`` line on stderr."""
    for message in messages:
        typer.echo(f"warning: {message}", err=True)
