"""The joint table: every kind's widths, motion, motion subspace and configuration operations.

Properties, for every kind and every tangent: the neutral configuration is valid and moves nothing;
``integrate`` and ``difference`` invert each other; moving along ``integrate`` with a velocity v
changes the pose at the rate the tangent says (BODY: ``H^-1 H_dot = S v`` with S the kind's motion
subspace, so the subspace is the derivative of the motion; WORLD: the twist at F's origin in F's
axes; MIXED: ``(p_dot, omega)`` in F's axes). Models with such joints: layouts, locking, re-rooting.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.conventions.declaration import INERTIAL_VELOCITY, MIXED_VELOCITY
from bridge.conventions.joint_blocks import embed, joint_declaration, joint_rows
from bridge.model.joints import JOINT_SPECS, Coordinates, JointKind, Tangent, plane_axes
from bridge.spatial import Transform
from bridge.spatial.so3 import vee
from bridge.spatial.xp import NUMPY

KINDS = [k for k in JointKind if k.movable]
TANGENTS = list(Tangent)
H_STEP = 1e-6


def _geometry(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    axis = rng.normal(size=3)
    return axis / np.linalg.norm(axis), rng.normal(size=3)


def _joint(kind: JointKind, rng: np.random.Generator) -> bridge.Joint:
    axis, origin = _geometry(rng)
    rest = Transform.from_quaternion_xyzw(
        np.array([0.1, -0.3, 0.2, 0.9]) / np.linalg.norm([0.1, -0.3, 0.2, 0.9])
    )
    return bridge.Joint("j", kind, "p", "c", rest, axis=axis, axis_origin=origin)


@pytest.mark.parametrize("kind", list(JointKind))
def test_widths_and_neutral(kind: JointKind) -> None:
    spec = kind.spec
    assert (spec.nq, spec.nv) == (kind.nq, kind.nv) == (JOINT_SPECS[kind].nq, JOINT_SPECS[kind].nv)
    assert kind.single == (kind.nq == 1 == kind.nv)
    assert kind.wide == (kind.nv > 1)
    q0 = spec.neutral((2,))
    assert q0.shape == (2, kind.nq)
    assert np.all(spec.check(q0))
    rng = np.random.default_rng(0)
    axis, origin = _geometry(rng)
    np.testing.assert_allclose(
        spec.motion(q0, axis, origin), np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-15
    )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tangent", TANGENTS)
def test_integrate_and_difference_invert_each_other(kind: JointKind, tangent: Tangent) -> None:
    rng = np.random.default_rng(1)
    spec = kind.spec
    q0 = spec.random(rng, (20,))
    v = 0.5 * rng.normal(size=(20, kind.nv))
    q1 = spec.integrate(q0, v, tangent)
    assert np.all(spec.check(q1))
    np.testing.assert_allclose(spec.difference(q0, q1, tangent), v, atol=1e-12)
    np.testing.assert_allclose(spec.integrate(q0, np.zeros_like(v), tangent), q0, atol=1e-15)
    # and the difference of two random configurations integrates back (rotations below pi)
    q2 = spec.random(rng, (20,))
    d = spec.difference(q0, q2, tangent)
    axis, origin = _geometry(rng)
    np.testing.assert_allclose(
        spec.motion(spec.integrate(q0, d, tangent), axis, origin), spec.motion(q2, axis, origin), atol=1e-12
    )


@pytest.mark.parametrize("kind", KINDS)
def test_subspace_is_the_derivative_of_the_motion(kind: JointKind) -> None:
    """``H^-1 dH/dt = [S v]`` moving along ``integrate`` in the BODY tangent."""
    rng = np.random.default_rng(2)
    spec = kind.spec
    axis, origin = _geometry(rng)
    S = spec.subspace(axis, origin)
    assert S.shape == (6, kind.nv)
    for _ in range(5):
        q = spec.random(rng)
        v = rng.normal(size=kind.nv)
        Hp = spec.motion(spec.integrate(q, H_STEP * v), axis, origin)
        Hm = spec.motion(spec.integrate(q, -H_STEP * v), axis, origin)
        H = spec.motion(q, axis, origin)
        twist = np.linalg.inv(H) @ (Hp - Hm) / (2 * H_STEP)
        body = np.concatenate([twist[:3, 3], vee(twist[:3, :3])])
        np.testing.assert_allclose(body, S @ v, atol=1e-8)


@pytest.mark.parametrize("kind", [k for k in KINDS if k.wide])
@pytest.mark.parametrize("tangent", [Tangent.WORLD, Tangent.MIXED])
def test_world_and_mixed_tangents_are_the_declared_velocities(kind: JointKind, tangent: Tangent) -> None:
    """Moving along ``integrate`` in the WORLD (MIXED) tangent with v: the joint's velocity written
    as INERTIAL (MIXED) declares, relative to its frame, is v (finite differences)."""
    rng = np.random.default_rng(3)
    spec = kind.spec
    declared = joint_declaration(kind, INERTIAL_VELOCITY if tangent is Tangent.WORLD else MIXED_VELOCITY)
    rows = joint_rows(kind)
    from bridge.conventions.joint_blocks import relative_pose

    for _ in range(5):
        q = spec.random(rng)
        v = rng.normal(size=kind.nv)
        poses = []
        for t in (0.0, H_STEP, -H_STEP):
            R, p = relative_pose(kind, spec.integrate(q, t * v, tangent), NUMPY)
            poses.append((R, p))
        (R, p), (Rp, pp), (Rm, pm) = poses
        R_dot, p_dot = (Rp - Rm) / (2 * H_STEP), (pp - pm) / (2 * H_STEP)
        w = vee(R_dot @ R.T)  # F's axes (WORLD and MIXED declarations: world = F here)
        lin = p_dot - np.cross(w, p) if tangent is Tangent.WORLD else p_dot
        got = np.concatenate([lin, w])
        expected = embed(kind, v, NUMPY)
        idx = np.arange(6) if rows is None else rows
        np.testing.assert_allclose(got[idx], expected[idx], atol=1e-8)
        assert declared.angular_axes.value == "world"


def test_planar_axes_are_orthonormal_and_right_handed() -> None:
    rng = np.random.default_rng(4)
    for n in [np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, -1.0]), *rng.normal(size=(5, 3))]:
        n = n / np.linalg.norm(n)
        e1, e2 = plane_axes(n)
        np.testing.assert_allclose(
            np.column_stack([e1, e2, n]) @ np.column_stack([e1, e2, n]).T, np.eye(3), atol=1e-14
        )
        np.testing.assert_allclose(np.cross(e1, e2), n, atol=1e-14)
    e1, e2 = plane_axes(np.array([0.0, 0.0, 1.0]))
    np.testing.assert_allclose(e1, [1, 0, 0])
    np.testing.assert_allclose(e2, [0, 1, 0])


def test_ball_rotates_about_its_centre_and_free_ignores_axes() -> None:
    rng = np.random.default_rng(5)
    ball = _joint(JointKind.BALL, rng)
    H = ball.motion(JointKind.BALL.spec.random(rng))
    np.testing.assert_allclose(H[:3, :3] @ ball.axis_origin + H[:3, 3], ball.axis_origin, atol=1e-14)
    assert np.all(ball.axis == 0.0)
    free = _joint(JointKind.FREE, rng)
    assert np.all(free.axis == 0.0) and np.all(free.axis_origin == 0.0)
    q = JointKind.FREE.spec.random(rng)
    np.testing.assert_allclose(free.motion(q)[:3, 3], q[:3])


def test_coordinates_layout() -> None:
    kinds = (JointKind.REVOLUTE, JointKind.BALL, JointKind.PRISMATIC, JointKind.FREE, JointKind.PLANAR)
    c = Coordinates(("a", "b", "c", "d", "e"), kinds)
    assert (c.nq, c.nv) == (1 + 4 + 1 + 7 + 3, 1 + 3 + 1 + 6 + 3)
    assert c.wide == (1, 3, 4) and not c.single
    assert c.q_slice(3) == slice(6, 13) and c.v_slice(3) == slice(5, 11)
    assert "b (ball)" in c.describe() and "a (" not in c.describe()
    assert Coordinates(("a",), (JointKind.REVOLUTE,)).single


def _scene() -> bridge.Model:
    rng = np.random.default_rng(6)
    inertia = bridge.random_model(1, seed=1).links[0].inertia
    links = [bridge.Link(n, inertia) for n in ("world", "arm", "hand", "box", "ball")]
    joints = [
        bridge.Joint("shoulder", "revolute", "world", "arm", Transform.identity(), axis=[0, 0, 1]),
        bridge.Joint(
            "wrist", "ball", "arm", "hand", Transform.from_translation([0.5, 0, 0]), axis_origin=[0.1, 0, 0]
        ),
        bridge.Joint("box_free", "free", "world", "box", Transform.identity()),
        bridge.Joint("ball_free", "free", "hand", "ball", Transform.from_translation([0, 0.2, 0])),
    ]
    del rng
    return bridge.Model(
        "scene", links, joints, (), "world", ("shoulder", "wrist", "box_free", "ball_free"), False
    )


def test_scene_model_sizes_and_kinematics() -> None:
    m = _scene()
    assert (m.n_dofs, m.n_positions, m.nv) == (1 + 3 + 6 + 6, 1 + 4 + 7 + 7, 16)
    assert not m.single_coordinate
    s = m.neutral_positions()
    np.testing.assert_allclose(s, [0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0])
    fk = m.forward_kinematics(s)
    np.testing.assert_allclose(fk["box"].matrix, np.eye(4))
    s2 = s.copy()
    s2[5:8] = [1.0, 2.0, 3.0]  # the box's position
    np.testing.assert_allclose(m.forward_kinematics(s2)["box"].translation, [1, 2, 3])
    assert np.all(m.armature == 0.0) and m.armature.shape == (16,)


def test_locking_joints_of_several_coordinates() -> None:
    m = _scene()
    quat = np.array([np.cos(0.3), 0.0, np.sin(0.3), 0.0])
    locked = m.with_dofs(("shoulder", "box_free"), locked={"wrist": quat})
    assert locked.n_dofs == 7 and locked.locked_joints["wrist"] == tuple(quat)
    assert locked.locked_joints["ball_free"] == (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    R = locked.forward_kinematics(np.array([0.0, 0, 0, 0, 1, 0, 0, 0]))["hand"].rotation
    np.testing.assert_allclose(R, bridge.Transform.from_quaternion_wxyz(quat).rotation, atol=1e-15)
    with pytest.raises(bridge.ModelError, match=r"wrist.*4 positions"):
        m.with_dofs(("shoulder",), locked={"wrist": 0.3})
    with pytest.raises(bridge.ModelError, match=r"wrist.*invalid locked position"):
        m.with_dofs(("shoulder",), locked={"wrist": [2.0, 0, 0, 0]})
    released = locked.with_dofs(m.dof_names)
    assert released.coordinates.kinds == m.coordinates.kinds


def test_rerooting_through_a_joint_of_several_coordinates_is_refused() -> None:
    m = _scene()
    assert m.with_base("arm").base == "arm"  # through the revolute shoulder only
    with pytest.raises(bridge.ModelError, match="'wrist' is a ball joint"):
        m.with_base("hand")
