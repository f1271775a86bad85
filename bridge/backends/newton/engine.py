"""Engine "newton": Newton (NVIDIA Warp, CPU, float32) behind :class:`bridge.KinDyn`.

What Newton computes on ``to_newton(model)``, in its own convention
(:data:`~bridge.backends.newton.state.NEWTON`: base COM velocity and angular velocity in world
axes, joints depth first), each converted to the user's
representation at the boundary by one change of variables derived from the declaration:

* forward kinematics and body twists (``eval_fk``): link and frame poses, frame velocities (the
  per-body twist at the link's COM mapped through :mod:`bridge.backends.newton.bodies`);
* frame Jacobians (``eval_jacobian``: per-body twists at the COM, rows mapped like the velocities,
  columns with ``jacobian_back``);
* the mass matrix (``eval_mass_matrix``, armature included), gravity and Coriolis forces
  (``eval_inverse_dynamics_passive``), so bias forces and inverse dynamics
  (``M a + C nu + g`` in Newton's coordinates);
* forward dynamics: one step of Newton's Featherstone solver (contacts none, damping, limit and
  target stiffness zero): ``(joint_qd(dt) - joint_qd) / dt``, which is Newton's acceleration in its
  own coordinates (the solver's semi-implicit step is linear in dt in them; checked in
  tests/backends/test_newton.py).

The centre of mass, its velocity and Jacobian and the centroidal momentum are sums over Newton's
body states (its twists are at the bodies' COMs already). Frame accelerations (and bias
accelerations, the acceleration at ``nu_dot = 0``) are the body accelerations of Newton's
Featherstone forward pass (:mod:`bridge.backends.newton.accelerations`: INERTIAL, mapped to the
frame and representation by :func:`bridge.conventions.frames.frame_acceleration`); the derived
quantities are the generic constructions. Every quantity is Newton's: nothing is delegated to
another engine. Newton computes in float32:
results agree with float64 engines to about 1e-5 relative (:data:`RTOL`). A batch of states is
evaluated state by state.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.newton.accelerations import NEWTON_INTERNAL, body_accelerations
from bridge.backends.newton.bodies import body_poses
from bridge.backends.newton.model import body_order, require_newton, to_newton, xform
from bridge.backends.newton.state import NEWTON
from bridge.conventions.convert import velocity_change
from bridge.conventions.frames import frame_acceleration, frame_jacobian, frame_motion
from bridge.conventions.native_state import to_native_state
from bridge.conventions.state import Representation, State
from bridge.model.model import Model
from bridge.spatial import Transform

__all__ = ["RTOL", "NewtonEngine"]

#: the relative tolerance of Newton's float32 results against float64 engines
RTOL = 1e-4
#: the time step of the forward-dynamics step
_DT = 1e-2

_MODELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _newton_model(model: Model) -> Any:
    """``to_newton(model)``, built once per bridge model."""
    built = _MODELS.get(model)
    if built is None:
        built = _MODELS[model] = to_newton(model)
    return built


def _float32(x: np.ndarray) -> np.ndarray:
    """``x`` as float32 (values beyond its range become inf, without a numpy warning: the facade's
    result checks then name the overflow)."""
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float32)


class _Sample:
    """Newton's quantities at one state (float64 copies of its float32 arrays), computed lazily."""

    def __init__(
        self, engine: NewtonEngine, q: np.ndarray, qd: np.ndarray, gravity: np.ndarray, H: np.ndarray
    ) -> None:
        self.e, self.q, self.qd, self.g = engine, _float32(q), _float32(qd), gravity
        nm, wp = engine._nm, engine._wp
        self._root = None if engine.model.floating else xform(wp, H)
        self._place()
        self.state = nm.state()
        self.state.joint_q.assign(self.q)
        self.state.joint_qd.assign(self.qd)
        engine._newton.eval_fk(nm, self.state.joint_q, self.state.joint_qd, self.state)
        self.body_q = self.state.body_q.numpy().astype(float)
        self.body_qd = self.state.body_qd.numpy().astype(float)
        self._M = self._J = self._passive = None
        self._wp = wp

    def _place(self) -> None:
        """Newton's model at this state: its gravity, a fixed base's pose (the root joint's frame)."""
        nm = self.e._nm
        nm.gravity.assign(np.asarray(self.g, dtype=np.float32).reshape(1, 3))
        if self._root is not None:
            X_p = nm.joint_X_p.numpy()
            X_p[0] = np.asarray(self._root, dtype=np.float32)
            nm.joint_X_p.assign(X_p)

    @property
    def M(self) -> np.ndarray:
        if self._M is None:
            nv = self.e._nm.joint_dof_count
            M = self.e._newton.eval_mass_matrix(self.e._nm, self.state).numpy()
            self._M = M[0, :nv, :nv].astype(float)
        return self._M

    @property
    def J(self) -> np.ndarray:
        """(n_links, 6, nv): each body's COM twist per unit joint_qd (body order)."""
        if self._J is None:
            nm = self.e._nm
            nv = nm.joint_dof_count
            J = self.e._newton.eval_jacobian(nm, self.state).numpy()[0].astype(float)
            # row block k is the child body of the articulation's joint k: body k (body_order)
            self._J = J[: 6 * nm.joint_count, :nv].reshape(nm.joint_count, 6, nv)
        return self._J

    @property
    def passive(self) -> tuple[np.ndarray, np.ndarray]:
        """``(g, C qd)`` (nv,) each."""
        if self._passive is None:
            nm, wp = self.e._nm, self._wp
            g = wp.zeros(nm.joint_dof_count, dtype=wp.float32)
            c = wp.zeros(nm.joint_dof_count, dtype=wp.float32)
            self.e._newton.eval_inverse_dynamics_passive(nm, self.state, gravity_force=g, coriolis_force=c)
            self._passive = (g.numpy().astype(float), c.numpy().astype(float))
        return self._passive

    def accelerations(self, qdd_internal: np.ndarray) -> np.ndarray:
        """(n_links, 6): every body's INERTIAL acceleration for the internal joint accelerations."""
        self._place()
        return body_accelerations(self._wp, self.e._nm, self.state, qdd_internal)

    def step(self, tau: np.ndarray) -> np.ndarray:
        """Newton's acceleration (nv,) under the generalized force ``tau`` (Newton's coordinates)."""
        e = self.e
        nm = e._nm
        self._place()
        out = nm.state()
        control = nm.control()
        control.joint_f.assign(_float32(tau))
        e._solver().step(self.state, out, control, None, _DT)
        return (out.joint_qd.numpy().astype(float) - self.qd.astype(float)) / _DT


