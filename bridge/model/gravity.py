"""The gravity a model carries from its file (:attr:`bridge.Model.gravity`) and the default it gives.

A model file may state its gravity: MJCF's ``<option gravity>`` (robosuite's robots set
``0 0 0``), an SDF world's ``<gravity>``, a library model's own field (``MjModel.opt.gravity``,
Drake's plant's gravity field). The neutral model keeps it as :attr:`~bridge.Model.gravity` (3,)
in world coordinates, or None when the source does not say (a URDF, a bare SDF ``<model>``, a model
built in code); :func:`model_gravity` is then bridge's default ``(0, 0, -9.81)``. Every engine and
query uses :func:`model_gravity` when no ``gravity=`` is given; an explicit ``gravity=`` overrides it.
"""

from __future__ import annotations

import numpy as np

from bridge.errors import ModelError
from bridge.spatial.constants import DEFAULT_GRAVITY

__all__ = ["checked_gravity", "gravity_or", "model_gravity"]

_DEFAULT = np.array(DEFAULT_GRAVITY)
_DEFAULT.flags.writeable = False


def checked_gravity(value: object, what: str) -> np.ndarray | None:
    """``value`` as a read-only float (3,) gravity, or None; a :class:`bridge.ModelError` naming
    ``what`` for anything else (a wrong shape, a bool, a complex, NaN or infinite entries)."""
    if value is None:
        return None
    raw = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if raw.dtype.kind not in "fiu" or raw.shape != (3,):
        raise ModelError(f"{what}: expected None or three finite real numbers (x, y, z), got {value!r}")
    g = np.array(raw, dtype=np.float64)
    if not np.all(np.isfinite(g)):
        raise ModelError(f"{what}: expected finite numbers, got {g.tolist()}")
    g.flags.writeable = False
    return g


def model_gravity(model: object) -> np.ndarray:
    """The gravity (3,) queries on ``model`` use by default: the model's own
    (:attr:`~bridge.Model.gravity`), else ``(0, 0, -9.81)``; read-only."""
    g = getattr(model, "gravity", None)
    return _DEFAULT if g is None else g


def gravity_or(gravity: object, model: object) -> object:
    """``gravity`` as given, or the model's default (:func:`model_gravity`) when it is None."""
    return model_gravity(model) if gravity is None else gravity
