"""A batch of states evaluated by Newton at once: the model replicated into one Newton world per
state (``ModelBuilder.replicate``), each of Newton's functions called once for every world.

A :class:`Worlds` belongs to one engine and is never shared: each state writes its gravity into
its world (``Model.set_gravity``, one vector per world) and, for a fixed base, its base pose into
its world's root joint (``joint_X_p``), so no other engine, KinDyn or state sees them. Newton lays
the copies out world after world: world ``k`` holds bodies ``k nb .. (k + 1) nb - 1``, joints
``k nj ..`` (its root joint, free or fixed, first) and DOFs ``k nv ..``; every per-world result is
a reshape of Newton's arrays (float64 copies of its float32 values).

What is evaluated, each lazily and once per state: forward kinematics (``eval_fk``: ``body_q``,
``body_qd``), the mass matrices (``eval_mass_matrix``), the body Jacobians (``eval_jacobian``), the
gravity and Coriolis forces (``eval_inverse_dynamics_passive``) and, per generalized acceleration,
the body accelerations (:func:`~bridge.backends.newton.accelerations.body_accelerations`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bridge.model.model import Model
from bridge.spatial.so3 import matrix_to_quaternion_wxyz, quaternion_xyzw_to_matrix

from .accelerations import body_accelerations
from .model import finalize, require_newton

__all__ = ["Worlds", "float32"]


def float32(x: np.ndarray) -> np.ndarray:
    """``x`` as a C-contiguous float32 array (values beyond its range become inf, without a numpy
    warning: the facade's result checks then name the overflow)."""
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(x, dtype=np.float32)


def _xforms(H: np.ndarray) -> np.ndarray:
    """(n, 7) Newton transforms (position, quaternion x y z w) of poses (n, 4, 4)."""
    wxyz = matrix_to_quaternion_wxyz(H[:, :3, :3])
    return np.concatenate([H[:, :3, 3], wxyz[:, 1:], wxyz[:, :1]], axis=-1)


class Worlds:
    """``n`` copies of one model in one Newton model, one world each (see the module docstring).

    Args:
        builder: the model's ``newton.ModelBuilder`` (:func:`~.model.newton_builder`; read, never
            changed).
        model: the bridge model (its name for errors, whether its base is fixed).
        n: the number of worlds (states).
    """

    def __init__(self, builder: Any, model: Model, n: int) -> None:
        newton, wp = require_newton()
        self._newton, self._wp = newton, wp
        main = newton.ModelBuilder()
        main.replicate(builder, n)
        self.nm = nm = finalize(main, model)
        self.n, self.nb, self.nj = n, builder.body_count, builder.joint_count
        self.nv = nm.joint_dof_count // n
        self.state = nm.state()
        # a fixed base: each world's root joint (joint 0 of its articulation) carries its base pose
        self._X_p = None if model.floating else nm.joint_X_p.numpy()
        self._roots = np.arange(n) * self.nj
        self.body_q = self.body_qd = np.zeros(0)
        self._M = self._J = self._passive = None

    def set(self, q: np.ndarray, qd: np.ndarray, gravity: np.ndarray, H: np.ndarray) -> None:
        """One state per world: Newton's ``joint_q`` (n, nq), ``joint_qd`` (n, nv), gravity (n, 3)
        in world coordinates, and the base poses (n, 4, 4) (the root joints' frames of a fixed base),
        then forward kinematics."""
        nm, state = self.nm, self.state
        nm.set_gravity(float32(gravity))
        if self._X_p is not None:
            X_p = self._X_p.copy()
            X_p[self._roots] = float32(_xforms(H))
            nm.joint_X_p.assign(X_p)
        state.joint_q.assign(float32(q).reshape(-1))
        state.joint_qd.assign(float32(qd).reshape(-1))
        self._newton.eval_fk(nm, state.joint_q, state.joint_qd, state)
        self.body_q = state.body_q.numpy().astype(float).reshape(self.n, self.nb, 7)
        self.body_qd = state.body_qd.numpy().astype(float).reshape(self.n, self.nb, 6)
        self._M = self._J = self._passive = None

    def poses(self) -> np.ndarray:
        """(n, nb, 4, 4): every body's ``world_H_body`` from ``body_q`` (unchecked: non-finite
        values of an overflowing state stay in the results, which KinDyn checks and names)."""
        q = self.body_q
        H = np.zeros((self.n, self.nb, 4, 4))
        with np.errstate(all="ignore"):
            quat = q[..., 3:7] / np.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
            H[..., :3, :3] = quaternion_xyzw_to_matrix(quat)
        H[..., :3, 3] = q[..., :3]
        H[..., 3, 3] = 1.0
        return H

    @property
    def M(self) -> np.ndarray:
        """(n, nv, nv): Newton's mass matrices (armature included)."""
        if self._M is None:
            M = self._newton.eval_mass_matrix(self.nm, self.state).numpy()
            self._M = M[:, : self.nv, : self.nv].astype(float)
        return self._M

    @property
    def J(self) -> np.ndarray:
        """(n, nb, 6, nv): each body's COM twist per unit ``joint_qd`` (body order, world axes)."""
        if self._J is None:
            J = self._newton.eval_jacobian(self.nm, self.state).numpy()
            # row block k of an articulation is the child body of its joint k: body k (body_order)
            self._J = J[:, : 6 * self.nj, : self.nv].astype(float).reshape(self.n, self.nj, 6, self.nv)
        return self._J

    @property
    def passive(self) -> tuple[np.ndarray, np.ndarray]:
        """``(g, C qd)``, (n, nv) each: Newton's gravity and Coriolis forces."""
        if self._passive is None:
            wp, count = self._wp, self.nm.joint_dof_count
            g, c = wp.zeros(count, dtype=wp.float32), wp.zeros(count, dtype=wp.float32)
            self._newton.eval_inverse_dynamics_passive(self.nm, self.state, gravity_force=g, coriolis_force=c)
            shape = (self.n, self.nv)
            self._passive = (g.numpy().astype(float).reshape(shape), c.numpy().astype(float).reshape(shape))
        return self._passive

    def accelerations(self, qdd_internal: np.ndarray) -> np.ndarray:
        """(n, nb, 6): every body's INERTIAL acceleration for the internal joint accelerations
        (n, nv) (:data:`~bridge.backends.newton.accelerations.NEWTON_INTERNAL`)."""
        a = body_accelerations(self._wp, self.nm, self.state, float32(qdd_internal).reshape(-1))
        return a.reshape(self.n, self.nb, 6)
