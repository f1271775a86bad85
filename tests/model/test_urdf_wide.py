"""URDF ``floating`` and ``planar`` joints: ``load_urdf`` reads them as Pinocchio's
``buildModelFromUrdf`` does (a free joint at the origin; a planar joint in the joint frame's xy
plane, its axis ignored with a warning when it says another plane), ``to_urdf`` writes them back
(a planar joint whose normal is not the child's z through a helper link) and refuses ball joints by
name; the round trips keep the dynamics."""

from __future__ import annotations

import dataclasses
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.model.joints import JointKind
from bridge.validation.sampling import random_states
from tests.helpers import assert_close

MODELS = Path(__file__).resolve().parents[2] / "models" / "wide"
FILE = MODELS / "floating_planar.urdf"


def _load(path=FILE, **kw) -> bridge.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.URDFWarning)
        return bridge.load_urdf(path, **kw)


def test_floating_and_planar_joints_are_read() -> None:
    model = _load()
    tether, slide = model.joint("tether"), model.joint("slide")
    assert tether.kind is JointKind.FREE and slide.kind is JointKind.PLANAR
    assert_close(
        tether.parent_H_child.matrix, bridge.Transform.from_rpy([0.2, -0.1, 0.6], [-0.4, 0.1, 0.5]).matrix
    )
    for name in ("slide", "glide", "skate"):  # Pinocchio's plane: the joint frame's xy
        assert model.joint(name).axis.tolist() == [0.0, 0.0, 1.0]
    assert model.joint("slide").limits == bridge.JointLimits(effort=10.0, velocity=2.0)
    c = model.coordinates
    assert (c.nq, c.nv) == (3 + 1 + 3 + 3 + 7, 3 + 1 + 3 + 3 + 6)
    assert model.dof_names == ("slide", "shoulder", "glide", "skate", "tether")


def test_a_planar_axis_other_than_z_warns_or_raises() -> None:
    with pytest.warns(bridge.URDFWarning) as record:
        bridge.load_urdf(FILE)
    text = [str(w.message) for w in record]
    assert any("planar joint 'glide' has <axis xyz='1 0 0'>" in t for t in text), text
    assert any("planar joint 'skate' has no <axis> (URDF's default 1 0 0)" in t for t in text), text
    assert not any("'slide'" in t for t in text)
    with pytest.raises(bridge.URDFError, match="planar joint 'glide'"):
        bridge.load_urdf(FILE, strict=True)


def test_unsupported_types_are_still_refused_by_name() -> None:
    text = FILE.read_text().replace('type="floating"', 'type="spherical"')
    with pytest.raises(bridge.UnsupportedError, match="joint 'tether' has type 'spherical'"):
        bridge.load_urdf(text)
    text = FILE.read_text().replace('type="floating"', 'type="hinge"')
    with pytest.raises(bridge.UnsupportedError, match=r"unknown type 'hinge'.*floating, planar"):
        bridge.load_urdf(text)


def _same_dynamics(model: bridge.Model, back: bridge.Model) -> None:
    batch = random_states(model, 3, np.random.default_rng(1))
    other = bridge.State(batch.world_H_base, batch.s, batch.base_velocity, batch.s_dot, "mixed", layout=back)
    for rep in ("body", "inertial"):
        a, b = bridge.KinDyn(model, "featherstone", rep), bridge.KinDyn(back, "featherstone", rep)
        a.set_robot_state(batch.to(rep))
        b.set_robot_state(other.to(rep))
        assert_close(b.mass_matrix(), a.mass_matrix(), 1e-12, f"M {rep}")
        assert_close(b.bias_forces(), a.bias_forces(), 1e-12, f"h {rep}")
        for link in model.link_names:
            assert_close(b.frame_transform(link), a.frame_transform(link), 1e-12, link)


@pytest.mark.parametrize("seed", [1, 2, 7, 8])
def test_to_urdf_round_trip(seed: int) -> None:
    """Random models with free and planar joints (normals in any direction): to_urdf -> load_urdf
    without a warning, the same dynamics (a planar joint's helper link is massless)."""
    floating = seed % 2 == 0
    model = bridge.random_model(
        8, seed, joint_kinds=("revolute", "planar", "free", "prismatic"), floating=floating
    )
    assert {JointKind.PLANAR, JointKind.FREE} <= {j.kind for j in model.joints}
    text = model.to_urdf()
    root = ET.fromstring(text)
    types = {el.get("name"): el.get("type") for el in root.iter("joint")}
    for j in model.joints:
        if j.kind is JointKind.FREE:
            assert types[j.name] == "floating"
        elif j.kind is JointKind.PLANAR:
            assert types[j.name] == "planar"
            assert root.find(f"joint[@name='{j.name}']/axis").get("xyz") == "0.0 0.0 1.0"
            helper = np.abs(j.axis - [0.0, 0.0, 1.0]).max() > 0
            assert (f"{j.name}__plane" in {el.get("name") for el in root.iter("link")}) == helper
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = bridge.load_urdf(text, floating=floating)
    assert back.dof_names == model.dof_names
    _same_dynamics(model, back)


def test_file_round_trip() -> None:
    model = _load()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the written planar axes are z: no warning
        back = bridge.load_urdf(model.to_urdf())
    assert [j.name for j in back.joints] == [j.name for j in model.joints]
    _same_dynamics(model, back)


def test_ball_joints_are_refused_by_name() -> None:
    model = bridge.random_model(5, 0, joint_kinds=("ball", "revolute"))
    balls = [j.name for j in model.joints if j.kind is JointKind.BALL]
    assert balls
    with pytest.raises(
        bridge.UnsupportedError, match=f"URDF has no ball joint type \\(joints \\['{balls[0]}'"
    ):
        model.to_urdf()
    locked = model.with_dofs([d for d in model.dof_names if d not in balls])  # locked: fixed joints
    assert "<robot" in locked.to_urdf()


def test_armature_on_wide_joints_is_left_out_with_the_others() -> None:
    model = _load()
    joints = tuple(dataclasses.replace(j, armature=0.1) if j.name == "slide" else j for j in model.joints)
    with pytest.warns(bridge.BridgeWarning, match="no joint armature; left out for joints \\['slide'\\]"):
        model.replace(joints=joints).to_urdf()
