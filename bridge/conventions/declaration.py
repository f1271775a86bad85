"""A library's conventions, declared as data, and the base maps derived from the declaration.

Each library writes the floating base's velocity its own way. A :class:`BaseVelocity` says how:
the point whose linear velocity is given (the base origin, the body point passing through the
world origin: the "spatial" velocity, or the base link's centre of mass), the axes of the linear
part and of the angular part (the
base's own axes or the world's), and the order of the two halves. A :class:`Configuration` says how
the base pose sits in the configuration vector (quaternion order, quaternion before or after the
position) and how a continuous joint is stored. That is all a convention is; every map between two
conventions is derived here from the declarations, once:

With ``R = A_R_B``, ``p = A_o_B`` and the BODY velocity ``v_B = (v, omega)`` (linear first; so
``p_dot = R v`` and ``d/dt R = R omega^``), a declared base velocity is ``L v_B`` with

    L = [[P, Q], [0, S]]      (rows swapped when the angular half comes first)

* ``P = 1`` (linear part in body axes) or ``R`` (world axes);
* ``Q = 0`` (velocity of the base origin), ``p^ R`` (of the body point at the world origin, world
  axes) or ``(R^T p)^`` (the same point, body axes), ``-(R c)^ R = -R c^`` (of the base's centre of
  mass ``c``, a constant vector in base axes, world axes) or ``-c^`` (the same point, body axes);
* ``S = 1`` (angular part in body axes) or ``R`` (world axes).

``L`` is block upper triangular with rotation diagonal blocks, so ``L^-1 = [[P^T, -P^T Q S^T],
[0, S^T]]``; its time derivative along the motion follows from ``d/dt R = R omega^`` and
``d/dt p = R v`` block by block (:meth:`BaseVelocity.maps`), and ``d/dt L^-1 = -L^-1 L_dot L^-1``.
The three neutral representations are three declarations (:data:`BODY_VELOCITY`,
:data:`INERTIAL_VELOCITY`, :data:`MIXED_VELOCITY`); so are Pinocchio's (BODY), MuJoCo's free joint
(origin velocity in world axes, angular velocity in body axes), Drake's (MIXED, angular first),
Featherstone's (INERTIAL, angular first) and Newton's (the base COM's velocity and the angular
velocity, world axes). docs/theory.md derives the blocks.

A velocity at the base's centre of mass (:attr:`Point.BASE_COM`) needs one number from the model,
``c``: the declaration names the point, :meth:`BaseVelocity.bound` fills in the model's value
(:meth:`bridge.conventions.convention.Convention.bound` does it once per model), and every map is
derived from the bound declaration.

This module is neutral: it names no library.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache
from typing import Any

import numpy as np

from bridge.conventions.blocks import ZERO, Block, Term, evaluate, rotation
from bridge.errors import InvalidValueError
from bridge.spatial.conventions import Ordering
from bridge.spatial.xp import Ops, namespace

__all__ = [
    "BODY_VELOCITY",
    "INERTIAL_VELOCITY",
    "MIXED_VELOCITY",
    "Axes",
    "BallCoordinates",
    "BaseMaps",
    "BaseVelocity",
    "Configuration",
    "ContinuousJoint",
    "Point",
    "QuaternionOrder",
]

#: ``(L, L_dot, L_inv, L_inv_dot)`` (each (..., 6, 6)): a convention's base velocity is
#: ``L @ v_B`` with ``v_B`` the BODY base velocity, ``L_inv`` its inverse, dots the time derivatives
#: along the state's motion. ``L_dot``/``L_inv_dot`` are None where they are zero.
BaseMaps = tuple[np.ndarray, "np.ndarray | None", np.ndarray, "np.ndarray | None"]


class Point(str, Enum):
    """The point whose velocity is the linear half of a base velocity."""

    BASE_ORIGIN = "base_origin"  # the origin of the base frame (d/dt A_o_B)
    WORLD_ORIGIN = "world_origin"  # the body point passing through the world origin (spatial)
    BASE_COM = "base_com"  # the base link's centre of mass, a body-fixed point (d/dt (A_o_B + R c))


class Axes(str, Enum):
    """The axes a half of a base velocity is expressed in."""

    BODY = "body"  # the base frame's own axes
    WORLD = "world"  # the world (inertial) axes


class QuaternionOrder(str, Enum):
    """The order of a unit quaternion's components in a configuration vector."""

    WXYZ = "wxyz"  # scalar first (MuJoCo, Drake, spatial_v2)
    XYZW = "xyzw"  # scalar last (Pinocchio, Eigen's coeffs, ROS)


