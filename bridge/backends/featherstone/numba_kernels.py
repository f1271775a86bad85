"""Compiled (numba) RNEA, CRBA and ABA over a batch of states, in parallel over the batch.

The same algorithms as :mod:`.kernels` (the numpy reference, vectorised over the whole batch and
looping over depth levels), compiled and state by state: each kernel runs ``prange`` over ``nblk``
blocks of consecutive states (a few per thread); a block copies its inputs in groups of ``STAGE``
states into small buffers and runs every state through the recursions over the bodies in scalar
code (the helpers of :mod:`.numba_spatial`, inlined) on per-block scratch arrays: nothing is
allocated per state. Transforms are kept as ``(E, r)`` of ``plux(E, r)``, the CRBA's composite
inertias as ``(m, h, Ibar)``. The RNEA and the CRBA work in body coordinates; the ABA in the
coordinates of the tree's frame of reference (for a free tree: the world's axes at the base's
origin), where the articulated inertias (upper triangles of 6x6 matrices) add to the parent's
without a transform (see :func:`_aba`). Everything is float64, in the tree's internal body order
(parents before children); inputs and outputs are batch-last like :mod:`.kernels`' (``q`` (nq, N),
the joints' cosines and sines ``lc``/``ls`` (nq, N) of :class:`~.joints.Joints` in level order (row
``lvq[i]`` for body i), base poses ``E0`` (9, N), ``r0`` (3, N), ...), except the CRBA's matrices
(N, nv, nv), written straight into the caller's array.

Conventions (spatial_v2's, see :mod:`.kernels`): joint codes 0..5 are Rx, Ry, Rz, Px, Py, Pz, 6 a
free body (body 0 of a free tree, whose generalized velocity is its spatial velocity in world
coordinates, the base wrench in world coordinates its force); ``a0`` (6, 1) or (6, N) the
acceleration of the fixed world (``-a_grav``) in the coordinates of the tree's root (world
coordinates for a free tree).

The CRBA may write each state's matrix in the user's convention as it makes it (``T^T H T`` for
``T = blkdiag(X, P)``: the joints' entries at their rows, the base rows and columns multiplied by
``X``; see :func:`_crba_stage`).

This module imports numba at its top and is imported only through :mod:`.compiled` (numba
installed, ``BRIDGE_NUMBA`` not ``0``). Compiled code is cached on disk (``cache=True``): the first
call in a fresh environment compiles for about a minute.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from bridge._numba import named

from .numba_spatial import (
    _a0col,
    _body_force,
    _crm_axis,
    _joint_up,
    _pose_up,
    _rigid_world,
    _shift_force,
    _shift_motion,
    _solve6,
    _stage,
    _unstage,
    _world_rigid,
    _world_subspace,
    _xm,
    _xtf,
)

__all__ = ["aba_par", "aba_ser", "crba_par", "crba_ser", "rnea_par", "rnea_ser"]

_JIT = {"cache": True, "nogil": True, "error_model": "numpy", "fastmath": {"contract"}}
_INL = {**_JIT, "inline": "always"}
FREE = 6
#: the ABA reports a joint whose articulated inertia ``d`` is at most this times the largest diagonal
#: entry of its body's articulated inertia as singular
SINGULAR = 1e-9
#: a block's states are copied in groups of this many into small batch-last buffers: rows of a few
#: cache lines, not of N columns (whose rows, N * 8 bytes apart, would compete for the same cache sets)
STAGE = 16


@njit(**_INL)
def _own(parent, code, vidx, qidx, lvq, Et, rt, inertia, arm):
    """Copies of the tree's constants, for one block. Every view of an array the kernels take (a
    body's ``Et[i]``, ...) counts a reference to that array atomically: threads reading the caller's
    arrays would count on the same cache line for every body of every state and run no faster than
    one thread (measured); each block works on its own copies instead."""
    return (
        parent.copy(),
        code.copy(),
        vidx.copy(),
        qidx.copy(),
        lvq.copy(),
        Et.copy(),
        rt.copy(),
        inertia.copy(),
        arm.copy(),
    )


@njit(**_INL)
def _state_buffers(q, lc, ls, nu):
    """The staging buffers of a block's joint positions, cosines, sines, base rotations (9 rows and
    a (3, 3, STAGE) view) and origins, generalized velocities and the world's acceleration."""
    Eb = np.empty((9, STAGE))
    return (
        np.empty((q.shape[0], STAGE)),
        np.empty((lc.shape[0], STAGE)),
        np.empty((ls.shape[0], STAGE)),
        Eb,
        Eb.reshape((3, 3, STAGE)),
        np.empty((3, STAGE)),
        np.empty((nu.shape[0], STAGE)),
        np.empty((6, STAGE)),
    )


