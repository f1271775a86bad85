"""The cells of docs/conventions.md on joints of several coordinates, checked against each library.

Imported by tests/docs/test_conventions.py. Each library cell builds the joint in the library itself
(no bridge), sets random coordinates and velocities, and checks the cell against the library's own
poses: the child's pose in the joint frame F at ``q`` and, by central differences, its velocity
along the library's own motion (Pinocchio's ``integrate``, MuJoCo's ``mj_integratePos``, Drake's
``MapVelocityToQDot``, Newton's ``eval_fk`` of a moved ``joint_q``). The bridge cells check the
neutral joint table and states the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.model.joints import JointKind, Tangent
from tests.docs._math import quat_xyzw_to_matrix
from tests.helpers import assert_close

__all__ = [
    "test_ball_q_bridge",
    "test_ball_q_drake",
    "test_ball_q_mujoco",
    "test_ball_q_newton",
    "test_ball_q_pinocchio",
    "test_ball_v_bridge",
    "test_ball_v_drake",
    "test_ball_v_mujoco",
    "test_ball_v_newton",
    "test_ball_v_pinocchio",
    "test_free_q_bridge",
    "test_free_q_drake",
    "test_free_q_mujoco",
    "test_free_q_newton",
    "test_free_q_pinocchio",
    "test_free_v_bridge",
    "test_free_v_drake",
    "test_free_v_mujoco",
    "test_free_v_newton",
    "test_free_v_pinocchio",
    "test_planar_mujoco",
    "test_planar_newton",
    "test_planar_q_bridge",
    "test_planar_q_drake",
    "test_planar_q_pinocchio",
    "test_planar_v_bridge",
    "test_planar_v_drake",
    "test_planar_v_pinocchio",
]

RNG = np.random.default_rng(2026)
H = 1e-6


def _unit(n: int = 4) -> np.ndarray:
    q = RNG.normal(size=n)
    return q / np.linalg.norm(q)


def _wxyz(q: np.ndarray) -> np.ndarray:
    """The rotation (3, 3) of a quaternion (w, x, y, z)."""
    return quat_xyzw_to_matrix(np.r_[q[1:], q[0]])


def _rates(pose, q0, qdot_or_step) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(R, p, R_dot, p_dot)`` of ``pose(q)`` moved by ``step(q, t)`` at t = 0 (central differences)."""
    R, p = pose(q0)
    Rp, pp = pose(qdot_or_step(q0, H))
    Rm, pm = pose(qdot_or_step(q0, -H))
    return R, p, (Rp - Rm) / (2 * H), (pp - pm) / (2 * H)


def _vee(W: np.ndarray) -> np.ndarray:
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


# ------------------------------------------------------------------------------------------ bridge
def _bridge_motion(kind: JointKind, tangent: Tangent):
    spec = kind.spec
    q0 = spec.random(RNG)
    v = RNG.normal(size=kind.nv)

    def pose(q):
        H_ = spec.motion(q, np.array([0.0, 0.0, 1.0]), np.zeros(3))
        return H_[:3, :3], H_[:3, 3]

    return q0, v, _rates(pose, q0, lambda q, t: spec.integrate(q, t * v, tangent))


def test_ball_q_bridge():
    q0, _, (R, _, _, _) = _bridge_motion(JointKind.BALL, Tangent.BODY)
    assert_close(R, _wxyz(q0), 1e-14)


def test_ball_v_bridge():
    for tangent, in_child in ((Tangent.BODY, True), (Tangent.MIXED, False), (Tangent.WORLD, False)):
        _, v, (R, _, Rd, _) = _bridge_motion(JointKind.BALL, tangent)
        assert_close(_vee(R.T @ Rd) if in_child else _vee(Rd @ R.T), v, 1e-8)


def test_free_q_bridge():
    q0, _, (R, p, _, _) = _bridge_motion(JointKind.FREE, Tangent.BODY)
    assert_close(R, _wxyz(q0[3:]), 1e-14)
    assert_close(p, q0[:3], 0.0)


def test_free_v_bridge():
    _, v, (R, p, Rd, pd) = _bridge_motion(JointKind.FREE, Tangent.BODY)
    assert_close(np.r_[R.T @ pd, _vee(R.T @ Rd)], v, 1e-8)
    _, v, (R, p, Rd, pd) = _bridge_motion(JointKind.FREE, Tangent.MIXED)
    assert_close(np.r_[pd, _vee(Rd @ R.T)], v, 1e-8)
    _, v, (R, p, Rd, pd) = _bridge_motion(JointKind.FREE, Tangent.WORLD)
    w = _vee(Rd @ R.T)
    assert_close(np.r_[pd - np.cross(w, p), w], v, 1e-8)


