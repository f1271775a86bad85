"""Compiled kernels (numba) of one state's change of variables, evaluated from what
:class:`bridge.conventions.single_state.SingleBaseChange` compiles from two declarations.

:meth:`~bridge.conventions.single_state.SingleBaseChange.pack` turns the compiled declarations into
two constant arrays (the layout below); :func:`change_base` evaluates, at one pose, the base block
``X`` of ``T``, ``X^-1``, ``T_dot nu`` and the target's base velocity ``X v`` in one pass, and
:func:`fill` is :class:`~bridge.conventions.single_state.SingleStateChange`'s ``fill`` as one call
(joints permuted too). Nothing here is a change of variables written by hand: every number comes
from the index maps and skew terms of the declarations' blocks and from their rate coefficients
(:meth:`~bridge.conventions.declaration.BaseVelocity.body_rate`); a new declaration gets this path
by being declared. The numpy evaluation of the same constants
(:class:`~bridge.conventions.single_state.SingleBaseChange`) is the reference the tests compare
these kernels with.

Layout of the constants (``pack``), one float64 array ``c`` (integers stored exactly)::

    c = [head (13) | X (36) | X^-1 (36) | L_s^-1 (36) | perm (n) | order (nv) | skew terms (t, 7) | extra]
    head = [c_wv, c_q, c_c, rotate, linear start, k (3), n, len(c), terms start, extra start, work]

the three maps are index maps into the pose ``H`` (4, 4) (``H.flat``; 12 holds 0, 15 holds 1),
``L_s^-1`` the source's map to BODY (read for ``T_dot nu``), ``perm`` the joint order (target joint
``j`` is source joint ``perm[j]``), ``order`` its inverse on the whole velocity (source index ``i``
is target index ``order[i]``); each skew term a row ``[which (0: X, 1: X^-1, 2: L_s^-1), r0, c0, a,
e, coef, fixed]`` for ``coef R^a u^ R^e`` added to the 3x3 block at ``(r0, c0)``, ``u`` the base
origin ``p`` or, ``fixed``, the declaration's body-fixed point ``k`` (the base COM); ``T_dot nu`` is
``[P_t (c_wv (w x v) + c_q ((v - w x q) x w) + c_c (w x (w x k))); 0]`` (linear half at ``linear
start``, ``P_t`` the rotation when ``rotate``), ``(v, w)`` the BODY base velocity, ``q = R^T p``;
``extra`` what an engine's kernels add (its configuration layout); ``work`` where the state's
numbers go in the array the constants head (after them, unless an engine lays out its own). One
array, because numba's dispatch costs about 90 ns per array argument on the shared machine, more
than the work.

A state's numbers go to a work array ``[X (36) | X^-1 (36) | scratch (36) | T_dot nu (6)]`` (so
that ``n`` zeros after it make Pinocchio's whole bias acceleration).

Imported only when numba is installed (the engines ask
:func:`bridge.derivatives.select.compiled_kernels`); compiled code is cached on disk
(``cache=True``). :func:`change_base` and :func:`change_matrices` are inlined into their callers
(``inline="always"``): after editing them, clear the callers' ``__pycache__/*.nbi``/``*.nbc``
(numba's cache does not see a change in an inlined function of another module). Both index one
flat array with offsets, without reshaped views: two views cost as much as the matrices' take.
The skew terms (:func:`skew_terms`) are a plain call: inlined with the take into every signature of
:func:`fill` and of the engines' ``set_state``, the skew terms made their first compilation (no
cache on disk) take several times longer for ~20 ns per state; the take alone inlined, one call
for X and X^-1 (and L_s^-1), saves ~80 ns per state against three plain calls (measured on iCub).
This module is neutral: it names no library.
"""

from __future__ import annotations

import numpy as np
from numba import float64, njit, types, void

from bridge._numba import kernel

__all__ = [
    "C_C",
    "C_Q",
    "C_WV",
    "EXTRA",
    "HEAD",
    "LINEAR",
    "PERM",
    "ROTATE",
    "SIZE",
    "TERM",
    "TERMS",
    "WORK",
    "WORK_AT",
    "K",
    "N",
    "change_base",
    "change_matrices",
    "change_matrix",
    "fill",
    "skew_entry",
    "skew_terms",
]  # fmt: skip

