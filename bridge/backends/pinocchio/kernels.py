"""Compiled kernels (numba) of the Pinocchio engine's single-state hot path, floating base.

With numba installed (the ``fast`` extra; ``BRIDGE_NUMBA=0`` turns it off,
:func:`bridge.derivatives.select.compiled_kernels`), each single-state step is one compiled call
next to Pinocchio's own: :func:`set_state` checks one state and writes Pinocchio's ``q``, ``v``,
the base block ``X`` of ``T`` (and ``X^-1``) and ``T_dot nu``; :func:`matrix_back`,
:func:`vector_back`, :func:`columns_back`, :func:`acceleration` and :func:`acceleration_back`
apply ``T`` to Pinocchio's results and arguments (the base block's products are the library
engines' shared kernels, :mod:`bridge.backends.single_kernels`). In numpy each of these is a
handful of calls of half a microsecond each for a few hundred flops.

Nothing here is a change of variables written by hand: ``X`` and ``X^-1`` are evaluated from the
index maps and skew terms that :class:`bridge.conventions.single_state.SingleBaseChange` compiles
from the two declarations (:func:`pack_matrix`), ``T_dot nu`` from its rate coefficients
(:class:`bridge.conventions.single_state.SingleBias`'s formula), the joint order from
:class:`bridge.conventions.convention.JointOrder`. The numpy path of
:mod:`bridge.backends.pinocchio.single` is the reference the tests compare these kernels with.

Every ``T`` here has the block form ``[[X, 0], [0, P]]`` (base first, six base coordinates), and
Pinocchio's base velocity is its target's BODY velocity, linear first. This module imports numba
at its top and is imported only when numba is installed; it names no library.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bridge.backends.single_kernels import base_columns, base_congruence, base_force, congruence_rows
from bridge.conventions.state import MODERATE_SQ, pose_entries_valid
from bridge.spatial.so3 import quaternion_xyzw_of_entries

# the single-state checks and quaternion of bridge's Python paths, compiled as they are
_pose_valid = njit(cache=True)(pose_entries_valid)
_quaternion = njit(cache=True)(quaternion_xyzw_of_entries)

__all__ = [
    "acceleration",
    "acceleration_back",
    "columns_back",
    "columns_back_permuted",
    "force",
    "layout",
    "matrix_back",
    "matrix_back_permuted",
    "pack_change",
    "set_state",
    "vector_back",
    "vector_back_permuted",
]

# Every kernel is called with few arguments and returns no array (numba's dispatch costs about
# 35 ns per array argument and boxing a returned array about 230 ns, more than most of the work):
# the constants travel in one int and one float array (pack_change), a state in one float array,
#   state = [q (7 + n) | v (6 + n) | base velocity (6) | H (16) | X (36) | X^-1 (36) | T_dot nu (6) | 0 (n)]
# with the last (nv,) part Pinocchio's acceleration of zero source acceleration (bias forces).


def layout(n: int) -> dict[str, slice]:
    """The parts of a state array of a model with n joint DOFs (see the comment above)."""
    nq, nv = 7 + n, 6 + n
    x = nq + nv + 6 + 16
    return {
        "q": slice(0, nq), "v": slice(nq, nq + nv), "vb": slice(nq + nv, nq + nv + 6),
        "checked": slice(0, nq + nv + 6), "H": slice(x - 16, x), "X": slice(x, x + 36),
        "X_inv": slice(x + 36, x + 72), "bias": slice(x + 72, x + 72 + nv), "size": slice(0, x + 72 + nv),
    }  # fmt: skip


def pack_change(change: object, joints: object) -> tuple[np.ndarray, np.ndarray]:
    """The constants of one compiled ``SingleBaseChange`` and joint order as ``(ints, floats)``:
    ``ints = [index maps of X and X^-1 into the pose (72) | perm (n) | order (nv)]`` (perm: target
    joint k is source joint ``perm[k]``; order: source index i is target index ``order[i]``) and
    ``floats = [c_wv, c_q, rotate, linear start | skew terms (k, 6)]``, the first four ``T_dot
    nu``'s rate (``SingleBias``), each term a row ``[which (0: X, 1: X^-1), r0,
    c0, a, e, coef]`` for ``coef R^a p^ R^e``."""
    n, nv = joints.n, joints.nv
    perm = np.arange(n) if joints.perm is None else joints.perm
    order = np.arange(nv) if joints.back is None else joints.back
    ints = np.concatenate([change._x.index.ravel(), change._x_inv.index.ravel(), perm, order])
    terms = [
        (float(which), float(r.start), float(c.start), float(a), float(e), float(coef))
        for which, compiled in enumerate((change._x, change._x_inv))
        for r, c, a, e, coef, _fixed in compiled._terms  # (no body-fixed point: compiled_path)
    ]
    rate = [change._c_wv, change._c_q, 1.0 if change._P_t == 1 else 0.0, change._lin.start]
    floats = np.concatenate([rate, np.ravel(terms)])
    return np.ascontiguousarray(ints, dtype=np.intp), np.ascontiguousarray(floats, dtype=np.float64)


@njit(cache=True)
def _rot(H: np.ndarray, i: int, j: int, power: int) -> float:
    """``R^power[i, j]`` of the pose H (power 1 or -1)."""
    return H[i, j] if power == 1 else H[j, i]


@njit(cache=True)
def _skew(p: np.ndarray, i: int, j: int) -> float:
    """``p^[i, j]`` (the cross-product matrix of p (3,))."""
    if i == j:
        return 0.0
    if i == 0:
        return -p[2] if j == 1 else p[1]
    if i == 1:
        return p[2] if j == 0 else -p[0]
    return -p[1] if j == 0 else p[0]


@njit(cache=True)
def _evaluate(H: np.ndarray, ints: np.ndarray, floats: np.ndarray, which: int, out: np.ndarray) -> None:
    """``out`` (6, 6) = X (which 0) or X^-1 (which 1) at the pose H (4, 4): the index map's take
    plus each of its skew terms ``coef R^a p^ R^e`` (a, e in {-1, 0, 1})."""
    Hf = H.ravel()
    base = 36 * which
    for i in range(6):
        for j in range(6):
            out[i, j] = Hf[ints[base + 6 * i + j]]
    p = H[:3, 3]
    for t in range((floats.shape[0] - 4) // 6):
        row = 4 + 6 * t
        if int(floats[row]) != which:
            continue
        r0, c0, a, e, coef = (
            int(floats[row + 1]),
            int(floats[row + 2]),
            int(floats[row + 3]),
            int(floats[row + 4]),
            floats[row + 5],
        )
        for i in range(3):
            y0 = (
                _skew(p, i, 0)
                if a == 0
                else _rot(H, i, 1, a) * _skew(p, 1, 0) + _rot(H, i, 2, a) * _skew(p, 2, 0)
            )
            y1 = (
                _skew(p, i, 1)
                if a == 0
                else _rot(H, i, 0, a) * _skew(p, 0, 1) + _rot(H, i, 2, a) * _skew(p, 2, 1)
            )
            y2 = (
                _skew(p, i, 2)
                if a == 0
                else _rot(H, i, 0, a) * _skew(p, 0, 2) + _rot(H, i, 1, a) * _skew(p, 1, 2)
            )
            for j in range(3):
                if e == 0:
                    z = y0 if j == 0 else (y1 if j == 1 else y2)
                else:
                    z = y0 * _rot(H, 0, j, e) + y1 * _rot(H, 1, j, e) + y2 * _rot(H, 2, j, e)
                out[r0 + i, c0 + j] += coef * z


@njit(cache=True)
def set_state(
    H: np.ndarray,
    s: np.ndarray,
    vb: np.ndarray,
    sd: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    state: np.ndarray,
) -> bool:
    """Check one floating-base state and write it in Pinocchio's convention into ``state`` (see
    :func:`layout`); False, with ``state`` undefined, when it is not one valid state (the caller
    then takes the checking path).

    Args:
        H: ``world_H_base`` (4, 4); the pose checks are those of
            :func:`bridge.conventions.state.pose_rows_valid`.
        s, sd: joint positions and velocities (n,), the model's order.
        vb: base velocity (6,) in the source declaration.
        ints, floats: the constants (:func:`pack_change`); every input must be finite with a squared
            norm below ``MODERATE_SQ``.
    """
    if H[3, 0] != 0.0 or H[3, 1] != 0.0 or H[3, 2] != 0.0 or H[3, 3] != 1.0:
        return False
    a, b, c, x = H[0, 0], H[0, 1], H[0, 2], H[0, 3]
    d, e, f, y = H[1, 0], H[1, 1], H[1, 2], H[1, 3]
    g, h, i, z = H[2, 0], H[2, 1], H[2, 2], H[2, 3]
    if not _pose_valid(a, b, c, x, d, e, f, y, g, h, i, z):
        return False
    # the inputs: finite and moderate (the sum of squares overflows or is NaN otherwise)
    n = s.shape[0]
    total = 0.0
    for k in range(6):
        total += vb[k] * vb[k]
    for k in range(n):
        total += s[k] * s[k] + sd[k] * sd[k]
    if not total < MODERATE_SQ:
        return False
    # q: the origin, the quaternion (x, y, z, w), w >= 0 (bridge.spatial.so3.quaternion_xyzw_of_rows)
    qx, qy, qz, qw = _quaternion(a, b, c, d, e, f, g, h, i)
    state[0], state[1], state[2] = x, y, z
    state[3], state[4], state[5], state[6] = qx, qy, qz, qw
    v0 = 7 + n
    for j in range(n):
        pj = ints[72 + j]
        state[7 + j] = s[pj]
        state[v0 + 6 + j] = sd[pj]
    w = v0 + 6 + n  # the copy of vb, then H, X, X^-1, T_dot nu
    for j in range(6):
        state[w + j] = vb[j]
    Hc = state[w + 6 : w + 22].reshape(4, 4)
    for r in range(4):
        for j in range(4):
            Hc[r, j] = H[r, j]
    X = state[w + 22 : w + 58].reshape(6, 6)
    _evaluate(Hc, ints, floats, 0, X)
    _evaluate(Hc, ints, floats, 1, state[w + 58 : w + 94].reshape(6, 6))
    for r in range(6):
        acc = 0.0
        for j in range(6):
            acc += X[r, j] * vb[j]
        state[v0 + r] = acc
    _bias(Hc, state[v0 : v0 + 6], floats, state[w + 94 : w + 100])
    return True


@njit(cache=True)
def _bias(H: np.ndarray, v: np.ndarray, rate: np.ndarray, out: np.ndarray) -> None:
    """``T_dot nu`` (6,) from the BODY base velocity ``v[:6]``: ``[P_t (c_wv (w x v) + c_q ((v - w x
    q) x w)); 0]`` with ``q = R^T p`` (``SingleBias.linear``), its half at ``rate[3]``."""
    c, cq, rotate, i0 = rate[0], rate[1], rate[2], int(rate[3])
    vx, vy, vz, wx, wy, wz = v[0], v[1], v[2], v[3], v[4], v[5]
    ax, ay, az = c * (wy * vz - wz * vy), c * (wz * vx - wx * vz), c * (wx * vy - wy * vx)
    if cq != 0.0:
        qx = H[0, 0] * H[0, 3] + H[1, 0] * H[1, 3] + H[2, 0] * H[2, 3]
        qy = H[0, 1] * H[0, 3] + H[1, 1] * H[1, 3] + H[2, 1] * H[2, 3]
        qz = H[0, 2] * H[0, 3] + H[1, 2] * H[1, 3] + H[2, 2] * H[2, 3]
        ux, uy, uz = vx - (wy * qz - wz * qy), vy - (wz * qx - wx * qz), vz - (wx * qy - wy * qx)
        ax += cq * (uy * wz - uz * wy)
        ay += cq * (uz * wx - ux * wz)
        az += cq * (ux * wy - uy * wx)
    if rotate != 0.0:
        ax, ay, az = (
            H[0, 0] * ax + H[0, 1] * ay + H[0, 2] * az,
            H[1, 0] * ax + H[1, 1] * ay + H[1, 2] * az,
            H[2, 0] * ax + H[2, 1] * ay + H[2, 2] * az,
        )
    for k in range(6):
        out[k] = 0.0
    out[i0], out[i0 + 1], out[i0 + 2] = ax, ay, az


@njit(cache=True)
def _X(state: np.ndarray, nv: int, inverse: bool) -> np.ndarray:
    """X (or X^-1) (6, 6) of a state array of a model of nv DOFs."""
    x = 7 + 2 * nv + 16 + (36 if inverse else 0)
    return state[x : x + 36].reshape(6, 6)


@njit(cache=True)
def matrix_back(M: np.ndarray, state: np.ndarray) -> None:
    """``M <- T^T M T`` (nv, nv) in place, the joint order the identity: Pinocchio's mass matrix
    (upper triangle read) as the source's."""
    nv = M.shape[0]
    base_congruence(M, _X(state, nv, False), np.empty((6, nv)), np.empty((6, 6)))


