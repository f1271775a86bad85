"""Robots shipped by the installed ``icub-models`` and ``example-robot-data`` packages, by name.

Names:

* icub-models robots by their folder name (``iCubGazeboV2_5``, ``iCubGenova04``, ``left_hand_mk3``);
* example-robot-data URDFs by file stem (``talos_reduced``, ``solo12``, ``ur5_robot``, ``panda``);
  a stem that is not unique (``anymal.urdf`` in ``anymal_b_simple_description`` and
  ``anymal_c_simple_description``), or that is also an alias (``icub.urdf`` of
  ``icub_description``, since ``icub`` means iCubGazeboV2_5), is named ``<package>/<stem>``
  (``anymal_b_simple_description/anymal``, ``icub_description/icub``). The ``<package>/<stem>``
  form is accepted for every example-robot-data robot.

Short aliases (:data:`ALIASES`: ``icub``, ``talos``, ``ur5``, ``anymal``, ...) and any capitalisation
of a name are accepted too. Files are found through the packages' own helpers
(``icub_models.get_model_file``) and the example-robot-data distribution's file list
(``importlib.metadata``; the package has no importable Python module), never through hard-coded
paths. Nothing heavy is imported: the registry is built on first use and cached; an icub-models
name is found without it (:func:`_find`).

A base install (``pip install bridge-dynamics``) has neither package: names are then unknown, and
the errors (and ``bridge models``) say which packages provide them (:func:`robots_hint`): the
``robots`` extra, ``pip install 'bridge-dynamics[robots]'``, installs both.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from bridge._files import file_status
from bridge.errors import ModelFileNotFoundError, UnknownNameError

__all__ = [
    "ALIASES",
    "PROVIDERS",
    "ROBOTS_EXTRA",
    "RobotEntry",
    "missing_providers",
    "resolve_model_path",
    "robot_entries",
    "robot_entry",
    "robot_names",
    "robot_path",
    "robot_source",
    "robots_hint",
]

#: short alias -> robot name (aliases whose robot is not installed are ignored). There is no ``ur3``
#: alias: example-robot-data ships a ``ur3.urdf`` (without links, in version 6.0.0); use ``ur3_robot``.
ALIASES = {
    "icub": "iCubGazeboV2_5",
    "talos": "talos_reduced",
    "ur5": "ur5_robot",
    "ur10": "ur10_robot",
    "anymal": "anymal_c_simple_description/anymal",
    "anymal_b": "anymal_b_simple_description/anymal",
    "anymal_c": "anymal_c_simple_description/anymal",
    "solo8": "solo",
    "g1": "g1_29dof_rev_1_0",
}
_ERD = "example-robot-data"
_ICUB = "icub-models"
#: the packages that ship named robots, and what they ship
PROVIDERS = {
    _ICUB: "the iCub robots (iCubGazeboV2_5, iCubGenova04, ...)",
    _ERD: "Talos, Solo, UR5, Panda, ANYmal, ... (example-robot-data's URDFs)",
}
#: the extra that installs every provider
ROBOTS_EXTRA = "pip install 'bridge-dynamics[robots]'"


@dataclass(frozen=True)
class RobotEntry:
    """One robot: its name, URDF file and the package that ships it."""

    name: str
    path: Path
    source: str  # "icub-models" or "example-robot-data"


def _icub_models_files() -> dict[str, Path]:
    try:
        import icub_models
    except ImportError:  # pragma: no cover - icub-models not installed
        return {}
    out: dict[str, Path] = {}
    try:
        names = sorted(icub_models.get_robot_names())
    except OSError:  # pragma: no cover - broken installation
        return {}
    for name in names:
        try:
            path = Path(icub_models.get_model_file(name))
        except OSError:  # a folder without model.urdf
            continue
        if path.suffix == ".urdf" and path.is_file():
            out[name] = path
    return out


def _example_robot_data_files() -> list[Path]:
    """Every URDF of the example-robot-data distribution (from its file list, or its cmeel prefix)."""
    import importlib.metadata as metadata  # (20 ms to import: only when the full registry is built)

    try:
        dist = metadata.distribution(_ERD)
    except metadata.PackageNotFoundError:  # pragma: no cover - not installed
        return []
    files = [Path(dist.locate_file(f)) for f in dist.files or () if str(f).endswith(".urdf")]
    if not files:  # pragma: no cover - no RECORD: look under the distribution's cmeel prefix
        prefix = Path(dist.locate_file("cmeel.prefix")) / "share" / "example-robot-data"
        files = list(prefix.rglob("*.urdf")) if prefix.is_dir() else []
    return sorted(p for p in files if p.is_file())


def _package_of(path: Path) -> str:
    """The ROS package folder of an example-robot-data URDF (``.../robots/<package>/urdf/x.urdf``)."""
    parts = path.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1] == "robots" and parts[i] != "robots":
            return parts[i]
    return path.parent.parent.name


@functools.lru_cache(maxsize=1)
def _registry() -> tuple[dict[str, RobotEntry], dict[str, str]]:
    """(canonical name -> entry, every accepted spelling in lower case -> canonical name)."""
    entries: dict[str, RobotEntry] = {}
    for name, path in _icub_models_files().items():
        entries[name] = RobotEntry(name, path, _ICUB)
    erd = _example_robot_data_files()
    by_stem: dict[str, list[Path]] = {}
    for path in erd:
        by_stem.setdefault(path.stem, []).append(path)
    qualified: dict[str, str] = {}
    taken = {n.lower() for n in entries} | set(ALIASES)
    for stem, paths in sorted(by_stem.items()):
        unique = len(paths) == 1 and stem.lower() not in taken
        for path in paths:
            long_name = f"{_package_of(path)}/{stem}"
            name = stem if unique else long_name
            entries[name] = RobotEntry(name, path, _ERD)
            qualified[long_name.lower()] = name
    lookup = {name.lower(): name for name in entries}
    for spelling, name in qualified.items():
        lookup.setdefault(spelling, name)
    for alias, target in ALIASES.items():
        if target in entries:
            lookup.setdefault(alias, target)
    return entries, lookup


def robot_entries() -> list[RobotEntry]:
    """Every robot (name, file, source package), sorted by name case-insensitively."""
    entries, _ = _registry()
    return [entries[n] for n in sorted(entries, key=str.lower)]


def missing_providers() -> list[str]:
    """The packages of :data:`PROVIDERS` that gave no robot here (not installed, or empty)."""
    entries, _ = _registry()
    found = {e.source for e in entries.values()}
    return [p for p in PROVIDERS if p not in found]


def robots_hint() -> str:
    """``""`` when every package of :data:`PROVIDERS` ships robots here, else a sentence naming the
    missing ones, what they ship and the ``robots`` extra that installs them."""
    missing = missing_providers()
    if not missing:
        return ""
    what = "; ".join(f"{p}: {PROVIDERS[p]}" for p in missing)
    return f"named robots come from packages that are not installed ({what}): {ROBOTS_EXTRA}"


def robot_names() -> list[str]:
    """Every robot name, sorted case-insensitively (aliases not included)."""
    return [e.name for e in robot_entries()]


def _find(name: str) -> RobotEntry | None:
    """The robot ``name`` names, or None. An icub-models name (or an alias of one) is found from
    icub-models alone (under a millisecond); any other name builds the full registry (reading
    example-robot-data's file list, some 40 ms): both give the same entry, since an
    example-robot-data robot never takes the name of an icub-models one."""
    key = str(name).lower()
    if _registry.cache_info().currsize == 0:
        files = _icub_models_files()
        canonical = {n.lower(): n for n in files}.get(key)  # (the registry's rule: the last spelling wins)
        if canonical is None and ALIASES.get(key) in files:
            canonical = ALIASES[key]
        if canonical is not None:
            return RobotEntry(canonical, files[canonical], _ICUB)
    entries, lookup = _registry()
    canonical = lookup.get(key)
    return entries[canonical] if canonical is not None else None


def robot_entry(name: str) -> RobotEntry:
    """The robot called ``name`` (a name, an alias, or ``<package>/<stem>``; any capitalisation)."""
    entry = _find(name)
    if entry is None:
        entries, _ = _registry()
        known = list(entries) + [a for a, t in ALIASES.items() if t in entries]
        error = UnknownNameError("robot", name, known, where=f"{_ICUB} / {_ERD}")
        hint = robots_hint()
        if hint:
            error.args = (f"{error.args[0]} ({hint})",)
        raise error
    return entry


def robot_path(name: str) -> Path:
    """The URDF file of a robot name (or alias); :class:`bridge.UnknownNameError` with close matches."""
    return robot_entry(name).path


def robot_source(name: str) -> str:
    """The package that ships the robot (``icub-models`` or ``example-robot-data``)."""
    return robot_entry(name).source


def resolve_model_path(name_or_path: str | os.PathLike) -> Path:
    """An existing file path as given, else the URDF of a robot name.

    Raises :class:`bridge.ModelFileNotFoundError` for a path (a path-like object, or a string with a
    URDF/XML suffix or a directory part that is not a robot name) that does not exist, and
    :class:`bridge.UnknownNameError` (listing close matches) for an unknown robot name.
    """
    if not str(os.fspath(name_or_path)).strip():
        raise ModelFileNotFoundError("model name is empty: give a URDF file or a robot name")
    path = Path(name_or_path)
    status = file_status(path, "model file")
    if status == "file":
        return path
    if status == "other":
        raise ModelFileNotFoundError(f"{str(path)!r} is not a regular file (a URDF file is needed)")
    if isinstance(name_or_path, os.PathLike):
        raise ModelFileNotFoundError(f"model file not found: {str(name_or_path)!r}")
    text = str(name_or_path)
    entry = _find(text)
    if entry is not None:
        return entry.path
    looks_like_path = path.suffix.lower() in (".urdf", ".xml", ".sdf") or os.sep in text or "/" in text
    if looks_like_path and status != "directory":
        raise ModelFileNotFoundError(f"model file not found: {text!r} (and it is not a robot name)")
    if status == "directory":
        raise ModelFileNotFoundError(f"{text!r} is a directory, not a model file")
    return robot_path(text)
