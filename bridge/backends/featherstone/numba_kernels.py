"""Compiled (numba) RNEA, CRBA and ABA over a batch of states, in parallel over the batch.

The same algorithms as :mod:`.kernels` (the numpy reference, vectorised over the whole batch and
looping over depth levels), compiled: each kernel runs ``prange`` over ``nblk`` blocks of states (a
few per thread); a block runs ``LANES`` consecutive states at a time through the recursions over
the bodies, every small operation looping over those lanes last (contiguous: the compiler turns
them into SIMD instructions), on a few per-block scratch arrays (no temporaries per state, no
dense 6x6 transforms: a transform is ``plux(E, r)``, a composite inertia ``(m, h, Ibar)``, and the
congruences ``X^T IA X`` of the articulated inertias use X's block structure). Everything is
float64, in the tree's internal body order (parents before children) and body coordinates; inputs
and outputs are batch-last like :mod:`.kernels`' (``q`` (nq, N), base poses ``E0`` (3, 3, N),
``r0`` (3, N), ...), except the CRBA's matrices (N, nv, nv), written straight into the caller's
array.

Conventions (spatial_v2's, see :mod:`.kernels`): joint codes 0..5 are Rx, Ry, Rz, Px, Py, Pz, 6 a
free body (body 0 of a free tree, whose generalized velocity is its spatial velocity in world
coordinates); ``a0`` (6, 1) or (6, N) the acceleration of the fixed world (``-a_grav``).

This module imports numba at its top and is imported only through :mod:`.compiled` (numba
installed, ``BRIDGE_NUMBA`` not ``0``). Compiled code is cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["LANES", "aba_par", "aba_ser", "crba_par", "crba_ser", "rnea_par", "rnea_ser"]

_JIT = {"cache": True, "nogil": True, "error_model": "numpy", "fastmath": {"contract"}}
FREE = 6
#: states run side by side through a block's recursions (4 doubles: one AVX2 register)
LANES = 4


# --------------------------------------------------------------------------- small spatial helpers
# Every helper works on ``nl`` lanes: arrays (..., LANES), the lanes last.
@njit(**_JIT)
def _poses(n0, nl, code, qidx, Et, rt, q, E0, r0, XE, Xr):
    """Every body's ``Xup = XJ(q) Xtree = plux(E, r)`` into XE (nb, 3, 3, L), Xr (nb, 3, L) (a
    free body's: its pose ``plux(E0, r0)``)."""
    for i in range(code.shape[0]):
        c = code[i]
        E = XE[i]
        r = Xr[i]
        if c == FREE:
            for l in range(nl):
                for x in range(3):
                    r[x, l] = r0[x, n0 + l]
                    for y in range(3):
                        E[x, y, l] = E0[x, y, n0 + l]
        elif c < 3:
            k1 = (c + 1) % 3
            k2 = (c + 2) % 3
            T = Et[i]
            row = qidx[i]
            for l in range(nl):
                qv = q[row, n0 + l]
                cq = np.cos(qv)
                sq = np.sin(qv)
                for j in range(3):
                    E[c, j, l] = T[c, j]
                    E[k1, j, l] = cq * T[k1, j] + sq * T[k2, j]
                    E[k2, j, l] = cq * T[k2, j] - sq * T[k1, j]
                    r[j, l] = rt[i, j]
        else:
            k = c - 3
            row = qidx[i]
            for l in range(nl):
                qv = q[row, n0 + l]
                for j in range(3):
                    for x in range(3):
                        E[x, j, l] = Et[i, x, j]
                    r[j, l] = rt[i, j] + Et[i, k, j] * qv


@njit(**_JIT)
def _xm(E, r, m, out, nl):
    """``out = plux(E, r) m`` (motion), out not aliasing m."""
    for l in range(nl):
        w0, w1, w2 = m[0, l], m[1, l], m[2, l]
        t0 = m[3, l] - (r[1, l] * w2 - r[2, l] * w1)
        t1 = m[4, l] - (r[2, l] * w0 - r[0, l] * w2)
        t2 = m[5, l] - (r[0, l] * w1 - r[1, l] * w0)
        for i in range(3):
            out[i, l] = E[i, 0, l] * w0 + E[i, 1, l] * w1 + E[i, 2, l] * w2
            out[3 + i, l] = E[i, 0, l] * t0 + E[i, 1, l] * t1 + E[i, 2, l] * t2