@njit(**_INL)
def _stage_state(q, lc, ls, E0, r0, nu, a0, n0, nl, qb, lcb, lsb, Eb, rb, nub, ab):
    """Copy the states ``n0 .. n0 + nl - 1`` of the joint data, base pose, velocities and the
    world's acceleration into the buffers of :func:`_state_buffers`."""
    _stage(q, n0, nl, qb)
    _stage(lc, n0, nl, lcb)
    _stage(ls, n0, nl, lsb)
    _stage(E0, n0, nl, Eb)
    _stage(r0, n0, nl, rb)
    _stage(nu, n0, nl, nub)
    _stage(a0, n0, nl, ab)


# --------------------------------------------------------------------------- RNEA
@njit(**_JIT)
def _rnea_stage(
    nl, parent, code, vidx, qidx, lvq, Et, rt, I6, q, lc, ls, E0, r0, nu, nud, a0, arm, tau,
    XE, Xr, v, a, f, w,
):  # fmt: skip
    """The states ``0 .. nl - 1`` of the staging buffers (one call per group of states: a call
    counts references to its array arguments)."""
    nb = parent.shape[0]
    has_nu = nu.shape[0] > 0
    has_nud = nud.shape[0] > 0
    tmp = w[0]
    for n in range(nl):
        a0n = _a0col(a0, n)
        for i in range(nb):
            c = code[i]
            if c == FREE:
                for x in range(3):
                    Xr[i, x] = r0[x, n]
                    for y in range(3):
                        XE[i, x, y] = E0[x, y, n]
                for x in range(6):
                    tmp[x] = a0n[x] + (nud[x, n] if has_nud else 0.0)
                _xm(XE[i], Xr[i], tmp, a[i])
                if has_nu:
                    for x in range(6):
                        tmp[x] = nu[x, n]
                    _xm(XE[i], Xr[i], tmp, v[i])
                else:
                    v[i, :] = 0.0
            else:
                p = parent[i]
                _joint_up(c, q[qidx[i], n], lc[lvq[i], n], ls[lvq[i], n], Et[i], rt[i], XE[i], Xr[i])
                if p >= 0:
                    _xm(XE[i], Xr[i], v[p], v[i])
                    _xm(XE[i], Xr[i], a[p], a[i])
                else:
                    v[i, :] = 0.0
                    _xm(XE[i], Xr[i], a0n, a[i])
                j = vidx[i]
                if has_nu:
                    qd = nu[j, n]
                    v[i, c] += qd
                    _crm_axis(v[i], c, qd, a[i])
                if has_nud:
                    a[i, c] += nud[j, n]
            _body_force(I6[i], v[i], a[i], f[i], True)
        for i in range(nb - 1, -1, -1):
            c = code[i]
            if c == FREE:
                _xtf(XE[i], Xr[i], f[i], tmp, False)
                for x in range(6):
                    tau[x, n] = tmp[x]
                continue
            j = vidx[i]
            t = f[i, c]
            if has_nud and arm.shape[0] > 0:
                t += arm[j] * nud[j, n]
            tau[j, n] = t
            p = parent[i]
            if p >= 0:
                _xtf(XE[i], Xr[i], f[i], f[p], True)


