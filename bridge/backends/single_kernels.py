"""Compiled kernels (numba) of the base block of a single state's ``T = blkdiag(X, 1)``.

Every library engine's single-state path takes a library's results back to the representation
with the base block ``X`` (6, 6) of ``T``: its mass matrix ``T^T M T`` (:func:`base_congruence`,
:func:`congruence_rows`), a Jacobian's base columns ``J T`` (:func:`base_columns`) and a
generalized force's base rows ``T^T tau`` (:func:`base_force`, :func:`base_rows`). In numpy each
is several calls of half a microsecond each for a few hundred flops; here it is one compiled call.
:class:`bridge.backends.single.SingleMatrixBack` (MuJoCo, Drake) calls them with the ``X`` of
:class:`~bridge.conventions.single_state.SingleStateChange`, the state kernels below (every library
engine's compiled single state, :class:`bridge.backends.single.CompiledSingle`) with the ``X`` that
:func:`set_state` evaluates into the state array (the joints permuted there too; the Pinocchio
engine's fused derivative paths read that array too, at the offsets of :func:`layout`); the numpy
paths are the reference the tests compare them with.

Imported only when numba is installed (:func:`bridge.derivatives.select.compiled_kernels` says
so); compiled code is cached on disk (``cache=True``). Each kernel is inlined into its callers
(``inline="always"``: a call between numba functions of two modules costs ~0.1 us, as much as the
corner's products); numba's cache of a caller in another module does not see a change here: clear
its ``__pycache__/*.nbi``/``*.nbc`` files after editing.
"""

from __future__ import annotations

import numpy as np
from numba import boolean, float64, njit, types, void

from bridge._numba import kernel
from bridge.conventions.single_kernels import EXTRA, PERM, SIZE, WORK, WORK_AT, N, change_base, change_matrix
from bridge.conventions.state import MODERATE_SQ, pose_entries_valid
from bridge.spatial.so3 import quaternion_xyzw_of_entries

__all__ = [
    "acceleration",
    "acceleration_back",
    "base_columns",
    "base_congruence",
    "base_force",
    "base_rows",
    "columns_back",
    "columns_back_permuted",
    "columns_flat",
    "congruence_flat",
    "congruence_rows",
    "force",
    "force_flat",
    "frame_columns_back",
    "joint_forces",
    "layout",
    "matrix_back",
    "matrix_back_permuted",
    "set_state",
    "set_state_into",
    "vector_back",
    "vector_back_permuted",
]

# the single-state checks and quaternion of bridge's Python paths, compiled as they are
_pose_valid = njit(cache=True)(pose_entries_valid)
_quaternion = njit(cache=True)(quaternion_xyzw_of_entries)

# The kernels called from Python have explicit signatures (contiguous float64 arrays): numba's
# dispatch of a function compiled for given types is about half that of one typed on first call
# (0.24 against 0.49 us for five arrays, measured), and it raises TypeError for anything else (a
# list, an int array, a strided view, a batch) instead of compiling a new version: the callers
# take their numpy path then. A user's arrays may be read-only (a Transform's matrix, a State's
# vectors): each such argument has both versions (four signatures cost ~0.3 us). Each is compiled,
# or loaded from numba's disk cache, at its first use (bridge._numba.kernel): a process loads the
# kernels its engine's path calls, not the whole module.
_V, _M = float64[::1], float64[:, ::1]
_RV, _RM = types.Array(float64, 1, "C", readonly=True), types.Array(float64, 2, "C", readonly=True)
_SET_STATE = [boolean(h, v, v, v, _V) for h in (_M, _RM) for v in (_V, _RV)]
_ACCELERATION = [boolean(_V, v, v, _V) for v in (_V, _RV)]


