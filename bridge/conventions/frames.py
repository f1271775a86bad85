"""Frame quantities between representations: the base-velocity declarations applied to any frame.

A frame F attached to a body has a velocity in BODY (F), INERTIAL (A) or MIXED (F[A]) — or in any
declared :class:`~bridge.conventions.declaration.BaseVelocity` (a library's own, e.g. angular
first). The maps between two of them are the base maps of :mod:`bridge.conventions.declaration`
with F in place of the base (like Pinocchio's ``changeReferenceFrame``):

* motions (velocities, Jacobian rows): ``x_t = X x_s`` with ``X = L_t L_s^-1`` at F's pose;
* accelerations (time derivatives of the velocity in each): ``a_t = X a_s + X_dot v_s``, the frame's
  bias acceleration ``J_dot nu`` alike;
* wrenches (dual to the velocity): ``f_t = X^-T f_s``.

Arrays are linear first unless the declaration says otherwise, with leading batch axes; Jacobians
(..., 6, k) map column by column. ``source``/``target`` are representations (or their names) or
declarations.

This module is neutral: it names no library.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bridge.conventions.declaration import Axes, BaseVelocity, Point
from bridge.conventions.state import velocity_declaration
from bridge.errors import InvalidValueError
from bridge.spatial import Transform
from bridge.spatial.xp import namespace

__all__ = [
    "expressed_frame_velocity",
    "frame_acceleration",
    "frame_force",
    "frame_jacobian",
    "frame_map",
    "frame_motion",
]


def _declared(x: object) -> BaseVelocity:
    return x if isinstance(x, BaseVelocity) else velocity_declaration(x)


def _matrix(world_H_frame: object) -> object:
    return getattr(world_H_frame, "matrix", world_H_frame)


def frame_map(world_H_frame: object, source: object, target: object) -> Any | None:
    """``X`` (..., 6, 6) mapping F's motions from ``source`` to ``target`` at the pose
    ``world_H_frame`` (..., 4, 4) (numpy, JAX or CasADi); None when it is the identity."""
    s, t = _declared(source), _declared(target)
    if s == t:
        return None
    H = _matrix(world_H_frame)
    o = namespace(H)
    if s.same_frame(t):  # the order of the halves alone: a constant permutation
        eye = np.eye(6)
        rt, rs = t.reorder(), s.reorder()
        return o.constant((eye if rt is None else rt) @ (eye if rs is None else rs).T, H)
    return o.matmul(t.matrices(H, o)[0], s.matrices(H, o)[1])


def frame_motion(world_H_frame: object, x: Any, source: object, target: object) -> Any:
    """F's motion (..., 6) from ``source`` to ``target``."""
    X = frame_map(world_H_frame, source, target)
    return x if X is None else namespace(X, x).matvec(X, x)


def frame_jacobian(world_H_frame: object, J: Any, source: object, target: object) -> Any:
    """Motion columns (..., 6, k) of F (a Jacobian's rows) from ``source`` to ``target``."""
    X = frame_map(world_H_frame, source, target)
    return J if X is None else namespace(X, J).matmul(X, J)


def frame_force(world_H_frame: object, f: Any, source: object, target: object) -> Any:
    """A wrench (..., 6) on F from ``source`` to ``target`` (dual: ``X^-T f``)."""
    X_back = frame_map(world_H_frame, target, source)
    return f if X_back is None else namespace(X_back, f).vecmat(f, X_back)


def frame_acceleration(world_H_frame: object, v: Any, a: Any, source: object, target: object) -> Any:
    """F's acceleration (..., 6) from ``source`` to ``target``: ``X a + X_dot v``, with ``v`` F's
    velocity (..., 6) in ``source`` (the derivative of the target velocity, as ``a`` is of the
    source one)."""
    s, t = _declared(source), _declared(target)
    if s == t:
        return a
    H = _matrix(world_H_frame)
    o = namespace(H, v, a)
    L_s_inv = s.matrices(H, o, (False, True))[1]
    L_t = t.matrices(H, o, (True, False))[0]
    out = o.matvec(o.matmul(L_t, L_s_inv), a)
    # X_dot v = L_t (Omega_t - Omega_s) L_s^-1 v, with L_s^-1 v the frame's BODY velocity
    v_body = o.matvec(L_s_inv, v)
    Omega_t, Omega_s = t.rate(H, v_body, o), s.rate(H, v_body, o)
    if Omega_t is not None:
        out = out + o.matvec(L_t, o.matvec(Omega_t, v_body))
    if Omega_s is not None:
        out = out - o.matvec(L_t, o.matvec(Omega_s, v_body))
    return out


def expressed_frame_velocity(
    world_H_frame: object, v_world: np.ndarray, representation: object
) -> np.ndarray | None:
    """The world velocity (..., 6) (INERTIAL: spatial, world axes, linear first) of the frame W in
    which ``representation`` expresses F's quantities, from F's own world velocity ``v_world``
    (..., 6) at the pose ``world_H_frame``; None when W does not move.

    W's origin is F's origin (``Point.BASE_ORIGIN``) or the world origin (``Point.WORLD_ORIGIN``);
    its axes are F's (``Axes.BODY``) or the world's (``Axes.WORLD``): F for BODY, the world A for
    INERTIAL (None), F[A] for MIXED. ``d/dt A_X_W = crm(u_W) A_X_W`` with ``u_W`` this velocity. A
    declaration whose two halves have different axes names no single frame (InvalidValueError).
    """
    d = _declared(representation)
    if d.linear_axes is not d.angular_axes:
        raise InvalidValueError(f"{d}: the linear and angular halves have different axes (no single frame)")
    rotates = d.linear_axes is Axes.BODY
    if d.point is Point.BASE_ORIGIN and rotates:  # W is F
        return v_world
    if not rotates and d.point is Point.WORLD_ORIGIN:  # W is the world
        return None
    w = v_world[..., 3:]
    if d.point is Point.WORLD_ORIGIN:  # at the world origin, rotating with F
        return np.concatenate([np.zeros_like(w), w], axis=-1)
    # at F's origin o, not rotating: the spatial velocity of a translation is o_dot = v + w x o
    o_dot = v_world[..., :3] + np.cross(w, Transform(_matrix(world_H_frame), check=False).translation)
    return np.concatenate([o_dot, np.zeros_like(o_dot)], axis=-1)
