"""3-vector and rotation-group helpers on raw arrays with leading batch axes.

All functions broadcast over leading axes (numpy rules). Angles are radians. A rotation matrix
``A_R_B`` maps coordinates in B to coordinates in A (``p_A = A_R_B @ p_B``); a unit quaternion of
``A_R_B`` is the same rotation, stored ``(x, y, z, w)`` (Pinocchio, scipy) or ``(w, x, y, z)``
(iDynTree, spatial_v2, MuJoCo, Drake). These are the package's only implementations of the cross
product, ``skew``/``vee``, quaternion conversions and the rotation between two directions: other
modules import them from here (or from :mod:`bridge.spatial`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from bridge._array import as_float_array
from bridge.errors import InvalidValueError, ShapeError

__all__ = [
    "SMALL_ANGLE",
    "cross",
    "matrix_to_quaternion_wxyz",
    "matrix_to_quaternion_xyzw",
    "matrix_to_rpy",
    "quaternion_wxyz_to_matrix",
    "quaternion_wxyz_to_xyzw",
    "quaternion_xyzw_of_entries",
    "quaternion_xyzw_of_rows",
    "quaternion_xyzw_to_matrix",
    "quaternion_xyzw_to_wxyz",
    "rotation_between",
    "rpy_to_matrix",
    "skew",
    "so3_exp",
    "so3_left_jacobian",
    "so3_left_jacobian_inverse",
    "so3_log",
    "vee",
]

#: below this rotation angle (rad) the exponential, its Jacobians and the logarithm take their
#: series expansions (the compiled kernels that mirror them read it too)
SMALL_ANGLE = 1e-6
# below this norm a vector's squared norm underflows: its direction cannot be normalised
_TINY_NORM = float(np.sqrt(np.finfo(np.float64).tiny))
_XYZW_FROM_WXYZ = np.array([1, 2, 3, 0])
_WXYZ_FROM_XYZW = np.array([3, 0, 1, 2])


def cross(
    a: object,
    b: object,
    *,
    axis: int = -1,
    out: np.ndarray | None = None,
    scratch: np.ndarray | None = None,
) -> np.ndarray:
    """Cross product ``a x b`` of 3-vectors stored along ``axis``, broadcast over the other axes.

    Same values as ``np.cross`` (bit for bit) without its overhead. ``axis=-1`` is the usual
    (..., 3) layout; batch-last kernels store vectors as (3, ...) (``axis=0``) or (..., 3, N)
    (``axis=-2``). A non-negative ``axis`` counts from the front, so ``a`` and ``b`` must then have
    the same number of axes. Both factors are in the same frame; so is the result. ``out`` (the
    broadcast shape, float64) receives the result and must not overlap ``a`` or ``b``; with it,
    ``scratch`` (float64, the shape of one component: the broadcast shape without ``axis``) makes
    the product allocate nothing, for kernels that run on large stacks.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    try:
        if a.shape[axis] != 3 or b.shape[axis] != 3 or (axis >= 0 and a.ndim != b.ndim):
            raise IndexError
    except IndexError:
        raise ShapeError(
            f"cross: expected 3-vectors on axis {axis} (arrays of equal rank for axis >= 0), "
            f"got shapes {a.shape} and {b.shape}"
        ) from None
    i0, i1, i2 = _components(axis)
    a0, a1, a2, b0, b1, b2 = a[i0], a[i1], a[i2], b[i0], b[i1], b[i2]
    if out is None:
        if a.size <= 48 and b.size <= 48:  # small: fewer numpy calls
            return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=axis)
        out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    for i, x, y, z, w in ((i0, a1, b2, a2, b1), (i1, a2, b0, a0, b2), (i2, a0, b1, a1, b0)):
        o = out[i]
        np.multiply(x, y, out=o)
        o -= z * w if scratch is None else np.multiply(z, w, out=scratch)
    return out


@functools.lru_cache(maxsize=16)
def _components(axis: int) -> tuple[tuple, tuple, tuple]:
    """Indices of the three components of vectors stored along ``axis``."""
    if axis < 0:
        return tuple((Ellipsis, k, *(slice(None),) * (-axis - 1)) for k in range(3))
    return tuple((*(slice(None),) * axis, k) for k in range(3))