@njit(cache=True, inline="always")
def congruence_rows(M: np.ndarray, X: np.ndarray, G: np.ndarray, C: np.ndarray) -> None:
    """``G[:, :nv] = X^T M[:6]`` (6, nv) and ``C = X^T M[:6, :6] X`` (6, 6) of a symmetric ``M``
    (nv, nv), its upper triangle read (``M`` itself not written); ``X`` (6, 6), its zeros skipped
    (half of a block-diagonal ``X``)."""
    nv = M.shape[0]
    for r in range(6):
        first = True  # (the first term is written, the others added: no pass to zero G)
        for k in range(6):
            x = X[k, r]
            if x == 0.0:
                continue
            if first:
                for j in range(6):
                    G[r, j] = x * (M[k, j] if k <= j else M[j, k])
                for j in range(6, nv):
                    G[r, j] = x * M[k, j]
                first = False
            else:
                for j in range(6):
                    G[r, j] += x * (M[k, j] if k <= j else M[j, k])
                for j in range(6, nv):
                    G[r, j] += x * M[k, j]
        if first:  # a zero column of X
            for j in range(nv):
                G[r, j] = 0.0
    for r in range(6):
        for j in range(6):
            C[r, j] = (
                G[r, 0] * X[0, j]
                + G[r, 1] * X[1, j]
                + G[r, 2] * X[2, j]
                + G[r, 3] * X[3, j]
                + (G[r, 4] * X[4, j] + G[r, 5] * X[5, j])
            )


@njit(cache=True, inline="always")
def _dot6(x: tuple, m: tuple, part: int) -> float:
    """``x . m`` of two 6-tuples: all six terms (``part`` 0), the first three alone (1) or the last
    three alone (2), for an ``x`` whose other three entries are exact zeros (the kept terms sum to
    the same number)."""
    if part == 1:
        return x[0] * m[0] + x[1] * m[1] + x[2] * m[2]
    if part == 2:
        return x[3] * m[3] + x[4] * m[4] + x[5] * m[5]
    return x[0] * m[0] + x[1] * m[1] + x[2] * m[2] + x[3] * m[3] + (x[4] * m[4] + x[5] * m[5])


@njit(cache=True, inline="always")
def _column(x: np.ndarray, xo: int, j: int) -> tuple:
    """Column j of the row-major (6, 6) matrix ``x[xo : xo + 36]``, as a 6-tuple."""
    o = xo + j
    return (x[o], x[o + 6], x[o + 12], x[o + 18], x[o + 24], x[o + 30])


@njit(cache=True, inline="always")
def _row(x: np.ndarray, xo: int, i: int) -> tuple:
    """Row i of the row-major (6, 6) matrix ``x[xo : xo + 36]``, as a 6-tuple."""
    o = xo + 6 * i
    return (x[o], x[o + 1], x[o + 2], x[o + 3], x[o + 4], x[o + 5])


@njit(cache=True, inline="always")
def _zeros(t: tuple, first: int) -> bool:
    """Whether ``t[first : first + 3]`` are exact zeros."""
    return t[first] == 0.0 and t[first + 1] == 0.0 and t[first + 2] == 0.0


