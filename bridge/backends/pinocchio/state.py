"""Neutral states to and from Pinocchio, and Pinocchio's generalized-velocity convention.

Pinocchio's configuration is ``q = [A_o_B, quaternion (x, y, z, w) of A_R_B, joints]`` with
continuous joints as ``(cos, sin)`` pairs, and its velocity ``v = [B_v_A,B (LOCAL); joints]``,
joints in depth-first order. :data:`PINOCCHIO` is that convention for
:mod:`bridge.conventions.change_of_variables`: the BODY base velocity and the depth-first joint order
(``v_pin[6:] = s_dot[perm]``, :func:`pinocchio_dof_permutation`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from bridge._array import as_float_array
from bridge.conventions.change_of_variables import Convention
from bridge.conventions.state import Representation, State, body_to_base_matrix
from bridge.errors import BridgeError, StateError
from bridge.model.model import Model
from bridge.spatial import Transform

from .mimic import pinocchio_joint_order

__all__ = [
    "PINOCCHIO",
    "PinocchioLayout",
    "from_pinocchio_state",
    "pinocchio_dof_permutation",
    "pinocchio_layout",
    "to_pinocchio_state",
]


# --------------------------------------------------------------------------- layout and permutation
@dataclass(frozen=True)
class PinocchioLayout:
    """Where each neutral DOF lives in Pinocchio's q and v.

    ``perm``: ``v_pin[base:] = s_dot[perm]`` (length n); ``idx_q``/``idx_v`` per neutral DOF;
    ``continuous`` per neutral DOF (q uses cos, sin); ``base`` = 6 if floating else 0 for v and
    7 or 0 for q.
    """

    perm: np.ndarray
    idx_q: np.ndarray
    idx_v: np.ndarray
    continuous: np.ndarray
    nq: int
    nv: int
    floating: bool


@lru_cache(maxsize=64)
def _layout_cached(key: tuple) -> PinocchioLayout:
    floating, kinds, depth_first = key
    n = len(kinds)
    q_base, v_base = (7, 6) if floating else (0, 0)
    idx_q = np.zeros(n, dtype=np.intp)
    idx_v = np.zeros(n, dtype=np.intp)
    qi, vi = q_base, v_base
    for k in depth_first:
        idx_q[k] = qi
        idx_v[k] = vi
        qi += 2 if kinds[k] == "continuous" else 1
        vi += 1
    perm = np.asarray(depth_first, dtype=np.intp)
    cont = np.array([k == "continuous" for k in kinds], dtype=bool)
    return PinocchioLayout(perm, idx_q, idx_v, cont, qi, vi, floating)


_LAYOUTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pinocchio_layout(model: Model) -> PinocchioLayout:
    """The q/v layout of ``to_pinocchio(model)`` relative to the model's DOF order (computed once
    per model: models are immutable)."""
    lay = _LAYOUTS.get(model)
    if lay is None:
        index = {d: i for i, d in enumerate(model.dof_names)}
        # (a coupled model's mimic joints are not DOFs: they have no q or v in Pinocchio)
        depth_first = tuple(index[j.name] for j in pinocchio_joint_order(model) if j.name in index)
        kinds = tuple(model.joint(d).kind.value for d in model.dof_names)
        lay = _LAYOUTS[model] = _layout_cached((model.floating, kinds, depth_first))
    return lay


def pinocchio_dof_permutation(model: Model) -> np.ndarray:
    """``perm`` with ``v_pin_joints = s_dot[perm]`` (Pinocchio's depth-first order)."""
    return pinocchio_layout(model).perm


# --------------------------------------------------------------------------- states
def _check_model(model: object, what: str) -> None:
    if not isinstance(model, Model):
        raise StateError(f"{what} expects a bridge Model first, got {type(model).__name__}")


def to_pinocchio_state(model: Model, state: State) -> tuple[np.ndarray, np.ndarray]:
    """Neutral state -> Pinocchio ``(q, v)`` for ``to_pinocchio(model)``, batched (..., nq), (..., nv).

    q = [A_o_B, quaternion (x, y, z, w) of A_R_B, joints]; v = [B_v_A,B (LOCAL); joints], joints in
    Pinocchio's depth-first order, continuous joints as (cos, sin) in q. For a fixed base, Pinocchio's
    world is the base link frame: ``world_H_base`` and the base velocity are not part of (q, v).
    """
    _check_model(model, "to_pinocchio_state")
    if not isinstance(state, State):
        raise StateError(f"to_pinocchio_state expects a bridge State, got {type(state).__name__}")
    state.check_model(model)
    lay = pinocchio_layout(model)
    H = state.world_H_base
    batch = np.broadcast_shapes(
        H.batch_shape, state.s.shape[:-1], state.s_dot.shape[:-1], state.base_velocity.shape[:-1]
    )
    q = np.zeros((*batch, lay.nq))
    v = np.zeros((*batch, lay.nv))
    s = state.s
    c = lay.continuous
    q[..., lay.idx_q[~c]] = s[..., ~c]
    q[..., lay.idx_q[c]] = np.cos(s[..., c])
    q[..., lay.idx_q[c] + 1] = np.sin(s[..., c])
    v[..., lay.idx_v] = state.s_dot
    if model.floating:
        q[..., :3] = H.translation
        q[..., 3:7] = H.as_quaternion_xyzw()
        v[..., :6] = state.base_velocity_in(Representation.BODY)
    return q, v


def from_pinocchio_state(
    model: Model, q: object, v: object, representation: object = Representation.MIXED
) -> State:
    """Pinocchio ``(q, v)`` of ``to_pinocchio(model)`` -> neutral State in ``representation``."""
    _check_model(model, "from_pinocchio_state")
    lay = pinocchio_layout(model)
    try:
        q = as_float_array(q, "q", (lay.nq,))
        v = as_float_array(v, "v", (lay.nv,))
    except Exception as exc:
        raise StateError(f"pinocchio state for model {model.name!r}: {exc}") from None
    c = lay.continuous
    n = model.n_dofs
    s = np.zeros((*q.shape[:-1], n))
    s[..., ~c] = q[..., lay.idx_q[~c]]
    if np.any(c):
        cs, sn = q[..., lay.idx_q[c]], q[..., lay.idx_q[c] + 1]
        if np.any(np.abs(np.hypot(cs, sn) - 1.0) > 1e-6):
            raise StateError("pinocchio state: a continuous joint's (cos, sin) pair is not unit norm")
        s[..., c] = np.arctan2(sn, cs)
    s_dot = v[..., lay.idx_v]
    rep = Representation.parse(representation)
    if model.floating:
        try:
            H = Transform.from_quaternion_xyzw(q[..., 3:7], q[..., :3])
        except BridgeError as exc:
            raise StateError(f"pinocchio state: base {exc}") from None
        vb = np.einsum("...ij,...j->...i", body_to_base_matrix(H, rep), v[..., :6])
    else:
        H = Transform.identity(q.shape[:-1])
        vb = np.zeros((*q.shape[:-1], 6))
    return State(H, s, vb, s_dot, rep)


#: Pinocchio's generalized velocity: LOCAL (BODY) base velocity, depth-first joints
PINOCCHIO = Convention("pinocchio", Representation.BODY, joint_order=pinocchio_dof_permutation)
