"""Loading the model a command names: the options that select it, warnings kept for printing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer

from bridge.cli.app import fail

if TYPE_CHECKING:
    from pathlib import Path

    from bridge.model.model import Model

__all__ = ["LoadOptions", "load_model", "mimic_mode", "model_inputs", "print_warnings", "split"]

_MIMIC_MODES = ("independent", "coupled", "error")


def split(value: str | None) -> list[str] | None:
    """The names of a comma-separated option (blanks dropped); None for an option not given."""
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def mimic_mode(mimic: str | None, mimic_independent: bool) -> str | None:
    """``--mimic`` (or the hidden ``--mimic-independent``) checked; exit 2 for another value."""
    if mimic_independent:
        return "independent"
    if mimic is not None and mimic not in _MIMIC_MODES:
        raise fail(f"--mimic must be independent, coupled or error, not {mimic!r}")
    return mimic


@dataclass(frozen=True)
class LoadOptions:
    """How to load the model: ``--base``, ``--joints``, ``--fixed-base``, ``--mimic``,
    ``--allow-nonphysical``, ``--strict``."""

    base: str | None = None
    joints: str | None = None
    fixed: bool = False
    mimic: str | None = None
    nonphysical: bool = False
    strict: bool = False


def load_model(model: str, options: LoadOptions) -> tuple[Model, Path, list[str]]:
    """Resolve and load a model: (model, path, warning messages). BridgeErrors propagate (the
    caller turns them into exit 2), with a hint at the option that avoids them; warnings are
    returned, never raised."""
    import warnings

    from bridge.backends.registry import READERS, file_kind, importer
    from bridge.errors import BridgeWarning, InertiaError, UnsupportedError
    from bridge.robots import resolve_model_path

    path = resolve_model_path(model)
    kind = file_kind(path) or "urdf"  # another root element: load_urdf says what is wrong
    if kind not in READERS:
        return _load_mjcf(path, options)
    # a URDF floats unless --fixed-base; an SDF file says itself (a joint to the world: fixed)
    floating = False if options.fixed else (True if kind == "urdf" else None)
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always", BridgeWarning)
            loaded = importer(kind)(
                path,
                base=options.base,
                joints=split(options.joints),
                floating=floating,
                check_inertia=not options.nonphysical,
                mimic=options.mimic,
                strict=options.strict,
            )
    except InertiaError as exc:
        raise InertiaError(f"{exc} (without --strict it loads with a warning)") from None
    except UnsupportedError as exc:
        if "mimic" in str(exc):
            raise UnsupportedError(
                f"{str(exc).split('; ')[0]} (use --mimic independent or coupled)"
            ) from None
        raise
    messages = [str(w.message) for w in record if issubclass(w.category, BridgeWarning)]
    return loaded, path, messages


def _load_mjcf(path: Path, options: LoadOptions) -> tuple[Model, Path, list[str]]:
    """An MJCF file through the registry's MJCF reader (MuJoCo's compiler, ``bridge.load_mjcf``);
    the URDF options are refused (exit 2) rather than ignored."""
    import warnings

    from bridge.backends.registry import importer
    from bridge.errors import BridgeWarning

    urdf_only = {
        "--base": options.base,
        "--joints": options.joints,
        "--fixed-base": options.fixed,
        "--mimic": options.mimic,
        "--allow-nonphysical": options.nonphysical,
        "--strict": options.strict,
    }
    given = [name for name, value in urdf_only.items() if value is not None and value is not False]
    if given:  # (an empty --base or --joints too: for a URDF they mean something)
        verb = "apply" if len(given) > 1 else "applies"
        raise fail(
            f"{path} is an MJCF file: {', '.join(given)} {verb} to URDF files only (and to SDFormat files)"
        )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", BridgeWarning)
        loaded = importer("mjcf")(path)
    return loaded, path, [str(w.message) for w in record if issubclass(w.category, BridgeWarning)]


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
