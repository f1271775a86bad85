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
    steps = as_int(steps, "steps", minimum=1, maximum=MAX_STEPS, why=_MANY_STEPS)
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
    s = state.s + dt * state.s_dot + 0.5 * dt * dt * sdd
    s_dot = state.s_dot + dt * sdd
    if not (np.all(np.isfinite(H)) and np.all(np.isfinite(s)) and np.all(np.isfinite(s_dot))):
        raise InvalidValueError("integrate: the state is not finite after dt (dt or accelerations too large)")
    return State(Transform(H, check=False), s, v0 + dt * a, s_dot, rep)
