"""Rigid transforms ``A_H_B`` (poses of frame B in frame A) with leading batch axes."""

from __future__ import annotations

from typing import overload

import numpy as np

from bridge._array import as_float_array, broadcast_batch
from bridge.errors import InvalidValueError, ShapeError
from bridge.spatial import so3
from bridge.spatial.vectors import Force, Motion
from bridge.spatial.xp import has_values, is_foreign, namespace

__all__ = ["Transform"]

_F64 = np.dtype(np.float64)
ROTATION_TOLERANCE = 1e-8
#: a checked rotation further than this from orthonormal (max |R^T R - I|) is replaced by the
#: nearest rotation; below it (rounding of a rotation computed in floating point) it is kept as is
ORTHONORMAL_TOLERANCE = 1e-14
QUATERNION_TOLERANCE = 1e-6
#: orthonormality tolerance of a float32 rotation (JAX float32 inputs)
FLOAT32_ROTATION_TOLERANCE = 1e-5


#: from this many entries (a batch of 64 rotations) :func:`_check_rotation` works on the nine entries
#: as rows of one (9, N) array: about 0.08 µs per rotation at N = 100,000 against 0.45 for the
#: batched 3x3 ``matmul`` and LAPACK's ``det``
_MANY = 9 * 64


def _orthonormality_by_entries(R: np.ndarray) -> tuple[float, np.ndarray]:
    """``(max |R^T R - I|, det R)`` of rotations R (..., 3, 3), entry by entry over the batch."""
    a = np.ascontiguousarray(R.reshape(-1, 9).T).reshape(3, 3, -1)  # a[i, j] = R[..., i, j]
    worst = []
    for j in range(3):
        for k in range(j, 3):  # (R^T R)[j, k] (symmetric)
            g = a[0, j] * a[0, k] + a[1, j] * a[1, k] + a[2, j] * a[2, k]
            if j == k:
                g -= 1.0
            worst.append(np.max(np.abs(g)))
    det = a[0, 0] * (a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1])
    det -= a[0, 1] * (a[1, 0] * a[2, 2] - a[1, 2] * a[2, 0])
    det += a[0, 2] * (a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0])
    return float(np.max(worst)), det


def _check_rotation(R: np.ndarray, name: str) -> np.ndarray:
    """Check rotations R (..., 3, 3) and return them orthonormal to rounding.

    More than :data:`ROTATION_TOLERANCE` from orthonormal (or a reflection) is an error. Between
    :data:`ORTHONORMAL_TOLERANCE` and that, R is replaced by the nearest rotation (its orthogonal
    polar factor), once, here: every engine then sees the same rotation (left as is, the engines'
    different algorithms turn the defect into disagreements of ~1e-9, above the 1e-10 of
    cross-validation).
    """
    if R.size >= _MANY:
        worst, det = _orthonormality_by_entries(R)
    else:
        err = np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3))
        worst = float(np.max(err)) if err.size else 0.0
        det = np.linalg.det(R)
    if worst > ROTATION_TOLERANCE:
        raise InvalidValueError(f"{name}: rotation is not orthonormal (max |R^T R - I| = {worst:.3g})")
    if det.size and float(np.min(det)) <= 0.0:
        raise InvalidValueError(f"{name}: rotation has determinant {float(np.min(det)):.3g} (a reflection)")
    if worst > ORTHONORMAL_TOLERANCE:
        U, _, Vt = np.linalg.svd(R)
        return U @ Vt  # det > 0 already, so this is the nearest proper rotation
    return R


def _normalised_quaternion(q: object, name: str) -> np.ndarray:
    q = as_float_array(q, name, (4,))
    n = np.linalg.norm(q, axis=-1)
    bad = np.abs(n - 1.0) > QUATERNION_TOLERANCE
    if np.any(bad):
        worst = float(n[bad].flat[0]) if n.ndim else float(n)
        raise InvalidValueError(f"{name}: quaternion is not unit norm (norm {worst:.9g})")
    return q / n[..., None]


