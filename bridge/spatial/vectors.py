"""Spatial motion and force vectors (6D, linear part first) with leading batch axes.

``Motion`` holds a twist ``(v, omega)``: linear velocity of the point at the frame origin, then
angular velocity. ``Force`` holds a wrench ``(f, tau)``: force, then torque about the frame origin.
The two are separate types so a :class:`bridge.spatial.Transform` applies the right action.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from bridge._array import as_float_array, broadcast_batch
from bridge.spatial.so3 import cross, skew

__all__ = ["Force", "Motion"]

_V = TypeVar("_V", bound="_Spatial6")
_F64 = np.dtype(np.float64)


class _Spatial6:
    """Common storage of :class:`Motion` and :class:`Force`: one (..., 6) array, immutable."""

    __slots__ = ("_v",)
    _name = "spatial vector"

    def __init__(self, vector: object, *, check: bool = True) -> None:
        """From a (..., 6) array, linear part first.

        ``check=True`` copies ``vector`` and validates its shape and finiteness. ``check=False`` is
        the trusted fast path for arrays the caller built: nothing is validated, a float64 ndarray
        is adopted without a copy and made read-only (hand it over), anything else is converted.
        """
        if not check:
            if type(vector) is not np.ndarray or vector.dtype is not _F64:
                vector = np.asarray(vector, dtype=np.float64)
            vector.setflags(write=False)
            self._v = vector
            return
        v = as_float_array(vector, self._name, (6,)).copy()
        v.setflags(write=False)
        self._v = v

    @classmethod
    def _wrap(cls: type[_V], v: np.ndarray) -> _V:
        """Internal to this module (other modules use ``Motion(v, check=False)``)."""
        obj = cls.__new__(cls)
        if type(v) is not np.ndarray or v.dtype is not _F64:
            v = np.asarray(v, dtype=np.float64)
        v.setflags(write=False)
        obj._v = v
        return obj

    @classmethod
    def from_linear_angular(cls: type[_V], linear: object, angular: object) -> _V:
        """Build from the linear (..., 3) and angular (..., 3) parts (broadcast together)."""
        lin = as_float_array(linear, "linear part", (3,))
        ang = as_float_array(angular, "angular part", (3,))
        lin, ang = np.broadcast_arrays(lin, ang)
        return cls._wrap(np.concatenate([lin, ang], axis=-1))

    @classmethod
    def zero(cls: type[_V], batch_shape: tuple[int, ...] = ()) -> _V:
        return cls._wrap(np.zeros((*batch_shape, 6)))

    @property
    def vector(self) -> np.ndarray:
        """The (..., 6) array, linear part first (read-only)."""
        return self._v

    @property
    def linear(self) -> np.ndarray:
        return self._v[..., :3]

    @property
    def angular(self) -> np.ndarray:
        return self._v[..., 3:]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._v.shape[:-1]

    def __array__(self, dtype=None, copy=None):
        return np.array(self._v, dtype=dtype, copy=True)

    def __getitem__(self: _V, index) -> _V:
        if not isinstance(index, tuple):
            index = (index,)
        return type(self)._wrap(self._v[(*index, slice(None))])

    def __add__(self: _V, other: _V) -> _V:
        if type(other) is not type(self):
            return NotImplemented
        broadcast_batch(f"{type(self).__name__} + {type(self).__name__}", self.batch_shape, other.batch_shape)
        return type(self)._wrap(self._v + other._v)

    def __sub__(self: _V, other: _V) -> _V:
        if type(other) is not type(self):
            return NotImplemented
        broadcast_batch(f"{type(self).__name__} - {type(self).__name__}", self.batch_shape, other.batch_shape)
        return type(self)._wrap(self._v - other._v)

    def __neg__(self: _V) -> _V:
        return type(self)._wrap(-self._v)

    def __mul__(self: _V, scalar: object) -> _V:
        s = np.asarray(scalar, dtype=np.float64)
        broadcast_batch(f"{type(self).__name__} * scalar", self.batch_shape, s.shape)
        return type(self)._wrap(self._v * s[..., None])

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({np.array2string(self._v, precision=6)})"


class Motion(_Spatial6):
    """A spatial motion vector (twist), shape (..., 6) = (linear, angular)."""

    __slots__ = ()
    _name = "motion"

    def cross(self, other: Motion | Force) -> Motion | Force:
        """Spatial cross product: ``crm(self) @ other`` for a Motion, ``crf(self) @ other`` for a Force."""
        if isinstance(other, (Motion, Force)):
            broadcast_batch("Motion.cross", self.batch_shape, other.batch_shape)
        v, w = self.linear, self.angular
        if isinstance(other, Motion):
            ml, mw = other.linear, other.angular
            lin = cross(w, ml) + cross(v, mw)
            ang = cross(w, mw)
            return Motion._wrap(np.concatenate(np.broadcast_arrays(lin, ang), axis=-1))
        if isinstance(other, Force):
            fl, ft = other.linear, other.angular
            lin = cross(w, fl)
            ang = cross(w, ft) + cross(v, fl)
            return Force._wrap(np.concatenate(np.broadcast_arrays(lin, ang), axis=-1))
        raise TypeError(f"Motion.cross expects a Motion or a Force, got {type(other).__name__}")

    def dot(self, force: Force) -> np.ndarray:
        """Power ``force . motion``, shape (...)."""
        if not isinstance(force, Force):
            raise TypeError("Motion.dot expects a Force (the power pairing is motion x force)")
        broadcast_batch("Motion.dot", self.batch_shape, force.batch_shape)
        return np.sum(self._v * force._v, axis=-1)


class Force(_Spatial6):
    """A spatial force vector (wrench), shape (..., 6) = (force, torque)."""

    __slots__ = ()
    _name = "force"

    def dot(self, motion: Motion) -> np.ndarray:
        """Power ``force . motion``, shape (...)."""
        if not isinstance(motion, Motion):
            raise TypeError("Force.dot expects a Motion (the power pairing is force x motion)")
        broadcast_batch("Force.dot", self.batch_shape, motion.batch_shape)
        return np.sum(self._v * motion._v, axis=-1)


def crm(v: np.ndarray) -> np.ndarray:
    """6x6 motion cross-product matrix, linear-first: ``[[skew(w), skew(v)], [0, skew(w)]]``."""
    v = np.asarray(v, dtype=np.float64)
    out = np.zeros((*v.shape[:-1], 6, 6))
    W = skew(v[..., 3:])
    out[..., :3, :3] = W
    out[..., 3:, 3:] = W
    out[..., :3, 3:] = skew(v[..., :3])
    return out


def crf(v: np.ndarray) -> np.ndarray:
    """6x6 force cross-product matrix, ``crf(v) = -crm(v).T`` (linear-first)."""
    return -np.swapaxes(crm(v), -1, -2)
