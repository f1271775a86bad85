"""Rotation-group helpers on raw arrays with leading batch axes.

All functions broadcast over leading axes. Angles are radians. Rotation matrices ``A_R_B`` map
coordinates in B to coordinates in A.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "matrix_to_quaternion_xyzw",
    "matrix_to_rpy",
    "quaternion_xyzw_to_matrix",
    "rpy_to_matrix",
    "skew",
    "so3_exp",
    "so3_left_jacobian",
    "so3_left_jacobian_inverse",
    "so3_log",
    "vee",
]

_SMALL = 1e-6


def skew(w: np.ndarray) -> np.ndarray:
    """Cross-product matrix: ``skew(w) @ x == cross(w, x)``. Shape (..., 3) -> (..., 3, 3)."""
    w = np.asarray(w, dtype=np.float64)
    out = np.zeros((*w.shape[:-1], 3, 3))
    out[..., 0, 1] = -w[..., 2]
    out[..., 0, 2] = w[..., 1]
    out[..., 1, 0] = w[..., 2]
    out[..., 1, 2] = -w[..., 0]
    out[..., 2, 0] = -w[..., 1]
    out[..., 2, 1] = w[..., 0]
    return out


def vee(W: np.ndarray) -> np.ndarray:
    """Inverse of :func:`skew` (antisymmetric part). Shape (..., 3, 3) -> (..., 3)."""
    W = np.asarray(W, dtype=np.float64)
    return 0.5 * np.stack(
        [W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0], W[..., 1, 0] - W[..., 0, 1]],
        axis=-1,
    )


def _theta_coefficients(theta: np.ndarray):
    """sin(t)/t, (1-cos t)/t^2, (t - sin t)/t^3 with Taylor expansions near zero."""
    small = theta < _SMALL
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
    small = theta < _SMALL
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


def so3_log(R: np.ndarray) -> np.ndarray:
    """Rotation matrix (..., 3, 3) -> rotation vector (..., 3) with angle in [0, pi].

    Goes through the quaternion, which stays accurate near 0 and near pi.
    """
    q = matrix_to_quaternion_xyzw(R)
    v = q[..., :3]
    w = q[..., 3]
    n = np.linalg.norm(v, axis=-1)
    small = n < _SMALL
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