@njit(**_JIT)
def _xm_inv(E, r, m, out, nl):
    """``out = plux(E, r)^-1 m = [E^T w; E^T v + r x E^T w]`` (motion)."""
    for l in range(nl):
        w0 = E[0, 0, l] * m[0, l] + E[1, 0, l] * m[1, l] + E[2, 0, l] * m[2, l]
        w1 = E[0, 1, l] * m[0, l] + E[1, 1, l] * m[1, l] + E[2, 1, l] * m[2, l]
        w2 = E[0, 2, l] * m[0, l] + E[1, 2, l] * m[1, l] + E[2, 2, l] * m[2, l]
        v0 = E[0, 0, l] * m[3, l] + E[1, 0, l] * m[4, l] + E[2, 0, l] * m[5, l]
        v1 = E[0, 1, l] * m[3, l] + E[1, 1, l] * m[4, l] + E[2, 1, l] * m[5, l]
        v2 = E[0, 2, l] * m[3, l] + E[1, 2, l] * m[4, l] + E[2, 2, l] * m[5, l]
        out[0, l] = w0
        out[1, l] = w1
        out[2, l] = w2
        out[3, l] = v0 + r[1, l] * w2 - r[2, l] * w1
        out[4, l] = v1 + r[2, l] * w0 - r[0, l] * w2
        out[5, l] = v2 + r[0, l] * w1 - r[1, l] * w0


@njit(**_JIT)
def _xtf(E, r, f, out, add, nl):
    """``out (+)= plux(E, r)^T f = [E^T n + r x E^T fl; E^T fl]`` (force, child to parent)."""
    s = 1.0 if add else 0.0
    for l in range(nl):
        l0 = E[0, 0, l] * f[3, l] + E[1, 0, l] * f[4, l] + E[2, 0, l] * f[5, l]
        l1 = E[0, 1, l] * f[3, l] + E[1, 1, l] * f[4, l] + E[2, 1, l] * f[5, l]
        l2 = E[0, 2, l] * f[3, l] + E[1, 2, l] * f[4, l] + E[2, 2, l] * f[5, l]
        n0 = E[0, 0, l] * f[0, l] + E[1, 0, l] * f[1, l] + E[2, 0, l] * f[2, l] + r[1, l] * l2 - r[2, l] * l1
        n1 = E[0, 1, l] * f[0, l] + E[1, 1, l] * f[1, l] + E[2, 1, l] * f[2, l] + r[2, l] * l0 - r[0, l] * l2
        n2 = E[0, 2, l] * f[0, l] + E[1, 2, l] * f[1, l] + E[2, 2, l] * f[2, l] + r[0, l] * l1 - r[1, l] * l0
        out[0, l] = s * out[0, l] + n0
        out[1, l] = s * out[1, l] + n1
        out[2, l] = s * out[2, l] + n2
        out[3, l] = s * out[3, l] + l0
        out[4, l] = s * out[4, l] + l1
        out[5, l] = s * out[5, l] + l2


@njit(**_JIT)
def _xsf(E, r, f, out, nl):
    """``out = plux(E, r)^-T f = [E (n - r x fl); E fl]`` (force, world to body)."""
    for l in range(nl):
        t0 = f[0, l] - (r[1, l] * f[5, l] - r[2, l] * f[4, l])
        t1 = f[1, l] - (r[2, l] * f[3, l] - r[0, l] * f[5, l])
        t2 = f[2, l] - (r[0, l] * f[4, l] - r[1, l] * f[3, l])
        for i in range(3):
            out[i, l] = E[i, 0, l] * t0 + E[i, 1, l] * t1 + E[i, 2, l] * t2
            out[3 + i, l] = E[i, 0, l] * f[3, l] + E[i, 1, l] * f[4, l] + E[i, 2, l] * f[5, l]


@njit(**_JIT)
def _crm_axis(v, code, qd, j, n0, out, nl):
    """``out += crm(v) S qd`` for the joint axis S = e_code, ``qd = qd[j, n0 + lane]``."""
    k = code % 3
    k1 = (k + 1) % 3
    k2 = (k + 2) % 3
    for l in range(nl):
        s = qd[j, n0 + l]
        if code < 3:  # v x [e_k; 0] qd = [w x e_k; vl x e_k] qd
            out[k1, l] += v[k2, l] * s
            out[k2, l] -= v[k1, l] * s
            out[3 + k1, l] += v[3 + k2, l] * s
            out[3 + k2, l] -= v[3 + k1, l] * s
        else:  # v x [0; e_k] qd = [0; w x e_k] qd
            out[3 + k1, l] += v[k2, l] * s
            out[3 + k2, l] -= v[k1, l] * s


