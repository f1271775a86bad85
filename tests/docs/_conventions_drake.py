"""The Drake cells of docs/conventions.md, checked against the installed Drake.

Imported by tests/docs/test_conventions.py (whose page check looks up cell tests among its own
names), so that the Drake section keeps its tests in one module of its own. Velocity and
acceleration cells are checked against central finite differences of poses along a trajectory of
Drake's own state (q integrated with Drake's ``MapVelocityToQDot``), not against bridge.
"""

from __future__ import annotations

import logging
from types import SimpleNamespace

import numpy as np
import pytest

import bridge
from bridge.conventions.change_of_variables import MIXED, change_of_variables
from tests.backends.drake.models import chain, wide_state
from tests.helpers import random_state, small_model

__all__ = [
    "drake_case",
    "drake_wide_case",
    "icub_drake",
    "test_acc_drake",
    "test_ball_drake",
    "test_base_pose_drake",
    "test_base_vel_drake",
    "test_bias_term_drake",
    "test_com_drake",
    "test_compose_drake",
    "test_count_drake",
    "test_damping_drake",
    "test_dof_order_drake",
    "test_free_drake",
    "test_gen_acc_drake",
    "test_gen_force_drake",
    "test_gravity_drake",
    "test_inverse_dynamics_drake",
    "test_joint_pos_drake",
    "test_mass_drake",
    "test_momentum_drake",
    "test_order_drake",
    "test_planar_drake",
    "test_pose_drake",
    "test_quat_drake",
    "test_rep_drake",
]

SWAP = np.array([3, 4, 5, 0, 1, 2])
DT = 1e-5


def _close(a, b, rtol=1e-10) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and float(np.linalg.norm(a - b)) <= rtol * max(1.0, float(np.linalg.norm(b)))


def _random_pose(rng) -> bridge.Transform:
    q = rng.normal(size=4)
    return bridge.Transform.from_quaternion_xyzw(q / np.linalg.norm(q), rng.normal(size=3))


def _vee(W: np.ndarray) -> np.ndarray:
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


@pytest.fixture(scope="module")
def drake_case():
    """The small test model (every joint kind, axis origins, a frame ``tool``) in Drake through
    ``to_drake``, at a random state given as Drake's (q, v) and a generalized acceleration vdot."""
    pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")
    rng = np.random.default_rng(21)
    model = small_model(rng)
    plant = bridge.to_drake(model)
    st = random_state(model, rng, "mixed")
    q, v = bridge.to_drake_state(model, st)
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, q)
    plant.SetVelocities(context, v)
    vdot = rng.normal(size=model.nv)
    cov = change_of_variables(model, st, MIXED, bridge.conventions.convert.convention("drake"))
    return SimpleNamespace(
        model=model, plant=plant, context=context, st=st, q=q, v=v, vdot=vdot, rng=rng, cov=cov
    )


def _at(c, t: float):
    """A context at time t along the motion of constant vdot (v(t) = v + t vdot), the base pose
    integrated by bridge.integrate (RK4) in MIXED, whose acceleration is T^-1 vdot (T_dot = 0)."""
    nu_dot = c.cov.velocity_back(c.vdot)
    st = bridge.integrate(c.st, nu_dot[:6], nu_dot[6:], t)
    q, v = bridge.to_drake_state(c.model, st)
    ctx = c.plant.CreateDefaultContext()
    c.plant.SetPositions(ctx, q)
    c.plant.SetVelocities(ctx, v)
    return ctx


def _pose(c, frame, t: float) -> np.ndarray:
    ctx = _at(c, t)
    return c.plant.CalcRelativeTransform(ctx, c.plant.world_frame(), frame).GetAsMatrix4()


def _fd(f):
    return (np.asarray(f(DT)) - np.asarray(f(-DT))) / (2 * DT)


# ------------------------------------------------------------------ spatial algebra
def test_order_drake(drake_case):
    from pydrake.multibody.math import SpatialAcceleration, SpatialForce, SpatialVelocity

    w, v = np.array([1.0, 2, 3]), np.array([4.0, 5, 6])
    for cls in (SpatialVelocity, SpatialAcceleration, SpatialForce):
        x = cls(w, v)
        assert np.array_equal(x.get_coeffs(), [1, 2, 3, 4, 5, 6])
        assert np.array_equal(x.rotational(), w) and np.array_equal(x.translational(), v)
    c = drake_case
    frame = c.plant.GetFrameByName("tool")
    J = c.plant.CalcJacobianSpatialVelocity(
        c.context, _kv(), frame, np.zeros(3), c.plant.world_frame(), c.plant.world_frame()
    )
    V = frame.CalcSpatialVelocityInWorld(c.context)
    assert _close(J[:3] @ c.v, V.rotational()) and _close(J[3:] @ c.v, V.translational())


