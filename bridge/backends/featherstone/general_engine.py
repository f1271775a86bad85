"""The Featherstone engine for models with joints of any width (planar, ball, free anywhere).

:class:`GeneralEngine` answers the engine protocol from :mod:`.general` (world-coordinate RNEA,
CRBA and ABA over joints of any width). Its own convention is the neutral BODY form of every joint
(and of a floating base) in the model's DOF order, so the user's representation reaches it through
one change of variables (:func:`bridge.conventions.change_of_variables.change_of_variables`, which
carries each joint's block):

* ``M = T^T M_B T``; ``h = T^T ID_B(nu_B, T_dot nu)``; ``tau = T^T ID_B(nu_B, T nu_dot + T_dot nu)``;
  ``nu_dot = T^-1 (ABA_B(nu_B, T^-T tau) - T_dot nu)``;
* frame quantities from the links' world twists, Jacobians (the world motion subspaces on the
  path to the root) and accelerations, moved to the representation at the frame
  (:mod:`bridge.conventions.frames`), the Jacobian's columns through T;
* the centre of mass and the centroidal momentum from the links' world inertias.

:class:`~.engine.FeatherstoneEngine` hands a model with a planar, ball or free joint to this engine
(its compiled, level-ordered kernels take one-coordinate joints only). Here the kinematics, the
inverse dynamics, the mass matrix and the forward dynamics run compiled (numba) kernels of their own
when numba is there (:mod:`.general_compiled`: the kinematics, the RNEA, the CRBA with the change of
variables folded in, the ABA), parallel over the batch, and the numpy algorithms otherwise (the same
numbers to rounding); the frame quantities, the centre of mass and the momenta are numpy.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.batch import FlatBatch
from bridge.conventions.change_of_variables import BODY, NEUTRAL, change_of_variables
from bridge.conventions.declaration import INERTIAL_VELOCITY
from bridge.conventions.frames import frame_acceleration, frame_force, frame_jacobian, frame_motion
from bridge.conventions.state import Representation, State
from bridge.model.model import Model

from . import general, general_compiled

__all__ = ["GeneralEngine"]

#: the declaration of the algorithms' world-coordinate motions (spatial, world axes, linear first)
_WORLD = INERTIAL_VELOCITY


class GeneralEngine(EngineBase):
    """Engine protocol implementation over :mod:`.general` (any joint width, batched; numpy, with
    the compiled kinematics, RNEA, CRBA and ABA of :mod:`.general_compiled` when numba is there)."""

    name = "featherstone"

    def __init__(self, model: Model, representation: Representation) -> None:
        super().__init__(model, representation)
        self.convention = NEUTRAL[self.representation]
        self.tree = general.GeneralTree(model)
        self._frames: dict[str, tuple[int, np.ndarray]] = {}
        for name in model.frame_names:
            link, link_H_frame = model.frame_placement(name)
            self._frames[name] = (self.tree.index[link], link_H_frame.matrix)

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        fb = self._flat = FlatBatch(state, gravity)
        self.batch_shape = fb.batch_shape
        self._state = state
        flat = fb.state(self.representation)
        self._ft = change_of_variables(self.model, flat, self.convention, BODY)
        self._nu = self._ft.nu  # (N, nv) in the representation
        self._nu_B = self._ft.velocity(self._nu)
        self._g = fb.gravity
        kin = general_compiled.kinematics(self.tree, fb.H, fb.s)
        self._kin = general.kinematics(self.tree, fb.H, fb.s) if kin is None else kin
        self._cache: dict[str, object] = {}

    def _get(self, key: str, fn):
        value = self._cache.get(key)
        if value is None:
            value = self._cache[key] = fn()
        return value

    def _v_c(self) -> tuple[list, list]:
        return self._get("v_c", lambda: general.velocities(self.tree, self._kin, self._nu_B))

    def _out(self, x: np.ndarray) -> np.ndarray:
        return self._flat.unflatten(np.asarray(x))

    def _flat_input(self, x: np.ndarray, k: int) -> np.ndarray:
        return self._flat.flat_view(np.asarray(x, dtype=np.float64), k)

    # ------------------------------------------------------------------ joint space
    def mass_matrix(self) -> np.ndarray:
        M = general_compiled.mass_matrix(self.tree, self._kin, self._ft)
        if M is None:
            M = self._ft.matrix_back(general.crba(self.tree, self._kin))
        return self._out(M)

    def _rnea(self, nu_dot_B: np.ndarray | None, fext=None, with_velocity: bool = True) -> np.ndarray:
        nu = self._nu_B if with_velocity else None
        tau = general_compiled.rnea(self.tree, self._kin, nu, nu_dot_B, self._g, fext)
        return general.rnea(self.tree, self._kin, nu, nu_dot_B, self._g, fext) if tau is None else tau

    def bias_forces(self) -> np.ndarray:
        bias = None if self._ft.bias_free else self._ft.bias_acceleration
        return self._out(self._ft.force_back(self._rnea(bias)))

    def gravity_forces(self) -> np.ndarray:
        return self._out(self._ft.force_back(self._rnea(None, with_velocity=False)))

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        nd = self._flat_input(nu_dot, self.model.nv)
        tau = self._rnea(self._ft.acceleration(nd), self._fext(wrenches))
        return self._out(self._ft.force_back(tau))

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        t = self._flat_input(tau, self.model.nv)
        tau_B, fext = self._ft.force(t), self._fext(wrenches)
        nd_B = general_compiled.aba(self.tree, self._kin, self._nu_B, tau_B, self._g, fext)
        if nd_B is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                nd_B = general.aba(self.tree, self._kin, self._nu_B, tau_B, self._g, fext)
        return self._out(self._ft.acceleration_back(nd_B))

    # ------------------------------------------------------------------ frames
    def _pose(self, frame: str) -> tuple[int, np.ndarray]:
        i, link_H_frame = self._frames[frame]
        return i, self._kin.poses[i] @ link_H_frame

    def frame_transform(self, frame: str) -> np.ndarray:
        return self._out(self._pose(frame)[1])

    def frame_velocity(self, frame: str) -> np.ndarray:
        i, H = self._pose(frame)
        return self._out(frame_motion(H, self._v_c()[0][i], _WORLD, self.representation))

    def _jacobian_world(self, i: int) -> np.ndarray:
        """The world Jacobian (N, 6, nv) of body i (BODY joint velocities)."""
        N = self._kin.poses[0].shape[0]
        J = np.zeros((N, 6, self.model.nv))
        for k in self.tree.support(i):
            b = self.tree.bodies[k]
            if self._kin.S[k].shape[-1]:
                J[:, :, b.v] = self._kin.S[k]
        return J

    def frame_jacobian(self, frame: str) -> np.ndarray:
        i, H = self._pose(frame)
        J = frame_jacobian(H, self._jacobian_world(i), _WORLD, self.representation)
        return self._out(self._ft.jacobian_back(J))

    def _frame_acc(self, frame: str, nu_dot_B: np.ndarray | None) -> np.ndarray:
        i, H = self._pose(frame)
        N = H.shape[0]
        a = general.accelerations(self.tree, self._kin, self._v_c(), nu_dot_B, np.zeros((N, 6)))[i]
        return frame_acceleration(H, self._v_c()[0][i], a, _WORLD, self.representation)

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        bias = None if self._ft.bias_free else self._ft.bias_acceleration
        return self._out(self._frame_acc(frame, bias))

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        nd = self._flat_input(nu_dot, self.model.nv)
        return self._out(self._frame_acc(frame, self._ft.acceleration(nd)))

    def _fext(self, wrenches: Mapping[str, np.ndarray] | None) -> dict[int, np.ndarray] | None:
        """Frame wrenches (in the representation's frame) -> {body: world force (N, 6)}."""
        if not wrenches:
            return None
        out: dict[int, np.ndarray] = {}
        for name, w in wrenches.items():
            i, H = self._pose(name)
            fw = frame_force(H, self._flat_input(w, 6), self.representation, _WORLD)
            out[i] = out[i] + fw if i in out else fw
        return out

    # ------------------------------------------------------------------ centre of mass
    def _momentum_parts(self) -> tuple[np.ndarray, np.ndarray]:
        """(sum of m c (N, 3), total spatial momentum about the world origin (N, 6))."""
        v = self._v_c()[0]
        N = self._kin.poses[0].shape[0]
        mc, p = np.zeros((N, 3)), np.zeros((N, 6))
        for inertia, vi in zip(self._kin.inertias, v, strict=True):
            # [[m 1, -m c^], [m c^, ...]]: m c from the lower-left block
            mcx = inertia[:, 3:, :3]
            mc = mc + np.stack([mcx[:, 2, 1], mcx[:, 0, 2], mcx[:, 1, 0]], axis=-1)
            p = p + np.einsum("nij,nj->ni", inertia, vi)
        return mc, p

    def com_position(self) -> np.ndarray:
        mc, _ = self._momentum_parts()
        return self._out(mc / self.tree.total_mass)

    def com_velocity(self) -> np.ndarray:
        _, p = self._momentum_parts()
        return self._out(p[:, :3] / self.tree.total_mass)

    def centroidal_momentum(self) -> np.ndarray:
        mc, p = self._momentum_parts()
        c = mc / self.tree.total_mass
        return self._out(np.concatenate([p[:, :3], p[:, 3:] - np.cross(c, p[:, :3])], axis=-1))

    def com_jacobian(self) -> np.ndarray:
        """(..., 3, nv): the linear momentum per unit velocity over the total mass."""
        Ic = general.composite(self.tree, self._kin)
        N = self._kin.poses[0].shape[0]
        A = np.zeros((N, 6, self.model.nv))
        for i, b in enumerate(self.tree.bodies):
            if self._kin.S[i].shape[-1]:
                A[:, :, b.v] = Ic[i] @ self._kin.S[i]
        return self._out(self._ft.jacobian_back(A[:, :3] / self.tree.total_mass))
