"""Small argument-checking helpers shared by the whole package (shapes, finiteness, scalars)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from bridge.errors import InvalidValueError, ShapeError


def as_float_array(x: object, name: str, tail: tuple[int, ...]) -> np.ndarray:
    """Return ``x`` as a float64 array whose trailing axes are ``tail``; raise if not finite.

    Leading (batch) axes are allowed. ``name`` is used in error messages. Complex numbers,
    strings and other non-real values are refused (numpy would drop an imaginary part silently).
    """
    try:
        raw = x if isinstance(x, np.ndarray) else np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise InvalidValueError(f"{name}: cannot convert to a float array ({exc})") from None
    if raw.dtype.kind not in "fiub":
        if raw.dtype.kind == "c":
            raise InvalidValueError(
                f"{name}: cannot convert to a float array (complex values; give real numbers)"
            )
        if raw.dtype.kind != "O":
            raise InvalidValueError(
                f"{name}: cannot convert to a float array (an array of {raw.dtype}; give real numbers)"
            )
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
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


def check_batch(name: str, shape: tuple[int, ...], batch: tuple[int, ...]) -> None:
    """Raise :class:`ShapeError` unless the batch shape ``shape`` of argument ``name`` broadcasts
    to the state's batch shape ``batch`` (results keep the state's batch shape)."""
    try:
        ok = np.broadcast_shapes(shape, batch) == tuple(batch)
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(
            f"{name}: batch shape {tuple(shape)} does not broadcast to the state's batch shape {tuple(batch)}"
        )


def as_real(
    x: object, name: str, *, positive: bool = False, nonnegative: bool = False, finite: bool = True
) -> float:
    """``x`` as a Python float (a real number, not a bool or a string); raise naming ``name``."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.floating, np.integer)):
        raise InvalidValueError(f"{name}: expected a real number, got {x!r}")
    try:
        value = float(x)
    except OverflowError:  # an int beyond a float's range
        raise InvalidValueError(f"{name}: expected a finite number, got an integer beyond floats") from None
    if (finite or positive or nonnegative) and not math.isfinite(value):
        raise InvalidValueError(f"{name}: expected a finite number, got {value!r}")
    if positive and not value > 0.0:
        raise InvalidValueError(f"{name}: expected a positive number, got {value!r}")
    if nonnegative and not value >= 0.0:
        raise InvalidValueError(f"{name}: expected a number >= 0, got {value!r}")
    return value


def as_int(
    x: object, name: str, *, minimum: int | None = None, maximum: int | None = None, why: str = ""
) -> int:
    """``x`` as a Python int (an integer, not a bool, a float or a string) from ``minimum`` to
    ``maximum``; raise naming ``name`` (and, above ``maximum``, ``why``)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)):
        raise InvalidValueError(f"{name}: expected an integer, got {x!r}")
    value = int(x)
    if minimum is not None and value < minimum:
        raise InvalidValueError(f"{name}: expected an integer >= {minimum}, got {int_text(value)}")
    if maximum is not None and value > maximum:
        raise InvalidValueError(f"{name}: expected an integer <= {maximum}, got {int_text(value)}{why}")
    return value


def int_text(value: int) -> str:
    """``value`` as text, a huge one as its order of magnitude (``str`` refuses > 4300 digits)."""
    if abs(value) < 10**30:
        return str(value)
    return f"{'-' if value < 0 else ''}about 1e{int(abs(value).bit_length() * math.log10(2))}"


def as_name(x: object, name: str) -> str:
    """``x`` as a name: a non-empty str, nothing else."""
    if isinstance(x, str) and x:
        return x
    raise InvalidValueError(f"{name}: expected a non-empty name (a str), got {x!r}")


def as_bool(x: object, name: str) -> bool:
    """``x`` as a bool: True/False (or numpy's), nothing else (``"no"`` is not False)."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    raise InvalidValueError(f"{name}: expected True or False, got {x!r}")