@njit(**_JIT)
def _crf_add(v, h, out, nl):
    """``out += v x* h = [w x n + vl x f; w x f]``."""
    for l in range(nl):
        out[0, l] += v[1, l] * h[2, l] - v[2, l] * h[1, l] + v[4, l] * h[5, l] - v[5, l] * h[4, l]
        out[1, l] += v[2, l] * h[0, l] - v[0, l] * h[2, l] + v[5, l] * h[3, l] - v[3, l] * h[5, l]
        out[2, l] += v[0, l] * h[1, l] - v[1, l] * h[0, l] + v[3, l] * h[4, l] - v[4, l] * h[3, l]
        out[3, l] += v[1, l] * h[5, l] - v[2, l] * h[4, l]
        out[4, l] += v[2, l] * h[3, l] - v[0, l] * h[5, l]
        out[5, l] += v[0, l] * h[4, l] - v[1, l] * h[3, l]


@njit(**_JIT)
def _matvec6(A, v, out, nl):
    """``out = A v`` for a constant A (6, 6)."""
    for x in range(6):
        for l in range(nl):
            out[x, l] = (
                A[x, 0] * v[0, l] + A[x, 1] * v[1, l] + A[x, 2] * v[2, l]
                + A[x, 3] * v[3, l] + A[x, 4] * v[4, l] + A[x, 5] * v[5, l]
            )  # fmt: skip


@njit(**_JIT)
def _lanes_in(src, rows, n0, nl, out):
    """``out[x, l] = src[x, n0 + l]`` for x < rows, or ``src[x, 0]`` when src has one column."""
    one = src.shape[1] == 1
    for x in range(rows):
        for l in range(nl):
            out[x, l] = src[x, 0 if one else n0 + l]


# --------------------------------------------------------------------------- RNEA
@njit(**_JIT)
def _rnea_blk(n0, nl, parent, code, vidx, qidx, Et, rt, I6, q, E0, r0, nu, nud, a0, arm, tau, XE, Xr, v, a, f, w):
    nb = parent.shape[0]
    has_nu = nu.shape[0] > 0
    has_nud = nud.shape[0] > 0
    A0, tmp, h = w[0], w[1], w[2]
    _lanes_in(a0, 6, n0, nl, A0)
    _poses(n0, nl, code, qidx, Et, rt, q, E0, r0, XE, Xr)
    for i in range(nb):
        c = code[i]
        if c == FREE:
            if has_nud:
                _lanes_in(nud, 6, n0, nl, tmp)
                for x in range(6):
                    for l in range(nl):
                        tmp[x, l] += A0[x, l]
                _xm(XE[i], Xr[i], tmp, a[i], nl)
            else:
                _xm(XE[i], Xr[i], A0, a[i], nl)
            if has_nu:
                _lanes_in(nu, 6, n0, nl, tmp)
                _xm(XE[i], Xr[i], tmp, v[i], nl)
            else:
                v[i] = 0.0
        else:
            p = parent[i]
            if p >= 0:
                _xm(XE[i], Xr[i], v[p], v[i], nl)
                _xm(XE[i], Xr[i], a[p], a[i], nl)
            else:
                v[i] = 0.0
                _xm(XE[i], Xr[i], A0, a[i], nl)
            j = vidx[i]
            if has_nu:
                for l in range(nl):
                    v[i, c, l] += nu[j, n0 + l]
                _crm_axis(v[i], c, nu, j, n0, a[i], nl)
            if has_nud:
                for l in range(nl):
                    a[i, c, l] += nud[j, n0 + l]
        # f = I a + v x* I v
        _matvec6(I6[i], v[i], h, nl)
        _matvec6(I6[i], a[i], f[i], nl)
        _crf_add(v[i], h, f[i], nl)
    with_arm = has_nud and arm.shape[0] > 0
    for i in range(nb - 1, -1, -1):
        c = code[i]
        if c == FREE:
            _xtf(XE[i], Xr[i], f[i], tmp, False, nl)
            for x in range(6):
                for l in range(nl):
                    tau[x, n0 + l] = tmp[x, l]
            continue
        j = vidx[i]
        for l in range(nl):
            tau[j, n0 + l] = f[i, c, l] + (arm[j] * nud[j, n0 + l] if with_arm else 0.0)
        p = parent[i]
        if p >= 0:
            _xtf(XE[i], Xr[i], f[i], f[p], True, nl)


