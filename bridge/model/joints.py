"""The joint table: each joint kind, its widths ``nq`` and ``nv``, its motion and its configuration
operations (like Pinocchio's ``JointModel`` or MJX's grouping of joints by q/v width).

A joint from ``parent`` to ``child`` has a rest pose ``parent_H_child_rest`` (the placement of its
joint frame F in the parent) and moves the child by ``child_rest_H_child = H(q)``:

==========  ===  ===  =====================================  ==========================================
kind        nq   nv   neutral q                              H(q), ``c``/``a``: axis origin/axis (child)
==========  ===  ===  =====================================  ==========================================
fixed        0    0   ()                                     identity
revolute     1    1   angle                                  rotation by q about the line (c, a)
continuous   1    1   angle                                  the same, unbounded
prismatic    1    1   displacement                           translation by q a
planar       3    3   (x, y, theta)                          rotation by theta about the plane normal
                                                             ``a``, translation x e1 + y e2 (``e1``,
                                                             ``e2``: :func:`plane_axes` of ``a``)
ball         4    3   unit quaternion (w, x, y, z)           rotation R(q) about the centre ``c``
free         7    6   (position (3); quaternion (w, x, y, z)) [R(q), p]: the child's pose in F
==========  ===  ===  =====================================  ==========================================

The *joint velocity* in the neutral BODY form (what :attr:`JointSpec.subspace` multiplies) is the
child's velocity relative to F in the child's own axes, restricted to the joint's freedom:
``w`` (ball), ``(v, w)`` linear first (free), ``(v_e1, v_e2, w_a)`` (planar), the rate (1-DOF). The
motion subspace ``S`` (6, nv) (the child's BODY twist per unit joint velocity, linear first) is then
a constant in child coordinates for every kind. The other velocity forms (the axes of F, the point
at F's origin: INERTIAL and MIXED) and each library's are declared in :mod:`bridge.conventions`.

Configuration operations on the manifold, batched over leading axes (numpy), per kind:
:meth:`JointSpec.neutral`, :meth:`JointSpec.random`, :meth:`JointSpec.normalize`,
:meth:`JointSpec.integrate` (``q (+) v``, the exponential map along a tangent) and
:meth:`JointSpec.difference` (its inverse, the logarithm). The tangent is one of three
(:class:`Tangent`): BODY (``H exp(v)``: the velocity in the child's axes), WORLD (``exp(v) H``: at
F's origin in F's axes) and MIXED (the position moved by ``v_lin`` in F's axes, the rotation by
``exp(w) R``), the tangents of bridge's three velocity representations (docs/theory.md).

This module is neutral: it names no library.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property

import numpy as np

from bridge.errors import InvalidValueError
from bridge.spatial.so3 import (
    cross,
    matrix_to_quaternion_xyzw,
    quaternion_xyzw_to_matrix,
    rotation_between,
    skew,
    so3_exp,
    so3_left_jacobian,
    so3_left_jacobian_inverse,
    so3_log,
)

__all__ = [
    "JOINT_SPECS",
    "JointKind",
    "JointSpec",
    "Tangent",
    "plane_axes",
    "quaternion_wxyz_to_rotation",
    "require_single_coordinate",
    "rotation_to_quaternion_wxyz",
]


class JointKind(str, Enum):
    """Joint kinds of the neutral model (URDF's names, plus MJCF's/SDF's ``ball`` and ``free``)."""

    REVOLUTE = "revolute"
    CONTINUOUS = "continuous"
    PRISMATIC = "prismatic"
    FIXED = "fixed"
    PLANAR = "planar"
    BALL = "ball"
    FREE = "free"

    @property
    def spec(self) -> JointSpec:
        """The kind's row of the joint table (:data:`JOINT_SPECS`)."""
        return JOINT_SPECS[self]

    @property
    def movable(self) -> bool:
        return self is not JointKind.FIXED

    @property
    def rotational(self) -> bool:
        """A one-coordinate rotation (revolute or continuous)."""
        return self in (JointKind.REVOLUTE, JointKind.CONTINUOUS)

    @property
    def nq(self) -> int:
        return JOINT_SPECS[self].nq

    @property
    def nv(self) -> int:
        return JOINT_SPECS[self].nv

    @property
    def single(self) -> bool:
        """One coordinate, one velocity (revolute, continuous, prismatic)."""
        return JOINT_SPECS[self].nq == 1 and JOINT_SPECS[self].nv == 1

    @property
    def wide(self) -> bool:
        """Several coordinates (planar, ball, free): a block of its own in every change of variables."""
        return JOINT_SPECS[self].nv > 1


class Tangent(str, Enum):
    """A tangent of a joint's configuration: how a velocity moves it (the three representations')."""

    BODY = "body"  # H exp(v): v in the child's axes, at its origin
    WORLD = "inertial"  # exp(v) H: v at F's origin, in F's axes
    MIXED = "mixed"  # p + v_lin (F's axes), exp(w) R


# ---------------------------------------------------------------------------------------------- helpers
def quaternion_wxyz_to_rotation(q: np.ndarray) -> np.ndarray:
    """Unit quaternions (..., 4) (w, x, y, z) -> rotations (..., 3, 3)."""
    q = np.asarray(q, dtype=np.float64)
    return quaternion_xyzw_to_matrix(q[..., [1, 2, 3, 0]])


def rotation_to_quaternion_wxyz(R: np.ndarray) -> np.ndarray:
    """Rotations (..., 3, 3) -> unit quaternions (..., 4) (w, x, y, z), w >= 0."""
    return matrix_to_quaternion_xyzw(R)[..., [3, 0, 1, 2]]


def plane_axes(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(e1, e2)``: the in-plane axes of a planar joint with unit ``normal`` (3,), the images of x and
    y under the smallest rotation taking z to the normal (x and y themselves for the normal z)."""
    R = rotation_between(np.array([0.0, 0.0, 1.0]), np.asarray(normal, dtype=np.float64))
    return R[:, 0].copy(), R[:, 1].copy()


def _pose(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    H = np.zeros((*np.broadcast_shapes(R.shape[:-2], p.shape[:-1]), 4, 4))
    H[..., :3, :3] = R
    H[..., :3, 3] = p
    H[..., 3, 3] = 1.0
    return H


def _se3_exp(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exp`` of twists (..., 6) (linear first): ``(R, p)``."""
    w = v[..., 3:]
    return so3_exp(w), np.einsum("...ij,...j->...i", so3_left_jacobian(w), v[..., :3])


def _se3_log(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``log`` of poses ``(R, p)`` -> twists (..., 6) (linear first)."""
    w = so3_log(R)
    return np.concatenate([np.einsum("...ij,...j->...i", so3_left_jacobian_inverse(w), p), w], axis=-1)


def _unit_quaternions(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    q = rng.normal(size=(*shape, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def _scalar_w_first(q: np.ndarray) -> np.ndarray:
    """Quaternions (..., 4) (w, x, y, z) with w >= 0 (the same rotation)."""
    return np.where(q[..., :1] < 0.0, -q, q)


# ---------------------------------------------------------------------------------------------- kinds
@dataclass(frozen=True)
class JointSpec:
    """One row of the joint table: the widths of a kind and its operations (batched numpy).

    ``q`` arguments are (..., nq) arrays of the neutral form (module docstring), ``v`` (..., nv);
    the geometric arguments ``axis`` and ``origin`` (3,) are the joint's axis and axis origin in
    child coordinates. For the one-coordinate kinds ``q`` and ``v`` keep their last axis of length 1.
    """

    kind_name: str
    nq: int
    nv: int
    _neutral: tuple[float, ...]

    # -------------------------------------------------------------- configuration
    def neutral(self, batch: tuple[int, ...] = ()) -> np.ndarray:
        """The neutral configuration (..., nq): zero position, identity rotation."""
        return np.broadcast_to(np.array(self._neutral, dtype=np.float64), (*batch, self.nq)).copy()

    def random(
        self,
        rng: np.random.Generator,
        batch: tuple[int, ...] = (),
        lower: float | None = None,
        upper: float | None = None,
    ) -> np.ndarray:
        """Random configurations (..., nq): one coordinate uniform in [lower, upper] (default
        [-pi, pi] rotational, [-1, 1] m otherwise, intersected with the limits); planar x, y in
        [-1, 1] m and theta in [-pi, pi]; rotations uniformly distributed; positions in [-1, 1] m."""
        kind = JointKind(self.kind_name)
        if self.nq == 1:
            span = np.pi if kind.rotational else 1.0
            lo = -span if lower is None else max(lower, -span)
            hi = span if upper is None else min(upper, span)
            if not hi > lo and lower is not None and upper is not None:
                lo, hi = lower, upper  # a narrow range away from zero
            return rng.uniform(lo, hi, size=(*batch, 1))
        if kind is JointKind.PLANAR:
            return np.concatenate(
                [rng.uniform(-1.0, 1.0, (*batch, 2)), rng.uniform(-np.pi, np.pi, (*batch, 1))], axis=-1
            )
        if kind is JointKind.BALL:
            return _scalar_w_first(_unit_quaternions(rng, batch))
        return np.concatenate(
            [rng.uniform(-1.0, 1.0, (*batch, 3)), _scalar_w_first(_unit_quaternions(rng, batch))], axis=-1
        )

    def normalize(self, q: np.ndarray) -> np.ndarray:
        """``q`` with its quaternion (ball, free) scaled to unit norm; other coordinates unchanged."""
        q = np.array(q, dtype=np.float64)
        sl = self.quaternion_slice
        if sl is not None:
            quat = q[..., sl]
            q[..., sl] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
        return q

    @property
    def quaternion_slice(self) -> slice | None:
        """Where the unit quaternion (w, x, y, z) sits in q (None: no quaternion)."""
        return {"ball": slice(0, 4), "free": slice(3, 7)}.get(self.kind_name)

    def check(self, q: np.ndarray, tol: float = 1e-6) -> np.ndarray:
        """Boolean (...,): whether each configuration is valid (a unit quaternion to ``tol``)."""
        q = np.asarray(q, dtype=np.float64)
        ok = np.all(np.isfinite(q), axis=-1)
        sl = self.quaternion_slice
        if sl is not None:
            ok = ok & (np.abs(np.linalg.norm(q[..., sl], axis=-1) - 1.0) <= tol)
        return ok

    # -------------------------------------------------------------- geometry
    def motion(self, q: np.ndarray, axis: np.ndarray, origin: np.ndarray) -> np.ndarray:
        """``child_rest_H_child`` (..., 4, 4) at configurations q (..., nq)."""
        q = np.asarray(q, dtype=np.float64)
        kind = JointKind(self.kind_name)
        if kind.rotational:
            R = so3_exp(q[..., 0:1] * axis)
            return _pose(R, origin - np.einsum("...ij,j->...i", R, origin))
        if kind is JointKind.PRISMATIC:
            return _pose(np.broadcast_to(np.eye(3), (*q.shape[:-1], 3, 3)), q[..., 0:1] * axis)
        if kind is JointKind.PLANAR:
            e1, e2 = plane_axes(axis)
            R = so3_exp(q[..., 2:3] * axis)
            return _pose(R, q[..., 0:1] * e1 + q[..., 1:2] * e2)
        if kind is JointKind.BALL:
            R = quaternion_wxyz_to_rotation(q)
            return _pose(R, origin - np.einsum("...ij,j->...i", R, origin))
        if kind is JointKind.FREE:
            return _pose(quaternion_wxyz_to_rotation(q[..., 3:7]), q[..., 0:3])
        return _pose(np.broadcast_to(np.eye(3), (*q.shape[:-1], 3, 3)), np.zeros((*q.shape[:-1], 3)))

    def subspace(self, axis: np.ndarray, origin: np.ndarray) -> np.ndarray:
        """The motion subspace S (6, nv): the child's BODY twist (linear first, child coordinates)
        per unit joint velocity; constant for every kind."""
        kind = JointKind(self.kind_name)
        S = np.zeros((6, self.nv))
        if kind.rotational:
            S[:3, 0], S[3:, 0] = cross(origin, axis), axis
        elif kind is JointKind.PRISMATIC:
            S[:3, 0] = axis
        elif kind is JointKind.PLANAR:
            e1, e2 = plane_axes(axis)
            S[:3, 0], S[:3, 1], S[3:, 2] = e1, e2, axis
        elif kind is JointKind.BALL:
            S[:3] = skew(origin)  # the centre stays put: v = c x w
            S[3:] = np.eye(3)
        elif kind is JointKind.FREE:
            S[:] = np.eye(6)
        return S

    # -------------------------------------------------------------- the manifold
    def integrate(
        self, q: np.ndarray, v: np.ndarray, tangent: Tangent = Tangent.BODY, axis: np.ndarray | None = None
    ) -> np.ndarray:
        """``q (+) v`` (..., nq): the configuration reached from q by the velocity v (..., nv) held
        for unit time along ``tangent`` (``axis``: a planar joint's normal, for its in-plane axes
        only through the coordinates; unused otherwise)."""
        q = np.asarray(q, dtype=np.float64)
        v = np.asarray(v, dtype=np.float64)
        tangent = Tangent(tangent)
        kind = JointKind(self.kind_name)
        if self.nq == 1 or (kind is JointKind.PLANAR and tangent is Tangent.MIXED):
            return q + v
        if kind is JointKind.PLANAR:
            return _planar_integrate(q, v, tangent)
        if kind is JointKind.BALL:
            R = quaternion_wxyz_to_rotation(q)
            E = so3_exp(v)
            return _keep_sign(rotation_to_quaternion_wxyz(R @ E if tangent is Tangent.BODY else E @ R), q)
        if kind is JointKind.FREE:
            R, p = quaternion_wxyz_to_rotation(q[..., 3:7]), q[..., :3]
            if tangent is Tangent.MIXED:
                R1, p1 = so3_exp(v[..., 3:]) @ R, p + v[..., :3]
            else:
                E, t = _se3_exp(v)
                if tangent is Tangent.BODY:  # H exp(v)
                    R1, p1 = R @ E, p + np.einsum("...ij,...j->...i", R, t)
                else:  # exp(v) H
                    R1, p1 = E @ R, np.einsum("...ij,...j->...i", E, p) + t
            quat = _keep_sign(rotation_to_quaternion_wxyz(R1), q[..., 3:7])
            return np.concatenate([p1, quat], axis=-1)
        return q.copy()

    def difference(self, q0: np.ndarray, q1: np.ndarray, tangent: Tangent = Tangent.BODY) -> np.ndarray:
        """The velocity v (..., nv) with ``integrate(q0, v, tangent) == q1`` (rotations by less than
        pi)."""
        q0 = np.asarray(q0, dtype=np.float64)
        q1 = np.asarray(q1, dtype=np.float64)
        tangent = Tangent(tangent)
        kind = JointKind(self.kind_name)
        if self.nq == 1 or (kind is JointKind.PLANAR and tangent is Tangent.MIXED):
            return q1 - q0
        if kind is JointKind.PLANAR:
            return _planar_difference(q0, q1, tangent)
        if kind is JointKind.BALL:
            R0, R1 = quaternion_wxyz_to_rotation(q0), quaternion_wxyz_to_rotation(q1)
            if tangent is Tangent.BODY:
                return so3_log(np.swapaxes(R0, -1, -2) @ R1)
            return so3_log(R1 @ np.swapaxes(R0, -1, -2))
        if kind is JointKind.FREE:
            R0, p0 = quaternion_wxyz_to_rotation(q0[..., 3:7]), q0[..., :3]
            R1, p1 = quaternion_wxyz_to_rotation(q1[..., 3:7]), q1[..., :3]
            if tangent is Tangent.MIXED:
                return np.concatenate([p1 - p0, so3_log(R1 @ np.swapaxes(R0, -1, -2))], axis=-1)
            if tangent is Tangent.BODY:  # log(H0^-1 H1)
                R0T = np.swapaxes(R0, -1, -2)
                return _se3_log(R0T @ R1, np.einsum("...ij,...j->...i", R0T, p1 - p0))
            R = R1 @ np.swapaxes(R0, -1, -2)  # log(H1 H0^-1)
            return _se3_log(R, p1 - np.einsum("...ij,...j->...i", R, p0))
        return np.zeros((*np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1]), 0))


def _keep_sign(quat: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``quat`` (..., 4) with the sign making its scalar part agree with ``like``'s (continuity)."""
    flip = np.sum(quat * like, axis=-1, keepdims=True) < 0.0
    return np.where(flip, -quat, quat)


def _se2(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(R (..., 2, 2), p (..., 2))`` of planar coordinates (x, y, theta)."""
    c, s = np.cos(q[..., 2]), np.sin(q[..., 2])
    R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
    return R, q[..., :2]


def _se2_exp(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exp`` of planar twists (vx, vy, w) (..., 3): ``(theta, t (..., 2))``."""
    w = v[..., 2]
    small = np.abs(w) < 1e-6
    ws = np.where(small, 1.0, w)
    a = np.where(small, 1.0 - w * w / 6.0, np.sin(ws) / ws)  # sin w / w
    b = np.where(small, 0.5 * w - w**3 / 24.0, (1.0 - np.cos(ws)) / ws)  # (1 - cos w) / w
    vx, vy = v[..., 0], v[..., 1]
    return w, np.stack([a * vx - b * vy, b * vx + a * vy], -1)


def _se2_log(theta: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Inverse of :func:`_se2_exp` for |theta| < pi."""
    small = np.abs(theta) < 1e-6
    ws = np.where(small, 1.0, theta)
    a = np.where(small, 1.0 - theta * theta / 6.0, np.sin(ws) / ws)
    b = np.where(small, 0.5 * theta - theta**3 / 24.0, (1.0 - np.cos(ws)) / ws)
    det = a * a + b * b
    tx, ty = t[..., 0], t[..., 1]
    return np.stack([(a * tx + b * ty) / det, (-b * tx + a * ty) / det, theta], -1)


def _wrap(theta: np.ndarray) -> np.ndarray:
    return np.arctan2(np.sin(theta), np.cos(theta))


def _planar_integrate(q: np.ndarray, v: np.ndarray, tangent: Tangent) -> np.ndarray:
    R, p = _se2(q)
    dtheta, t = _se2_exp(v)
    if tangent is Tangent.BODY:  # H exp(v)
        p1 = p + np.einsum("...ij,...j->...i", R, t)
    else:  # exp(v) H
        c, s = np.cos(dtheta), np.sin(dtheta)
        p1 = np.stack([c * p[..., 0] - s * p[..., 1], s * p[..., 0] + c * p[..., 1]], -1) + t
    return np.concatenate([p1, (q[..., 2] + dtheta)[..., None]], -1)


def _planar_difference(q0: np.ndarray, q1: np.ndarray, tangent: Tangent) -> np.ndarray:
    R0, p0 = _se2(q0)
    dtheta = _wrap(q1[..., 2] - q0[..., 2])
    if tangent is Tangent.BODY:  # log(H0^-1 H1)
        t = np.einsum("...ji,...j->...i", R0, q1[..., :2] - p0)
    else:  # log(H1 H0^-1): t = p1 - R(dtheta) p0
        c, s = np.cos(dtheta), np.sin(dtheta)
        t = q1[..., :2] - np.stack([c * p0[..., 0] - s * p0[..., 1], s * p0[..., 0] + c * p0[..., 1]], -1)
    return _se2_log(dtheta, t)


#: the joint table
JOINT_SPECS: dict[JointKind, JointSpec] = {
    JointKind.FIXED: JointSpec("fixed", 0, 0, ()),
    JointKind.REVOLUTE: JointSpec("revolute", 1, 1, (0.0,)),
    JointKind.CONTINUOUS: JointSpec("continuous", 1, 1, (0.0,)),
    JointKind.PRISMATIC: JointSpec("prismatic", 1, 1, (0.0,)),
    JointKind.PLANAR: JointSpec("planar", 3, 3, (0.0, 0.0, 0.0)),
    JointKind.BALL: JointSpec("ball", 4, 3, (1.0, 0.0, 0.0, 0.0)),
    JointKind.FREE: JointSpec("free", 7, 6, (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)),
}


# ---------------------------------------------------------------------------------------------- layout
@dataclass(frozen=True)
class Coordinates:
    """Where each DOF joint's coordinates sit in a neutral state's ``s`` and ``s_dot``.

    Attributes:
        names: the DOF joints (the model's ``dof_names``).
        kinds: their kinds, in that order.
    Derived: ``q_start``/``v_start`` (n_joints + 1,) offsets into s and s_dot (the last entry is
    the total ``nq``/``nv``); :attr:`wide` the positions of the planar, ball and free joints.
    """

    names: tuple[str, ...]
    kinds: tuple[JointKind, ...]

    def __post_init__(self) -> None:
        if len(self.names) != len(self.kinds):
            raise InvalidValueError("Coordinates: one kind per DOF joint")

    @cached_property
    def q_start(self) -> np.ndarray:
        out = np.concatenate([[0], np.cumsum([k.nq for k in self.kinds], dtype=np.intp)]).astype(np.intp)
        out.setflags(write=False)
        return out

    @cached_property
    def v_start(self) -> np.ndarray:
        out = np.concatenate([[0], np.cumsum([k.nv for k in self.kinds], dtype=np.intp)]).astype(np.intp)
        out.setflags(write=False)
        return out

    @property
    def nq(self) -> int:
        """Length of s (the joints' positions)."""
        return int(self.q_start[-1])

    @property
    def nv(self) -> int:
        """Length of s_dot (the joints' velocities)."""
        return int(self.v_start[-1])

    @cached_property
    def wide(self) -> tuple[int, ...]:
        """Positions (in DOF order) of the joints with several coordinates."""
        return tuple(i for i, k in enumerate(self.kinds) if k.wide)

    @property
    def single(self) -> bool:
        """Every DOF joint has one coordinate and one velocity (s and s_dot of one length)."""
        return not self.wide

    def q_slice(self, i: int) -> slice:
        return slice(int(self.q_start[i]), int(self.q_start[i + 1]))

    def v_slice(self, i: int) -> slice:
        return slice(int(self.v_start[i]), int(self.v_start[i + 1]))

    @cached_property
    def index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.names)}

    def describe(self) -> str:
        return ", ".join(f"{n} ({k.value})" for n, k in zip(self.names, self.kinds, strict=True) if k.wide)


def require_single_coordinate(model: object, what: str) -> None:
    """Raise :class:`~bridge.errors.UnsupportedError` naming the planar, ball and free joints of
    ``model`` (a bridge Model) when ``what`` (a library, a format, a fast path) takes joints of one
    coordinate only."""
    coords = model.coordinates
    if coords.single:
        return
    from bridge.errors import UnsupportedError

    raise UnsupportedError(
        f"{what} has no joint of several coordinates: model {model.name!r} has {coords.describe()}"
    )
