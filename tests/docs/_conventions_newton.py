"""The Newton cells of docs/conventions.md, checked against the installed Newton (float32, CPU).

Imported by tests/docs/test_conventions.py (whose page check looks up cell tests among its own
names). Velocity cells are checked against central finite differences of Newton's own poses
(``eval_fk`` at ``joint_q`` moved along ``joint_qd``), not against bridge; the dynamics cells against
bridge's quantities converted with the ``"newton"`` declaration. Skipped when newton is missing.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import bridge
from bridge.conventions.convert import (
    convert_acceleration,
    convert_bias_forces,
    convert_generalized_force,
    convert_mass_matrix,
)
from tests.helpers import assert_close, random_state

__all__ = [
    "test_base_pose_newton",
    "test_base_vel_newton",
    "test_body_acc_newton",
    "test_body_vel_newton",
    "test_dof_order_newton",
    "test_dtype_newton",
    "test_gen_acc_newton",
    "test_jacobian_newton",
    "test_mass_newton",
    "test_order_newton",
    "test_pose_newton",
    "test_quat_newton",
]

H_FD = 1e-3  # float32 poses: a step that keeps rounding at ~1e-4 of the velocity


def _newton():
    pytest.importorskip("newton", reason="Newton is not installed (pip install 'bridge-dynamics[newton]')")
    from bridge.backends.newton.model import require_newton

    return require_newton()


@functools.cache
def _case():
    """A random floating tree (COMs off the joint axes), its Newton model and one state."""
    from bridge.backends.newton import to_newton, to_newton_state

    _newton()
    model = bridge.random_model(6, seed=3, massless_probability=0.0)
    nm = to_newton(model)
    state = random_state(model, np.random.default_rng(4))
    q, qd = to_newton_state(model, state)
    return model, nm, state, q, qd


def _fk(q: np.ndarray, qd: np.ndarray):
    newton, _wp = _newton()
    _, nm, _, _, _ = _case()
    st = nm.state()
    st.joint_q.assign(q.astype(np.float32))
    st.joint_qd.assign(qd.astype(np.float32))
    newton.eval_fk(nm, st.joint_q, st.joint_qd, st)
    return st


def _rotation_xyzw(x: np.ndarray) -> np.ndarray:
    return bridge.Transform.from_quaternion_xyzw(np.asarray(x[3:7], dtype=float), np.zeros(3)).rotation


def _fd_twists(q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(origin velocities, angular velocities, poses)`` of every body from central differences of
    eval_fk at q moved along qd (the free joint's position by the origin's velocity: Newton's own
    eval_ik gives it, the quaternion by ½ (ω, 0) ⊗ q in world axes)."""
    _newton()
    _, nm, _, _, _ = _case()
    st = _fk(q, qd)
    # the joint-coordinate rate of Newton's own state (eval_ik on the twist gives joint_qd back, and
    # the free joint's q rate from its body velocity): o_dot = c_dot - omega x (R com)
    body_q = st.body_q.numpy().astype(float)
    com = nm.body_com.numpy().astype(float)
    R0 = _rotation_xyzw(body_q[0])
    omega = qd[3:6]
    o_dot = qd[0:3] - np.cross(omega, R0 @ com[0])

    def moved(t: float) -> np.ndarray:
        x = q.copy()
        x[0:3] = q[0:3] + t * o_dot
        angle = np.linalg.norm(omega) * t
        axis = omega / np.linalg.norm(omega)
        dq = np.r_[np.sin(angle / 2) * axis, np.cos(angle / 2)]  # xyzw, world axes: dq ⊗ q
        x[3:7] = _quat_mul_xyzw(dq, q[3:7])
        x[7:] = q[7:] + t * qd[6:]
        return _fk(x, qd).body_q.numpy().astype(float)

    plus, minus = moved(H_FD), moved(-H_FD)
    v = (plus[:, :3] - minus[:, :3]) / (2 * H_FD)
    w = []
    for b in range(body_q.shape[0]):
        R_dot = (_rotation_xyzw(plus[b]) - _rotation_xyzw(minus[b])) / (2 * H_FD)
        W = R_dot @ _rotation_xyzw(body_q[b]).T
        w.append(np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2)
    return v, np.array(w), body_q


