"""A base install (no icub-models, no example-robot-data): named robots are unknown, and every
surface that takes a robot name says which packages provide them and the ``robots`` extra."""

from __future__ import annotations

from pathlib import Path

import pytest

import bridge
import bridge.robots as robots
from tests.cli.runner import run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def without_robots(monkeypatch: pytest.MonkeyPatch):
    """The robots module as if neither package were installed (its discovery returns nothing)."""
    monkeypatch.setattr(robots, "_icub_models_files", dict)
    monkeypatch.setattr(robots, "_example_robot_data_files", list)
    robots._registry.cache_clear()
    yield
    robots._registry.cache_clear()


def _names_the_packages(text: str) -> None:
    for what in ("icub-models", "example-robot-data", "pip install 'bridge-dynamics[robots]'"):
        assert what in text, text


def test_load_urdf_of_a_robot_name_names_the_packages(without_robots: None) -> None:
    with pytest.raises(bridge.ModelFileNotFoundError) as info:
        bridge.load_urdf("iCubGazeboV2_5")
    assert "URDF file not found: 'iCubGazeboV2_5'" in str(info.value)
    _names_the_packages(str(info.value))
    with pytest.raises(bridge.UnknownNameError) as unknown:
        bridge.robot_path("panda")
    _names_the_packages(str(unknown.value))


def test_a_path_gets_no_robot_hint(without_robots: None, tmp_path: Path) -> None:
    with pytest.raises(bridge.ModelFileNotFoundError) as info:
        bridge.load_urdf(str(tmp_path / "missing.urdf"))
    assert "robots" not in str(info.value)


def test_bridge_models_says_where_robots_come_from(without_robots: None) -> None:
    res = run("models")
    assert res.exit_code == 0
    assert res.stdout == ""
    assert res.stderr.startswith("no named robots: ")
    _names_the_packages(res.stderr)


def test_one_package_missing_is_named_alone(monkeypatch: pytest.MonkeyPatch, without_robots: None) -> None:
    robots._registry.cache_clear()
    monkeypatch.setattr(robots, "_icub_models_files", lambda: {"iCubFake": ROOT / "models" / "offsets.urdf"})
    assert robots.missing_providers() == ["example-robot-data"]
    res = run("models")
    assert res.stdout.startswith("iCubFake\t") and res.stderr.startswith("note: ")
    assert "example-robot-data" in res.stderr and "icub-models:" not in res.stderr


def test_installed_packages_give_no_hint() -> None:
    assert robots.robots_hint() == ""
    assert run("models").stderr == ""


def test_the_robots_extra_installs_every_provider() -> None:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in Python 3.11+")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {req.split(">")[0].split("=")[0].split("[")[0].strip() for req in extras["robots"]}
    assert names == set(robots.PROVIDERS)
    test = {req.split(">")[0].split(";")[0].strip() for req in extras["test"]}
    assert names <= test