def _rnea(parent, code, vidx, qidx, Et, rt, I6, q, E0, r0, nu, nud, a0, arm, tau, nblk):
    """Inverse dynamics: ``tau`` (nv, N) written; ``nu``/``nud`` (nv, N) or (0, N) for zero;
    ``arm`` (nv,) or (0,); ``nblk`` blocks of states."""
    nb = parent.shape[0]
    N = tau.shape[1]
    for b in prange(nblk):
        XE = np.empty((nb, 3, 3, LANES))
        Xr = np.empty((nb, 3, LANES))
        v = np.empty((nb, 6, LANES))
        a = np.empty((nb, 6, LANES))
        f = np.empty((nb, 6, LANES))
        w = np.empty((3, 6, LANES))
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, LANES):
            nl = min(LANES, stop - n0)
            _rnea_blk(n0, nl, parent, code, vidx, qidx, Et, rt, I6, q, E0, r0, nu, nud, a0, arm, tau, XE, Xr, v, a, f, w)


# --------------------------------------------------------------------------- CRBA
@njit(**_JIT)
def _inertia_to_parent(E, r, m, h, Ib, hp, Ibp, T, nl):
    """Add the rigid-body inertia ``(m, h, Ib)`` (mass (L,), first moment (3, L), rotational
    inertia about the origin (3, 3, L); child coordinates) expressed in the parent's coordinates
    (``plux(E, r)`` the child's Xup) to ``(hp, Ibp)`` (the mass adds separately): with ``g = E^T
    h``, ``Ib_p = E^T Ib E - (r g^T + g r^T) + 2 (g . r) 1 - m (r r^T - |r|^2 1)``, ``h_p = g + m r``.
    ``T`` (3, 3, L) scratch."""
    for l in range(nl):
        g0 = E[0, 0, l] * h[0, l] + E[1, 0, l] * h[1, l] + E[2, 0, l] * h[2, l]
        g1 = E[0, 1, l] * h[0, l] + E[1, 1, l] * h[1, l] + E[2, 1, l] * h[2, l]
        g2 = E[0, 2, l] * h[0, l] + E[1, 2, l] * h[1, l] + E[2, 2, l] * h[2, l]
        r0, r1, r2 = r[0, l], r[1, l], r[2, l]
        ml = m[l]
        d = 2.0 * (g0 * r0 + g1 * r1 + g2 * r2) + ml * (r0 * r0 + r1 * r1 + r2 * r2)
        for x in range(3):
            for y in range(3):
                T[x, y, l] = Ib[x, 0, l] * E[0, y, l] + Ib[x, 1, l] * E[1, y, l] + Ib[x, 2, l] * E[2, y, l]
        g = (g0, g1, g2)
        rr = (r0, r1, r2)
        for x in range(3):
            for y in range(3):
                s = E[0, x, l] * T[0, y, l] + E[1, x, l] * T[1, y, l] + E[2, x, l] * T[2, y, l]
                s -= rr[x] * g[y] + g[x] * rr[y] + ml * rr[x] * rr[y]
                if x == y:
                    s += d
                Ibp[x, y, l] += s
            hp[x, l] += g[x] + ml * rr[x]


