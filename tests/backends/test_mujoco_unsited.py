"""URDF -> MJCF: every frame is a MuJoCo body or site, or a warning names it (issue 28).

A chain of massless links joined by movable joints becomes one MuJoCo body with several joints
(:mod:`bridge.backends.mujoco.bodies`). A link inside the chain, and every frame on it, moves with
the joints after it in the chain, and a site is fixed in its body: no MuJoCo object can carry it.
``to_mujoco`` / ``to_mjcf`` name such frames in a :class:`bridge.BridgeWarning` with the joints
that move them, except the links bridge created itself when reading an MJCF body with several
joints (``Model.synthetic_links``): those round trips stay silent.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import bridge

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")

from bridge.backends.mujoco import load_mjcf, to_mujoco  # noqa: E402
from bridge.backends.mujoco.twin import merged_links  # noqa: E402

MJCF = Path(__file__).resolve().parents[2] / "models" / "mjcf"


def _objects(mm) -> set[str]:
    """Names of the bodies and sites of a compiled model."""
    bodies = {mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(mm.nbody)}
    return bodies | {mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_SITE, i) for i in range(mm.nsite)}


def _quiet_load(path: Path) -> bridge.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # damping, tendons, ...: not part of the rigid-body model
        return load_mjcf(path)


def test_human_virtual_links_are_named_in_a_warning() -> None:
    """example-robot-data's ``human`` builds its hips, shoulders, ankles and spine from 19 massless
    ``*_virtual`` links: to_mjcf warns naming each with the joints that move it in its body; every
    other URDF frame is a body or a site of the written file."""
    model = bridge.load_urdf(bridge.robot_path("human"))
    virtual = sorted(n for n in model.link_names if "virtual" in n)
    assert len(virtual) == 19
    with pytest.warns(bridge.BridgeWarning, match="a site is fixed in its body") as record:
        text = bridge.to_mjcf(model)
    message = " ".join(str(w.message) for w in record if "site is fixed" in str(w.message))
    for name in virtual:
        assert f"on link {name!r} (moved by joints [" in message
    assert "left_hip_Y" in message and "body 'left_upperleg'" in message
    mm = mujoco.MjModel.from_xml_string(text)
    missing = set(model.frame_names) - _objects(mm)
    assert missing == set(virtual) == merged_links(model)


def test_frames_on_a_merged_link_are_named_with_the_joints_after_it() -> None:
    """A chain parent -j1-> a -j2-> b -j3-> c with a, b massless and an extra frame on ``a``: the
    warning names a (and its frame) with j2, j3, and b with j3; c is the body itself (no warning
    about it); its frame is a site, at its pose at every configuration."""
    zero = bridge.SpatialInertia(0.0, np.zeros(3), np.zeros((3, 3)))
    heavy = bridge.SpatialInertia(2.0, [0.1, 0.0, 0.0], np.diag([0.1, 0.2, 0.25]))
    H = bridge.Transform.from_rpy([0.3, -0.2, 0.1], [0.05, 0.1, -0.2])
    joints = [
        bridge.Joint(f"j{k}", bridge.JointKind.REVOLUTE, p, c, H, axis=np.array(ax, float))
        for k, (p, c, ax) in enumerate(
            [("base", "a", [0, 0, 1]), ("a", "b", [0, 1, 0]), ("b", "c", [1, 0, 0])], start=1
        )
    ]
    links = [bridge.Link(n, heavy if n in ("base", "c") else zero) for n in ("base", "a", "b", "c")]
    frames = (bridge.Frame("on_a", "a", H), bridge.Frame("on_c", "c", H))
    model = bridge.Model("chain", links, joints, frames, "base", ("j1", "j2", "j3"), False)
    with pytest.warns(bridge.BridgeWarning) as record:
        mm = to_mujoco(model)
    (warning,) = [w for w in record if "site is fixed" in str(w.message)]
    assert warning.filename == __file__  # the caller's line, not bridge's internals
    message = str(warning.message)
    assert "['a', 'on_a'] on link 'a' (moved by joints ['j2', 'j3'] of body 'c')" in message
    assert "['b'] on link 'b' (moved by joints ['j3'] of body 'c')" in message
    assert "'on_c'" not in message and _objects(mm) >= {"c", "on_c"}
    # the site on the merged body is where the model puts it, at any configuration
    kd = bridge.KinDyn(model, "pinocchio")
    d = mujoco.MjData(mm)
    site = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_SITE, "on_c")
    for s in np.random.default_rng(0).uniform(-2.0, 2.0, (3, 3)):
        kd.set_state(np.eye(4), s, np.zeros(6), np.zeros(3))
        d.qpos[:] = s  # one hinge per DOF, in the model's order
        mujoco.mj_kinematics(mm, d)
        G = np.asarray(kd.frame_transform("on_c"))
        np.testing.assert_allclose(d.site_xpos[site], G[:3, 3], rtol=0, atol=1e-14)
        np.testing.assert_allclose(d.site_xmat[site].reshape(3, 3), G[:3, :3], rtol=0, atol=1e-14)


@pytest.mark.parametrize("name", ["humanoid_hips", "planar_runner"])
def test_mjcf_round_trip_warns_nothing_about_its_own_links(name: str) -> None:
    """load_mjcf marks the links "<body>__<joint>" it creates (synthetic_links); they survive
    re-rooting, DOF selection, a fixed base and lumping, and to_mujoco / to_mjcf / the mujoco
    engine warn nothing about them."""
    model = _quiet_load(MJCF / f"{name}.xml")
    inner = {n for n in model.link_names if "__" in n}
    assert inner and model.synthetic_links == inner
    derived_models = [model, model.with_fixed_base(), model.with_dofs(model.dof_names[::-1])]
    if model.floating:  # (a fixed base re-rooted would make the world link move, massless)
        derived_models.append(model.with_base(model.links[-1].name))
    for derived in derived_models:
        assert derived.synthetic_links == inner
        with warnings.catch_warnings():
            warnings.simplefilter("error", bridge.BridgeWarning)
            mm = mujoco.MjModel.from_xml_string(bridge.to_mjcf(derived))
            to_mujoco(derived)
            bridge.KinDyn(derived, "mujoco")
        assert mm.nv == derived.nv
    assert model.lumped().synthetic_links == inner


def test_the_mujoco_engine_does_not_warn_about_frames_it_reads_from_its_twin() -> None:
    model = bridge.load_urdf(bridge.robot_path("human"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", bridge.BridgeWarning)
        kd = bridge.KinDyn(model, "mujoco")
    kd.set_state(np.eye(4), np.zeros(model.n_dofs), np.zeros(6), np.zeros(model.n_dofs))
    assert np.asarray(kd.frame_transform("left_upperleg_virtual")).shape == (4, 4)


@pytest.mark.parametrize("bad", ["torso__rootx", 3, [1]])
def test_synthetic_links_must_be_a_set_of_names(bad: object) -> None:
    model = _quiet_load(MJCF / "planar_runner.xml")
    with pytest.raises(bridge.ModelError, match="synthetic_links"):
        model.replace(synthetic_links=bad)