def _rnea(parent, code, vidx, qidx, lvq, Et, rt, I6, q, lc, ls, E0, r0, nu, nud, a0, arm, tau, nblk):
    """Inverse dynamics: ``tau`` (nv, N) written; ``nu``/``nud`` (nv, N) or (0, N) for zero;
    ``arm`` (nv,) or (0,); ``E0`` (9, N) (or (9, 1) for a fixed tree); ``nblk`` blocks of states."""
    nb = parent.shape[0]
    N = tau.shape[1]
    for b in prange(nblk):
        parent_, code_, vidx_, qidx_, lvq_, Et_, rt_, I6_, arm_ = _own(
            parent, code, vidx, qidx, lvq, Et, rt, I6, arm
        )
        XE = np.empty((nb, 3, 3))
        Xr = np.empty((nb, 3))
        v = np.empty((nb, 6))
        a = np.empty((nb, 6))
        f = np.empty((nb, 6))
        w = np.empty((2, 6))
        qb, lcb, lsb, Eb, E3, rb, nub, ab = _state_buffers(q, lc, ls, nu)
        nudb = np.empty((nud.shape[0], STAGE))
        tb = np.empty((tau.shape[0], STAGE))
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, STAGE):
            nl = min(STAGE, stop - n0)
            _stage_state(q, lc, ls, E0, r0, nu, a0, n0, nl, qb, lcb, lsb, Eb, rb, nub, ab)
            _stage(nud, n0, nl, nudb)
            _rnea_stage(
                nl, parent_, code_, vidx_, qidx_, lvq_, Et_, rt_, I6_, qb, lcb, lsb, E3, rb,
                nub, nudb, ab, arm_, tb, XE, Xr, v, a, f, w,
            )  # fmt: skip
            _unstage(tb, n0, nl, tau)


# --------------------------------------------------------------------------- CRBA
@njit(**_JIT)
def _crba_stage(
    nl, parent, code, vidx, qidx, lvq, Et, rt, mass, h0, Ib0, q, lc, ls, E0, r0, arm, H, ix, X,
    Ew, pw, S, IC, Z,
):  # fmt: skip
    """The states ``0 .. nl - 1`` of the staging buffers into ``H[0 .. nl - 1]`` (one call per group
    of states: a call counts references to its array arguments), in the coordinates of the tree's
    frame of reference (see :func:`_crba`): entry ``(a, b)`` of the tree's velocities at ``(ix[a],
    ix[b])``, and with ``X`` (nl, 6, 6) (not (0, 6, 6)) the base rows and columns multiplied by each
    state's ``X``. ``parent``: a root's parent is row nb of ``Ew``/``pw`` (the world's identity
    pose); ``S`` (nb, 6), ``IC`` (nb, 10), ``Z`` (2, 6, 6): scratch."""
    nb = parent.shape[0]
    nv = H.shape[1]
    has_x = X.shape[0] > 0
    has_arm = arm.shape[0] > 0
    for n in range(nl):
        Hn = H[n]
        for a in range(nv):
            for b in range(nv):
                Hn[a, b] = 0.0
        root = -1  # the free body (its composite inertia: the base block)
        for i in range(nb):
            ci = code[i]
            if ci == FREE:  # world-aligned coordinates at the base's origin r0
                root = i
                for x in range(3):
                    pw[i, x] = 0.0
                    for y in range(3):
                        Ew[i, x, y] = E0[x, y, n]
            else:
                k = lvq[i]
                _pose_up(ci, q[qidx[i], n], lc[k, n], ls[k, n], Et, rt, Ew, pw, i, parent[i])
                _world_subspace(ci, Ew, pw, S, i)
            rigid = _rigid_world(Ew, pw, mass, h0, Ib0, i)
            for x in range(10):
                IC[i, x] = rigid[x]
        for i in range(nb - 1, -1, -1):  # composite inertias: about one origin, they add
            p = parent[i]
            if p < nb:
                for x in range(10):
                    IC[p, x] += IC[i, x]
        if root >= 0:
            _base_map(r0, n, X, has_x, Z[0])
            _base_block(IC, root, Z[0], Z[1], Hn, ix)
        for i in range(nb):
            if code[i] == FREE:
                continue
            # F = IC_i S_i = [I a + h x b; m b - h x a] for S_i = [a; b]
            a0_, a1_, a2_, b0_, b1_, b2_ = S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5]
            m, h_0, h_1, h_2 = IC[i, 0], IC[i, 1], IC[i, 2], IC[i, 3]
            f0 = IC[i, 4] * a0_ + IC[i, 5] * a1_ + IC[i, 6] * a2_ + (h_1 * b2_ - h_2 * b1_)
            f1 = IC[i, 5] * a0_ + IC[i, 7] * a1_ + IC[i, 8] * a2_ + (h_2 * b0_ - h_0 * b2_)
            f2 = IC[i, 6] * a0_ + IC[i, 8] * a1_ + IC[i, 9] * a2_ + (h_0 * b1_ - h_1 * b0_)
            f3 = m * b0_ - (h_1 * a2_ - h_2 * a1_)
            f4 = m * b1_ - (h_2 * a0_ - h_0 * a2_)
            f5 = m * b2_ - (h_0 * a1_ - h_1 * a0_)
            j = vidx[i]
            oj = ix[j]
            d = a0_ * f0 + a1_ * f1 + a2_ * f2 + b0_ * f3 + b1_ * f4 + b2_ * f5
            Hn[oj, oj] = d + (arm[j] if has_arm else 0.0)
            k = parent[i]
            while k < nb:
                if code[k] == FREE:  # the base rows: Z^T F
                    Zn = Z[0]
                    for r in range(6):
                        t = Zn[0, r] * f0 + Zn[1, r] * f1 + Zn[2, r] * f2
                        t += Zn[3, r] * f3 + Zn[4, r] * f4 + Zn[5, r] * f5
                        Hn[ix[r], oj] = t
                        Hn[oj, ix[r]] = t
                    break
                t = S[k, 0] * f0 + S[k, 1] * f1 + S[k, 2] * f2 + S[k, 3] * f3 + S[k, 4] * f4 + S[k, 5] * f5
                ok = ix[vidx[k]]
                Hn[ok, oj] = t
                Hn[oj, ok] = t
                k = parent[k]