def test_planar_q_bridge():
    q0, _, (R, p, _, _) = _bridge_motion(JointKind.PLANAR, Tangent.BODY)
    c, s = np.cos(q0[2]), np.sin(q0[2])
    assert_close(R, np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]), 1e-14)
    assert_close(p, [q0[0], q0[1], 0.0], 1e-15)


def test_planar_v_bridge():
    _, v, (R, _, Rd, pd) = _bridge_motion(JointKind.PLANAR, Tangent.BODY)
    assert_close(np.r_[(R.T @ pd)[:2], _vee(R.T @ Rd)[2]], v, 1e-8)
    _, v, (R, _, Rd, pd) = _bridge_motion(JointKind.PLANAR, Tangent.MIXED)
    assert_close(np.r_[pd[:2], _vee(Rd @ R.T)[2]], v, 1e-8)


# ------------------------------------------------------------------------------------------ Pinocchio
def _pinocchio(joint_model):
    import pinocchio as pin

    m = pin.Model()
    X = pin.SE3(quat_xyzw_to_matrix(np.r_[_unit(4)]), RNG.normal(size=3))
    jid = m.addJoint(0, joint_model, X, "j")
    m.appendBodyToJoint(jid, pin.Inertia.Random(), pin.SE3.Identity())
    d = m.createData()
    q0 = pin.randomConfiguration(m, -np.ones(m.nq), np.ones(m.nq))
    v = RNG.normal(size=m.nv)

    def pose(q):
        pin.forwardKinematics(m, d, q)
        F_H_C = X.inverse() * d.oMi[jid]
        return np.array(F_H_C.rotation), np.array(F_H_C.translation)

    return q0, v, _rates(pose, q0, lambda q, t: pin.integrate(m, q, t * v))


def test_ball_q_pinocchio():
    import pinocchio as pin

    q0, _, (R, _, _, _) = _pinocchio(pin.JointModelSpherical())
    assert_close(R, quat_xyzw_to_matrix(q0), 1e-14)  # (x, y, z, w)


def test_ball_v_pinocchio():
    import pinocchio as pin

    _, v, (R, _, Rd, _) = _pinocchio(pin.JointModelSpherical())
    assert_close(_vee(R.T @ Rd), v, 1e-8)  # the child's axes


def test_free_q_pinocchio():
    import pinocchio as pin

    q0, _, (R, p, _, _) = _pinocchio(pin.JointModelFreeFlyer())
    assert_close(R, quat_xyzw_to_matrix(q0[3:]), 1e-14)
    assert_close(p, q0[:3], 1e-14)


def test_free_v_pinocchio():
    import pinocchio as pin

    _, v, (R, _, Rd, pd) = _pinocchio(pin.JointModelFreeFlyer())
    assert_close(np.r_[R.T @ pd, _vee(R.T @ Rd)], v, 1e-8)  # the twist in the child's axes


def test_planar_q_pinocchio():
    import pinocchio as pin

    q0, _, (R, p, _, _) = _pinocchio(pin.JointModelPlanar())
    c, s = q0[2], q0[3]
    assert_close(R, np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]), 1e-14)
    assert_close(p, [q0[0], q0[1], 0.0], 1e-14)


def test_planar_v_pinocchio():
    import pinocchio as pin

    _, v, (R, _, Rd, pd) = _pinocchio(pin.JointModelPlanar())
    assert_close(np.r_[(R.T @ pd)[:2], _vee(R.T @ Rd)[2]], v, 1e-8)