@njit(**_JIT)
def _crba_blk(n0, nl, parent, code, vidx, qidx, Et, rt, mass, h0, Ib0, q, E0, r0, arm, H, XE, Xr, m, h, Ib, w, W):
    nb = parent.shape[0]
    has_arm = arm.shape[0] > 0
    H[n0 : n0 + nl] = 0.0
    _poses(n0, nl, code, qidx, Et, rt, q, E0, r0, XE, Xr)
    for i in range(nb):
        for l in range(nl):
            m[i, l] = mass[i]
            for x in range(3):
                h[i, x, l] = h0[i, x]
                for y in range(3):
                    Ib[i, x, y, l] = Ib0[i, x, y]
    for i in range(nb - 1, 0, -1):
        p = parent[i]
        if p >= 0:
            for l in range(nl):
                m[p, l] += m[i, l]
            _inertia_to_parent(XE[i], Xr[i], m[i], h[i], Ib[i], h[p], Ib[p], W[0], nl)
    F, G, hw = w[0], w[1], w[2]
    for i in range(nb):
        c = code[i]
        if c == FREE:  # the whole tree's composite inertia in world coordinates
            Iw = W[1]
            hw[:3] = 0.0
            Iw[:] = 0.0
            _inertia_to_parent(XE[i], Xr[i], m[i], h[i], Ib[i], hw, Iw, W[0], nl)
            for l in range(nl):
                Hn = H[n0 + l]
                for x in range(3):
                    for y in range(3):
                        Hn[x, y] = Iw[x, y, l]
                    Hn[3 + x, 3 + x] = m[i, l]
                Hn[0, 4], Hn[0, 5], Hn[1, 5] = -hw[2, l], hw[1, l], -hw[0, l]
                Hn[1, 3], Hn[2, 3], Hn[2, 4] = hw[2, l], -hw[1, l], hw[0, l]
                for x in range(3):
                    for y in range(3):
                        Hn[3 + y, x] = Hn[x, 3 + y]
            continue
        # F = IC_i e_c: column c of [[Ib, h^], [-h^, m 1]]
        hi = h[i]
        F[:] = 0.0
        if c < 3:
            k1 = (c + 1) % 3
            k2 = (c + 2) % 3
            for l in range(nl):
                for x in range(3):
                    F[x, l] = Ib[i, x, c, l]
                F[3 + k1, l] = -hi[k2, l]  # -h^ e_c = e_c x h
                F[3 + k2, l] = hi[k1, l]
        else:
            k = c - 3
            k1 = (k + 1) % 3
            k2 = (k + 2) % 3
            for l in range(nl):
                F[k1, l] = hi[k2, l]  # h^ e_k = h x e_k
                F[k2, l] = -hi[k1, l]
                F[c, l] = m[i, l]
        j = vidx[i]
        for l in range(nl):
            H[n0 + l, j, j] = F[c, l] + (arm[j] if has_arm else 0.0)
        k = i
        while parent[k] >= 0:
            _xtf(XE[k], Xr[k], F, G, False, nl)
            k = parent[k]
            if code[k] == FREE:
                _xtf(XE[k], Xr[k], G, F, False, nl)
                for l in range(nl):
                    for x in range(6):
                        H[n0 + l, x, j] = F[x, l]
                        H[n0 + l, j, x] = F[x, l]
                break
            jk = vidx[k]
            ck = code[k]
            for l in range(nl):
                H[n0 + l, jk, j] = G[ck, l]
                H[n0 + l, j, jk] = G[ck, l]
            F, G = G, F


def _crba(parent, code, vidx, qidx, Et, rt, mass, h0, Ib0, q, E0, r0, arm, H, nblk):
    """Joint-space inertia matrices ``H`` (N, nv, nv) written (both triangles)."""
    nb = parent.shape[0]
    N = H.shape[0]
    for b in prange(nblk):
        XE = np.empty((nb, 3, 3, LANES))
        Xr = np.empty((nb, 3, LANES))
        m = np.empty((nb, LANES))
        h = np.empty((nb, 3, LANES))
        Ib = np.empty((nb, 3, 3, LANES))
        w = np.empty((3, 6, LANES))
        W = np.empty((2, 3, 3, LANES))
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, LANES):
            nl = min(LANES, stop - n0)
            _crba_blk(n0, nl, parent, code, vidx, qidx, Et, rt, mass, h0, Ib0, q, E0, r0, arm, H, XE, Xr, m, h, Ib, w, W)