def skew(w: object) -> np.ndarray:
    """Cross-product matrix ``w^``: ``skew(w) @ x == cross(w, x)``. Shape (..., 3) -> (..., 3, 3).

    The matrix acts in the frame whose coordinates ``w`` is given in.
    """
    w = np.asarray(w, dtype=np.float64)
    out = np.zeros((*w.shape[:-1], 3, 3))
    out[..., 0, 1] = -w[..., 2]
    out[..., 0, 2] = w[..., 1]
    out[..., 1, 0] = w[..., 2]
    out[..., 1, 2] = -w[..., 0]
    out[..., 2, 0] = -w[..., 1]
    out[..., 2, 1] = w[..., 0]
    return out


def vee(W: object) -> np.ndarray:
    """Inverse of :func:`skew`: the vector of the antisymmetric part of ``W``, (..., 3, 3) -> (..., 3).

    ``vee(skew(w)) == w``; a non-antisymmetric ``W`` gives the vector of ``(W - W^T) / 2``.
    """
    W = np.asarray(W, dtype=np.float64)
    return 0.5 * np.stack(
        [W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0], W[..., 1, 0] - W[..., 0, 1]],
        axis=-1,
    )


def _theta_coefficients(theta: np.ndarray):
    """sin(t)/t, (1-cos t)/t^2, (t - sin t)/t^3 with Taylor expansions near zero."""
    small = theta < SMALL_ANGLE
    t = np.where(small, 1.0, theta)
    t2 = t * t
    a = np.where(small, 1.0 - theta**2 / 6.0, np.sin(t) / t)
    # (1 - cos t)/t^2 written with the half angle: the direct form loses ~eps/t^2 relative accuracy,
    # which the left Jacobian (b multiplies skew(w) there) turns into 1e-11 errors near t = 1e-6
    half = np.sin(0.5 * t) / t
    b = np.where(small, 0.5 - theta**2 / 24.0, 2.0 * half * half)
    c = np.where(small, 1.0 / 6.0 - theta**2 / 120.0, (t - np.sin(t)) / (t2 * t))
    return a, b, c


def so3_exp(w: np.ndarray) -> np.ndarray:
    """Rodrigues' formula: rotation vector (..., 3) -> rotation matrix (..., 3, 3)."""
    w = np.asarray(w, dtype=np.float64)
    theta = np.linalg.norm(w, axis=-1)
    a, b, _ = _theta_coefficients(theta)
    W = skew(w)
    return np.eye(3) + a[..., None, None] * W + b[..., None, None] * (W @ W)


def so3_left_jacobian(w: np.ndarray) -> np.ndarray:
    """Left Jacobian V(w) of SO(3) (the translation part of the SE(3) exponential)."""
    w = np.asarray(w, dtype=np.float64)
    theta = np.linalg.norm(w, axis=-1)
    _, b, c = _theta_coefficients(theta)
    W = skew(w)
    return np.eye(3) + b[..., None, None] * W + c[..., None, None] * (W @ W)


def so3_left_jacobian_inverse(w: np.ndarray) -> np.ndarray:
    """Inverse of :func:`so3_left_jacobian`, valid for rotation angles below 2*pi."""
    w = np.asarray(w, dtype=np.float64)
    theta = np.linalg.norm(w, axis=-1)
    small = theta < SMALL_ANGLE
    t = np.where(small, 1.0, theta)
    # (1 - t sin t / (2 (1 - cos t))) / t^2 == (1 - (t/2) cot(t/2)) / t^2; the half-angle form avoids
    # the cancellation in 1 - cos t (the direct form gave log errors up to 1e-5 for t ~ 1e-6)
    h = 0.5 * t
    d = np.where(
        small,
        1.0 / 12.0 + theta**2 / 720.0,
        (1.0 - h * np.cos(h) / np.sin(h)) / (t * t),
    )
    W = skew(w)
    return np.eye(3) - 0.5 * W + d[..., None, None] * (W @ W)


