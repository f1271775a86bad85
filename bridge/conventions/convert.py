"""Convert generalized velocities and joint-space quantities between conventions.

Conventions, by name (:func:`convention_names`): "body", "inertial", "mixed" (the base velocity
representation, joints in the model's DOF order) and every registered library's own (its record in
:mod:`bridge.backends.registry`; each a :class:`bridge.conventions.change_of_variables.Convention`
declared in its backend package and imported when first named). With ``nu_t = T nu_s``
(``T, T_dot = velocity_transform(model, state, s, t)``):

* velocities: ``nu_t = T nu_s``;
* accelerations: ``nu_dot_t = T nu_dot_s + T_dot nu_s`` (the derivative of ``nu_t``);
* Jacobians (``v = J nu``): ``J_t = J_s T^{-1}``;
* generalized forces (dual to nu): ``tau_t = T^{-T} tau_s``;
* mass matrices: ``M_t = T^{-T} M_s T^{-1}``;
* bias forces (inverse dynamics at zero acceleration *in that convention*):
  ``h_t = T^{-T} (h_s - M_s T^{-1} T_dot nu_s)`` — so they need the mass matrix too.

``state`` gives the pose and the velocity (in any representation) at which T is evaluated; all
functions accept leading batch axes.
"""

from __future__ import annotations

import numpy as np

from bridge._array import as_float_array
from bridge.conventions.change_of_variables import (
    ChangeOfVariables,
    change_of_variables,
)
from bridge.conventions.registry import convention, convention_names
from bridge.conventions.state import State
from bridge.errors import ShapeError
from bridge.model.model import Model
from bridge.spatial.xp import check_real, is_foreign, namespace

__all__ = [
    "convention",
    "convention_names",
    "convert_acceleration",
    "convert_bias_forces",
    "convert_generalized_force",
    "convert_jacobian",
    "convert_mass_matrix",
    "convert_velocity",
    "velocity_change",
    "velocity_transform",
]


def velocity_change(model: Model, state: State, source: object, target: object) -> ChangeOfVariables:
    """The :class:`ChangeOfVariables` ``nu_target = T nu_source`` at ``state`` (batched)."""
    return change_of_variables(model, state, convention(source), convention(target))


def velocity_transform(
    model: Model, state: State, source: object, target: object
) -> tuple[np.ndarray, np.ndarray]:
    """``(T, T_dot)`` with ``nu_target = T @ nu_source`` at ``state``, both (..., nv, nv).

    ``source``/``target``: any convention name (:func:`convention_names`). ``T_dot`` is the exact
    time derivative of T along the motion described by ``state``.
    """
    cov = velocity_change(model, state, source, target)
    return cov.matrix(), cov.derivative()


def _f(x: object, name: str, tail: tuple[int, ...], cov: ChangeOfVariables) -> np.ndarray:
    """``x`` checked: real, finite, trailing axes ``tail``, batch axes broadcasting to the state's."""
    if is_foreign(x) or cov.ops.name != "numpy":
        return _foreign(x, name, tail, cov)
    arr = as_float_array(x, name, tail)
    batch = cov.nu.shape[:-1]
    try:
        full = np.broadcast_shapes(arr.shape[: arr.ndim - len(tail)], batch)
    except ValueError:
        raise ShapeError(
            f"{name}: batch shape {arr.shape[: arr.ndim - len(tail)]} does not broadcast with the state's "
            f"{batch}"
        ) from None
    # (one array for a batch of states, or a batch axis of 1: the conversions write the result in
    # an array of the argument's shape)
    return arr if arr.shape[: arr.ndim - len(tail)] == full else np.broadcast_to(arr, (*full, *tail))


def _foreign(x: object, name: str, tail: tuple[int, ...], cov: ChangeOfVariables) -> object:
    """``x`` in the state's array namespace (JAX or CasADi), its trailing shape checked; complex
    values are refused, and NaN or infinite ones when ``x`` has values (a concrete JAX array, a
    CasADi DM; not under tracing nor for symbols). A numpy state meets a foreign ``x`` in ``x``'s
    namespace (the state's numbers become constants of the graph)."""
    check_real(x, name)  # complex always; NaN when it has values (not traced, not a symbol)
    o = cov.ops = namespace(x, cov.nu)
    arr = o.asarray(x, cov.nu)
    shape = tuple(arr.shape)
    if o.batched:
        ok = shape[len(shape) - len(tail) :] == tail
    else:  # CasADi: vectors are columns, matrices two-dimensional
        ok = shape == ((tail[0], 1) if len(tail) == 1 else tail)
    if not ok:
        raise ShapeError(f"{name}: expected trailing shape {tail}, got {shape}")
    if o.batched:  # (a batch that does not broadcast fails deep in the array library otherwise)
        batch, state_batch = shape[: len(shape) - len(tail)], tuple(cov.nu.shape[:-1])
        try:
            np.broadcast_shapes(batch, state_batch)
        except ValueError:
            raise ShapeError(
                f"{name}: batch shape {batch} does not broadcast with the state's {state_batch}"
            ) from None
    return arr