@njit(cache=True, inline="always")
def congruence_flat(M: np.ndarray, x: np.ndarray, xo: int, c: np.ndarray, co: int) -> None:
    """:func:`base_congruence` with ``X`` row major in ``x[xo : xo + 36]`` and the (6, 6) scratch in
    ``c[co : co + 36]``: flat indices, no reshaped views (two of them cost half as much as the
    products of a block-diagonal X)."""
    nv = M.shape[0]
    # X's columns as locals (tuples): LLVM cannot tell that writing M leaves X alone, and would
    # read X again for every column
    x0, x1, x2 = _column(x, xo, 0), _column(x, xo, 1), _column(x, xo, 2)
    x3, x4, x5 = _column(x, xo, 3), _column(x, xo, 4), _column(x, xo, 5)
    # X's off-diagonal 3x3 blocks that are exactly zero (from the declarations' index maps: the
    # MIXED and INERTIAL changes, among others): their products are skipped, half of a
    # block-diagonal X's. X[3:, :3] zero: rows 0..2 of X^T M read m0..m2 only; X[:3, 3:] zero: rows
    # 3..5 read m3..m5 only
    low = 1 if _zeros(x0, 3) and _zeros(x1, 3) and _zeros(x2, 3) else 0
    up = 2 if _zeros(x3, 0) and _zeros(x4, 0) and _zeros(x5, 0) else 0
    for j in range(6, nv):  # the base rows of joint column j, X^T M[:6, j], mirrored into row j
        m = (M[0, j], M[1, j], M[2, j], M[3, j], M[4, j], M[5, j])
        g0, g1, g2 = _dot6(x0, m, low), _dot6(x1, m, low), _dot6(x2, m, low)
        g3, g4, g5 = _dot6(x3, m, up), _dot6(x4, m, up), _dot6(x5, m, up)
        M[0, j], M[1, j], M[2, j], M[3, j], M[4, j], M[5, j] = g0, g1, g2, g3, g4, g5
        M[j, 0], M[j, 1], M[j, 2], M[j, 3], M[j, 4], M[j, 5] = g0, g1, g2, g3, g4, g5
    for i in range(1, 6):  # the corner: mirrored, then C = S X and X^T C
        for k in range(i):
            M[i, k] = M[k, i]
    for i in range(6):
        m = (M[i, 0], M[i, 1], M[i, 2], M[i, 3], M[i, 4], M[i, 5])
        r = co + 6 * i
        c[r], c[r + 1], c[r + 2] = _dot6(x0, m, 0), _dot6(x1, m, 0), _dot6(x2, m, 0)
        c[r + 3], c[r + 4], c[r + 5] = _dot6(x3, m, 0), _dot6(x4, m, 0), _dot6(x5, m, 0)
    for k in range(6):
        m = (c[co + k], c[co + 6 + k], c[co + 12 + k], c[co + 18 + k], c[co + 24 + k], c[co + 30 + k])
        M[0, k], M[1, k], M[2, k] = _dot6(x0, m, 0), _dot6(x1, m, 0), _dot6(x2, m, 0)
        M[3, k], M[4, k], M[5, k] = _dot6(x3, m, 0), _dot6(x4, m, 0), _dot6(x5, m, 0)


@njit(cache=True, inline="always")
def base_congruence(M: np.ndarray, X: np.ndarray, C: np.ndarray) -> None:
    """In place, ``M`` (nv, nv) symmetric (upper triangle read) -> ``T^T M T`` (full) for ``T =
    blkdiag(X, 1)``, ``X`` (6, 6); ``C`` (6, 6) scratch, C-contiguous: :func:`congruence_flat`."""
    congruence_flat(M, np.ascontiguousarray(X).reshape(36), 0, C.reshape(36), 0)


@njit(cache=True, inline="always")
def columns_flat(J: np.ndarray, x: np.ndarray, xo: int, out: np.ndarray) -> None:
    """``out[:, :6] = J[:, :6] X`` for ``J`` (m, nv), ``X`` row major in ``x[xo : xo + 36]`` (``out``
    may be ``J``: ``J T`` in place for ``T = blkdiag(X, 1)``)."""
    for i in range(J.shape[0]):
        j0, j1, j2, j3, j4, j5 = J[i, 0], J[i, 1], J[i, 2], J[i, 3], J[i, 4], J[i, 5]
        for c in range(6):
            a = xo + c
            out[i, c] = (
                j0 * x[a] + j1 * x[a + 6] + j2 * x[a + 12] + j3 * x[a + 18] + j4 * x[a + 24] + j5 * x[a + 30]
            )


@njit(cache=True, inline="always")
def force_flat(v: np.ndarray, x: np.ndarray, xo: int, out: np.ndarray) -> None:
    """``out[:6] = X^T v[:6]`` for ``v`` (nv,), ``X`` row major in ``x[xo : xo + 36]`` (``out`` may be
    ``v``)."""
    h0, h1, h2, h3, h4, h5 = v[0], v[1], v[2], v[3], v[4], v[5]
    for r in range(6):
        a = xo + r
        out[r] = x[a] * h0 + x[a + 6] * h1 + x[a + 12] * h2 + x[a + 18] * h3 + x[a + 24] * h4 + x[a + 30] * h5


@njit(cache=True, inline="always")
def base_columns(J: np.ndarray, X: np.ndarray, out: np.ndarray) -> None:
    """``out[:, :6] = J[:, :6] X`` for ``J`` (m, nv), ``X`` (6, 6) (``out`` may be ``J``):
    :func:`columns_flat`."""
    columns_flat(J, np.ascontiguousarray(X).reshape(36), 0, out)


