"""iDynTree's ``KinDynComputations`` on a neutral model: set-up, states and joint-space queries.

iDynTree works in the neutral semantics already (the base velocity and every quantity in the chosen
representation, accelerations as derivatives of velocities in that representation, the model's DOF
order because :func:`~.model.to_idyntree` serializes the DOFs in ``model.dof_names`` order), so its
convention needs no change of variables. These helpers work on any ``KinDynComputations`` (the
engine's or a user's own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bridge._array import as_float_array
from bridge.conventions.state import DEFAULT_GRAVITY, Representation
from bridge.errors import BackendError, ShapeError
from bridge.model.model import Model
from bridge.spatial import Transform

from .model import _idyn, to_idyntree

if TYPE_CHECKING:  # pragma: no cover
    import idyntree.bindings as idyn_t

__all__ = [
    "bias_forces",
    "generalized_forces",
    "gravity_forces",
    "idyntree_representation",
    "kindyn",
    "mass_matrix",
    "set_idyntree_state",
    "set_robot_state",
    "to_numpy",
]


def idyntree_representation(representation: object) -> int:
    """iDynTree's ``FrameVelocityRepresentation`` for ``"body"`` / ``"inertial"`` / ``"mixed"``.

    Also accepts :class:`bridge.Representation`, the iDynTree and Pinocchio names, and iDynTree's own
    enum values. Raises :class:`bridge.InvalidValueError` naming the valid values otherwise.
    """
    idyn = _idyn()
    table = {
        Representation.BODY: idyn.BODY_FIXED_REPRESENTATION,
        Representation.INERTIAL: idyn.INERTIAL_FIXED_REPRESENTATION,
        Representation.MIXED: idyn.MIXED_REPRESENTATION,
    }
    is_int = isinstance(representation, int | np.integer) and not isinstance(representation, bool)
    if is_int and int(representation) in table.values():
        return int(representation)
    return table[Representation.parse(representation)]


def kindyn(model: Model, representation: object = "mixed") -> idyn_t.KinDynComputations:
    """``KinDynComputations`` loaded with ``to_idyntree(model)``.

    The frame velocity representation is ``representation`` (see :func:`idyntree_representation`)
    and the floating base is ``model.base``. For a fixed-base model see the module docstring.
    """
    idyn = _idyn()
    rep = idyntree_representation(representation)
    kd = idyn.KinDynComputations()
    if not kd.loadRobotModel(to_idyntree(model)):
        raise BackendError(f"iDynTree KinDynComputations rejected model {model.name!r}")
    if not kd.setFrameVelocityRepresentation(rep):
        raise BackendError(f"iDynTree rejected frame velocity representation {representation!r}")
    if not kd.setFloatingBase(model.base):
        raise BackendError(f"iDynTree rejected floating base {model.base!r} of model {model.name!r}")
    return kd


def set_idyntree_state(
    kd: idyn_t.KinDynComputations,
    world_H_base: Transform | np.ndarray,
    s: object,
    base_velocity: object,
    s_dot: object,
    gravity: object = DEFAULT_GRAVITY,
) -> None:
    """``kd.setRobotState`` for one state (no batch axes), with shape checks.

    Args:
        world_H_base: pose of the floating base in the world, Transform or (4, 4).
        s: joint positions (n,) in the iDynTree model's DOF order.
        base_velocity: (6,) base velocity (linear first) in ``kd``'s representation.
        s_dot: joint velocities (n,).
        gravity: (3,) gravity acceleration in world coordinates.
    """
    n = int(kd.getNrOfDegreesOfFreedom())
    H = world_H_base.matrix if isinstance(world_H_base, Transform) else world_H_base
    args = {
        "world_H_base": (H, (4, 4)),
        "s": (s, (n,)),
        "base_velocity": (base_velocity, (6,)),
        "s_dot": (s_dot, (n,)),
        "gravity": (gravity, (3,)),
    }
    arrays = []
    for what, (value, shape) in args.items():
        a = as_float_array(value, what, shape)
        if a.shape != shape:
            raise ShapeError(f"{what}: expected shape {shape} (iDynTree takes one state), got {a.shape}")
        arrays.append(a)
    set_robot_state(kd, *arrays)


def set_robot_state(
    kd: idyn_t.KinDynComputations,
    world_H_base: np.ndarray,
    s: np.ndarray,
    base_velocity: np.ndarray,
    s_dot: np.ndarray,
    gravity: np.ndarray,
) -> None:
    """``kd.setRobotState`` for one checked state of float64 arrays ((4, 4), (n,), (6,), (n,),
    (3,)), through iDynTree's own types.

    iDynTree's numpy overloads (those taking a ``MatrixView``: ``setRobotState(H, s, v, s_dot, g)``
    with a (4, 4) array, ``getWorldBaseTransform(out)``, ``getFrameFreeFloatingJacobian(frame,
    out)`` with arrays) are not thread-safe (iDynTree 15.1): called from two threads at once, each
    on its own ``KinDynComputations``, one of them raises ``TypeError: Wrong number or type of
    arguments for overloaded function``. ``Transform``, ``VectorDynSize``, ``Twist`` and
    ``Vector3`` built from the arrays are (and cost a third of the numpy overload's time)."""
    idyn = _idyn()
    H = idyn.Transform()
    H.fromHomogeneousTransform(idyn.Matrix4x4.FromPython(np.ascontiguousarray(world_H_base)))
    ok = kd.setRobotState(
        H,
        idyn.VectorDynSize.FromPython(np.ascontiguousarray(s)),
        idyn.Twist.FromPython(np.ascontiguousarray(base_velocity)),
        idyn.VectorDynSize.FromPython(np.ascontiguousarray(s_dot)),
        idyn.Vector3.FromPython(np.ascontiguousarray(gravity)),
    )
    if not ok:
        raise BackendError("iDynTree rejected the robot state (setRobotState returned false)")


def to_numpy(obj) -> np.ndarray:
    """Copy an iDynTree vector/matrix to numpy while ``obj`` is guaranteed alive.

    Several iDynTree getters return temporaries whose ``toNumPy()`` views their memory: copying
    inside this call (``obj`` is held by the argument) avoids reading freed memory.
    """
    return np.array(obj.toNumPy(), dtype=np.float64, copy=True)


def mass_matrix(kd: idyn_t.KinDynComputations, out: Any = None) -> np.ndarray:
    """Free-floating mass matrix (6+n, 6+n) in ``kd``'s representation and DOF order.

    ``out``: an ``iDynTree.FreeFloatingMassMatrix`` of ``kd.model()`` to reuse (else one is made)."""
    M = _idyn().FreeFloatingMassMatrix(kd.model()) if out is None else out
    if not kd.getFreeFloatingMassMatrix(M):
        raise BackendError("iDynTree getFreeFloatingMassMatrix failed")
    return to_numpy(M)


def generalized_forces(tau: Any) -> np.ndarray:
    """``[base wrench; joint torques]`` (6+n,) of an ``iDynTree.FreeFloatingGeneralizedTorques``."""
    return np.concatenate([to_numpy(tau.baseWrench()), to_numpy(tau.jointTorques())])


def bias_forces(kd: idyn_t.KinDynComputations, out: Any = None) -> np.ndarray:
    """Generalized bias forces ``h = C nu + g`` (6+n,) = [base wrench; joint torques].

    ``out``: an ``iDynTree.FreeFloatingGeneralizedTorques`` to reuse (else one is made)."""
    tau = _idyn().FreeFloatingGeneralizedTorques(kd.model()) if out is None else out
    if not kd.generalizedBiasForces(tau):
        raise BackendError("iDynTree generalizedBiasForces failed")
    return generalized_forces(tau)


def gravity_forces(kd: idyn_t.KinDynComputations, out: Any = None) -> np.ndarray:
    """Generalized gravity forces (6+n,) = [base wrench; joint torques].

    iDynTree (checked on 15.1) converts the base wrench of ``generalizedGravityForces`` with the link
    poses of the *last* forward-kinematics pass without refreshing them: in INERTIAL and MIXED it
    returns a stale base wrench unless kinematics are up to date. A call that refreshes them
    (``getWorldTransform`` of the base) first makes the result exact.
    """
    tau = _idyn().FreeFloatingGeneralizedTorques(kd.model()) if out is None else out
    kd.getWorldTransform(kd.getFloatingBase())
    if not kd.generalizedGravityForces(tau):
        raise BackendError("iDynTree generalizedGravityForces failed")
    return generalized_forces(tau)