def _kv():
    from pydrake.multibody.tree import JacobianWrtVariable

    return JacobianWrtVariable.kV


def test_pose_drake(drake_case):
    from pydrake.math import RigidTransform, RotationMatrix

    c = drake_case
    rng = np.random.default_rng(1)
    H = _random_pose(rng)
    X = RigidTransform(RotationMatrix(H.rotation), H.translation)
    p = rng.normal(size=3)
    assert _close(X.multiply(p), H.apply(p)) and _close(X.GetAsMatrix4(), H.matrix)
    world_H_base = c.plant.CalcRelativeTransform(
        c.context, c.plant.world_frame(), c.plant.GetFrameByName("a")
    )
    assert _close(world_H_base.GetAsMatrix4(), c.st.world_H_base.matrix)


def test_compose_drake():
    pytest.importorskip("pydrake")
    from pydrake.math import RigidTransform, RotationMatrix

    rng = np.random.default_rng(2)
    A = _random_pose(rng)
    B = _random_pose(rng)
    XA = RigidTransform(RotationMatrix(A.rotation), A.translation)
    XB = RigidTransform(RotationMatrix(B.rotation), B.translation)
    assert _close((XA @ XB).GetAsMatrix4(), (A @ B).matrix)
    assert _close(XA.multiply(XB).GetAsMatrix4(), (A @ B).matrix)


def test_quat_drake(drake_case):
    from pydrake.common.eigen_geometry import Quaternion
    from pydrake.math import RotationMatrix

    c = drake_case
    w, x, y, z = 0.5, 0.1, -0.7, 0.3
    n = np.sqrt(w * w + x * x + y * y + z * z)
    quat = Quaternion(w / n, x / n, y / n, z / n)
    assert _close(quat.wxyz(), np.array([w, x, y, z]) / n)
    assert _close(RotationMatrix(quat).matrix(), bridge.Transform.from_quaternion_wxyz(quat.wxyz()).rotation)
    assert _close(RotationMatrix(Quaternion(c.q[:4])).matrix(), c.st.world_H_base.rotation)


# ------------------------------------------------------------------ velocities
def test_rep_drake(drake_case):
    """Frame.CalcSpatialVelocity(context, W, E): F's origin measured in W, expressed in E (angular
    first): E = W is MIXED, E = F is BODY; INERTIAL is the velocity shifted to the world origin."""
    c = drake_case
    plant, W = c.plant, c.plant.world_frame()
    F = plant.GetFrameByName("tool")
    H = _pose(c, F, 0.0)
    Hd = _fd(lambda t: _pose(c, F, t))
    R, o, Rd, od = H[:3, :3], H[:3, 3], Hd[:3, :3], Hd[:3, 3]
    w = _vee(Rd @ R.T)
    mixed = F.CalcSpatialVelocity(c.context, W, W).get_coeffs()
    body = F.CalcSpatialVelocity(c.context, W, F).get_coeffs()
    inertial = F.CalcSpatialVelocity(c.context, W, W).Shift(-o).get_coeffs()
    assert _close(mixed[SWAP], np.concatenate([od, w]), 1e-8)
    assert _close(body[SWAP], np.concatenate([R.T @ od, _vee(R.T @ Rd)]), 1e-8)
    assert _close(inertial[SWAP], np.concatenate([od - (Rd @ R.T) @ o, w]), 1e-8)


# ------------------------------------------------------------------ state layout
def test_base_pose_drake(drake_case):
    c = drake_case
    H = c.st.world_H_base
    assert c.plant.num_positions() == 7 + c.model.n_dofs and c.plant.num_velocities() == 6 + c.model.n_dofs
    assert _close(c.q[:4], H.as_quaternion_wxyz()) and _close(c.q[4:7], H.translation)
    joint = c.plant.GetJointByName(bridge.backends.drake.FLOATING_JOINT)
    assert joint.type_name() == "quaternion_floating" and joint.position_start() == 0


def test_joint_pos_drake(drake_case):
    c = drake_case
    joint = c.plant.GetJointByName("j3")  # continuous in the model
    assert c.model.joint("j3").kind.value == "continuous"
    assert joint.type_name() == "revolute" and joint.num_positions() == 1
    assert np.isinf(joint.position_lower_limits()).all() and np.isinf(joint.position_upper_limits()).all()
    assert c.q[joint.position_start()] == c.st.s[c.model.dof_index("j3")]


