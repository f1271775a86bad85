"""A neutral State to and from a library's own coordinates ``(q, v)``, derived from its declaration.

A :class:`~bridge.conventions.change_of_variables.Convention` with a
:class:`~bridge.conventions.declaration.Configuration` says everything needed:

* ``q`` = the base pose (origin and unit quaternion, in the declared order and place; floating base
  only), then one position per joint in the convention's joint order (a continuous joint as its
  angle, or as ``(cos, sin)`` where declared);
* ``v`` = the base velocity as declared (``L v_B``), then the joint velocities in the same order.

A fixed base has no base coordinates: ``q`` and ``v`` are the joints, and the State read back has
the identity pose. Everything broadcasts over leading batch axes. The libraries' ``to_<lib>_state``
/ ``from_<lib>_state`` are these two functions on their conventions.

This module is neutral: it names no library.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bridge._array import as_float_array
from bridge.conventions.declaration import ContinuousJoint, QuaternionOrder
from bridge.conventions.state import State, velocity_declaration
from bridge.errors import BridgeError, StateError
from bridge.spatial import Transform

if TYPE_CHECKING:  # pragma: no cover
    from bridge.conventions.change_of_variables import Convention
    from bridge.model.model import Model

__all__ = [
    "JointLayout",
    "base_velocity_from_native",
    "from_native_state",
    "joint_layout",
    "native_base_velocity",
    "to_native_state",
]


@dataclass(frozen=True)
class JointLayout:
    """Where each of the model's DOFs sits in a convention's ``q`` and ``v``.

    ``perm`` (n,): ``v[nb:] = s_dot[perm]``; ``idx_q``/``idx_v`` (n,) each DOF's index in q and v;
    ``continuous`` (n,) the DOFs stored as ``(cos, sin)`` at ``idx_q``, ``idx_q + 1``; ``nq``, ``nv``
    the sizes; ``floating`` whether q and v start with the base.
    """

    perm: np.ndarray
    idx_q: np.ndarray
    idx_v: np.ndarray
    continuous: np.ndarray
    nq: int
    nv: int
    floating: bool


_LAYOUTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def joint_layout(model: Model, convention: Convention) -> JointLayout:
    """The :class:`JointLayout` of ``model`` in ``convention`` (cached per model and convention)."""
    try:
        per_model = _LAYOUTS.setdefault(model, {})
    except TypeError:
        per_model = {}
    layout = per_model.get(convention.name)
    if layout is not None:
        return layout
    n = model.n_dofs
    perm = convention.permutation(model)
    perm = np.arange(n, dtype=np.intp) if perm is None else np.asarray(perm, dtype=np.intp)
    config = convention.configuration
    cos_sin = config is not None and config.continuous is ContinuousJoint.COS_SIN
    continuous = np.array(
        [cos_sin and model.joint(d).kind.value == "continuous" for d in model.dof_names], dtype=bool
    )
    q_base, v_base = (7, 6) if model.floating else (0, 0)
    idx_q = np.zeros(n, dtype=np.intp)
    idx_v = np.zeros(n, dtype=np.intp)
    qi = q_base
    for position, k in enumerate(perm.tolist()):
        idx_q[k] = qi
        idx_v[k] = v_base + position
        qi += 2 if continuous[k] else 1
    for a in (perm, idx_q, idx_v, continuous):
        a.setflags(write=False)
    layout = JointLayout(perm, idx_q, idx_v, continuous, qi, v_base + n, model.floating)
    per_model[convention.name] = layout
    return layout


def native_base_velocity(state: State, convention: Convention) -> np.ndarray:
    """The state's base velocity (..., 6) as ``convention`` writes it (``L v_B``)."""
    H = state.world_H_base
    L_state_inv = velocity_declaration(state.representation).matrices(H)[1]
    L = convention.velocity.matrices(H)[0]
    return np.einsum("...ij,...j->...i", L @ L_state_inv, state.base_velocity)


def base_velocity_from_native(
    world_H_base: Transform, v_native: np.ndarray, convention: Convention, representation: object
) -> np.ndarray:
    """A base velocity (..., 6) written as ``convention`` writes it, in a neutral representation."""
    L_inv = convention.velocity.matrices(world_H_base)[1]
    L_rep = velocity_declaration(representation).matrices(world_H_base)[0]
    return np.einsum("...ij,...j->...i", L_rep @ L_inv, v_native)


