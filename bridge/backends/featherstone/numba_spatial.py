"""The small spatial-algebra helpers of the compiled kernels (:mod:`.numba_kernels`), inlined into them.

Each works on one state's small arrays in Featherstone's conventions (6D vectors angular first, a
motion transform ``plux(E, r) = [[E, 0], [-E r^, E]]`` kept as its ``(E, r)``), writes into a
caller's array and allocates nothing. They are inlined in numba's IR (``inline="always"``): the
array views passed to them then live in one function, whose reference counting numba prunes (a call
would cost an atomic increment and decrement per view, several times the arithmetic).

Like :mod:`.numba_kernels`, imported only when numba is usable (see :mod:`.compiled`).
"""

from __future__ import annotations

from numba import njit

_JIT = {"cache": True, "nogil": True, "error_model": "numpy", "fastmath": {"contract"}}
_INL = {**_JIT, "inline": "always"}


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
def _a0col(a0, n):
    return a0[:, n if a0.shape[1] > 1 else 0]


@njit(**_INL)
def _stage(src, n0, nl, dst):
    """``dst[x, l] = src[x, n0 + l]`` (l < nl; every l from column 0 when src has one column)."""
    one = src.shape[1] == 1
    for x in range(src.shape[0]):
        for k in range(nl):
            dst[x, k] = src[x, 0 if one else n0 + k]


@njit(**_INL)
def _unstage(src, n0, nl, dst):
    """``dst[x, n0 + l] = src[x, l]`` (l < nl)."""
    for x in range(dst.shape[0]):
        for k in range(nl):
            dst[x, n0 + k] = src[x, k]


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


@njit(**_INL)
def _pose_up(code, qv, c, s, Et, rt, Ep, pp, root, E, p):
    """A body's pose from its parent's, in the coordinates of the tree's frame of reference ("world"):
    ``E`` (3, 3) the rotation from world to body coordinates (``XJ(code, qv) Xtree`` composed with
    the parent's ``Ep``), ``p`` (3,) the body's origin (``pp`` plus the joint's offset ``rt`` (+
    ``Et[k] qv`` for a prismatic joint) rotated to world coordinates); with ``root`` the parent is
    the world itself (``Ep``, ``pp`` unused). ``c``, ``s`` the cosine and sine of qv."""
    r0_, r1_, r2_ = rt[0], rt[1], rt[2]
    if code >= 3:
        k = code - 3
        r0_ += Et[k, 0] * qv
        r1_ += Et[k, 1] * qv
        r2_ += Et[k, 2] * qv
    if root:
        for x in range(3):
            for y in range(3):
                E[x, y] = Et[x, y]
        p[0], p[1], p[2] = r0_, r1_, r2_
    else:
        for x in range(3):
            for y in range(3):
                E[x, y] = Et[x, 0] * Ep[0, y] + Et[x, 1] * Ep[1, y] + Et[x, 2] * Ep[2, y]
            p[x] = pp[x] + Ep[0, x] * r0_ + Ep[1, x] * r1_ + Ep[2, x] * r2_
    if code < 3:
        k1 = (code + 1) % 3
        k2 = (code + 2) % 3
        for y in range(3):
            e1 = E[k1, y]
            e2 = E[k2, y]
            E[k1, y] = c * e1 + s * e2
            E[k2, y] = c * e2 - s * e1


@njit(**_INL)
def _world_subspace(code, E, p, out):
    """The motion subspace (6,) of a 1-DOF joint (``code`` 0..5) in world coordinates, at the world
    origin: ``[a; p x a]`` for a revolute axis ``a`` (row ``code`` of the body's ``E``) through
    ``p``, ``[0; a]`` for a prismatic one."""
    k = code % 3
    a0_, a1_, a2_ = E[k, 0], E[k, 1], E[k, 2]
    if code < 3:
        out[0], out[1], out[2] = a0_, a1_, a2_
        out[3] = p[1] * a2_ - p[2] * a1_
        out[4] = p[2] * a0_ - p[0] * a2_
        out[5] = p[0] * a1_ - p[1] * a0_
    else:
        out[0], out[1], out[2] = 0.0, 0.0, 0.0
        out[3], out[4], out[5] = a0_, a1_, a2_