# the slots of the head (module docstring): the three rate coefficients, whether P_t rotates, where
# T_dot nu's linear half starts, the body-fixed point k (3), the joint DOFs n, the constants' length,
# where the skew terms start and end (= where the extra starts), where the work array starts
C_WV, C_Q, C_C, ROTATE, LINEAR, K, N, SIZE, TERMS, EXTRA, WORK_AT = 0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12
HEAD = 13  # the head's length
PERM = HEAD + 3 * 36  # where the joint order starts
TERM = 7  # numbers per skew term
WORK = 114  # [X | X^-1 | scratch | T_dot nu]


@njit(cache=True, inline="always")
def _rot(H: np.ndarray, i: int, j: int, power: int) -> float:
    """``R^power[i, j]`` of the pose H (power 1 or -1)."""
    return H[i, j] if power == 1 else H[j, i]


@njit(cache=True, inline="always")
def skew_entry(u0: float, u1: float, u2: float, i: int, j: int) -> float:
    """``u^[i, j]`` (the cross-product matrix of u)."""
    if i == j:
        return 0.0
    if i == 0:
        return -u2 if j == 1 else u1
    if i == 1:
        return u2 if j == 0 else -u0
    return -u1 if j == 0 else u0


@njit(cache=True, inline="always")
def _row(w: np.ndarray, o: int, r: int, x: np.ndarray) -> float:
    """``A[r] . x`` of a row-major (6, 6) matrix ``A = w[o : o + 36]`` and a (6,) vector."""
    b = o + 6 * r
    head = w[b] * x[0] + w[b + 1] * x[1] + w[b + 2] * x[2] + w[b + 3] * x[3]
    return head + (w[b + 4] * x[4] + w[b + 5] * x[5])


@njit(cache=True, inline="always")
def change_matrices(H: np.ndarray, c: np.ndarray, first: int, count: int, w: np.ndarray, o: int) -> None:
    """``count`` consecutive matrices of X (0), X^-1 (1) and L_s^-1 (2), from ``first``, at the pose
    H (4, 4), from the constants ``c``, row major into ``w[o : o + 36 count]``: the index maps'
    take plus each skew term ``coef R^a u^ R^e`` (a, e in {-1, 0, 1}, :func:`skew_terms`). Flat
    indices, no views: a reshaped slice costs as much as the take itself."""
    base = HEAD + 36 * first
    for k in range(36 * count):
        f = int(c[base + k])  # (an index into H.flat, 0 <= f < 16)
        w[o + k] = H[f >> 2, f & 3]
    if c[TERMS] != c[EXTRA]:
        skew_terms(H, c, first, count, w, o)


@njit(cache=True)
def skew_terms(H: np.ndarray, c: np.ndarray, first: int, count: int, w: np.ndarray, o: int) -> None:
    """Add the skew terms ``coef R^a u^ R^e`` of :func:`change_matrices`' matrices into ``w`` (a
    plain call: inlined with the take into every signature of the callers, it doubled their first
    compilation for ~20 ns)."""
    for row in range(int(c[TERMS]), int(c[EXTRA]), TERM):
        which = int(c[row]) - first
        if which < 0 or which >= count:
            continue
        r0, c0, a, e = int(c[row + 1]), int(c[row + 2]), int(c[row + 3]), int(c[row + 4])
        coef = c[row + 5]
        if c[row + 6] != 0.0:  # the body-fixed point k
            u0, u1, u2 = c[K], c[K + 1], c[K + 2]
        else:  # the base origin p
            u0, u1, u2 = H[0, 3], H[1, 3], H[2, 3]
        at = o + 36 * which + 6 * r0 + c0
        for i in range(3):
            if a == 0:
                y0, y1 = skew_entry(u0, u1, u2, i, 0), skew_entry(u0, u1, u2, i, 1)
                y2 = skew_entry(u0, u1, u2, i, 2)
            else:  # (R^a u^)[i, j] = sum_m R^a[i, m] u^[m, j]
                r_0, r_1, r_2 = _rot(H, i, 0, a), _rot(H, i, 1, a), _rot(H, i, 2, a)
                y0 = r_1 * u2 - r_2 * u1
                y1 = r_2 * u0 - r_0 * u2
                y2 = r_0 * u1 - r_1 * u0
            for j in range(3):
                if e == 0:
                    z = y0 if j == 0 else (y1 if j == 1 else y2)
                else:
                    z = y0 * _rot(H, 0, j, e) + y1 * _rot(H, 1, j, e) + y2 * _rot(H, 2, j, e)
                w[at + 6 * i + j] += coef * z


