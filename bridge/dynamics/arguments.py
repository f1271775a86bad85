"""KinDyn's arguments checked and shaped: the generalized acceleration from a base acceleration and
joint accelerations, the generalized force from joint torques, the external wrenches by frame.

Each raises bridge's errors naming the argument (:class:`bridge.ShapeError`,
:class:`bridge.InvalidValueError`); ``batch`` is the current state's batch shape, which every
argument's leading axes must broadcast to (None: no state set yet, nothing to check against).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from bridge._array import as_float_array, check_batch
from bridge.conventions.state import all_finite
from bridge.errors import InvalidValueError, ShapeError
from bridge.model.model import Model

__all__ = ["accelerations", "generalized_force", "join_vectors", "wrenches_by_frame"]


def join_vectors(a: object, na: int, b: object, nb: int) -> np.ndarray | None:
    """``[a; b]`` for one finite (na,) and one finite (nb,) vector, else None (the caller's
    general path then broadcasts batches or raises the errors)."""
    try:
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    if a.shape != (na,) or b.shape != (nb,):
        return None
    out = np.empty(na + nb)
    out[:na] = a
    out[na:] = b
    return out if all_finite(out) else None


def accelerations(
    model: Model, base_acc: object, s_ddot: object, batch: tuple[int, ...] | None
) -> np.ndarray:
    """``nu_dot`` (..., nv): ``[base_acc; s_ddot]`` (floating base: ``base_acc`` (..., 6) required)
    or ``s_ddot`` (..., n) (fixed base: ``base_acc`` None, or checked and ignored)."""
    n = model.n_dofs
    sdd = as_float_array(s_ddot, "s_ddot", (n,))
    if batch is not None:
        check_batch("s_ddot", sdd.shape[:-1], batch)
    if not model.floating:
        if base_acc is not None:
            ba = as_float_array(base_acc, "base_acc", (6,))
            if batch is not None:
                check_batch("base_acc", ba.shape[:-1], batch)
        return sdd
    if base_acc is None:
        raise ShapeError("base_acc: a floating-base model needs a (..., 6) base acceleration")
    ba = as_float_array(base_acc, "base_acc", (6,))
    if batch is not None:
        check_batch("base_acc", ba.shape[:-1], batch)
    lead = np.broadcast_shapes(ba.shape[:-1], sdd.shape[:-1])
    return np.concatenate([np.broadcast_to(ba, (*lead, 6)), np.broadcast_to(sdd, (*lead, n))], axis=-1)


def generalized_force(t: np.ndarray, n: int, nv: int) -> np.ndarray:
    """Joint torques (..., n) behind a zero base wrench, or a full generalized force (..., nv)."""
    if t.shape == (n,) and n != nv and all_finite(t):  # joint torques only
        tau = np.zeros(nv)
        tau[nv - n :] = t
        return tau
    if t.ndim >= 1 and t.shape[-1] == nv:
        return as_float_array(t, "generalized forces", (nv,))
    tq = as_float_array(t, "joint_torques", (n,))
    return np.concatenate([np.zeros((*tq.shape[:-1], nv - n)), tq], axis=-1)


def wrenches_by_frame(
    external_wrenches: Mapping[str, object] | None,
    frame_of: Callable[[object], str],
    batch: tuple[int, ...] | None,
) -> dict[str, np.ndarray] | None:
    """``{frame: wrench (..., 6)}`` checked (each frame through ``frame_of``, which raises for an
    unknown one), or None for no wrench at all."""
    if external_wrenches is None:
        return None
    if not isinstance(external_wrenches, Mapping):
        raise InvalidValueError("external_wrenches: expected a mapping {frame_name: wrench (6,)}")
    if not external_wrenches:
        return None
    out = {}
    for name, w in external_wrenches.items():
        frame = frame_of(name)
        wrench = as_float_array(w, f"external wrench on {frame!r}", (6,))
        if batch is not None:
            check_batch(f"external wrench on {frame!r}", wrench.shape[:-1], batch)
        out[frame] = wrench
    return out