@njit(**_INL)
def _rigid_bias_force(m, h, Iw, v, c, out):
    """``out = v x* (I v) + I c`` (6,) for the rigid-body inertia ``I = [[Iw, h^], [h^T, m 1]]``
    (``Iw`` (3, 3) rotational inertia about the origin, ``h`` (3,) first moment of mass)."""
    w0, w1, w2, l0, l1, l2 = v[0], v[1], v[2], v[3], v[4], v[5]
    h0, h1, h2 = h[0], h[1], h[2]
    # I v = [Iw w + h x l; m l - h x w]
    n0 = Iw[0, 0] * w0 + Iw[0, 1] * w1 + Iw[0, 2] * w2 + h1 * l2 - h2 * l1
    n1 = Iw[1, 0] * w0 + Iw[1, 1] * w1 + Iw[1, 2] * w2 + h2 * l0 - h0 * l2
    n2 = Iw[2, 0] * w0 + Iw[2, 1] * w1 + Iw[2, 2] * w2 + h0 * l1 - h1 * l0
    f0 = m * l0 - (h1 * w2 - h2 * w1)
    f1 = m * l1 - (h2 * w0 - h0 * w2)
    f2 = m * l2 - (h0 * w1 - h1 * w0)
    c0, c1, c2, c3, c4, c5 = c[0], c[1], c[2], c[3], c[4], c[5]
    # v x* [n; f] = [w x n + l x f; w x f], plus I c
    out[0] = w1 * n2 - w2 * n1 + l1 * f2 - l2 * f1 + Iw[0, 0] * c0 + Iw[0, 1] * c1 + Iw[0, 2] * c2
    out[1] = w2 * n0 - w0 * n2 + l2 * f0 - l0 * f2 + Iw[1, 0] * c0 + Iw[1, 1] * c1 + Iw[1, 2] * c2
    out[2] = w0 * n1 - w1 * n0 + l0 * f1 - l1 * f0 + Iw[2, 0] * c0 + Iw[2, 1] * c1 + Iw[2, 2] * c2
    out[0] += h1 * c5 - h2 * c4
    out[1] += h2 * c3 - h0 * c5
    out[2] += h0 * c4 - h1 * c3
    out[3] = w1 * f2 - w2 * f1 + m * c3 - (h1 * c2 - h2 * c1)
    out[4] = w2 * f0 - w0 * f2 + m * c4 - (h2 * c0 - h0 * c2)
    out[5] = w0 * f1 - w1 * f0 + m * c5 - (h0 * c1 - h1 * c0)


@njit(**_INL)
def _shift_motion(r, m, sign):
    """``m[3:] += sign * r x m[:3]`` in place: a motion vector (6,) moved between coordinates of the
    same axes at two origins (``sign = -1``: from the origin O to the point r, ``+1``: back)."""
    m0, m1, m2 = m[0], m[1], m[2]
    m[3] += sign * (r[1] * m2 - r[2] * m1)
    m[4] += sign * (r[2] * m0 - r[0] * m2)
    m[5] += sign * (r[0] * m1 - r[1] * m0)


@njit(**_INL)
def _shift_force(r, f):
    """``f[:3] -= r x f[3:]`` in place: a force (6,) moved from the coordinates at the origin O to
    those of the same axes at the point r (its moment taken about r)."""
    f3, f4, f5 = f[3], f[4], f[5]
    f[0] -= r[1] * f5 - r[2] * f4
    f[1] -= r[2] * f3 - r[0] * f5
    f[2] -= r[0] * f4 - r[1] * f3
