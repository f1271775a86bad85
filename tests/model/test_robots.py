"""The robot registry, and every shipped robot against Pinocchio's and iDynTree's own URDF loaders.

By default every robot is loaded (strict and relaxed) and compared by counts, inertias and total
mass (a few seconds); the forward-kinematics comparison at random joint positions runs on a
representative set by default and on every robot with ``--runslow``.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import bridge
from bridge.model.urdf import load_urdf
from bridge.robots import ALIASES, resolve_model_path, robot_entries, robot_names, robot_path, robot_source
from tests.model.test_urdf import (
    check_against_idyntree_loader,
    check_against_pinocchio_loader,
    check_written_urdf,
)

# =============================================================================== registry
ERD_PREFIX = "example-robot-data"


def test_names_are_unique_and_point_to_urdf_files() -> None:
    names = robot_names()
    assert len(names) == len(set(names)) == len({n.lower() for n in names})
    assert names == sorted(names, key=str.lower)
    entries = robot_entries()
    assert [e.name for e in entries] == names
    for e in entries:
        assert e.path.is_file() and e.path.suffix == ".urdf", e
        assert e.source in ("icub-models", "example-robot-data")
        assert robot_path(e.name) == e.path and robot_source(e.name) == e.source
    # every file of both packages is listed once
    import icub_models

    icub = {icub_models.get_model_file(n) for n in icub_models.get_robot_names()}
    dist = importlib.metadata.distribution("example-robot-data")
    erd = {Path(dist.locate_file(f)) for f in dist.files if str(f).endswith(".urdf")}
    assert {e.path for e in entries} == icub | erd
    assert len(entries) == len(icub) + len(erd)


def test_names_follow_the_packages() -> None:
    import icub_models

    for name in icub_models.get_robot_names():
        assert robot_path(name) == icub_models.get_model_file(name)
        assert robot_source(name) == "icub-models"
    for name in ("talos_reduced", "panda", "ur5_robot", "solo12", "iCubGazeboV2_5"):
        assert name in robot_names()
    assert robot_path("talos_reduced").name == "talos_reduced.urdf"
    assert robot_path("talos_reduced").parts[-3:-1] == ("talos_data", "robots")
    # a stem shipped twice gets its package in the name
    b, c = robot_path("anymal_b_simple_description/anymal"), robot_path("anymal_c_simple_description/anymal")
    assert b != c and b.name == c.name == "anymal.urdf"
    assert "anymal_b_simple_description" in b.parts and "anymal_c_simple_description" in c.parts
    assert "anymal" not in robot_names()
    # example-robot-data's icub.urdf yields the name 'icub' to the alias
    assert "icub_description/icub" in robot_names() and "icub" not in robot_names()
    assert robot_source("icub_description/icub") == "example-robot-data"


def test_aliases_and_spellings() -> None:
    assert robot_path("icub") == robot_path("iCubGazeboV2_5")
    assert robot_path("talos") == robot_path("talos_reduced")
    assert robot_path("ur5") == robot_path("ur5_robot")
    assert robot_path("anymal") == robot_path("anymal_c_simple_description/anymal")
    assert robot_path("anymal_b") == robot_path("anymal_b_simple_description/anymal")
    assert robot_path("ICUBGAZEBOV2_5") == robot_path("iCubGazeboV2_5")  # any capitalisation
    assert robot_path("talos_data/talos_reduced") == robot_path("talos_reduced")  # <package>/<stem>
    for alias, target in ALIASES.items():
        assert robot_path(alias) == robot_path(target), alias


def test_unknown_robot_lists_close_matches() -> None:
    with pytest.raises(bridge.UnknownNameError, match=r"unknown robot 'talso'.*did you mean 'talos'") as info:
        robot_path("talso")
    assert isinstance(info.value, KeyError) and "talos" in info.value.close_matches
    with pytest.raises(bridge.UnknownNameError, match=r"did you mean 'iCubGazeboV2_5'"):
        robot_path("iCubGazebo2_5")


def test_resolve_model_path(tmp_path: Path) -> None:
    urdf = tmp_path / "mine.urdf"
    urdf.write_text("<robot name='x'><link name='a'/></robot>")
    assert resolve_model_path(str(urdf)) == urdf
    assert resolve_model_path(urdf) == urdf
    assert resolve_model_path("talos") == robot_path("talos_reduced")
    assert resolve_model_path("anymal_b_simple_description/anymal") == robot_path("anymal_b")
    with pytest.raises(bridge.ModelFileNotFoundError, match=r"model file not found: 'nope/mine\.urdf'"):
        resolve_model_path("nope/mine.urdf")
    with pytest.raises(bridge.ModelFileNotFoundError, match=r"not found: 'missing\.urdf'"):
        resolve_model_path("missing.urdf")
    with pytest.raises(FileNotFoundError, match="model file not found"):
        resolve_model_path(tmp_path / "missing")
    with pytest.raises(bridge.ModelFileNotFoundError, match="is a directory, not a model file"):
        resolve_model_path(str(tmp_path))
    with pytest.raises(bridge.UnknownNameError, match=r"unknown robot 'pandaa'.*'panda'"):
        resolve_model_path("pandaa")


def test_importing_the_registry_is_light() -> None:
    """No robot package, backend library or yourdfpy is imported by ``import bridge.robots``."""
    code = (
        "import sys, bridge.robots\n"
        "heavy = {'pinocchio', 'idyntree', 'yourdfpy', 'icub_models', 'trimesh'} & set(sys.modules)\n"
        "print(sorted(heavy))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


def test_a_name_found_without_the_full_registry_is_the_registrys() -> None:
    """Before the full registry is built, icub-models names (and their aliases) are found from
    icub-models alone: every spelling the registry accepts, in any case, gives its entry."""
    import bridge.robots as robots

    robots._registry.cache_clear()
    _, lookup = robots._registry()
    spellings = [*lookup, *(s.upper() for s in lookup), *(s.title() for s in lookup), "nope", "ICUB", "Talos"]
    for spelling in spellings:
        robots._registry.cache_clear()
        fast = robots._find(spelling)
        built = robots._registry.cache_info().currsize == 1
        robots._registry.cache_clear()
        robots._registry()
        assert fast == robots._find(spelling), spelling
        if fast is not None and fast.source == "icub-models":
            assert not built, f"{spelling}: the full registry was built"
    # and an icub-models robot is found without importing importlib.metadata
    code = (
        "import sys, bridge.robots as r\n"
        "p = r.robot_path('iCubGazeboV2_5'), r.robot_path('icub')\n"
        "print('importlib.metadata' in sys.modules, p[0] == p[1])"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["False", "True"]


# =============================================================================== every robot
#: robots that do not load with strict=True (what bridge refused before it loaded what the libraries
#: load): error class and message (after the path); by default they load with the same text as a warning
STRICT_FAILURES = {
    "alex_psyonic_hands": (bridge.UnsupportedError, "joint 'Left_index_q2' is a mimic joint (of 'index_q1')"),
    "allegro_left_hand": (bridge.InertiaError, "link 'link_11.0': principal moments"),
    "allegro_right_hand": (bridge.InertiaError, "link 'link_3.0': principal moments"),
    "anymal-kinova": (bridge.InertiaError, "link 'base': principal moments"),
    "anymal_b_simple_description/anymal": (bridge.InertiaError, "link 'base': principal moments"),
    "anymal_c_simple_description/anymal": (
        bridge.InertiaError,
        "link 'depth_camera_front_camera': principal",
    ),
    "b1": (bridge.InertiaError, "link 'base': principal moments"),
    "b1-z1": (bridge.InertiaError, "link 'base': principal moments"),
    "baxter": (bridge.UnsupportedError, "joint 'l_gripper_r_finger_joint' is a mimic joint"),
    "bolt": (bridge.InertiaError, "link 'FL_FOOT': zero mass but non-zero rotational inertia"),
    "go1": (bridge.InertiaError, "link 'base': principal moments"),
    "hyq_no_sensors": (bridge.InertiaError, "link 'base_link': principal moments"),
    "iCubGenova03": (bridge.InertiaError, "link 'torso_1': zero mass but non-zero rotational inertia"),
    "iCubLisboa01": (bridge.InertiaError, "link 'torso_1': zero mass but non-zero rotational inertia"),
    "iCubNancy01": (bridge.InertiaError, "link 'l_ankle_1': principal moments"),
    "panda": (
        bridge.UnsupportedError,
        "joint 'panda_finger_joint2' is a mimic joint (of 'panda_finger_joint1')",
    ),
    "panda_collision": (bridge.UnsupportedError, "joint 'panda_finger_joint2' is a mimic joint"),
    "pr2": (bridge.UnsupportedError, "joint 'r_gripper_r_finger_joint' is a mimic joint"),
    "romeo": (bridge.UnsupportedError, "joint 'LFinger12' is a mimic joint"),
    "romeo_laas_small": (bridge.InertiaError, "link 'LShoulderYaw_link': principal moments"),
    "romeo_small": (bridge.InertiaError, "link 'RShoulderYawLink': principal moments"),
    "talos_full_v2": (bridge.UnsupportedError, "joint 'gripper_left_inner_double_joint' is a mimic joint"),
    "talos_full_v2_box": (
        bridge.UnsupportedError,
        "joint 'gripper_left_inner_double_joint' is a mimic joint",
    ),
    "talos_left_arm": (bridge.UnsupportedError, "joint 'gripper_left_inner_double_joint' is a mimic joint"),
    "talos_reduced": (bridge.UnsupportedError, "joint 'gripper_left_inner_double_joint' is a mimic joint"),
    "talos_reduced_box": (
        bridge.UnsupportedError,
        "joint 'gripper_left_inner_double_joint' is a mimic joint",
    ),
    "talos_reduced_corrected": (
        bridge.UnsupportedError,
        "joint 'gripper_left_inner_double_joint' is a mimic",
    ),
    "tiago": (
        bridge.InertiaError,
        "link 'base_antenna_left_link': rotational inertia about the centre of mass",
    ),
    "tiago_dual": (bridge.InertiaError, "link 'base_antenna_left_link': rotational inertia"),
    "tiago_no_hand": (bridge.InertiaError, "link 'base_antenna_left_link': rotational inertia"),
    "tiago_pro": (bridge.UnsupportedError, "joint 'gripper_left_inner_finger_left_joint' is a mimic joint"),
    "ur3": (bridge.URDFError, "the robot has no <link>"),
}
#: robots that do not load even with check_inertia=False and mimic="independent"
RELAXED_FAILURES = {"ur3": (bridge.URDFError, "the robot has no <link>")}
RELAXED = {"check_inertia": False, "mimic": "independent"}
#: compared at random joint positions by default; the others with --runslow
REPRESENTATIVE = [
    "iCubGazeboV2_5",  # 213 links, massless sensor leaves, <sensor> frames in iDynTree
    "icub_description/icub",
    "talos_reduced",  # mimic joints
    "panda",
    "ur5_robot",  # a massless 'world' root
    "solo12",
    "anymal_c_simple_description/anymal",  # a non-physical inertia
    "bolt",  # zero-mass links with rotational inertia
    "double_pendulum_continuous",  # continuous joints
    "centauro",  # revolute joints without position limits
]


def test_expectations_name_real_robots() -> None:
    names = set(robot_names())
    assert set(STRICT_FAILURES) <= names and set(RELAXED_FAILURES) <= names and set(REPRESENTATIVE) <= names


@pytest.mark.parametrize("name", robot_names())
def test_robot_loads_or_fails_clearly(name: str) -> None:
    """Strict loading fails exactly for the expected robots with a specific message; default loading
    succeeds wherever Pinocchio's loader does (same DOF count and total mass), with a warning naming
    each cause; relaxed loading agrees with Pinocchio's and iDynTree's loaders on counts, names,
    inertias and total mass."""
    path = str(robot_path(name))
    if name in STRICT_FAILURES:
        cls, text = STRICT_FAILURES[name]
        with pytest.raises(cls) as info:
            load_urdf(path, strict=True)
        assert type(info.value) is cls and str(info.value).startswith(f"{path}: {text}"), str(info.value)
    else:
        strict = load_urdf(path, strict=True)
        assert strict.name and strict.base and len(strict.links) >= 1
    if name not in RELAXED_FAILURES:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            default = load_urdf(path)
        messages = [str(w.message) for w in record if issubclass(w.category, bridge.BridgeWarning)]
        if name in STRICT_FAILURES:  # the strict error's rule, now a warning naming the element
            assert any(m.startswith(f"{path}: {STRICT_FAILURES[name][1]}") for m in messages), messages
        else:
            assert messages == []
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        assert default.nv == pm.nv
        assert default.total_mass == pytest.approx(sum(i.mass for i in pm.inertias), rel=1e-12, abs=1e-12)
    if name in RELAXED_FAILURES:
        cls, text = RELAXED_FAILURES[name]
        with pytest.raises(cls, match=f"^{path}: {text}$"):
            load_urdf(path, **RELAXED)
        with pytest.raises(ValueError, match="does not contain a valid URDF model"):
            pin.buildModelFromUrdf(path)  # Pinocchio rejects it too
        return
    model = load_urdf(path, **RELAXED)
    rng = np.random.default_rng(0)
    check_against_pinocchio_loader(model, path, rng, samples=0)
    check_against_idyntree_loader(model, path, rng, samples=0)


def _kinematics_case(name: str) -> None:
    path = str(robot_path(name))
    model = load_urdf(path, **RELAXED)
    rng = np.random.default_rng(1)
    check_against_pinocchio_loader(model, path, rng, samples=2)
    check_against_idyntree_loader(model, path, rng, samples=2)


@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_robot_link_poses_agree_with_loaders(name: str) -> None:
    """The pose of every link relative to the base at random joint positions, against both loaders."""
    _kinematics_case(name)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [n for n in robot_names() if n not in REPRESENTATIVE and n not in RELAXED_FAILURES]
)
def test_robot_link_poses_agree_with_loaders_sweep(name: str) -> None:
    _kinematics_case(name)


# =============================================================================== round trips
@pytest.mark.parametrize(
    ("name", "base", "floating"),
    [
        ("iCubGazeboV2_5", None, True),
        ("iCubGazeboV2_5", "l_sole", True),  # re-rooted at a foot sole (a fixed-joint leaf)
        ("solo12", "FR_FOOT", True),
        ("panda", "panda_hand", True),  # mimic joints as independent DOFs
        ("ur5_robot", None, False),
        ("double_pendulum_continuous", "link2", True),
    ],
)
def test_round_trip_real_robots(name: str, base: str | None, floating: bool) -> None:
    model = load_urdf(robot_path(name), base=base, floating=floating, **RELAXED)
    check_written_urdf(model, np.random.default_rng(2), samples=2, floating=floating, **RELAXED)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in robot_names() if n not in RELAXED_FAILURES])
def test_round_trip_every_robot(name: str) -> None:
    model = load_urdf(robot_path(name), **RELAXED)
    rng = np.random.default_rng(3)
    check_written_urdf(model, rng, samples=1, **RELAXED)
    leaf = (
        next(j.child for j in reversed(model.joints) if not model.child_joints(j.child))
        if model.joints
        else None
    )
    if leaf is not None:
        check_written_urdf(model.with_base(leaf), rng, samples=1, **RELAXED)