@njit(cache=True, inline="always")
def base_force(x: np.ndarray, X: np.ndarray, out: np.ndarray) -> None:
    """``out[:6] = X^T x[:6]`` for ``x`` (nv,), ``X`` (6, 6) (``out`` may be ``x``): :func:`force_flat`."""
    force_flat(x, np.ascontiguousarray(X).reshape(36), 0, out)


@njit(cache=True, inline="always")
def base_rows(tau: np.ndarray, X: np.ndarray, out: np.ndarray) -> None:
    """``out = T^T tau`` (nv,) for ``T = blkdiag(X, 1)``, ``X`` (6, 6) (``tau`` read only)."""
    out[6:] = tau[6:]
    base_force(tau, X, out)


# ---------------------------------------------------------------------------- one state
# A library engine's single state (floating base, one-coordinate joints: nq = 7 + n, nv = 6 + n) is
# one float array, headed by the change's constants c (bridge.conventions.single_kernels, with the
# configuration's layout as their extra: [position offset, quaternion offset, wxyz, q index (n)]):
#   state = [c | q (nq) | v (nv) | base velocity (6) | H (16) | work (114) | 0 (n)]
# work = [X | X^-1 | scratch | T_dot nu (6)], so that with the n zeros after it the last nv entries
# are the library's acceleration of zero source acceleration (the bias forces' argument). Every
# kernel takes few arrays and returns no array: numba's dispatch costs ~90 ns per array argument
# and boxing a returned array ~230 ns, more than most of the work.


#: the slots of the engines' extra constants (after the change's skew terms, ``c[EXTRA]``): where
#: the configuration puts the base position and the quaternion, whether the quaternion is (w, x, y,
#: z), then where each joint of the model's order is in q (n)
POSITION_AT, QUATERNION_AT, WXYZ, Q_INDEX = 0, 1, 2, 3


def layout(size: int, n: int) -> dict[str, slice]:
    """The parts of a state array whose constants take ``size`` entries, of a model with n joint
    DOFs (see the comment above)."""
    nq, nv = 7 + n, 6 + n
    q, v = size, size + nq
    vb, H = v + nv, v + nv + 6
    w = H + 16
    return {
        "c": slice(0, size), "q": slice(q, v), "v": slice(v, vb), "qv": slice(q, vb), "vb": slice(vb, H),
        "H": slice(H, w), "work": slice(w, w + WORK), "X": slice(w, w + 36),
        "bias": slice(w + 108, w + 108 + nv), "size": slice(0, w + 108 + nv),
    }  # fmt: skip


@njit(cache=True, inline="always")
def _work(state: np.ndarray) -> int:
    """Where the work array is in a state array."""
    return int(state[WORK_AT])


@njit(cache=True, inline="always")
def _order(state: np.ndarray, i: int) -> int:
    """The target index of source index i (the joint order on the whole velocity)."""
    return int(state[PERM + int(state[N]) + i])