@njit(**_INL)
def _base_map(r0, n, X, has_x, Zn):
    """``Zn`` (6, 6) = ``Phi^T X[n]`` (``X`` the identity without ``has_x``): a force at the base's
    origin in world axes (angular first) -> the base rows in the user's convention, ``Phi`` moving it
    to the world's origin (Featherstone's base force: ``[n + r0 x f; f]``)."""
    r_0, r_1, r_2 = r0[0, n], r0[1, n], r0[2, n]
    for c in range(6):
        if has_x:
            x0, x1, x2 = X[n, 0, c], X[n, 1, c], X[n, 2, c]
            y0, y1, y2 = X[n, 3, c], X[n, 4, c], X[n, 5, c]
        else:
            x0, x1, x2 = (1.0 if c == 0 else 0.0), (1.0 if c == 1 else 0.0), (1.0 if c == 2 else 0.0)
            y0, y1, y2 = (1.0 if c == 3 else 0.0), (1.0 if c == 4 else 0.0), (1.0 if c == 5 else 0.0)
        Zn[0, c], Zn[1, c], Zn[2, c] = x0, x1, x2
        Zn[3, c] = y0 - (r_1 * x2 - r_2 * x1)  # y - r x x
        Zn[4, c] = y1 - (r_2 * x0 - r_0 * x2)
        Zn[5, c] = y2 - (r_0 * x1 - r_1 * x0)


@njit(**_INL)
def _base_block(IC, i, Zn, Y, Hn, ix):
    """The base block ``Zn^T IC_i Zn`` of ``Hn`` (rows ``ix[0..5]``): the composite inertia of the
    whole tree ``IC[i]`` (10,) as the spatial inertia ``[[I, h^], [-h^, m 1]]``; ``Y`` (6, 6)
    scratch."""
    m, h_0, h_1, h_2 = IC[i, 0], IC[i, 1], IC[i, 2], IC[i, 3]
    i00, i01, i02, i11, i12, i22 = IC[i, 4], IC[i, 5], IC[i, 6], IC[i, 7], IC[i, 8], IC[i, 9]
    for c in range(6):  # Y = I6 Zn, column by column: [I a + h x b; m b - h x a]
        a0_, a1_, a2_, b0_, b1_, b2_ = Zn[0, c], Zn[1, c], Zn[2, c], Zn[3, c], Zn[4, c], Zn[5, c]
        Y[0, c] = i00 * a0_ + i01 * a1_ + i02 * a2_ + (h_1 * b2_ - h_2 * b1_)
        Y[1, c] = i01 * a0_ + i11 * a1_ + i12 * a2_ + (h_2 * b0_ - h_0 * b2_)
        Y[2, c] = i02 * a0_ + i12 * a1_ + i22 * a2_ + (h_0 * b1_ - h_1 * b0_)
        Y[3, c] = m * b0_ - (h_1 * a2_ - h_2 * a1_)
        Y[4, c] = m * b1_ - (h_2 * a0_ - h_0 * a2_)
        Y[5, c] = m * b2_ - (h_0 * a1_ - h_1 * a0_)
    for r in range(6):
        for c in range(r, 6):
            t = 0.0
            for x in range(6):
                t += Zn[x, r] * Y[x, c]
            Hn[ix[r], ix[c]] = t
            Hn[ix[c], ix[r]] = t


