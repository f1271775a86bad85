"""Small argument-checking helpers shared by the whole package (shapes, finiteness)."""

from __future__ import annotations

import numpy as np

from bridge.errors import InvalidValueError, ShapeError


def as_float_array(x: object, name: str, tail: tuple[int, ...]) -> np.ndarray:
    """Return ``x`` as a float64 array whose trailing axes are ``tail``; raise if not finite.

    Leading (batch) axes are allowed. ``name`` is used in error messages.
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"{name}: cannot convert to a float array ({exc})") from None
    n = len(tail)
    if arr.ndim < n or arr.shape[arr.ndim - n :] != tail:
        want = "(..., " + ", ".join(str(t) for t in tail) + ")" if tail else "a scalar batch"
        raise ShapeError(f"{name}: expected shape {want}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InvalidValueError(f"{name}: contains NaN or infinite values")
    return arr


def broadcast_batch(what: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Broadcast batch shapes like numpy; raise :class:`ShapeError` naming ``what`` if they do not."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        listed = " and ".join(str(tuple(s)) for s in shapes)
        raise ShapeError(f"{what}: batch shapes {listed} do not broadcast") from None