def matrix_to_quaternion_xyzw(R: np.ndarray) -> np.ndarray:
    """Rotation matrix (..., 3, 3) -> unit quaternion (x, y, z, w) with w >= 0.

    Uses the numerically stable branch choice on the largest diagonal term (Shepperd).
    """
    R = np.asarray(R, dtype=np.float64)
    if R.shape == (3, 3):  # one matrix: the same formulas in Python floats (20x faster)
        return np.array(quaternion_xyzw_of_rows(R.tolist()))
    m00, m11, m22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    tr = m00 + m11 + m22
    # four candidate (unnormalised) quaternions, pick the best conditioned one
    cands = np.stack(
        [
            np.stack(
                [
                    R[..., 2, 1] - R[..., 1, 2],
                    R[..., 0, 2] - R[..., 2, 0],
                    R[..., 1, 0] - R[..., 0, 1],
                    1.0 + tr,
                ],
                axis=-1,
            ),
            np.stack(
                [
                    1.0 + m00 - m11 - m22,
                    R[..., 0, 1] + R[..., 1, 0],
                    R[..., 0, 2] + R[..., 2, 0],
                    R[..., 2, 1] - R[..., 1, 2],
                ],
                axis=-1,
            ),
            np.stack(
                [
                    R[..., 0, 1] + R[..., 1, 0],
                    1.0 - m00 + m11 - m22,
                    R[..., 1, 2] + R[..., 2, 1],
                    R[..., 0, 2] - R[..., 2, 0],
                ],
                axis=-1,
            ),
            np.stack(
                [
                    R[..., 0, 2] + R[..., 2, 0],
                    R[..., 1, 2] + R[..., 2, 1],
                    1.0 - m00 - m11 + m22,
                    R[..., 1, 0] - R[..., 0, 1],
                ],
                axis=-1,
            ),
        ],
        axis=-2,
    )
    key = np.stack([tr, m00, m11, m22], axis=-1)
    idx = np.argmax(key, axis=-1)
    q = np.take_along_axis(cands, idx[..., None, None], axis=-2)[..., 0, :]
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., 3:4] < 0.0, -q, q)


def quaternion_xyzw_of_rows(rows: list) -> tuple[float, float, float, float]:
    """:func:`matrix_to_quaternion_xyzw` of one rotation given as its rows (``R.tolist()``, or the
    first three rows of a pose's ``H.tolist()``: extra columns are ignored), in Python floats: the
    same branch choice (largest of trace and diagonal, the first one on ties) and sign (w >= 0),
    without the batched path's numpy calls (the single-state hot paths)."""
    (m00, m01, m02, *_), (m10, m11, m12, *_), (m20, m21, m22, *_) = rows[:3]
    return quaternion_xyzw_of_entries(m00, m01, m02, m10, m11, m12, m20, m21, m22)


def quaternion_xyzw_of_entries(
    m00: float, m01: float, m02: float, m10: float, m11: float, m12: float, m20: float, m21: float, m22: float
) -> tuple[float, float, float, float]:
    """:func:`quaternion_xyzw_of_rows` of the nine entries of R (scalars only: compiled as it is by
    the numba kernels of the engines' single-state paths)."""
    tr = m00 + m11 + m22
    if tr >= m00 and tr >= m11 and tr >= m22:
        x, y, z, w = m21 - m12, m02 - m20, m10 - m01, 1.0 + tr
    elif m00 >= m11 and m00 >= m22:
        x, y, z, w = 1.0 + m00 - m11 - m22, m01 + m10, m02 + m20, m21 - m12
    elif m11 >= m22:
        x, y, z, w = m01 + m10, 1.0 - m00 + m11 - m22, m12 + m21, m02 - m20
    else:
        x, y, z, w = m02 + m20, m12 + m21, 1.0 - m00 - m11 + m22, m10 - m01
    k = 1.0 / math.sqrt(x * x + y * y + z * z + w * w)
    if w < 0.0:
        k = -k
    return x * k, y * k, z * k, w * k


