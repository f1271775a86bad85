"""Integrating a state along a constant generalized acceleration (for finite-difference checks).

The generalized acceleration ``nu_dot`` is the time derivative of ``nu`` in the state's own
representation, so along the trajectory ``nu(t) = nu(0) + t nu_dot`` and
``s(t) = s(0) + t s_dot(0) + t^2/2 s_ddot``. The base pose follows the base velocity read in its
representation:

``d/dt H = H [v_B]^`` with ``v_B`` the BODY velocity (BODY: the velocity itself; INERTIAL:
``d/dt H = [v]^ H``; MIXED: ``d/dt o = v_lin`` and ``d/dt R = [omega]^ R``).

The pose is integrated with classical Runge-Kutta (RK4) steps on the 4x4 matrix and projected
back onto SE(3); with the default step count the error is far below finite-difference noise. A
planar, ball or free joint moves the same way relative to its joint frame, its velocity read with
its declaration in the representation (:mod:`bridge.conventions.joint_blocks`); the other joints by
``s + t s_dot + t^2/2 s_ddot``.
"""

from __future__ import annotations

import numpy as np

from bridge._array import as_float_array, as_int, as_real
from bridge.conventions.state import State, velocity_declaration
from bridge.errors import InvalidValueError, StateError
from bridge.spatial import Transform
from bridge.spatial.so3 import skew

__all__ = ["MAX_STEPS", "integrate"]

#: the most RK4 steps :func:`integrate` takes (a second or so; the default 16 is already exact to
#: far below finite-difference noise)
MAX_STEPS = 100_000
_MANY_STEPS = " (the default 16 is far below finite-difference noise)"


def _twist_hat(v: np.ndarray) -> np.ndarray:
    out = np.zeros((*v.shape[:-1], 4, 4))
    out[..., :3, :3] = skew(v[..., 3:])
    out[..., :3, 3] = v[..., :3]
    return out


def _pose_rate(H: np.ndarray, v: np.ndarray, declaration) -> np.ndarray:
    """``d/dt H = H [v_B]^`` with ``v_B = L^-1 v`` the BODY velocity of a declaration (the
    representation's, :func:`bridge.conventions.state.velocity_declaration`)."""
    L_inv = declaration.matrices(Transform(H, check=False))[1]
    return H @ _twist_hat(np.einsum("...ij,...j->...i", L_inv, v))


def _rk4(H: np.ndarray, v0: np.ndarray, a: np.ndarray, declaration, dt: float, steps: int) -> np.ndarray:
    """The pose after ``dt`` moving with the velocity ``v0 + t a`` (..., 6) as ``declaration`` writes
    it: RK4 steps on the matrix, projected back onto SE(3)."""
    h = dt / steps
    for k in range(steps):
        t = k * h
        k1 = _pose_rate(H, v0 + t * a, declaration)
        k2 = _pose_rate(H + 0.5 * h * k1, v0 + (t + 0.5 * h) * a, declaration)
        k3 = _pose_rate(H + 0.5 * h * k2, v0 + (t + 0.5 * h) * a, declaration)
        k4 = _pose_rate(H + h * k3, v0 + (t + h) * a, declaration)
        H = H + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
    return _project(H)