def _check_float32_pose(values: np.ndarray) -> None:
    """The checks of a (..., 4, 4) pose at float32 precision: real, finite, last row
    ``[0, 0, 0, 1]``, ``R^T R = I`` and ``det R = +1`` within :data:`FLOAT32_ROTATION_TOLERANCE` (a
    reflection passes the orthonormality test; its determinant is -1)."""
    if values.dtype.kind == "c":
        raise InvalidValueError("homogeneous matrix: complex values (give real numbers)")
    values = values.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise InvalidValueError("homogeneous matrix: contains NaN or infinite values")
    bottom = values[..., 3, :]
    if np.any(np.abs(bottom - np.array([0.0, 0.0, 0.0, 1.0])) > FLOAT32_ROTATION_TOLERANCE):
        raise InvalidValueError("homogeneous matrix: last row must be [0, 0, 0, 1]")
    R = values[..., :3, :3]
    err = float(np.max(np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)), initial=0.0))
    if err > FLOAT32_ROTATION_TOLERANCE:
        raise InvalidValueError(
            f"homogeneous matrix: rotation is not orthonormal (max |R^T R - I| = {err:.3g})"
        )
    det = np.linalg.det(R)
    if det.size and float(np.min(det)) < 1.0 - FLOAT32_ROTATION_TOLERANCE:
        raise InvalidValueError(
            f"homogeneous matrix: rotation has determinant {float(np.min(det)):.3g} (a reflection)"
        )


def _foreign_pose(matrix: object, check: bool) -> object:
    """A JAX or CasADi (..., 4, 4) pose, kept as it is: its shape is checked, and with ``check`` its
    values too when it has values (a concrete JAX array, a CasADi DM; skipped under tracing and for
    symbols)."""
    shape = tuple(matrix.shape)
    if len(shape) < 2 or shape[-2:] != (4, 4) or (not namespace(matrix).batched and len(shape) != 2):
        raise ShapeError(f"homogeneous matrix: expected shape (..., 4, 4), got {shape}")
    if check and has_values(matrix):
        values = np.asarray(matrix)
        if values.dtype == np.float64:
            Transform(values)  # the numpy checks, on the values
        else:  # float32 (JAX): the same checks at float32 precision
            _check_float32_pose(values)
    return matrix


