"""Converters between 6D conventions: component ordering and foreign transform encodings.

bridge orders 6D vectors linear first. Featherstone (spatial_v2, RBDL) orders them angular first
and encodes a rigid transform as a 6x6 Plücker matrix or a pair ``(E, r)``:

* ``plux(E, r) = [[E, 0], [-E skew(r), E]]`` (angular first) is ``B_X_A``: it maps motion
  coordinates in A to coordinates in B, where B's origin is ``r`` (A coordinates) and ``E`` is
  the coordinate rotation ``B_R_A``. The matching pose is ``A_H_B = (R = E^T, p = r)``.
  RBDL's ``SpatialTransform(E, r)`` has the same meaning (left-associative).
* TDS / brax store a right-associative ``plxb(E, r) = [[E^T, 0], [-E^T skew(r), E^T]]`` with
  ``E = A_R_B``: the same ``B_X_A`` matrix, but the pair is ``A_H_B = (R = E, p = r)`` and
  composes as ``plxb(E1, r1) * plxb(E2, r2) = plxb(E1 E2, r1 + E1 r2)``.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from bridge._array import as_float_array, broadcast_batch
from bridge.errors import InvalidValueError, ShapeError
from bridge.spatial.so3 import skew, vee
from bridge.spatial.transform import Transform, _check_rotation

__all__ = [
    "Ordering",
    "force_transform_matrix",
    "motion_transform_matrix",
    "plux",
    "plxb",
    "reorder_matrix",
    "to_angular_first",
    "to_linear_first",
    "transform_from_featherstone",
    "transform_from_plux",
    "transform_from_plxb",
    "transform_from_rbdl",
    "transform_from_tds",
    "transform_to_featherstone",
    "transform_to_plux",
    "transform_to_plxb",
    "transform_to_rbdl",
    "transform_to_tds",
]

_SWAP = np.array([3, 4, 5, 0, 1, 2])


class Ordering(str, Enum):
    """Order of the two 3D halves of a 6D vector."""

    LINEAR_FIRST = "linear_first"  # bridge, Pinocchio, iDynTree
    ANGULAR_FIRST = "angular_first"  # Featherstone, spatial_v2, RBDL, TDS, brax


def to_angular_first(vector: object) -> np.ndarray:
    """(..., 6) linear-first -> angular-first."""
    v = as_float_array(vector, "6D vector", (6,))
    return v[..., _SWAP]


def to_linear_first(vector: object) -> np.ndarray:
    """(..., 6) angular-first -> linear-first."""
    v = as_float_array(vector, "6D vector", (6,))
    return v[..., _SWAP]


def reorder_matrix(matrix: object, rows: bool = True, cols: bool = True) -> np.ndarray:
    """Swap the linear/angular halves of the rows and/or columns of a (..., 6, 6) or (..., 6, n)
    / (..., n, 6) matrix. The swap is its own inverse, so it converts either way."""
    M = np.asarray(matrix, dtype=np.float64)
    if rows:
        if M.ndim < 2 or M.shape[-2] != 6:
            raise ShapeError(f"reorder_matrix: expected 6 rows, got shape {M.shape}")
        M = M[..., _SWAP, :]
    if cols:
        if M.ndim < 1 or M.shape[-1] != 6:
            raise ShapeError(f"reorder_matrix: expected 6 columns, got shape {M.shape}")
        M = M[..., _SWAP]
    return M


def motion_transform_matrix(A_H_B: Transform, ordering: Ordering) -> np.ndarray:
    """6x6 ``A_X_B`` in the given ordering."""
    X = A_H_B.motion_matrix()
    return X if Ordering(ordering) is Ordering.LINEAR_FIRST else reorder_matrix(X)


def force_transform_matrix(A_H_B: Transform, ordering: Ordering) -> np.ndarray:
    """6x6 ``A_Xs_B = A_X_B^{-T}`` in the given ordering."""
    X = A_H_B.force_matrix()
    return X if Ordering(ordering) is Ordering.LINEAR_FIRST else reorder_matrix(X)


# --------------------------------------------------------------------------- Featherstone / RBDL
def plux(E: object, r: object) -> np.ndarray:
    """Featherstone's Plücker transform ``[[E, 0], [-E skew(r), E]]`` (angular first), (..., 6, 6)."""
    E = as_float_array(E, "E", (3, 3))
    r = as_float_array(r, "r", (3,))
    batch = broadcast_batch("plux(E, r)", E.shape[:-2], r.shape[:-1])
    X = np.zeros((*batch, 6, 6))
    X[..., :3, :3] = E
    X[..., 3:, 3:] = E
    X[..., 3:, :3] = -E @ skew(r)
    return X


