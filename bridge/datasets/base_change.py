"""The base block of a change of variables, applied to columns of states (one array per entry).

A dataset holds many states as columns: one float array (N,) per coordinate. The base block ``X``
of ``T`` between two conventions is composed symbolically, once, from the two declarations
(:meth:`~bridge.conventions.declaration.BaseVelocity.symbolic_matrices`: ``X = L_t L_s^-1`` and
``X^-1 = L_s L_t^-1`` as 3x3 blocks of rotations ``R^b`` and skew terms ``(R^a u)^ R^b``,
:mod:`bridge.conventions.blocks`), and applied here to three columns at a time: a rotation is nine
products of columns, a skew term a cross product. No (N, 6, 6) matrix is ever made, so a chunk
costs a few passes over its columns. The maps:

* velocities ``v_t = X v_s``;
* accelerations ``a_t = X a_s + X_dot v_s``, with ``X_dot v_s = [P_t r; 0]`` and
  ``r = c_wv (w x v) + c_q ((v - w x q) x w) + c_c (w x (w x k))`` from each declaration's body
  rate (:meth:`~bridge.conventions.declaration.BaseVelocity.body_rate`, the target's minus the
  source's), ``(v, w) = L_s^-1 v_s`` the BODY velocity, ``q = R^T p``, ``k`` the base COM;
* generalized forces (dual) ``f_t = X^-T f_s``.

Nothing here is derived a second time: the same declarations give the reference path
(:func:`bridge.conventions.change_of_variables.change_of_variables`), which the tests compare with
this one for every registered pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from bridge.conventions.blocks import Block
from bridge.conventions.declaration import BaseVelocity

__all__ = ["BaseChange", "Pose", "Vec3"]

Vec3 = tuple[np.ndarray, np.ndarray, np.ndarray]


class Pose:
    """The base poses of a chunk as columns: ``p`` (3 arrays) and the rotation ``R`` (nine arrays,
    row major), made from unit quaternions ``(w, x, y, z)`` (normalised first: a quaternion within
    rounding of unit norm gives an orthonormal R to rounding)."""

    def __init__(self, quaternion_wxyz: Sequence[np.ndarray], position: Sequence[np.ndarray]) -> None:
        w, x, y, z = (np.asarray(c, dtype=np.float64) for c in quaternion_wxyz)
        n = 1.0 / np.sqrt(w * w + x * x + y * y + z * z)
        self._q = (w * n, x * n, y * n, z * n)
        self.p: Vec3 = tuple(np.asarray(c, dtype=np.float64) for c in position)  # type: ignore[assignment]

    @cached_property
    def R(self) -> tuple[np.ndarray, ...]:
        """The rotation ``A_R_B`` (nine columns, row major)."""
        w, x, y, z = self._q
        xx, yy, zz = x * x, y * y, z * z
        xy, xz, yz = x * y, x * z, y * z
        wx, wy, wz = w * x, w * y, w * z
        return (
            1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
            2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
            2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy),
        )  # fmt: skip

    def matrix(self) -> np.ndarray:
        """The poses ``world_H_base`` (N, 4, 4)."""
        R, p = self.R, self.p
        n = np.broadcast_shapes(*(np.shape(c) for c in (*R, *p)))
        H = np.zeros((*n, 4, 4))
        for i in range(3):
            for j in range(3):
                H[..., i, j] = R[3 * i + j]
            H[..., i, 3] = p[i]
        H[..., 3, 3] = 1.0
        return H

    def rotate(self, b: int, x: Vec3) -> Vec3:
        """``R^b x`` (b in -1, 0, 1)."""
        if b == 0:
            return x
        R = self.R
        if b == 1:
            return tuple(R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2] for i in range(3))  # type: ignore[return-value]
        return tuple(R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2] for i in range(3))  # type: ignore[return-value]


def cross(a: Vec3, b: Vec3) -> Vec3:
    """``a x b`` of two column triples."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _add(a: Vec3 | None, b: Vec3 | None, coef: float = 1.0) -> Vec3 | None:
    """``a + coef b`` (None stands for zero)."""
    if b is None:
        return a
    if coef != 1.0:
        b = tuple(coef * c for c in b)  # type: ignore[assignment]
    return b if a is None else tuple(x + y for x, y in zip(a, b, strict=True))  # type: ignore[return-value]


def apply(block: Block, x: Vec3, pose: Pose | None, k: Sequence[float] | None) -> Vec3 | None:
    """``block @ x`` for a column triple ``x`` (None: zero), ``k`` the body-fixed point of the
    declaration's ``fixed`` skew terms."""
    out: Vec3 | None = None
    for t in block.terms:
        y = x if t.b == 0 else pose.rotate(t.b, x)  # (a constant block needs no pose)
        if t.skew:  # (R^a u)^ R^b x = (R^a u) x (R^b x)
            u = tuple(np.full(1, float(c)) for c in k) if t.fixed else pose.p  # type: ignore[union-attr]
            y = cross(pose.rotate(t.a, u), y)  # type: ignore[arg-type]
        out = _add(out, y, t.coef)
    return out


def _zeros_like(x: Vec3) -> Vec3:
    n = np.broadcast_shapes(*(np.shape(c) for c in x))
    return (np.zeros(n), np.zeros(n), np.zeros(n))


