"""The small spatial-algebra helpers of the compiled kernels (:mod:`.numba_kernels`), inlined into them.

Each works on one state's small arrays in Featherstone's conventions (6D vectors angular first, a
motion transform ``plux(E, r) = [[E, 0], [-E r^, E]]`` kept as its ``(E, r)``), writes into a
caller's array and allocates nothing. They are inlined in numba's IR (``inline="always"``): the
array views passed to them then live in one function, whose reference counting numba prunes (a call
would cost an atomic increment and decrement per view, several times the arithmetic). The pruning
fails where branches surround the use of an argument (measured on the ABA: two atomic pairs per body,
a third of its time): the ABA's helpers (:func:`_pose_up`, :func:`_world_subspace`,
:func:`_world_rigid`) take the whole arrays and a body's index instead, are called without a branch
around them, and keep their values in scalars.

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
def _mat33(A, i):
    """``A[i]`` (3, 3) as a row-major 9-tuple of scalars."""
    return (
        A[i, 0, 0], A[i, 0, 1], A[i, 0, 2],
        A[i, 1, 0], A[i, 1, 1], A[i, 1, 2],
        A[i, 2, 0], A[i, 2, 1], A[i, 2, 2],
    )  # fmt: skip


@njit(**_INL)
def _mul33(a, b):
    """The product ``a b`` of two 3x3 matrices given and returned as row-major 9-tuples."""
    return (
        a[0] * b[0] + a[1] * b[3] + a[2] * b[6],
        a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
        a[0] * b[2] + a[1] * b[5] + a[2] * b[8],
        a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
        a[3] * b[1] + a[4] * b[4] + a[5] * b[7],
        a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
        a[6] * b[0] + a[7] * b[3] + a[8] * b[6],
        a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
        a[6] * b[2] + a[7] * b[5] + a[8] * b[8],
    )


@njit(**_INL)
def _pose_up(code, qv, c, s, Et, rt, Ew, pw, i, pa):
    """Body ``i``'s pose from its parent's (``pa``; for a root, a row holding the world's identity
    pose), in the coordinates of the tree's frame of reference ("world"): ``Ew[i]`` (3, 3) the
    rotation from world to body
    coordinates (``XJ(code, qv) Xtree`` composed with the parent's ``Ew[pa]``), ``pw[i]`` (3,) the
    body's origin (the parent's plus the joint's offset ``rt[i]`` (+ ``Et[i, k] qv`` for a prismatic
    joint) rotated to world coordinates). ``c``, ``s`` the cosine and sine of qv. Indices, not
    views (a view may cost an atomic reference count), and scalars: the poses form a chain through
    the tree, whose latency a round trip through memory would lengthen."""
    r0_, r1_, r2_ = rt[i, 0], rt[i, 1], rt[i, 2]
    if code >= 3:
        k = code - 3
        r0_ += Et[i, k, 0] * qv
        r1_ += Et[i, k, 1] * qv
        r2_ += Et[i, k, 2] * qv
    f = _mat33(Ew, pa)
    pw[i, 0] = pw[pa, 0] + f[0] * r0_ + f[3] * r1_ + f[6] * r2_
    pw[i, 1] = pw[pa, 1] + f[1] * r0_ + f[4] * r1_ + f[7] * r2_
    pw[i, 2] = pw[pa, 2] + f[2] * r0_ + f[5] * r1_ + f[8] * r2_
    e00, e01, e02, e10, e11, e12, e20, e21, e22 = _mul33(_mat33(Et, i), f)
    # rotate rows k1, k2 = code + 1, code + 2 (mod 3) about row ``code``
    if code == 0:
        e10, e11, e12, e20, e21, e22 = (
            c * e10 + s * e20, c * e11 + s * e21, c * e12 + s * e22,
            c * e20 - s * e10, c * e21 - s * e11, c * e22 - s * e12,
        )  # fmt: skip
    elif code == 1:
        e20, e21, e22, e00, e01, e02 = (
            c * e20 + s * e00, c * e21 + s * e01, c * e22 + s * e02,
            c * e00 - s * e20, c * e01 - s * e21, c * e02 - s * e22,
        )  # fmt: skip
    elif code == 2:
        e00, e01, e02, e10, e11, e12 = (
            c * e00 + s * e10, c * e01 + s * e11, c * e02 + s * e12,
            c * e10 - s * e00, c * e11 - s * e01, c * e12 - s * e02,
        )  # fmt: skip
    Ew[i, 0, 0], Ew[i, 0, 1], Ew[i, 0, 2] = e00, e01, e02
    Ew[i, 1, 0], Ew[i, 1, 1], Ew[i, 1, 2] = e10, e11, e12
    Ew[i, 2, 0], Ew[i, 2, 1], Ew[i, 2, 2] = e20, e21, e22


@njit(**_INL)
def _world_subspace(code, Ew, pw, S, i):
    """``S[i]`` (6,): the motion subspace of body i's 1-DOF joint (``code`` 0..5) in world
    coordinates, at the world origin: ``[a; p x a]`` for a revolute axis ``a`` (row ``code`` of
    ``Ew[i]``) through ``p = pw[i]``, ``[0; a]`` for a prismatic one."""
    k = code % 3
    a0_, a1_, a2_ = Ew[i, k, 0], Ew[i, k, 1], Ew[i, k, 2]
    if code < 3:
        p0, p1, p2 = pw[i, 0], pw[i, 1], pw[i, 2]
        S[i, 0], S[i, 1], S[i, 2] = a0_, a1_, a2_
        S[i, 3] = p1 * a2_ - p2 * a1_
        S[i, 4] = p2 * a0_ - p0 * a2_
        S[i, 5] = p0 * a1_ - p1 * a0_
    else:
        S[i, 0], S[i, 1], S[i, 2] = 0.0, 0.0, 0.0
        S[i, 3], S[i, 4], S[i, 5] = a0_, a1_, a2_


@njit(**_INL)
def _rigid_world(Ew, pw, mass, h0, Ib0, i):
    """Body i's rigid inertia in world coordinates as 10 scalars ``(m, hw (3), Iw (00, 01, 02, 11,
    12, 22))``: ``(mass[i], h0[i], Ib0[i])`` (mass, first moment, rotational inertia about the body's
    origin; body coordinates) moved to the world by the body's pose ``(Ew[i], pw[i])`` (see
    :func:`_pose_up`), ``hw`` the first moment and ``Iw`` the rotational inertia about the world's
    origin: the spatial inertia ``[[Iw, hw^], [hw^T, m 1]]``. Inertias about one origin add."""
    e = _mat33(Ew, i)
    e00, e01, e02, e10, e11, e12, e20, e21, e22 = e
    p0, p1, p2 = pw[i, 0], pw[i, 1], pw[i, 2]
    m = mass[i]
    h_0, h_1, h_2 = h0[i, 0], h0[i, 1], h0[i, 2]
    # g = E^T h: the first moment about the body's origin, world axes
    g0 = e00 * h_0 + e10 * h_1 + e20 * h_2
    g1 = e01 * h_0 + e11 * h_1 + e21 * h_2
    g2 = e02 * h_0 + e12 * h_1 + e22 * h_2
    # T = Ib E, then E^T T (upper triangle)
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = _mul33(_mat33(Ib0, i), e)
    # the shift to the world's origin: - (p g^T + g p^T + m p p^T) + (2 g.p + m p.p) 1
    mp0, mp1, mp2 = m * p0, m * p1, m * p2
    q0, q1, q2 = g0 + mp0, g1 + mp1, g2 + mp2  # hw
    k0, k1, k2 = g0 + q0, g1 + q1, g2 + q2  # 2 g + m p: p g^T + g p^T + m p p^T = sym(p k^T) ...
    dg = p0 * k0 + p1 * k1 + p2 * k2  # ... and 2 g.p + m p.p = p.k
    i00 = e00 * t00 + e10 * t10 + e20 * t20 - (p0 * k0) + dg
    i01 = e00 * t01 + e10 * t11 + e20 * t21 - 0.5 * (p0 * k1 + k0 * p1)
    i02 = e00 * t02 + e10 * t12 + e20 * t22 - 0.5 * (p0 * k2 + k0 * p2)
    i11 = e01 * t01 + e11 * t11 + e21 * t21 - (p1 * k1) + dg
    i12 = e01 * t02 + e11 * t12 + e21 * t22 - 0.5 * (p1 * k2 + k1 * p2)
    i22 = e02 * t02 + e12 * t12 + e22 * t22 - (p2 * k2) + dg
    return m, q0, q1, q2, i00, i01, i02, i11, i12, i22


@njit(**_INL)
def _world_rigid(Ew, pw, mass, h0, Ib0, v, ch, IA, pA, i):
    """Body i's rigid inertia in world coordinates (:func:`_rigid_world`), written as the upper
    triangle of ``IA[i]`` (6, 6), and its bias force ``pA[i] = v x* (I v) + I c`` (6,) for the body's
    velocity ``v = v[i]`` and bias acceleration ``c = ch[i]`` (world coordinates). In scalars, on
    indices (no scratch arrays, no views)."""
    m, q0, q1, q2, i00, i01, i02, i11, i12, i22 = _rigid_world(Ew, pw, mass, h0, Ib0, i)
    IA[i, 0, 0], IA[i, 0, 1], IA[i, 0, 2] = i00, i01, i02
    IA[i, 1, 1], IA[i, 1, 2], IA[i, 2, 2] = i11, i12, i22
    IA[i, 0, 3], IA[i, 1, 4], IA[i, 2, 5] = 0.0, 0.0, 0.0
    IA[i, 0, 4], IA[i, 0, 5], IA[i, 1, 5] = -q2, q1, -q0
    IA[i, 1, 3], IA[i, 2, 3], IA[i, 2, 4] = q2, -q1, q0
    IA[i, 3, 3], IA[i, 3, 4], IA[i, 3, 5], IA[i, 4, 4], IA[i, 4, 5], IA[i, 5, 5] = m, 0.0, 0.0, m, 0.0, m
    w0, w1, w2, l0, l1, l2 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]
    # I v = [Iw w + hw x l; m l - hw x w]
    n0 = i00 * w0 + i01 * w1 + i02 * w2 + q1 * l2 - q2 * l1
    n1 = i01 * w0 + i11 * w1 + i12 * w2 + q2 * l0 - q0 * l2
    n2 = i02 * w0 + i12 * w1 + i22 * w2 + q0 * l1 - q1 * l0
    f0 = m * l0 - (q1 * w2 - q2 * w1)
    f1 = m * l1 - (q2 * w0 - q0 * w2)
    f2 = m * l2 - (q0 * w1 - q1 * w0)
    c0, c1, c2, c3, c4, c5 = ch[i, 0], ch[i, 1], ch[i, 2], ch[i, 3], ch[i, 4], ch[i, 5]
    # v x* [n; f] = [w x n + l x f; w x f], plus I c
    pA[i, 0] = w1 * n2 - w2 * n1 + l1 * f2 - l2 * f1 + i00 * c0 + i01 * c1 + i02 * c2 + q1 * c5 - q2 * c4
    pA[i, 1] = w2 * n0 - w0 * n2 + l2 * f0 - l0 * f2 + i01 * c0 + i11 * c1 + i12 * c2 + q2 * c3 - q0 * c5
    pA[i, 2] = w0 * n1 - w1 * n0 + l0 * f1 - l1 * f0 + i02 * c0 + i12 * c1 + i22 * c2 + q0 * c4 - q1 * c3
    pA[i, 3] = w1 * f2 - w2 * f1 + m * c3 - (q1 * c2 - q2 * c1)
    pA[i, 4] = w2 * f0 - w0 * f2 + m * c4 - (q2 * c0 - q0 * c2)
    pA[i, 5] = w0 * f1 - w1 * f0 + m * c5 - (q0 * c1 - q1 * c0)


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
