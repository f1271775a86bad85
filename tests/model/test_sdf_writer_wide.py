"""``Model.to_sdf()`` with ball joints and free bodies, read back by ``load_sdf`` and by Drake's own
SDFormat parser into the same dynamics; planar joints and free joints SDFormat cannot write are
refused by name."""

from __future__ import annotations

import dataclasses
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.model.joints import JointKind
from bridge.model.sdf import sdf_named
from bridge.spatial import Transform
from bridge.validation.sampling import random_states
from tests.helpers import assert_close

WIDE = ("revolute", "prismatic", "ball", "continuous")


def _ball_model(seed: int, floating: bool) -> bridge.Model:
    model = bridge.random_model(8, seed, joint_kinds=WIDE, floating=floating)
    assert any(j.kind is JointKind.BALL for j in model.joints)
    return model


def _scene(seed: int = 3) -> bridge.Model:
    """A fixed base with a ball-jointed arm and two free bodies (one carrying a ball joint)."""
    rng = np.random.default_rng(seed)
    m = bridge.random_model(6, seed, joint_kinds=("ball", "revolute"), floating=False, branching=0.0)
    links, joints = list(m.links), list(m.joints)
    for name, parent in (("box", m.base), ("drone", m.base), ("sling", "drone")):
        links.append(bridge.Link(name, bridge.model.random.random_inertia(rng)))
        kind = JointKind.FREE if parent == m.base else JointKind.BALL
        rest = bridge.model.random.random_transform(rng, 1.0, 0.1)
        origin = rng.normal(size=3) * 0.1 if kind is JointKind.BALL else np.zeros(3)
        joints.append(bridge.Joint(f"to_{name}", kind, parent, name, rest, axis_origin=origin))
    dofs = tuple(j.name for j in joints if j.movable)
    return bridge.Model("scene", links, joints, m.frames, m.base, dofs, False)


def _as(state: bridge.State, model: bridge.Model, other: bridge.Model, rename: dict) -> bridge.State:
    """``state`` of ``model`` as a state of ``other`` (joints matched by name, ``rename``d)."""
    c, d = model.coordinates, other.coordinates
    back = {rename.get(n, n): n for n in c.names}
    s = np.concatenate([state.s[..., c.q_slice(c.index[back[n]])] for n in d.names], -1)
    sd = np.concatenate([state.s_dot[..., c.v_slice(c.index[back[n]])] for n in d.names], -1)
    return bridge.State(state.world_H_base, s, state.base_velocity, sd, state.representation, layout=other)


def _perm(model: bridge.Model, other: bridge.Model, rename: dict) -> np.ndarray:
    c = model.coordinates
    back = {rename.get(n, n): n for n in c.names}
    nb = 6 if model.floating else 0
    parts = [np.arange(nb)] + [
        nb + np.arange(*c.v_slice(c.index[back[n]]).indices(c.nv)) for n in other.dof_names
    ]
    return np.concatenate(parts).astype(int)


def _same_dynamics(model: bridge.Model, back: bridge.Model, rename: dict | None = None) -> None:
    rename = rename or {}
    batch = random_states(model, 3, np.random.default_rng(4))
    if not model.floating:
        batch = bridge.State(
            Transform.identity(), batch.s, batch.base_velocity, batch.s_dot, "mixed", layout=model
        )
    p = _perm(model, back, rename)
    for rep in ("body", "mixed"):
        st = batch.to(rep)
        a, b = bridge.KinDyn(model, "featherstone", rep), bridge.KinDyn(back, "featherstone", rep)
        a.set_robot_state(st)
        b.set_robot_state(_as(st, model, back, rename))
        assert_close(b.mass_matrix(), a.mass_matrix()[..., p[:, None], p], 1e-12, f"M {rep}")
        assert_close(b.bias_forces(), a.bias_forces()[..., p], 1e-12, f"h {rep}")
        for f in model.frame_names:
            assert_close(b.frame_transform(f), a.frame_transform(f), 1e-12, f)


@pytest.mark.parametrize("floating", [True, False])
@pytest.mark.parametrize("seed", [0, 2])
def test_ball_joints_round_trip(seed: int, floating: bool) -> None:
    """to_sdf -> load_sdf: the same ball joints (centres, rest poses) and dynamics."""
    model = _ball_model(seed, floating)
    text = model.to_sdf()
    balls = [j for j in ET.fromstring(text).iter("joint") if j.get("type") == "ball"]
    assert balls and all(j.find("axis") is None for j in balls)
    back = bridge.load_sdf(text)
    assert back.floating is floating and back.dof_names == model.dof_names
    for j in model.joints:
        k = back.joint(j.name)
        assert k.kind is j.kind
        if j.kind.rotational or j.kind is JointKind.BALL:  # (a prismatic axis has no origin)
            assert_close(k.axis_origin, j.axis_origin, 1e-14)
        assert_close(k.parent_H_child.matrix, j.parent_H_child.matrix, 1e-14)
    _same_dynamics(model, back)