@kernel(_SET_STATE)
def set_state(H: np.ndarray, s: np.ndarray, vb: np.ndarray, sd: np.ndarray, state: np.ndarray) -> bool:
    """Check one floating-base state and write it in the library's convention into ``state`` (see
    :func:`layout`); False, with ``state`` unchanged, when it is not one valid state (the caller
    then takes the checking path).

    Args:
        H: ``world_H_base`` (4, 4); the pose checks are those of
            :func:`bridge.conventions.state.pose_rows_valid`.
        s, sd: joint positions and velocities (n,), the model's order.
        vb: base velocity (6,) in the source declaration; every input must be finite with a
            squared norm below ``MODERATE_SQ``.
    """
    n = s.shape[0]
    if H.shape[0] != 4 or H.shape[1] != 4 or vb.shape[0] != 6 or n != int(state[N]) or sd.shape[0] != n:
        return False  # (another shape: a batch or an error, the caller's general path)
    if H[3, 0] != 0.0 or H[3, 1] != 0.0 or H[3, 2] != 0.0 or H[3, 3] != 1.0:
        return False
    a, b, c, x = H[0, 0], H[0, 1], H[0, 2], H[0, 3]
    d, e, f, y = H[1, 0], H[1, 1], H[1, 2], H[1, 3]
    g, h, i, z = H[2, 0], H[2, 1], H[2, 2], H[2, 3]
    if not _pose_valid(a, b, c, x, d, e, f, y, g, h, i, z):
        return False
    # the inputs: finite and moderate (the sum of squares overflows or is NaN otherwise)
    total = 0.0
    for k in range(6):
        total += vb[k] * vb[k]
    for k in range(n):
        total += s[k] * s[k] + sd[k] * sd[k]
    if not total < MODERATE_SQ:
        return False
    # q: the origin and the quaternion (w >= 0) where the configuration puts them, the joints
    qx, qy, qz, qw = _quaternion(a, b, c, d, e, f, g, h, i)
    q0, ex = int(state[SIZE]), int(state[EXTRA])
    p0, o0 = q0 + int(state[ex + POSITION_AT]), q0 + int(state[ex + QUATERNION_AT])
    state[p0], state[p0 + 1], state[p0 + 2] = x, y, z
    if state[ex + WXYZ] != 0.0:  # (w, x, y, z)
        state[o0], state[o0 + 1], state[o0 + 2], state[o0 + 3] = qw, qx, qy, qz
    else:  # (x, y, z, w)
        state[o0], state[o0 + 1], state[o0 + 2], state[o0 + 3] = qx, qy, qz, qw
    v0 = q0 + 7 + n
    for j in range(n):
        state[q0 + int(state[ex + Q_INDEX + j])] = s[j]
        state[v0 + 6 + j] = sd[int(state[PERM + j])]
    w = v0 + 6 + n  # the copy of vb, then H
    for j in range(6):
        state[w + j] = vb[j]
    for r in range(4):
        for j in range(4):
            state[w + 6 + 4 * r + j] = H[r, j]
    change_base(H, vb, state, state, _work(state), state, v0)
    return True


#: :func:`set_state` as an inline helper, for the kernels that write more once it has checked a state
_write_state = njit(inline="always")(set_state.__wrapped__)
_SET_STATE_INTO = [boolean(h, v, v, v, _V, _V, _V) for h in (_M, _RM) for v in (_V, _RV)]


@kernel(_SET_STATE_INTO)
def set_state_into(
    H: np.ndarray,
    s: np.ndarray,
    vb: np.ndarray,
    sd: np.ndarray,
    state: np.ndarray,
    q: np.ndarray,
    v: np.ndarray,
) -> bool:
    """:func:`set_state`, then the library's q (nq,) and v (nv,) copied from ``state`` into ``q``
    and ``v`` too (a library's own arrays, e.g. MuJoCo's ``qpos`` and ``qvel``): all or nothing,
    False with all three unchanged when the state is not valid (or ``q`` and ``v`` are not of the
    state's sizes)."""
    n = s.shape[0]
    if q.shape[0] != 7 + n or v.shape[0] != 6 + n:
        return False
    if not _write_state(H, s, vb, sd, state):
        return False
    q0 = int(state[SIZE])
    for i in range(7 + n):
        q[i] = state[q0 + i]
    v0 = q0 + 7 + n
    for i in range(6 + n):
        v[i] = state[v0 + i]
    return True


@njit(cache=True, inline="always")
def _X(state: np.ndarray, inverse: bool) -> np.ndarray:
    """X (or X^-1) (6, 6) of a state array."""
    x = _work(state) + (36 if inverse else 0)
    return state[x : x + 36].reshape(6, 6)


@kernel([void(_M, _V)])
def matrix_back(M: np.ndarray, state: np.ndarray) -> None:
    """``M <- T^T M T`` (nv, nv) in place, the joint order the identity: the library's mass matrix
    (upper triangle read) as the source's (the state's scratch holds the corner's product)."""
    w = _work(state)
    congruence_flat(M, state, w, state, w + 72)