@njit(cache=True)
def matrix_back_permuted(M: np.ndarray, state: np.ndarray, ints: np.ndarray, out: np.ndarray) -> None:
    """``out = T^T M T`` (nv, nv) with the joints permuted back (source index i is target index
    ``order[i]``, the tail of ``ints``); M's upper triangle read."""
    nv = M.shape[0]
    G, C = np.empty((6, nv)), np.empty((6, 6))
    congruence_rows(M, _X(state, nv, False), G, C)
    o = ints.shape[0] - nv
    for i in range(nv):
        t = ints[o + i]
        for j in range(nv):
            u = ints[o + j]
            if t < 6:
                out[i, j] = C[t, u] if u < 6 else G[t, u]
            elif u < 6:
                out[i, j] = G[u, t]
            else:
                out[i, j] = M[t, u] if t <= u else M[u, t]


@njit(cache=True)
def vector_back(x: np.ndarray, state: np.ndarray) -> None:
    """``x <- T^T x`` (nv,) in place, the joint order the identity: a generalized force."""
    base_force(x, _X(state, x.shape[0], False), x)


@njit(cache=True)
def vector_back_permuted(x: np.ndarray, state: np.ndarray, ints: np.ndarray, out: np.ndarray) -> None:
    """``out = T^T x`` (nv,), the joints permuted back."""
    nv = x.shape[0]
    o = ints.shape[0] - nv
    for i in range(6, nv):
        out[i] = x[ints[o + i]]
    base_force(x, _X(state, nv, False), out)


