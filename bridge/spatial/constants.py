"""Physical constants of the neutral form."""

from __future__ import annotations

__all__ = ["DEFAULT_GRAVITY"]

#: Gravitational acceleration in world coordinates (m/s^2), z up: the default ``gravity`` of
#: :meth:`bridge.KinDyn.set_state`, of the backends and of the cross-validation. A tuple (immutable),
#: so callers may test ``gravity is DEFAULT_GRAVITY`` to skip converting the default.
DEFAULT_GRAVITY: tuple[float, float, float] = (0.0, 0.0, -9.81)