@kernel([void(_M, _V, _M)])
def matrix_back_permuted(M: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """``out = T^T M T`` (nv, nv) with the joints permuted back; M's upper triangle read."""
    nv = M.shape[0]
    G, C = np.empty((6, nv)), np.empty((6, 6))
    congruence_rows(M, _X(state, False), G, C)
    for i in range(nv):
        t = _order(state, i)
        for j in range(nv):
            u = _order(state, j)
            if t < 6:
                out[i, j] = C[t, u] if u < 6 else G[t, u]
            elif u < 6:
                out[i, j] = G[u, t]
            else:
                out[i, j] = M[t, u] if t <= u else M[u, t]


@kernel([void(_V, _V)])
def vector_back(x: np.ndarray, state: np.ndarray) -> None:
    """``x <- T^T x`` (nv,) in place, the joint order the identity: a generalized force."""
    force_flat(x, state, _work(state), x)


@kernel([void(_V, _V, _V)])
def vector_back_permuted(x: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """``out = T^T x`` (nv,), the joints permuted back."""
    for i in range(6, x.shape[0]):
        out[i] = x[_order(state, i)]
    force_flat(x, state, _work(state), out)


@kernel([void(_M, _V)])
def columns_back(J: np.ndarray, state: np.ndarray) -> None:
    """``J <- J T`` (m, nv) in place, the joint order the identity: a Jacobian of the library's
    velocity as one of the source's."""
    columns_flat(J, state, _work(state), J)


@kernel([void(_M, _V, _M)])
def columns_back_permuted(J: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """``out = J T`` (m, nv), the joints permuted back."""
    for j in range(6, J.shape[1]):  # (column by column: each index read once, not once a row)
        k = _order(state, j)
        for i in range(J.shape[0]):
            out[i, j] = J[i, k]
    columns_flat(J, state, _work(state), out)


@kernel(_ACCELERATION)
def acceleration(state: np.ndarray, base_acc: np.ndarray, s_ddot: np.ndarray, out: np.ndarray) -> bool:
    """``out = T nu_dot + T_dot nu`` (nv,) for ``nu_dot = [base_acc; s_ddot]``; False when the result
    is not finite and moderate (its squared norm below ``MODERATE_SQ``) or the arguments are not of
    shapes (6,) and (n,)."""
    nv = out.shape[0]
    if base_acc.shape[0] != 6 or s_ddot.shape[0] != nv - 6:
        return False
    X = _X(state, False)
    b = _work(state) + 108
    total = 0.0
    for r in range(6):
        x = state[b + r] + (
            X[r, 0] * base_acc[0]
            + X[r, 1] * base_acc[1]
            + X[r, 2] * base_acc[2]
            + X[r, 3] * base_acc[3]
            + X[r, 4] * base_acc[4]
            + X[r, 5] * base_acc[5]
        )
        out[r] = x
        total += x * x
    for j in range(nv - 6):
        x = s_ddot[int(state[PERM + j])]
        out[6 + j] = x
        total += x * x
    return total < MODERATE_SQ


@kernel([boolean(t, _V, _V) for t in (_V, _RV)])
def joint_forces(t: np.ndarray, state: np.ndarray, out: np.ndarray) -> bool:
    """``out = T^-T [0; t]`` (nv,): the library's generalized force of the joint torques ``t`` (n,),
    the base wrench zero (six zeros, then ``t`` in the library's joint order); False, ``out``
    unchanged, when ``t`` is not of shape (n,) or not finite and moderate (its squared norm below
    ``MODERATE_SQ``; summed here, not by a BLAS call next to the library's)."""
    n = int(state[N])
    if t.shape[0] != n or out.shape[0] != 6 + n:
        return False
    total = 0.0
    for j in range(n):
        total += t[j] * t[j]
    if not total < MODERATE_SQ:
        return False
    for r in range(6):
        out[r] = 0.0
    for j in range(n):
        out[6 + j] = t[int(state[PERM + j])]
    return True


@kernel([void(_V, _V, _V)])
def acceleration_back(a: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """``out = T^-1 (a - T_dot nu)`` (nv,) (out may be ``a`` when the order is the identity): a
    source acceleration from the library's ``a`` (nv,)."""
    nv = a.shape[0]
    X_inv = _X(state, True)
    b = _work(state) + 108
    d0, d1, d2 = a[0] - state[b], a[1] - state[b + 1], a[2] - state[b + 2]
    d3, d4, d5 = a[3] - state[b + 3], a[4] - state[b + 4], a[5] - state[b + 5]
    for i in range(6, nv):
        out[i] = a[_order(state, i)]
    for r in range(6):
        out[r] = (
            X_inv[r, 0] * d0
            + X_inv[r, 1] * d1
            + X_inv[r, 2] * d2
            + X_inv[r, 3] * d3
            + (X_inv[r, 4] * d4 + X_inv[r, 5] * d5)
        )


@kernel([void(_V, _V, _V)])
def force(tau: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """``out = T^-T tau`` (nv,): the library's generalized force from the source's ``tau`` (nv,)."""
    nv = tau.shape[0]
    X_inv = _X(state, True)
    for k in range(nv - 6):
        out[6 + k] = tau[6 + int(state[PERM + k])]
    t0, t1, t2, t3, t4, t5 = tau[0], tau[1], tau[2], tau[3], tau[4], tau[5]
    for r in range(6):
        out[r] = (
            X_inv[0, r] * t0
            + X_inv[1, r] * t1
            + X_inv[2, r] * t2
            + X_inv[3, r] * t3
            + (X_inv[4, r] * t4 + X_inv[5, r] * t5)
        )


@kernel([void(_M, _V, _V, _V, _V, _M)])
def frame_columns_back(
    J: np.ndarray, pos: np.ndarray, mat: np.ndarray, frame: np.ndarray, state: np.ndarray, out: np.ndarray
) -> None:
    """``out = F(H_F) J T`` (6, nv): a library's frame Jacobian ``J`` (6, nv) (overwritten) moved to
    another frame by the change compiled from two declarations (``frame``: its constants, the
    matrix to apply, 0 for X, 2 for the source's map to BODY, as their extra, then room for the pose
    (16) and the matrix (36)), at the frame's pose ``(mat (9,) row-major, pos (3,))``, and taken to
    the source's velocity by the state's ``T`` (joints permuted back)."""
    size = int(frame[SIZE])
    H = frame[size : size + 16].reshape(4, 4)
    for r in range(3):
        H[r, 0], H[r, 1], H[r, 2], H[r, 3] = mat[3 * r], mat[3 * r + 1], mat[3 * r + 2], pos[r]
    H[3, 0], H[3, 1], H[3, 2], H[3, 3] = 0.0, 0.0, 0.0, 1.0
    f = size + 16
    change_matrix(H, frame, int(frame[int(frame[EXTRA])]), frame, f)
    # F's rows as locals (LLVM cannot tell that writing J leaves F alone) and its off-diagonal 3x3
    # blocks that are exactly zero (a frame's rotation at its origin, F[A] to F), whose products are
    # skipped as in congruence_flat: rows 0..2 then read a column's linear half alone, 3..5 its angular
    f0, f1, f2 = _row(frame, f, 0), _row(frame, f, 1), _row(frame, f, 2)
    f3, f4, f5 = _row(frame, f, 3), _row(frame, f, 4), _row(frame, f, 5)
    up = 1 if _zeros(f0, 3) and _zeros(f1, 3) and _zeros(f2, 3) else 0
    low = 2 if _zeros(f3, 0) and _zeros(f4, 0) and _zeros(f5, 0) else 0
    for j in range(J.shape[1]):  # column j of F J: the base columns into J, the joints permuted back
        k = j if j < 6 else _order(state, j)  # into out
        m = (J[0, k], J[1, k], J[2, k], J[3, k], J[4, k], J[5, k])
        o = J if j < 6 else out
        o[0, j], o[1, j], o[2, j] = _dot6(f0, m, up), _dot6(f1, m, up), _dot6(f2, m, up)
        o[3, j], o[4, j], o[5, j] = _dot6(f3, m, low), _dot6(f4, m, low), _dot6(f5, m, low)
    columns_flat(J, state, _work(state), out)  # the base columns: (F J)[:, :6] X
