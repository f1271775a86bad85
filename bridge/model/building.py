"""Small helpers the model converters share to build a neutral :class:`~bridge.model.model.Model`.

Each library's converter (``bridge.backends.<lib>.model``) reads its own data structures; what it
then does with the numbers is often the same job: pick the neutral kind of a 1-DOF joint from
its position limits, read a "no limit" sentinel as None, find a free name. Those jobs live here,
in the neutral model layer, so the converters share one definition.
"""

from __future__ import annotations

import numbers

import numpy as np

from bridge.errors import InvalidValueError
from bridge.model.model import Joint, JointKind, JointLimits, Model
from bridge.spatial import Transform

__all__ = ["finite_limit", "movable_joint", "require_finite_numbers", "unique_name"]


def finite_limit(value: float, infinite: float) -> float | None:
    """``value`` as a limit: None when it is not finite or its magnitude reaches ``infinite`` (the
    library's "no limit" sentinel, e.g. ``DBL_MAX`` or ``1e300``)."""
    return float(value) if np.isfinite(value) and abs(value) < infinite else None


def movable_joint(
    name: str,
    parent: str,
    child: str,
    parent_H_child: Transform,
    *,
    prismatic: bool,
    axis: np.ndarray,
    axis_origin: np.ndarray,
    limits: JointLimits,
    armature: float = 0.0,
) -> Joint:
    """A 1-DOF neutral joint read from a library that has one revolute type for both neutral kinds.

    The kind is PRISMATIC for a ``prismatic`` joint, else REVOLUTE when ``limits`` has a lower or
    an upper position limit and CONTINUOUS when it has neither. ``parent_H_child`` (4x4) is the rest
    pose; ``axis`` (3,) and ``axis_origin`` (3,) are in child coordinates.
    """
    if prismatic:
        kind = JointKind.PRISMATIC
    elif limits.lower is not None or limits.upper is not None:
        kind = JointKind.REVOLUTE
    else:
        kind = JointKind.CONTINUOUS
    return Joint(
        name,
        kind,
        parent,
        child,
        parent_H_child,
        axis=axis,
        axis_origin=axis_origin,
        limits=limits,
        armature=armature,
    )


def unique_name(name: str, taken: set[str] | frozenset[str], suffix: str) -> str:
    """``name``, with ``suffix`` appended as many times as needed for it not to be in ``taken``
    (``taken`` is not changed)."""
    while name in taken:
        name += suffix
    return name


def require_finite_numbers(model: Model, fmt: str) -> None:
    """Raise :class:`bridge.InvalidValueError` naming the joint when a number a writer of ``fmt``
    would write is not finite: a joint limit (of a joint or of a locked joint's original) or a mimic
    relation's multiplier or offset. Inertias, poses, axes, armature and gravity are finite by
    construction (their classes refuse anything else); limits are the model's free numbers."""
    for joint in model.joints:
        for j in (joint, joint.original):
            if j is None:
                continue
            for key in ("lower", "upper", "effort", "velocity"):
                value = getattr(j.limits, key)
                real = isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(
                    value, (bool, np.bool_)
                )
                if value is not None and not (real and _finite(value)):
                    raise InvalidValueError(
                        f"model {model.name!r}: joint {j.name!r}: the {key} limit is {value!r}; "
                        f"{fmt} files hold finite numbers only (None: no limit)"
                    )
    for m in getattr(model, "mimics", ()):
        if not (np.isfinite(m.multiplier) and np.isfinite(m.offset)):
            raise InvalidValueError(
                f"model {model.name!r}: mimic joint {m.joint!r}: multiplier {m.multiplier!r} and offset "
                f"{m.offset!r} must be finite to be written to a {fmt} file"
            )


def _finite(value: object) -> bool:
    """Whether the real number ``value`` is a finite float (an int beyond a float's range is not)."""
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:
        return False