# ------------------------------------------------------------------------------------------ MuJoCo
def _mujoco(kind: str):
    mujoco = pytest.importorskip("mujoco")
    joint = '<freejoint name="j"/>' if kind == "free" else '<joint name="j" type="ball"/>'
    pos, quat = ("0 0 0", "1 0 0 0") if kind == "free" else ("0.1 0.2 0.3", "0.9 0.1 -0.3 0.2")
    xml = f"""<mujoco><worldbody><body name="c" pos="{pos}" quat="{quat}">{joint}
        <geom size="0.1" mass="1"/></body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    q0 = np.array(m.qpos0)
    q0[-4:] = _unit(4)
    v = RNG.normal(size=m.nv)
    R_F = _wxyz(np.array(m.body_quat[1])) if kind == "ball" else np.eye(3)
    p_F = np.array(m.body_pos[1]) if kind == "ball" else np.zeros(3)

    def pose(q):
        d.qpos[:] = q
        mujoco.mj_kinematics(m, d)
        R = R_F.T @ d.xmat[1].reshape(3, 3)
        return R, R_F.T @ (d.xpos[1] - p_F)

    def step(q, t):
        out = np.array(q)
        mujoco.mj_integratePos(m, out, v, t)
        return out

    return q0, v, _rates(pose, q0, step)


def test_ball_q_mujoco():
    q0, _, (R, _, _, _) = _mujoco("ball")
    assert_close(R, _wxyz(q0), 1e-14)


def test_ball_v_mujoco():
    _, v, (R, _, Rd, _) = _mujoco("ball")
    assert_close(_vee(R.T @ Rd), v, 1e-8)


def test_free_q_mujoco():
    q0, _, (R, p, _, _) = _mujoco("free")
    assert_close(R, _wxyz(q0[3:]), 1e-14)
    assert_close(p, q0[:3], 1e-14)


def test_free_v_mujoco():
    _, v, (R, _, Rd, pd) = _mujoco("free")
    assert_close(np.r_[pd, _vee(R.T @ Rd)], v, 1e-8)  # world (F) linear, body angular


# ------------------------------------------------------------------------------------------ Drake
def _drake(kind: str):
    pytest.importorskip("pydrake")
    from pydrake.math import RigidTransform, RotationMatrix
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import (
        BallRpyJoint,
        FixedOffsetFrame,
        PlanarJoint,
        QuaternionFloatingJoint,
        SpatialInertia,
    )

    plant = MultibodyPlant(0.0)
    body = plant.AddRigidBody("c", SpatialInertia.SolidSphereWithMass(1.0, 0.1))
    X_WF = RigidTransform(RotationMatrix(quat_xyzw_to_matrix(_unit(4))), RNG.normal(size=3))
    F = plant.AddFrame(FixedOffsetFrame("F", plant.world_frame(), X_WF))
    cls = {"ball": BallRpyJoint, "free": QuaternionFloatingJoint, "planar": PlanarJoint}[kind]
    joint = plant.AddJoint(
        cls("j", F, body.body_frame(), np.zeros(3)) if kind == "planar" else cls("j", F, body.body_frame())
    )
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    q0 = RNG.normal(size=plant.num_positions()) * 0.5
    if kind == "free":
        q0[:4] = _unit(4)
    v = RNG.normal(size=plant.num_velocities())

    def pose(q):
        plant.SetPositions(ctx, q)
        X = joint.frame_on_parent().CalcPose(ctx, plant.world_frame()).inverse() @ body.EvalPoseInWorld(ctx)
        return X.rotation().matrix(), X.translation()

    def step(q, t):
        plant.SetPositions(ctx, q)
        return q + t * plant.MapVelocityToQDot(ctx, v)

    return q0, v, _rates(pose, q0, step)


def test_ball_q_drake():
    from pydrake.math import RollPitchYaw

    q0, _, (R, _, _, _) = _drake("ball")
    assert_close(R, RollPitchYaw(q0).ToRotationMatrix().matrix(), 1e-14)


def test_ball_v_drake():
    _, v, (R, _, Rd, _) = _drake("ball")
    assert_close(_vee(Rd @ R.T), v, 1e-7)  # F's axes (q_dot is not v)


def test_free_q_drake():
    q0, _, (R, p, _, _) = _drake("free")
    assert_close(R, _wxyz(q0[:4]), 1e-14)
    assert_close(p, q0[4:], 1e-14)


def test_free_v_drake():
    _, v, (R, _, Rd, pd) = _drake("free")
    assert_close(np.r_[_vee(Rd @ R.T), pd], v, 1e-7)  # angular first, F's axes


def test_planar_q_drake():
    q0, _, (R, p, _, _) = _drake("planar")
    c, s = np.cos(q0[2]), np.sin(q0[2])
    assert_close(R, np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]), 1e-14)
    assert_close(p, [q0[0], q0[1], 0.0], 1e-14)


def test_planar_v_drake():
    _, v, (R, _, Rd, pd) = _drake("planar")
    assert_close(np.r_[pd[:2], _vee(Rd @ R.T)[2]], v, 1e-7)  # F's axes


# ------------------------------------------------------------------------------------------ Newton
def _newton(kind: str):
    """A Newton body on a ball or free joint from the world at a random joint frame F: its joint_q,
    a random joint_qd, and the body's pose in F and world velocity from Newton's ``eval_fk``."""
    pytest.importorskip("newton")
    from bridge.backends.newton.model import require_newton

    newton, wp = require_newton()
    b = newton.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    com = RNG.normal(size=3) * 0.2
    link = b.add_link(com=wp.vec3(*com), inertia=wp.mat33(*(0.1 * np.eye(3)).ravel()), mass=1.0, label="c")
    qF = _unit(4)
    X = wp.transform(wp.vec3(*RNG.normal(size=3)), wp.quat(*qF))
    if kind == "ball":
        j = b.add_joint_ball(-1, link, parent_xform=X, child_xform=wp.transform_identity())
    else:
        j = b.add_joint_free(link, parent_xform=X, child_xform=wp.transform_identity())
    b.add_articulation([j])
    m = b.finalize(device="cpu")
    q = np.array(m.joint_q.numpy(), dtype=float)
    q[-4:] = _unit(4)
    qd = RNG.normal(size=m.joint_dof_count)
    state = m.state()
    m.joint_q.assign(q.astype(np.float32))
    m.joint_qd.assign(qd.astype(np.float32))
    newton.eval_fk(m, m.joint_q, m.joint_qd, state)
    x = state.body_q.numpy()[0].astype(float)
    R_F, p_F = quat_xyzw_to_matrix(qF), np.array(X.p, dtype=float)
    R, p = R_F.T @ quat_xyzw_to_matrix(x[3:]), R_F.T @ (x[:3] - p_F)
    v_com, w = state.body_qd.numpy()[0, :3].astype(float), state.body_qd.numpy()[0, 3:].astype(float)
    return q, qd, (R, p), (R_F.T @ v_com, R_F.T @ w), com


def test_ball_q_newton():
    q, _, (R, _), _, _ = _newton("ball")
    assert_close(R, quat_xyzw_to_matrix(q), 1e-6)  # (x, y, z, w); float32


def test_ball_v_newton():
    _, qd, _, (_, w_F), _ = _newton("ball")
    assert_close(w_F, qd, 1e-5)  # the angular velocity in F's axes


def test_free_q_newton():
    q, _, (R, p), _, _ = _newton("free")
    assert_close(R, quat_xyzw_to_matrix(q[3:]), 1e-6)
    assert_close(p, q[:3], 1e-6)


def test_free_v_newton():
    """joint_qd of a free joint: the velocity of the child's centre of mass and the angular velocity,
    both in F's axes (Newton's body_qd is the centre of mass's velocity, world axes)."""
    _, qd, (R, _), (v_com_F, w_F), com = _newton("free")
    assert_close(np.r_[v_com_F, w_F], qd, 1e-5)
    # not the velocity of the child's origin: that differs by w x (R c)
    assert not np.allclose(v_com_F - np.cross(w_F, R @ com), qd[:3], atol=1e-3)