@njit(**_INL)
def _crba_block(parent, code, vidx, qidx, lvq, Et, rt, mass, h0, Ib0, arm, ix, nq, nx):
    """A block's own copies of the tree's constants (see :func:`_own`) and scratch for
    :func:`_crba_stage`: poses ``Ew`` (nb + 1, 3, 3) and ``pw`` (nb + 1, 3) with the world's identity
    pose in row nb (made every root's parent in the block's ``parent``), ``S`` (nb, 6), ``IC``
    (nb, 10), ``Z`` (2, 6, 6), the staged base blocks ``Xg`` (STAGE or ``nx`` = 0, 6, 6), and the
    staging buffers of ``nq`` joint positions, cosines and sines, base rotations (9 rows and a
    (3, 3, STAGE) view) and origins."""
    nb = parent.shape[0]
    parent_, code_, vidx_, qidx_, lvq_, Et_, rt_, Ib0_, arm_ = _own(
        parent, code, vidx, qidx, lvq, Et, rt, Ib0, arm
    )
    for i in range(nb):
        if parent_[i] < 0:
            parent_[i] = nb
    Ew = np.zeros((nb + 1, 3, 3))
    for x in range(3):
        Ew[nb, x, x] = 1.0
    Eb = np.empty((9, STAGE))
    return (
        (parent_, code_, vidx_, qidx_, lvq_, Et_, rt_, mass.copy(), h0.copy(), Ib0_, arm_, ix.copy()),
        (np.empty((STAGE if nx > 0 else 0, 6, 6)), Ew, np.zeros((nb + 1, 3)), np.empty((nb, 6)),
         np.empty((nb, 10)), np.empty((2, 6, 6))),
        (np.empty((nq, STAGE)), np.empty((nq, STAGE)), np.empty((nq, STAGE)), Eb, Eb.reshape((3, 3, STAGE)),
         np.empty((3, STAGE))),
    )  # fmt: skip


def _crba(parent, code, vidx, qidx, lvq, Et, rt, mass, h0, Ib0, q, lc, ls, E0, r0, arm, H, X, ix, nblk):
    """Joint-space inertia matrices ``H`` (N, nv, nv) written (both triangles), entry ``(a, b)`` of
    the tree's velocities at ``(ix[a], ix[b])`` (``ix`` (nv,)); with base blocks ``X`` (N, 6, 6) or
    (1, 6, 6) (one for all; (0, 6, 6): none) the base rows and columns multiplied by them as each
    matrix is made: ``T^T H T`` for ``T = blkdiag(X, P)``, ``ix`` the inverse of P's gather."""
    N = H.shape[0]
    NX = X.shape[0]
    for b in prange(nblk):
        consts, scratch, buffers = _crba_block(
            parent, code, vidx, qidx, lvq, Et, rt, mass, h0, Ib0, arm, ix, q.shape[0], NX
        )
        parent_, code_, vidx_, qidx_, lvq_, Et_, rt_, mass_, h0_, Ib0_, arm_, ix_ = consts
        Xg, Ew, pw, S, IC, Z = scratch
        qb, lcb, lsb, Eb, E3, rb = buffers
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, STAGE):
            nl = min(STAGE, stop - n0)
            _stage(q, n0, nl, qb)
            _stage(lc, n0, nl, lcb)
            _stage(ls, n0, nl, lsb)
            _stage(E0, n0, nl, Eb)
            _stage(r0, n0, nl, rb)
            for k in range(nl if NX > 0 else 0):
                xn = n0 + k if NX > 1 else 0
                for x in range(6):
                    for y in range(6):
                        Xg[k, x, y] = X[xn, x, y]
            _crba_stage(
                nl, parent_, code_, vidx_, qidx_, lvq_, Et_, rt_, mass_, h0_, Ib0_, qb, lcb, lsb, E3, rb,
                arm_, H[n0:], ix_, Xg, Ew, pw, S, IC, Z,
            )  # fmt: skip