def convert_velocity(
    model: Model, state: State, nu: np.ndarray, source: object, target: object
) -> np.ndarray:
    """``nu_t = T nu_s``, (..., nv)."""
    cov = velocity_change(model, state, source, target)
    return cov.velocity(_f(nu, "nu", (model.nv,), cov))


def convert_acceleration(
    model: Model, state: State, nu_dot: np.ndarray, source: object, target: object
) -> np.ndarray:
    """``nu_dot_t = T nu_dot_s + T_dot nu_s``, (..., nv)."""
    cov = velocity_change(model, state, source, target)
    return cov.acceleration(_f(nu_dot, "nu_dot", (model.nv,), cov))


def convert_jacobian(model: Model, state: State, J: np.ndarray, source: object, target: object) -> np.ndarray:
    """``J_t = J_s T_{t->s}`` for (..., m, nv) Jacobians with ``v = J nu``.

    Any matrix whose columns act on the generalized velocity converts this way: a frame Jacobian,
    the centroidal momentum matrix (``h_G = A_G nu``, so ``A_G,t = A_G,s T_{t->s}``), the total
    momentum's Jacobian. Only the columns change: rows expressed in a frame that depends on the
    representation (KinDyn's CMM rows are G[B] in BODY) are a frame quantity
    (:mod:`bridge.conventions.frames`). Numpy (batched), JAX and CasADi alike."""
    cov = velocity_change(model, state, target, source)
    if is_foreign(J) or cov.ops.name != "numpy":
        m = J.shape[-2] if len(J.shape) >= 2 else -1
        return cov.jacobian_back(_foreign(J, "J", (m, model.nv), cov))
    J = as_float_array(J, "J", (model.nv,))
    if J.ndim < 2:
        raise ShapeError(f"J: expected shape (..., m, {model.nv}), got {J.shape}")
    return cov.jacobian_back(_f(J, "J", (J.shape[-2], model.nv), cov))


def convert_generalized_force(
    model: Model, state: State, tau: np.ndarray, source: object, target: object
) -> np.ndarray:
    """``tau_t = T_{t->s}^T tau_s`` for (..., nv) generalized forces (power-preserving)."""
    cov = velocity_change(model, state, target, source)
    return cov.force_back(_f(tau, "tau", (model.nv,), cov))


def convert_mass_matrix(
    model: Model, state: State, M: np.ndarray, source: object, target: object
) -> np.ndarray:
    """``M_t = T_{t->s}^T M_s T_{t->s}`` for (..., nv, nv)."""
    cov = velocity_change(model, state, target, source)
    return cov.matrix_back(_f(M, "M", (model.nv, model.nv), cov))


def convert_bias_forces(
    model: Model, state: State, h: np.ndarray, M: np.ndarray, source: object, target: object
) -> np.ndarray:
    """Bias forces ``h_t = T_{t->s}^T (h_s + M_s T_dot_{t->s} nu_t)``, (..., nv).

    ``M`` is the mass matrix in the *source* convention.
    """
    cov = velocity_change(model, state, target, source)
    h_s, M_s = _f(h, "h", (model.nv,), cov), _f(M, "M", (model.nv, model.nv), cov)
    h_s, M_s = same_batch(cov, h=(h_s, 1), M=(M_s, 2))
    return cov.bias_back(h_s, M_s)


def same_batch(cov: ChangeOfVariables, **arrays: tuple[object, int]) -> list:
    """The arrays (name -> (array, number of trailing axes), each checked by ``_f`` against the
    state's batch) broadcast to one batch shape, in order; ShapeError naming them if their batch
    axes do not broadcast with each other (CasADi matrices, unbatched, are returned as given)."""
    if not cov.ops.batched:
        return [a for a, _ in arrays.values()]
    batches = {name: tuple(a.shape[: len(a.shape) - tail]) for name, (a, tail) in arrays.items()}
    try:
        full = np.broadcast_shapes(*batches.values(), tuple(cov.nu.shape[:-1]))
    except ValueError:
        shown = ", ".join(f"{name} {batch}" for name, batch in batches.items())
        raise ShapeError(f"batch shapes that do not broadcast with each other: {shown}") from None
    out = []
    for (a, tail), batch in zip(arrays.values(), batches.values(), strict=True):
        if batch != full:
            a = cov.ops.broadcast_to(a, (*full, *a.shape[len(a.shape) - tail :]))
            a = a.copy() if isinstance(a, np.ndarray) else a  # (writeable, as the arguments were)
        out.append(a)
    return out
