"""Compiled kernels (numba) of the single-state chain rule of the inverse dynamics derivatives.

:class:`bridge.derivatives.single.SingleStateInverseDerivatives` turns a BODY-based engine's
derivatives ``(D_q, D_v, M)`` (nv, nv) of one state into the derivatives in W = MIXED or INERTIAL:
base rows times ``X^T``, base columns times a (24, 18) block matrix G, joints permuted. In numpy
that is about fifteen calls of half a microsecond each for a few thousand flops; here it is one
compiled call. The formulas are those of :func:`bridge.derivatives.inverse_dynamics_derivatives_back`
(docs/theory.md, "Derivatives of the dynamics"); the numpy path of the class is the reference the
tests compare these kernels with.

This module imports numba at its top and is imported only when numba is installed (the ``fast``
extra); nothing else in bridge needs it. Every kernel writes into a caller-made ``out`` and
allocates only small scratch, so it is thread-safe. Compiled code is cached on disk (numba's
``cache=True``): the first call in a fresh environment compiles for about a second.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["blocks", "chain", "forward_chain", "inertial_inverse_chain", "mixed_inverse_chain"]


@njit(cache=True)
def _rt_skew(G: np.ndarray, r0: int, c0: int, Rt: np.ndarray, x: float, y: float, z: float) -> None:
    """``G[r0:r0 + 3, c0:c0 + 3] = Rt @ [x, y, z]^`` (``u^`` the cross-product matrix)."""
    for a in range(3):
        p, q, r = Rt[a, 0], Rt[a, 1], Rt[a, 2]
        G[r0 + a, c0] = q * z - r * y
        G[r0 + a, c0 + 1] = r * x - p * z
        G[r0 + a, c0 + 2] = p * y - q * x


@njit(cache=True)
def _gather(
    L: np.ndarray, A0: np.ndarray, A1: np.ndarray, A2: np.ndarray, order: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """Write the joint columns of ``blkdiag(L, P^T) A_k P`` into ``out[k]`` (3, nv, nv) and return
    the base columns of the same rows, (nv, 18): row i holds ``[A0, A1, A2]`` row ``order[i]``'s
    first six entries side by side (base rows first times L)."""
    nv = A0.shape[0]
    top = np.empty((3, 6, nv))
    for k in range(3):
        D = A0 if k == 0 else (A1 if k == 1 else A2)
        for r in range(6):
            x0, x1, x2, x3, x4, x5 = L[r, 0], L[r, 1], L[r, 2], L[r, 3], L[r, 4], L[r, 5]
            for j in range(nv):
                top[k, r, j] = (
                    x0 * D[0, j] + x1 * D[1, j] + x2 * D[2, j] + x3 * D[3, j] + x4 * D[4, j] + x5 * D[5, j]
                )
    C = np.empty((nv, 18))
    for i in range(nv):
        t = order[i]
        for k in range(3):
            src = top[k, t] if t < 6 else (A0[t] if k == 0 else (A1[t] if k == 1 else A2[t]))
            dst = out[k, i]
            for j in range(6, nv):
                dst[j] = src[order[j]]
            for b in range(6):
                C[i, 6 * k + b] = src[b]
    return C


@njit(cache=True)
def mixed_inverse_chain(
    X: np.ndarray,
    nu_b: np.ndarray,
    nu_dot_b: np.ndarray,
    tau_b: np.ndarray,
    dq: np.ndarray,
    dv: np.ndarray,
    M: np.ndarray,
    order: np.ndarray,
    out: np.ndarray,
) -> np.ndarray:
    """The MIXED chain rule of one state into ``out`` (3, nv, nv); returns ``out``.

    Args:
        X: ``B_X_W`` (6, 6) = ``blkdiag(R^T, R^T)``.
        nu_b: the base velocity in W (6,).
        nu_dot_b: the base acceleration in W (6,).
        tau_b: the base part (6,) of the engine's inverse dynamics (a BODY wrench).
        dq: the engine's derivative (nv, nv) with respect to its tangent, in its order.
        dv: the engine's derivative (nv, nv) with respect to its velocity, in its order.
        M: the engine's mass matrix (nv, nv), in its order.
        order: (nv,) the engine index of each W index (base first, unchanged).
        out: (3, nv, nv), overwritten with ``(dtau_dq, dtau_dnu, dtau_dnudot)`` in W.

    With ``A_u = R^T u^``: the base columns of the rows r (base rows first times ``X^T``) of
    ``(D_q, D_v, M)`` (``c_q, c_v, c_M``, each split into linear and angular halves) give
    ``dq[r, :3] = c_q,lin R^T``, ``dq[r, 3:] = c_q,ang R^T + c_v,lin A_v + c_v,ang A_w +
    c_M,lin A_(a - w x v) + c_M,ang A_alpha - (R f)^`` (f the linear half of ``tau_b`` on the first three
    base rows, its angular half on the last three), ``dnu[r, :3] = c_v,lin R^T - c_M,lin A_w``,
    ``dnu[r, 3:] = c_v,ang R^T + c_M,lin A_v``, ``M[r, :3] = c_M,lin R^T``, ``M[r, 3:] = c_M,ang R^T``.
    """
    nv = dq.shape[0]
    Rt = X[:3, :3]
    vx, vy, vz = nu_b[0], nu_b[1], nu_b[2]
    wx, wy, wz = nu_b[3], nu_b[4], nu_b[5]
    A = np.empty((4, 3, 3))  # A_v, A_w, A_(a - w x v), A_alpha
    _rt_skew(A[0], 0, 0, Rt, vx, vy, vz)
    _rt_skew(A[1], 0, 0, Rt, wx, wy, wz)
    _rt_skew(
        A[2], 0, 0, Rt,
        nu_dot_b[0] - wy * vz + wz * vy, nu_dot_b[1] - wz * vx + wx * vz, nu_dot_b[2] - wx * vy + wy * vx,
    )  # fmt: skip
    _rt_skew(A[3], 0, 0, Rt, nu_dot_b[3], nu_dot_b[4], nu_dot_b[5])
    Z = np.zeros((6, 3))  # rows: (R f_lin)^, (R f_ang)^
    for h in range(2):
        f0, f1, f2 = tau_b[3 * h], tau_b[3 * h + 1], tau_b[3 * h + 2]
        g0 = Rt[0, 0] * f0 + Rt[1, 0] * f1 + Rt[2, 0] * f2
        g1 = Rt[0, 1] * f0 + Rt[1, 1] * f1 + Rt[2, 1] * f2
        g2 = Rt[0, 2] * f0 + Rt[1, 2] * f1 + Rt[2, 2] * f2
        o = 3 * h
        Z[o, 1], Z[o, 2] = -g2, g1
        Z[o + 1, 0], Z[o + 1, 2] = g2, -g0
        Z[o + 2, 0], Z[o + 2, 1] = -g1, g0
    C = _gather(np.ascontiguousarray(X.T), dq, dv, M, order, out)
    for i in range(nv):
        t = order[i]
        c = C[i]
        oq, ov, oM = out[0, i], out[1, i], out[2, i]
        for b in range(3):
            q0 = q1 = v0 = v1 = m0 = m1 = 0.0
            for a in range(3):
                r = Rt[a, b]
                q0 += c[a] * r
                q1 += (
                    c[3 + a] * r + c[6 + a] * A[0, a, b] + c[9 + a] * A[1, a, b]
                    + c[12 + a] * A[2, a, b] + c[15 + a] * A[3, a, b]
                )  # fmt: skip
                v0 += c[6 + a] * r - c[12 + a] * A[1, a, b]
                v1 += c[9 + a] * r + c[12 + a] * A[0, a, b]
                m0 += c[12 + a] * r
                m1 += c[15 + a] * r
            if t < 6:
                q1 -= Z[t, b]
            oq[b], oq[3 + b] = q0, q1
            ov[b], ov[3 + b] = v0, v1
            oM[b], oM[3 + b] = m0, m1
    return out


@njit(cache=True)
def chain(
    L: np.ndarray,
    G: np.ndarray,
    E: np.ndarray,
    A0: np.ndarray,
    A1: np.ndarray,
    A2: np.ndarray,
    order: np.ndarray,
    out: np.ndarray,
) -> np.ndarray:
    """``out[k] = blkdiag(L, P^T) (A_k with new base columns) + E_k`` for three (nv, nv) matrices
    of one state; returns ``out`` (3, nv, nv).

    Args:
        L: (6, 6) the left factor of the base rows (ID: ``X^T``; FD: ``X^-1``).
        G: (18, 18) block matrix: the base columns of the rows r of ``(A0, A1, A2)`` (base rows
            first times L), side by side (18,), times G are the new base columns of the three
            results (only the blocks ``G[:, :6]``, ``G[6:, 6:12]``, ``G[12:, 12:]`` are read).
        E: (2, 6, 6) added to the base blocks of the first two results (after L).
        A0: the first of the engine's three matrices (nv, nv), in its order.
        A1: the second.
        A2: the third.
        order: (nv,) the engine index of each W index (base first, unchanged).
        out: (3, nv, nv), overwritten.
    """
    nv = A0.shape[0]
    C = _gather(L, A0, A1, A2, order, out)
    for i in range(nv):
        t = order[i]
        c = C[i]
        o0, o1, o2 = out[0, i], out[1, i], out[2, i]
        for b in range(6):
            s0 = E[0, t, b] if t < 6 else 0.0
            s1 = E[1, t, b] if t < 6 else 0.0
            s2 = 0.0
            for r in range(6):
                s0 += c[r] * G[r, b]
            for r in range(6, 12):
                s0 += c[r] * G[r, b]
                s1 += c[r] * G[r, 6 + b]
            for r in range(12, 18):
                s0 += c[r] * G[r, b]
                s1 += c[r] * G[r, 6 + b]
                s2 += c[r] * G[r, 12 + b]
            o0[b], o1[b], o2[b] = s0, s1, s2
    return out


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


@njit(cache=True)
def inertial_inverse_chain(
    X: np.ndarray,
    nu_b: np.ndarray,
    nu_dot_b: np.ndarray,
    tau_b: np.ndarray,
    dq: np.ndarray,
    dv: np.ndarray,
    M: np.ndarray,
    order: np.ndarray,
    out: np.ndarray,
) -> np.ndarray:
    """The INERTIAL chain rule of the inverse dynamics derivatives of one state into ``out``
    (3, nv, nv), arguments as in :func:`mixed_inverse_chain` (``X = B_X_W`` the motion transform
    from the world frame to the base): ``dtau_dq = T^T [D_q T + D_v[:, b] Y(nu) + M[:, b]
    Y(nu_dot)] + Z(tau_t)``, ``dtau_dnu = T^T D_v T``, ``dtau_dnudot = T^T M T``."""
    B = blocks(X, nu_b, nu_dot_b, tau_b, False)
    G = np.zeros((18, 18))
    for a in range(6):
        for b in range(6):
            G[a, b] = G[6 + a, 6 + b] = G[12 + a, 12 + b] = X[a, b]
            G[6 + a, b] = B[1, a, b]
            G[12 + a, b] = B[2, a, b]
    E = np.zeros((2, 6, 6))
    E[0] = B[4]
    return chain(np.ascontiguousarray(X.T), G, E, dq, dv, M, order, out)


@njit(cache=True)
def forward_chain(
    X: np.ndarray,
    nu_b: np.ndarray,
    nu_dot_b: np.ndarray,
    tau_b: np.ndarray,
    mixed: bool,
    da_dq: np.ndarray,
    da_dv: np.ndarray,
    M_inv: np.ndarray,
    order: np.ndarray,
    out: np.ndarray,
) -> np.ndarray:
    """The chain rule of the forward dynamics derivatives of one state into ``out`` (3, nv, nv)
    (:func:`bridge.derivatives.forward_dynamics_derivatives_back`): ``dnudot_dq = T^-1 [A_q T +
    A_v[:, b] Y(nu) - M_t^-1[:, b] X^-T Z(tau_t) - (Y(nu_dot) + B_q)_bb]``, ``dnudot_dnu = T^-1
    [A_v T - (B_nu)_bb]``, ``dnudot_dtau = T^-1 M_t^-1 T^-T``.

    Args:
        X: ``B_X_W`` (6, 6).
        nu_b: the base velocity in W (6,).
        nu_dot_b: the base acceleration (the forward dynamics) in W (6,).
        tau_b: the base part (6,) of the generalized force in the engine (``T^-T tau``).
        mixed: W is MIXED (else INERTIAL).
        da_dq: the engine's derivative (nv, nv) with respect to its tangent, in its order.
        da_dv: the engine's derivative (nv, nv) with respect to its velocity, in its order.
        M_inv: the engine's inverse mass matrix (nv, nv), in its order.
        order: (nv,) the engine index of each W index (base first, unchanged).
        out: (3, nv, nv), overwritten with ``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` in W.
    """
    B = blocks(X, nu_b, nu_dot_b, tau_b, mixed)
    Xi = B[0]
    G = np.zeros((18, 18))
    XiZ = np.empty((6, 6))
    _mm(Xi, B[4], XiZ, True)
    for a in range(6):
        for b in range(6):
            G[a, b] = G[6 + a, 6 + b] = X[a, b]
            G[6 + a, b] = B[1, a, b]
            G[12 + a, b] = -XiZ[a, b]
            G[12 + a, 12 + b] = Xi[b, a]
    E = np.zeros((2, 6, 6))
    _mm(Xi, B[2], E[0], False)
    _mm(Xi, B[3], E[1], False)
    for a in range(6):
        for b in range(6):
            E[0, a, b], E[1, a, b] = -E[0, a, b], -E[1, a, b]
    return chain(Xi, G, E, da_dq, da_dv, M_inv, order, out)
