"""What the registry's records generate: the public names of ``bridge`` that come from libraries,
the paths :meth:`Library.backend` fills in, and the layering homes (tests/test_layering.py)."""

from __future__ import annotations

import importlib

import pytest

import bridge
from bridge.backends import registry
from bridge.errors import InvalidValueError

#: the library names ``bridge`` re-exports (the list the records replaced, kept as a regression)
LIBRARY_NAMES = {
    "pinocchio": {"to_pinocchio", "from_pinocchio", "to_pinocchio_state", "from_pinocchio_state"},
    "idyntree": {"to_idyntree", "from_idyntree"},
    "featherstone": {"to_featherstone", "from_featherstone"},
    "mujoco": {"to_mujoco", "from_mujoco", "load_mjcf", "to_mjcf"} | {"to_mujoco_state", "from_mujoco_state"},
    "drake": {"to_drake", "from_drake", "to_drake_state", "from_drake_state"},
    "newton": {"to_newton", "from_newton", "to_newton_state", "from_newton_state"}
    | {"to_newton_body_velocities", "from_newton_body_velocities"},
    "jaxsim": set(),
}
PATH_FIELDS = ("engine", "to_model", "from_model", "to_state", "from_state", "native", "info", "size_check")


def to_toy(model: object) -> str:
    """The toy library's public converter."""
    return "toy"


def test_the_libraries_public_names_come_from_their_records() -> None:
    assert {name: set(rec.public) for name, rec in registry.LIBRARIES.items()} == LIBRARY_NAMES
    names = registry.public_names()
    assert set(names) == set().union(*LIBRARY_NAMES.values())
    assert set(names) <= set(bridge.__all__) and set(names) <= set(dir(bridge))


@pytest.mark.parametrize("name", sorted(set().union(*LIBRARY_NAMES.values())))
def test_a_public_name_is_the_backend_packages_object(name: str) -> None:
    """Found in the backend package, or in the module of the record's field naming it."""
    record = next(rec for rec in registry.LIBRARIES.values() if name in rec.public)
    module = registry.public_names()[name]
    assert module == record.package or module.startswith(record.package + ".")
    assert getattr(bridge, name) is getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("library", sorted(LIBRARY_NAMES))
def test_every_path_a_record_names_resolves(library: str) -> None:
    """The paths Library.backend derived (and the irregular ones spelled out) name real objects."""
    record = registry.library(library)
    assert record.package == f"bridge.backends.{library}"
    if not record.installed:  # pragma: no cover - every library is installed in the test environment
        pytest.skip(f"{library} is not installed")
    for field in PATH_FIELDS:
        path = getattr(record, field)
        assert path is None or (path.startswith(record.package + ".") and record.load(field) is not None)
    for target in record.conventions.values():
        assert registry.resolve(target).name in record.conventions


def test_a_library_registered_at_run_time_contributes_its_public_names() -> None:
    toy = registry.Library(name="toy_public", summary="a toy", package=__name__, public=("to_toy",))
    assert not hasattr(bridge, "to_toy")
    registry.register(toy)
    try:
        assert bridge.to_toy is to_toy and "to_toy" in dir(bridge)
    finally:
        registry.unregister("toy_public")
        vars(bridge).pop("to_toy", None)  # (bridge caches what it resolved)
    assert not hasattr(bridge, "to_toy") and "to_toy" not in dir(bridge)


def test_a_public_name_is_one_librarys() -> None:
    clash = registry.Library(name="toy_clash", summary="a toy", package=__name__, public=("to_pinocchio",))
    with pytest.raises(InvalidValueError, match="public name 'to_pinocchio' is 'pinocchio''s already"):
        registry.register(clash)
    assert "toy_clash" not in registry.LIBRARIES
    lost = registry.Library(name="toy_lost", summary="a toy", public=("to_lost",))
    with pytest.raises(InvalidValueError, match="public name 'to_lost' has no module"):
        registry.register(lost)


def test_backend_fills_in_the_layout_and_keeps_the_irregular() -> None:
    rec = registry.Library.backend(
        "toy", "a toy", to_state=None, size_check=".size:check", modules=("toylib",)
    )
    assert rec.package == "bridge.backends.toy"
    assert rec.conventions == {"toy": "bridge.backends.toy.state:TOY"}
    assert rec.engine == "bridge.backends.toy.engine:ToyEngine"
    assert (rec.to_model, rec.from_model) == (
        "bridge.backends.toy.model:to_toy",
        "bridge.backends.toy.model:from_toy",
    )
    assert (rec.to_state, rec.from_state) == (None, "bridge.backends.toy.state:from_toy_state")
    assert rec.size_check == "bridge.backends.toy.size:check" and rec.library_modules == ("toylib",)
    assert registry.Library(name="x", summary="", requires="xlib").library_modules == ("xlib",)
