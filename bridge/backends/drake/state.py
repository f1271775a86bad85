"""Neutral states to and from Drake, and Drake's generalized-velocity convention.

For ``to_drake(model)`` with a floating base, Drake's state is

* ``q = [qw qx qy qz; p_WB; joints]``: the unit quaternion (w first) of ``world_R_base`` and the base
  origin in world coordinates, then one position per joint;
* ``v = [omega_WB; p_dot_WB; joints]``: the base's angular velocity and the velocity of its
  origin, both in world coordinates — bridge's MIXED base velocity with its halves swapped
  (angular first), so the change of variables to MIXED is a constant permutation (T_dot = 0);

joints in Drake's velocity order (its forest's order, read from the plant: :func:`drake_layout`).
:data:`DRAKE` is that convention for :mod:`bridge.conventions.change_of_variables`. A fixed base has no base
coordinates: q and v are the joints, and the base pose is the ``world_H_base`` frame parameter of
the Context (:func:`bridge.backends.drake.model.set_world_H_base`), not part of (q, v).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from bridge.conventions.change_of_variables import Convention
from bridge.conventions.declaration import Axes, BaseVelocity, Configuration, Point, QuaternionOrder
from bridge.conventions.native_state import check_model_and_state, from_native_state, to_native_state
from bridge.conventions.state import State
from bridge.errors import BackendError, StateError
from bridge.model.mimic import require_uncoupled
from bridge.model.model import Model
from bridge.spatial.conventions import Ordering

__all__ = [
    "DRAKE",
    "DrakeLayout",
    "drake_dof_permutation",
    "drake_layout",
    "from_drake_state",
    "to_drake_state",
]

_SWAP = np.array([3, 4, 5, 0, 1, 2])


@dataclass(frozen=True)
class DrakeLayout:
    """Where each neutral DOF lives in Drake's q and v for ``to_drake(model)``.

    ``perm``: ``v[nb:] = s_dot[perm]`` (joints in Drake's velocity order, nb = 6 or 0);
    ``idx_q``/``idx_v`` (n,): each neutral DOF's index in q and v; ``nq``, ``nv`` the sizes.
    """

    perm: np.ndarray
    idx_q: np.ndarray
    idx_v: np.ndarray
    nq: int
    nv: int
    floating: bool


_LAYOUTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def drake_layout(model: Model, plant: object = None) -> DrakeLayout:
    """The q/v layout of ``to_drake(model)`` (read from ``plant`` if given, else from a plant built
    once; cached per model)."""
    lay = _LAYOUTS.get(model)
    if lay is not None:
        return lay
    require_uncoupled(model, "Drake's q and v")
    from .model import instance_name, to_drake

    if plant is None:
        plant = to_drake(model)
    nb_q, nb_v = (7, 6) if model.floating else (0, 0)
    if model.floating:
        root = _floating_joint(plant, model)
        if root.position_start() != 0 or root.velocity_start() != 0:
            raise BackendError(
                "Drake placed the floating base's coordinates after the joints"
            )  # pragma: no cover
    instance = plant.GetModelInstanceByName(instance_name(model))
    joints = [plant.GetJointByName(d, instance) for d in model.dof_names]
    idx_q = np.array([j.position_start() for j in joints], dtype=np.intp)
    idx_v = np.array([j.velocity_start() for j in joints], dtype=np.intp)
    perm = np.argsort(idx_v).astype(np.intp)
    if model.n_dofs and (
        sorted(idx_v.tolist()) != list(range(nb_v, nb_v + model.n_dofs))
        or sorted(idx_q.tolist()) != list(range(nb_q, nb_q + model.n_dofs))
    ):  # pragma: no cover - internal consistency
        raise BackendError("Drake's joint coordinates are not one per DOF after the base")
    for a in (perm, idx_q, idx_v):
        a.setflags(write=False)
    lay = DrakeLayout(perm, idx_q, idx_v, nb_q + model.n_dofs, nb_v + model.n_dofs, model.floating)
    _LAYOUTS[model] = lay
    return lay


def _floating_joint(plant, model: Model):
    """The floating joint of the base of ``to_drake(model)``."""
    from pydrake.multibody.tree import JointIndex

    from .model import instance_name

    base = plant.GetBodyByName(model.base, plant.GetModelInstanceByName(instance_name(model))).index()
    for i in range(plant.num_joints()):
        j = plant.get_joint(JointIndex(i))
        if j.child_body().index() == base and j.num_velocities() == 6:
            return j
    raise BackendError(f"Drake plant of {model.name!r} has no floating joint on its base")  # pragma: no cover


def drake_dof_permutation(model: Model) -> np.ndarray:
    """``perm`` with ``v_drake_joints = s_dot[perm]`` (Drake's velocity order)."""
    return drake_layout(model).perm


#: Drake's generalized velocity: MIXED base velocity angular first, joints in Drake's order
DRAKE = Convention(
    "drake",
    BaseVelocity(Point.BASE_ORIGIN, Axes.WORLD, Axes.WORLD, Ordering.ANGULAR_FIRST),
    joint_order=drake_dof_permutation,
    configuration=Configuration(QuaternionOrder.WXYZ, quaternion_first=True),
)


def to_drake_state(model: Model, state: State) -> tuple[np.ndarray, np.ndarray]:
    """Neutral state -> Drake ``(q, v)`` for ``to_drake(model)``, batched (..., nq), (..., nv).

    See the module docstring for the layout; a fixed base's pose is not part of (q, v).
    """
    check_model_and_state(model, state)
    drake_layout(model)  # checks that Drake lays the coordinates out as DRAKE declares
    return to_native_state(model, state, DRAKE)


def from_drake_state(model: Model, q: object, v: object, representation: object = "mixed") -> State:
    """Drake ``(q, v)`` of ``to_drake(model)`` -> neutral State in ``representation`` (a fixed
    base at the identity pose)."""
    if not isinstance(model, Model):
        raise StateError(f"model: expected a bridge Model, got {type(model).__name__}")
    drake_layout(model)
    return from_native_state(model, q, v, DRAKE, representation)
