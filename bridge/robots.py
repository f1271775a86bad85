"""Robots shipped by the installed ``icub-models`` and ``example-robot-data`` packages, by name.

Names: iCub models by their folder name (``iCubGazeboV2_5``); example-robot-data URDFs by file stem
(``talos_reduced``, ``solo12``, ``ur5_robot``); a stem that two packages of example-robot-data share
is named ``<package>/<stem>`` (``anymal_b_simple_description/anymal``). A few short aliases exist
(``talos``, ``ur5``, ``ur10``, ``ur3``, ``anymal``, ``solo``). Files are found through the packages'
own metadata, never through hard-coded paths.
"""

from __future__ import annotations

import functools
import importlib.metadata as metadata
from pathlib import Path

from bridge.errors import UnknownNameError

__all__ = ["ALIASES", "resolve_model_path", "robot_names", "robot_path", "robot_source"]

ALIASES = {
    "talos": "talos_reduced",
    "ur3": "ur3_robot",
    "ur5": "ur5_robot",
    "ur10": "ur10_robot",
    "anymal": "anymal_c_simple_description/anymal",
    "solo": "solo12",
    "go1": "go1",
    "icubgazebo": "iCubGazeboV2_5",
}


@functools.lru_cache(maxsize=1)
def _registry() -> dict[str, tuple[Path, str]]:
    """name -> (path, source package)."""
    found: dict[str, tuple[Path, str]] = {}
    try:
        import icub_models

        for name in sorted(icub_models.get_robot_names()):
            path = Path(icub_models.get_model_file(name))
            if path.suffix == ".urdf" and path.is_file():
                found[name] = (path, "icub-models")
    except (ImportError, OSError):  # pragma: no cover - package not installed
        pass
    try:
        dist = metadata.distribution("example-robot-data")
        files = [Path(dist.locate_file(f)) for f in dist.files or () if str(f).endswith(".urdf")]
    except metadata.PackageNotFoundError:  # pragma: no cover - package not installed
        files = []
    by_stem: dict[str, list[Path]] = {}
    for path in sorted(files):
        if path.is_file():
            by_stem.setdefault(path.stem, []).append(path)
    for stem, paths in by_stem.items():
        if len(paths) == 1 and stem not in found:
            found[stem] = (paths[0], "example-robot-data")
            continue
        for path in paths:
            package = next(
                (p.name for p in path.parents if p.name.endswith(("_description", "_data"))), path.parent.name
            )
            found[f"{package}/{stem}"] = (path, "example-robot-data")
    return found


def robot_names() -> list[str]:
    """Every robot name, sorted case-insensitively."""
    return sorted(_registry(), key=str.lower)


def _lookup(name: str) -> str:
    reg = _registry()
    if name in reg:
        return name
    alias = ALIASES.get(name.lower())
    if alias in reg:
        return alias
    lowered = {k.lower(): k for k in reg}
    if name.lower() in lowered:
        return lowered[name.lower()]
    raise UnknownNameError("robot", name, list(reg) + list(ALIASES), where="icub-models / example-robot-data")


def robot_path(name: str) -> Path:
    """The URDF file of a robot name (or alias)."""
    return _registry()[_lookup(name)][0]


def robot_source(name: str) -> str:
    """The package that ships the robot."""
    return _registry()[_lookup(name)][1]


def resolve_model_path(name_or_path: str) -> Path:
    """An existing file path as given, else the URDF of a robot name.

    Raises :class:`bridge.ModelFileNotFoundError` for a path-like argument that does not exist and
    :class:`bridge.UnknownNameError` for an unknown robot name.
    """
    from bridge.errors import ModelFileNotFoundError

    path = Path(name_or_path)
    if path.is_file():
        return path
    looks_like_path = path.suffix.lower() in (".urdf", ".xml", ".sdf") or (
        "/" in str(name_or_path) and path.parent != Path()
    )
    if looks_like_path and str(name_or_path) not in _registry():
        raise ModelFileNotFoundError(f"model file not found: {str(name_or_path)!r}")
    return robot_path(str(name_or_path))
