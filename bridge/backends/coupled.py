"""Any engine on a model with coupled mimic joints: the full model's answers projected on the masters.

The wrapped engine computes the full model (every mimic joint a DOF) at the expanded state
``s_full = G s + o``, ``nu_full = G_nu nu`` (see :mod:`bridge.model.mimic`); this wrapper returns

* ``M = G_nu^T M_full G_nu``, ``h = G_nu^T h_full``, ``g = G_nu^T g_full`` (``G`` is constant, so the
  bias term has no ``G_dot`` part);
* ``tau = G_nu^T ID_full(G_nu nu_dot, f)``;
* ``nu_dot = M^-1 (tau - G_nu^T ID_full(0, f))`` (``ID_full(0, f) = h_full - J^T f``);
* Jacobians ``J_full G_nu``; frame poses, velocities, bias accelerations, the centre of mass and
  momenta unchanged (they depend on the expanded state only).

Every derived quantity is native here: the wrapped engine's (its own or the generic one, looked up
once by :func:`bridge.backends.protocol.derived`), projected.

No engine is edited: :class:`bridge.KinDyn` wraps whichever engine it builds when the model is a
:class:`~bridge.model.mimic.CoupledModel`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.protocol import DERIVED_QUANTITIES, derived
from bridge.conventions.state import Representation, State
from bridge.model.mimic import CoupledModel

__all__ = ["CoupledEngine"]


class CoupledEngine(EngineBase):
    """Wraps an engine built on ``model.full``; answers in ``model``'s independent DOFs."""

    #: every derived quantity: the wrapped engine's, projected
    NATIVE_QUANTITIES = frozenset(DERIVED_QUANTITIES)

    def __init__(self, engine_class: type, model: CoupledModel, representation: Representation) -> None:
        super().__init__(model, representation)
        self._inner = engine_class(model.full, representation)
        self._derived = {name: derived(self._inner, name) for name in DERIVED_QUANTITIES}
        self.name = getattr(self._inner, "name", "coupled")
        self.precision = getattr(self._inner, "precision", "float64")
        nb = 6 if model.floating else 0
        self._G = model.G_nu if model.floating else model.G  # engine vectors: (6 +) n entries
        self._Gs = model.G
        self._nb = nb

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        full = State(
            state.world_H_base,
            self.model.full_positions(state.s),
            state.base_velocity,
            self.model.full_velocities(state.s_dot),
            state.representation,
        )
        self._inner.set_state(full, gravity)
        self._state = state

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._inner.batch_shape

    # ------------------------------------------------------------------ projections
    def _down(self, x: np.ndarray) -> np.ndarray:
        """``G^T x`` on the last axis (generalized forces)."""
        return np.einsum("ji,...j->...i", self._G, x)

    def _up(self, x: np.ndarray) -> np.ndarray:
        """``G x`` on the last axis (generalized velocities and accelerations)."""
        return np.einsum("ij,...j->...i", self._G, np.asarray(x, dtype=np.float64))

    def _right(self, J: np.ndarray) -> np.ndarray:
        """``J G`` (Jacobians)."""
        return np.asarray(J) @ self._G

    def mass_matrix(self) -> np.ndarray:
        return self._G.T @ np.asarray(self._inner.mass_matrix()) @ self._G

    def bias_forces(self) -> np.ndarray:
        return self._down(self._inner.bias_forces())

    def gravity_forces(self) -> np.ndarray:
        return self._down(self._inner.gravity_forces())

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        return self._down(self._inner.inverse_dynamics(self._up(nu_dot), wrenches))

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        M = self.mass_matrix()
        n_full = self._G.shape[0]
        zero = np.zeros((*np.shape(M)[:-2], n_full))
        b = self._down(self._inner.inverse_dynamics(zero, wrenches))  # G^T (h - J^T f)
        rhs = np.asarray(tau, dtype=np.float64) - b
        return np.linalg.solve(M, rhs[..., None])[..., 0]

    def frame_transform(self, frame: str) -> np.ndarray:
        return self._inner.frame_transform(frame)

    def frame_velocity(self, frame: str) -> np.ndarray:
        return self._inner.frame_velocity(frame)

    def frame_jacobian(self, frame: str) -> np.ndarray:
        return self._right(self._inner.frame_jacobian(frame))

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        return self._inner.frame_bias_acc(frame)

    def frame_jacobian_derivative(self, frame: str) -> np.ndarray:
        """``J_dot_full G_nu`` (G constant)."""
        return self._right(self._derived["frame_jacobian_derivative"](frame))

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        return self._inner.frame_acceleration(frame, self._up(nu_dot))

    def com_position(self) -> np.ndarray:
        return self._inner.com_position()

    def com_velocity(self) -> np.ndarray:
        return self._inner.com_velocity()

    def com_jacobian(self) -> np.ndarray:
        return self._right(self._inner.com_jacobian())

    def centroidal_momentum(self) -> np.ndarray:
        return self._inner.centroidal_momentum()

    # ------------------------------------------------------------------ derived quantities
    def total_momentum(self) -> np.ndarray:
        """The inner engine's (the expanded state moves the same bodies)."""
        return self._derived["total_momentum"]()

    def centroidal_momentum_matrix(self) -> np.ndarray:
        return self._right(self._derived["centroidal_momentum_matrix"]())

    def total_momentum_jacobian(self) -> np.ndarray:
        return self._right(self._derived["total_momentum_jacobian"]())

    def coriolis_matrix(self) -> np.ndarray:
        """``G^T C_full G``: G is constant, so no ``M_full G_dot`` term."""
        return self._G.T @ np.asarray(self._derived["coriolis_matrix"]()) @ self._G

    def coriolis_forces(self) -> np.ndarray:
        return self._down(self._derived["coriolis_forces"]())

    def relative_transform(self, frame: str, reference: str) -> np.ndarray:
        return self._derived["relative_transform"](frame, reference)

    def relative_jacobian(self, frame: str, reference: str) -> np.ndarray:
        """The joint columns ``J_full G_s`` (G_s the coupling of the joint velocities alone)."""
        return np.asarray(self._derived["relative_jacobian"](frame, reference)) @ self._Gs
