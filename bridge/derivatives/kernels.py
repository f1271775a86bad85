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
``cache=True``): the first call in a fresh environment compiles for a few seconds. The
cross-product entries are :func:`bridge.conventions.single_kernels.skew_entry`, inlined: numba's
cache does not see an edit there, so clear this package's ``__pycache__/*.nbi``/``*.nbc`` after one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bridge.conventions.single_kernels import skew_entry

__all__ = ["blocks", "chain_rule", "constants", "copy_permuted"]

# FMA contraction only (no reassociation: the results stay those of the written order of
# operations up to the fused roundings, 1e-15 relative from the numpy path)
_FAST = {"contract"}
# the per-state blocks, K (_BLOCKS, 6, 6): X^-1, Y(nu), Y(y) + B_q, B_nu, Z(f) (:func:`blocks`),
# then X, L, E_0, E_1 and W's base acceleration (in the first row of the last)
_X, _L, _E, _YB, _BLOCKS = 5, 6, 7, 9, 10


@njit(cache=True)
def _times_skew(K: np.ndarray, a: int, b: int, x: float, y: float, z: float) -> float:
    """Entry ``(a, b)`` of ``X[:3, :3] [x, y, z]^`` (``X = K[_X]``)."""
    if b == 0:
        return K[_X, a, 1] * z - K[_X, a, 2] * y
    if b == 1:
        return K[_X, a, 2] * x - K[_X, a, 0] * z
    return K[_X, a, 0] * y - K[_X, a, 1] * x


@njit(cache=True)
def blocks(X: np.ndarray, nu_b: np.ndarray, y_b: np.ndarray, f_b: np.ndarray, mixed: bool) -> np.ndarray:
    """The (6, 6) blocks of the chain rule at one state, stacked (5, 6, 6): ``X^-1``, ``Y(nu_b)``,
    ``Y(y_b) + B_q``, ``B_nu``, ``Z(f_b)`` (:func:`bridge.derivatives.rate_matrix` and its
    siblings; W = MIXED if ``mixed`` else INERTIAL, ``X = B_X_W``): :func:`_blocks_into` into a
    fresh array."""
    K = np.empty((_BLOCKS, 6, 6))
    K[_X] = X
    _blocks_into(K, nu_b, 0, y_b, 0, f_b, mixed)
    return K[:5]


