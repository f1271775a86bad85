"""Neutral states to and from MuJoCo, and MuJoCo's generalized-velocity convention.

For a floating base (a free joint on the root body) MuJoCo's configuration and velocity are

* ``qpos = [A_o_B; qw, qx, qy, qz; joints]``: the base origin in world and the unit quaternion
  (w first) of ``A_R_B``;
* ``qvel = [A_o_B_dot; B_omega_A,B; joints]``: the base origin's velocity in **world** axes and the
  base angular velocity in **body** axes. That is neither BODY (linear part in body axes) nor MIXED
  (angular part in world axes);
* ``qacc = d/dt qvel``.

With ``R = A_R_B`` and the BODY base velocity ``v_B = (v, omega)`` (``v = R^T A_o_B_dot``), MuJoCo's
base velocity is ``L v_B`` with ``L = blkdiag(R, 1)``: a state-dependent map, given to
:class:`~bridge.conventions.change_of_variables.Convention` as :func:`mujoco_base_maps` with its exact time
derivatives ``L_dot = blkdiag(R skew(omega), 0)`` and ``d/dt L^-1 = blkdiag(-skew(omega) R^T, 0)``.
Hence, from MuJoCo to MIXED: ``T = blkdiag(1, R)``, ``T_dot nu = 0``; to BODY:
``T = blkdiag(R^T, 1)``, ``T_dot nu = (-omega x R^T p_dot, 0)`` (docs/conventions.md, MuJoCo column).

Joints follow in MuJoCo's DOF order, which is body order: depth first from the root, the order
:func:`bridge.to_mujoco` creates the bodies in (:func:`mujoco_dof_permutation`). Hinge and slide
positions are the neutral joint positions (a continuous joint is its angle, no (cos, sin) pair).
A fixed base has no free joint: ``qpos`` and ``qvel`` are the joints only.

The same declaration is every free joint's, relative to its joint frame F (the world for a scene's
free bodies): ``qpos = [p; quaternion w, x, y, z]``, ``qvel = [p_dot in F's axes; omega in the
child's axes]``, whether MuJoCo's free joint or the three slides and a ball :func:`bridge.to_mujoco`
writes below the root; a ball joint's ``qpos`` is its quaternion (w, x, y, z) and its ``qvel`` the
angular velocity in the child's axes; a planar joint (two slides and a hinge) has ``(x, y, theta)``
and ``(x_dot, y_dot, theta_dot)`` in F's axes (:mod:`bridge.conventions.joint_blocks`). Each such
joint is one neutral joint of the order, its ``nv`` (``nq``) entries together.
"""

from __future__ import annotations

import numpy as np

from bridge._cache import per_model
from bridge.conventions.change_of_variables import BaseMaps, Convention
from bridge.conventions.declaration import Axes, BaseVelocity, Configuration, Point, QuaternionOrder
from bridge.conventions.native_state import from_native_state, to_native_state
from bridge.conventions.state import State
from bridge.model.mimic import require_uncoupled
from bridge.model.model import Model
from bridge.spatial import Transform

__all__ = [
    "MUJOCO",
    "from_mujoco_state",
    "mujoco_base_maps",
    "mujoco_dof_permutation",
    "to_mujoco_state",
]


@per_model
def mujoco_dof_permutation(model: Model) -> np.ndarray:
    """``perm`` (n_joints,) over the DOF joints, ``native_joints[i] = model_joints[perm[i]]`` (with
    one-coordinate joints, ``qvel_joints = s_dot[perm]``): the movable joints in MuJoCo's body order
    (depth first from the base, as :func:`bridge.to_mujoco` builds the bodies, a scene's bodies on the
    world body in the same order; computed once per model). A planar, ball or free joint is one entry
    (its MuJoCo joints are consecutive in one body)."""
    require_uncoupled(model, "MuJoCo's qpos and qvel")
    index = {d: i for i, d in enumerate(model.dof_names)}
    perm = np.array([index[j.name] for j in model.depth_first_joints if j.movable], dtype=np.intp)
    perm.setflags(write=False)
    return perm


def mujoco_base_maps(world_H_base: Transform, v_body: np.ndarray) -> BaseMaps:
    """MuJoCo's free-joint velocity relative to BODY: ``(L, L_dot, L_inv, L_inv_dot)``, each
    (..., 6, 6), with ``qvel_base = L v_B`` (``L = blkdiag(A_R_B, 1)``), derived from
    :data:`MUJOCO`'s declaration."""
    return MUJOCO.maps(world_H_base, v_body)


#: MuJoCo's generalized velocity: ``[p_dot in world; omega in body]`` for a free base, joints in
#: body (depth-first) order; ``qpos = [A_o_B; qw, qx, qy, qz; joints]``
MUJOCO = Convention(
    "mujoco",
    BaseVelocity(Point.BASE_ORIGIN, linear_axes=Axes.WORLD, angular_axes=Axes.BODY),
    joint_order=mujoco_dof_permutation,
    configuration=Configuration(QuaternionOrder.WXYZ),
)


def to_mujoco_state(model: Model, state: State) -> tuple[np.ndarray, np.ndarray]:
    """Neutral state -> MuJoCo ``(qpos, qvel)`` of ``to_mujoco(model)``, batched (..., nq), (..., nv).

    Floating base: ``qpos = [A_o_B; quaternion (w, x, y, z) of A_R_B; joints]`` (nq = 7 + n),
    ``qvel = [A_o_B_dot (world); omega (body); joints]`` (nv = 6 + n), joints in MuJoCo's body order,
    each joint's entries as the module docstring says. Fixed base: the joints only (the base pose is
    the base body's placement in the MuJoCo model; a scene's MuJoCo free joints are relative to the
    world, which is the base as ``to_mujoco`` places it, at the identity).
    """
    return to_native_state(model, state, MUJOCO)


def from_mujoco_state(model: Model, qpos: object, qvel: object, representation: object = "mixed") -> State:
    """MuJoCo ``(qpos, qvel)`` of ``to_mujoco(model)`` (or of the MjModel ``model`` was read from)
    -> neutral :class:`State` in ``representation``, batched. The quaternion need not be unit norm
    (MuJoCo normalizes it too); a zero quaternion raises :class:`bridge.StateError`."""
    names = ("qpos", "qvel")
    return from_native_state(model, qpos, qvel, MUJOCO, representation, names=names, normalize=True)
