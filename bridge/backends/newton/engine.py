"""Engine "newton": Newton (NVIDIA Warp, CPU, float32) behind :class:`bridge.KinDyn`.

What Newton computes on the model (``newton_builder(model)``, replicated into one Newton world per
state of the batch: :mod:`bridge.backends.newton.worlds`, every Newton function called once for the
whole batch), in its own convention (:data:`~bridge.backends.newton.state.NEWTON`: base COM velocity
and angular velocity in world axes, joints depth first), each converted to the user's
representation at the boundary by one change of variables derived from the declaration:

* forward kinematics and body twists (``eval_fk``): link and frame poses, frame velocities (the
  per-body twist at the link's COM mapped through :mod:`bridge.backends.newton.bodies`);
* frame Jacobians (``eval_jacobian``: per-body twists at the COM, rows mapped like the velocities,
  columns with ``jacobian_back``);
* the mass matrix (``eval_mass_matrix``, armature included), gravity and Coriolis forces
  (``eval_inverse_dynamics_passive``), so bias forces and inverse dynamics
  (``M a + C nu + g`` in Newton's coordinates);
* forward dynamics: ``M a = tau - C nu - g`` with those (solved in float64), the system Newton's
  Featherstone solver solves in its step (its composite-rigid-body matrix and a Cholesky
  factorization; tests/backends/test_newton.py checks one step of it against this engine). Stepping
  the solver itself costs a quarter of a second per state on the CPU (its dense ``J^T M J``
  product), which ``bridge check`` cannot afford.

The centre of mass, its velocity and Jacobian and the centroidal momentum are sums over Newton's
body states (its twists are at the bodies' COMs already). Frame accelerations (and bias
accelerations, the acceleration at ``nu_dot = 0``) are the body accelerations of Newton's
Featherstone forward pass (:mod:`bridge.backends.newton.accelerations`: INERTIAL, mapped to the
frame and representation by :func:`bridge.conventions.frames.frame_acceleration`); the derived
quantities are the generic constructions. Every quantity is Newton's: nothing is delegated to
another engine.

Newton computes in float32 (:attr:`NewtonEngine.precision`): results agree with float64 engines to
about 1e-5 relative (:data:`RTOL`), and inputs whose products overflow float32 (velocities of 1e20,
positions of 1e39) give non-finite values, which KinDyn checks on every path for this engine and
turns into an InvalidValueError naming the inputs. The Newton model, its gravity and a fixed base's
pose belong to this engine alone (no other KinDyn or state sees them).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.batch import FlatBatch
from bridge.backends.newton.accelerations import NEWTON_INTERNAL
from bridge.backends.newton.model import body_order, newton_builder, require_newton
from bridge.backends.newton.state import NEWTON
from bridge.backends.newton.worlds import Worlds
from bridge.conventions.convert import velocity_change
from bridge.conventions.frames import frame_acceleration, frame_jacobian, frame_motion
from bridge.conventions.native_state import joint_layout, to_native_state
from bridge.conventions.state import State
from bridge.model.model import Model

__all__ = ["RTOL", "NewtonEngine"]

#: the relative tolerance of Newton's float32 results against float64 engines
RTOL = 1e-4
#: batch sizes whose replicated Newton model an engine keeps (the most recently used)
_KEPT = 3


class NewtonEngine(EngineBase):
    """Newton's dynamics in the user's representation (see the module docstring)."""

    name = "newton"
    #: Newton's arithmetic: KinDyn checks every result for overflow (no unchecked hot path)
    precision = "float32"

    def __init__(self, model: Model, representation: object = "mixed") -> None:
        super().__init__(model, representation)
        self._newton, self._wp = require_newton()
        self._builder = newton_builder(model)  # this engine's own (UnsupportedError beyond float32)
        self._worlds: OrderedDict[int, Worlds] = OrderedDict()
        self._convention = NEWTON.bound(self.model)
        self._index = {name: i for i, name in enumerate(body_order(self.model))}
        links = [model.link(name).inertia for name in body_order(model)]
        self._mass = np.array([float(i.mass) for i in links])
        self._com = np.array([np.asarray(i.com, dtype=float) for i in links])
        self._inertia = np.array([np.asarray(i.inertia_com, dtype=float) for i in links])
        self._total = float(self._mass.sum())
        self._internal = NEWTON_INTERNAL.bound(model)
        # joint_q's revolute angles (each joint's first coordinate in Newton's joint_q)
        starts = joint_layout(model, NEWTON).idx_q
        kinds = model.coordinates.kinds
        self._angles = np.array([starts[k] for k, kind in enumerate(kinds) if kind.rotational], dtype=np.intp)
        self._poses_all: np.ndarray | None = None

    def _worlds_for(self, n: int) -> Worlds:
        """This engine's Newton model of ``n`` worlds (built on first use, a few kept)."""
        worlds = self._worlds.get(n)
        if worlds is None:
            worlds = self._worlds[n] = Worlds(self._builder, self.model, n)
            while len(self._worlds) > _KEPT:
                self._worlds.popitem(last=False)
        else:
            self._worlds.move_to_end(n)
        return worlds

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        flat = FlatBatch(state, gravity)
        self._state, self._single_args = state, None
        self.batch_shape = flat.batch_shape
        self._cov = velocity_change(self.model, state, self.representation, self._convention)
        self._cov_internal = velocity_change(self.model, state, self.representation, self._internal)
        q, qd = to_native_state(self.model, state, self._convention)
        n = flat.n
        q = np.array(flat.flatten(q, (q.shape[-1],)))  # (a copy: written below)
        qd = flat.flatten(qd, (qd.shape[-1],))
        # revolute angles to [-pi, pi) in float64 first: float32 spaces 1e4 rad 1e-3 apart
        with np.errstate(invalid="ignore"):
            q[:, self._angles] = np.remainder(q[:, self._angles] + np.pi, 2.0 * np.pi) - np.pi
        self._w = self._worlds_for(n)
        self._w.set(q, qd, flat.gravity, flat.H)
        self._poses_all = None

    def _batch(self, x: np.ndarray) -> np.ndarray:
        """Per-world values (n, ...) with the batch axes in front."""
        return x.reshape(*self.batch_shape, *x.shape[1:])

    def _flat(self, x: np.ndarray, k: int) -> np.ndarray:
        """``x`` (..., k) broadcast to the batch, one row per world (n, k)."""
        return np.broadcast_to(x, (*self.batch_shape, k)).reshape(self._w.n, k)

    # ------------------------------------------------------------------ joint space
    def mass_matrix(self) -> np.ndarray:
        return self._cov.matrix_back(self._batch(self._w.M))

    def gravity_forces(self) -> np.ndarray:
        return self._cov.force_back(self._batch(self._w.passive[0]))

    def bias_forces(self) -> np.ndarray:
        # zero acceleration in the user's representation is T_dot nu in Newton's coordinates
        return self._cov.force_back(self._newton_id(self._cov.bias_acceleration))

    def _newton_id(self, a_newton: np.ndarray) -> np.ndarray:
        """``M a + C qd + g`` in Newton's coordinates (..., nv)."""
        w = self._w
        a = self._flat(a_newton, self.model.nv)
        g, c = w.passive
        return self._batch(np.einsum("kij,kj->ki", w.M, a) + c + g)

    def _wrench_forces(self, wrenches: dict | None) -> np.ndarray | float:
        """``sum_F J_F^T f_F`` (..., nv) in the user's representation."""
        total = 0.0
        for frame, f in (wrenches or {}).items():
            total = total + np.einsum("...ji,...j->...i", self.frame_jacobian(frame), f)
        return total

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: dict | None = None) -> np.ndarray:
        tau = self._cov.force_back(self._newton_id(self._cov.acceleration(nu_dot)))
        return tau - self._wrench_forces(wrenches)

    def forward_dynamics(self, tau: np.ndarray, wrenches: dict | None = None) -> np.ndarray:
        """``M a = tau - C qd - g`` in Newton's coordinates (see the module docstring); a
        LinAlgError when M is singular (KinDyn names the DOFs)."""
        w = self._w
        tau_n = self._flat(self._cov.force(tau + self._wrench_forces(wrenches)), self.model.nv)
        g, c = w.passive
        a = np.linalg.solve(w.M, (tau_n - c - g)[..., None])[..., 0]
        return self._cov.acceleration_back(self._batch(a))

    # ------------------------------------------------------------------ frames
    def _link_of(self, frame: str) -> tuple[str, np.ndarray]:
        link, link_H_frame = self.model.frame_placement(frame)
        return link, link_H_frame.matrix

    def _poses(self, link: str) -> np.ndarray:
        """``world_H_link`` (..., 4, 4) from Newton's ``body_q``."""
        if self._poses_all is None:
            self._poses_all = self._w.poses()  # (n, nb, 4, 4), body order
        return self._batch(self._poses_all[:, self._index[link]])

    def frame_transform(self, frame: str) -> np.ndarray:
        link, link_H_frame = self._link_of(frame)
        return self._poses(link) @ link_H_frame

    def _frame_twist(self, frame: str) -> tuple[np.ndarray, Any]:
        """``(world_H_frame, declaration)``: the frame's pose and Newton's twist of its link seen as
        the frame's velocity at the link's COM (in frame axes)."""
        link, link_H_frame = self._link_of(frame)
        H = self._poses(link) @ link_H_frame
        c_link = self.model.link(link).inertia.com
        c_frame = np.linalg.solve(link_H_frame, np.r_[c_link, 1.0])[:3]
        return H, NEWTON.velocity.bound(c_frame)

    def frame_velocity(self, frame: str) -> np.ndarray:
        link = self._link_of(frame)[0]
        H, decl = self._frame_twist(frame)
        twist = self._batch(self._w.body_qd[:, self._index[link]])
        return frame_motion(H, twist, decl, self.representation)

    def frame_jacobian(self, frame: str) -> np.ndarray:
        link = self._link_of(frame)[0]
        H, decl = self._frame_twist(frame)
        J = self._batch(self._w.J[:, self._index[link]])
        return self._cov.jacobian_back(frame_jacobian(H, J, decl, self.representation))

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        """(..., 6): ``J nu_dot + J_dot nu`` from Newton's body acceleration of the frame's link
        (INERTIAL: the same for every frame on the link), in the representation."""
        link = self._link_of(frame)[0]
        qdd = self._cov_internal.acceleration(np.asarray(nu_dot, dtype=float))
        a = self._batch(self._w.accelerations(self._flat(qdd, self.model.nv))[:, self._index[link]])
        H = self.frame_transform(frame)
        v = frame_motion(H, self.frame_velocity(frame), self.representation, "inertial")
        return frame_acceleration(H, v, a, "inertial", self.representation)

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        """(..., 6): ``J_dot nu``, the frame acceleration at ``nu_dot = 0`` (representation's)."""
        return self.frame_acceleration(frame, np.zeros(self.model.nv))

    # ------------------------------------------------------------------ centre of mass, from the body states
    def _bodies(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(R (n, nb, 3, 3), c (n, nb, 3), v (n, nb, 3))``: each body's rotation, COM and COM
        velocity in world coordinates (Newton's body_q and body_qd: its twist is at the COM already)."""
        if self._poses_all is None:
            self._poses_all = self._w.poses()
        R, o = self._poses_all[..., :3, :3], self._poses_all[..., :3, 3]
        return R, o + np.einsum("kbij,bj->kbi", R, self._com), self._w.body_qd[..., :3]

    def com_position(self) -> np.ndarray:
        return self._batch(self._mass @ self._bodies()[1] / self._total)

    def com_velocity(self) -> np.ndarray:
        return self._batch(self._mass @ self._w.body_qd[..., :3] / self._total)

    def com_jacobian(self) -> np.ndarray:
        J = np.einsum("b,kbij->kij", self._mass, self._w.J[:, :, :3, :]) / self._total
        return self._cov.jacobian_back(self._batch(J))

    def centroidal_momentum(self) -> np.ndarray:
        """G[A], linear first: ``sum m v_c`` and ``sum R I_c R^T w + m (c - G) x v_c``."""
        R, c, v = self._bodies()
        w = self._w.body_qd[..., 3:]
        G = np.einsum("b,kbi->ki", self._mass, c) / self._total
        Iw = np.einsum("kbij,bjl,kbml,kbm->kbi", R, self._inertia, R, w)
        angular = Iw + self._mass[:, None] * np.cross(c - G[:, None, :], v)
        linear = np.einsum("b,kbi->ki", self._mass, v)
        return self._batch(np.concatenate([linear, angular.sum(axis=1)], axis=-1))