@njit(cache=True)
def columns_back(J: np.ndarray, state: np.ndarray) -> None:
    """``J <- J T`` (m, nv) in place, the joint order the identity: a Jacobian of Pinocchio's
    velocity as one of the source's."""
    base_columns(J, _X(state, J.shape[1], False), J)


@njit(cache=True)
def columns_back_permuted(J: np.ndarray, state: np.ndarray, ints: np.ndarray, out: np.ndarray) -> None:
    """``out = J T`` (m, nv), the joints permuted back."""
    nv = J.shape[1]
    o = ints.shape[0] - nv
    for i in range(J.shape[0]):
        for j in range(6, nv):
            out[i, j] = J[i, ints[o + j]]
    base_columns(J, _X(state, nv, False), out)


@njit(cache=True)
def acceleration(
    state: np.ndarray, base_acc: np.ndarray, s_ddot: np.ndarray, ints: np.ndarray, out: np.ndarray
) -> bool:
    """``out = T nu_dot + T_dot nu`` (nv,) for ``nu_dot = [base_acc; s_ddot]``; False when the result
    is not finite and moderate (its squared norm below ``MODERATE_SQ``)."""
    nv = out.shape[0]
    X = _X(state, nv, False)
    b = 7 + 2 * nv + 16 + 72
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
        x = s_ddot[ints[72 + j]]
        out[6 + j] = x
        total += x * x
    return total < MODERATE_SQ


