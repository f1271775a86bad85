"""What every engine shares: its state handling, and the derived quantities' generic defaults.

The state: an engine without a hot path for one unbatched state takes :class:`EngineBase`'s
``set_single_state``: it checks the arrays once (:func:`bridge.conventions.state.single_state_arrays`)
and hands an unchecked :class:`State` to the engine's ``set_state``; engines with a hot path use
:meth:`EngineBase._take_single_state` and build the :attr:`EngineBase.state` only when asked for.

The quantities after M and h (centroidal momentum matrix, Coriolis matrix and forces, relative
transforms and Jacobians, frame Jacobian derivatives) default to the exact generic constructions of
:mod:`bridge.backends.generic` (the one place they are written); an engine defines the method where
its library has it natively. ``total_momentum`` and ``total_momentum_jacobian`` default to None
(KinDyn derives them from the centroidal ones).

Optional capabilities (single-state fast paths, analytical derivatives) are not here: an engine
declares them in its ``CAPABILITIES`` (:mod:`bridge.backends.protocol`); derivatives without the
analytical capability are differences (:mod:`bridge.derivatives.select`).
"""

from __future__ import annotations

import numpy as np

from bridge.backends import generic
from bridge.conventions.state import Representation, State, single_state_arrays
from bridge.model.model import Model
from bridge.spatial import Transform

__all__ = ["EngineBase"]

_ZERO_BASE = np.zeros(6)
_ZERO_BASE.setflags(write=False)


class EngineBase:
    """The state handling every engine shares, and the generic defaults of the derived quantities."""

    model: Model
    representation: Representation
    #: the optional capabilities the engine declares (:mod:`bridge.backends.protocol`): none
    CAPABILITIES: frozenset[str] = frozenset()
    _state: State | None = None
    #: the arrays (H, s, base velocity, s_dot) of a state taken by :meth:`_take_single_state`,
    #: whose State is built on demand
    _single_args: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def state(self) -> State:
        """The current state (in the engine's representation, with the user's batch axes; built on
        demand after a single-state path took the arrays)."""
        if self._state is None and self._single_args is not None:
            H, s, v, sd = self._single_args
            self._state = State(Transform(H, check=False), s, v, sd, self.representation, check=False)
        return self._state

    def _take_single_state(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """For an engine's own ``set_single_state``: the checked arrays ``(H, s, v, s_dot)`` of one
        unbatched state (``v`` zero for a fixed base), made the engine's current state (its
        :attr:`state` built only if asked for), or None, changing nothing, when they are not one
        valid state."""
        fast = single_state_arrays(world_H_base, s, base_velocity, s_dot, self.model.n_dofs)
        if fast is None:
            return None
        H, s, v, sd = fast
        if not self.model.floating:
            v = _ZERO_BASE  # a fixed base has no base velocity
        self._state, self._single_args = None, (H, s, v, sd)
        return H, s, v, sd

    def set_state(self, state: State, gravity: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def set_single_state(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object, gravity: np.ndarray
    ) -> bool:
        """One unbatched state given as arrays: set it and return True, or return False, changing
        nothing, when the arrays are not one valid state (the caller's State then raises)."""
        if self._take_single_state(world_H_base, s, base_velocity, s_dot) is None:
            return False
        self.set_state(self.state, gravity)  # (an unchecked State of the taken arrays)
        return True

    def total_momentum(self) -> np.ndarray | None:
        """The total momentum (..., 6) in the representation's B / A / B[A], or None when the engine
        does not compute it natively (KinDyn then derives it from the centroidal momentum)."""
        return None

    # ------------------------------------------------------------------ derived quantities
    def centroidal_momentum_matrix(self) -> np.ndarray:
        """(..., 6, nv): ``A nu`` is the centroidal momentum in G[A] (linear first)."""
        return generic.centroidal_momentum_matrix(self)

    def total_momentum_jacobian(self) -> np.ndarray | None:
        """(..., 6, nv) with ``J nu`` the total momentum in B / A / B[A], or None (KinDyn derives
        it from the centroidal momentum matrix)."""
        return None

    def coriolis_matrix(self) -> np.ndarray:
        """(..., nv, nv) Coriolis matrix in the representation: ``C nu + g = h``, ``M_dot = C + C^T``."""
        return generic.coriolis_matrix(self)

    def coriolis_forces(self) -> np.ndarray:
        """``C nu`` (..., nv): the bias forces without gravity."""
        return self.bias_forces() - self.gravity_forces()

    def frame_jacobian_derivative(self, frame: str) -> np.ndarray:
        """(..., 6, nv): the time derivative of ``frame_jacobian(frame)`` along the motion
        (``J_dot nu`` is ``frame_bias_acc(frame)``)."""
        return generic.frame_jacobian_derivative(self, frame)

    def relative_transform(self, frame: str, reference: str) -> np.ndarray:
        """``reference_H_frame`` (..., 4, 4)."""
        return generic.relative_transform(self, frame, reference)

    def relative_jacobian(self, frame: str, reference: str) -> np.ndarray:
        """(..., 6, n): velocity of ``frame`` relative to ``reference`` per unit joint velocity, in
        F (BODY), R (INERTIAL) or F[R] (MIXED)."""
        return generic.relative_jacobian(self, frame, reference)