class BallCoordinates(str, Enum):
    """How a configuration vector stores a ball joint's rotation."""

    QUATERNION = "quaternion"  # a unit quaternion, in the configuration's quaternion order
    RPY = "rpy"  # roll, pitch, yaw (fixed axes x, y, z: R = Rz(yaw) Ry(pitch) Rx(roll); Drake)


class ContinuousJoint(str, Enum):
    """How a configuration vector stores a continuous (unbounded revolute) joint."""

    ANGLE = "angle"  # one number, the angle
    COS_SIN = "cos_sin"  # two numbers, (cos, sin) of the angle (Pinocchio)


@dataclass(frozen=True)
class Configuration:
    """Where a library keeps the floating base's pose and the joints in its configuration ``q``.

    ``q = [position (3); quaternion (4); joints]``, or the quaternion first with
    ``quaternion_first``; the quaternion in ``quaternion`` order; continuous joints as declared.
    Joints of several coordinates follow the same declaration: a free joint's pose is laid out as
    the base's, a planar joint is ``(x, y, angle)`` with its angle stored as a continuous joint's
    (``(x, y, cos, sin)`` with ``COS_SIN``), and a ball joint is a quaternion in ``quaternion``
    order or, with ``ball=RPY``, roll-pitch-yaw angles.
    """

    quaternion: QuaternionOrder = QuaternionOrder.WXYZ
    quaternion_first: bool = False
    continuous: ContinuousJoint = ContinuousJoint.ANGLE
    ball: BallCoordinates = BallCoordinates.QUATERNION

    @property
    def position_slice(self) -> slice:
        """Where the base origin (3,) is in q."""
        return slice(4, 7) if self.quaternion_first else slice(0, 3)

    @property
    def quaternion_slice(self) -> slice:
        """Where the base quaternion (4,) is in q."""
        return slice(0, 4) if self.quaternion_first else slice(3, 7)


