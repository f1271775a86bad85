"""Neutral states to and from Pinocchio, and Pinocchio's generalized-velocity convention.

Pinocchio's configuration is ``q = [A_o_B, quaternion (x, y, z, w) of A_R_B, joints]`` with
continuous joints as ``(cos, sin)`` pairs, and its velocity ``v = [B_v_A,B (LOCAL); joints]``,
joints in depth-first order. :data:`PINOCCHIO` is that convention for
:mod:`bridge.conventions.change_of_variables`: the BODY base velocity and the depth-first joint order
(``v_pin[6:] = s_dot[perm]``, :func:`pinocchio_dof_permutation`).
"""

from __future__ import annotations

import numpy as np

from bridge.conventions.change_of_variables import Convention
from bridge.conventions.declaration import BODY_VELOCITY, Configuration, ContinuousJoint, QuaternionOrder
from bridge.conventions.native_state import JointLayout, from_native_state, joint_layout, to_native_state
from bridge.conventions.state import State
from bridge.errors import StateError
from bridge.model.model import Model

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
#: where each neutral DOF lives in Pinocchio's q and v: the generic layout of :data:`PINOCCHIO`'s
#: declaration (``perm``, ``idx_q``, ``idx_v``, ``continuous`` as (cos, sin), ``nq``, ``nv``)
PinocchioLayout = JointLayout


def pinocchio_layout(model: Model) -> PinocchioLayout:
    """The q/v layout of ``to_pinocchio(model)`` relative to the model's DOF order (computed once
    per model: models are immutable)."""
    return joint_layout(model, PINOCCHIO)


def pinocchio_dof_permutation(model: Model) -> np.ndarray:
    """``perm`` with ``v_pin_joints = s_dot[perm]`` (Pinocchio's depth-first order; a coupled
    model's mimic joints are not DOFs: they have no q or v in Pinocchio)."""
    index = {d: i for i, d in enumerate(model.dof_names)}
    return np.array([index[j.name] for j in pinocchio_joint_order(model) if j.name in index], dtype=np.intp)


# --------------------------------------------------------------------------- states
def _check_model(model: object, what: str) -> None:
    if not isinstance(model, Model):
        raise StateError(f"{what} expects a bridge Model first, got {type(model).__name__}")


def to_pinocchio_state(model: Model, state: State) -> tuple[np.ndarray, np.ndarray]:
    """Neutral state -> Pinocchio ``(q, v)`` for ``to_pinocchio(model)``, batched (..., nq), (..., nv).

    q = [A_o_B, quaternion (x, y, z, w) of A_R_B, joints]; v = [B_v_A,B (LOCAL); joints], joints in
    Pinocchio's depth-first order, continuous joints as (cos, sin) in q (:data:`PINOCCHIO`). For a
    fixed base, Pinocchio's world is the base link frame: ``world_H_base`` and the base velocity are
    not part of (q, v).
    """
    _check_model(model, "to_pinocchio_state")
    if not isinstance(state, State):
        raise StateError(f"to_pinocchio_state expects a bridge State, got {type(state).__name__}")
    return to_native_state(model, state, PINOCCHIO)


def from_pinocchio_state(model: Model, q: object, v: object, representation: object = "mixed") -> State:
    """Pinocchio ``(q, v)`` of ``to_pinocchio(model)`` -> neutral State in ``representation``."""
    _check_model(model, "from_pinocchio_state")
    return from_native_state(model, q, v, PINOCCHIO, representation)


#: Pinocchio's generalized velocity: LOCAL (BODY) base velocity, depth-first joints
PINOCCHIO = Convention(
    "pinocchio",
    BODY_VELOCITY,
    joint_order=pinocchio_dof_permutation,
    configuration=Configuration(QuaternionOrder.XYZW, continuous=ContinuousJoint.COS_SIN),
)