# --------------------------------------------------------------------------- ABA
@njit(**_JIT)
def _congruence_add(E, r, A, dst, W, nl):
    """``dst += X^T A X`` for symmetric A (6, 6, L), ``X = plux(E, r) = [[E, 0], [0, E]] [[1, 0],
    [-r^, 1]]``: blocks ``B = E6^T A E6``, then ``R^T B R = [[B11 + r^ B12^T - C r^, C], [C^T,
    B22]]`` with ``C = B12 + r^ B22``. ``W`` (5, 3, 3, L) scratch."""
    B11, B12, B22, T, C = W[0], W[1], W[2], W[3], W[4]
    for blk in range(3):
        a0 = 0 if blk < 2 else 3
        b0 = 0 if blk == 0 else 3
        Bk = W[blk]
        for x in range(3):  # T = A_blk E
            for y in range(3):
                for l in range(nl):
                    T[x, y, l] = (
                        A[a0 + x, b0, l] * E[0, y, l]
                        + A[a0 + x, b0 + 1, l] * E[1, y, l]
                        + A[a0 + x, b0 + 2, l] * E[2, y, l]
                    )
        for x in range(3):  # B = E^T T
            for y in range(3):
                for l in range(nl):
                    Bk[x, y, l] = E[0, x, l] * T[0, y, l] + E[1, x, l] * T[1, y, l] + E[2, x, l] * T[2, y, l]
    for l in range(nl):
        r0, r1, r2 = r[0, l], r[1, l], r[2, l]
        for y in range(3):  # C = B12 + r^ B22 (columns: r x B22[:, y])
            C[0, y, l] = B12[0, y, l] + r1 * B22[2, y, l] - r2 * B22[1, y, l]
            C[1, y, l] = B12[1, y, l] + r2 * B22[0, y, l] - r0 * B22[2, y, l]
            C[2, y, l] = B12[2, y, l] + r0 * B22[1, y, l] - r1 * B22[0, y, l]
        for x in range(3):
            # D = B11 + r^ B12^T - C r^; (r^ B12^T)[x, y] = (r x B12[y, :])[x]; (C r^)[x, :] = -(r x C[x, :])
            for y in range(3):
                if x == 0:
                    rb = r1 * B12[y, 2, l] - r2 * B12[y, 1, l]
                elif x == 1:
                    rb = r2 * B12[y, 0, l] - r0 * B12[y, 2, l]
                else:
                    rb = r0 * B12[y, 1, l] - r1 * B12[y, 0, l]
                if y == 0:
                    cr = r1 * C[x, 2, l] - r2 * C[x, 1, l]
                elif y == 1:
                    cr = r2 * C[x, 0, l] - r0 * C[x, 2, l]
                else:
                    cr = r0 * C[x, 1, l] - r1 * C[x, 0, l]
                dst[x, y, l] += B11[x, y, l] + rb + cr
                dst[x, 3 + y, l] += C[x, y, l]
                dst[3 + y, x, l] += C[x, y, l]
                dst[3 + x, 3 + y, l] += B22[x, y, l]


@njit(**_JIT)
def _solve6(A, b, out, nl):
    """``out = A^-1 b`` (6, L) by Gaussian elimination without pivoting (A (6, 6, L) symmetric
    positive definite, overwritten), as :func:`.batch_math.solve6`; a singular A gives inf or NaN."""
    for x in range(6):
        for l in range(nl):
            out[x, l] = b[x, l]
    for k in range(5):
        for x in range(k + 1, 6):
            for l in range(nl):
                f = A[x, k, l] / A[k, k, l]
                for y in range(k + 1, 6):
                    A[x, y, l] -= f * A[k, y, l]
                out[x, l] -= f * out[k, l]
    for k in range(5, -1, -1):
        for l in range(nl):
            t = out[k, l]
            for y in range(k + 1, 6):
                t -= A[k, y, l] * out[y, l]
            out[k, l] = t / A[k, k, l]