@pytest.fixture(scope="module")
def drake_wide_case():
    """A chain ball (j1) -> free (j2) -> planar (j3) -> revolute through ``to_drake`` at a random
    state (Drake's q, v), and each wide joint's Drake frames F, M."""
    pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")
    model = chain(("ball", "free", "planar", "revolute"), seed=3)
    st = wide_state(model, np.random.default_rng(11), "mixed")
    plant = bridge.to_drake(model)
    q, v = bridge.to_drake_state(model, st)
    context = plant.CreateDefaultContext()
    bridge.backends.drake.set_world_H_base(plant, context, st.world_H_base)
    plant.SetPositions(context, q)
    plant.SetVelocities(context, v)
    return SimpleNamespace(model=model, plant=plant, context=context, st=st, q=q, v=v)


def _joint_motion(c, name: str):
    """Drake's joint ``name``: its q and v slices, ``X_FM`` and its central difference along
    ``q + t N(q) v`` (Drake's own kinematic map)."""
    j = c.plant.GetJointByName(name)
    F, M = j.frame_on_parent(), j.frame_on_child()
    qdot = c.plant.MapVelocityToQDot(c.context, c.v)

    def X(t: float) -> np.ndarray:
        ctx = c.plant.CreateDefaultContext()
        bridge.backends.drake.set_world_H_base(c.plant, ctx, c.st.world_H_base)
        c.plant.SetPositions(ctx, c.q + t * qdot)
        return c.plant.CalcRelativeTransform(ctx, F, M).GetAsMatrix4()

    qs = slice(j.position_start(), j.position_start() + j.num_positions())
    vs = slice(j.velocity_start(), j.velocity_start() + j.num_velocities())
    return j, c.q[qs], c.v[vs], qdot[qs], X(0.0), _fd(X)


def test_ball_drake(drake_wide_case):
    from pydrake.math import RollPitchYaw

    c = drake_wide_case
    j, q, v, qdot, X, Xd = _joint_motion(c, "j1")
    assert j.type_name() == "ball_rpy" and (j.num_positions(), j.num_velocities()) == (3, 3)
    assert _close(X[:3, :3], RollPitchYaw(q).ToRotationMatrix().matrix()) and _close(X[:3, 3], np.zeros(3))
    assert _close(_vee(Xd[:3, :3] @ X[:3, :3].T), v, 1e-8)  # the angular velocity of M in F, F's axes
    assert np.abs(qdot - v).max() > 1e-3  # roll-pitch-yaw rates are not it
    k = c.model.coordinates.index["j1"]
    w_body = c.st.to("body").s_dot[c.model.coordinates.v_slice(k)]
    assert _close(X[:3, :3] @ w_body, v)  # BODY (child axes) -> Drake: R
    T, T_dot = bridge.velocity_transform(c.model, c.st.to("body"), "body", "drake")
    lay = bridge.backends.drake.drake_layout(c.model)
    rows, cols = slice(lay.idx_v[k], lay.idx_v[k] + 3), c.model.coordinates.v_slice(k)
    w = w_body
    hat = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    assert _close(T[rows, cols], X[:3, :3]) and _close(T_dot[rows, cols], X[:3, :3] @ hat)


def test_free_drake(drake_wide_case):
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import SpatialInertia, UnitInertia

    c = drake_wide_case
    j, q, v, qdot, X, Xd = _joint_motion(c, "j2")
    assert j.type_name() == "quaternion_floating" and j.frame_on_child().is_body_frame()
    H = bridge.Transform.from_quaternion_wxyz(q[:4], q[4:])
    assert _close(H.matrix, X)  # [qw qx qy qz; p_FM]
    assert _close(_vee(Xd[:3, :3] @ X[:3, :3].T), v[:3], 1e-8) and _close(Xd[:3, 3], v[3:], 1e-8)
    assert _close(qdot[4:], v[3:])
    plant = MultibodyPlant(0.0)  # a body without an inboard joint: Finalize gives it one
    plant.AddRigidBody("box", SpatialInertia(1.0, np.zeros(3), UnitInertia(1, 1, 1), True))
    plant.Finalize()
    box = plant.GetJointByName("box")
    assert box.type_name() == "quaternion_floating" and box.parent_body().name() == "world"


