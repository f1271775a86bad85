"""What every engine shares: its constructor's arguments and its state handling.

The arguments: every engine's constructor starts with ``super().__init__(model, representation)``,
which refuses anything but a bridge :class:`Model` and parses the representation once
(:meth:`Representation.parse`), with the same errors for every engine, before the engine builds
anything of its library.

The state: an engine without a hot path for one unbatched state takes :class:`EngineBase`'s
``set_single_state``: it checks the arrays once (:func:`bridge.conventions.state.single_state_arrays`)
and hands an unchecked :class:`State` to the engine's ``set_state``; engines with a hot path use
:meth:`EngineBase._take_single_state` and build the :attr:`EngineBase.state` only when asked for.

Nothing else is inherited: the derived quantities (Coriolis matrix, centroidal momentum matrix,
...) are looked up by :func:`bridge.backends.protocol.derived` (the engine's own where it names them
in ``NATIVE_QUANTITIES``, else :mod:`bridge.backends.generic`'s), and the optional capabilities
(single-state fast paths, analytical derivatives) by :func:`bridge.backends.protocol.capability`.
"""

from __future__ import annotations

import numpy as np

from bridge.conventions.state import Representation, State, single_state_arrays
from bridge.errors import InvalidValueError
from bridge.model.model import Model
from bridge.spatial import Transform

__all__ = ["EngineBase"]

_ZERO_BASE = np.zeros(6)
_ZERO_BASE.setflags(write=False)


class EngineBase:
    """The state handling every engine shares (and empty declarations: no capability, no native
    derived quantity)."""

    model: Model
    representation: Representation
    #: the optional capabilities the engine declares (:mod:`bridge.backends.protocol`): none
    CAPABILITIES: frozenset[str] = frozenset()
    #: the derived quantities the engine computes natively (:mod:`bridge.backends.protocol`): none
    NATIVE_QUANTITIES: frozenset[str] = frozenset()
    #: the library's arithmetic: "float64", or "float32" (Newton), whose products overflow for
    #: inputs float64 computes fine: KinDyn then checks every result (no unchecked hot path)
    precision: str = "float64"
    #: the current state's batch axes (none before a state is set)
    batch_shape: tuple[int, ...] = ()
    _state: State | None = None
    #: the arrays (H, s, base velocity, s_dot) of a state taken by :meth:`_take_single_state`,
    #: whose State is built on demand
    _single_args: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def __init__(self, model: Model, representation: object) -> None:
        """Take what every engine starts from: ``model``, a bridge :class:`Model`
        (:class:`bridge.InvalidValueError` naming the engine otherwise), and ``representation``,
        parsed once (a :class:`Representation`, its value or an iDynTree / Pinocchio name;
        InvalidValueError listing them otherwise); no state yet."""
        if not isinstance(model, Model):
            raise InvalidValueError(
                f"{type(self).__name__}: expected a bridge Model, got {type(model).__name__}"
            )
        self.model = model
        self.representation = Representation.parse(representation)
        self._state = None

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