def _wide_joints(state: State, s: np.ndarray, sdd: np.ndarray, dt: float, steps: int) -> np.ndarray:
    """``s`` (the one-coordinate joints already moved) with each planar, ball and free joint moved
    along its velocity and constant acceleration, relative to its joint frame."""
    from bridge.conventions.joint_blocks import embed, joint_declaration, relative_pose
    from bridge.model.joints import JointKind, rotation_to_quaternion_wxyz
    from bridge.spatial.xp import NUMPY

    layout = state.layout
    decl = velocity_declaration(state.representation)
    for k in layout.wide:
        kind = layout.kinds[k]
        q_sl, v_sl = layout.q_slice(k), layout.v_slice(k)
        q0 = np.asarray(state.s[..., q_sl])
        v0, acc = np.asarray(state.s_dot[..., v_sl]), sdd[..., v_sl]
        R, p = relative_pose(kind, q0, NUMPY)
        H0 = np.zeros((*np.broadcast_shapes(R.shape[:-2], p.shape[:-1]), 4, 4))
        H0[..., :3, :3], H0[..., :3, 3], H0[..., 3, 3] = R, p, 1.0
        lead = np.broadcast_shapes(H0.shape[:-2], v0.shape[:-1], acc.shape[:-1])
        H0 = np.broadcast_to(H0, (*lead, 4, 4))
        v0e, acce = embed(kind, v0, NUMPY), embed(kind, acc, NUMPY)
        H = _rk4(H0, v0e, acce, joint_declaration(kind, decl), dt, steps)
        if kind is JointKind.PLANAR:  # the angle adds up (no wrapping): theta + t w + t^2/2 alpha
            theta = q0[..., 2] + dt * v0[..., 2] + 0.5 * dt * dt * acc[..., 2]
            q = np.stack([H[..., 0, 3], H[..., 1, 3], np.broadcast_to(theta, lead)], axis=-1)
        else:
            quat = rotation_to_quaternion_wxyz(H[..., :3, :3])
            old = q0[..., :4] if kind is JointKind.BALL else q0[..., 3:7]
            quat = np.where(np.sum(quat * old, axis=-1, keepdims=True) < 0.0, -quat, quat)
            q = quat if kind is JointKind.BALL else np.concatenate([H[..., :3, 3], quat], axis=-1)
        s = np.array(np.broadcast_to(s, (*lead, s.shape[-1])))
        s[..., q_sl] = q
    return s


def _project(H: np.ndarray) -> np.ndarray:
    U, _, Vt = np.linalg.svd(H[..., :3, :3])
    out = H.copy()
    out[..., :3, :3] = U @ Vt
    out[..., 3, :] = (0.0, 0.0, 0.0, 1.0)
    return out


def integrate(state: State, base_acc: np.ndarray, s_ddot: np.ndarray, dt: float, steps: int = 16) -> State:
    """The state after ``dt`` (may be negative) with constant generalized acceleration.

    ``base_acc`` (..., 6) is the derivative of the base velocity in ``state.representation``.
    """
    if not isinstance(state, State):
        raise StateError(f"integrate expects a bridge State, got {type(state).__name__}")
    a = as_float_array(base_acc, "base_acc", (6,))
    sdd = as_float_array(s_ddot, "s_ddot", (state.n_dofs,))
    dt = as_real(dt, "dt")
    steps = as_int(steps, "steps", minimum=1, maximum=MAX_STEPS, why=_MANY_STEPS)
    rep = state.representation
    v0 = np.asarray(state.base_velocity, dtype=float)
    H = _rk4(np.array(state.world_H_base.matrix), v0, a, velocity_declaration(rep), dt, steps)
    layout = state.layout
    if layout is None:
        s = state.s + dt * state.s_dot + 0.5 * dt * dt * sdd
    else:  # the one-coordinate joints as above, the others on their manifolds
        single = [k for k in range(len(layout.kinds)) if layout.kinds[k].nq == 1]
        qi, vi = layout.q_start[single], layout.v_start[single]
        lead = np.broadcast_shapes(state.s.shape[:-1], state.s_dot.shape[:-1], sdd.shape[:-1])
        s = np.array(np.broadcast_to(state.s, (*lead, layout.nq)))
        s[..., qi] = s[..., qi] + dt * state.s_dot[..., vi] + 0.5 * dt * dt * sdd[..., vi]
        s = _wide_joints(state, s, sdd, dt, steps)
    s_dot = state.s_dot + dt * sdd
    if not (np.all(np.isfinite(H)) and np.all(np.isfinite(s)) and np.all(np.isfinite(s_dot))):
        raise InvalidValueError("integrate: the state is not finite after dt (dt or accelerations too large)")
    return State(Transform(H, check=False), s, v0 + dt * a, s_dot, rep, layout=layout)