def test_planar_drake(drake_wide_case):
    c = drake_wide_case
    j, q, v, qdot, X, Xd = _joint_motion(c, "j3")
    x, y, th = q
    co, si = np.cos(th), np.sin(th)
    assert _close(X[:3, :3], [[co, -si, 0], [si, co, 0], [0, 0, 1]]) and _close(X[:3, 3], [x, y, 0])
    assert _close(qdot, v)
    assert _close(Xd[:2, 3], v[:2], 1e-8) and _close(_vee(Xd[:3, :3] @ X[:3, :3].T)[2], v[2], 1e-8)
    e1, e2 = bridge.model.joints.plane_axes(c.model.joint("j3").axis)  # F's x, y: the plane axes
    C_R_M = j.frame_on_child().GetFixedPoseInBodyFrame().rotation().matrix()
    assert _close(C_R_M[:, 0], e1) and _close(C_R_M[:, 1], e2)
    k = c.model.coordinates.index["j3"]
    assert _close(c.st.s_dot[c.model.coordinates.v_slice(k)], v)  # bridge's MIXED planar velocity


def test_base_vel_drake(drake_case):
    c = drake_case
    base = c.plant.GetFrameByName("a")
    Hd = _fd(lambda t: _pose(c, base, t))
    H = _pose(c, base, 0.0)
    assert _close(c.v[:3], _vee(Hd[:3, :3] @ H[:3, :3].T), 1e-8) and _close(c.v[3:6], Hd[:3, 3], 1e-8)
    assert _close(c.v[:6], c.st.base_velocity[SWAP])
    T, T_dot = bridge.velocity_transform(c.model, c.st, "mixed", "drake")
    assert set(np.unique(T)) == {0.0, 1.0} and not T_dot.any()
    qdot = c.plant.MapVelocityToQDot(c.context, c.v)
    qw, qv, om = c.q[0], c.q[1:4], c.v[:3]
    assert _close(qdot[4:7], c.v[3:6])
    assert _close(qdot[:4], 0.5 * np.concatenate([[-om @ qv], qw * om + np.cross(om, qv)]))


def test_gen_acc_drake(drake_case):
    """vdot[0:6] is the base's classical acceleration (omega_dot, o_ddot): Drake's own spatial
    acceleration of the base under the forces that produce vdot, and the second derivative of o."""
    c = drake_case
    W, base = c.plant.world_frame(), c.plant.GetFrameByName("a")
    accel = base.CalcSpatialAcceleration(_at_vdot(c), W, W)
    assert _close(accel.get_coeffs(), c.vdot[:6], 1e-9)
    h = 1e-4
    o = [_pose(c, base, t)[:3, 3] for t in (-h, 0.0, h)]
    assert _close((o[0] - 2 * o[1] + o[2]) / h**2, c.vdot[3:6], 1e-6)
    w = [base.CalcSpatialVelocityInWorld(_at(c, t)).rotational() for t in (-DT, DT)]
    assert _close((w[1] - w[0]) / (2 * DT), c.vdot[:3], 1e-8)


def _at_vdot(c):
    """A context whose accelerations come from vdot: Drake computes frame accelerations from the
    context's state and the plant's forward dynamics, so vdot is imposed through applied forces
    ``tau = ID(vdot)`` on an otherwise unforced plant."""
    from pydrake.multibody.tree import MultibodyForces

    plant = c.plant
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, c.q)
    plant.SetVelocities(ctx, c.v)
    forces = MultibodyForces(plant)
    plant.CalcForceElementsContribution(ctx, forces)  # gravity
    tau = plant.CalcInverseDynamics(ctx, c.vdot, forces)
    plant.get_applied_generalized_force_input_port().FixValue(ctx, tau)
    return ctx


def test_gen_force_drake(drake_case):
    """A wrench (f, tau) on the base in MIXED (at the base origin, world axes) is Drake's generalized
    force (tau, f): the swap, dual to v."""
    from pydrake.multibody.math import SpatialForce
    from pydrake.multibody.tree import MultibodyForces

    c = drake_case
    plant, W = c.plant, c.plant.world_frame()
    wrench = c.rng.normal(size=6)  # (f, tau) in MIXED
    forces = MultibodyForces(plant)
    plant.GetBodyByName("a").AddInForce(
        c.context, np.zeros(3), SpatialForce(wrench[3:], wrench[:3]), W, forces
    )
    zero = np.zeros(plant.num_velocities())
    delta = plant.CalcInverseDynamics(c.context, zero, MultibodyForces(plant)) - plant.CalcInverseDynamics(
        c.context, zero, forces
    )
    assert _close(delta[:6], wrench[SWAP]) and np.allclose(delta[6:], 0.0, atol=1e-12)
    assert _close(c.cov.force_back(delta)[:6], wrench)
    assert np.isclose(delta @ c.v, wrench @ c.st.base_velocity)  # the same power