@njit(cache=True)
def _blocks_into(K, v, ov: int, y, oy: int, f_b, mixed: bool) -> None:
    """The blocks of :func:`blocks` into ``K[0:5]`` for ``X = K[_X]`` (K: :data:`_BLOCKS` (6, 6)
    blocks), ``nu_b = v[ov:ov + 6]`` and ``y_b = y[oy:oy + 6]``, entry by entry (no allocation and
    no view: the chain rule calls it at every state, and a view or a reshape costs numba 10 to 35
    ns).

    MIXED (``X = blkdiag(R^T, R^T)``): ``X^-1 = X^T``, ``Y(y) = [[0, R^T y_lin^], [0, R^T y_ang^]]``,
    ``B_q = [[0, -R^T (w x v)^], [0, 0]]``, ``B_nu = [[-R^T w^, R^T v^], [0, 0]]``,
    ``Z(f) = [[0, -(R f_lin)^], [0, -(R f_ang)^]]``. INERTIAL: ``X^-1`` of the motion transform,
    ``Y(y) = crm(X y) X``, ``B_q = B_nu = 0``, ``Z(f) = X^T K(f) X`` with
    ``K(f) = [[0, -f_lin^], [-f_lin^, -f_ang^]]``.
    """
    _zero(K, 0, 5)
    f0, f1, f2, f3, f4, f5 = f_b[0], f_b[1], f_b[2], f_b[3], f_b[4], f_b[5]
    if mixed:
        vx, vy, vz, wx, wy, wz = v[ov], v[ov + 1], v[ov + 2], v[ov + 3], v[ov + 4], v[ov + 5]
        px = y[oy] - wy * vz + wz * vy
        py = y[oy + 1] - wz * vx + wx * vz
        pz = y[oy + 2] - wx * vy + wy * vx
        ax, ay, az = y[oy + 3], y[oy + 4], y[oy + 5]
        # R f_lin and R f_ang (R = X[:3, :3]^T)
        gx = K[_X, 0, 0] * f0 + K[_X, 1, 0] * f1 + K[_X, 2, 0] * f2
        gy = K[_X, 0, 1] * f0 + K[_X, 1, 1] * f1 + K[_X, 2, 1] * f2
        gz = K[_X, 0, 2] * f0 + K[_X, 1, 2] * f1 + K[_X, 2, 2] * f2
        hx = K[_X, 0, 0] * f3 + K[_X, 1, 0] * f4 + K[_X, 2, 0] * f5
        hy = K[_X, 0, 1] * f3 + K[_X, 1, 1] * f4 + K[_X, 2, 1] * f5
        hz = K[_X, 0, 2] * f3 + K[_X, 1, 2] * f4 + K[_X, 2, 2] * f5
        for a in range(3):
            for b in range(3):
                K[0, a, b] = K[0, 3 + a, 3 + b] = K[_X, b, a]
                r0 = _times_skew(K, a, b, vx, vy, vz)  # R^T v^
                r1 = _times_skew(K, a, b, wx, wy, wz)  # R^T w^
                K[1, a, 3 + b], K[1, 3 + a, 3 + b] = r0, r1
                K[2, a, 3 + b] = _times_skew(K, a, b, px, py, pz)
                K[2, 3 + a, 3 + b] = _times_skew(K, a, b, ax, ay, az)
                K[3, a, b], K[3, a, 3 + b] = -r1, r0
                K[4, a, 3 + b] = -skew_entry(gx, gy, gz, a, b)
                K[4, 3 + a, 3 + b] = -skew_entry(hx, hy, hz, a, b)
        return
    _inverse_into(K, 0)  # X = [[A, B], [0, A]], A orthogonal
    for k in (1, 2):  # Y(y) = crm(u) X, u = X y = (v, w) in the base frame, crm(u) = [[w^, v^], [0, w^]]
        u0, u1, u2, u3, u4, u5 = _x_times(K, v, ov) if k == 1 else _x_times(K, y, oy)
        for a in range(3):
            for b in range(6):
                acc0 = acc1 = 0.0
                for m in range(3):
                    w_am, v_am = skew_entry(u3, u4, u5, a, m), skew_entry(u0, u1, u2, a, m)
                    acc0 += w_am * K[_X, m, b] + v_am * K[_X, 3 + m, b]
                    acc1 += w_am * K[_X, 3 + m, b]
                K[k, a, b], K[k, 3 + a, b] = acc0, acc1
    for a in range(3):  # Z = X^T (K X), K X held in K[3] meanwhile (B_nu = 0 here)
        for b in range(6):
            acc0 = acc1 = 0.0
            for m in range(3):
                f_am, n_am = skew_entry(f0, f1, f2, a, m), skew_entry(f3, f4, f5, a, m)
                acc0 -= f_am * K[_X, 3 + m, b]
                acc1 -= f_am * K[_X, m, b] + n_am * K[_X, 3 + m, b]
            K[3, a, b], K[3, 3 + a, b] = acc0, acc1
    for a in range(6):
        for b in range(6):
            acc = 0.0
            for m in range(6):
                acc += K[_X, m, a] * K[3, m, b]
            K[4, a, b] = acc
    _zero(K, 3, 4)


@njit(cache=True)
def _x_times(K: np.ndarray, y: np.ndarray, o: int) -> tuple[float, float, float, float, float, float]:
    """``X y[o:o + 6]`` (``X = K[_X] = [[A, B], [0, A]]``)."""
    return (
        _x_row(K, 0, 0, y, o),
        _x_row(K, 1, 0, y, o),
        _x_row(K, 2, 0, y, o),
        _x_row(K, 3, 3, y, o),
        _x_row(K, 4, 3, y, o),
        _x_row(K, 5, 3, y, o),
    )


@njit(cache=True)
def _x_row(K: np.ndarray, r: int, m0: int, y: np.ndarray, o: int) -> float:
    """``X[r, m0:] @ y[o + m0:o + 6]`` (``X = K[_X]``)."""
    acc = 0.0
    for m in range(m0, 6):
        acc += K[_X, r, m] * y[o + m]
    return acc


@njit(cache=True)
def _zero(K: np.ndarray, k0: int, k1: int) -> None:
    """``K[k0:k1] = 0`` (entry by entry: a slice would cost a view)."""
    for k in range(k0, k1):
        for a in range(6):
            for b in range(6):
                K[k, a, b] = 0.0


@njit(cache=True)
def _inverse_into(K: np.ndarray, k: int) -> None:
    """``K[k] = X^-1`` (6, 6) of ``X = K[_X] = [[A, B], [0, A]]``, A orthogonal:
    ``[[A^T, -A^T B A^T], [0, A^T]]``."""
    for a in range(3):
        for b in range(3):
            K[k, a, b] = K[k, 3 + a, 3 + b] = K[_X, b, a]
            K[k, 3 + a, b] = 0.0
            acc = 0.0
            for m in range(3):
                for q in range(3):
                    acc -= K[_X, m, a] * K[_X, m, 3 + q] * K[_X, b, q]
            K[k, a, 3 + b] = acc