def quaternion_xyzw_to_matrix(q: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) (..., 4) -> rotation matrix (..., 3, 3). No normalisation."""
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    R = np.empty((*q.shape[:-1], 3, 3))
    R[..., 0, 0] = 1 - 2 * (yy + zz)
    R[..., 0, 1] = 2 * (xy - wz)
    R[..., 0, 2] = 2 * (xz + wy)
    R[..., 1, 0] = 2 * (xy + wz)
    R[..., 1, 1] = 1 - 2 * (xx + zz)
    R[..., 1, 2] = 2 * (yz - wx)
    R[..., 2, 0] = 2 * (xz - wy)
    R[..., 2, 1] = 2 * (yz + wx)
    R[..., 2, 2] = 1 - 2 * (xx + yy)
    return R


def quaternion_xyzw_to_wxyz(q: object) -> np.ndarray:
    """Reorder quaternions (..., 4) from ``(x, y, z, w)`` to ``(w, x, y, z)`` (a new array)."""
    return np.asarray(q, dtype=np.float64)[..., _WXYZ_FROM_XYZW]


def quaternion_wxyz_to_xyzw(q: object) -> np.ndarray:
    """Reorder quaternions (..., 4) from ``(w, x, y, z)`` to ``(x, y, z, w)`` (a new array)."""
    return np.asarray(q, dtype=np.float64)[..., _XYZW_FROM_WXYZ]


def quaternion_wxyz_to_matrix(q: object) -> np.ndarray:
    """Unit quaternion (w, x, y, z) (..., 4) of ``A_R_B`` -> ``A_R_B`` (..., 3, 3). No normalisation.

    spatial_v2's ``rq`` is the transpose: it returns the coordinate transform ``E = B_R_A``.
    """
    return quaternion_xyzw_to_matrix(quaternion_wxyz_to_xyzw(q))


def matrix_to_quaternion_wxyz(R: object) -> np.ndarray:
    """Rotation matrix ``A_R_B`` (..., 3, 3) -> unit quaternion (w, x, y, z) (..., 4) with w >= 0."""
    return quaternion_xyzw_to_wxyz(matrix_to_quaternion_xyzw(R))


def rotation_between(a: object, b: object) -> np.ndarray:
    """The minimal rotation ``R`` (..., 3, 3) with ``R @ a == b`` for directions a, b (..., 3).

    ``a`` and ``b`` are normalised here (they must not be zero) and are given in the same frame;
    ``R`` rotates about ``a x b`` by the angle between them, in that frame (it is ``A_R_B`` when
    ``b`` is the direction, in A, of the vector that ``a`` gives in B coordinates). Parallel
    directions give the identity. Antiparallel ones (``a x b == 0`` exactly, ``a . b < 0``) give the
    half turn about the unit axis perpendicular to ``a`` closest to the coordinate axis ``e_k`` on
    which ``a`` has its smallest component (the first such k): for ``a = ±e_z`` that is the half
    turn about x, ``diag(1, -1, -1)``. Near the antiparallel case the axis is projected onto the
    plane perpendicular to ``a``, so ``R`` stays orthonormal and ``R @ a`` equals ``b`` to rounding.
    """
    a = as_float_array(a, "rotation_between: a", (3,))
    b = as_float_array(b, "rotation_between: b", (3,))
    na = np.linalg.norm(a, axis=-1, keepdims=True)
    nb = np.linalg.norm(b, axis=-1, keepdims=True)
    if np.any(na == 0.0) or np.any(nb == 0.0):
        raise InvalidValueError("rotation_between: a zero vector has no direction")
    a, b = np.broadcast_arrays(a / na, b / nb)
    c = np.einsum("...i,...i->...", a, b)
    v = cross(a, b)
    V = skew(v)
    eye = np.eye(3)
    # a . b > 0: R = I + V + V^2 / (1 + c), no cancellation
    near = eye + V + (V @ V) / (1.0 + np.where(c > 0.0, c, 1.0))[..., None, None]
    # a . b <= 0: Rodrigues R = I + sin N + (1 - cos) N^2 about the unit axis n (|v| = sin, c = cos)
    s = np.linalg.norm(v, axis=-1)
    p = v - np.einsum("...i,...i->...", v, a)[..., None] * a
    pn = np.linalg.norm(p, axis=-1)
    k = np.argmin(np.abs(a), axis=-1)
    u = eye[k] - np.take_along_axis(a, k[..., None], axis=-1) * a
    u = u / np.linalg.norm(u, axis=-1, keepdims=True)
    good = pn > _TINY_NORM
    n = np.where(good[..., None], p / np.where(good, pn, 1.0)[..., None], u)
    N = skew(n)
    far = eye + s[..., None, None] * N + (1.0 - c)[..., None, None] * (N @ N)
    return np.where((c > 0.0)[..., None, None], near, far)


def so3_log(R: np.ndarray) -> np.ndarray:
    """Rotation matrix (..., 3, 3) -> rotation vector (..., 3) with angle in [0, pi].

    Goes through the quaternion, which stays accurate near 0 and near pi.
    """
    q = matrix_to_quaternion_xyzw(R)
    v = q[..., :3]
    w = q[..., 3]
    n = np.linalg.norm(v, axis=-1)
    small = n < SMALL_ANGLE
    safe_n = np.where(small, 1.0, n)
    # angle = 2 atan2(n, w); factor = angle / n, -> 2/w (1 - n^2/(3 w^2)) near n = 0
    factor = np.where(
        small,
        2.0 / w * (1.0 - n**2 / (3.0 * w**2)),
        2.0 * np.arctan2(n, w) / safe_n,
    )
    return v * factor[..., None]


def rpy_to_matrix(rpy: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw (fixed axes x, y, z): R = Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    rpy = np.asarray(rpy, dtype=np.float64)
    cr, sr = np.cos(rpy[..., 0]), np.sin(rpy[..., 0])
    cp, sp = np.cos(rpy[..., 1]), np.sin(rpy[..., 1])
    cy, sy = np.cos(rpy[..., 2]), np.sin(rpy[..., 2])
    R = np.empty((*rpy.shape[:-1], 3, 3))
    R[..., 0, 0] = cy * cp
    R[..., 0, 1] = cy * sp * sr - sy * cr
    R[..., 0, 2] = cy * sp * cr + sy * sr
    R[..., 1, 0] = sy * cp
    R[..., 1, 1] = sy * sp * sr + cy * cr
    R[..., 1, 2] = sy * sp * cr - cy * sr
    R[..., 2, 0] = -sp
    R[..., 2, 1] = cp * sr
    R[..., 2, 2] = cp * cr
    return R


def matrix_to_rpy(R: np.ndarray) -> np.ndarray:
    """Inverse of :func:`rpy_to_matrix`, pitch in [-pi/2, pi/2]; at gimbal lock roll is 0.

    Pitch comes from ``atan2`` (``arcsin`` loses half the digits near +-pi/2) and roll is read after
    removing the yaw, so the round trip reproduces ``R`` to rounding error even next to gimbal lock.
    Gimbal lock means ``cos(pitch)`` at rounding level (below 8 eps); there only ``yaw - roll``
    (or ``yaw + roll``) is defined and the yaw takes it all.
    """
    R = np.asarray(R, dtype=np.float64)
    cp = np.hypot(R[..., 0, 0], R[..., 1, 0])
    pitch = np.arctan2(-R[..., 2, 0], cp)
    lock = cp < 8.0 * np.finfo(np.float64).eps
    yaw = np.where(lock, np.arctan2(-R[..., 0, 1], R[..., 1, 1]), np.arctan2(R[..., 1, 0], R[..., 0, 0]))
    cy, sy = np.cos(yaw), np.sin(yaw)
    # row 1 of Rz(yaw)^T R = Ry(pitch) Rx(roll) is (0, cos(roll), -sin(roll))
    roll = np.arctan2(sy * R[..., 0, 2] - cy * R[..., 1, 2], cy * R[..., 1, 1] - sy * R[..., 0, 1])
    return np.stack([roll, pitch, yaw], axis=-1)
