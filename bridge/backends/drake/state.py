"""Neutral states to and from Drake, and Drake's generalized-velocity convention.

For ``to_drake(model)`` with a floating base, Drake's state is

* ``q = [qw qx qy qz; p_WB; joints]``: the unit quaternion (w first) of ``world_R_base`` and the base
  origin in world coordinates, then each joint's positions;
* ``v = [omega_WB; p_dot_WB; joints]``: the base's angular velocity and the velocity of its
  origin, both in world coordinates — bridge's MIXED base velocity with its halves swapped
  (angular first), so the change of variables to MIXED is a constant permutation (T_dot = 0);

joints in Drake's velocity order (its forest's order, read from the plant: :func:`drake_layout`).
Joints of several coordinates are Drake's joints of that width, each relative to its frame F on the
parent (the neutral joint frame; measured with Drake 1.51, ``tests/backends/drake``):

* free (``QuaternionFloatingJoint``): ``q = [qw qx qy qz; p_FM]``, ``v = [w_FM; v_FM]``, both in F:
  the floating base's layout relative to F (bridge's MIXED free-joint velocity, angular first);
* ball (``BallRpyJoint``): ``q`` = roll, pitch, yaw of ``F_R_M`` (``R = Rz(y) Ry(p) Rx(r)``), ``v`` =
  ``w_FM`` in F (so ``qdot != v``): bridge's INERTIAL/MIXED ball velocity, a rotation of its BODY
  one (``w_F = R w_M``, with ``T_dot = R w^`` along the motion);
* planar (``PlanarJoint``): ``q = [x, y, theta]`` in F's xy plane, ``v = qdot = [vx, vy, w]`` in F:
  bridge's MIXED planar velocity (F's axes are the plane axes of
  :func:`bridge.model.joints.plane_axes`).

:data:`DRAKE` is that convention for :mod:`bridge.conventions.change_of_variables` (its base velocity
is also the declaration of its free joints, :mod:`bridge.conventions.joint_blocks`). A fixed base has
no base coordinates: q and v are the joints, and the base pose is the ``world_H_base`` frame parameter
of the Context (:func:`bridge.backends.drake.model.set_world_H_base`), not part of (q, v).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from bridge._cache import ModelCache
from bridge.conventions.change_of_variables import Convention
from bridge.conventions.declaration import (
    Axes,
    BallCoordinates,
    BaseVelocity,
    Configuration,
    Point,
    QuaternionOrder,
)
from bridge.conventions.native_state import check_model_and_state, from_native_state, to_native_state
from bridge.conventions.native_wide import native_width
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
    """Where each neutral DOF joint lives in Drake's q and v for ``to_drake(model)``.

    ``perm`` (n_joints,): the DOF joints in Drake's velocity order (``v[nb:]`` holds joint
    ``perm[0]``'s velocities, then ``perm[1]``'s, ...; ``v[nb:] = s_dot[perm]`` when every joint has
    one coordinate; nb = 6 or 0); ``idx_q``/``idx_v`` (n_joints,): where each DOF joint's positions
    and velocities start in q and v (its only index for a one-coordinate joint); ``nq``, ``nv`` the
    sizes.
    """

    perm: np.ndarray
    idx_q: np.ndarray
    idx_v: np.ndarray
    nq: int
    nv: int
    floating: bool


_LAYOUTS = ModelCache()


def drake_layout(model: Model, plant: object = None) -> DrakeLayout:
    """The q/v layout of ``to_drake(model)`` (read from ``plant`` if given, else from a plant built
    once; cached per model)."""
    kept = _LAYOUTS.of(model)
    if "layout" in kept:
        return kept["layout"]
    require_uncoupled(model, "Drake's q and v")
    from .model import instance_name, to_drake

    if plant is None:  # (the layout: the plant of the model without the armature Drake cannot hold)
        plant = to_drake(_without_wide_armature(model))
    nb_q, nb_v = (7, 6) if model.floating else (0, 0)
    if model.floating:
        root = _floating_joint(plant, model)
        if root.position_start() != 0 or root.velocity_start() != 0:
            raise BackendError(
                "Drake placed the floating base's coordinates after the joints"
            )  # pragma: no cover
    instance = plant.GetModelInstanceByName(instance_name(model))
    joints = [plant.GetJointByName(d, instance) for d in model.dof_names]
    kinds = model.coordinates.kinds
    idx_q = np.array([j.position_start() for j in joints], dtype=np.intp)
    idx_v = np.array([j.velocity_start() for j in joints], dtype=np.intp)
    perm = np.argsort(idx_v).astype(np.intp)
    _check_widths(joints, kinds, idx_q, idx_v, perm, (nb_q, nb_v))
    for a in (perm, idx_q, idx_v):
        a.setflags(write=False)
    nq = nb_q + sum(native_width(k, DRAKE.configuration) for k in kinds)
    lay = DrakeLayout(perm, idx_q, idx_v, nq, nb_v + model.n_dofs, model.floating)
    return kept.setdefault("layout", lay)


def _without_wide_armature(model: Model) -> Model:
    """``model`` with no armature on its ball, free and planar joints (``to_drake`` refuses one:
    Drake's rotor inertia is single-DOF actuators'), which changes nothing in q and v's layout."""
    if not any(j.kind.wide and j.armature for j in model.joints):
        return model
    joints = tuple(replace(j, armature=0.0) if j.kind.wide else j for j in model.joints)
    return model.replace(joints=joints)


def _check_widths(
    joints: list, kinds: tuple, idx_q: np.ndarray, idx_v: np.ndarray, perm: np.ndarray, base: tuple
) -> None:
    """A BackendError unless Drake's joints have the widths :data:`DRAKE` declares and follow each
    other in q and v in the same order, after the base (internal consistency)."""
    q_at, v_at = base
    for k in perm.tolist():
        j, kind = joints[k], kinds[k]
        width = native_width(kind, DRAKE.configuration)
        widths = (j.num_positions(), j.num_velocities())
        if widths != (width, kind.nv) or (idx_q[k], idx_v[k]) != (q_at, v_at):
            raise BackendError(  # pragma: no cover - internal consistency
                f"Drake's joint {j.name()!r} ({j.type_name()}) does not have the coordinates bridge's "
                f"{kind.value} joint declares for Drake (q {width} at {q_at}, v {kind.nv} at {v_at})"
            )
        q_at, v_at = q_at + width, v_at + kind.nv


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
    """``perm`` over the DOF joints in Drake's velocity order (``v_drake_joints = s_dot[perm]`` when
    every joint has one coordinate)."""
    return drake_layout(model).perm


#: Drake's generalized velocity: MIXED base velocity angular first (also each free joint's relative to
#: its frame F; a ball joint's angular velocity in F, its rotation as roll-pitch-yaw), joints in
#: Drake's order
DRAKE = Convention(
    "drake",
    BaseVelocity(Point.BASE_ORIGIN, Axes.WORLD, Axes.WORLD, Ordering.ANGULAR_FIRST),
    joint_order=drake_dof_permutation,
    configuration=Configuration(QuaternionOrder.WXYZ, quaternion_first=True, ball=BallCoordinates.RPY),
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