def test_planar_mujoco():
    """MuJoCo has no planar joint: a body with slide x, slide y and a hinge about z (what bridge writes)
    has qpos (x, y, theta) and qvel (x_dot, y_dot, theta_dot) in F's axes, the MIXED planar velocity."""
    mujoco = pytest.importorskip("mujoco")
    xml = """<mujoco><worldbody><body name="c" pos="0.1 0.2 0.3" quat="0.9 0.1 -0.3 0.2">
        <joint name="x" type="slide" axis="1 0 0"/><joint name="y" type="slide" axis="0 1 0"/>
        <joint name="t" type="hinge" axis="0 0 1"/><geom size="0.1" mass="1"/></body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    q0, v = RNG.normal(size=3), RNG.normal(size=3)
    R_F, p_F = _wxyz(np.array(m.body_quat[1])), np.array(m.body_pos[1])

    def pose(q):
        d.qpos[:] = q
        mujoco.mj_kinematics(m, d)
        return R_F.T @ d.xmat[1].reshape(3, 3), R_F.T @ (d.xpos[1] - p_F)

    R, p, Rd, pd = _rates(pose, q0, lambda q, t: q + t * v)
    c, s = np.cos(q0[2]), np.sin(q0[2])
    assert_close(R, np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]), 1e-14)
    assert_close(p, [q0[0], q0[1], 0.0], 1e-14)
    assert_close(np.r_[pd[:2], _vee(Rd @ R.T)[2]], v, 1e-8)


def test_planar_newton():
    """Newton has no planar joint type; bridge's Newton builder refuses one by name."""
    pytest.importorskip("newton")
    import newton

    assert not hasattr(newton.JointType, "PLANAR")
    m = bridge.random_model(3, seed=1, joint_kinds=("planar",))
    with pytest.raises(bridge.UnsupportedError, match="planar"):
        bridge.to_newton(m)
