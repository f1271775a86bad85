"""A neutral State to and from a library's ``(q, v)`` for a model with joints of several coordinates.

The same declaration as :mod:`bridge.conventions.native_state` (a
:class:`~bridge.conventions.declaration.Configuration` and the convention's base velocity), read
for every joint:

* ``q`` = the base pose (floating base only), then each DOF joint in the convention's joint order:
  one number (a continuous joint as ``(cos, sin)`` where declared), a planar joint's
  ``(x, y, angle)`` (the angle as a continuous joint's), a ball joint's quaternion in the declared
  order (or roll-pitch-yaw angles), a free joint's position and quaternion laid out as the base's;
* ``v`` = ``T nu``: the change of variables from the state's representation to the convention
  (:func:`~bridge.conventions.change_of_variables.change_of_variables`), which writes every joint's
  velocity as declared and orders the joints.

Everything broadcasts over leading batch axes; numpy arrays (JAX arrays and CasADi symbols take
the one-coordinate path of :mod:`.native_state`).

This module is neutral: it names no library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bridge._array import as_float_array
from bridge.conventions.declaration import BallCoordinates, Configuration, ContinuousJoint, QuaternionOrder
from bridge.conventions.state import State
from bridge.errors import BridgeError, StateError
from bridge.model.joints import JointKind, quaternion_wxyz_to_rotation, rotation_to_quaternion_wxyz
from bridge.spatial import Transform
from bridge.spatial.so3 import matrix_to_rpy, rpy_to_matrix

if TYPE_CHECKING:  # pragma: no cover
    from bridge.conventions.convention import Convention
    from bridge.model.model import Model

__all__ = ["WideLayout", "from_native_wide", "native_positions", "to_native_wide", "wide_layout"]

_XYZW = np.array([1, 2, 3, 0])  # (w, x, y, z) -> (x, y, z, w)
_WXYZ = np.array([3, 0, 1, 2])  # (x, y, z, w) -> (w, x, y, z)


@dataclass(frozen=True)
class WideLayout:
    """Where each DOF joint (model order) sits in a convention's q: ``q_start`` (n_joints,), its
    native width ``q_width``, and the sizes ``nq``, ``nv`` (with the base)."""

    q_start: tuple[int, ...]
    q_width: tuple[int, ...]
    nq: int
    nv: int


def native_width(kind: JointKind, config: Configuration) -> int:
    """The number of q entries a ``kind`` joint takes in a configuration declared as ``config``."""
    cos_sin = config.continuous is ContinuousJoint.COS_SIN
    if kind is JointKind.CONTINUOUS:
        return 2 if cos_sin else 1
    if kind is JointKind.PLANAR:
        return 4 if cos_sin else 3
    if kind is JointKind.BALL:
        return 3 if config.ball is BallCoordinates.RPY else 4
    return kind.nq


def wide_layout(model: Model, convention: Convention) -> WideLayout:
    """The :class:`WideLayout` of ``model`` in ``convention``."""
    config = convention.configuration
    coords = model.coordinates
    perm = convention.permutation(model)
    order = range(len(coords.kinds)) if perm is None else perm.tolist()
    start = [0] * len(coords.kinds)
    widths = [native_width(k, config) for k in coords.kinds]
    at = 7 if model.floating else 0
    for k in order:
        start[k] = at
        at += widths[k]
    return WideLayout(tuple(start), tuple(widths), at, model.nv)


def _quaternion_out(quat_wxyz: np.ndarray, config: Configuration) -> np.ndarray:
    return quat_wxyz[..., _XYZW] if config.quaternion is QuaternionOrder.XYZW else quat_wxyz


def _quaternion_in(q: np.ndarray, config: Configuration) -> np.ndarray:
    return q[..., _WXYZ] if config.quaternion is QuaternionOrder.XYZW else q


def _joint_q_out(kind: JointKind, s: np.ndarray, config: Configuration) -> np.ndarray:
    """A joint's neutral positions (..., nq) as the convention stores them."""
    cos_sin = config.continuous is ContinuousJoint.COS_SIN
    if kind is JointKind.CONTINUOUS and cos_sin:
        return np.concatenate([np.cos(s), np.sin(s)], axis=-1)
    if kind is JointKind.PLANAR and cos_sin:
        return np.concatenate([s[..., :2], np.cos(s[..., 2:]), np.sin(s[..., 2:])], axis=-1)
    if kind is JointKind.BALL:
        if config.ball is BallCoordinates.RPY:
            return matrix_to_rpy(quaternion_wxyz_to_rotation(s))
        return _quaternion_out(s, config)
    if kind is JointKind.FREE:
        quat = _quaternion_out(s[..., 3:7], config)
        return np.concatenate([quat, s[..., :3]] if config.quaternion_first else [s[..., :3], quat], axis=-1)
    return s


def _unit(quat: np.ndarray, normalize: bool, what: str) -> np.ndarray:
    norm = np.linalg.norm(quat, axis=-1, keepdims=True)
    if normalize:
        if np.any(norm < 1e-12):
            raise StateError(f"{what}: zero quaternion")
        return quat / norm
    if np.any(np.abs(norm - 1.0) > 1e-6):
        raise StateError(f"{what}: the quaternion is not of unit norm")
    return quat / norm


