"""Compiled kernels (numba) of the single-state chain rule of the dynamics derivatives.

:mod:`bridge.derivatives.single` turns a BODY-based engine's derivatives of one state, ``(D_q, D_v,
M)`` (inverse dynamics) or ``(A_q, A_v, M^-1)`` (forward dynamics), each (nv, nv), into the
derivatives in W (whose rate does not depend on the pose): base rows times ``L`` (``X^T`` or
``X^-1``), base columns times an (18, 18) block matrix G, a (6, 6) term on the base block, joints
permuted. In numpy that is about fifteen calls of half a microsecond each for a few thousand
flops; here it is one call of :func:`chain_rule`. The formulas are those of
:func:`bridge.derivatives.inverse_dynamics_derivatives_back` and
:func:`bridge.derivatives.forward_dynamics_derivatives_back` (docs/theory.md, "Derivatives of the
dynamics"); the numpy paths are the reference the tests compare these kernels with.

This module imports numba at its top and is imported only when numba is installed (the ``fast``
extra); nothing else in bridge needs it. Every kernel writes into a caller-made ``out`` and
allocates only its own scratch, so it is thread-safe. Compiled code is cached on disk (numba's
``cache=True``): the first call in a fresh environment compiles for a few seconds.

What differs between representations reaches the kernels as data: the nonzero entries of W's rate
table (:func:`bridge.derivatives.functional.rate_table`, derived once from W's declaration) in the
int constants, and the values of X; the zero entries of the blocks they make are skipped where
they are found, not where a representation's name says they are.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["blocks", "chain_rule", "constants", "copy_permuted"]

# FMA contraction only (no reassociation: the results stay those of the written order of
# operations up to the fused roundings, 1e-15 relative from the numpy path)
_FAST = {"contract"}
# the per-state blocks, K (_BLOCKS, 6, 6): X^-1, Y(nu), Y(y) + B_q, B_nu, Z(f) (:func:`blocks`),
# then X, L, E_0, E_1, W's base acceleration (first row; then u = X nu, a = X y), and scratch:
# K(u), K(a), S(u), Kt(f) and two products
_X, _L, _E, _YB, _KU, _KA, _SU, _KT, _T1, _T2, _BLOCKS = 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16


@njit(cache=True)
def blocks(X: np.ndarray, nu_b: np.ndarray, y_b: np.ndarray, f_b: np.ndarray, ints: np.ndarray) -> np.ndarray:
    """The (6, 6) blocks of the chain rule at one state, stacked (5, 6, 6): ``X^-1``, ``Y(nu_b)``,
    ``Y(y_b) + B_q``, ``B_nu``, ``Z(f_b)`` (:func:`bridge.derivatives.rate_matrix` and its
    siblings; ``X = B_X_W``, W's rate table in ``ints``, :func:`constants`): :func:`_blocks_into`
    into a fresh array."""
    K = np.empty((_BLOCKS, 6, 6))
    K[_X] = X
    _blocks_into(K, nu_b, 0, y_b, 0, f_b, ints)
    return K[:5]


@njit(cache=True)
def _blocks_into(K, v, ov: int, y, oy: int, f_b, ints) -> None:
    """The blocks of :func:`blocks` into ``K[0:5]`` for ``X = K[_X]`` (K: :data:`_BLOCKS` (6, 6)
    blocks), ``nu_b = v[ov:ov + 6]`` and ``y_b = y[oy:oy + 6]``, entry by entry (no allocation and
    no view: the chain rule calls it at every state, and a view or a reshape costs numba 10 to 35
    ns), from W's rate ``Omega(w) = sum_k U[:, :, k] w_k``, its nonzero entries ``(i, j, k, c)``
    in ``ints`` (:class:`bridge.derivatives.functional.RateTable`): with ``u = X nu``, ``a = X y``,
    ``K(z) w = Omega(w) z``, ``S(u) = Omega(u) + K(u)`` and ``Kt(g) w = Omega(w)^T g``,
    ``Y(nu) = -K(u) X``, ``Y(y) + B_q = (S(u) K(u) - K(a)) X``, ``B_nu = -S(u) X``,
    ``Z(f) = -X^T Kt(f) X``. The products skip the zero entries of their left factor (MIXED's and
    INERTIAL's blocks are half zero).
    """
    _zero(K, _KU, _T1)  # (K[0:5] are written whole below)
    for a in range(6):  # u = X nu, a = X y
        s0 = s1 = 0.0
        for m in range(6):
            s0 += K[_X, a, m] * v[ov + m]
            s1 += K[_X, a, m] * y[oy + m]
        K[_YB, 1, a], K[_YB, 2, a] = s0, s1
    for e in range(ints[5]):
        at = _HEAD + 4 * e
        i, j, k, c = ints[at], ints[at + 1], ints[at + 2], float(ints[at + 3])
        K[_KU, i, k] += c * K[_YB, 1, j]
        K[_KA, i, k] += c * K[_YB, 2, j]
        K[_SU, i, j] += c * K[_YB, 1, k]
        K[_SU, i, k] += c * K[_YB, 1, j]
        K[_KT, j, k] += c * f_b[i]
    _product(K, 1, _KU, _X, -1.0, False)
    _product(K, _T1, _SU, _KU, 1.0, False)
    for a in range(6):
        for b in range(6):
            K[_T1, a, b] -= K[_KA, a, b]
    _product(K, 2, _T1, _X, 1.0, False)
    _product(K, 3, _SU, _X, -1.0, False)
    _product(K, _T2, _KT, _X, 1.0, False)
    _product(K, 4, _X, _T2, -1.0, True)
    _inverse_into(K, 0)


@njit(cache=True, inline="always")
def _product(K: np.ndarray, d: int, a: int, b: int, scale: float, transpose: bool) -> None:
    """``K[d] = scale K[a] K[b]`` (``K[a]^T`` if ``transpose``), skipping the zero entries of the
    left factor."""
    for r in range(6):
        for c in range(6):
            K[d, r, c] = 0.0
        for m in range(6):
            x = K[a, m, r] if transpose else K[a, r, m]
            if x != 0.0:
                x *= scale
                for c in range(6):
                    K[d, r, c] += x * K[b, m, c]


@njit(cache=True)
def _zero(K: np.ndarray, k0: int, k1: int) -> None:
    """``K[k0:k1] = 0`` (entry by entry: a slice would cost a view)."""
    for k in range(k0, k1):
        for a in range(6):
            for b in range(6):
                K[k, a, b] = 0.0


@njit(cache=True)
def _inverse_into(K: np.ndarray, k: int) -> None:
    """``K[k] = X^-1`` (6, 6) of ``X = K[_X] = [[A, B], [0, C]]``, A and C orthogonal (``X = L^-1``
    of a linear-first declaration): ``[[A^T, -A^T B C^T], [0, C^T]]``."""
    for a in range(3):
        for b in range(3):
            K[k, a, b] = K[_X, b, a]
            K[k, 3 + a, 3 + b] = K[_X, 3 + b, 3 + a]
            K[k, 3 + a, b] = 0.0
            acc = 0.0
            for m in range(3):
                for q in range(3):
                    acc -= K[_X, m, a] * K[_X, m, 3 + q] * K[_X, 3 + b, 3 + q]
            K[k, a, 3 + b] = acc


# ------------------------------------------------------------------------------------------------
# numba's dispatch costs about 50 ns per array argument (each is unboxed) and boxing a returned
# array about 250 ns, more than much of the work, each array allocated in a kernel about 60 ns and
# each view or reshape of one 10 to 35 ns: :func:`chain_rule` takes eight arguments, returns
# nothing, allocates three scratch arrays and indexes them in place. Its constants travel in one
# int array (:func:`constants`), X and the base velocity in one float array ``w`` read at offsets
# (so an engine may pass its own state buffer as it is):
#   ints = [forward (0: ID, 1: FD), identity order, offset of X (36, row major) in w, offset of the
#           base velocity in W (6) in w, offset of the engine's T_dot nu base part (6) in w (-1: y
#           is W's base acceleration itself), m, sparse, then W's rate: m entries (i, j, k, c)
#           of U (:class:`bridge.derivatives.functional.RateTable`), then the order (nv)]
_HEAD = 7


def constants(
    forward: bool, rates: object, order: np.ndarray, x_at: int, nu_at: int, bias_at: int = -1
) -> np.ndarray:
    """The int constants of :func:`chain_rule` (see the comment above) for W's rate table ``rates``
    (a :class:`bridge.derivatives.functional.RateTable` whose entries are integers, as those of
    every declaration at the base or world origin; a false value: none, T the joint permutation)
    and the joint ``order`` (nv,) (the engine index of each W index, base first, unchanged).

    ``sparse`` (``ints[6]``), from the table: X is block diagonal (``rates.diagonal``), Omega does
    not depend on the linear velocity (K, Kt zero in their linear columns) and S vanishes in its
    angular rows; then G's columns are nonzero only on the spans :func:`chain_rule` sums over."""
    order = np.asarray(order, dtype=np.intp)
    identity = bool((order == np.arange(order.shape[0])).all())
    table = np.zeros((0, 4), dtype=np.intp)
    sparse = False
    if rates:
        U = rates.U
        S = U + U.transpose(0, 2, 1)
        sparse = bool(rates.diagonal and not U[:, :, :3].any() and not S[3:].any())
        coefs = np.asarray(rates.coefs, dtype=np.float64)
        if not np.array_equal(coefs, np.round(coefs)):
            raise ValueError("kernels.constants: a rate with non-integer entries (a centre of mass)")
        table = np.concatenate((rates.entries, coefs.astype(np.intp)[:, None]), axis=1)
    head = [int(forward), int(identity), x_at, nu_at, bias_at, table.shape[0], int(sparse)]
    head = np.array(head, dtype=np.intp)
    return np.concatenate([head, table.ravel(), order])


@njit(cache=True, inline="always")
def _order_at(ints: np.ndarray) -> int:
    """Where the order starts in ``ints``."""
    return _HEAD + 4 * ints[5]


@njit(cache=True)
def _setup(ints: np.ndarray, w: np.ndarray, y: np.ndarray, f: np.ndarray, K, G) -> None:
    """The per-state blocks of :func:`chain_rule`: L and E into ``K`` (the layout above), G (18,
    18) (ID: ``L = X^T``, ``G = [[X, 0, 0], [Y(nu), X, 0], [Y(y) + B_q, B_nu, X]]``, ``E = (Z(f),
    0)``; FD: ``L = X^-1``, ``G = [[X, 0, 0], [Y(nu), X, 0], [-X^-T Z(f), 0, X^-T]]``, ``E = (-X^-1
    (Y(y) + B_q), -X^-1 B_nu)``, the blocks of :func:`blocks`)."""
    forward = ints[0] != 0
    ox, onu, obias = ints[2], ints[3], ints[4]
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
    _blocks_into(K, w, onu, yb, oy, f, ints)  # K[0:5] = X^-1, Y(nu), Y(y) + B_q, B_nu, Z(f)
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
    identity = ints[1] != 0
    order = ints[_order_at(ints) :]
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
    # Ct's rows 6k: only; where W's declaration makes X block diagonal and Y(y), Z(f) zero in
    # their linear columns (ints[6], see constants; MIXED), fewer (117 products per row, not 216)
    if ints[6] != 0:  # the sparse structure of the declaration (see constants)
        for b in range(3):
            _column(G, Ct, Ot, b, 0, 3)
            _column(G, Ct, Ot, 3 + b, 3, 15)
            _column(G, Ct, Ot, 6 + b, 6, 9)
            _column(G, Ct, Ot, 9 + b, 9, 6)
            _column(G, Ct, Ot, 12 + b, 12, 3)
            _column(G, Ct, Ot, 15 + b, 15, 3)
    else:  # G is block lower triangular
        for b in range(6):
            _column(G, Ct, Ot, b, 0, 18)
            _column(G, Ct, Ot, 6 + b, 6, 12)
            _column(G, Ct, Ot, 12 + b, 12, 6)
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
def _column(G: np.ndarray, Ct: np.ndarray, Ot: np.ndarray, c: int, r0: int, length: int) -> None:
    """``Ot[c] = G[r0:r0 + length, c] @ Ct[r0:r0 + length]`` (inlined with a constant ``length``:
    the sum unrolled, SIMD over Ct's columns)."""
    for i in range(Ct.shape[1]):
        acc = 0.0
        for r in range(length):
            acc += G[r0 + r, c] * Ct[r0 + r, i]
        Ot[c, i] = acc


@njit(cache=True, fastmath=_FAST)
def _comb(l0: float, l1: float, l2: float, l3: float, l4: float, l5: float, A: np.ndarray, c: int) -> float:
    """``sum_m l_m A[m, c]`` over the six base rows of A."""
    return l0 * A[0, c] + l1 * A[1, c] + l2 * A[2, c] + l3 * A[3, c] + l4 * A[4, c] + l5 * A[5, c]


@njit(cache=True)
def copy_permuted(ints: np.ndarray, A0: np.ndarray, A1: np.ndarray, A2: np.ndarray, out: np.ndarray) -> None:
    """``out[k] = P^T A_k P`` (3, nv, nv) (rows and columns to W's order; ``ints`` of
    :func:`constants`, only the order read): the chain rule where T is the joint permutation."""
    _permuted_rows(A0, A1, A2, ints[_order_at(ints) :], ints[1] != 0, 0, out)


@njit(cache=True, inline="always")
def _permuted_rows(
    A0: np.ndarray,
    A1: np.ndarray,
    A2: np.ndarray,
    order: np.ndarray,
    identity: bool,
    start: int,
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