def _split_plux(X: object, name: str) -> tuple[np.ndarray, np.ndarray]:
    X = as_float_array(X, name, (6, 6))
    E = X[..., :3, :3]
    _check_rotation(E, name)
    if np.any(np.abs(X[..., :3, 3:]) > 1e-9) or np.any(np.abs(X[..., 3:, 3:] - E) > 1e-9):
        raise InvalidValueError(f"{name}: not a Plücker motion transform (block structure)")
    # lower-left block is -E skew(r): skew(r) = -E^T X_21
    r = vee(-np.swapaxes(E, -1, -2) @ X[..., 3:, :3])
    return E, r


def transform_to_featherstone(A_H_B: Transform) -> tuple[np.ndarray, np.ndarray]:
    """``(E, r)`` with ``plux(E, r) = B_X_A`` for the pose ``A_H_B``: E = A_R_B^T, r = A_o_B."""
    return np.swapaxes(A_H_B.rotation, -1, -2).copy(), A_H_B.translation.copy()


def transform_from_featherstone(E: object, r: object) -> Transform:
    """Pose ``A_H_B`` from Featherstone's ``(E, r)`` (E = B_R_A, r = origin of B in A)."""
    E = as_float_array(E, "E", (3, 3))
    _check_rotation(E, "E")
    return Transform.from_rotation_translation(np.swapaxes(E, -1, -2), r, check=False)


transform_to_rbdl = transform_to_featherstone
transform_from_rbdl = transform_from_featherstone


def transform_to_plux(A_H_B: Transform) -> np.ndarray:
    """Featherstone's 6x6 ``B_X_A`` (angular first) for the pose ``A_H_B``."""
    return plux(*transform_to_featherstone(A_H_B))


def transform_from_plux(X: object) -> Transform:
    """Pose ``A_H_B`` from a Featherstone 6x6 ``B_X_A`` (angular first)."""
    E, r = _split_plux(X, "Plücker transform")
    return Transform.from_rotation_translation(np.swapaxes(E, -1, -2), r, check=False)


# --------------------------------------------------------------------------- TDS / brax
def plxb(E: object, r: object) -> np.ndarray:
    """Right-associative Plücker transform of TDS/brax ``[[E^T, 0], [-E^T skew(r), E^T]]``."""
    E = as_float_array(E, "E", (3, 3))
    return plux(np.swapaxes(E, -1, -2), r)


def transform_to_tds(A_H_B: Transform) -> tuple[np.ndarray, np.ndarray]:
    """TDS/brax ``(E, r)`` of the pose ``A_H_B``: E = A_R_B, r = A_o_B."""
    return A_H_B.rotation.copy(), A_H_B.translation.copy()


def transform_from_tds(E: object, r: object) -> Transform:
    """Pose ``A_H_B`` from TDS/brax ``(E, r)`` (E = A_R_B, r = origin of B in A)."""
    return Transform.from_rotation_translation(E, r)


def transform_to_plxb(A_H_B: Transform) -> np.ndarray:
    """6x6 ``plxb(E, r)`` (angular first) of the pose ``A_H_B``; numerically ``B_X_A``."""
    return plxb(*transform_to_tds(A_H_B))


def transform_from_plxb(Y: object) -> Transform:
    """Pose ``A_H_B`` from a TDS/brax 6x6 ``plxb(E, r)``."""
    return transform_from_plux(Y)