@njit(cache=True)
def change_matrix(H: np.ndarray, c: np.ndarray, which: int, w: np.ndarray, o: int) -> None:
    """One of :func:`change_matrices` (X (which 0), X^-1 (1) or L_s^-1 (2)) into ``w[o : o + 36]``,
    as a plain call (for the kernels that evaluate one matrix once per call)."""
    change_matrices(H, c, which, 1, w, o)


@njit(cache=True, inline="always")
def change_base(
    H: np.ndarray, vb: np.ndarray, c: np.ndarray, w: np.ndarray, o: int, v: np.ndarray, vo: int
) -> None:
    """At the pose H (4, 4) and the source base velocity ``vb`` (6,), from the constants ``c``: the
    work array ``w[o : o + WORK]`` = ``[X | X^-1 | L_s^-1 (scratch) | T_dot nu (6, zeros when the
    pair has none)]`` and the target base velocity ``X vb`` into ``v[vo : vo + 6]``."""
    cw, cq, cc = c[C_WV], c[C_Q], c[C_C]
    free = cw == 0.0 and cq == 0.0 and cc == 0.0
    change_matrices(H, c, 0, 2 if free else 3, w, o)  # (L_s^-1 too for T_dot nu)
    for r in range(6):
        v[vo + r] = _row(w, o, r, vb)
    b = o + 108
    for k in range(6):
        w[b + k] = 0.0
    if free:
        return
    s = o + 72  # the BODY velocity (v, w) of the source's
    vx, vy, vz = _row(w, s, 0, vb), _row(w, s, 1, vb), _row(w, s, 2, vb)
    wx, wy, wz = _row(w, s, 3, vb), _row(w, s, 4, vb), _row(w, s, 5, vb)
    ax, ay, az = cw * (wy * vz - wz * vy), cw * (wz * vx - wx * vz), cw * (wx * vy - wy * vx)
    if cq != 0.0:  # c_q ((v - w x q) x w), q = R^T p
        qx = H[0, 0] * H[0, 3] + H[1, 0] * H[1, 3] + H[2, 0] * H[2, 3]
        qy = H[0, 1] * H[0, 3] + H[1, 1] * H[1, 3] + H[2, 1] * H[2, 3]
        qz = H[0, 2] * H[0, 3] + H[1, 2] * H[1, 3] + H[2, 2] * H[2, 3]
        ux, uy, uz = vx - (wy * qz - wz * qy), vy - (wz * qx - wx * qz), vz - (wx * qy - wy * qx)
        ax += cq * (uy * wz - uz * wy)
        ay += cq * (uz * wx - ux * wz)
        az += cq * (ux * wy - uy * wx)
    if cc != 0.0:  # c_c (w x (w x k))
        kx, ky, kz = c[K], c[K + 1], c[K + 2]
        ux, uy, uz = wy * kz - wz * ky, wz * kx - wx * kz, wx * ky - wy * kx
        ax += cc * (wy * uz - wz * uy)
        ay += cc * (wz * ux - wx * uz)
        az += cc * (wx * uy - wy * ux)
    if c[ROTATE] != 0.0:  # P_t = R
        ax, ay, az = (
            H[0, 0] * ax + H[0, 1] * ay + H[0, 2] * az,
            H[1, 0] * ax + H[1, 1] * ay + H[1, 2] * az,
            H[2, 0] * ax + H[2, 1] * ay + H[2, 2] * az,
        )
    i0 = b + int(c[LINEAR])
    w[i0], w[i0 + 1], w[i0 + 2] = ax, ay, az


_V, _RV = float64[::1], types.Array(float64, 1, "C", readonly=True)
_M, _RM = float64[:, ::1], types.Array(float64, 2, "C", readonly=True)


# explicit signatures: a faster dispatch, and a TypeError instead of a new compilation for other
# arguments (the caller converts them); the pose and s_dot may be read-only arrays
@kernel([void(h, _V, v, _V, _V) for h in (_M, _RM) for v in (_V, _RV)])
def fill(H: np.ndarray, vb: np.ndarray, sd: np.ndarray, v: np.ndarray, data: np.ndarray) -> None:
    """One state's change of variables (floating base): ``v = [X vb; sd[perm]]`` (nv,) and the work
    array (module docstring) in ``data``, which the constants head. Compiled for contiguous float64
    arrays only (a TypeError for others: the caller makes them so)."""
    n = int(data[N])
    for j in range(n):
        v[6 + j] = sd[int(data[PERM + j])]
    change_base(H, vb, data, data, int(data[WORK_AT]), v, 0)