def _joint_q_in(
    kind: JointKind, x: np.ndarray, config: Configuration, normalize: bool, what: str
) -> np.ndarray:
    """A joint's q entries as the convention stores them -> neutral positions (..., nq)."""
    cos_sin = config.continuous is ContinuousJoint.COS_SIN
    if (kind is JointKind.CONTINUOUS or kind is JointKind.PLANAR) and cos_sin:
        c, s = x[..., -2:-1], x[..., -1:]
        if np.any(np.abs(np.hypot(c, s) - 1.0) > 1e-6):
            raise StateError(f"{what}: the (cos, sin) pair is not of unit norm")
        return np.concatenate([x[..., :-2], np.arctan2(s, c)], axis=-1)
    if kind is JointKind.BALL:
        if config.ball is BallCoordinates.RPY:
            return rotation_to_quaternion_wxyz(rpy_to_matrix(x))
        return _unit(_quaternion_in(x, config), normalize, what)
    if kind is JointKind.FREE:
        quat, p = (x[..., :4], x[..., 4:7]) if config.quaternion_first else (x[..., 3:7], x[..., :3])
        return np.concatenate([p, _unit(_quaternion_in(quat, config), normalize, what)], axis=-1)
    return x


def _base_q(H: Transform, config: Configuration) -> np.ndarray:
    quat = _quaternion_out(H.as_quaternion_wxyz(), config)
    p = H.translation
    return np.concatenate([quat, p] if config.quaternion_first else [p, quat], axis=-1)


def to_native_wide(model: Model, state: State, convention: Convention) -> tuple[np.ndarray, np.ndarray]:
    """Neutral ``state`` -> ``(q (..., nq), v (..., nv))`` in ``convention`` (module docstring)."""
    from bridge.conventions.change_of_variables import NEUTRAL, change_of_variables

    lay = wide_layout(model, convention)
    lead = np.broadcast_shapes(
        state.world_H_base.batch_shape,
        *(tuple(np.shape(x)[:-1]) for x in (state.s, state.s_dot, state.base_velocity)),
    )
    q = np.array(np.broadcast_to(native_positions(model, state, convention), (*lead, lay.nq)))
    v = change_of_variables(model, state, NEUTRAL[state.representation], convention).velocity(
        state.nu if model.floating else state.s_dot
    )
    return q, np.array(np.broadcast_to(v, (*lead, lay.nv)))


def native_positions(model: Model, state: State, convention: Convention) -> np.ndarray:
    """The configuration ``q`` (..., nq) of ``state`` in ``convention`` alone (:func:`to_native_wide`'s
    q, without the change of variables of its v): for an engine that has that change already."""
    config = convention.configuration
    lay = wide_layout(model, convention)
    coords = model.coordinates
    s = np.asarray(state.s)
    lead = np.broadcast_shapes(state.world_H_base.batch_shape, s.shape[:-1])
    q = np.zeros((*lead, lay.nq))
    if model.floating:
        q[..., :7] = _base_q(state.world_H_base, config)
    for k, kind in enumerate(coords.kinds):
        a = lay.q_start[k]
        q[..., a : a + lay.q_width[k]] = _joint_q_out(kind, s[..., coords.q_slice(k)], config)
    return q


def from_native_wide(
    model: Model,
    q: object,
    v: object,
    convention: Convention,
    representation: object,
    names: tuple[str, str] = ("q", "v"),
    normalize: bool = False,
) -> State:
    """``(q, v)`` in ``convention`` -> a neutral State in ``representation`` (module docstring)."""
    from bridge.conventions.change_of_variables import NEUTRAL, change_of_variables
    from bridge.conventions.state import Representation

    config = convention.configuration
    lay = wide_layout(model, convention)
    coords = model.coordinates
    what = f"{convention.name} state for model {model.name!r}"
    try:
        q = as_float_array(q, names[0], (lay.nq,))
        v = as_float_array(v, names[1], (lay.nv,))
    except BridgeError as exc:
        raise StateError(f"{what}: {exc}") from None
    batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
    s = np.zeros((*q.shape[:-1], coords.nq))
    for k, kind in enumerate(coords.kinds):
        a = lay.q_start[k]
        s[..., coords.q_slice(k)] = _joint_q_in(
            kind, q[..., a : a + lay.q_width[k]], config, normalize, f"{what}, joint {coords.names[k]!r}"
        )
    if model.floating:
        quat, p = (q[..., :4], q[..., 4:7]) if config.quaternion_first else (q[..., 3:7], q[..., :3])
        quat = _unit(_quaternion_in(quat, config), normalize, f"{what}, base")
        H = Transform.from_quaternion_wxyz(quat, p)
    else:
        H = Transform.identity(batch)
    rep = Representation.parse(representation)
    zero = State(H, s, np.zeros((*batch, 6)), np.zeros((*batch, coords.nv)), rep, layout=model)
    nu = change_of_variables(model, zero, convention, NEUTRAL[rep]).velocity(v)
    nu = np.broadcast_to(nu, (*batch, lay.nv))
    if model.floating:
        return State(H, s, nu[..., :6], nu[..., 6:], rep, layout=model)
    return State(H, s, np.zeros((*batch, 6)), nu, rep, layout=model)
