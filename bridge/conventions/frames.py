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

from bridge.conventions.declaration import BaseVelocity
from bridge.conventions.state import velocity_declaration
from bridge.spatial.xp import namespace

__all__ = ["frame_acceleration", "frame_force", "frame_jacobian", "frame_map", "frame_motion"]


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
    v_body = o.matvec(s.matrices(H, o)[1], v)
    _, _, Ls_inv, Ls_inv_dot = s.maps(H, v_body, o)
    Lt, Lt_dot, _, _ = t.maps(H, v_body, o)
    out = o.matvec(o.matmul(Lt, Ls_inv), a)
    if Lt_dot is not None:
        out = out + o.matvec(Lt_dot, v_body)
    if Ls_inv_dot is not None:
        out = out + o.matvec(o.matmul(Lt, Ls_inv_dot), v)
    return out