class NewtonEngine(EngineBase):
    """Newton's dynamics in the user's representation (see the module docstring)."""

    name = "newton"

    def __init__(self, model: Model, representation: object = "mixed") -> None:
        self.model = model
        self.representation = Representation.parse(representation)
        self._newton, self._wp = require_newton()
        self._nm = _newton_model(model)
        self._convention = NEWTON.bound(self.model)
        self._index = {name: i for i, name in enumerate(body_order(self.model))}
        links = [model.link(name).inertia for name in body_order(model)]
        self._mass = np.array([float(i.mass) for i in links])
        self._com = np.array([np.asarray(i.com, dtype=float) for i in links])
        self._inertia = np.array([np.asarray(i.inertia_com, dtype=float) for i in links])
        self._total = float(self._mass.sum())
        self._fs_solver = None
        self._internal = NEWTON_INTERNAL.bound(model)
        self.batch_shape: tuple[int, ...] = ()

    def _solver(self) -> Any:
        if self._fs_solver is None:
            self._fs_solver = self._newton.solvers.SolverFeatherstone(self._nm, angular_damping=0.0)
        return self._fs_solver

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        self._state, self._single_args = state, None
        self.batch_shape = np.broadcast_shapes(
            state.world_H_base.batch_shape, state.s.shape[:-1], state.base_velocity.shape[:-1],
            state.s_dot.shape[:-1], np.shape(gravity)[:-1],
        )
        self._cov = velocity_change(self.model, state, self.representation, self._convention)
        self._cov_internal = velocity_change(self.model, state, self.representation, self._internal)
        q, qd = to_native_state(self.model, state, self._convention)
        shape = self.batch_shape
        g = np.broadcast_to(np.asarray(gravity, dtype=float), (*shape, 3))
        q, qd = np.broadcast_to(q, (*shape, q.shape[-1])), np.broadcast_to(qd, (*shape, qd.shape[-1]))
        H = np.broadcast_to(state.world_H_base.matrix, (*shape, 4, 4))
        self._samples = [(i, _Sample(self, q[i], qd[i], g[i], H[i])) for i in np.ndindex(*shape)]

    def _stack(self, f) -> np.ndarray:
        """``f(sample)`` over the batch, stacked with the batch axes in front."""
        values = [f(s) for _, s in self._samples]
        return np.stack(values).reshape(*self.batch_shape, *values[0].shape)

    # ------------------------------------------------------------------ joint space
    def mass_matrix(self) -> np.ndarray:
        return self._cov.matrix_back(self._stack(lambda s: s.M))

    def gravity_forces(self) -> np.ndarray:
        return self._cov.force_back(self._stack(lambda s: s.passive[0]))

    def bias_forces(self) -> np.ndarray:
        # zero acceleration in the user's representation is T_dot nu in Newton's coordinates
        a = self._cov.bias_acceleration
        return self._cov.force_back(self._newton_id(a))

    def _newton_id(self, a_newton: np.ndarray) -> np.ndarray:
        """``M a + C qd + g`` in Newton's coordinates (..., nv)."""
        a = np.broadcast_to(a_newton, (*self.batch_shape, self.model.nv))
        return np.stack(
            [s.M @ a[i] + s.passive[1] + s.passive[0] for i, s in self._samples]
        ).reshape(*self.batch_shape, self.model.nv)

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
        tau_n = self._cov.force(tau + self._wrench_forces(wrenches))
        tau_n = np.broadcast_to(tau_n, (*self.batch_shape, self.model.nv))
        a = np.stack([s.step(tau_n[i]) for i, s in self._samples]).reshape(*self.batch_shape, self.model.nv)
        return self._cov.acceleration_back(a)

    # ------------------------------------------------------------------ frames
    def _link_of(self, frame: str) -> tuple[str, np.ndarray]:
        link, link_H_frame = self.model.frame_placement(frame)
        return link, link_H_frame.matrix

    def _poses(self, link: str) -> np.ndarray:
        return self._stack(lambda s: body_poses(self.model, s.body_q)[link])

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
        twist = self._stack(lambda s: s.body_qd[self._index[link]])
        return frame_motion(H, twist, decl, self.representation)

    def frame_jacobian(self, frame: str) -> np.ndarray:
        link = self._link_of(frame)[0]
        H, decl = self._frame_twist(frame)
        J = self._stack(lambda s: s.J[self._index[link]])
        return self._cov.jacobian_back(frame_jacobian(H, J, decl, self.representation))

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        """(..., 6): ``J nu_dot + J_dot nu`` from Newton's body acceleration of the frame's link
        (INERTIAL: the same for every frame on the link), in the representation."""
        link = self._link_of(frame)[0]
        i = self._index[link]
        qdd = self._cov_internal.acceleration(np.asarray(nu_dot, dtype=float))
        qdd = np.broadcast_to(qdd, (*self.batch_shape, self.model.nv))
        a = np.stack([s.accelerations(qdd[k])[i] for k, s in self._samples]).reshape(*self.batch_shape, 6)
        H = self.frame_transform(frame)
        v = frame_motion(H, self.frame_velocity(frame), self.representation, "inertial")
        return frame_acceleration(H, v, a, "inertial", self.representation)

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        """(..., 6): ``J_dot nu``, the frame acceleration at ``nu_dot = 0`` (representation's)."""
        return self.frame_acceleration(frame, np.zeros(self.model.nv))

    # ------------------------------------------------------------------ centre of mass, from the body states
    def _bodies(self, s: _Sample) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(R (nb, 3, 3), c (nb, 3), v (nb, 3))``: each body's rotation, COM and COM velocity in
        world coordinates (Newton's body_q and body_qd: its twist is at the COM already)."""
        q = s.body_q
        quat = q[:, 3:7] / np.linalg.norm(q[:, 3:7], axis=-1, keepdims=True)
        H = Transform.from_quaternion_xyzw(quat, q[:, :3])
        R = H.matrix[:, :3, :3]
        return R, q[:, :3] + np.einsum("bij,bj->bi", R, self._com), s.body_qd[:, :3]

    def com_position(self) -> np.ndarray:
        return self._stack(lambda s: self._mass @ self._bodies(s)[1] / self._total)

    def com_velocity(self) -> np.ndarray:
        return self._stack(lambda s: self._mass @ s.body_qd[:, :3] / self._total)

    def com_jacobian(self) -> np.ndarray:
        J = self._stack(lambda s: np.einsum("b,bij->ij", self._mass, s.J[:, :3, :]) / self._total)
        return self._cov.jacobian_back(J)

    def centroidal_momentum(self) -> np.ndarray:
        """G[A], linear first: ``sum m v_c`` and ``sum R I_c R^T w + m (c - G) x v_c``."""

        def one(s: _Sample) -> np.ndarray:
            R, c, v = self._bodies(s)
            w = s.body_qd[:, 3:]
            G = self._mass @ c / self._total
            Iw = np.einsum("bij,bjk,blk,bl->bi", R, self._inertia, R, w)
            angular = Iw + self._mass[:, None] * np.cross(c - G, v)
            return np.r_[self._mass @ v, angular.sum(axis=0)]

        return self._stack(one)