def _require_configuration(convention: Convention):
    config = convention.configuration
    if config is None:
        raise StateError(f"convention {convention.name!r} declares no configuration layout (q)")
    return config


def to_native_state(model: Model, state: State, convention: Convention) -> tuple[np.ndarray, np.ndarray]:
    """Neutral ``state`` -> ``(q (..., nq), v (..., nv))`` in ``convention`` (see the module docstring)."""
    if not isinstance(state, State):
        raise StateError(f"expected a bridge State, got {type(state).__name__}")
    state.check_model(model)
    config = _require_configuration(convention)
    lay = joint_layout(model, convention)
    H = state.world_H_base
    batch = np.broadcast_shapes(
        H.batch_shape, state.s.shape[:-1], state.s_dot.shape[:-1], state.base_velocity.shape[:-1]
    )
    q = np.zeros((*batch, lay.nq))
    v = np.zeros((*batch, lay.nv))
    s, c = state.s, lay.continuous
    if c.any():
        q[..., lay.idx_q[~c]] = s[..., ~c]
        q[..., lay.idx_q[c]] = np.cos(s[..., c])
        q[..., lay.idx_q[c] + 1] = np.sin(s[..., c])
    else:
        q[..., lay.idx_q] = s
    v[..., lay.idx_v] = state.s_dot
    if model.floating:
        q[..., config.position_slice] = H.translation
        wxyz = config.quaternion is QuaternionOrder.WXYZ
        q[..., config.quaternion_slice] = H.as_quaternion_wxyz() if wxyz else H.as_quaternion_xyzw()
        v[..., :6] = native_base_velocity(state, convention)
    return q, v


def from_native_state(
    model: Model,
    q: object,
    v: object,
    convention: Convention,
    representation: object,
    names: tuple[str, str] = ("q", "v"),
    normalize: bool = False,
) -> State:
    """``(q, v)`` in ``convention`` -> a neutral State in ``representation`` (batched).

    ``names`` name q and v in error messages; ``normalize`` accepts a quaternion of any non-zero
    norm (as MuJoCo does) instead of requiring a unit one.
    """
    config = _require_configuration(convention)
    lay = joint_layout(model, convention)
    what = f"{convention.name} state for model {model.name!r}"
    try:
        q = as_float_array(q, names[0], (lay.nq,))
        v = as_float_array(v, names[1], (lay.nv,))
    except BridgeError as exc:
        raise StateError(f"{what}: {exc}") from None
    c = lay.continuous
    s = np.zeros((*q.shape[:-1], model.n_dofs))
    s[..., ~c] = q[..., lay.idx_q[~c]]
    if c.any():
        cs, sn = q[..., lay.idx_q[c]], q[..., lay.idx_q[c] + 1]
        if np.any(np.abs(np.hypot(cs, sn) - 1.0) > 1e-6):
            raise StateError(
                f"{convention.name} state: a continuous joint's (cos, sin) pair is not unit norm"
            )
        s[..., c] = np.arctan2(sn, cs)
    s_dot = v[..., lay.idx_v]
    batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
    if not model.floating:
        return State(Transform.identity(batch), s, np.zeros((*batch, 6)), s_dot, representation)
    H = _base_pose(q, config, normalize, what, names[0], convention.name)
    vb = base_velocity_from_native(H, v[..., :6], convention, representation)
    return State(H, s, vb, s_dot, representation)


def _base_pose(q: np.ndarray, config, normalize: bool, what: str, qname: str, name: str) -> Transform:
    """The base pose read from q (``normalize``: any non-zero quaternion norm)."""
    quat = q[..., config.quaternion_slice]
    if normalize:
        norm = np.linalg.norm(quat, axis=-1, keepdims=True)
        if np.any(norm < 1e-12):
            sl = config.quaternion_slice
            raise StateError(f"{what}: zero base quaternion in {qname}[{sl.start}:{sl.stop}]")
        quat = quat / norm
    try:
        if config.quaternion is QuaternionOrder.WXYZ:
            return Transform.from_quaternion_wxyz(quat, q[..., config.position_slice])
        return Transform.from_quaternion_xyzw(quat, q[..., config.position_slice])
    except BridgeError as exc:
        raise StateError(f"{name} state: base {exc}") from None
