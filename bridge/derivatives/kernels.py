"""Compiled kernels (numba) of the single-state chain rule of the dynamics derivatives.

:mod:`bridge.derivatives.single` turns a BODY-based engine's derivatives of one state, ``(D_q, D_v,
M)`` (inverse dynamics) or ``(A_q, A_v, M^-1)`` (forward dynamics), each (nv, nv), into the
derivatives in W = MIXED or INERTIAL: base rows times ``L`` (``X^T`` or ``X^-1``), base columns
times an (18, 18) block matrix G, a (6, 6) term on the base block, joints permuted. In numpy that
is about fifteen calls of half a microsecond each for a few thousand flops; here it is one call of
:func:`chain_rule`. The formulas are those of
:func:`bridge.derivatives.inverse_dynamics_derivatives_back` and
:func:`bridge.derivatives.forward_dynamics_derivatives_back` (docs/theory.md, "Derivatives of the
dynamics"); the numpy paths are the reference the tests compare these kernels with.

This module imports numba at its top and is imported only when numba is installed (the ``fast``
extra); nothing else in bridge needs it. Every kernel writes into a caller-made ``out`` and
allocates only its own scratch, so it is thread-safe. Compiled code is cached on disk (numba's
``cache=True``): the first call in a fresh environment compiles for a few seconds.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["blocks", "chain_rule", "constants", "copy_permuted"]

# FMA contraction only (no reassociation: the results stay those of the written order of
# operations up to the fused roundings, 1e-15 relative from the numpy path)
_FAST = {"contract"}


@njit(cache=True)
def _skew_into(S: np.ndarray, r0: int, c0: int, sign: float, x: float, y: float, z: float) -> None:
    """``S[r0:r0 + 3, c0:c0 + 3] = sign * [x, y, z]^`` (diagonal zero)."""
    S[r0, c0], S[r0, c0 + 1], S[r0, c0 + 2] = 0.0, -sign * z, sign * y
    S[r0 + 1, c0], S[r0 + 1, c0 + 1], S[r0 + 1, c0 + 2] = sign * z, 0.0, -sign * x
    S[r0 + 2, c0], S[r0 + 2, c0 + 1], S[r0 + 2, c0 + 2] = -sign * y, sign * x, 0.0


@njit(cache=True)
def _mm(A: np.ndarray, B: np.ndarray, out: np.ndarray, transpose_a: bool) -> None:
    """``out = A B`` (or ``A^T B``) for (6, 6) matrices."""
    for a in range(6):
        for b in range(6):
            acc = 0.0
            for m in range(6):
                acc += (A[m, a] if transpose_a else A[a, m]) * B[m, b]
            out[a, b] = acc


@njit(cache=True)
def blocks(X: np.ndarray, nu_b: np.ndarray, y_b: np.ndarray, f_b: np.ndarray, mixed: bool) -> np.ndarray:
    """The (6, 6) blocks of the chain rule at one state, stacked (5, 6, 6): ``X^-1``, ``Y(nu_b)``,
    ``Y(y_b) + B_q``, ``B_nu``, ``Z(f_b)`` (:func:`bridge.derivatives.rate_matrix` and its
    siblings; W = MIXED if ``mixed`` else INERTIAL, ``X = B_X_W``).

    MIXED (``X = blkdiag(R^T, R^T)``): ``X^-1 = X^T``, ``Y(y) = [[0, R^T y_lin^], [0, R^T y_ang^]]``,
    ``B_q = [[0, -R^T (w x v)^], [0, 0]]``, ``B_nu = [[-R^T w^, R^T v^], [0, 0]]``,
    ``Z(f) = [[0, -(R f_lin)^], [0, -(R f_ang)^]]``. INERTIAL: ``X^-1`` of the motion transform,
    ``Y(y) = crm(X y) X``, ``B_q = B_nu = 0``, ``Z(f) = X^T K(f) X`` with
    ``K(f) = [[0, -f_lin^], [-f_lin^, -f_ang^]]``.
    """
    out = np.zeros((5, 6, 6))
    Xi, Y, inner, Bnu, Z = out[0], out[1], out[2], out[3], out[4]
    if mixed:
        for a in range(3):
            for b in range(3):
                Xi[a, b] = Xi[3 + a, 3 + b] = X[b, a]
        vx, vy, vz, wx, wy, wz = nu_b[0], nu_b[1], nu_b[2], nu_b[3], nu_b[4], nu_b[5]
        S = np.zeros((6, 3, 3))
        _skew_into(S[0], 0, 0, 1.0, vx, vy, vz)
        _skew_into(S[1], 0, 0, 1.0, wx, wy, wz)
        _skew_into(
            S[2], 0, 0, 1.0,
            y_b[0] - wy * vz + wz * vy, y_b[1] - wz * vx + wx * vz, y_b[2] - wx * vy + wy * vx,
        )  # fmt: skip
        _skew_into(S[3], 0, 0, 1.0, y_b[3], y_b[4], y_b[5])
        g = np.empty(3)
        for h in range(2):  # -(R f_h)^
            for a in range(3):
                g[a] = X[0, a] * f_b[3 * h] + X[1, a] * f_b[3 * h + 1] + X[2, a] * f_b[3 * h + 2]
            _skew_into(S[4 + h], 0, 0, -1.0, g[0], g[1], g[2])
        r = np.empty(4)  # R^T times S_0..S_3, one entry
        for a in range(3):
            for b in range(3):
                r[:] = 0.0
                for m in range(3):
                    for q in range(4):
                        r[q] += X[a, m] * S[q, m, b]
                Y[a, 3 + b], Y[3 + a, 3 + b] = r[0], r[1]
                inner[a, 3 + b], inner[3 + a, 3 + b] = r[2], r[3]
                Bnu[a, b], Bnu[a, 3 + b] = -r[1], r[0]
                Z[a, 3 + b], Z[3 + a, 3 + b] = S[4, a, b], S[5, a, b]
        return out
    for a in range(3):  # X = [[A, B], [0, A]] with A orthogonal: X^-1 = [[A^T, -A^T B A^T], [0, A^T]]
        for b in range(3):
            Xi[a, b] = Xi[3 + a, 3 + b] = X[b, a]
    for a in range(3):
        for b in range(3):
            acc = 0.0
            for m in range(3):
                for q in range(3):
                    acc -= X[m, a] * X[m, 3 + q] * X[b, q]
            Xi[a, 3 + b] = acc
    C = np.zeros((6, 6))
    u = np.empty(6)
    for which in range(2):
        y = nu_b if which == 0 else y_b
        for a in range(6):  # u = X y: (lin, ang) in the base frame; crm(u) = [[w^, v^], [0, w^]]
            u[a] = 0.0
            for m in range(6):
                u[a] += X[a, m] * y[m]
        _skew_into(C, 0, 0, 1.0, u[3], u[4], u[5])
        _skew_into(C, 3, 3, 1.0, u[3], u[4], u[5])
        _skew_into(C, 0, 3, 1.0, u[0], u[1], u[2])
        _mm(C, X, Y if which == 0 else inner, False)
    K = np.zeros((6, 6))
    _skew_into(K, 0, 3, -1.0, f_b[0], f_b[1], f_b[2])
    _skew_into(K, 3, 0, -1.0, f_b[0], f_b[1], f_b[2])
    _skew_into(K, 3, 3, -1.0, f_b[3], f_b[4], f_b[5])
    KX = np.empty((6, 6))
    _mm(K, X, KX, False)
    _mm(X, KX, Z, True)
    return out


# ------------------------------------------------------------------------------------------------
# numba's dispatch costs about 70 ns per array argument (each is unboxed) and boxing a returned
# array about 250 ns, more than much of the work, and each small array allocated in a kernel about
# 30 ns: :func:`chain_rule` takes eight arguments, returns nothing and allocates one scratch array.
# Its constants travel in one int array (:func:`constants`), X and the base velocity in one float
# array ``w`` read at offsets (so an engine may pass its own state buffer as it is):
#   ints = [forward (0: ID, 1: FD), mixed, identity order, offset of X (36, row major) in w,
#           offset of the base velocity in W (6) in w, offset of the engine's T_dot nu base part
#           (6) in w (-1: y is W's base acceleration itself), order (nv)]
_HEAD = 6


def constants(
    forward: bool, mixed: bool, order: np.ndarray, x_at: int, nu_at: int, bias_at: int = -1
) -> np.ndarray:
    """The int constants of :func:`chain_rule` (see the comment above) for the joint ``order``
    (nv,) (the engine index of each W index, base first, unchanged)."""
    order = np.asarray(order, dtype=np.intp)
    identity = bool((order == np.arange(order.shape[0])).all())
    head = np.array([int(forward), int(mixed), int(identity), x_at, nu_at, bias_at], dtype=np.intp)
    return np.concatenate([head, order])


@njit(cache=True)
def _setup(ints: np.ndarray, w: np.ndarray, y: np.ndarray, f: np.ndarray, scratch: np.ndarray) -> None:
    """The per-state blocks of :func:`chain_rule` into ``scratch``: L (6, 6) at 0, G (18, 18) at
    36, E (2, 6, 6) at 360 (ID: ``L = X^T``, ``G = [[X, 0, 0], [Y(nu), X, 0], [Y(y) + B_q, B_nu,
    X]]``, ``E = (Z(f), 0)``; FD: ``L = X^-1``, ``G = [[X, 0, 0], [Y(nu), X, 0], [-X^-T Z(f), 0,
    X^-T]]``, ``E = (-X^-1 (Y(y) + B_q), -X^-1 B_nu)``, the blocks of :func:`blocks`)."""
    forward, mixed = ints[0] != 0, ints[1] != 0
    ox, onu, obias = ints[3], ints[4], ints[5]
    X = np.empty((6, 6))
    for a in range(6):
        for b in range(6):
            X[a, b] = w[ox + 6 * a + b]
    nu_b = w[onu : onu + 6]
    yb = y[:6]
    if obias >= 0:  # W's base acceleration from the engine's: X^-1 (a_b - T_dot nu)
        yb = np.empty(6)
        Xi = _inverse(X)
        for a in range(6):
            acc = 0.0
            for m in range(6):
                acc += Xi[a, m] * (y[m] - w[obias + m])
            yb[a] = acc
    B = blocks(X, nu_b, yb, f, mixed)  # X^-1, Y(nu), Y(y) + B_q, B_nu, Z(f)
    L = scratch[0:36].reshape(6, 6)
    G = scratch[36:360].reshape(18, 18)
    E = scratch[360:432].reshape(2, 6, 6)
    G[:] = 0.0
    E[:] = 0.0
    Xi = B[0]
    for a in range(6):
        for b in range(6):
            G[a, b] = G[6 + a, 6 + b] = X[a, b]
            G[6 + a, b] = B[1, a, b]
            if forward:
                L[a, b] = Xi[a, b]
                G[12 + a, 12 + b] = Xi[b, a]
            else:
                L[a, b] = X[b, a]
                G[12 + a, 12 + b] = X[a, b]
                G[12 + a, b] = B[2, a, b]
                G[12 + a, 6 + b] = B[3, a, b]
                E[0, a, b] = B[4, a, b]
    if forward:
        for a in range(6):
            for b in range(6):
                s0 = s1 = s2 = 0.0
                for m in range(6):
                    s0 += Xi[m, a] * B[4, m, b]
                    s1 += Xi[a, m] * B[2, m, b]
                    s2 += Xi[a, m] * B[3, m, b]
                G[12 + a, b] = -s0
                E[0, a, b] = -s1
                E[1, a, b] = -s2


@njit(cache=True)
def _inverse(X: np.ndarray) -> np.ndarray:
    """``X^-1`` (6, 6) of ``X = [[A, B], [0, A]]``, A orthogonal: ``[[A^T, -A^T B A^T], [0, A^T]]``."""
    Xi = np.zeros((6, 6))
    for a in range(3):
        for b in range(3):
            Xi[a, b] = Xi[3 + a, 3 + b] = X[b, a]
            acc = 0.0
            for m in range(3):
                for q in range(3):
                    acc -= X[m, a] * X[m, 3 + q] * X[b, q]
            Xi[a, 3 + b] = acc
    return Xi


@njit(cache=True, fastmath=_FAST)
def chain_rule(
    ints: np.ndarray,
    w: np.ndarray,
    y: np.ndarray,
    f: np.ndarray,
    A0: np.ndarray,
    A1: np.ndarray,
    A2: np.ndarray,
    out: np.ndarray,
) -> None:
    """The chain rule of one state's ID or FD derivatives into ``out`` (3, nv, nv): ``out[k] =
    blkdiag(L, P^T) A_k P`` with new base columns ``[c_0, c_1, c_2] G`` (``c_k`` the first six
    entries of the row of ``blkdiag(L, P^T) A_k``) and ``E_k`` added on the base block (see
    :func:`_setup`).

    Args:
        ints: :func:`constants`.
        w: holds ``X = B_X_W`` and the base velocity in W (and the engine's ``T_dot nu``) at the
            offsets in ``ints``.
        y: the base acceleration in W (6,), or (``ints`` giving a bias offset; FD) the engine's
            acceleration (>= 6,), of which it is ``X^-1 (a_b - T_dot nu)``.
        f: the engine's generalized force, its base part (first six entries) read (ID: its inverse
            dynamics; FD: ``T^-T tau``).
        A0: ``D_q`` (ID) or ``A_q`` (FD) (nv, nv), the engine's, in its order.
        A1: ``D_v`` or ``A_v`` (nv, nv).
        A2: ``M`` or ``M^-1`` (nv, nv).
        out: (3, nv, nv), overwritten.
    """
    nv = A0.shape[0]
    identity = ints[2] != 0
    scratch = np.empty(432 + 19 * nv)
    _setup(ints, w, y, f, scratch)
    L = scratch[0:36].reshape(6, 6)
    G = scratch[36:360].reshape(18, 18)
    E = scratch[360:432].reshape(2, 6, 6)
    Ct = scratch[432 : 432 + 18 * nv].reshape(18, nv)  # the base columns of every W row
    col = scratch[432 + 18 * nv :]
    for i in range(6):  # base rows: L times the engine's base rows (each entry summed in a register)
        l0, l1, l2, l3, l4, l5 = L[i, 0], L[i, 1], L[i, 2], L[i, 3], L[i, 4], L[i, 5]
        for j in range(nv):
            c = j if identity or j < 6 else ints[_HEAD + j]
            x0 = l0 * A0[0, c] + l1 * A0[1, c] + l2 * A0[2, c] + l3 * A0[3, c] + l4 * A0[4, c] + l5 * A0[5, c]
            x1 = l0 * A1[0, c] + l1 * A1[1, c] + l2 * A1[2, c] + l3 * A1[3, c] + l4 * A1[4, c] + l5 * A1[5, c]
            x2 = l0 * A2[0, c] + l1 * A2[1, c] + l2 * A2[2, c] + l3 * A2[3, c] + l4 * A2[4, c] + l5 * A2[5, c]
            if j < 6:
                Ct[j, i], Ct[6 + j, i], Ct[12 + j, i] = x0, x1, x2
            else:
                out[0, i, j], out[1, i, j], out[2, i, j] = x0, x1, x2
    # joint rows, permuted (the three matrices row by row together: three interleaved streams
    # copied about twice as fast as one matrix after another, measured)
    for i in range(6, nv):
        t = i if identity else ints[_HEAD + i]
        for b in range(6):
            Ct[b, i], Ct[6 + b, i], Ct[12 + b, i] = A0[t, b], A1[t, b], A2[t, b]
        if identity:
            for j in range(6, nv):
                out[0, i, j] = A0[t, j]
                out[1, i, j] = A1[t, j]
                out[2, i, j] = A2[t, j]
        else:
            for j in range(6, nv):
                c = ints[_HEAD + j]
                out[0, i, j] = A0[t, c]
                out[1, i, j] = A1[t, c]
                out[2, i, j] = A2[t, c]
    # the new base columns, (G^T C^T) one column at a time over all rows (contiguous; the zero
    # entries of G, half of X's in MIXED, skipped), then E on the base block
    for k in range(3):
        for b in range(6):
            for i in range(nv):
                col[i] = 0.0
            for r in range(6 * k, 18):
                g = G[r, 6 * k + b]
                if g != 0.0:
                    for i in range(nv):
                        col[i] += g * Ct[r, i]
            for i in range(nv):
                out[k, i, b] = col[i]
            if k < 2:
                for i in range(6):
                    out[k, i, b] += E[k, i, b]


@njit(cache=True)
def copy_permuted(ints: np.ndarray, A0: np.ndarray, A1: np.ndarray, A2: np.ndarray, out: np.ndarray) -> None:
    """``out[k] = P^T A_k P`` (3, nv, nv) (rows and columns to W's order; ``ints`` of
    :func:`constants`, only the order read): the chain rule where T is the joint permutation."""
    nv = A0.shape[0]
    identity = ints[2] != 0
    for i in range(nv):
        t = i if identity else ints[_HEAD + i]
        if identity:
            for j in range(nv):
                out[0, i, j] = A0[t, j]
                out[1, i, j] = A1[t, j]
                out[2, i, j] = A2[t, j]
        else:
            for j in range(nv):
                c = ints[_HEAD + j]
                out[0, i, j] = A0[t, c]
                out[1, i, j] = A1[t, c]
                out[2, i, j] = A2[t, c]