# ------------------------------------------------------------------------------------------------
# numba's dispatch costs about 50 ns per array argument (each is unboxed) and boxing a returned
# array about 250 ns, more than much of the work, each array allocated in a kernel about 60 ns and
# each view or reshape of one 10 to 35 ns: :func:`chain_rule` takes eight arguments, returns
# nothing, allocates three scratch arrays and indexes them in place. Its constants travel in one
# int array (:func:`constants`), X and the base velocity in one float array ``w`` read at offsets
# (so an engine may pass its own state buffer as it is):
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
def _setup(ints: np.ndarray, w: np.ndarray, y: np.ndarray, f: np.ndarray, K, G) -> None:
    """The per-state blocks of :func:`chain_rule`: L and E into ``K`` (the layout above), G (18,
    18) (ID: ``L = X^T``, ``G = [[X, 0, 0], [Y(nu), X, 0], [Y(y) + B_q, B_nu, X]]``, ``E = (Z(f),
    0)``; FD: ``L = X^-1``, ``G = [[X, 0, 0], [Y(nu), X, 0], [-X^-T Z(f), 0, X^-T]]``, ``E = (-X^-1
    (Y(y) + B_q), -X^-1 B_nu)``, the blocks of :func:`blocks`)."""
    forward, mixed = ints[0] != 0, ints[1] != 0
    ox, onu, obias = ints[3], ints[4], ints[5]
    for a in range(6):
        for b in range(6):
            K[_X, a, b] = w[ox + 6 * a + b]
    yb, oy = y, 0
    if obias >= 0:  # W's base acceleration from the engine's: X^-1 (a_b - T_dot nu)
        _inverse_into(K, 0)
        for a in range(6):
            acc = 0.0
            for m in range(6):
                acc += K[0, a, m] * (y[m] - w[obias + m])
            K[_YB, 0, a] = acc
        yb = K[_YB, 0]
    _blocks_into(K, w, onu, yb, oy, f, mixed)  # K[0:5] = X^-1, Y(nu), Y(y) + B_q, B_nu, Z(f)
    for a in range(18):
        for b in range(18):
            G[a, b] = 0.0
    _zero(K, _E, _E + 2)
    for a in range(6):
        for b in range(6):
            G[a, b] = G[6 + a, 6 + b] = K[_X, a, b]
            G[6 + a, b] = K[1, a, b]
            if forward:
                K[_L, a, b] = K[0, a, b]
                G[12 + a, 12 + b] = K[0, b, a]
            else:
                K[_L, a, b] = K[_X, b, a]
                G[12 + a, 12 + b] = K[_X, a, b]
                G[12 + a, b] = K[2, a, b]
                G[12 + a, 6 + b] = K[3, a, b]
                K[_E, a, b] = K[4, a, b]
    if forward:
        for a in range(6):
            for b in range(6):
                s0 = s1 = s2 = 0.0
                for m in range(6):
                    s0 += K[0, m, a] * K[4, m, b]
                    s1 += K[0, a, m] * K[2, m, b]
                    s2 += K[0, a, m] * K[3, m, b]
                G[12 + a, b] = -s0
                K[_E, a, b] = -s1
                K[_E + 1, a, b] = -s2


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
    K = np.empty((_BLOCKS, 6, 6))
    G = np.empty((18, 18))
    _setup(ints, w, y, f, K, G)
    CO = np.empty((36, nvp))
    Ct, Ot = CO[:18], CO[18:]  # the base columns of every W row (C^T), and the new ones
    identity = ints[2] != 0
    order = ints[_HEAD:]
    # base rows: L times the engine's base rows (each entry summed in registers); a row block of L
    # whose other half is zero (X^T or X^-1 block triangular, MIXED block diagonal) reads three rows
    upper = _zero_block(K, _L, 0, 3)
    lower = _zero_block(K, _L, 3, 0)
    for i in range(6):
        l0, l1, l2, l3, l4, l5 = K[_L, i, 0], K[_L, i, 1], K[_L, i, 2], K[_L, i, 3], K[_L, i, 4], K[_L, i, 5]
        if identity and (upper if i < 3 else lower):  # (contiguous loops, vectorised)
            m = 0 if i < 3 else 3
            la, lb, lc = (l0, l1, l2) if i < 3 else (l3, l4, l5)
            for j in range(nv):
                out[0, i, j] = la * A0[m, j] + lb * A0[m + 1, j] + lc * A0[m + 2, j]
                out[1, i, j] = la * A1[m, j] + lb * A1[m + 1, j] + lc * A1[m + 2, j]
                out[2, i, j] = la * A2[m, j] + lb * A2[m + 1, j] + lc * A2[m + 2, j]
        elif identity:
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
    _permuted_rows(A0, A1, A2, order, identity, 6, out)  # the joint rows
    for i in range(nv):  # (the base columns as rows of C^T)
        for k in range(3):
            for b in range(6):
                Ct[6 * k + b, i] = out[k, i, b]
    for i in range(nv, nvp):
        for r in range(18):
            Ct[r, i] = 0.0
    # the new base columns, G^T C^T, one row of it over all rows at once (SIMD over rows), each
    # from the rows of Ct that G's column has nonzero entries in: block k of G's columns reads
    # Ct's rows 6k: only; in MIXED, where X is block diagonal and Y(y), Z(f) have zero linear
    # columns, fewer (117 products per row instead of 216)
    if ints[1] != 0:
        for b in range(3):
            _column(G, Ct, Ot, b, 0, 3)
            _column(G, Ct, Ot, 3 + b, 3, 18)
            _column(G, Ct, Ot, 6 + b, 6, 15)
            _column(G, Ct, Ot, 9 + b, 9, 15)
            _column(G, Ct, Ot, 12 + b, 12, 15)
            _column(G, Ct, Ot, 15 + b, 15, 18)
    else:
        for b in range(6):
            _column(G, Ct, Ot, b, 0, 18)
            _column(G, Ct, Ot, 6 + b, 6, 18)
            _column(G, Ct, Ot, 12 + b, 12, 18)
    for i in range(nv):
        for k in range(3):
            for b in range(6):
                out[k, i, b] = Ot[6 * k + b, i]
    for k in range(2):
        for i in range(6):
            for b in range(6):
                out[k, i, b] += K[_E + k, i, b]