def test_dof_order_drake(drake_case):
    """Drake numbers the velocities by its forest: for to_drake(model), depth first from the base
    (the order of Pinocchio and of model.depth_first_joints); read with Joint.velocity_start()."""
    c = drake_case
    from bridge.robots import robot_path

    for model in (c.model, bridge.load_urdf(robot_path("iCubGazeboV2_5"))):
        plant = bridge.to_drake(model) if model is not c.model else c.plant
        order = sorted(model.dof_names, key=lambda d: plant.GetJointByName(d).velocity_start())
        assert order == [j.name for j in model.depth_first_joints if j.movable]
    assert list(c.model.dof_names) != order  # the small model's DOF order is not depth first


# ------------------------------------------------------------------ dynamics
def _kd(c, rep: str = "mixed") -> bridge.KinDyn:
    kd = bridge.KinDyn(c.model, "pinocchio", rep)
    kd.set_robot_state(c.st.to(rep))
    return kd


def test_mass_drake(drake_case):
    c = drake_case
    M_D = c.plant.CalcMassMatrix(c.context)
    T = c.cov.matrix()
    assert _close(M_D, T @ _kd(c).mass_matrix() @ T.T)  # T^-T M T^-1 with T a permutation


def test_bias_term_drake(drake_case):
    c = drake_case
    plant = c.plant
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, c.q)
    assert not plant.CalcBiasTerm(ctx).any()  # v = 0: no gravity in it
    h = c.cov.force_back(plant.CalcBiasTerm(c.context) - plant.CalcGravityGeneralizedForces(c.context))
    assert _close(h, _kd(c).bias_forces())


def test_gravity_drake(drake_case):
    c = drake_case
    g_D = c.plant.CalcGravityGeneralizedForces(c.context)
    assert _close(c.cov.force_back(-g_D), _kd(c).gravity_forces())
    assert g_D[5] < 0  # the vertical force on the base: weight pulls down, on the right-hand side


def test_inverse_dynamics_drake(drake_case):
    from pydrake.multibody.math import SpatialForce
    from pydrake.multibody.tree import MultibodyForces

    c = drake_case
    plant = c.plant
    forces = MultibodyForces(plant)
    f = c.rng.normal(size=6)  # (f, tau) at the tool frame, in its axes (BODY)
    frame = plant.GetFrameByName("tool")
    X_BF = frame.GetFixedPoseInBodyFrame()
    frame.body().AddInForce(
        c.context, X_BF.rotation().matrix().T @ X_BF.translation(), SpatialForce(f[3:], f[:3]), frame, forces
    )
    tau_D = plant.CalcInverseDynamics(c.context, c.vdot, forces) - plant.CalcGravityGeneralizedForces(
        c.context
    )
    cov = c.cov
    nu_dot = cov.acceleration_back(c.vdot)  # = T^-1 vdot (T_dot = 0)
    kd = _kd(c, "body")
    kd_m = _kd(c)
    expected = kd_m.inverse_dynamics(nu_dot[:6], nu_dot[6:])
    # -J^T f with the BODY Jacobian of the tool frame, in MIXED generalized coordinates
    J_body = kd.frame_jacobian("tool")
    T_mb, _ = bridge.velocity_transform(c.model, c.st, "mixed", "body")
    expected = expected - (J_body @ T_mb).T @ f
    assert _close(cov.force_back(tau_D), expected)
    assert np.allclose(
        plant.CalcInverseDynamics(c.context, 0 * c.vdot, MultibodyForces(plant)),
        plant.CalcBiasTerm(c.context),
    )