@dataclass(frozen=True)
class BaseVelocity:
    """How a convention writes the base velocity (see the module docstring).

    Attributes:
        point: the point whose velocity is the linear half.
        linear_axes: the axes of the linear half.
        angular_axes: the axes of the angular half.
        ordering: which half comes first.
        com: for ``Point.BASE_COM``, the base link's centre of mass ``c`` (3 floats, base axes);
            None until :meth:`bound` to a model (the maps need it).
    """

    point: Point
    linear_axes: Axes
    angular_axes: Axes
    ordering: Ordering = Ordering.LINEAR_FIRST
    com: tuple[float, float, float] | None = None

    def __post_init__(self) -> None:
        for name, kind in (("point", Point), ("linear_axes", Axes), ("angular_axes", Axes)):
            try:
                object.__setattr__(self, name, kind(getattr(self, name)))
            except ValueError:
                raise InvalidValueError(
                    f"BaseVelocity.{name}: {getattr(self, name)!r} is not one of "
                    f"{', '.join(m.value for m in kind)}"
                ) from None
        try:
            object.__setattr__(self, "ordering", Ordering(self.ordering))
        except ValueError:
            raise InvalidValueError(f"BaseVelocity.ordering: {self.ordering!r} is not an Ordering") from None
        if self.com is not None:
            c = np.asarray(self.com, dtype=float)
            if c.shape != (3,) or not np.all(np.isfinite(c)) or self.point is not Point.BASE_COM:
                raise InvalidValueError(
                    f"BaseVelocity.com: {self.com!r} must be 3 finite numbers, for Point.BASE_COM only"
                )
            object.__setattr__(self, "com", tuple(float(x) for x in c))

    # ------------------------------------------------------------------ the model's point
    @property
    def needs_model(self) -> bool:
        """The declaration names a model-dependent point whose value is not filled in yet."""
        return self.point is Point.BASE_COM and self.com is None

    def bound(self, com: Any) -> BaseVelocity:
        """This declaration with the base's centre of mass ``com`` (3,) (base axes) filled in (itself
        when its point does not depend on the model)."""
        if self.point is not Point.BASE_COM:
            return self
        return replace(self, com=tuple(float(x) for x in np.asarray(com, dtype=float).reshape(3)))

    def _com(self) -> tuple[float, float, float]:
        if self.com is None:
            raise InvalidValueError(
                f"{self}: a base velocity at the base's centre of mass needs the model "
                "(BaseVelocity.bound(com) or Convention.bound(model))"
            )
        return self.com

    # ------------------------------------------------------------------ structure
    @property
    def frame(self) -> tuple[Point, Axes, Axes, tuple[float, float, float] | None]:
        """What the velocity measures, whatever the order of its halves."""
        return self.point, self.linear_axes, self.angular_axes, self.com

    @property
    def is_body(self) -> bool:
        """``L`` is a constant (the identity up to the order of the halves)."""
        return self.frame == (Point.BASE_ORIGIN, Axes.BODY, Axes.BODY, None)

    def same_frame(self, other: BaseVelocity) -> bool:
        """The two differ at most in the order of their halves (``L_a L_b^-1`` is constant)."""
        return self.frame == other.frame

    @property
    def swap(self) -> bool:
        return self.ordering is Ordering.ANGULAR_FIRST

    def reorder(self) -> np.ndarray | None:
        """The constant (6, 6) permutation from linear-first to this order (None: identity)."""
        return _SWAP_MATRIX if self.swap else None

    # ------------------------------------------------------------------ the maps
    def symbolic_blocks(self) -> tuple[Block, Block, Block]:
        """``(P, Q, S)`` of ``L`` as expressions in the pose (:mod:`bridge.conventions.blocks`):
        the one place the declaration becomes mathematics; every evaluator reads it."""
        world_lin = self.linear_axes is Axes.WORLD
        P = rotation(1 if world_lin else 0)
        S = rotation(1 if self.angular_axes is Axes.WORLD else 0)
        if self.point is Point.BASE_ORIGIN:
            Q = ZERO
        elif self.point is Point.BASE_COM:  # -(R c)^ R = -R c^ (world axes) or -c^ (body axes)
            Q = Block((Term(True, 1, 1, -1.0, True),) if world_lin else (Term(True, 0, 0, -1.0, True),))
        elif world_lin:  # p^ R
            Q = Block((Term(True, 0, 1),))
        else:  # (R^T p)^
            Q = Block((Term(True, -1, 0),))
        return P, Q, S

    def symbolic_matrices(self) -> tuple[tuple[Block, Block, Block], tuple[Block, Block, Block]]:
        """``((P, Q, S), (P^T, -P^T Q S^T, S^T))``: the blocks of ``L`` and of ``L^-1`` (linear
        first; the order of the halves is applied by the evaluators). Derived once per
        declaration."""
        return _symbolic_matrices(self)

    def body_rate(self) -> tuple[int, int, int]:
        """``(c_wv, c_q, c_c)`` with ``L^-1 L_dot v_B = [c_wv (w x v) + c_q ((v - w x q) x w)
        + c_c (w x (w x c)); 0]`` (``v_B = (v, w)``, ``q = R^T p``, ``c`` the base COM): :meth:`rate`
        times the velocity, in closed form (``W v = w x v`` for world axes; the off-diagonal block
        times ``w`` is ``v x w`` for the world origin in world axes, ``(v - w x q) x w`` in body axes,
        ``-w x (c x w)`` for the COM in world axes; the angular half ``W w = 0``). The single-state
        paths take ``T_dot nu`` from it (:mod:`bridge.conventions.single_state`)."""
        world_lin = self.linear_axes is Axes.WORLD
        c_wv = 1 if world_lin else 0
        c_q = c_c = 0
        if self.point is Point.WORLD_ORIGIN:
            if world_lin:
                c_wv -= 1
            else:
                c_q = 1
        elif self.point is Point.BASE_COM and world_lin:
            c_c = 1
        return c_wv, c_q, c_c

    def rate(self, world_H_base: object, v_body: Any, ops: Ops | None = None) -> Any | None:
        """``Omega = L^-1 L_dot`` (..., 6, 6), the rate of the declared frame seen from the body, at a
        pose and BODY velocity ``v_B = (v, w)`` (None when zero: BODY itself). With ``W = w^`` and
        ``q = R^T p``, block by block (linear first; an angular-first order permutes L's rows and
        leaves Omega as it is):

        * ``P^T P_dot`` = W for a linear half in world axes, else 0; ``S^T S_dot`` likewise;
        * ``P^T Q_dot - P^T Q S^T S_dot`` = 0 at the base origin; at the world origin ``v^ + q^ W``
          (linear half in world axes) or ``(v - w x q)^`` (in body axes), minus ``q^ W`` when the
          angular half is in world axes; at the base COM ``c`` (constant in base axes) ``-W c^``
          for a linear half in world axes, plus ``c^ W`` for an angular half in world axes.

        ``L_dot = L Omega`` and ``d/dt L^-1 = -Omega L^-1``; :meth:`body_rate` is ``Omega v_B``."""
        if self.is_body:
            return None
        o, R, p = _pose(world_H_base, ops, v_body)
        v, w = o.vpart(v_body, 0, 3), o.vpart(v_body, 3, 6)
        W = o.skew(w)
        zero = o.mzeros(3, 3, W)
        world_lin = self.linear_axes is Axes.WORLD
        world_ang = self.angular_axes is Axes.WORLD
        top_left = W if world_lin else zero
        bottom_right = W if world_ang else zero
        if self.point is Point.BASE_ORIGIN:
            corner = zero
        elif self.point is Point.BASE_COM:
            C = o.skew(o.constant(self._com(), W))
            corner = o.matmul(C, W) if world_ang else zero
            if world_lin:
                corner = corner - o.matmul(W, C)
        elif world_lin and world_ang:  # v^ + q^ W - q^ W
            corner = o.skew(v)
        else:
            q = o.vecmat(p, R)  # R^T p
            if world_lin:  # angular half in body axes
                corner = o.skew(v) + o.matmul(o.skew(q), W)
            else:
                corner = o.skew(v - o.cross(w, q))
                if world_ang:
                    corner = corner - o.matmul(o.skew(q), W)
        return o.block([[top_left, corner], [o.mzeros(3, 3, W), bottom_right]])

    def matrices(
        self, world_H_base: object, ops: Ops | None = None, which: tuple[bool, bool] = (True, True)
    ) -> tuple[Any, Any]:
        """``(L, L_inv)`` (..., 6, 6) at a pose (a Transform or (..., 4, 4) matrices); ``which``
        says which of the two to make (the other is None)."""
        o, R, p = _pose(world_H_base, ops)
        return self._matrices(R, p, o, which)

    def _matrices(self, R: Any, p: Any, o: Ops, which: tuple[bool, bool] = (True, True)) -> tuple[Any, Any]:
        """``(L, L_inv)`` from the declaration's symbolic blocks, in the declared order."""
        if self.is_body:  # constant (6, 6), broadcasting against any batch
            L = _SWAP_MATRIX if self.swap else np.eye(6)
            return o.constant(L, R), o.constant(L.T, R)
        (P, Q, S), (Pi, Qi, Si) = self.symbolic_matrices()
        k = self._com() if self.point is Point.BASE_COM else None
        L = L_inv = None
        if which[0]:
            L = _assemble(o, *(evaluate(b, R, p, o, k) for b in (P, Q, S)), R)
            L = o.mtake_rows(L, _SWAP) if self.swap else L
        if which[1]:
            L_inv = _assemble(o, *(evaluate(b, R, p, o, k) for b in (Pi, Qi, Si)), R)
            L_inv = o.mtake_cols(L_inv, _SWAP) if self.swap else L_inv
        return L, L_inv

    def maps(self, world_H_base: object, v_body: Any, ops: Ops | None = None) -> BaseMaps:
        """``(L, L_dot, L_inv, L_inv_dot)`` at a pose (a Transform or (..., 4, 4) matrices) and BODY
        base velocity (..., 6): ``L_dot = L Omega``, ``L_inv_dot = -Omega L^-1`` (:meth:`rate`); the
        derivatives are None when zero."""
        o, R, p = _pose(world_H_base, ops, v_body)
        L, L_inv = self._matrices(R, p, o)
        Omega = self.rate(world_H_base, v_body, o)
        if Omega is None:
            return L, None, L_inv, None
        return L, o.matmul(L, Omega), L_inv, -o.matmul(Omega, L_inv)