# --------------------------------------------------------------------------- ABA
@njit(**_JIT)
def _aba_stage(
    nl, parent, code, vidx, qidx, lvq, Et, rt, mass, h0, Ib0, q, lc, ls, E0, r0, nu, tau, a0, arm, nud,
    Ew, pw, S, v, ch, IA, pA, U, du, w, W,
):  # fmt: skip
    """The states ``0 .. nl - 1`` of the staging buffers: forward dynamics in "world" coordinates (see
    :func:`_aba`). One call per group of states: a call counts references to its array arguments."""
    nb = parent.shape[0]
    has_arm = arm.shape[0] > 0
    tmp = w[0]
    g = w[1]
    for n in range(nl):
        a0c = n if a0.shape[1] > 1 else 0
        for x in range(6):
            v[nb, x] = 0.0  # the world (row nb) is at rest
        for i in range(nb):
            ci = code[i]
            p = parent[i]
            if ci == FREE:  # world-aligned coordinates at the base's origin r0
                for x in range(3):
                    pw[i, x] = 0.0
                    for y in range(3):
                        Ew[i, x, y] = E0[x, y, n]
                    tmp[x] = r0[x, n]
                    v[i, x] = nu[x, n]
                    v[i, 3 + x] = nu[3 + x, n]
                    ch[i, x] = 0.0
                    ch[i, 3 + x] = 0.0
                _shift_motion(tmp, v[i], -1.0)
                continue
            k = lvq[i]
            _pose_up(ci, q[qidx[i], n], lc[k, n], ls[k, n], Et, rt, Ew, pw, i, p)
            _world_subspace(ci, Ew, pw, S, i)
            # v = v_p + S qd, ch = ch_p + v_p x S qd (= v x S qd)
            qd = nu[vidx[i], n]
            sw0, sw1, sw2 = S[i, 0] * qd, S[i, 1] * qd, S[i, 2] * qd
            sv0, sv1, sv2 = S[i, 3] * qd, S[i, 4] * qd, S[i, 5] * qd
            w0, w1, w2 = v[p, 0], v[p, 1], v[p, 2]
            l0, l1, l2 = v[p, 3], v[p, 4], v[p, 5]
            ch[i, 0] = ch[p, 0] + w1 * sw2 - w2 * sw1
            ch[i, 1] = ch[p, 1] + w2 * sw0 - w0 * sw2
            ch[i, 2] = ch[p, 2] + w0 * sw1 - w1 * sw0
            ch[i, 3] = ch[p, 3] + w1 * sv2 - w2 * sv1 + l1 * sw2 - l2 * sw1
            ch[i, 4] = ch[p, 4] + w2 * sv0 - w0 * sv2 + l2 * sw0 - l0 * sw2
            ch[i, 5] = ch[p, 5] + w0 * sv1 - w1 * sv0 + l0 * sw1 - l1 * sw0
            v[i, 0], v[i, 1], v[i, 2] = w0 + sw0, w1 + sw1, w2 + sw2
            v[i, 3], v[i, 4], v[i, 5] = l0 + sv0, l1 + sv1, l2 + sv2
        for i in range(nb):  # independent of one another
            _world_rigid(Ew, pw, mass, h0, Ib0, v, ch, IA, pA, i)
        for i in range(nb - 1, -1, -1):
            ci = code[i]
            if ci == FREE:
                continue
            j = vidx[i]
            # U = IA S (IA symmetric: its upper triangle)
            d = arm[j] if has_arm else 0.0
            su = 0.0
            scale = 0.0
            for x in range(6):
                t = 0.0
                for y in range(6):
                    t += (IA[i, x, y] if x <= y else IA[i, y, x]) * S[i, y]
                U[i, x] = t
                d += S[i, x] * t
                su += S[i, x] * pA[i, x]
                scale = max(scale, abs(IA[i, x, x]))
            # a joint moving (almost) no inertia: NaN, and the caller falls back to the numpy kernel (whose
            # operations give the exact zero of a singular mass matrix where rounding here would not)
            dinv = 1.0 / d if abs(d) > SINGULAR * scale else np.nan
            u = tau[j, n] - su
            du[i, 0] = dinv
            du[i, 1] = u
            p = parent[i]  # a root's parent: row nb, not read
            # IA_p += IA - U U^T / d, pA_p += pA + U u / d: no transform in world coordinates
            for x in range(6):
                ux = U[i, x] * dinv
                for y in range(x, 6):
                    IA[p, x, y] += IA[i, x, y] - ux * U[i, y]
                pA[p, x] += pA[i, x] + ux * u
        acc = v  # the velocities are not needed any more: the accelerations minus the bias ones (a - ch)
        for x in range(6):
            acc[nb, x] = a0[x, a0c]  # the world's (a root's parent)
        for i in range(nb):
            ci = code[i]
            if ci == FREE:
                # IA a + pA = the base wrench (both at the base's origin); nu_dot = a (at the world's) - a0
                for x in range(3):
                    g[x] = r0[x, n]
                    tmp[x] = tau[x, n]
                    tmp[3 + x] = tau[3 + x, n]
                _shift_force(g, tmp)
                A = W.reshape((6, 6))
                for x in range(6):
                    tmp[x] -= pA[i, x]
                    for y in range(6):
                        A[x, y] = IA[i, x, y] if x <= y else IA[i, y, x]
                _solve6(A, tmp, acc[i])
                for x in range(6):
                    tmp[x] = acc[i, x]
                _shift_motion(g, tmp, 1.0)
                for x in range(6):
                    nud[x, n] = tmp[x] - a0[x, a0c]
                continue
            p = parent[i]
            t = 0.0
            for x in range(6):
                t += U[i, x] * acc[p, x]
            qdd = (du[i, 1] - t) * du[i, 0]
            for x in range(6):
                acc[i, x] = acc[p, x] + S[i, x] * qdd
            nud[vidx[i], n] = qdd