def test_acc_drake(drake_case):
    """Drake's spatial accelerations are classical (omega_dot, p_ddot) of a point: expressed in the
    world they are the derivative of the MIXED velocity; in F axes they differ from the derivative
    of the BODY velocity by (0, omega x v)."""
    c = drake_case
    plant, W = c.plant, c.plant.world_frame()
    F = plant.GetFrameByName("tool")
    ctx = _at_vdot(c)
    A_W = F.CalcSpatialAcceleration(ctx, W, W).get_coeffs()
    A_F = F.CalcSpatialAcceleration(ctx, W, F).get_coeffs()

    def vel(t: float, E) -> np.ndarray:
        ctx_t = _at(c, t)
        return F.CalcSpatialVelocity(ctx_t, W, F if E == "F" else W).get_coeffs()

    d_mixed = _fd(lambda t: vel(t, "W"))
    d_body = _fd(lambda t: vel(t, "F"))
    assert _close(A_W, d_mixed, 1e-7)
    V_F = vel(0.0, "F")
    assert not _close(A_F, d_body, 1e-3)
    assert _close(A_F - np.concatenate([np.zeros(3), np.cross(V_F[:3], V_F[3:])]), d_body, 1e-7)
    bias = plant.CalcBiasSpatialAcceleration(c.context, _kv(), F, np.zeros(3), W, W).get_coeffs()
    J = plant.CalcJacobianSpatialVelocity(c.context, _kv(), F, np.zeros(3), W, W)
    assert _close(J @ c.vdot + bias, A_W)


def test_momentum_drake(drake_case):
    c = drake_case
    com = c.plant.CalcCenterOfMassPositionInWorld(c.context)
    h = c.plant.CalcSpatialMomentumInWorldAboutPoint(c.context, com).get_coeffs()
    assert _close(h[SWAP], _kd(c).centroidal_momentum())


def test_com_drake():
    pytest.importorskip("pydrake")
    rng = np.random.default_rng(22)
    model = small_model(rng, floating=False)
    st = random_state(model, rng, "mixed")
    plant = bridge.to_drake(model)
    ctx = plant.CreateDefaultContext()
    bridge.backends.drake.set_world_H_base(plant, ctx, st.world_H_base)
    q, _ = bridge.to_drake_state(model, st)
    plant.SetPositions(ctx, q)
    com = plant.CalcCenterOfMassPositionInWorld(ctx)
    fk = model.forward_kinematics(st.s)
    expected = (
        sum(link.mass * (st.world_H_base @ fk[link.name]).apply(link.inertia.com) for link in model.links)
        / model.total_mass
    )
    assert _close(com, expected)  # the base link welded to the world counts
    import pinocchio as pin

    pm = bridge.to_pinocchio(model)
    q_pin, _ = bridge.to_pinocchio_state(model, st)
    c_pin = pin.centerOfMass(pm, pm.createData(), q_pin)
    assert not _close(c_pin, st.world_H_base.inverse().apply(com), 1e-3)


# ------------------------------------------------------------------ Drake's parser on iCub
@pytest.fixture(scope="module")
def icub_drake():
    pytest.importorskip("pydrake")
    from bridge.backends.drake.native import load_drake_urdf
    from bridge.robots import robot_path

    logger = logging.getLogger("drake")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return load_drake_urdf(robot_path("iCubGazeboV2_5"))
    finally:
        logger.setLevel(level)


def _drake_joints(plant) -> list:
    from pydrake.multibody.tree import JointIndex

    return [plant.get_joint(JointIndex(i)) for i in range(plant.num_joints())]


def test_count_drake(icub_drake):
    plant = icub_drake
    joints = _drake_joints(plant)
    assert plant.num_bodies() == 214  # 213 links and the world
    assert len(joints) == 213
    assert sum(j.type_name() == "weld" for j in joints) == 180
    assert sum(j.type_name() == "revolute" for j in joints) == 32
    (free,) = [j for j in joints if j.num_velocities() == 6]
    assert free.type_name() == "quaternion_floating" and free.name() == "root_link"
    assert free.child_body().name() == "root_link"


def test_damping_drake(icub_drake):
    from pydrake.multibody.tree import MultibodyForces

    plant = icub_drake
    damped = [
        j for j in _drake_joints(plant) if j.num_velocities() == 1 and np.any(j.default_damping_vector())
    ]
    assert len(damped) == 32
    ctx = plant.CreateDefaultContext()
    plant.mutable_gravity_field().set_gravity_vector([0.0, 0.0, 0.0])
    v = np.zeros(plant.num_velocities())
    j = damped[0]
    v[j.velocity_start()] = 1.0
    plant.SetVelocities(ctx, v)
    forces = MultibodyForces(plant)
    plant.CalcForceElementsContribution(ctx, forces)
    tau = forces.generalized_forces()
    assert np.isclose(tau[j.velocity_start()], -j.default_damping_vector()[0])
    plant.mutable_gravity_field().set_gravity_vector([0.0, 0.0, -9.81])
