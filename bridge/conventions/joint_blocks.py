"""The blocks of the change of variables that belong to joints of several coordinates.

A convention writes the velocity of a planar, ball or free joint the way it writes the floating
base's: the base is the free joint of the first root, and a :class:`~.declaration.BaseVelocity` says
it all (the point, the axes of each half and their order), read relative to the joint frame F
instead of the world (:func:`joint_declaration`):

* a free joint's velocity is the declaration itself, at the joint's pose ``F_H_child = (R, p)``;
* a planar joint's is the declaration's rows (x, y, yaw) in the joint's plane coordinates (the
  plane's normal as z), linear first whatever the declared order: the planar motion keeps those
  rows closed under every map (L, L^-1 and their derivatives);
* a ball joint's is the angular half alone, in the child's axes (BODY) or F's (WORLD), at the
  joint's rotation (a ball joint has no linear velocity of its own).

Between two conventions each such joint has a block ``X_j = E^T L_t L_s^-1 E`` (E the rows of its
kind), with ``X_j_dot`` from the declarations' rates, as the base has: :func:`joint_maps` evaluates
them with the same code as the base (:func:`base_maps`), for numpy, JAX and CasADi alike.
:class:`WideChangeOfVariables` is ``T = blkdiag(X, D P)``: the joint permutation P of the entries,
then the blocks D at the target's offsets; each map applies them block by block (no dense T).

This module is neutral: it names no library.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from bridge.conventions.declaration import Axes, BaseVelocity, Point
from bridge.model.joints import JointKind
from bridge.spatial.conventions import Ordering
from bridge.spatial.quaternions import quaternion_xyzw_to_rotation
from bridge.spatial.xp import Ops

if TYPE_CHECKING:  # pragma: no cover
    from bridge.conventions.convention import Convention, JointOrder
    from bridge.conventions.state import State
    from bridge.conventions.wide_change import WideChangeOfVariables
    from bridge.model.model import Joint, Model

__all__ = [
    "JointBlock",
    "WideJoints",
    "base_maps",
    "joint_declaration",
    "joint_maps",
    "joint_rows",
    "relative_pose",
]

_PLANAR_ROWS = np.array([0, 1, 5])
_BALL_ROWS = np.array([3, 4, 5])
_WXYZ_TO_XYZW = np.array([1, 2, 3, 0])


def joint_declaration(kind: JointKind, velocity: BaseVelocity) -> BaseVelocity:
    """The 6D declaration whose rows (:func:`joint_rows`) are a ``kind`` joint's velocity in a
    convention whose base velocity is ``velocity``: the declaration itself for free and planar
    joints, its angular axes alone (at the child's origin, linear half in body axes) for a ball."""
    if kind is JointKind.BALL:
        return BaseVelocity(Point.BASE_ORIGIN, Axes.BODY, velocity.angular_axes)
    if kind is JointKind.PLANAR and velocity.swap:  # its rows (x, y, yaw) are read linear first
        return replace(velocity, ordering=Ordering.LINEAR_FIRST)
    return velocity


def joint_rows(kind: JointKind) -> np.ndarray | None:
    """The rows of the 6D declaration that are the joint's velocity, in the declared order for a free
    joint (None: all six), linear-first ``(x, y, yaw)`` for planar, the angular half for a ball."""
    if kind is JointKind.PLANAR:
        return _PLANAR_ROWS
    if kind is JointKind.BALL:
        return _BALL_ROWS
    return None


def relative_pose(kind: JointKind, q: Any, o: Ops) -> tuple[Any, Any]:
    """``(R (..., 3, 3), p (..., 3))`` of the joint's motion in F at neutral coordinates ``q``
    (..., nq): the pose of a free joint, the rotation of a ball (about its centre, so ``p = 0``: its
    velocity maps do not depend on the centre), a planar joint's in plane coordinates."""
    if kind is JointKind.FREE:
        return quaternion_xyzw_to_rotation(o.vtake(o.vpart(q, 3, 7), _WXYZ_TO_XYZW), o), o.vpart(q, 0, 3)
    if kind is JointKind.BALL:
        zero = 0.0 * o.item(q, 0)
        return quaternion_xyzw_to_rotation(o.vtake(q, _WXYZ_TO_XYZW), o), o.vector([zero, zero, zero])
    theta = o.item(q, 2)
    c, s = o.cos(theta), o.sin(theta)
    zero, one = 0.0 * c, 0.0 * c + 1.0
    R = o.matrix([[c, -s, zero], [s, c, zero], [zero, zero, one]])
    return R, o.vector([o.item(q, 0), o.item(q, 1), zero])


def embed(kind: JointKind, v: Any, o: Ops) -> Any:
    """A joint velocity (..., nv) in its declaration's rows, as the (..., 6) vector with zeros
    elsewhere (the declared order for a free joint: v itself)."""
    rows = joint_rows(kind)
    if rows is None:
        return v
    zero = 0.0 * o.item(v, 0)
    items = [zero] * 6
    for k, r in enumerate(rows.tolist()):
        items[r] = o.item(v, k)
    return o.vector(items)


def base_maps(
    source: BaseVelocity, target: BaseVelocity, R: Any, p: Any, v_body: Any, o: Ops, rate: bool = True
) -> tuple[Any, Any, Any | None]:
    """``(X, X_inv, X_dot)`` (..., 6, 6) with ``X = L_t L_s^-1`` at the pose ``(R, p)`` and
    ``X_dot = L_t (Omega_t - Omega_s) L_s^-1`` at the BODY velocity ``v_body`` (..., 6) (None when
    zero, or when not ``rate``)."""
    H = o.pose(R, p)
    Ls, Ls_inv = source.matrices(H, o)
    Lt, Lt_inv = target.matrices(H, o)
    X = o.matmul(Lt, Ls_inv)
    X_inv = o.matmul(Ls, Lt_inv)
    if not rate:
        return X, X_inv, None
    Omega_t, Omega_s = target.rate(H, v_body, o), source.rate(H, v_body, o)
    if Omega_t is None and Omega_s is None:
        return X, X_inv, None
    D = -Omega_s if Omega_t is None else (Omega_t if Omega_s is None else Omega_t - Omega_s)
    return X, X_inv, o.matmul(o.matmul(Lt, D), Ls_inv)


def _select(A: Any, rows: np.ndarray | None, o: Ops) -> Any:
    if A is None or rows is None:
        return A
    return o.mtake_cols(o.mtake_rows(A, rows), rows)


def joint_maps(
    kind: JointKind,
    source: BaseVelocity,
    target: BaseVelocity,
    q: Any,
    v_source: Any | None,
    o: Ops,
) -> tuple[Any, Any, Any | None]:
    """``(X_j, X_j_inv, X_j_dot)`` (..., nv, nv) of one joint from its velocity written as ``source``
    to ``target`` (base-velocity declarations, :func:`joint_declaration` applied here), at neutral
    coordinates ``q`` (..., nq) and the joint velocity ``v_source`` (..., nv) written as ``source``
    (None: no ``X_j_dot``)."""
    s, t = joint_declaration(kind, source), joint_declaration(kind, target)
    R, p = relative_pose(kind, q, o)
    rows = joint_rows(kind)
    v_body = None
    if v_source is not None:
        H = o.pose(R, p)
        v_body = o.matvec(s.matrices(H, o, (False, True))[1], embed(kind, v_source, o))
    X, X_inv, X_dot = base_maps(s, t, R, p, v_body, o, rate=v_body is not None)
    return _select(X, rows, o), _select(X_inv, rows, o), _select(X_dot, rows, o)


def convert_joint_velocity(
    kind: JointKind, source: BaseVelocity, target: BaseVelocity, q: Any, v: Any, o: Ops
) -> Any:
    """One joint's velocity (..., nv) written as ``source`` (a base-velocity declaration) rewritten
    as ``target``, at its neutral coordinates ``q``: a constant reordering of a free joint's halves
    when both measure the same thing, else ``X_j v``."""
    if joint_declaration(kind, source).same_frame(joint_declaration(kind, target)):
        if kind is JointKind.FREE and source.swap != target.swap:
            return o.vcat([o.vpart(v, 3, 6), o.vpart(v, 0, 3)])
        return v
    return o.matvec(joint_maps(kind, source, target, q, None, o)[0], v)


def splice(o: Ops, x: Any, size: int, segments: list[tuple[slice, Any]]) -> Any:
    """The vector ``x`` (..., size) with the ``segments`` (increasing, disjoint slices) replaced by
    the given values, functionally."""
    pieces: list = []
    cur = 0
    for sl, value in segments:
        if sl.start > cur:
            pieces.append(o.vpart(x, cur, sl.start))
        pieces.append(value)
        cur = sl.stop
    if not pieces:
        return x
    if cur < size:
        pieces.append(o.vpart(x, cur, size))
    return o.vcat(pieces)


@dataclass(frozen=True)
class JointBlock:
    """One joint's block of T: at ``offset`` (..nv) of the target vector, ``width`` entries;
    ``X`` (..., w, w), its inverse and its time derivative (None when zero)."""

    offset: int
    width: int
    X: Any
    X_inv: Any
    X_dot: Any | None


def target_offsets(order: JointOrder, v_start: np.ndarray, target_perm: np.ndarray | None) -> list[int]:
    """The offset of each DOF joint (model order) in the target's generalized velocity."""
    n = len(v_start) - 1
    perm = range(n) if target_perm is None else target_perm.tolist()
    offsets = [0] * n
    at = order.nb
    for k in perm:
        offsets[k] = at
        at += int(v_start[k + 1] - v_start[k])
    return offsets


def joint_velocity_declaration(velocity: BaseVelocity, com: Any) -> BaseVelocity:
    """A convention's base-velocity declaration ``velocity`` read for a joint whose child's centre of
    mass is ``com`` (3,) (child axes): the point ``BASE_COM`` is the child's, not the base's."""
    if velocity.point is not Point.BASE_COM:
        return velocity
    return replace(velocity, com=None).bound(com)


class WideJoints:
    """The planar, ball and free joints of a model at a state: their coordinates (neutral) and
    velocities (in the state's representation), and their blocks between two conventions."""

    def __init__(self, model: Model, state: State, o: Ops) -> None:
        from bridge.conventions.state import velocity_declaration

        self.model, self.state, self.o = model, state, o
        coords = model.coordinates
        self.coordinates = coords
        self.rep_velocity = velocity_declaration(state.representation)
        self.joints: list[tuple[int, Joint, Any, Any]] = []
        for k in coords.wide:
            joint = model.joint(coords.names[k])
            q_sl, v_sl = coords.q_slice(k), coords.v_slice(k)
            q = o.vpart(state.s, q_sl.start, q_sl.stop)
            v = o.vpart(state.s_dot, v_sl.start, v_sl.stop)
            self.joints.append((k, joint, q, v))
        self._velocities: dict[int, list] = {}

    def declaration(self, convention: Convention, joint: Joint) -> BaseVelocity:
        """The base-velocity declaration of ``convention`` for ``joint`` (its child's COM bound)."""
        return joint_velocity_declaration(convention.velocity, self.model.link(joint.child).inertia.com)

    def _joint_velocities(self, convention: Convention) -> list:
        """Each wide joint's velocity (..., nv) written as ``convention``."""
        key = id(convention)
        out = self._velocities.get(key)
        if out is None:
            out = []
            for _, joint, q, v in self.joints:
                target = self.declaration(convention, joint)
                if joint_declaration(joint.kind, target).same_frame(
                    joint_declaration(joint.kind, self.rep_velocity)
                ):
                    out.append(self._reordered(joint.kind, self.rep_velocity, target, v))
                    continue
                X = joint_maps(joint.kind, self.rep_velocity, target, q, None, self.o)[0]
                out.append(self.o.matvec(X, v))
            self._velocities[key] = out
        return out

    def _reordered(self, kind: JointKind, source: BaseVelocity, target: BaseVelocity, v: Any) -> Any:
        """A free joint's velocity between two orders of its halves (other kinds: unchanged)."""
        if kind is not JointKind.FREE or source.swap == target.swap:
            return v
        o = self.o
        return o.vcat([o.vpart(v, 3, 6), o.vpart(v, 0, 3)])

    def velocities_in(self, convention: Convention) -> Any:
        """The state's joint velocities (..., n_dofs), model order, with the wide joints' written as
        ``convention``."""
        o, coords = self.o, self.coordinates
        velocities = self._joint_velocities(convention)
        pieces: list = []
        cur = 0
        sd = self.state.s_dot
        for (k, _, _, _), v in zip(self.joints, velocities, strict=True):
            sl = coords.v_slice(k)
            if sl.start > cur:
                pieces.append(o.vpart(sd, cur, sl.start))
            pieces.append(v)
            cur = sl.stop
        if cur < coords.nv:
            pieces.append(o.vpart(sd, cur, coords.nv))
        return o.vcat(pieces)

    def change(
        self,
        X: Any | None,
        X_inv: Any | None,
        order: JointOrder,
        nu: Any,
        X_dot: Any | None,
        source: Convention,
        target: Convention,
    ) -> WideChangeOfVariables:
        """The :class:`~bridge.conventions.wide_change.WideChangeOfVariables` from ``source`` to
        ``target`` with the base block ``X`` (and its inverse and derivative) and ``nu`` the source
        generalized velocity."""
        from bridge.conventions.wide_change import WideChangeOfVariables

        o = self.o
        offsets = target_offsets(order, self.coordinates.v_start, target.permutation(self.model))
        blocks = []
        v_source = self._joint_velocities(source)
        for (k, joint, q, _), v in zip(self.joints, v_source, strict=True):
            s, t = self.declaration(source, joint), self.declaration(target, joint)
            kind = joint.kind
            if joint_declaration(kind, s).same_frame(joint_declaration(kind, t)):
                if kind is JointKind.FREE and s.swap != t.swap:
                    P = o.constant(np.eye(6)[[3, 4, 5, 0, 1, 2]], v)
                    blocks.append(JointBlock(offsets[k], 6, P, P, None))
                continue
            Xj, Xj_inv, Xj_dot = joint_maps(kind, s, t, q, v, o)
            blocks.append(JointBlock(offsets[k], kind.nv, Xj, Xj_inv, Xj_dot))
        return WideChangeOfVariables(X, X_inv, order, nu, X_dot, tuple(blocks), o)


def convert_joint_velocities(
    layout: Any, s: Any, s_dot: Any, source: BaseVelocity, target: BaseVelocity, o: Ops
) -> Any:
    """Joint velocities (..., nv) with each planar, ball and free joint's written as ``source``
    rewritten as ``target`` (neutral declarations, no model point), at the neutral positions ``s``
    (..., nq) of the joints laid out as ``layout`` (:class:`~bridge.model.joints.Coordinates`)."""
    segments = []
    for k in layout.wide:
        q_sl, v_sl = layout.q_slice(k), layout.v_slice(k)
        q, v = o.vpart(s, q_sl.start, q_sl.stop), o.vpart(s_dot, v_sl.start, v_sl.stop)
        segments.append((v_sl, convert_joint_velocity(layout.kinds[k], source, target, q, v, o)))
    return splice(o, s_dot, layout.nv, segments)