def _aba(
    parent, code, vidx, qidx, lvq, Et, rt, mass, h0, Ib0, q, lc, ls, E0, r0, nu, tau, a0, arm, nud, nblk
):  # fmt: skip
    """Forward dynamics: ``nud`` (nv, N) written (inf or NaN where a joint or the base moves no
    inertia).

    The articulated-body algorithm in the coordinates of the tree's frame of reference (a fixed
    tree's root frame; for a free tree, the world's axes at the base's origin, so that the
    articulated inertias, which add there without transforms, keep the precision of body
    coordinates however far the robot is from the world's origin): the bias accelerations ``c_i =
    v_i x S_i qd_i`` accumulate from the root into ``ch_i`` and enter the bias forces as ``I_i ch_i``,
    so that the recursions run on ``a_i - ch_i`` without bias terms (as :func:`.kernels.aba`); the
    articulated inertias are kept as upper triangles."""
    nb = parent.shape[0]
    N = nud.shape[1]
    for b in prange(nblk):
        parent_, code_, vidx_, qidx_, lvq_, Et_, rt_, Ib0_, arm_ = _own(
            parent, code, vidx, qidx, lvq, Et, rt, Ib0, arm
        )
        mass_, h0_ = mass.copy(), h0.copy()
        # row nb stands for the world (a root's parent): identity pose, at rest
        for i in range(nb):
            if parent_[i] < 0:
                parent_[i] = nb
        Ew = np.zeros((nb + 1, 3, 3))
        pw = np.zeros((nb + 1, 3))
        S = np.empty((nb, 6))
        v = np.zeros((nb + 1, 6))
        ch = np.zeros((nb + 1, 6))
        IA = np.empty((nb + 1, 6, 6))
        pA = np.empty((nb + 1, 6))
        for x in range(3):
            Ew[nb, x, x] = 1.0
        U = np.empty((nb, 6))
        du = np.empty((nb, 2))
        w = np.empty((2, 6))
        W = np.empty((4, 3, 3))
        qb, lcb, lsb, Eb, E3, rb, nub, ab = _state_buffers(q, lc, ls, nu)
        tb = np.empty((tau.shape[0], STAGE))
        ob = np.empty((nud.shape[0], STAGE))
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, STAGE):
            nl = min(STAGE, stop - n0)
            _stage_state(q, lc, ls, E0, r0, nu, a0, n0, nl, qb, lcb, lsb, Eb, rb, nub, ab)
            _stage(tau, n0, nl, tb)
            _aba_stage(
                nl, parent_, code_, vidx_, qidx_, lvq_, Et_, rt_, mass_, h0_, Ib0_, qb, lcb, lsb, E3, rb,
                nub, tb, ab, arm_, ob, Ew, pw, S, v, ch, IA, pA, U, du, w, W,
            )  # fmt: skip
            _unstage(ob, n0, nl, nud)


rnea_par = njit(parallel=True, **_JIT)(named(_rnea, "_par"))
rnea_ser = njit(**_JIT)(named(_rnea, "_ser"))
crba_par = njit(parallel=True, **_JIT)(named(_crba, "_par"))
crba_ser = njit(**_JIT)(named(_crba, "_ser"))
aba_par = njit(parallel=True, **_JIT)(named(_aba, "_par"))
aba_ser = njit(**_JIT)(named(_aba, "_ser"))
