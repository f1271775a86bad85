"""Spatial algebra on batch-last arrays: the batch is the *last* axis of every array.

Motion and force vectors are (6, N) (angular first, Featherstone's order), rotations (3, 3, N),
stacks over bodies (6, n, N); inertias in parameter form are ``m`` (n,) and ``W`` (9, n, N) = [m c;
rotational inertia about the origin in symmetric storage (see :data:`SYM_INDEX`)]. Constant 6x6
matrices then act on all samples through one BLAS product, and transforms are a handful of
component-wise operations. :func:`batch_last` / :func:`batch_first` convert from and to the
public layout (leading batch axes).
"""

from __future__ import annotations

import math

import numpy as np

from bridge.spatial import cross

__all__ = [
    "SYM_INDEX",
    "batch_first",
    "batch_last",
    "crf3",
    "crm3",
    "inertia_apply",
    "inertia_matrices",
    "matvec",
    "rotate_rows",
    "solve6",
    "tmatvec",
    "x_motion",
    "xs_force",
    "xt_force",
]


# --------------------------------------------------------------------------- single vectors (3, N), (6, N)
def matvec(E: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(3, 3, N) @ (3, N) per sample."""
    return np.einsum("ijn,jn->in", E, x)


def tmatvec(E: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(3, 3, N)^T @ (3, N) per sample."""
    return np.einsum("jin,jn->in", E, x)


def x_motion(E: np.ndarray, r: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``plux(E, r) m = [E w; E (v - r x w)]`` per sample: E (3, 3, N), r (3, N), m (6, N)."""
    out = np.empty(np.broadcast_shapes(m.shape, (*r.shape[:-2], 6, *r.shape[-1:])))
    out[:3] = matvec(E, m[:3])
    out[3:] = matvec(E, m[3:] - cross(r, m[:3], axis=-2))
    return out


def xt_force(E: np.ndarray, r: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``plux(E, r)^T f = [E^T n + r x E^T fl; E^T fl]`` (body force -> world force)."""
    fl = tmatvec(E, f[3:])
    out = np.empty((6, fl.shape[-1]))
    out[3:] = fl
    out[:3] = tmatvec(E, f[:3]) + cross(r, fl, axis=-2)
    return out


def xs_force(E: np.ndarray, r: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``plux(E, r)^-T f = [E (n - r x fl); E fl]`` (world force -> body force)."""
    out = np.empty((6, f.shape[-1]))
    out[:3] = matvec(E, f[:3] - cross(r, f[3:], axis=-2))
    out[3:] = matvec(E, f[3:])
    return out


def rotate_rows(x: np.ndarray, y: np.ndarray, c: np.ndarray, s: np.ndarray, t1: np.ndarray, t2: np.ndarray):
    """``x, y <- c x + s y, c y - s x`` in place: the coordinate rotation about the third axis by the
    angle of cosine c and sine s (its transpose with -s); ``t1``, ``t2`` scratch arrays of x's
    shape."""
    np.multiply(c, x, out=t1)
    np.multiply(s, y, out=t2)
    t1 += t2
    np.multiply(s, x, out=t2)
    y *= c
    y -= t2
    np.copyto(x, t1)


# --------------------------------------------------------------------------- stacked spatial algebra
# These work on (3, n, N) / (6, n, N) stacks (n bodies or dofs, N samples) and never allocate a
# stack-sized temporary: ``tmp`` is an (n, N) scratch array (a fresh one when not given). Large
# temporaries are expensive here beyond their arithmetic: each is a fresh mapping of memory.
# symmetric 3x3 matrices are stored as 6 rows [xx, xy, xz, yy, yz, zz]: entry (i, j) is row SYM_INDEX[i][j]
SYM_INDEX = ((0, 1, 2), (1, 3, 4), (2, 4, 5))


def _scratch(shape: tuple[int, ...], tmp: np.ndarray | None) -> np.ndarray:
    return np.empty(shape) if tmp is None else tmp


def inertia_apply(
    m: np.ndarray, W: np.ndarray, x: np.ndarray, out: np.ndarray | None = None, tmp: np.ndarray | None = None
) -> np.ndarray:
    """``I x`` for inertias in parameter form (world coordinates), stacked on axis 1:
    m (n,), W (9, n, N) as :meth:`.joints.Joints.world_inertias`, x (6, n, N) -> (6, n, N):
    ``[IO w + h x v; m v - h x w]``. (W and x may have more axes between n and N, broadcast.)"""
    h, I6 = W[:3], W[3:]
    w, v = x[:3], x[3:]
    shape = np.broadcast_shapes(x.shape, (6, *W.shape[1:]))
    if out is None:
        out = np.empty(shape)
    t = _scratch(shape[1:], tmp)
    ang = out[:3]
    cross(h, v, axis=0, out=ang, scratch=t)
    for i in range(3):
        row = ang[i]
        for j in range(3):
            row += np.multiply(I6[SYM_INDEX[i][j]], w[j], out=t)
    lin = out[3:]
    cross(w, h, axis=0, out=lin, scratch=t)  # -h x w
    mm = np.asarray(m)
    if mm.ndim == 1:
        mm = mm[:, None]
    for k in range(3):
        lin[k] += np.multiply(mm, v[k], out=t)
    return out


def crf3(
    v: np.ndarray, f: np.ndarray, out: np.ndarray | None = None, tmp3: np.ndarray | None = None
) -> np.ndarray:
    """``crf(v) f = [w x n + vl x fl; w x fl]`` for (6, ...) stacked vectors; ``tmp3`` (3, ...)."""
    shape = np.broadcast_shapes(v.shape, f.shape)
    if out is None:
        out = np.empty(shape)
    t3 = _scratch((3, *shape[1:]), tmp3)
    t = out[3]  # free until the last product below
    cross(v[:3], f[:3], axis=0, out=out[:3], scratch=t)
    out[:3] += cross(v[3:], f[3:], axis=0, out=t3, scratch=t)
    cross(v[:3], f[3:], axis=0, out=out[3:], scratch=t3[0])
    return out


def crm3(
    v: np.ndarray, m: np.ndarray, out: np.ndarray | None = None, tmp3: np.ndarray | None = None
) -> np.ndarray:
    """``crm(v) m = [w x mw; w x mv + vl x mw]`` for (6, ...) stacked vectors; ``tmp3`` (3, ...)."""
    shape = np.broadcast_shapes(v.shape, m.shape)
    if out is None:
        out = np.empty(shape)
    t3 = _scratch((3, *shape[1:]), tmp3)
    cross(v[:3], m[3:], axis=0, out=out[3:], scratch=out[0])
    out[3:] += cross(v[3:], m[:3], axis=0, out=t3, scratch=out[0])
    cross(v[:3], m[:3], axis=0, out=out[:3], scratch=t3[0])
    return out


def inertia_matrices(m: np.ndarray, W: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Dense 6x6 angular-first inertias (n, 6, 6, N) from parameters m (n,), W (9, n, N)."""
    n, N = W.shape[1], W.shape[2]
    if out is None:
        out = np.empty((n, 6, 6, N))
    for i in range(3):  # the structural zeros: diagonal of h^ and off-diagonal of m 1
        out[:, i, 3 + i] = 0.0
        out[:, 3 + i, i] = 0.0
        for j in range(3):
            if i != j:
                out[:, 3 + i, 3 + j] = 0.0
    h = W[:3]
    for i in range(3):
        for j in range(3):
            out[:, i, j] = W[3 + SYM_INDEX[i][j]]
        out[:, 3 + i, 3 + i] = m[:, None]
    # upper-right h^, lower-left -h^ = h^T
    for i, j, k, sign in ((0, 1, 2, -1.0), (0, 2, 1, 1.0), (1, 2, 0, -1.0)):
        hk = h[k]
        pos, neg = (out[:, i, 3 + j], out[:, 3 + j, i]), (out[:, j, 3 + i], out[:, 3 + i, j])
        if sign < 0:
            pos, neg = neg, pos
        for dst in pos:
            dst[...] = hk
        for dst in neg:
            np.negative(hk, out=dst)
    return out


def solve6(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b per sample: A (6, 6, N) symmetric positive definite (a composite or
    articulated inertia), b (6, N). Gaussian elimination without pivoting on the batch-last arrays
    (LAPACK's per-matrix overhead is about a microsecond per 6x6 system) for large batches, LAPACK
    for small ones (fewer numpy calls); raises ``np.linalg.LinAlgError`` on a singular matrix."""
    N = b.shape[-1]
    if N < 16:
        x = np.linalg.solve(np.moveaxis(A, -1, 0), np.moveaxis(b, -1, 0)[..., None])
        return np.moveaxis(x[..., 0], 0, -1)
    M = np.empty((6, 7, N))
    M[:, :6] = A
    M[:, 6] = b
    x = np.empty((6, N))
    with np.errstate(divide="raise", invalid="raise"):
        try:
            for k in range(5):
                f = M[k + 1 :, k] / M[k, k]
                M[k + 1 :, k + 1 :] -= f[:, None] * M[k, k + 1 :]
            for k in range(5, -1, -1):
                r = M[k, 6].copy()
                for j in range(k + 1, 6):
                    r -= M[k, j] * x[j]
                np.divide(r, M[k, k], out=x[k])
        except FloatingPointError:
            raise np.linalg.LinAlgError("singular matrix") from None
    return x


# --------------------------------------------------------------------------- batch layout
def batch_last(x: np.ndarray, batch: tuple[int, ...], width: int | None = None) -> np.ndarray:
    """(..., k) -> (k, N) with the batch broadcast and flattened; with ``width`` (>= N), (k, width)
    whose extra columns repeat the first state (see :func:`.workspace.padded_width`)."""
    k = x.shape[-1]
    n = math.prod(batch)
    if x.shape[:-1] != batch:
        x = np.broadcast_to(x, (*batch, k))
    if width is None or width == n:
        return np.ascontiguousarray(x.reshape(n, k).T)
    out = np.empty((k, width))
    out[:, :n] = x.reshape(n, k).T
    out[:, n:] = out[:, :1]
    return out


def batch_first(x: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """(k, N) -> (..., k) (the first prod(batch) states: padding dropped)."""
    return np.ascontiguousarray(x[:, : math.prod(batch)].T).reshape(*batch, x.shape[0])