def test_scene_round_trip_free_bodies_are_links_without_joints() -> None:
    """Free joints from a fixed base: links without a joint (``bridge:free_joint`` keeps the joint's
    name, ``<bridge:dofs>`` the DOF order), read back as the same free joints."""
    model = _scene()
    root = ET.fromstring(model.to_sdf())
    joints = {j.get("name") for j in root.iter("joint")}
    assert "to_box" not in joints and "to_drone" not in joints and "to_sling" in joints
    assert root.find(".//link[@name='box']/pose").get("relative_to") == model.base
    back = bridge.load_sdf(model.to_sdf())
    assert {j.name: (j.kind, j.parent) for j in back.joints if j.kind is JointKind.FREE} == {
        "to_box": (JointKind.FREE, model.base),
        "to_drone": (JointKind.FREE, model.base),
    }
    assert back.dof_names == model.dof_names
    _same_dynamics(model, back)
    # without bridge's attributes (another writer's file), free bodies' joints are named after them
    text = model.to_sdf()
    for name in ("to_box", "to_drone"):
        text = text.replace(f'bridge:free_joint="{name}"', "")
    other = bridge.load_sdf(text)
    assert {j.name for j in other.joints if j.kind is JointKind.FREE} == {"box", "drone"}


def test_scene_on_a_world_link_round_trip() -> None:
    """A scene on a massless fixed base named 'world' (load_sdf's reading of joints to the world and
    of several free bodies): written as a link welded to SDFormat's world under a valid SDF name
    (``bridge:name`` keeps 'world'), its free bodies posed relative to it; read back the same."""
    scene = Path(__file__).resolve().parents[2] / "models" / "sdf" / "ball_scene.sdf"
    model = bridge.load_sdf(scene)
    assert model.base == "world" and {"drone", "box"} <= set(model.dof_names)
    root = ET.fromstring(model.to_sdf())
    base = root.find(".//joint[@name='pivot']/parent").text
    assert base != "world" and root.find(".//joint[@name='world_joint']/child").text == base
    assert root.find(".//link[@name='box']/pose").get("relative_to") == base
    assert root.find(".//joint[@name='box']") is None  # a free body: no joint
    back = bridge.load_sdf(model.to_sdf())
    assert back.base == "world" and not back.floating
    assert {j.name: j.kind for j in back.joints} == {j.name: j.kind for j in model.joints}
    _same_dynamics(model, back)


def test_drake_reads_the_written_ball_joints_and_free_bodies() -> None:
    """Drake's parser on the written text: M, h, g in every representation equal bridge's (1e-12)."""
    pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    from bridge.backends.drake.native import DrakeNative

    for model in (_ball_model(0, True), _ball_model(2, False), _scene()):
        plant = MultibodyPlant(0.0)
        Parser(plant).AddModels(file_contents=model.to_sdf(), file_type="sdf")
        plant.Finalize()
        text = model.to_sdf()
        back = sdf_named(bridge.load_sdf(text), text)  # (Drake's names: free joints after their links)
        native = DrakeNative(plant, back)
        batch = random_states(back, 2, np.random.default_rng(5))
        for rep in ("body", "inertial", "mixed"):
            kd = bridge.KinDyn(back, "pinocchio", rep)
            for k in range(2):
                H = batch.world_H_base[k] if back.floating else native.base_pose
                st = bridge.State(H, batch.s[k], batch.base_velocity[k], batch.s_dot[k], "mixed", layout=back)
                st = st.to(rep)
                kd.set_robot_state(st)
                for name, value in native.dynamics(st).items():
                    assert_close(value, getattr(kd, name)(), 1e-12, f"{model.name} {name} {rep}")


def test_what_sdformat_cannot_write_is_refused_by_name() -> None:
    planar = bridge.random_model(4, 0, joint_kinds=("planar",), floating=False)
    with pytest.raises(bridge.UnsupportedError, match=r"no planar joint type \(joints \['joint1'"):
        planar.to_sdf()
    floating = bridge.random_model(4, 2, joint_kinds=("free", "revolute"), floating=True)
    free = [j.name for j in floating.joints if j.kind is JointKind.FREE]
    with pytest.raises(bridge.UnsupportedError, match=f"free joints on a floating base .*{free[0]}"):
        floating.to_sdf()
    scene = _scene()
    below = dataclasses.replace(scene.joint("to_sling"), kind=JointKind.FREE, axis_origin=np.zeros(3))
    joints = tuple(below if j.name == "to_sling" else j for j in scene.joints)
    with pytest.raises(bridge.UnsupportedError, match=r"free joints below the fixed base .*'to_sling'"):
        scene.replace(joints=joints).to_sdf()


def test_ball_armature_is_bridges_own_attribute() -> None:
    """A ball joint's armature has no SDFormat or Drake element (Drake's rotor inertia moves one
    coordinate): it is written as ``bridge:armature``, read back, and nothing is said."""
    model = _ball_model(0, True)
    ball = next(j for j in model.joints if j.kind is JointKind.BALL)
    joints = tuple(dataclasses.replace(j, armature=0.2) if j is ball else j for j in model.joints)
    with_armature = model.replace(joints=joints)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = with_armature.to_sdf()
        back = bridge.load_sdf(text)
    element = ET.tostring(ET.fromstring(text).find(f".//joint[@name='{ball.name}']"), "unicode")
    assert "rotor_inertia" not in element and "armature" in element
    assert back.joint(ball.name).armature == 0.2
    _same_dynamics(with_armature, back)