_SWAP = np.array([3, 4, 5, 0, 1, 2])
_SWAP_MATRIX = np.eye(6)[_SWAP]
_SWAP_MATRIX.setflags(write=False)


@lru_cache(maxsize=512)
def _symbolic_matrices(decl: BaseVelocity) -> tuple[tuple[Block, Block, Block], tuple[Block, Block, Block]]:
    P, Q, S = decl.symbolic_blocks()
    return (P, Q, S), (P.T, -(P.T @ Q @ S.T), S.T)


def _pose(world_H_base: object, ops: Ops | None, *others: object) -> tuple[Ops, Any, Any]:
    """``(ops, R, p)`` of a pose given as a Transform or as (..., 4, 4) matrices."""
    H = getattr(world_H_base, "matrix", world_H_base)
    o = ops if ops is not None else namespace(H, *others)
    R, p = o.pose_parts(H)
    return o, R, p


def _assemble(o: Ops, P: Any | None, Q: Any | None, S: Any | None, like: Any, identity: bool = True) -> Any:
    """``[[P, Q], [0, S]]`` (..., 6, 6); a None diagonal block is the identity (``identity``) or
    zero, a None Q zero. Functional: blocks are concatenated, nothing is written in place."""
    zero = o.mzeros(3, 3, like)
    diag = o.eye(3, like) if identity else zero
    return o.block([[diag if P is None else P, zero if Q is None else Q], [zero, diag if S is None else S]])


#: the neutral representations as declarations
BODY_VELOCITY = BaseVelocity(Point.BASE_ORIGIN, Axes.BODY, Axes.BODY)
INERTIAL_VELOCITY = BaseVelocity(Point.WORLD_ORIGIN, Axes.WORLD, Axes.WORLD)
MIXED_VELOCITY = BaseVelocity(Point.BASE_ORIGIN, Axes.WORLD, Axes.WORLD)
