"""Compiled (numba) RNEA, CRBA and ABA over a batch of states, in parallel over the batch.

The same algorithms as :mod:`.kernels` (the numpy reference, vectorised over the batch and looping
over depth levels), but state by state: each kernel runs ``prange`` over ``nblk`` blocks of states
(a few per thread), and for every state loops over the bodies in scalar code on a few
small per-block scratch arrays (no temporaries per state, no 6x6 products: transforms are kept as
``(E, r)`` pairs of ``plux(E, r)``, composite inertias as ``(m, h, Ibar)``, and the articulated
inertias' congruences ``X^T IA X`` use the block structure of X). Everything is float64, in the
tree's internal body order (parents before children) and body coordinates; inputs and outputs are
batch-last like :mod:`.kernels`' (``q`` (nq, N), poses ``E0`` (3, 3, N), ``r0`` (3, N), ...),
except the CRBA's matrices (N, nv, nv), written straight into the caller's array.

Conventions (spatial_v2's, see :mod:`.kernels`): joint codes 0..5 are Rx, Ry, Rz, Px, Py, Pz, 6 a
free body (body 0 of a free tree, whose generalized velocity is its spatial velocity in world
coordinates); ``a0`` (6, 1) or (6, N) the acceleration of the fixed world (``-a_grav``).

This module imports numba at its top and is imported only through :func:`.compiled.compiled_kernels`
(numba installed, ``BRIDGE_NUMBA`` not ``0``). Compiled code is cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["aba_par", "aba_ser", "crba_par", "crba_ser", "rnea_par", "rnea_ser"]

_JIT = {"cache": True, "nogil": True, "error_model": "numpy", "fastmath": {"contract"}}
#: the small helpers are inlined in numba's IR: their array views then live in one function, whose
#: reference counting numba prunes (called, every view is an atomic increment and decrement)
_INL = {**_JIT, "inline": "always"}
FREE = 6
#: a block's states are copied in groups of this many into small batch-last buffers: rows of a few
#: cache lines, not of N columns (whose rows, N * 8 bytes apart, would compete for the same cache sets)
STAGE = 16


# --------------------------------------------------------------------------- small spatial helpers
@njit(**_INL)
def _joint_up(code, qv, c, s, Et, rt, E, r):
    """``Xup = XJ(code, qv) Xtree`` as ``plux(E, r)``: E (3, 3), r (3,) written (``c``, ``s`` the
    cosine and sine of qv)."""
    if code < 3:
        k1 = (code + 1) % 3
        k2 = (code + 2) % 3
        for j in range(3):
            E[code, j] = Et[code, j]
            E[k1, j] = c * Et[k1, j] + s * Et[k2, j]
            E[k2, j] = c * Et[k2, j] - s * Et[k1, j]
            r[j] = rt[j]
    else:
        k = code - 3
        for j in range(3):
            for i in range(3):
                E[i, j] = Et[i, j]
            r[j] = rt[j] + Et[k, j] * qv


@njit(**_INL)
def _xm(E, r, m, out):
    """``out = plux(E, r) m`` (motion), out not aliasing m."""
    w0, w1, w2 = m[0], m[1], m[2]
    t0 = m[3] - (r[1] * w2 - r[2] * w1)
    t1 = m[4] - (r[2] * w0 - r[0] * w2)
    t2 = m[5] - (r[0] * w1 - r[1] * w0)
    for i in range(3):
        out[i] = E[i, 0] * w0 + E[i, 1] * w1 + E[i, 2] * w2
        out[3 + i] = E[i, 0] * t0 + E[i, 1] * t1 + E[i, 2] * t2


@njit(**_INL)
def _xm_inv(E, r, m, out):
    """``out = plux(E, r)^-1 m = [E^T w; E^T v + r x E^T w]`` (motion)."""
    w0 = E[0, 0] * m[0] + E[1, 0] * m[1] + E[2, 0] * m[2]
    w1 = E[0, 1] * m[0] + E[1, 1] * m[1] + E[2, 1] * m[2]
    w2 = E[0, 2] * m[0] + E[1, 2] * m[1] + E[2, 2] * m[2]
    v0 = E[0, 0] * m[3] + E[1, 0] * m[4] + E[2, 0] * m[5]
    v1 = E[0, 1] * m[3] + E[1, 1] * m[4] + E[2, 1] * m[5]
    v2 = E[0, 2] * m[3] + E[1, 2] * m[4] + E[2, 2] * m[5]
    out[0], out[1], out[2] = w0, w1, w2
    out[3] = v0 + r[1] * w2 - r[2] * w1
    out[4] = v1 + r[2] * w0 - r[0] * w2
    out[5] = v2 + r[0] * w1 - r[1] * w0


@njit(**_INL)
def _xtf(E, r, f, out, add):
    """``out (+)= plux(E, r)^T f = [E^T n + r x E^T fl; E^T fl]`` (force, child to parent)."""
    l0 = E[0, 0] * f[3] + E[1, 0] * f[4] + E[2, 0] * f[5]
    l1 = E[0, 1] * f[3] + E[1, 1] * f[4] + E[2, 1] * f[5]
    l2 = E[0, 2] * f[3] + E[1, 2] * f[4] + E[2, 2] * f[5]
    n0 = E[0, 0] * f[0] + E[1, 0] * f[1] + E[2, 0] * f[2] + r[1] * l2 - r[2] * l1
    n1 = E[0, 1] * f[0] + E[1, 1] * f[1] + E[2, 1] * f[2] + r[2] * l0 - r[0] * l2
    n2 = E[0, 2] * f[0] + E[1, 2] * f[1] + E[2, 2] * f[2] + r[0] * l1 - r[1] * l0
    if add:
        out[0] += n0
        out[1] += n1
        out[2] += n2
        out[3] += l0
        out[4] += l1
        out[5] += l2
    else:
        out[0], out[1], out[2], out[3], out[4], out[5] = n0, n1, n2, l0, l1, l2


@njit(**_INL)
def _xsf(E, r, f, out):
    """``out = plux(E, r)^-T f = [E (n - r x fl); E fl]`` (force, world to body)."""
    t0 = f[0] - (r[1] * f[5] - r[2] * f[4])
    t1 = f[1] - (r[2] * f[3] - r[0] * f[5])
    t2 = f[2] - (r[0] * f[4] - r[1] * f[3])
    for i in range(3):
        out[i] = E[i, 0] * t0 + E[i, 1] * t1 + E[i, 2] * t2
        out[3 + i] = E[i, 0] * f[3] + E[i, 1] * f[4] + E[i, 2] * f[5]


@njit(**_INL)
def _crm_axis(v, code, qd, out):
    """``out += crm(v) S qd`` for the joint axis S = e_code (6,)."""
    k = code % 3
    k1 = (k + 1) % 3
    k2 = (k + 2) % 3
    if code < 3:  # v x [e_k; 0] qd = [w x e_k; vl x e_k] qd
        out[k1] += v[k2] * qd
        out[k2] -= v[k1] * qd
        out[3 + k1] += v[3 + k2] * qd
        out[3 + k2] -= v[3 + k1] * qd
    else:  # v x [0; e_k] qd = [0; w x e_k] qd
        out[3 + k1] += v[k2] * qd
        out[3 + k2] -= v[k1] * qd


@njit(**_INL)
def _body_force(I6, v, a, out, with_a):
    """``out = I a + v x* (I v)`` (6,) with the 6x6 inertia I6 (``I a`` left out without
    ``with_a``). In scalars: a round trip of I v through memory costs a store-forwarding stall."""
    v0, v1, v2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
    h0 = I6[0, 0] * v0 + I6[0, 1] * v1 + I6[0, 2] * v2 + I6[0, 3] * v3 + I6[0, 4] * v4 + I6[0, 5] * v5
    h1 = I6[1, 0] * v0 + I6[1, 1] * v1 + I6[1, 2] * v2 + I6[1, 3] * v3 + I6[1, 4] * v4 + I6[1, 5] * v5
    h2 = I6[2, 0] * v0 + I6[2, 1] * v1 + I6[2, 2] * v2 + I6[2, 3] * v3 + I6[2, 4] * v4 + I6[2, 5] * v5
    h3 = I6[3, 0] * v0 + I6[3, 1] * v1 + I6[3, 2] * v2 + I6[3, 3] * v3 + I6[3, 4] * v4 + I6[3, 5] * v5
    h4 = I6[4, 0] * v0 + I6[4, 1] * v1 + I6[4, 2] * v2 + I6[4, 3] * v3 + I6[4, 4] * v4 + I6[4, 5] * v5
    h5 = I6[5, 0] * v0 + I6[5, 1] * v1 + I6[5, 2] * v2 + I6[5, 3] * v3 + I6[5, 4] * v4 + I6[5, 5] * v5
    f0 = v1 * h2 - v2 * h1 + v4 * h5 - v5 * h4
    f1 = v2 * h0 - v0 * h2 + v5 * h3 - v3 * h5
    f2 = v0 * h1 - v1 * h0 + v3 * h4 - v4 * h3
    f3 = v1 * h5 - v2 * h4
    f4 = v2 * h3 - v0 * h5
    f5 = v0 * h4 - v1 * h3
    if with_a:
        a0, a1, a2, a3, a4, a5 = a[0], a[1], a[2], a[3], a[4], a[5]
        f0 += I6[0, 0] * a0 + I6[0, 1] * a1 + I6[0, 2] * a2 + I6[0, 3] * a3 + I6[0, 4] * a4 + I6[0, 5] * a5
        f1 += I6[1, 0] * a0 + I6[1, 1] * a1 + I6[1, 2] * a2 + I6[1, 3] * a3 + I6[1, 4] * a4 + I6[1, 5] * a5
        f2 += I6[2, 0] * a0 + I6[2, 1] * a1 + I6[2, 2] * a2 + I6[2, 3] * a3 + I6[2, 4] * a4 + I6[2, 5] * a5
        f3 += I6[3, 0] * a0 + I6[3, 1] * a1 + I6[3, 2] * a2 + I6[3, 3] * a3 + I6[3, 4] * a4 + I6[3, 5] * a5
        f4 += I6[4, 0] * a0 + I6[4, 1] * a1 + I6[4, 2] * a2 + I6[4, 3] * a3 + I6[4, 4] * a4 + I6[4, 5] * a5
        f5 += I6[5, 0] * a0 + I6[5, 1] * a1 + I6[5, 2] * a2 + I6[5, 3] * a3 + I6[5, 4] * a4 + I6[5, 5] * a5
    out[0], out[1], out[2], out[3], out[4], out[5] = f0, f1, f2, f3, f4, f5


@njit(**_INL)
def _crf_add(v, h, out):
    """``out += v x* h = [w x n + vl x f; w x f]``."""
    out[0] += v[1] * h[2] - v[2] * h[1] + v[4] * h[5] - v[5] * h[4]
    out[1] += v[2] * h[0] - v[0] * h[2] + v[5] * h[3] - v[3] * h[5]
    out[2] += v[0] * h[1] - v[1] * h[0] + v[3] * h[4] - v[4] * h[3]
    out[3] += v[1] * h[5] - v[2] * h[4]
    out[4] += v[2] * h[3] - v[0] * h[5]
    out[5] += v[0] * h[4] - v[1] * h[3]


@njit(**_INL)
def _a0col(a0, n):
    return a0[:, n if a0.shape[1] > 1 else 0]


@njit(**_INL)
def _stage(src, n0, nl, dst):
    """``dst[x, l] = src[x, n0 + l]`` (l < nl; every l from column 0 when src has one column)."""
    one = src.shape[1] == 1
    for x in range(src.shape[0]):
        for l in range(nl):
            dst[x, l] = src[x, 0 if one else n0 + l]


@njit(**_INL)
def _unstage(src, n0, nl, dst):
    """``dst[x, n0 + l] = src[x, l]`` (l < nl)."""
    for x in range(dst.shape[0]):
        for l in range(nl):
            dst[x, n0 + l] = src[x, l]


# --------------------------------------------------------------------------- RNEA
@njit(**_JIT)
def _rnea_one(n, parent, code, vidx, qidx, lvq, Et, rt, I6, q, lc, ls, E0, r0, nu, nud, a0, arm, tau, XE, Xr, v, a, f, w):
    nb = parent.shape[0]
    a0n = _a0col(a0, n)
    has_nu = nu.shape[0] > 0
    has_nud = nud.shape[0] > 0
    tmp = w[0]
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
        XE = np.empty((nb, 3, 3))
        Xr = np.empty((nb, 3))
        v = np.empty((nb, 6))
        a = np.empty((nb, 6))
        f = np.empty((nb, 6))
        w = np.empty((2, 6))
        qb = np.empty((q.shape[0], STAGE))
        lcb = np.empty((lc.shape[0], STAGE))
        lsb = np.empty((ls.shape[0], STAGE))
        Eb = np.empty((9, STAGE))
        rb = np.empty((3, STAGE))
        nub = np.empty((nu.shape[0], STAGE))
        nudb = np.empty((nud.shape[0], STAGE))
        ab = np.empty((6, STAGE))
        tb = np.empty((tau.shape[0], STAGE))
        E3 = Eb.reshape((3, 3, STAGE))
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, STAGE):
            nl = min(STAGE, stop - n0)
            _stage(q, n0, nl, qb)
            _stage(lc, n0, nl, lcb)
            _stage(ls, n0, nl, lsb)
            _stage(E0, n0, nl, Eb)
            _stage(r0, n0, nl, rb)
            _stage(nu, n0, nl, nub)
            _stage(nud, n0, nl, nudb)
            _stage(a0, n0, nl, ab)
            for n in range(nl):
                _rnea_one(n, parent, code, vidx, qidx, lvq, Et, rt, I6, qb, lcb, lsb, E3, rb, nub, nudb, ab, arm, tb, XE, Xr, v, a, f, w)
            _unstage(tb, n0, nl, tau)


# --------------------------------------------------------------------------- CRBA
@njit(**_INL)
def _inertia_to_parent(E, r, m, h, Ib, hp, Ibp, g, T):
    """Add the rigid-body inertia ``(m, h, Ib)`` (mass, first moment, rotational inertia about the
    origin; child coordinates) expressed in the parent's coordinates (``plux(E, r)`` the child's
    Xup) to ``(hp, Ibp)`` (the mass adds separately). ``g`` (3,), ``T`` (3, 3) scratch."""
    for x in range(3):
        g[x] = E[0, x] * h[0] + E[1, x] * h[1] + E[2, x] * h[2]
    gr = g[0] * r[0] + g[1] * r[1] + g[2] * r[2]
    rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
    # T = Ib E
    for x in range(3):
        for y in range(3):
            T[x, y] = Ib[x, 0] * E[0, y] + Ib[x, 1] * E[1, y] + Ib[x, 2] * E[2, y]
    for x in range(3):
        for y in range(3):
            s = E[0, x] * T[0, y] + E[1, x] * T[1, y] + E[2, x] * T[2, y]
            s -= r[x] * g[y] + g[x] * r[y] + m * r[x] * r[y]
            if x == y:
                s += 2.0 * gr + m * rr
            Ibp[x, y] += s
        hp[x] += g[x] + m * r[x]


@njit(**_JIT)
def _crba_one(n, parent, code, vidx, qidx, lvq, Et, rt, mass, h0, Ib0, q, lc, ls, E0, r0, arm, H, XE, Xr, m, h, Ib, w, W):
    nb = parent.shape[0]
    nv = H.shape[1]
    Hn = H[n]
    Hn[:, :] = 0.0
    for i in range(nb):
        if code[i] == FREE:
            for x in range(3):
                Xr[i, x] = r0[x, n]
                for y in range(3):
                    XE[i, x, y] = E0[x, y, n]
        else:
            _joint_up(code[i], q[qidx[i], n], lc[lvq[i], n], ls[lvq[i], n], Et[i], rt[i], XE[i], Xr[i])
        m[i] = mass[i]
        h[i] = h0[i]
        Ib[i] = Ib0[i]
    for i in range(nb - 1, 0, -1):
        p = parent[i]
        if p >= 0:
            m[p] += m[i]
            _inertia_to_parent(XE[i], Xr[i], m[i], h[i], Ib[i], h[p], Ib[p], w[2], W[0])
    F = w[0]
    G = w[1]
    for i in range(nb):
        c = code[i]
        if c == FREE:  # the whole tree's composite inertia in world coordinates
            hw = w[3]
            Iw = W[1]
            hw[:] = 0.0
            Iw[:, :] = 0.0
            _inertia_to_parent(XE[i], Xr[i], m[i], h[i], Ib[i], hw, Iw, w[2], W[0])
            for x in range(3):
                for y in range(3):
                    Hn[x, y] = Iw[x, y]
                Hn[3 + x, 3 + x] = m[i]
            Hn[0, 4], Hn[0, 5], Hn[1, 5] = -hw[2], hw[1], -hw[0]
            Hn[1, 3], Hn[2, 3], Hn[2, 4] = hw[2], -hw[1], hw[0]
            for x in range(3):
                for y in range(3):
                    Hn[3 + y, x] = Hn[x, 3 + y]
            continue
        # F = IC_i e_c: column c of [[Ib, h^], [-h^, m 1]]
        hi = h[i]
        if c < 3:
            for x in range(3):
                F[x] = Ib[i, x, c]
            F[3], F[4], F[5] = 0.0, 0.0, 0.0
            k1 = (c + 1) % 3
            k2 = (c + 2) % 3
            F[3 + k1] = -hi[k2]  # -h^ e_c = e_c x h
            F[3 + k2] = hi[k1]
        else:
            k = c - 3
            k1 = (k + 1) % 3
            k2 = (k + 2) % 3
            F[0], F[1], F[2] = 0.0, 0.0, 0.0
            F[k1] = hi[k2]  # h^ e_k = h x e_k
            F[k2] = -hi[k1]
            F[3], F[4], F[5] = 0.0, 0.0, 0.0
            F[c] = m[i]
        j = vidx[i]
        Hn[j, j] = F[c] + (arm[j] if arm.shape[0] > 0 else 0.0)
        k = i
        while parent[k] >= 0:
            _xtf(XE[k], Xr[k], F, G, False)
            k = parent[k]
            if code[k] == FREE:
                _xtf(XE[k], Xr[k], G, F, False)
                for x in range(6):
                    Hn[x, j] = F[x]
                    Hn[j, x] = F[x]
                break
            jk = vidx[k]
            Hn[jk, j] = G[code[k]]
            Hn[j, jk] = G[code[k]]
            for x in range(6):
                F[x] = G[x]
    _ = nv


def _crba(parent, code, vidx, qidx, lvq, Et, rt, mass, h0, Ib0, q, lc, ls, E0, r0, arm, H, nblk):
    """Joint-space inertia matrices ``H`` (N, nv, nv) written (both triangles)."""
    nb = parent.shape[0]
    N = H.shape[0]
    for b in prange(nblk):
        XE = np.empty((nb, 3, 3))
        Xr = np.empty((nb, 3))
        m = np.empty(nb)
        h = np.empty((nb, 3))
        Ib = np.empty((nb, 3, 3))
        w = np.empty((4, 6))
        W = np.empty((2, 3, 3))
        qb = np.empty((q.shape[0], STAGE))
        lcb = np.empty((lc.shape[0], STAGE))
        lsb = np.empty((ls.shape[0], STAGE))
        Eb = np.empty((9, STAGE))
        rb = np.empty((3, STAGE))
        E3 = Eb.reshape((3, 3, STAGE))
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, STAGE):
            nl = min(STAGE, stop - n0)
            _stage(q, n0, nl, qb)
            _stage(lc, n0, nl, lcb)
            _stage(ls, n0, nl, lsb)
            _stage(E0, n0, nl, Eb)
            _stage(r0, n0, nl, rb)
            for n in range(nl):
                _crba_one(n, parent, code, vidx, qidx, lvq, Et, rt, mass, h0, Ib0, qb, lcb, lsb, E3, rb, arm, H[n0:], XE, Xr, m, h, Ib, w, W)


# --------------------------------------------------------------------------- ABA
@njit(**_INL)
def _mm3(A, B, out, sign):
    """``out += sign * A B`` (3x3)."""
    for x in range(3):
        for y in range(3):
            out[x, y] += sign * (A[x, 0] * B[0, y] + A[x, 1] * B[1, y] + A[x, 2] * B[2, y])


@njit(**_INL)
def _congruence_add(E, r, A, dst, W):
    """``dst += X^T A X`` for symmetric A (6, 6), ``X = plux(E, r) = [[E, 0], [0, E]] [[1, 0],
    [-r^, 1]]``: blocks ``B = E6^T A E6``, then ``R^T B R = [[B11 + r^ B21 - B12 r^ - r^ B22 r^,
    B12 + r^ B22], [sym., B22]]``. ``W`` (7, 3, 3) scratch."""
    B11, B12, B22, T, S, C, D = W[0], W[1], W[2], W[3], W[4], W[5], W[6]
    for blk in range(3):
        r0_ = 0 if blk < 2 else 3
        c0_ = 0 if blk == 0 else 3
        Bk = W[blk]
        for x in range(3):  # T = A_blk E
            for y in range(3):
                T[x, y] = (
                    A[r0_ + x, c0_] * E[0, y] + A[r0_ + x, c0_ + 1] * E[1, y] + A[r0_ + x, c0_ + 2] * E[2, y]
                )
        for x in range(3):  # B = E^T T
            for y in range(3):
                Bk[x, y] = E[0, x] * T[0, y] + E[1, x] * T[1, y] + E[2, x] * T[2, y]
    S[0, 0], S[0, 1], S[0, 2] = 0.0, -r[2], r[1]
    S[1, 0], S[1, 1], S[1, 2] = r[2], 0.0, -r[0]
    S[2, 0], S[2, 1], S[2, 2] = -r[1], r[0], 0.0
    C[:, :] = B12  # C = B12 + S B22 (top right)
    _mm3(S, B22, C, 1.0)
    D[:, :] = B11  # D = B11 + S B21 - B12 S - S B22 S = B11 + S B12^T - C S
    for x in range(3):
        for y in range(3):
            D[x, y] += S[x, 0] * B12[y, 0] + S[x, 1] * B12[y, 1] + S[x, 2] * B12[y, 2]
    _mm3(C, S, D, -1.0)
    for x in range(3):
        for y in range(3):
            dst[x, y] += D[x, y]
            dst[x, 3 + y] += C[x, y]
            dst[3 + y, x] += C[x, y]
            dst[3 + x, 3 + y] += B22[x, y]


@njit(**_INL)
def _solve6(A, b, out):
    """``out = A^-1 b`` (6,) by Gaussian elimination without pivoting (A (6, 6) symmetric positive
    definite, overwritten), as :func:`.batch_math.solve6`; a singular A gives inf or NaN."""
    for x in range(6):
        out[x] = b[x]
    for k in range(5):
        for x in range(k + 1, 6):
            f = A[x, k] / A[k, k]
            for y in range(k + 1, 6):
                A[x, y] -= f * A[k, y]
            out[x] -= f * out[k]
    for k in range(5, -1, -1):
        t = out[k]
        for y in range(k + 1, 6):
            t -= A[k, y] * out[y]
        out[k] = t / A[k, k]


@njit(**_JIT)
def _aba_one(
    n, parent, code, vidx, qidx, lvq, Et, rt, I6, q, lc, ls, E0, r0, nu, tau, a0, arm, nud, XE, Xr, v, c, IA, pA, U, du, IA6, W, w
):
    nb = parent.shape[0]
    a0n = _a0col(a0, n)
    has_arm = arm.shape[0] > 0
    tmp = w[0]
    for i in range(nb):
        ci = code[i]
        c[i, :] = 0.0
        if ci == FREE:
            for x in range(3):
                Xr[i, x] = r0[x, n]
                for y in range(3):
                    XE[i, x, y] = E0[x, y, n]
            for x in range(6):
                tmp[x] = nu[x, n]
            _xm(XE[i], Xr[i], tmp, v[i])
        else:
            p = parent[i]
            _joint_up(ci, q[qidx[i], n], lc[lvq[i], n], ls[lvq[i], n], Et[i], rt[i], XE[i], Xr[i])
            if p >= 0:
                _xm(XE[i], Xr[i], v[p], v[i])
            else:
                v[i, :] = 0.0
            qd = nu[vidx[i], n]
            v[i, ci] += qd
            _crm_axis(v[i], ci, qd, c[i])
        IA[i] = I6[i]
        _body_force(I6[i], v[i], v[i], pA[i], False)
    Ia = IA6
    pa = w[1]
    for i in range(nb - 1, -1, -1):
        ci = code[i]
        if ci == FREE:
            continue
        j = vidx[i]
        for x in range(6):
            U[i, x] = IA[i, x, ci]
        d = U[i, ci] + (arm[j] if has_arm else 0.0)
        dinv = 1.0 / d
        u = tau[j, n] - pA[i, ci]
        du[i, 0] = dinv
        du[i, 1] = u
        p = parent[i]
        if p < 0:
            continue
        # Ia = IA - U U^T / d, pa = pA + Ia c + U u / d
        for x in range(6):
            for y in range(6):
                Ia[x, y] = IA[i, x, y] - U[i, x] * U[i, y] * dinv
        for x in range(6):
            s = pA[i, x] + U[i, x] * u * dinv
            for y in range(6):
                s += Ia[x, y] * c[i, y]
            pa[x] = s
        _congruence_add(XE[i], Xr[i], Ia, IA[p], W)
        _xtf(XE[i], Xr[i], pa, pA[p], True)
    acc = v  # the velocities are not needed any more: reuse them for the accelerations
    for i in range(nb):
        ci = code[i]
        if ci == FREE:
            # IA a + pA = the base wrench in body coordinates; a = X0 (a_base + a0)
            for x in range(6):
                tmp[x] = tau[x, n]
            _xsf(XE[i], Xr[i], tmp, pa)
            for x in range(6):
                pa[x] -= pA[i, x]
            Ia[:, :] = IA[i]
            _solve6(Ia, pa, acc[i])
            _xm_inv(XE[i], Xr[i], acc[i], tmp)
            for x in range(6):
                nud[x, n] = tmp[x] - a0n[x]
            continue
        p = parent[i]
        if p >= 0:
            _xm(XE[i], Xr[i], acc[p], tmp)
        else:
            _xm(XE[i], Xr[i], a0n, tmp)
        s = 0.0
        for x in range(6):
            tmp[x] += c[i, x]
            s += U[i, x] * tmp[x]
        qdd = (du[i, 1] - s) * du[i, 0]
        tmp[ci] += qdd
        acc[i, :] = tmp
        nud[vidx[i], n] = qdd


def _aba(parent, code, vidx, qidx, lvq, Et, rt, I6, q, lc, ls, E0, r0, nu, tau, a0, arm, nud, nblk):
    """Forward dynamics: ``nud`` (nv, N) written (inf or NaN where a joint or the base moves no
    inertia)."""
    nb = parent.shape[0]
    N = nud.shape[1]
    for b in prange(nblk):
        XE = np.empty((nb, 3, 3))
        Xr = np.empty((nb, 3))
        v = np.empty((nb, 6))
        c = np.empty((nb, 6))
        IA = np.empty((nb, 6, 6))
        pA = np.empty((nb, 6))
        U = np.empty((nb, 6))
        du = np.empty((nb, 2))
        IA6 = np.empty((6, 6))
        W = np.empty((7, 3, 3))
        w = np.empty((2, 6))
        qb = np.empty((q.shape[0], STAGE))
        lcb = np.empty((lc.shape[0], STAGE))
        lsb = np.empty((ls.shape[0], STAGE))
        Eb = np.empty((9, STAGE))
        rb = np.empty((3, STAGE))
        nub = np.empty((nu.shape[0], STAGE))
        tb = np.empty((tau.shape[0], STAGE))
        ab = np.empty((6, STAGE))
        ob = np.empty((nud.shape[0], STAGE))
        E3 = Eb.reshape((3, 3, STAGE))
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, STAGE):
            nl = min(STAGE, stop - n0)
            _stage(q, n0, nl, qb)
            _stage(lc, n0, nl, lcb)
            _stage(ls, n0, nl, lsb)
            _stage(E0, n0, nl, Eb)
            _stage(r0, n0, nl, rb)
            _stage(nu, n0, nl, nub)
            _stage(tau, n0, nl, tb)
            _stage(a0, n0, nl, ab)
            for n in range(nl):
                _aba_one(
                    n, parent, code, vidx, qidx, lvq, Et, rt, I6, qb, lcb, lsb, E3, rb, nub, tb, ab, arm, ob,
                    XE, Xr, v, c, IA, pA, U, du, IA6, W, w,
                )  # fmt: skip
            _unstage(ob, n0, nl, nud)


rnea_par = njit(parallel=True, **_JIT)(_rnea)
rnea_ser = njit(**_JIT)(_rnea)
crba_par = njit(parallel=True, **_JIT)(_crba)
crba_ser = njit(**_JIT)(_crba)
aba_par = njit(parallel=True, **_JIT)(_aba)
aba_ser = njit(**_JIT)(_aba)
