"""Neutral states to and from Newton, and Newton's generalized-velocity convention.

For ``to_newton(model)`` with a floating base (a free joint from the world to the base link),
Newton's joint coordinates are (measured with newton 1.8; tests/backends/test_newton.py checks each
fact against the installed version):

* ``joint_q = [p_WB; qx qy qz qw; joints]``: the base origin in world coordinates, then the unit
  quaternion of ``world_R_base`` scalar last, then one position per joint;
* ``joint_qd = [c_dot; omega; joints]``: the velocity of the base link's centre of mass ``c`` and
  the base's angular velocity, both in world axes (the same twist Newton reports as the base body's
  ``body_qd``), then the joint velocities;

joints in depth-first order from the base (the order ``to_newton`` adds them in). :data:`NEWTON`
declares this as data: a base velocity at the base COM (``Point.BASE_COM``), so the change of
variables depends on the COM offset (``T``) and on the base's rotation (``T_dot``); every map is
derived from the declaration bound to the model (:meth:`~bridge.conventions.convention.Convention.bound`).
A fixed base has no base coordinates.

This module does not import Newton.
"""

from __future__ import annotations

import numpy as np

from bridge.conventions.change_of_variables import Convention
from bridge.conventions.declaration import Axes, BaseVelocity, Configuration, Point, QuaternionOrder
from bridge.conventions.native_state import check_model_and_state, from_native_state, to_native_state
from bridge.conventions.state import State
from bridge.errors import StateError
from bridge.model.model import Model

__all__ = ["NEWTON", "from_newton_state", "newton_dof_permutation", "to_newton_state"]


def newton_dof_permutation(model: Model) -> np.ndarray:
    """``perm`` (n,) with ``joint_qd[nb:] = s_dot[perm]``: the movable joints depth first."""
    index = {name: i for i, name in enumerate(model.dof_names)}
    return np.array([index[j.name] for j in model.depth_first_joints if j.name in index], dtype=np.intp)


#: Newton's generalized velocity: the base COM's velocity and the angular velocity, world axes
NEWTON = Convention(
    "newton",
    BaseVelocity(Point.BASE_COM, Axes.WORLD, Axes.WORLD),
    joint_order=newton_dof_permutation,
    configuration=Configuration(QuaternionOrder.XYZW, quaternion_first=False),
)


def to_newton_state(model: Model, state: State) -> tuple[np.ndarray, np.ndarray]:
    """Neutral state -> Newton ``(joint_q (..., nq), joint_qd (..., nv))`` for ``to_newton(model)``
    (float64; Newton stores float32). See the module docstring for the layout."""
    check_model_and_state(model, state)
    return to_native_state(model, state, NEWTON)


def from_newton_state(
    model: Model, joint_q: object, joint_qd: object, representation: object = "mixed"
) -> State:
    """Newton ``(joint_q, joint_qd)`` of ``to_newton(model)`` -> neutral State in
    ``representation`` (a fixed base at the identity pose)."""
    if not isinstance(model, Model):
        raise StateError(f"model: expected a bridge Model, got {type(model).__name__}")
    return from_native_state(model, joint_q, joint_qd, NEWTON, representation)