@njit(cache=True)
def _zero_block(K: np.ndarray, k: int, r0: int, c0: int) -> bool:
    """Whether ``K[k, r0:r0 + 3, c0:c0 + 3]`` is zero."""
    for a in range(3):
        for b in range(3):
            if K[k, r0 + a, c0 + b] != 0.0:
                return False
    return True


@njit(cache=True, fastmath=_FAST, inline="always")
def _column(G: np.ndarray, Ct: np.ndarray, Ot: np.ndarray, c: int, r0: int, r1: int) -> None:
    """``Ot[c] = G[r0:r1, c] @ Ct[r0:r1]`` (inlined with constant bounds: the sum unrolled, SIMD
    over Ct's columns)."""
    for i in range(Ct.shape[1]):
        acc = 0.0
        for r in range(r0, r1):
            acc += G[r, c] * Ct[r, i]
        Ot[c, i] = acc


@njit(cache=True, fastmath=_FAST)
def _comb(l0: float, l1: float, l2: float, l3: float, l4: float, l5: float, A: np.ndarray, c: int) -> float:
    """``sum_m l_m A[m, c]`` over the six base rows of A."""
    return l0 * A[0, c] + l1 * A[1, c] + l2 * A[2, c] + l3 * A[3, c] + l4 * A[4, c] + l5 * A[5, c]


@njit(cache=True)
def copy_permuted(ints: np.ndarray, A0: np.ndarray, A1: np.ndarray, A2: np.ndarray, out: np.ndarray) -> None:
    """``out[k] = P^T A_k P`` (3, nv, nv) (rows and columns to W's order; ``ints`` of
    :func:`constants`, only the order read): the chain rule where T is the joint permutation."""
    _permuted_rows(A0, A1, A2, ints[_HEAD:], ints[2] != 0, 0, out)


@njit(cache=True, inline="always")
def _permuted_rows(
    A0: np.ndarray, A1: np.ndarray, A2: np.ndarray, order: np.ndarray, identity: bool, start: int,
    out: np.ndarray,
) -> None:
    """``out[k, i] = A_k[order[i], order]`` for the rows ``i >= start`` (``order`` (nv,) the joint
    order on the whole velocity, the base's six entries its own; ``identity``: it is the
    identity). The three matrices row by row together: three interleaved streams copy about twice
    as fast as one matrix after another (measured)."""
    nv = A0.shape[0]
    for i in range(start, nv):
        if identity:
            for j in range(nv):
                out[0, i, j] = A0[i, j]
                out[1, i, j] = A1[i, j]
                out[2, i, j] = A2[i, j]
        else:
            t = order[i]
            for j in range(nv):
                c = order[j]
                out[0, i, j] = A0[t, c]
                out[1, i, j] = A1[t, c]
                out[2, i, j] = A2[t, c]