@njit(cache=True)
def acceleration_back(a: np.ndarray, state: np.ndarray, ints: np.ndarray, out: np.ndarray) -> None:
    """``out = T^-1 (a - T_dot nu)`` (nv,) (out may be ``a`` when the order is the identity): a
    source acceleration from Pinocchio's ``a`` (nv,)."""
    nv = a.shape[0]
    X_inv = _X(state, nv, True)
    b = 7 + 2 * nv + 16 + 72
    d0, d1, d2 = a[0] - state[b], a[1] - state[b + 1], a[2] - state[b + 2]
    d3, d4, d5 = a[3] - state[b + 3], a[4] - state[b + 4], a[5] - state[b + 5]
    o = ints.shape[0] - nv
    for i in range(6, nv):
        out[i] = a[ints[o + i]]
    for r in range(6):
        out[r] = (
            X_inv[r, 0] * d0
            + X_inv[r, 1] * d1
            + X_inv[r, 2] * d2
            + X_inv[r, 3] * d3
            + (X_inv[r, 4] * d4 + X_inv[r, 5] * d5)
        )


@njit(cache=True)
def force(tau: np.ndarray, state: np.ndarray, ints: np.ndarray, out: np.ndarray) -> None:
    """``out = T^-T tau`` (nv,): Pinocchio's generalized force from the source's ``tau`` (nv,)."""
    nv = tau.shape[0]
    X_inv = _X(state, nv, True)
    for k in range(nv - 6):
        out[6 + k] = tau[6 + ints[72 + k]]
    t0, t1, t2, t3, t4, t5 = tau[0], tau[1], tau[2], tau[3], tau[4], tau[5]
    for r in range(6):
        out[r] = X_inv[0, r] * t0 + X_inv[1, r] * t1 + X_inv[2, r] * t2 + X_inv[3, r] * t3 + (
            X_inv[4, r] * t4 + X_inv[5, r] * t5
        )
