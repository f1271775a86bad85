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
def _skew(a: int, b: int, x: float, y: float, z: float) -> float:
    """Entry ``(a, b)`` of the cross-product matrix ``[x, y, z]^``."""
    if a == b:
        return 0.0
    if a == 0:
        return -z if b == 1 else y
    if a == 1:
        return z if b == 0 else -x
    return -y if b == 0 else x


@njit(cache=True)
def _times_skew(X: np.ndarray, a: int, b: int, x: float, y: float, z: float) -> float:
    """Entry ``(a, b)`` of ``X[:3, :3] [x, y, z]^``."""
    if b == 0:
        return X[a, 1] * z - X[a, 2] * y
    if b == 1:
        return X[a, 2] * x - X[a, 0] * z
    return X[a, 0] * y - X[a, 1] * x


@njit(cache=True)
def blocks(X: np.ndarray, nu_b: np.ndarray, y_b: np.ndarray, f_b: np.ndarray, mixed: bool) -> np.ndarray:
    """The (6, 6) blocks of the chain rule at one state, stacked (5, 6, 6): ``X^-1``, ``Y(nu_b)``,
    ``Y(y_b) + B_q``, ``B_nu``, ``Z(f_b)`` (:func:`bridge.derivatives.rate_matrix` and its
    siblings; W = MIXED if ``mixed`` else INERTIAL, ``X = B_X_W``): :func:`_blocks_into` into a
    fresh array."""
    out = np.empty((5, 6, 6))
    _blocks_into(X, nu_b, y_b, f_b, mixed, out)
    return out


@njit(cache=True)
def _blocks_into(X: np.ndarray, nu_b: np.ndarray, y_b: np.ndarray, f_b: np.ndarray, mixed: bool, out) -> None:
    """The blocks of :func:`blocks` into ``out`` (5, 6, 6), entry by entry (no allocation and no
    view: the chain rule calls it at every state; each view costs numba two atomic reference counts).

    MIXED (``X = blkdiag(R^T, R^T)``): ``X^-1 = X^T``, ``Y(y) = [[0, R^T y_lin^], [0, R^T y_ang^]]``,
    ``B_q = [[0, -R^T (w x v)^], [0, 0]]``, ``B_nu = [[-R^T w^, R^T v^], [0, 0]]``,
    ``Z(f) = [[0, -(R f_lin)^], [0, -(R f_ang)^]]``. INERTIAL: ``X^-1`` of the motion transform,
    ``Y(y) = crm(X y) X``, ``B_q = B_nu = 0``, ``Z(f) = X^T K(f) X`` with
    ``K(f) = [[0, -f_lin^], [-f_lin^, -f_ang^]]``.
    """
    out[:] = 0.0
    f0, f1, f2, f3, f4, f5 = f_b[0], f_b[1], f_b[2], f_b[3], f_b[4], f_b[5]
    if mixed:
        vx, vy, vz, wx, wy, wz = nu_b[0], nu_b[1], nu_b[2], nu_b[3], nu_b[4], nu_b[5]
        px, py, pz = y_b[0] - wy * vz + wz * vy, y_b[1] - wz * vx + wx * vz, y_b[2] - wx * vy + wy * vx
        ax, ay, az = y_b[3], y_b[4], y_b[5]
        gx = X[0, 0] * f0 + X[1, 0] * f1 + X[2, 0] * f2  # R f_lin and R f_ang (R = X[:3, :3]^T)
        gy = X[0, 1] * f0 + X[1, 1] * f1 + X[2, 1] * f2
        gz = X[0, 2] * f0 + X[1, 2] * f1 + X[2, 2] * f2
        hx = X[0, 0] * f3 + X[1, 0] * f4 + X[2, 0] * f5
        hy = X[0, 1] * f3 + X[1, 1] * f4 + X[2, 1] * f5
        hz = X[0, 2] * f3 + X[1, 2] * f4 + X[2, 2] * f5
        for a in range(3):
            for b in range(3):
                out[0, a, b] = out[0, 3 + a, 3 + b] = X[b, a]
                r0 = _times_skew(X, a, b, vx, vy, vz)  # R^T v^
                r1 = _times_skew(X, a, b, wx, wy, wz)  # R^T w^
                out[1, a, 3 + b], out[1, 3 + a, 3 + b] = r0, r1
                out[2, a, 3 + b] = _times_skew(X, a, b, px, py, pz)
                out[2, 3 + a, 3 + b] = _times_skew(X, a, b, ax, ay, az)
                out[3, a, b], out[3, a, 3 + b] = -r1, r0
                out[4, a, 3 + b] = -_skew(a, b, gx, gy, gz)
                out[4, 3 + a, 3 + b] = -_skew(a, b, hx, hy, hz)
        return
    _inverse_into(X, out, 0)  # X = [[A, B], [0, A]], A orthogonal
    for k in (1, 2):  # Y(y) = crm(u) X, u = X y = (v, w) in the base frame, crm(u) = [[w^, v^], [0, w^]]
        y = nu_b if k == 1 else y_b
        u0 = _comb(y[0], y[1], y[2], y[3], y[4], y[5], X.T, 0)
        u1 = _comb(y[0], y[1], y[2], y[3], y[4], y[5], X.T, 1)
        u2 = _comb(y[0], y[1], y[2], y[3], y[4], y[5], X.T, 2)
        u3 = X[3, 3] * y[3] + X[3, 4] * y[4] + X[3, 5] * y[5]
        u4 = X[4, 3] * y[3] + X[4, 4] * y[4] + X[4, 5] * y[5]
        u5 = X[5, 3] * y[3] + X[5, 4] * y[4] + X[5, 5] * y[5]
        for a in range(3):
            for b in range(6):
                acc0 = acc1 = 0.0
                for m in range(3):
                    acc0 += _skew(a, m, u3, u4, u5) * X[m, b] + _skew(a, m, u0, u1, u2) * X[3 + m, b]
                    acc1 += _skew(a, m, u3, u4, u5) * X[3 + m, b]
                out[k, a, b], out[k, 3 + a, b] = acc0, acc1
    for a in range(3):  # Z = X^T (K X), K X held in out[3] meanwhile (B_nu = 0 here)
        for b in range(6):
            acc0 = acc1 = 0.0
            for m in range(3):
                acc0 -= _skew(a, m, f0, f1, f2) * X[3 + m, b]
                acc1 -= _skew(a, m, f0, f1, f2) * X[m, b] + _skew(a, m, f3, f4, f5) * X[3 + m, b]
            out[3, a, b], out[3, 3 + a, b] = acc0, acc1
    for a in range(6):
        for b in range(6):
            acc = 0.0
            for m in range(6):
                acc += X[m, a] * out[3, m, b]
            out[4, a, b] = acc
    out[3] = 0.0


