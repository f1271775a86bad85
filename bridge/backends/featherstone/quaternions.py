"""Unit quaternions as spatial_v2 uses them (w first) and the floating-base state ``xfb``.

``xfb`` (..., 13) = [unit quaternion (w, x, y, z) of the fixed-to-base rotation; base origin in
world coordinates; base spatial velocity in world coordinates, angular first]; :func:`rq` of its
quaternion is the coordinate rotation base_R_world.
"""

from __future__ import annotations

import numpy as np

from bridge._array import as_float_array
from bridge.errors import InvalidValueError
from bridge.spatial import cross, quaternion_wxyz_to_matrix

__all__ = ["check_xfb", "rq", "rq_last", "rqd", "xfb_parts"]


def rq(quaternion: object) -> np.ndarray:
    """Coordinate rotation E (..., 3, 3) of a unit quaternion (w, x, y, z) (..., 4).

    The quaternion describes the rotation of frame B relative to A (as an active rotation it is
    ``A_R_B``); E is the coordinate transform from A to B, ``E = A_R_B^T = B_R_A`` (Featherstone's
    and spatial_v2's meaning).
    """
    q = as_float_array(quaternion, "quaternion (w, x, y, z)", (4,))
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    n = w * w + x * x + y * y + z * z
    if np.any(np.abs(n - 1.0) > 1e-6):
        raise InvalidValueError(
            f"quaternion (w, x, y, z): not unit norm (norm {np.sqrt(n).reshape(-1)[0]:.9g})"
        )
    # A_R_B of the normalised quaternion, transposed
    return np.swapaxes(quaternion_wxyz_to_matrix(q / np.sqrt(n)[..., None]), -1, -2)


def rqd(quaternion: object, omega_body: object) -> np.ndarray:
    """Quaternion rate (..., 4) for the angular velocity ``omega_body`` (..., 3) of B expressed in B
    coordinates: ``q_dot = 1/2 q * (0, omega_B)`` (Hamilton product, w first)."""
    q = as_float_array(quaternion, "quaternion (w, x, y, z)", (4,))
    om = as_float_array(omega_body, "angular velocity", (3,))
    batch = np.broadcast_shapes(q.shape[:-1], om.shape[:-1])
    q = np.broadcast_to(q, (*batch, 4))
    om = np.broadcast_to(om, (*batch, 3))
    w, v = q[..., :1], q[..., 1:]
    out = np.empty((*batch, 4))
    out[..., :1] = -0.5 * np.sum(v * om, axis=-1, keepdims=True)
    out[..., 1:] = 0.5 * (w * om + cross(v, om))
    return out


def check_xfb(xfb: object) -> np.ndarray:
    """xfb (..., 13) as a float array, its quaternion checked for unit norm."""
    x = as_float_array(xfb, "xfb", (13,))
    quat = x[..., :4]
    norm = np.sqrt(np.einsum("...i,...i->...", quat, quat))
    if np.any(np.abs(norm - 1.0) > 1e-6):
        raise InvalidValueError(
            f"xfb: the quaternion xfb[0:4] is not unit norm (norm {norm.reshape(-1)[0]:.9g})"
        )
    return x


def xfb_parts(xfb: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(xfb, E (..., 3, 3), r (..., 3), v_fb (..., 6))``: xfb checked, the coordinate rotation
    base_R_world of its (normalised) quaternion, the base origin and velocity in world."""
    x = check_xfb(xfb)
    quat = x[..., :4]
    norm = np.linalg.norm(quat, axis=-1)
    return x, rq(quat / norm[..., None]), x[..., 4:7], x[..., 7:13]


def rq_last(q: np.ndarray) -> np.ndarray:
    """:func:`rq` of unit quaternions stored batch-last (4, N): E (3, 3, N)."""
    w, x, y, z = q
    E = np.empty((3, 3, q.shape[-1]))
    ww, xx, yy, zz = w * w, x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    E[0, 0] = ww + xx - yy - zz
    E[0, 1] = 2 * (xy + wz)
    E[0, 2] = 2 * (xz - wy)
    E[1, 0] = 2 * (xy - wz)
    E[1, 1] = ww - xx + yy - zz
    E[1, 2] = 2 * (yz + wx)
    E[2, 0] = 2 * (xz + wy)
    E[2, 1] = 2 * (yz - wx)
    E[2, 2] = ww - xx - yy + zz
    E /= ww + xx + yy + zz
    return E