def _halves(values: Sequence[np.ndarray], swap: bool) -> tuple[Vec3, Vec3]:
    """(linear, angular) column triples of six columns in a declared order."""
    a, b = tuple(values[:3]), tuple(values[3:6])
    return (b, a) if swap else (a, b)  # type: ignore[return-value]


class BaseChange:
    """The base block of ``nu_t = T nu_s`` from declaration ``source`` to ``target`` (both bound to
    the model: a base velocity at the base COM carries its point), applied to columns.

    Attributes:
        identity: ``X`` is the identity and ``X_dot`` zero (the columns are kept as they are).
        constant: ``X`` does not depend on the pose (an order of halves at most).
    """

    def __init__(self, source: BaseVelocity, target: BaseVelocity) -> None:
        (Pt, Qt, St), (Pt_i, Qt_i, St_i) = target.symbolic_matrices()
        (Ps, Qs, Ss), (Ps_i, Qs_i, Ss_i) = source.symbolic_matrices()
        self._swap_s, self._swap_t = source.swap, target.swap
        #: X = L_t L_s^-1, X^-1 = L_s L_t^-1 (linear first), L_s^-1 (source -> BODY), P_t
        self._X = (Pt @ Ps_i, Pt @ Qs_i + Qt @ Ss_i, St @ Ss_i)
        self._X_inv = (Ps @ Pt_i, Ps @ Qt_i + Qs @ St_i, Ss @ St_i)
        self._to_body = (Ps_i, Qs_i, Ss_i)
        self._P_t = Pt
        rate_t, rate_s = target.body_rate(), source.body_rate()
        self._rate = tuple(a - b for a, b in zip(rate_t, rate_s, strict=True))
        self._k = source.com if source.com is not None else target.com
        P, Q, S = self._X
        self.constant = not Q.terms and P.rotation == 0 and S.rotation == 0 and not any(self._rate)
        self.identity = self.constant and self._swap_s == self._swap_t

    def _map(self, blocks: tuple[Block, Block, Block], lin: Vec3, ang: Vec3, pose: Pose) -> tuple[Vec3, Vec3]:
        P, Q, S = blocks
        out_lin = _add(apply(P, lin, pose, self._k), apply(Q, ang, pose, self._k))
        out_ang = apply(S, ang, pose, self._k)
        return (out_lin if out_lin is not None else _zeros_like(lin)), (
            out_ang if out_ang is not None else _zeros_like(ang)
        )

    def _out(self, lin: Vec3, ang: Vec3) -> list[np.ndarray]:
        return [*ang, *lin] if self._swap_t else [*lin, *ang]

    def velocity(self, v: Sequence[np.ndarray], pose: Pose) -> list[np.ndarray]:
        """``X v`` of six source columns -> six target columns."""
        if self.identity:
            return list(v)
        lin, ang = _halves(v, self._swap_s)
        return self._out(*self._map(self._X, lin, ang, pose))

    def acceleration(self, a: Sequence[np.ndarray], v: Sequence[np.ndarray], pose: Pose) -> list[np.ndarray]:
        """``X a + X_dot v`` (six source columns each) -> six target columns."""
        if self.identity:
            return list(a)
        lin, ang = self._map(self._X, *_halves(a, self._swap_s), pose)
        bias = self._bias(v, pose)
        if bias is not None:
            lin = tuple(x + b for x, b in zip(lin, bias, strict=True))  # type: ignore[assignment]
        return self._out(lin, ang)

    def force(self, f: Sequence[np.ndarray], pose: Pose) -> list[np.ndarray]:
        """``X^-T f`` of six source columns (dual to the velocity) -> six target columns."""
        if self.identity:
            return list(f)
        lin, ang = _halves(f, self._swap_s)
        A, B, C = self._X_inv  # X^-T = [[A^T, 0], [B^T, C^T]]
        out_lin = apply(A.T, lin, pose, self._k)
        out_ang = _add(apply(B.T, lin, pose, self._k), apply(C.T, ang, pose, self._k))
        return self._out(
            out_lin if out_lin is not None else _zeros_like(lin),
            out_ang if out_ang is not None else _zeros_like(ang),
        )

    def _bias(self, v: Sequence[np.ndarray], pose: Pose) -> Vec3 | None:
        """The linear half of ``X_dot v`` (the angular half is zero), or None when zero."""
        c_wv, c_q, c_c = self._rate
        if not (c_wv or c_q or c_c):
            return None
        lin_b, ang_b = self._map(self._to_body, *_halves(v, self._swap_s), pose)
        r: Vec3 | None = None
        if c_wv:
            r = _add(r, cross(ang_b, lin_b), c_wv)
        if c_q:  # (v - w x q) x w, q = R^T p
            q = pose.rotate(-1, pose.p)
            u = tuple(a - b for a, b in zip(lin_b, cross(ang_b, q), strict=True))
            r = _add(r, cross(u, ang_b), c_q)  # type: ignore[arg-type]
        if c_c:  # w x (w x k)
            k = tuple(np.full(1, float(c)) for c in self._k)  # type: ignore[union-attr]
            r = _add(r, cross(ang_b, cross(ang_b, k)), c_c)  # type: ignore[arg-type]
        return apply(self._P_t, r, pose, self._k) if r is not None else None  # type: ignore[arg-type]
