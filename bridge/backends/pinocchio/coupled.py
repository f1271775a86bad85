"""The Pinocchio engine on a coupled model, with Pinocchio's own mimic joints.

``KinDyn(coupled_model, engine="pinocchio")`` builds ``to_pinocchio(coupled_model)``: the mimic
joints are ``JointModelMimic`` joints of their masters (:mod:`.mimic`), Pinocchio's q and v hold the
independent DOFs only, and :data:`~bridge.backends.pinocchio.state.PINOCCHIO` orders those (the
change of variables between a representation and Pinocchio's coordinates has the model's nv). M, h,
g, inverse dynamics, frames, Jacobians, the centre of mass and the centroidal quantities come from
Pinocchio's algorithms on that model, as for any model. Where Pinocchio 4.1 has no mimic support
(its release build computes wrong numbers without a word), this engine does otherwise:

* ``crba`` runs in Pinocchio's WORLD convention: in the default LOCAL one, a second call on the same
  ``Data`` adds the mimic joints' terms again;
* forward dynamics is ``M^-1 (tau - ID(0, f))`` (``aba`` refuses mimic joints);
* the Coriolis matrix is ``G^T C_full G`` from the full model (``computeCoriolisMatrix`` takes no
  mimic joints; :class:`bridge.backends.coupled.CoupledEngine` over a Pinocchio engine of the full model, at
  the same state), and the derivatives are differences of this engine's inverse dynamics (the
  analytical derivative algorithms take no mimic joints either: the engine does not declare the
  ``body_derivatives`` capability, nor the single-state forward dynamics); the frame Jacobians' time
  derivatives and the relative Jacobians also come from the full model, projected (neither
  ``getFrameJacobianTimeVariation`` nor bridge's generic construction takes mimic joints).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.conventions.state import State

from .engine import PinocchioEngine

__all__ = ["PinocchioMimicEngine"]


class PinocchioMimicEngine(PinocchioEngine):
    """:class:`PinocchioEngine` for a :class:`~bridge.model.mimic.CoupledModel` whose mimic joints
    Pinocchio takes (:func:`bridge.backends.pinocchio.mimic.mimic_problem` is None)."""

    #: without Pinocchio's ``aba`` and analytical derivatives (no mimic support in them)
    CAPABILITIES = PinocchioEngine.CAPABILITIES - {"forward_dynamics_single", "body_derivatives"}
    #: Pinocchio's, and the relative Jacobian projected from the full model (below)
    NATIVE_QUANTITIES = PinocchioEngine.NATIVE_QUANTITIES | {"relative_jacobian"}
    _gravity: np.ndarray | None = None
    _projected = None

    def set_state(self, state: State, gravity: np.ndarray) -> None:
        super().set_state(state, gravity)
        self._gravity = gravity

    def set_single_state(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object, gravity: np.ndarray
    ) -> bool:
        done = super().set_single_state(world_H_base, s, base_velocity, s_dot, gravity)
        if done:
            self._gravity = gravity
        return done

    def _crba(self, q: np.ndarray) -> np.ndarray:
        return self._pin.crba(self.pm, self.data, q, self._pin.Convention.WORLD)

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        """``nu_dot = M^-1 (tau - ID(0, f))`` (..., nv), everything in the representation."""
        M = self.mass_matrix()
        bias = self.inverse_dynamics(np.zeros(np.shape(M)[:-1]), wrenches)
        rhs = np.asarray(tau, dtype=np.float64) - bias
        return np.linalg.solve(M, rhs[..., None])[..., 0]

    def _full(self):
        """A :class:`bridge.backends.coupled.CoupledEngine` over a Pinocchio engine of the full model, at this
        engine's state (for what Pinocchio computes without mimic support)."""
        from bridge.backends.coupled import CoupledEngine

        if self._projected is None:
            self._projected = CoupledEngine(PinocchioEngine, self.model, self.representation)
        self._projected.set_state(self.state, self._gravity)
        return self._projected

    def coriolis_matrix(self) -> np.ndarray:
        """``G_nu^T C_full G_nu`` (..., nv, nv): the full model's, projected at the same state."""
        return self._full().coriolis_matrix()

    def frame_jacobian_derivative(self, frame: str) -> np.ndarray:
        """``J_dot_full G_nu``: ``getFrameJacobianTimeVariation`` takes no mimic joints."""
        return self._full().frame_jacobian_derivative(frame)

    def relative_jacobian(self, frame: str, reference: str) -> np.ndarray:
        """The full model's relative Jacobian times the coupling of the joint velocities."""
        return self._full().relative_jacobian(frame, reference)