class Transform:
    """Pose ``A_H_B`` of frame B in frame A: ``p_A = A_H_B.apply(p_B)``.

    Stored as one read-only (..., 4, 4) homogeneous matrix; leading axes are batch axes and
    broadcast like numpy. ``A_H_B @ B_H_C`` is ``A_H_C``; ``A_H_B @ Motion`` (B coordinates)
    gives A coordinates with the motion action, ``A_H_B @ Force`` the dual (force) action.
    """

    __slots__ = ("_m",)

    def __init__(self, matrix: object, *, check: bool = True) -> None:
        """From a (..., 4, 4) homogeneous matrix ``A_H_B``.

        ``check=True`` copies ``matrix`` and validates it (shape, finite, last row ``[0, 0, 0, 1]``,
        orthonormal rotation with determinant +1). ``check=False`` is the trusted fast path for
        matrices the caller built (as cheap as a bare object): nothing is validated, a float64
        ndarray is adopted without a copy and made read-only (hand it over: do not write to it
        through another view afterwards), anything else is converted to one.
        """
        if is_foreign(matrix):
            self._m = _foreign_pose(matrix, check)
            return
        if not check:
            if type(matrix) is not np.ndarray or matrix.dtype is not _F64:
                matrix = np.asarray(matrix, dtype=np.float64)
            matrix.setflags(write=False)
            self._m = matrix
            return
        m = as_float_array(matrix, "homogeneous matrix", (4, 4)).copy()
        bottom = m[..., 3, :]
        if np.any(np.abs(bottom - np.array([0.0, 0.0, 0.0, 1.0])) > 1e-12):
            raise InvalidValueError("homogeneous matrix: last row must be [0, 0, 0, 1]")
        m[..., :3, :3] = _check_rotation(m[..., :3, :3], "homogeneous matrix")
        m.setflags(write=False)
        self._m = m

    @classmethod
    def _wrap(cls, m: np.ndarray) -> Transform:
        """Internal to this module (other modules use ``Transform(m, check=False)``)."""
        obj = cls.__new__(cls)
        m.setflags(write=False)
        obj._m = m
        return obj

    # ----------------------------------------------------------------- constructors
    @classmethod
    def identity(cls, batch_shape: tuple[int, ...] = ()) -> Transform:
        return cls._wrap(np.broadcast_to(np.eye(4), (*batch_shape, 4, 4)).copy())

    @classmethod
    def from_matrix(cls, matrix: object, *, check: bool = True) -> Transform:
        """From a (..., 4, 4) homogeneous matrix; same as ``Transform(matrix, check=check)``."""
        return cls(matrix, check=check)

    @classmethod
    def from_rotation_translation(
        cls, rotation: object | None = None, translation: object | None = None, *, check: bool = True
    ) -> Transform:
        """From ``A_R_B`` (..., 3, 3) and ``A_o_B`` (..., 3); either may be omitted."""
        R = np.eye(3) if rotation is None else as_float_array(rotation, "rotation", (3, 3))
        p = np.zeros(3) if translation is None else as_float_array(translation, "translation", (3,))
        if check and rotation is not None:
            R = _check_rotation(R, "rotation")
        batch = broadcast_batch("rotation and translation", R.shape[:-2], p.shape[:-1])
        m = np.zeros((*batch, 4, 4))
        m[..., :3, :3] = R
        m[..., :3, 3] = p
        m[..., 3, 3] = 1.0
        return cls._wrap(m)

    @classmethod
    def from_translation(cls, translation: object) -> Transform:
        return cls.from_rotation_translation(None, translation)

    @classmethod
    def from_quaternion_xyzw(cls, quaternion: object, translation: object | None = None) -> Transform:
        """From a unit quaternion (x, y, z, w) (..., 4) and an optional translation (..., 3)."""
        q = _normalised_quaternion(quaternion, "quaternion_xyzw")
        return cls.from_rotation_translation(so3.quaternion_xyzw_to_matrix(q), translation, check=False)

    @classmethod
    def from_quaternion_wxyz(cls, quaternion: object, translation: object | None = None) -> Transform:
        """From a unit quaternion (w, x, y, z) (..., 4) and an optional translation (..., 3)."""
        q = _normalised_quaternion(quaternion, "quaternion_wxyz")
        return cls.from_quaternion_xyzw(so3.quaternion_wxyz_to_xyzw(q), translation)

    @classmethod
    def from_rpy(cls, rpy: object, xyz: object | None = None) -> Transform:
        """From URDF ``<origin rpy="..." xyz="..."/>``: R = Rz(yaw) Ry(pitch) Rx(roll)."""
        rpy = as_float_array(rpy, "rpy", (3,))
        return cls.from_rotation_translation(so3.rpy_to_matrix(rpy), xyz, check=False)

    @classmethod
    def exp(cls, twist: object) -> Transform:
        """SE(3) exponential of a twist (..., 6) = (v, omega), linear part first."""
        xi = as_float_array(twist, "twist", (6,))
        v, w = xi[..., :3], xi[..., 3:]
        R = so3.so3_exp(w)
        p = np.einsum("...ij,...j->...i", so3.so3_left_jacobian(w), v)
        return cls.from_rotation_translation(R, p, check=False)

    @classmethod
    def exp_so3(cls, rotation_vector: object) -> Transform:
        """Pure rotation exp(omega^) from a rotation vector (..., 3)."""
        w = as_float_array(rotation_vector, "rotation vector", (3,))
        return cls.from_rotation_translation(so3.so3_exp(w), None, check=False)

    # ----------------------------------------------------------------- accessors
    @property
    def matrix(self) -> np.ndarray:
        """The read-only (..., 4, 4) homogeneous matrix."""
        return self._m

    def as_matrix(self) -> np.ndarray:
        """A writable copy of the (..., 4, 4) homogeneous matrix."""
        return self._m.copy()

    @property
    def rotation(self) -> np.ndarray:
        """``A_R_B``, (..., 3, 3)."""
        m = self._m
        return m[..., :3, :3] if type(m) is np.ndarray else namespace(m).pose_parts(m)[0]

    @property
    def translation(self) -> np.ndarray:
        """``A_o_B``, the origin of B in A coordinates, (..., 3) (a column for CasADi)."""
        m = self._m
        return m[..., :3, 3] if type(m) is np.ndarray else namespace(m).pose_parts(m)[1]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        m = self._m
        return tuple(m.shape[:-2]) if namespace(m).batched else ()

    @property
    def foreign(self) -> bool:
        """Whether the matrix is a JAX array or a CasADi matrix (:mod:`bridge.spatial.xp`)."""
        return type(self._m) is not np.ndarray

    def as_quaternion_xyzw(self) -> np.ndarray:
        """Unit quaternion (x, y, z, w) with w >= 0, (..., 4)."""
        return so3.matrix_to_quaternion_xyzw(self.rotation)

    def as_quaternion_wxyz(self) -> np.ndarray:
        """Unit quaternion (w, x, y, z) with w >= 0, (..., 4)."""
        return so3.matrix_to_quaternion_wxyz(self.rotation)

    def as_rpy(self) -> np.ndarray:
        """URDF roll-pitch-yaw (..., 3) of the rotation."""
        return so3.matrix_to_rpy(self.rotation)

    def log(self) -> np.ndarray:
        """SE(3) logarithm, twist (..., 6) = (v, omega) with |omega| <= pi."""
        w = so3.so3_log(self.rotation)
        v = np.einsum("...ij,...j->...i", so3.so3_left_jacobian_inverse(w), self.translation)
        return np.concatenate([v, w], axis=-1)

    def log_so3(self) -> np.ndarray:
        """Rotation vector (..., 3) of the rotation part."""
        return so3.so3_log(self.rotation)

    # ----------------------------------------------------------------- group operations
    def inverse(self) -> Transform:
        """``B_H_A`` from ``A_H_B``."""
        Rt = np.swapaxes(self.rotation, -1, -2)
        m = np.zeros_like(self._m)
        m[..., :3, :3] = Rt
        m[..., :3, 3] = -np.einsum("...ij,...j->...i", Rt, self.translation)
        m[..., 3, 3] = 1.0
        return Transform._wrap(m)

    @overload
    def __matmul__(self, other: Transform) -> Transform: ...
    @overload
    def __matmul__(self, other: Motion) -> Motion: ...
    @overload
    def __matmul__(self, other: Force) -> Force: ...

    def __matmul__(self, other):
        if isinstance(other, Transform):
            broadcast_batch("Transform @ Transform", self.batch_shape, other.batch_shape)
            return Transform._wrap(self._m @ other._m)
        if isinstance(other, Motion):
            return self.apply_motion(other)
        if isinstance(other, Force):
            return self.apply_force(other)
        from bridge.spatial.inertia import SpatialInertia

        if isinstance(other, SpatialInertia):
            return other.transformed(self)
        return NotImplemented

    def apply(self, points: object) -> np.ndarray:
        """Map points (..., 3) from B coordinates to A coordinates."""
        p = as_float_array(points, "points", (3,))
        broadcast_batch("Transform.apply", self.batch_shape, p.shape[:-1])
        return np.einsum("...ij,...j->...i", self.rotation, p) + self.translation

    def apply_motion(self, motion: Motion) -> Motion:
        """``A_X_B @ v``: v' = (R v + p x R w, R w), without building the 6x6 matrix."""
        broadcast_batch("Transform @ Motion", self.batch_shape, motion.batch_shape)
        R, p = self.rotation, self.translation
        w = np.einsum("...ij,...j->...i", R, motion.angular)
        v = np.einsum("...ij,...j->...i", R, motion.linear) + so3.cross(p, w)
        return Motion(np.concatenate(np.broadcast_arrays(v, w), axis=-1), check=False)

    def apply_force(self, force: Force) -> Force:
        """``A_Xs_B @ f`` (dual action): f' = (R f, R tau + p x R f)."""
        broadcast_batch("Transform @ Force", self.batch_shape, force.batch_shape)
        R, p = self.rotation, self.translation
        f = np.einsum("...ij,...j->...i", R, force.linear)
        t = np.einsum("...ij,...j->...i", R, force.angular) + so3.cross(p, f)
        return Force(np.concatenate(np.broadcast_arrays(f, t), axis=-1), check=False)

    def motion_matrix(self) -> np.ndarray:
        """``A_X_B`` (..., 6, 6), linear-first: ``[[R, skew(p) R], [0, R]]``."""
        R, p = self.rotation, self.translation
        X = np.zeros((*self.batch_shape, 6, 6))
        X[..., :3, :3] = R
        X[..., 3:, 3:] = R
        X[..., :3, 3:] = so3.skew(p) @ R
        return X

    def force_matrix(self) -> np.ndarray:
        """``A_Xs_B = A_X_B^{-T}`` (..., 6, 6), linear-first: ``[[R, 0], [skew(p) R, R]]``."""
        R, p = self.rotation, self.translation
        X = np.zeros((*self.batch_shape, 6, 6))
        X[..., :3, :3] = R
        X[..., 3:, 3:] = R
        X[..., 3:, :3] = so3.skew(p) @ R
        return X

    def __getitem__(self, index) -> Transform:
        if not isinstance(index, tuple):
            index = (index,)
        return Transform._wrap(self._m[(*index, slice(None), slice(None))])

    def reshape(self, *shape: int) -> Transform:
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        return Transform._wrap(self._m.reshape(*shape, 4, 4))

    def __array__(self, dtype=None, copy=None):
        return np.array(self._m, dtype=dtype, copy=True)

    def __repr__(self) -> str:
        if self.batch_shape:
            return f"Transform(batch_shape={self.batch_shape})"
        return f"Transform(rotation={self.rotation.tolist()}, translation={self.translation.tolist()})"

    def allclose(self, other: Transform, atol: float = 1e-12) -> bool:
        return bool(np.allclose(self._m, other._m, atol=atol, rtol=0.0))


def ensure_transform(x: object, name: str = "transform") -> Transform:
    """Accept a Transform or a (..., 4, 4) array (checked) and return a Transform."""
    if isinstance(x, Transform):
        return x
    try:
        return Transform(x)
    except ShapeError as exc:
        raise ShapeError(f"{name}: {exc}") from None
    except InvalidValueError as exc:
        raise InvalidValueError(f"{name}: {exc}") from None