@njit(cache=True)
def _inverse_into(X: np.ndarray, out: np.ndarray, k: int) -> None:
    """``out[k] = X^-1`` (6, 6) of ``X = [[A, B], [0, A]]``, A orthogonal:
    ``[[A^T, -A^T B A^T], [0, A^T]]``."""
    for a in range(3):
        for b in range(3):
            out[k, a, b] = out[k, 3 + a, 3 + b] = X[b, a]
            out[k, 3 + a, b] = 0.0
            acc = 0.0
            for m in range(3):
                for q in range(3):
                    acc -= X[m, a] * X[m, 3 + q] * X[b, q]
            out[k, a, 3 + b] = acc


# ------------------------------------------------------------------------------------------------
# numba's dispatch costs about 50 ns per array argument (each is unboxed) and boxing a returned
# array about 250 ns, more than much of the work, and each array allocated in a kernel 50 to 100 ns:
# :func:`chain_rule` takes eight arguments, returns nothing and allocates one scratch array, whose
# layout is below. Its constants travel in one int array (:func:`constants`), X and the base
# velocity in one float array ``w`` read at offsets (so an engine may pass its own state buffer as
# it is):
#   ints = [forward (0: ID, 1: FD), mixed, identity order, offset of X (36, row major) in w,
#           offset of the base velocity in W (6) in w, offset of the engine's T_dot nu base part
#           (6) in w (-1: y is W's base acceleration itself), order (nv)]
_HEAD = 6
# the scratch: X (6, 6) | L (6, 6) | G (18, 18) | E (2, 6, 6) | the blocks (5, 6, 6) | W's base
# acceleration (6) | the base columns C^T (18, nvp) of every W row | the new ones (18, nvp)
_S_X, _S_L, _S_G, _S_E, _S_B, _S_Y, _S_C = 0, 36, 72, 396, 468, 648, 654


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
    """The per-state blocks of :func:`chain_rule` into ``scratch`` (the layout above): L (6, 6), G
    (18, 18), E (2, 6, 6) (ID: ``L = X^T``, ``G = [[X, 0, 0], [Y(nu), X, 0], [Y(y) + B_q, B_nu,
    X]]``, ``E = (Z(f), 0)``; FD: ``L = X^-1``, ``G = [[X, 0, 0], [Y(nu), X, 0], [-X^-T Z(f), 0,
    X^-T]]``, ``E = (-X^-1 (Y(y) + B_q), -X^-1 B_nu)``, the blocks of :func:`blocks`)."""
    forward, mixed = ints[0] != 0, ints[1] != 0
    ox, onu, obias = ints[3], ints[4], ints[5]
    X = scratch[_S_X : _S_X + 36].reshape(6, 6)
    for a in range(6):
        for b in range(6):
            X[a, b] = w[ox + 6 * a + b]
    nu_b = w[onu : onu + 6]
    B = scratch[_S_B : _S_B + 180].reshape(5, 6, 6)  # X^-1, Y(nu), Y(y) + B_q, B_nu, Z(f)
    yb = y[:6]
    if obias >= 0:  # W's base acceleration from the engine's: X^-1 (a_b - T_dot nu)
        yb = scratch[_S_Y : _S_Y + 6]
        _inverse_into(X, B, 0)
        Xi = B[0]
        for a in range(6):
            acc = 0.0
            for m in range(6):
                acc += Xi[a, m] * (y[m] - w[obias + m])
            yb[a] = acc
    _blocks_into(X, nu_b, yb, f, mixed, B)
    L = scratch[_S_L : _S_L + 36].reshape(6, 6)
    G = scratch[_S_G : _S_G + 324].reshape(18, 18)
    E = scratch[_S_E : _S_E + 72].reshape(2, 6, 6)
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
    nvp = (nv + 7) // 8 * 8  # (rows of C^T padded to whole SIMD vectors: no scalar remainder loop)
    scratch = np.empty(_S_C + 36 * nvp)
    _setup(ints, w, y, f, scratch)
    L = scratch[_S_L : _S_L + 36].reshape(6, 6)
    G = scratch[_S_G : _S_G + 324].reshape(18, 18)
    E = scratch[_S_E : _S_E + 72].reshape(2, 6, 6)
    Ct = scratch[_S_C : _S_C + 18 * nvp].reshape(18, nvp)  # the base columns of every W row
    Ot = scratch[_S_C + 18 * nvp :].reshape(18, nvp)  # and the new ones
    identity = ints[2] != 0
    order = ints[_HEAD:]
    for i in range(6):  # base rows: L times the engine's base rows (each entry summed in registers)
        l0, l1, l2, l3, l4, l5 = L[i, 0], L[i, 1], L[i, 2], L[i, 3], L[i, 4], L[i, 5]
        if identity:  # (a contiguous loop, vectorised)
            for j in range(nv):
                out[0, i, j] = _comb(l0, l1, l2, l3, l4, l5, A0, j)
                out[1, i, j] = _comb(l0, l1, l2, l3, l4, l5, A1, j)
                out[2, i, j] = _comb(l0, l1, l2, l3, l4, l5, A2, j)
        else:
            for j in range(nv):
                c = j if j < 6 else order[j]
                out[0, i, j] = _comb(l0, l1, l2, l3, l4, l5, A0, c)
                out[1, i, j] = _comb(l0, l1, l2, l3, l4, l5, A1, c)
                out[2, i, j] = _comb(l0, l1, l2, l3, l4, l5, A2, c)
    # joint rows, permuted (the three matrices row by row together: three interleaved streams
    # copied about twice as fast as one matrix after another, measured)
    for i in range(6, nv):
        t = i if identity else order[i]
        if identity:
            for j in range(nv):
                out[0, i, j] = A0[t, j]
                out[1, i, j] = A1[t, j]
                out[2, i, j] = A2[t, j]
        else:
            for j in range(nv):
                c = j if j < 6 else order[j]
                out[0, i, j] = A0[t, c]
                out[1, i, j] = A1[t, c]
                out[2, i, j] = A2[t, c]
    for i in range(nv):  # (the base columns as rows of C^T)
        for k in range(3):
            for b in range(6):
                Ct[6 * k + b, i] = out[k, i, b]
    for i in range(nv, nvp):
        for r in range(18):
            Ct[r, i] = 0.0
    # the new base columns, G^T C^T, one row of it over all rows at once (SIMD over rows; block k
    # of G's columns reads Ct's rows 6k: only, the others' blocks being zero)
    for b in range(6):
        for i in range(nvp):
            acc = 0.0
            for r in range(18):
                acc += G[r, b] * Ct[r, i]
            Ot[b, i] = acc
        for i in range(nvp):
            acc = 0.0
            for r in range(6, 18):
                acc += G[r, 6 + b] * Ct[r, i]
            Ot[6 + b, i] = acc
        for i in range(nvp):
            acc = 0.0
            for r in range(12, 18):
                acc += G[r, 12 + b] * Ct[r, i]
            Ot[12 + b, i] = acc
    for i in range(nv):
        for k in range(3):
            for b in range(6):
                out[k, i, b] = Ot[6 * k + b, i]
    for k in range(2):
        for i in range(6):
            for b in range(6):
                out[k, i, b] += E[k, i, b]


@njit(cache=True, fastmath=_FAST)
def _comb(l0: float, l1: float, l2: float, l3: float, l4: float, l5: float, A: np.ndarray, c: int) -> float:
    """``sum_m l_m A[m, c]`` over the six base rows of A."""
    return l0 * A[0, c] + l1 * A[1, c] + l2 * A[2, c] + l3 * A[3, c] + l4 * A[4, c] + l5 * A[5, c]


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