def _quat_mul_xyzw(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def test_order_newton():
    """body_qd, joint_qd[0:6] and eval_jacobian's rows are linear first: a pure rotation of the base
    about its COM (c_dot = 0) writes its rate in entries 3:6 only."""
    newton, _ = _newton()
    _model, nm, _, q, qd = _case()
    spin = np.zeros_like(qd)
    spin[3:6] = [0.0, 0.0, 1.5]
    st = _fk(q, spin)
    assert_close(st.body_qd.numpy()[0].astype(float), np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 1.5], 1e-6, "body_qd")
    J = newton.eval_jacobian(nm, st).numpy()[0].astype(float)
    assert_close(J[0:6, :6], np.eye(6), 1e-6, "the base rows of eval_jacobian per unit joint_qd[0:6]")


def test_pose_newton():
    """body_q[b] is world_H_b: its translation is b's origin, wp.transform_point maps b to world."""
    _, wp = _newton()
    model, _nm, state, q, qd = _case()
    st = _fk(q, qd)
    body_q = st.body_q.numpy().astype(float)
    kd = bridge.KinDyn(model, engine="pinocchio")
    kd.set_robot_state(state)
    from bridge.backends.newton.model import body_order

    p = np.array([0.1, -0.2, 0.3])
    for k, name in enumerate(body_order(model)):
        H = kd.frame_transform(name)
        H = getattr(H, "matrix", H)
        assert_close(body_q[k, :3], H[:3, 3], 1e-6, f"{name} origin")
        mapped = wp.transform_point(wp.transform(*body_q[k].astype(np.float32).tolist()), wp.vec3(*p))
        assert_close(np.array(mapped, dtype=float), H[:3, :3] @ p + H[:3, 3], 1e-6, f"{name} transform_point")


def test_quat_newton():
    """(x, y, z, w): a quarter turn about z is (0, 0, sin 45°, cos 45°) in joint_q[3:7] and body_q."""
    _, _, _, q, qd = _case()
    x = q.copy()
    x[3:7] = [0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]
    body_q = _fk(x, qd).body_q.numpy().astype(float)
    assert_close(body_q[0, 3:7], x[3:7], 1e-7, "body_q quaternion")
    assert_close(_rotation_xyzw(body_q[0]), np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]]), 1e-6, "A_R_B")


def test_body_vel_newton():
    """body_qd = (velocity of the COM, ω), world axes: finite differences of Newton's own poses;
    bridge's map of it to MIXED is (c_dot − ω × R com, ω); a base spinning about its origin has a
    non-zero linear part."""
    from bridge.backends.newton import to_newton_body_velocities
    from bridge.backends.newton.model import body_order

    model, nm, _state, q, qd = _case()
    st = _fk(q, qd)
    body_qd = st.body_qd.numpy().astype(float)
    v_origin, omega, body_q = _fd_twists(q, qd)
    com = nm.body_com.numpy().astype(float)
    for k in range(body_q.shape[0]):
        c_dot = v_origin[k] + np.cross(omega[k], _rotation_xyzw(body_q[k]) @ com[k])
        assert_close(body_qd[k], np.r_[c_dot, omega[k]], 1e-4, f"body {k}")
    mixed = to_newton_body_velocities(model, body_q, body_qd, "mixed")
    for k, name in enumerate(body_order(model)):
        assert_close(mixed[name], np.r_[v_origin[k], omega[k]], 1e-4, f"{name} mixed")
    # spinning about the base origin: c_dot = ω × R com
    spin = np.zeros_like(qd)
    spin[5] = 2.0
    R = _rotation_xyzw(body_q[0])
    spin[0:3] = np.cross(spin[3:6], R @ com[0])
    v_origin, omega, _ = _fd_twists(q, spin)
    assert_close(v_origin[0], np.zeros(3), 1e-4, "the base origin does not move")
    assert np.linalg.norm(_fk(q, spin).body_qd.numpy()[0, :3]) > 0.1


