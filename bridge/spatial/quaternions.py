"""Rotations to and from unit quaternions in any array namespace (numpy, JAX, CasADi).

The same formulas as :mod:`bridge.spatial.so3` (Shepperd's choice of the best-conditioned of four
candidates, ``w >= 0``), written against :class:`bridge.spatial.xp.Ops` without in-place writes, so
that they run inside JAX graphs (the choice by ``where``, differentiable away from the switching
surfaces) and as CasADi expressions (``if_else``). The numpy hot paths keep :mod:`bridge.spatial.so3`.
"""

from __future__ import annotations

from typing import Any

from bridge.spatial.xp import Ops

__all__ = ["quaternion_xyzw_to_rotation", "rotation_to_quaternion_xyzw"]


def rotation_to_quaternion_xyzw(R: Any, o: Ops) -> Any:
    """Rotation matrices (..., 3, 3) -> unit quaternions (x, y, z, w) (..., 4) with w >= 0."""
    e = o.entry
    m00, m11, m22 = e(R, 0, 0), e(R, 1, 1), e(R, 2, 2)
    d21, d02, d10 = e(R, 2, 1) - e(R, 1, 2), e(R, 0, 2) - e(R, 2, 0), e(R, 1, 0) - e(R, 0, 1)
    s01, s02, s12 = e(R, 0, 1) + e(R, 1, 0), e(R, 0, 2) + e(R, 2, 0), e(R, 1, 2) + e(R, 2, 1)
    tr = m00 + m11 + m22
    # four candidate (unnormalised) quaternions (x, y, z, w) and the size of their pivot
    cands = [
        ((d21, d02, d10, 1.0 + tr), 1.0 + tr),
        ((1.0 + m00 - m11 - m22, s01, s02, d21), 1.0 + m00 - m11 - m22),
        ((s01, 1.0 - m00 + m11 - m22, s12, d02), 1.0 - m00 + m11 - m22),
        ((s02, s12, 1.0 - m00 - m11 + m22, d10), 1.0 - m00 - m11 + m22),
    ]
    best, best_size = cands[0]
    for comps, size in cands[1:]:
        better = size > best_size
        best = tuple(o.where(better, c, b) for c, b in zip(comps, best, strict=True))
        best_size = o.where(better, size, best_size)
    x, y, z, w = best
    norm = o.sqrt(x * x + y * y + z * z + w * w)
    sign = o.where(w < 0.0, -1.0, 1.0) / norm
    return o.vector([x * sign, y * sign, z * sign, w * sign])


def quaternion_xyzw_to_rotation(q: Any, o: Ops) -> Any:
    """Unit quaternions (x, y, z, w) (..., 4) -> rotation matrices (..., 3, 3) (no normalisation)."""
    x, y, z, w = (o.item(q, i) for i in range(4))
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    return o.matrix(
        [
            [1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)],
            [2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)],
            [2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)],
        ]
    )