@njit(**_JIT)
def _aba_blk(
    n0, nl, parent, code, vidx, qidx, Et, rt, I6, q, E0, r0, nu, tau, a0, arm, nud, XE, Xr, v, c, IA, pA, U, du, Ia, W, w
):
    nb = parent.shape[0]
    has_arm = arm.shape[0] > 0
    A0, tmp, pa, h = w[0], w[1], w[2], w[3]
    _lanes_in(a0, 6, n0, nl, A0)
    _poses(n0, nl, code, qidx, Et, rt, q, E0, r0, XE, Xr)
    for i in range(nb):
        ci = code[i]
        c[i] = 0.0
        if ci == FREE:
            _lanes_in(nu, 6, n0, nl, tmp)
            _xm(XE[i], Xr[i], tmp, v[i], nl)
        else:
            p = parent[i]
            if p >= 0:
                _xm(XE[i], Xr[i], v[p], v[i], nl)
            else:
                v[i] = 0.0
            j = vidx[i]
            for l in range(nl):
                v[i, ci, l] += nu[j, n0 + l]
            _crm_axis(v[i], ci, nu, j, n0, c[i], nl)
        for x in range(6):
            for y in range(6):
                for l in range(nl):
                    IA[i, x, y, l] = I6[i, x, y]
        _matvec6(I6[i], v[i], h, nl)
        pA[i] = 0.0
        _crf_add(v[i], h, pA[i], nl)
    for i in range(nb - 1, -1, -1):
        ci = code[i]
        if ci == FREE:
            continue
        j = vidx[i]
        p = parent[i]
        for l in range(nl):
            d = IA[i, ci, ci, l] + (arm[j] if has_arm else 0.0)
            dinv = 1.0 / d
            u = tau[j, n0 + l] - pA[i, ci, l]
            du[i, 0, l] = dinv
            du[i, 1, l] = u
            for x in range(6):
                U[i, x, l] = IA[i, x, ci, l]
        if p < 0:
            continue
        # Ia = IA - U U^T / d, pa = pA + Ia c + U u / d
        for x in range(6):
            for y in range(6):
                for l in range(nl):
                    Ia[x, y, l] = IA[i, x, y, l] - U[i, x, l] * U[i, y, l] * du[i, 0, l]
        for x in range(6):
            for l in range(nl):
                s = pA[i, x, l] + U[i, x, l] * du[i, 1, l] * du[i, 0, l]
                for y in range(6):
                    s += Ia[x, y, l] * c[i, y, l]
                pa[x, l] = s
        _congruence_add(XE[i], Xr[i], Ia, IA[p], W, nl)
        _xtf(XE[i], Xr[i], pa, pA[p], True, nl)
    acc = v  # the velocities are not needed any more: the accelerations go there
    for i in range(nb):
        ci = code[i]
        if ci == FREE:
            # IA a + pA = the base wrench in body coordinates, a = X0 (a_base + a0)
            _lanes_in(tau, 6, n0, nl, tmp)
            _xsf(XE[i], Xr[i], tmp, pa, nl)
            for x in range(6):
                for l in range(nl):
                    pa[x, l] -= pA[i, x, l]
            Ia[:] = IA[i]
            _solve6(Ia, pa, acc[i], nl)
            _xm_inv(XE[i], Xr[i], acc[i], tmp, nl)
            for x in range(6):
                for l in range(nl):
                    nud[x, n0 + l] = tmp[x, l] - A0[x, l]
            continue
        p = parent[i]
        if p >= 0:
            _xm(XE[i], Xr[i], acc[p], tmp, nl)
        else:
            _xm(XE[i], Xr[i], A0, tmp, nl)
        j = vidx[i]
        for l in range(nl):
            s = 0.0
            for x in range(6):
                tmp[x, l] += c[i, x, l]
                s += U[i, x, l] * tmp[x, l]
            qdd = (du[i, 1, l] - s) * du[i, 0, l]
            tmp[ci, l] += qdd
            nud[j, n0 + l] = qdd
        acc[i] = tmp


def _aba(parent, code, vidx, qidx, Et, rt, I6, q, E0, r0, nu, tau, a0, arm, nud, nblk):
    """Forward dynamics: ``nud`` (nv, N) written (inf or NaN where a joint or the base moves no
    inertia)."""
    nb = parent.shape[0]
    N = nud.shape[1]
    for b in prange(nblk):
        XE = np.empty((nb, 3, 3, LANES))
        Xr = np.empty((nb, 3, LANES))
        v = np.empty((nb, 6, LANES))
        c = np.empty((nb, 6, LANES))
        IA = np.empty((nb, 6, 6, LANES))
        pA = np.empty((nb, 6, LANES))
        U = np.empty((nb, 6, LANES))
        du = np.empty((nb, 2, LANES))
        Ia = np.empty((6, 6, LANES))
        W = np.empty((5, 3, 3, LANES))
        w = np.empty((4, 6, LANES))
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, LANES):
            nl = min(LANES, stop - n0)
            _aba_blk(
                n0, nl, parent, code, vidx, qidx, Et, rt, I6, q, E0, r0, nu, tau, a0, arm, nud,
                XE, Xr, v, c, IA, pA, U, du, Ia, W, w,
            )  # fmt: skip


rnea_par = njit(parallel=True, **_JIT)(_rnea)
rnea_ser = njit(**_JIT)(_rnea)
crba_par = njit(parallel=True, **_JIT)(_crba)
crba_ser = njit(**_JIT)(_crba)
aba_par = njit(parallel=True, **_JIT)(_aba)
aba_ser = njit(**_JIT)(_aba)