def test_base_pose_newton():
    """joint_q = [A_o_B; x y z w; joints] (nq = 7 + n, nv = 6 + n) for a floating base; none for a
    fixed one; the base body's body_q is joint_q[0:7]."""
    from bridge.backends.newton import to_newton, to_newton_state

    model, nm, state, q, qd = _case()
    assert (nm.joint_coord_count, nm.joint_dof_count) == (7 + model.n_dofs, 6 + model.n_dofs)
    assert_close(_fk(q, qd).body_q.numpy()[0].astype(float), q[0:7], 1e-7, "body_q[base] = joint_q[0:7]")
    H = state.world_H_base
    assert_close(q[0:3], H.translation, 1e-15, "A_o_B")
    assert_close(abs(q[3:7] @ H.as_quaternion_xyzw()), 1.0, 1e-12, "x y z w")
    fixed = model.with_fixed_base()
    nm_fixed = to_newton(fixed)
    assert (nm_fixed.joint_coord_count, nm_fixed.joint_dof_count) == (fixed.n_dofs, fixed.n_dofs)
    qf, _ = to_newton_state(fixed, random_state(fixed, np.random.default_rng(1)))
    assert qf.shape == (fixed.n_dofs,)


def test_base_vel_newton():
    """joint_qd[0:6] = (c_dot, ω) of the base COM, world axes (finite differences of Newton's poses);
    the "newton" convention's T from MIXED is [[1, −(R com)^], [0, 1]] and T_dot is not zero."""
    model, nm, state, q, qd = _case()
    v_origin, omega, body_q = _fd_twists(q, qd)
    com = nm.body_com.numpy().astype(float)[0]
    R = _rotation_xyzw(body_q[0])
    assert_close(qd[0:6], np.r_[v_origin[0] + np.cross(omega[0], R @ com), omega[0]], 1e-4, "joint_qd[0:6]")
    T, T_dot = bridge.velocity_transform(model, state, "mixed", "newton")
    c = state.world_H_base.rotation @ model.link(model.base).inertia.com
    skew = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    assert_close(T[:6, :6], np.block([[np.eye(3), -skew], [np.zeros((3, 3)), np.eye(3)]]), 1e-14, "T")
    assert np.linalg.norm(T_dot) > 1e-3


def test_gen_acc_newton():
    """A Featherstone step's (joint_qd(dt) − joint_qd) / dt is d/dt joint_qd: bridge's forward
    dynamics converted to "newton" (T a + T_dot nu), to 1e-4, under joint torques and a base wrench
    given as joint_f = T⁻ᵀ of bridge's MIXED generalized force; the step is linear in dt."""
    newton, _ = _newton()
    model, nm, state, q, qd = _case()
    rng = np.random.default_rng(5)
    tau = rng.normal(size=model.nv) * 3.0
    kd = bridge.KinDyn(model, engine="pinocchio")
    kd.set_robot_state(state)
    nu_dot = kd.forward_dynamics(tau[6:], {model.base: tau[:6]})
    expected = convert_acceleration(model, state, nu_dot, "mixed", "newton")
    joint_f = convert_generalized_force(model, state, tau, "mixed", "newton")
    solver = newton.solvers.SolverFeatherstone(nm, angular_damping=0.0)

    def implied(dt: float) -> np.ndarray:
        before, after = _fk(q, qd), nm.state()
        control = nm.control()
        control.joint_f.assign(joint_f.astype(np.float32))
        solver.step(before, after, control, None, dt)
        return (after.joint_qd.numpy().astype(float) - qd.astype(np.float32)) / dt

    assert_close(implied(1e-2), expected, 1e-4, "step at dt = 1e-2", atol=0.0)
    assert_close(implied(1e-3), expected, 1e-4, "step at dt = 1e-3", atol=0.0)


def test_dof_order_newton():
    """joint_qd[6:] follows the joints depth first (model.depth_first_joints); body k is the child
    of joint k."""
    model, nm, _, _, _ = _case()
    labels = list(nm.joint_label)
    movable = [j.name for j in model.depth_first_joints if j.name in model.dof_names]
    starts = nm.joint_qd_start.numpy()
    order = [labels[k] for k in range(len(labels)) if starts[k + 1] - starts[k] == 1]
    assert order == movable
    assert np.array_equal(nm.joint_child.numpy(), np.arange(nm.body_count))


