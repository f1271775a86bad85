"""Compiled (numba) CRBA and ABA of a batch for joints of any width (planar, ball, free anywhere).

The compiled specialisations of :func:`.general.crba` and :func:`.general.aba`. The CRBA: the same
composite inertias ``I^c_parent += I^c_i`` (world coordinates, about the world origin, linear first)
and blocks ``M_ij = S_w,i^T I^c_i S_w,j`` for j on i's path to the base, over the bodies of a
:class:`~.general.GeneralTree` packed once per model into flat arrays (:class:`.general_compiled.
PackedTree`): the parent of each body and its joint's velocities as a start and a width (0 to 6).

:func:`crba_par` (``prange`` over blocks of states) and :func:`crba_ser` (one block) take, per state
n, the world motion subspaces of every body side by side, ``S[n]`` (6, nv), the world inertias
``I[n]`` (nb, 6, 6) and write ``M[n]`` (nv, nv) whole. Two optional arguments let the caller fold a
block-diagonal change of variables ``T`` (whole joints permuted, each joint's velocities mapped by
its own block ``D_i``) into the kernel, giving ``T^T (M + A) T`` with the armature ``A`` directly:

* ``col`` (nv,): the row and column of the result of each of the tree's velocities (``S`` holds its
  columns in that order: ``S = S_w T`` for a change of variables, ``S_w`` with ``col = arange``);
* ``D`` (N, nv, 6): row r of T within its joint's block (``D[n, r, c] = T[r, col[start + c]]`` for
  the joint of velocities ``start .. start + width``), read only for the armature (``D_i^T a_i D_i``);
  an array of shape (0, 0, 6) is the identity.

The kinematics (:func:`kinematics_par`, :func:`kinematics_ser`): :func:`.general.kinematics` per
state, each joint's motion ``child_rest_H_child`` by its kind (:data:`ROTATIONAL` about the axis
through its origin by Rodrigues' formula, as :func:`bridge.spatial.so3.so3_exp`; :data:`PRISMATIC`;
:data:`PLANAR` in the plane's axes ``e1, e2``; :data:`BALL` and :data:`FREE` from the unit
quaternion (w, x, y, z), not normalised), the link poses ``o_H_i`` (N, nb, 4, 4), the world
subspaces ``S_w = Ad(o_H_i) S`` side by side (N, 6, nv) and the world inertias
``Ad^-T I Ad^-1`` (N, nb, 6, 6).

The RNEA (:func:`rnea_par`, :func:`rnea_ser`): :func:`.general.rnea` on the same arrays as the
ABA, the velocities and accelerations (N, nv) given as arrays of 0 rows for none.

The ABA (:func:`aba_par`, :func:`aba_ser`): :func:`.general.aba` step by step, in world
coordinates about the world origin, on ``S[n]`` (6, nv) (``col = arange``), the inertias, the
generalized velocities and forces (N, nv) in the neutral BODY form, the world's acceleration ``a0``
(N, 6) (``(-g, 0)``) and world forces on the bodies (N, nb, 6) (or (0, nb, 6) for none); each
joint's ``D = S^T I^A S + a 1`` (k, k) inverted by Gauss-Jordan elimination with partial pivoting
(the LU of ``np.linalg.inv``; a singular D gives a non-finite result, which the caller reports as the
numpy path does).

This module imports numba at its top and is imported only through :mod:`.general_compiled`.
Compiled code is cached on disk (``cache=True``); numba's cache checks this module's file only: after
editing what it takes from other modules (the options and inline helpers' settings of
:mod:`.numba_kernels`, the small-angle threshold of :mod:`bridge.spatial.so3`), delete this
package's ``__pycache__/numba_general*.nbi`` and ``*.nbc``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from bridge._numba import named
from bridge.spatial.so3 import SMALL_ANGLE

from .numba_kernels import _INL, _JIT

__all__ = [
    "BALL",
    "FIXED",
    "FREE",
    "PLANAR",
    "PRISMATIC",
    "ROTATIONAL",
    "aba_par",
    "aba_ser",
    "crba_par",
    "crba_ser",
    "kinematics_par",
    "kinematics_ser",
]

#: the width of a spatial vector (linear first, then angular)
SIX = 6

#: the packed tree's joint codes (:class:`.general_compiled.PackedTree`'s ``kind``): the base, and
#: joints without motion (fixed), take code FIXED
FIXED, ROTATIONAL, PRISMATIC, PLANAR, BALL, FREE = 0, 1, 2, 3, 4, 5


def _crba(
    parent: np.ndarray,
    start: np.ndarray,
    width: np.ndarray,
    arm: np.ndarray,
    col: np.ndarray,
    S: np.ndarray,
    I: np.ndarray,  # noqa: E741 (the inertias, as in the algorithm)
    D: np.ndarray,
    M: np.ndarray,
    nblk: int,
) -> None:
    """``M[n]`` (nv, nv) for the N states of ``S`` (N, 6, nv) and ``I`` (N, nb, 6, 6), ``nblk``
    blocks of states; ``parent``, ``start``, ``width`` (nb,) int64 and ``arm`` (nb,) the packed tree
    (bodies in depth-first order, body 0 the base); ``col``, ``D``: see the module docstring."""
    N, nb, nv = M.shape[0], parent.shape[0], M.shape[1]
    identity = D.shape[0] == 0
    for blk in prange(nblk):
        Ic = np.empty((nb, SIX, SIX))  # composite inertias of one state
        F = np.empty((SIX, SIX))  # I^c_i S_i, (6, width_i)
        for n in range(blk * N // nblk, (blk + 1) * N // nblk):
            for i in range(nb):
                for r in range(SIX):
                    for c in range(SIX):
                        Ic[i, r, c] = I[n, i, r, c]
            for i in range(nb - 1, 0, -1):  # leaves first: each body's subtree into its parent
                p = parent[i]
                for r in range(SIX):
                    for c in range(SIX):
                        Ic[p, r, c] += Ic[i, r, c]
            for r in range(nv):
                for c in range(nv):
                    M[n, r, c] = 0.0
            for i in range(nb):
                k = width[i]
                if k == 0:
                    continue
                s0 = start[i]
                for r in range(SIX):  # F = I^c_i S_i
                    for c in range(k):
                        acc = 0.0
                        for x in range(SIX):
                            acc += Ic[i, r, x] * S[n, x, col[s0 + c]]
                        F[r, c] = acc
                j = i  # M_ji = S_j^T F for j = i and up the path
                while j >= 0:
                    kj = width[j]
                    if kj:
                        t0 = start[j]
                        for a in range(kj):
                            ra = col[t0 + a]
                            for c in range(k):
                                acc = 0.0
                                for x in range(SIX):
                                    acc += S[n, x, ra] * F[x, c]
                                cc = col[s0 + c]
                                M[n, ra, cc] = acc
                                M[n, cc, ra] = acc
                    j = parent[j]
                a_i = arm[i]
                if a_i != 0.0:  # T_i^T a_i T_i on the joint's block
                    for c1 in range(k):
                        for c2 in range(k):
                            acc = 0.0
                            if identity:
                                acc = a_i if c1 == c2 else 0.0
                            else:
                                for r in range(k):
                                    acc += D[n, s0 + r, c1] * D[n, s0 + r, c2]
                                acc *= a_i
                            M[n, col[s0 + c1], col[s0 + c2]] += acc


crba_par = njit(parallel=True, **_JIT)(named(_crba, "_par"))
crba_ser = njit(**_JIT)(named(_crba, "_ser"))


@njit(**_INL)
def _invert(A: np.ndarray, k: int, out: np.ndarray, work: np.ndarray) -> None:
    """``out[:k, :k] = A[:k, :k]^-1`` by Gauss-Jordan elimination with partial pivoting (``work``
    (6, 6) scratch; a singular A gives inf or NaN entries)."""
    for r in range(k):
        for c in range(k):
            work[r, c] = A[r, c]
            out[r, c] = 1.0 if r == c else 0.0
    for c in range(k):
        piv = c
        for r in range(c + 1, k):
            if abs(work[r, c]) > abs(work[piv, c]):
                piv = r
        if piv != c:
            for x in range(k):
                work[c, x], work[piv, x] = work[piv, x], work[c, x]
                out[c, x], out[piv, x] = out[piv, x], out[c, x]
        inv = 1.0 / work[c, c]
        for x in range(k):
            work[c, x] *= inv
            out[c, x] *= inv
        for r in range(k):
            if r != c:
                f = work[r, c]
                if f != 0.0:
                    for x in range(k):
                        work[r, x] -= f * work[c, x]
                        out[r, x] -= f * out[c, x]


@njit(**_INL)
def _cross_motion(v: np.ndarray, m: np.ndarray, out: np.ndarray) -> None:
    """``out = v x m`` (6,) for twists linear first (``[w x u_m + u x w_m, w x w_m]``)."""
    out[0] = v[4] * m[2] - v[5] * m[1] + v[1] * m[5] - v[2] * m[4]
    out[1] = v[5] * m[0] - v[3] * m[2] + v[2] * m[3] - v[0] * m[5]
    out[2] = v[3] * m[1] - v[4] * m[0] + v[0] * m[4] - v[1] * m[3]
    out[3] = v[4] * m[5] - v[5] * m[4]
    out[4] = v[5] * m[3] - v[3] * m[5]
    out[5] = v[3] * m[4] - v[4] * m[3]


@njit(**_INL)
def _cross_force(v: np.ndarray, f: np.ndarray, out: np.ndarray) -> None:
    """``out = v x* f`` (6,) for a twist and a force linear first (``[w x f, u x f + w x t]``)."""
    out[0] = v[4] * f[2] - v[5] * f[1]
    out[1] = v[5] * f[0] - v[3] * f[2]
    out[2] = v[3] * f[1] - v[4] * f[0]
    out[3] = v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[4] = v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[5] = v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]


def _aba(
    parent: np.ndarray,
    start: np.ndarray,
    width: np.ndarray,
    arm: np.ndarray,
    S: np.ndarray,
    I: np.ndarray,  # noqa: E741 (the inertias, as in the algorithm)
    nu: np.ndarray,
    tau: np.ndarray,
    a0: np.ndarray,
    fext: np.ndarray,
    out: np.ndarray,
    nblk: int,
) -> None:
    """``out[n]`` (nv,): the BODY accelerations of :func:`.general.aba` for the N states of ``S``
    (N, 6, nv), ``I`` (N, nb, 6, 6), ``nu`` and ``tau`` (N, nv), ``a0`` (N, 6), ``fext`` (N, nb, 6)
    or (0, nb, 6); ``nblk`` blocks of states (the packed tree as in :func:`_crba`)."""
    N, nb, nv = out.shape[0], parent.shape[0], out.shape[1]
    forces = fext.shape[0] > 0
    for blk in prange(nblk):
        IA = np.empty((nb, SIX, SIX))  # articulated inertias (world)
        pA = np.empty((nb, SIX))  # articulated bias forces
        v = np.empty((nb, SIX))  # body twists
        c = np.empty((nb, SIX))  # velocity-product accelerations v_i x S_i nu_i
        a = np.empty((nb, SIX))  # body accelerations
        U = np.empty((SIX, nv))  # I^A_i S_i at the body's velocities
        Dinv = np.empty((nv, SIX))  # D_i^-1 at the body's rows
        u = np.empty(nv)  # tau_i - S_i^T p^A_i
        D = np.empty((SIX, SIX))
        Di = np.empty((SIX, SIX))  # D^-1
        G = np.empty((SIX, SIX))  # the elimination's scratch
        Ia = np.empty((SIX, SIX))
        pa = np.empty(SIX)
        vJ = np.empty(SIX)
        Iv = np.empty(SIX)
        UD = np.empty((SIX, SIX))  # U_i D_i^-1
        for n in range(blk * N // nblk, (blk + 1) * N // nblk):
            for i in range(nb):  # velocities, then p^A = v x* I v - f_ext
                p, k, s0 = parent[i], width[i], start[i]
                for r in range(SIX):
                    acc = 0.0
                    for x in range(k):
                        acc += S[n, r, s0 + x] * nu[n, s0 + x]
                    vJ[r] = acc
                    v[i, r] = (v[p, r] if p >= 0 else 0.0) + acc
                _cross_motion(v[i], vJ, c[i])
                for r in range(SIX):
                    acc = 0.0
                    for x in range(SIX):
                        IA[i, r, x] = I[n, i, r, x]
                        acc += I[n, i, r, x] * v[i, x]
                    Iv[r] = acc
                _cross_force(v[i], Iv, pA[i])
                if forces:
                    for r in range(SIX):
                        pA[i, r] -= fext[n, i, r]
            for i in range(nb - 1, -1, -1):
                k, s0 = width[i], start[i]
                if k:
                    for r in range(SIX):  # U = I^A S
                        for x in range(k):
                            acc = 0.0
                            for y in range(SIX):
                                acc += IA[i, r, y] * S[n, y, s0 + x]
                            U[r, s0 + x] = acc
                    for r in range(k):  # D = S^T U (+ armature), u = tau - S^T p^A
                        for x in range(k):
                            acc = 0.0
                            for y in range(SIX):
                                acc += S[n, y, s0 + r] * U[y, s0 + x]
                            D[r, x] = acc
                        D[r, r] += arm[i]
                        acc = 0.0
                        for y in range(SIX):
                            acc += S[n, y, s0 + r] * pA[i, y]
                        u[s0 + r] = tau[n, s0 + r] - acc
                    _invert(D, k, Di, G)
                    for r in range(k):
                        for x in range(k):
                            Dinv[s0 + r, x] = Di[r, x]
                    for r in range(SIX):  # UD = U D^-1
                        for x in range(k):
                            acc = 0.0
                            for y in range(k):
                                acc += U[r, s0 + y] * Di[y, x]
                            UD[r, x] = acc
                    for r in range(SIX):  # I^a = I^A - U D^-1 U^T
                        for x in range(SIX):
                            acc = 0.0
                            for y in range(k):
                                acc += UD[r, y] * U[x, s0 + y]
                            Ia[r, x] = IA[i, r, x] - acc
                    for r in range(SIX):  # p^a = p^A + I^a c + U D^-1 u
                        acc = pA[i, r]
                        for x in range(SIX):
                            acc += Ia[r, x] * c[i, x]
                        for y in range(k):
                            acc += UD[r, y] * u[s0 + y]
                        pa[r] = acc
                else:
                    for r in range(SIX):
                        acc = pA[i, r]
                        for x in range(SIX):
                            Ia[r, x] = IA[i, r, x]
                            acc += IA[i, r, x] * c[i, x]
                        pa[r] = acc
                p = parent[i]
                if p >= 0:
                    for r in range(SIX):
                        for x in range(SIX):
                            IA[p, r, x] += Ia[r, x]
                        pA[p, r] += pa[r]
            for i in range(nb):  # accelerations from the base
                p, k, s0 = parent[i], width[i], start[i]
                for r in range(SIX):
                    a[i, r] = (a[p, r] if p >= 0 else a0[n, r]) + c[i, r]
                if k:
                    for r in range(k):  # u - U^T a
                        acc = u[s0 + r]
                        for y in range(SIX):
                            acc -= U[y, s0 + r] * a[i, y]
                        pa[r] = acc
                    for r in range(k):  # q_ddot = D^-1 (u - U^T a)
                        acc = 0.0
                        for x in range(k):
                            acc += Dinv[s0 + r, x] * pa[x]
                        out[n, s0 + r] = acc
                    for r in range(SIX):
                        acc = 0.0
                        for x in range(k):
                            acc += S[n, r, s0 + x] * out[n, s0 + x]
                        a[i, r] += acc


aba_par = njit(parallel=True, **_JIT)(named(_aba, "_par"))
aba_ser = njit(**_JIT)(named(_aba, "_ser"))


@njit(**_INL)
def _rodrigues(w0: float, w1: float, w2: float, R: np.ndarray) -> None:
    """``R[:3, :3] = exp(w^)`` for the rotation vector ``w``: ``1 + a w^ + b w^ w^`` with the
    coefficients and the small-angle expansions of :func:`bridge.spatial.so3.so3_exp`."""
    theta = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    if theta < SMALL_ANGLE:
        a = 1.0 - theta**2 / 6.0
        b = 0.5 - theta**2 / 24.0
    else:
        a = math.sin(theta) / theta
        half = math.sin(0.5 * theta) / theta
        b = 2.0 * half * half
    # w^ w^ = w w^T - |w|^2 1
    R[0, 0] = 1.0 + b * (-w2 * w2 - w1 * w1)
    R[1, 1] = 1.0 + b * (-w2 * w2 - w0 * w0)
    R[2, 2] = 1.0 + b * (-w1 * w1 - w0 * w0)
    R[0, 1] = -a * w2 + b * (w1 * w0)
    R[1, 0] = a * w2 + b * (w0 * w1)
    R[0, 2] = a * w1 + b * (w2 * w0)
    R[2, 0] = -a * w1 + b * (w0 * w2)
    R[1, 2] = -a * w0 + b * (w2 * w1)
    R[2, 1] = a * w0 + b * (w1 * w2)


@njit(**_INL)
def _quaternion(w: float, x: float, y: float, z: float, R: np.ndarray) -> None:
    """``R`` (3, 3) of the unit quaternion (w, x, y, z), not normalised (as
    :func:`bridge.spatial.so3.quaternion_xyzw_to_matrix`)."""
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    R[0, 0] = 1 - 2 * (yy + zz)
    R[0, 1] = 2 * (xy - wz)
    R[0, 2] = 2 * (xz + wy)
    R[1, 0] = 2 * (xy + wz)
    R[1, 1] = 1 - 2 * (xx + zz)
    R[1, 2] = 2 * (yz - wx)
    R[2, 0] = 2 * (xz - wy)
    R[2, 1] = 2 * (yz + wx)
    R[2, 2] = 1 - 2 * (xx + yy)


@njit(**_INL)
def _motion(code: int, q: np.ndarray, q0: int, axis: np.ndarray, origin: np.ndarray, plane: np.ndarray,
            Hm: np.ndarray) -> None:  # fmt: skip
    """``Hm`` (4, 4) = ``child_rest_H_child`` of a joint of kind ``code`` at its coordinates
    ``q[q0:]`` (``axis``, ``origin`` (3,) in child coordinates, ``plane`` (2, 3) a planar joint's
    axes e1, e2)."""
    for r in range(4):
        for c in range(4):
            Hm[r, c] = 1.0 if r == c else 0.0
    R = Hm  # (its rotation block, written in place)
    if code in (ROTATIONAL, BALL):  # about the origin: p = o - R o
        if code == ROTATIONAL:
            t = q[q0]
            _rodrigues(t * axis[0], t * axis[1], t * axis[2], R)
        else:
            _quaternion(q[q0], q[q0 + 1], q[q0 + 2], q[q0 + 3], R)
        for r in range(3):
            Hm[r, 3] = origin[r] - (R[r, 0] * origin[0] + R[r, 1] * origin[1] + R[r, 2] * origin[2])
    elif code == PRISMATIC:
        for r in range(3):
            Hm[r, 3] = q[q0] * axis[r]
    elif code == PLANAR:
        t = q[q0 + 2]
        _rodrigues(t * axis[0], t * axis[1], t * axis[2], R)
        for r in range(3):
            Hm[r, 3] = q[q0] * plane[0, r] + q[q0 + 1] * plane[1, r]
    elif code == FREE:
        _quaternion(q[q0 + 3], q[q0 + 4], q[q0 + 5], q[q0 + 6], R)
        for r in range(3):
            Hm[r, 3] = q[q0 + r]


def _kinematics(
    parent: np.ndarray,
    code: np.ndarray,
    qstart: np.ndarray,
    start: np.ndarray,
    width: np.ndarray,
    axis: np.ndarray,
    origin: np.ndarray,
    plane: np.ndarray,
    rest: np.ndarray,
    Sb: np.ndarray,
    Ib: np.ndarray,
    pose: np.ndarray,
    q: np.ndarray,
    P: np.ndarray,
    S: np.ndarray,
    I: np.ndarray,  # noqa: E741 (the inertias, as in the algorithm)
    nblk: int,
) -> None:
    """The poses ``P`` (N, nb, 4, 4), world subspaces ``S`` (N, 6, nv) and world inertias ``I``
    (N, nb, 6, 6) of the N states of ``pose`` (N, 4, 4) ``world_H_base`` and ``q`` (N, nq) (neutral
    joint positions); per body: ``parent``, ``code``, ``qstart`` (its coordinates in q), ``start``,
    ``width`` (its velocities), ``axis``, ``origin`` (nb, 3), ``plane`` (nb, 2, 3), ``rest`` (nb, 4, 4)
    the joint's rest pose in the parent, ``Sb`` (nb, 6, 6) the subspace in child coordinates (its
    first ``width`` columns), ``Ib`` (nb, 6, 6) the inertia in link coordinates; ``nblk`` blocks."""
    N, nb = P.shape[0], parent.shape[0]
    for blk in prange(nblk):
        A = np.empty((4, 4))
        Hm = np.empty((4, 4))
        X = np.empty((SIX, SIX))  # Ad(H)^-1
        T = np.empty((SIX, SIX))
        pR = np.empty((3, 3))
        for n in range(blk * N // nblk, (blk + 1) * N // nblk):
            for i in range(nb):
                H = P[n, i]
                p = parent[i]
                if p < 0:
                    for r in range(4):
                        for c in range(4):
                            H[r, c] = pose[n, r, c]
                else:
                    for r in range(4):  # A = o_H_parent rest
                        for c in range(4):
                            acc = 0.0
                            for x in range(4):
                                acc += P[n, p, r, x] * rest[i, x, c]
                            A[r, c] = acc
                    if code[i] == FIXED:
                        for r in range(4):
                            for c in range(4):
                                H[r, c] = A[r, c]
                    else:
                        _motion(code[i], q[n], qstart[i], axis[i], origin[i], plane[i], Hm)
                        for r in range(4):
                            for c in range(4):
                                acc = 0.0
                                for x in range(4):
                                    acc += A[r, x] * Hm[x, c]
                                H[r, c] = acc
                for r in range(3):  # p^ R
                    for c in range(3):
                        pR[r, c] = (
                            (-H[2, 3] * H[1, c] + H[1, 3] * H[2, c]) if r == 0
                            else (H[2, 3] * H[0, c] - H[0, 3] * H[2, c]) if r == 1
                            else (-H[1, 3] * H[0, c] + H[0, 3] * H[1, c])
                        )  # fmt: skip
                s0 = start[i]
                for c in range(width[i]):  # S_w = [[R, p^ R], [0, R]] S
                    for r in range(3):
                        lin, ang = 0.0, 0.0
                        for x in range(3):
                            lin += H[r, x] * Sb[i, x, c] + pR[r, x] * Sb[i, 3 + x, c]
                            ang += H[r, x] * Sb[i, 3 + x, c]
                        S[n, r, s0 + c] = lin
                        S[n, 3 + r, s0 + c] = ang
                for r in range(3):  # X = Ad(H)^-1 = [[R^T, -R^T p^], [0, R^T]] (-R^T p^ = (p^ R)^T)
                    for c in range(3):
                        X[r, c] = H[c, r]
                        X[3 + r, 3 + c] = H[c, r]
                        X[3 + r, c] = 0.0
                        X[r, 3 + c] = pR[c, r]
                for r in range(SIX):  # I_w = X^T Ib X
                    for c in range(SIX):
                        acc = 0.0
                        for x in range(SIX):
                            acc += X[x, r] * Ib[i, x, c]
                        T[r, c] = acc
                for r in range(SIX):
                    for c in range(SIX):
                        acc = 0.0
                        for x in range(SIX):
                            acc += T[r, x] * X[x, c]
                        I[n, i, r, c] = acc


kinematics_par = njit(parallel=True, **_JIT)(named(_kinematics, "_par"))
kinematics_ser = njit(**_JIT)(named(_kinematics, "_ser"))


def _rnea(
    parent: np.ndarray,
    start: np.ndarray,
    width: np.ndarray,
    arm: np.ndarray,
    S: np.ndarray,
    I: np.ndarray,  # noqa: E741 (the inertias, as in the algorithm)
    nu: np.ndarray,
    nu_dot: np.ndarray,
    a0: np.ndarray,
    fext: np.ndarray,
    out: np.ndarray,
    nblk: int,
) -> None:
    """``out[n]`` (nv,): the generalized forces of :func:`.general.rnea` for the N states of ``S``
    (N, 6, nv), ``I`` (N, nb, 6, 6), the velocities ``nu`` and accelerations ``nu_dot`` (N, nv)
    (BODY; 0 rows: none, i.e. zero velocity without its velocity-product terms, zero
    acceleration without the armature's), ``a0`` (N, 6) the world's acceleration, ``fext``
    (N, nb, 6) or (0, nb, 6); ``nblk`` blocks of states (the packed tree as in :func:`_crba`)."""
    N, nb = out.shape[0], parent.shape[0]
    moving, accelerating, forces = nu.shape[0] > 0, nu_dot.shape[0] > 0, fext.shape[0] > 0
    for blk in prange(nblk):
        v = np.zeros((nb, SIX))  # body twists
        a = np.empty((nb, SIX))  # body accelerations
        f = np.empty((nb, SIX))  # body forces
        vJ = np.zeros(SIX)
        c = np.zeros(SIX)
        Iv = np.empty(SIX)
        fv = np.empty(SIX)
        for n in range(blk * N // nblk, (blk + 1) * N // nblk):
            for i in range(nb):  # from the base: v, a and the body's force I a + v x* I v - f_ext
                p, k, s0 = parent[i], width[i], start[i]
                if moving:
                    for r in range(SIX):
                        acc = 0.0
                        for x in range(k):
                            acc += S[n, r, s0 + x] * nu[n, s0 + x]
                        vJ[r] = acc
                        v[i, r] = (v[p, r] if p >= 0 else 0.0) + acc
                    _cross_motion(v[i], vJ, c)
                for r in range(SIX):
                    acc = (a[p, r] if p >= 0 else a0[n, r]) + c[r]
                    if accelerating:
                        for x in range(k):
                            acc += S[n, r, s0 + x] * nu_dot[n, s0 + x]
                    a[i, r] = acc
                for r in range(SIX):
                    acc, acv = 0.0, 0.0
                    for x in range(SIX):
                        acc += I[n, i, r, x] * a[i, x]
                        acv += I[n, i, r, x] * v[i, x]
                    f[i, r] = acc
                    Iv[r] = acv
                if moving:
                    _cross_force(v[i], Iv, fv)
                    for r in range(SIX):
                        f[i, r] += fv[r]
                if forces:
                    for r in range(SIX):
                        f[i, r] -= fext[n, i, r]
            for i in range(nb - 1, -1, -1):  # from the leaves: tau = S^T f, f_parent += f
                k, s0 = width[i], start[i]
                for x in range(k):
                    acc = 0.0
                    for r in range(SIX):
                        acc += S[n, r, s0 + x] * f[i, r]
                    if accelerating and arm[i] != 0.0:
                        acc += arm[i] * nu_dot[n, s0 + x]
                    out[n, s0 + x] = acc
                p = parent[i]
                if p >= 0:
                    for r in range(SIX):
                        f[p, r] += f[i, r]


rnea_par = njit(parallel=True, **_JIT)(named(_rnea, "_par"))
rnea_ser = njit(**_JIT)(named(_rnea, "_ser"))
