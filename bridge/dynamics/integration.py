"""Integrating a state along a constant generalized acceleration (for finite-difference checks).

The generalized acceleration ``nu_dot`` is the time derivative of ``nu`` in the state's own
representation, so along the trajectory ``nu(t) = nu(0) + t nu_dot`` and
``s(t) = s(0) + t s_dot(0) + t^2/2 s_ddot``. The base pose follows the base velocity read in its
representation:

``d/dt H = H [v_B]^`` with ``v_B`` the BODY velocity (BODY: the velocity itself; INERTIAL:
``d/dt H = [v]^ H``; MIXED: ``d/dt o = v_lin`` and ``d/dt R = [omega]^ R``).

The pose is integrated with classical Runge-Kutta (RK4) steps on the 4x4 matrix and projected
back onto SE(3); with the default step count the error is far below finite-difference noise.
"""

from __future__ import annotations

import numpy as np

from bridge._array import as_float_array, as_int, as_real
from bridge.conventions.state import Representation, State, velocity_declaration
from bridge.errors import InvalidValueError, StateError
from bridge.spatial import Transform
from bridge.spatial.so3 import skew

__all__ = ["integrate"]


def _twist_hat(v: np.ndarray) -> np.ndarray:
    out = np.zeros((*v.shape[:-1], 4, 4))
    out[..., :3, :3] = skew(v[..., 3:])
    out[..., :3, 3] = v[..., :3]
    return out


def _pose_rate(H: np.ndarray, v: np.ndarray, rep: Representation) -> np.ndarray:
    """``d/dt H = H [v_B]^`` with ``v_B = L^-1 v`` the BODY velocity of the representation's
    declaration (:func:`bridge.conventions.state.velocity_declaration`)."""
    L_inv = velocity_declaration(rep).matrices(Transform(H, check=False))[1]
    return H @ _twist_hat(np.einsum("...ij,...j->...i", L_inv, v))


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
    steps = as_int(steps, "steps", minimum=1)
    rep = state.representation
    v0 = np.asarray(state.base_velocity, dtype=float)
    H = np.array(state.world_H_base.matrix)
    h = dt / steps
    for k in range(steps):
        t = k * h
        k1 = _pose_rate(H, v0 + t * a, rep)
        k2 = _pose_rate(H + 0.5 * h * k1, v0 + (t + 0.5 * h) * a, rep)
        k3 = _pose_rate(H + 0.5 * h * k2, v0 + (t + 0.5 * h) * a, rep)
        k4 = _pose_rate(H + h * k3, v0 + (t + h) * a, rep)
        H = H + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
    H = _project(H)
    layout = state.layout
    if layout is None or layout.single:
        s = state.s + dt * state.s_dot + 0.5 * dt * dt * sdd
    else:
        s = _integrate_joints(layout, np.asarray(state.s), np.asarray(state.s_dot), sdd, dt, steps, rep)
    s_dot = state.s_dot + dt * sdd
    if not (np.all(np.isfinite(H)) and np.all(np.isfinite(s)) and np.all(np.isfinite(s_dot))):
        raise InvalidValueError("integrate: the state is not finite after dt (dt or accelerations too large)")
    return State(Transform(H, check=False), s, v0 + dt * a, s_dot, rep, layout=layout)


def _integrate_joints(
    layout, s: np.ndarray, s_dot: np.ndarray, sdd: np.ndarray, dt: float, steps: int, rep: Representation
) -> np.ndarray:
    """The joint positions (..., nq) after ``dt``: one-coordinate joints ``s + dt s_dot + dt^2/2
    s_ddot``; each planar, ball and free joint's pose in its joint frame (its plane coordinates for a
    planar joint) integrated by RK4 as the base's, its velocity read as the representation declares
    it for such a joint (:func:`bridge.conventions.joint_blocks.joint_declaration`)."""
    from bridge.conventions.joint_blocks import embed, joint_declaration, relative_pose
    from bridge.model.joints import JointKind, rotation_to_quaternion_wxyz
    from bridge.spatial.xp import NUMPY

    batch = np.broadcast_shapes(s.shape[:-1], s_dot.shape[:-1], sdd.shape[:-1])
    s = np.broadcast_to(s, (*batch, s.shape[-1]))
    out = np.array(s, dtype=np.float64)
    wide = set(layout.wide)
    for k, kind in enumerate(layout.kinds):
        q_sl, v_sl = layout.q_slice(k), layout.v_slice(k)
        v, acc = s_dot[..., v_sl], sdd[..., v_sl]
        if k not in wide:
            out[..., q_sl] = s[..., q_sl] + dt * v + 0.5 * dt * dt * acc
            continue
        decl = joint_declaration(kind, velocity_declaration(rep))
        R, p = relative_pose(kind, s[..., q_sl], NUMPY)
        G = np.zeros((*batch, 4, 4))
        G[..., :3, :3], G[..., :3, 3], G[..., 3, 3] = R, p, 1.0

        def rate(G: np.ndarray, t: float, decl=decl, kind=kind, v=v, acc=acc) -> np.ndarray:
            L_inv = decl.matrices(Transform(G, check=False))[1]
            w = embed(kind, np.broadcast_to(v + t * acc, (*batch, kind.nv)), NUMPY)
            return G @ _twist_hat(np.einsum("...ij,...j->...i", L_inv, w))

        h = dt / steps
        for step in range(steps):
            t = step * h
            k1 = rate(G, t)
            k2 = rate(G + 0.5 * h * k1, t + 0.5 * h)
            k3 = rate(G + 0.5 * h * k2, t + 0.5 * h)
            k4 = rate(G + h * k3, t + h)
            G = G + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
        G = _project(G)
        q0 = s[..., q_sl]
        if kind is JointKind.PLANAR:
            turn = np.arctan2(G[..., 1, 0], G[..., 0, 0]) - q0[..., 2]
            theta = q0[..., 2] + np.arctan2(np.sin(turn), np.cos(turn))
            out[..., q_sl] = np.stack([G[..., 0, 3], G[..., 1, 3], theta], axis=-1)
            continue
        quat = rotation_to_quaternion_wxyz(G[..., :3, :3])
        like = q0[..., 3:7] if kind is JointKind.FREE else q0
        quat = np.where(np.sum(quat * like, axis=-1, keepdims=True) < 0.0, -quat, quat)
        out[..., q_sl] = np.concatenate([G[..., :3, 3], quat], -1) if kind is JointKind.FREE else quat
    return out
