"""Rigid-body spatial inertia with leading batch axes."""

from __future__ import annotations

import numpy as np

from bridge._array import as_float_array, broadcast_batch
from bridge.errors import InertiaError
from bridge.spatial.so3 import cross, skew, vee
from bridge.spatial.transform import Transform
from bridge.spatial.vectors import Force, Motion

__all__ = ["SpatialInertia"]

# index pairs of the 6 distinct entries of a symmetric 3x3 matrix, in storage order
_SYM = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
# iDynTree orders the rotational inertia xx, xy, xz, yy, yz, zz; Pinocchio xx, xy, yy, xz, yz, zz
_IDYN_ORDER = (0, 1, 2, 3, 4, 5)
_PIN_ORDER = (0, 1, 3, 2, 4, 5)


def _sym_from6(s: np.ndarray) -> np.ndarray:
    out = np.empty((*s.shape[:-1], 3, 3))
    for k, (i, j) in enumerate(_SYM):
        out[..., i, j] = s[..., k]
        out[..., j, i] = s[..., k]
    return out


def _sym_to6(M: np.ndarray) -> np.ndarray:
    return np.stack([0.5 * (M[..., i, j] + M[..., j, i]) for i, j in _SYM], axis=-1)


class SpatialInertia:
    """Spatial inertia of a rigid body expressed in some frame F.

    Described by mass ``m`` (...), centre of mass ``c`` (..., 3) in F coordinates and rotational
    inertia ``I_c`` (..., 3, 3) about the centre of mass with F's axes. Stored as one read-only
    (..., 10) array ``[m, c, I_c xx, xy, xz, yy, yz, zz]``.
    """

    __slots__ = ("_p",)

    def __init__(self, mass: object, com: object, inertia_com: object) -> None:
        m = as_float_array(mass, "mass", ())
        c = as_float_array(com, "centre of mass", (3,))
        Ic = as_float_array(inertia_com, "rotational inertia", (3, 3))
        if np.any(np.abs(Ic - np.swapaxes(Ic, -1, -2)) > 1e-9 * (1.0 + np.abs(Ic).max(initial=0))):
            raise InertiaError("rotational inertia: matrix is not symmetric")
        batch = broadcast_batch(
            "mass, centre of mass and rotational inertia", m.shape, c.shape[:-1], Ic.shape[:-2]
        )
        p = np.empty((*batch, 10))
        p[..., 0] = m
        p[..., 1:4] = c
        p[..., 4:] = _sym_to6(Ic)
        p.setflags(write=False)
        self._p = p

    @classmethod
    def _wrap(cls, p: np.ndarray) -> SpatialInertia:
        obj = cls.__new__(cls)
        p.setflags(write=False)
        obj._p = p
        return obj

    @classmethod
    def zero(cls, batch_shape: tuple[int, ...] = ()) -> SpatialInertia:
        return cls._wrap(np.zeros((*batch_shape, 10)))

    @classmethod
    def from_mass_com_inertia(cls, mass: object, com: object, inertia_com: object) -> SpatialInertia:
        return cls(mass, com, inertia_com)

    @classmethod
    def from_mass_com_inertia_origin(
        cls, mass: object, com: object, inertia_origin: object
    ) -> SpatialInertia:
        """From the rotational inertia about the frame origin instead of about the centre of mass."""
        m = as_float_array(mass, "mass", ())
        c = as_float_array(com, "centre of mass", (3,))
        Io = as_float_array(inertia_origin, "rotational inertia", (3, 3))
        broadcast_batch("mass, centre of mass and rotational inertia", m.shape, c.shape[:-1], Io.shape[:-2])
        C = skew(c)
        return cls(m, c, Io + m[..., None, None] * (C @ C))

    @classmethod
    def from_matrix(cls, matrix: object) -> SpatialInertia:
        """From a (..., 6, 6) linear-first spatial inertia matrix ``[[m 1, -m skew(c)], [m skew(c), I_o]]``.

        Raises :class:`InertiaError` if the matrix does not have that block structure (symmetric,
        ``m 1`` top-left, skew-symmetric off-diagonal blocks); physical consistency is checked by
        :meth:`check_physical`, not here.
        """
        M = as_float_array(matrix, "spatial inertia matrix", (6, 6))
        tol = 1e-9 * (1.0 + np.abs(M).max(axis=(-2, -1), initial=0.0))
        A, B = M[..., :3, :3], M[..., :3, 3:]
        m_diag = np.diagonal(A, axis1=-2, axis2=-1)
        if np.any(np.abs(M - np.swapaxes(M, -1, -2)) > tol[..., None, None]):
            raise InertiaError("spatial inertia matrix: not symmetric")
        if np.any(np.abs(A - m_diag[..., :1, None] * np.eye(3)) > tol[..., None, None]):
            raise InertiaError("spatial inertia matrix: top-left 3x3 block is not mass * identity")
        if np.any(np.abs(B + np.swapaxes(B, -1, -2)) > tol[..., None, None]):
            raise InertiaError(
                "spatial inertia matrix: top-right 3x3 block is not skew-symmetric (-m skew(c))"
            )
        m = np.trace(M[..., :3, :3], axis1=-2, axis2=-1) / 3.0
        with np.errstate(divide="ignore", invalid="ignore"):
            mc = -vee(M[..., :3, 3:])
            c = np.where(m[..., None] > 0, mc / np.where(m > 0, m, 1.0)[..., None], 0.0)
        return cls.from_mass_com_inertia_origin(m, c, M[..., 3:, 3:])

    @classmethod
    def _from_parameters(cls, pi: object, order: tuple[int, ...], name: str) -> SpatialInertia:
        pi = as_float_array(pi, name, (10,))
        m = pi[..., 0]
        mc = pi[..., 1:4]
        I6 = pi[..., 4:][..., list(order)]
        Io = _sym_from6(I6)
        safe = np.where(m > 0, m, 1.0)
        c = np.where(m[..., None] > 0, mc / safe[..., None], 0.0)
        return cls.from_mass_com_inertia_origin(m, c, Io)

    @classmethod
    def from_pinocchio_parameters(cls, pi: object) -> SpatialInertia:
        """From Pinocchio's dynamic parameters ``[m, mc_x, mc_y, mc_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``
        (rotational inertia about the frame origin), as ``pinocchio.Inertia.toDynamicParameters``."""
        return cls._from_parameters(pi, _PIN_ORDER, "pinocchio inertial parameters")

    @classmethod
    def from_idyntree_parameters(cls, pi: object) -> SpatialInertia:
        """From iDynTree's ``[m, mc_x, mc_y, mc_z, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]`` (about the origin),
        as ``iDynTree.SpatialInertia.asVector``."""
        return cls._from_parameters(pi, _IDYN_ORDER, "idyntree inertial parameters")

    # ----------------------------------------------------------------- accessors
    @property
    def parameters(self) -> np.ndarray:
        """The read-only (..., 10) storage ``[m, c, I_c xx, xy, xz, yy, yz, zz]``."""
        return self._p

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._p.shape[:-1]

    @property
    def mass(self) -> np.ndarray:
        return self._p[..., 0]

    @property
    def com(self) -> np.ndarray:
        """Centre of mass in the frame's coordinates, (..., 3)."""
        return self._p[..., 1:4]

    @property
    def inertia_com(self) -> np.ndarray:
        """Rotational inertia about the centre of mass, frame axes, (..., 3, 3)."""
        return _sym_from6(self._p[..., 4:])

    @property
    def inertia_origin(self) -> np.ndarray:
        """Rotational inertia about the frame origin, (..., 3, 3)."""
        C = skew(self.com)
        return self.inertia_com - self.mass[..., None, None] * (C @ C)

    def _parameters(self, order: tuple[int, ...]) -> np.ndarray:
        I6 = _sym_to6(self.inertia_origin)
        inv = np.argsort(order)
        m = self.mass
        return np.concatenate([m[..., None], m[..., None] * self.com, I6[..., list(inv)]], axis=-1)

    def as_pinocchio_parameters(self) -> np.ndarray:
        """``[m, mc, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the origin (Pinocchio's order)."""
        return self._parameters(_PIN_ORDER)

    def as_idyntree_parameters(self) -> np.ndarray:
        """``[m, mc, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]`` about the origin (iDynTree's order)."""
        return self._parameters(_IDYN_ORDER)

    def as_matrix(self) -> np.ndarray:
        """(..., 6, 6) linear-first matrix ``[[m 1, -m skew(c)], [m skew(c), I_o]]``."""
        m = self.mass[..., None, None]
        C = skew(self.com)
        M = np.zeros((*self.batch_shape, 6, 6))
        M[..., :3, :3] = m * np.eye(3)
        M[..., :3, 3:] = -m * C
        M[..., 3:, :3] = m * C
        M[..., 3:, 3:] = self.inertia_com - m * (C @ C)
        return M

    # ----------------------------------------------------------------- operations
    def __matmul__(self, motion: Motion) -> Force:
        """Momentum ``I v`` as a Force, computed in 3D blocks."""
        if not isinstance(motion, Motion):
            return NotImplemented
        broadcast_batch("SpatialInertia @ Motion", self.batch_shape, motion.batch_shape)
        m = self.mass[..., None]
        c = self.com
        v, w = motion.linear, motion.angular
        f = m * (v - cross(c, w))
        Icw = np.einsum("...ij,...j->...i", self.inertia_com, w)
        tau = Icw + cross(c, f)
        return Force(np.concatenate(np.broadcast_arrays(f, tau), axis=-1), check=False)

    def transformed(self, A_H_B: Transform) -> SpatialInertia:
        """Given this inertia in B, return it expressed in A."""
        broadcast_batch("Transform @ SpatialInertia", A_H_B.batch_shape, self.batch_shape)
        R, p = A_H_B.rotation, A_H_B.translation
        c = np.einsum("...ij,...j->...i", R, self.com) + p
        Ic = R @ self.inertia_com @ np.swapaxes(R, -1, -2)
        m = np.broadcast_to(self.mass, c.shape[:-1])
        out = np.empty((*c.shape[:-1], 10))
        out[..., 0] = m
        out[..., 1:4] = c
        out[..., 4:] = _sym_to6(Ic)
        return SpatialInertia._wrap(out)

    def __add__(self, other: SpatialInertia) -> SpatialInertia:
        """Sum of two inertias expressed in the same frame (bodies rigidly joined)."""
        if not isinstance(other, SpatialInertia):
            return NotImplemented
        broadcast_batch("SpatialInertia + SpatialInertia", self.batch_shape, other.batch_shape)
        m = self.mass + other.mass
        mc = self.mass[..., None] * self.com + other.mass[..., None] * other.com
        safe = np.where(m > 0, m, 1.0)
        c = np.where(m[..., None] > 0, mc / safe[..., None], 0.0)
        Io = self.inertia_origin + other.inertia_origin
        return SpatialInertia.from_mass_com_inertia_origin(m, c, Io)

    def __getitem__(self, index) -> SpatialInertia:
        if not isinstance(index, tuple):
            index = (index,)
        return SpatialInertia._wrap(self._p[(*index, slice(None))])

    def allclose(self, other: SpatialInertia, rtol: float = 1e-12, atol: float = 1e-12) -> bool:
        return bool(np.allclose(self.as_matrix(), other.as_matrix(), rtol=rtol, atol=atol))

    def check_physical(self, name: str = "spatial inertia", *, allow_massless: bool = False) -> None:
        """Raise :class:`InertiaError` unless the inertia is physically consistent.

        Requires a positive mass (exactly zero is accepted with ``allow_massless`` when the
        rotational inertia is zero too), a symmetric positive semi-definite rotational inertia
        about the centre of mass, and the triangle inequality on its principal moments
        (``J1 + J2 >= J3`` for every permutation). Point masses (``I_c = 0``) are accepted.
        """
        m = np.asarray(self.mass)
        Ic = self.inertia_com
        scale = np.maximum(np.abs(np.trace(Ic, axis1=-2, axis2=-1)), 1e-300)
        tol = 1e-9 * scale + 1e-12
        eig = np.linalg.eigvalsh(Ic)
        if np.any(m < 0):
            raise InertiaError(f"{name}: negative mass {float(np.min(m))!r}")
        massless = m == 0
        if np.any(massless):
            if not allow_massless:
                raise InertiaError(f"{name}: zero mass (only allowed for massless links)")
            if np.any(np.abs(eig[massless]) > 1e-12):
                raise InertiaError(f"{name}: zero mass but non-zero rotational inertia")
        if np.any(eig < -tol[..., None]):
            raise InertiaError(
                f"{name}: rotational inertia about the centre of mass is not positive "
                f"semi-definite (principal moments {np.round(eig.reshape(-1, 3)[0], 12).tolist()})"
            )
        j1, j2, j3 = eig[..., 0], eig[..., 1], eig[..., 2]
        if np.any(j1 + j2 < j3 - tol):
            bad = (j1 + j2 < j3 - tol).reshape(-1)
            moments = eig.reshape(-1, 3)[int(np.argmax(bad))].tolist()
            raise InertiaError(
                f"{name}: principal moments {moments} violate the triangle inequality "
                "(J1 + J2 >= J3): no rigid body has this inertia"
            )

    def __repr__(self) -> str:
        if self.batch_shape:
            return f"SpatialInertia(batch_shape={self.batch_shape})"
        return (
            f"SpatialInertia(mass={float(self.mass)!r}, com={self.com.tolist()}, "
            f"inertia_com={self.inertia_com.tolist()})"
        )