def test_mass_newton():
    """eval_mass_matrix = T⁻ᵀ M T⁻¹ (bridge's MIXED M); eval_inverse_dynamics_passive's C qd + g is
    bridge's h converted (the T_dot term included), g bridge's g converted."""
    newton, wp = _newton()
    model, nm, state, q, qd = _case()
    st = _fk(q, qd)
    kd = bridge.KinDyn(model, engine="pinocchio")
    kd.set_robot_state(state)
    M, h, g = kd.mass_matrix(), kd.bias_forces(), kd.gravity_forces()
    M_n = newton.eval_mass_matrix(nm, st).numpy()[0].astype(float)
    assert_close(M_n, convert_mass_matrix(model, state, M, "mixed", "newton"), 1e-6, "mass matrix")
    grav = wp.zeros(nm.joint_dof_count, dtype=wp.float32)
    cor = wp.zeros(nm.joint_dof_count, dtype=wp.float32)
    newton.eval_inverse_dynamics_passive(nm, st, gravity_force=grav, coriolis_force=cor)
    g_n, c_n = grav.numpy().astype(float), cor.numpy().astype(float)
    assert_close(g_n, convert_generalized_force(model, state, g, "mixed", "newton"), 1e-6, "gravity")
    assert_close(c_n + g_n, convert_bias_forces(model, state, h, M, "mixed", "newton"), 1e-6, "bias")


def test_jacobian_newton():
    """eval_jacobian's row block k times joint_qd is body_qd[k] (Newton's COM twist)."""
    newton, _ = _newton()
    _model, nm, _state, q, qd = _case()
    st = _fk(q, qd)
    J = newton.eval_jacobian(nm, st).numpy()[0].astype(float)
    body_qd = st.body_qd.numpy().astype(float)
    for k in range(nm.body_count):
        assert_close(J[6 * k : 6 * k + 6, : nm.joint_dof_count] @ qd, body_qd[k], 1e-6, f"body {k}")


def test_dtype_newton():
    """Newton stores float32; bridge's poses agree to ~1e-7 relative."""
    model, nm, state, q, qd = _case()
    st = _fk(q, qd)
    for arr in (st.body_q, st.body_qd, st.joint_q, st.joint_qd, nm.body_mass):
        assert arr.numpy().dtype == np.float32
    from bridge.backends.newton import from_newton_state

    back = from_newton_state(model, st.joint_q.numpy(), st.joint_qd.numpy(), "mixed")
    assert_close(back.world_H_base.matrix, state.world_H_base.matrix, 1e-6, "float32 pose")


def test_body_acc_newton():
    """No body accelerations in Newton's public API for its Featherstone solver (BODY_QDD is not
    among its observables); its forward pass ``eval_rigid_id`` (``body_a_s``, about the root COM,
    shifted to the world origin) with the internal joint accelerations (a free joint's: INERTIAL,
    NEWTON_INTERNAL) gives each body's INERTIAL acceleration, Pinocchio's to float32 precision."""
    newton, wp = _newton()
    from bridge.backends.newton.accelerations import NEWTON_INTERNAL, body_accelerations
    from bridge.backends.newton.model import body_order

    assert "body_qdd" not in newton.solvers.SolverFeatherstone.SUPPORTED_OBSERVABLES
    model, nm, state, q, qd = _case()
    nu_dot = np.random.default_rng(6).normal(size=model.nv)
    qdd = convert_acceleration(model, state, nu_dot, state.representation, NEWTON_INTERNAL.bound(model))
    a = body_accelerations(wp, nm, _fk(q, qd), qdd)
    kd = bridge.KinDyn(model, engine="pinocchio", representation="inertial")
    st = state.to("inertial")
    kd.set_robot_state(st)
    inertial = convert_acceleration(model, state, nu_dot, state.representation, "inertial")
    for k, link in enumerate(body_order(model)):
        expected = kd.frame_acceleration(link, inertial[:6], inertial[6:])
        assert_close(a[k], expected, 1e-5, f"body {link}")
