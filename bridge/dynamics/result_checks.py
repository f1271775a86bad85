"""What :class:`bridge.KinDyn` does with a result it cannot hand out: a non-finite value, or a
singular mass matrix in forward dynamics.

An engine's NaN or inf comes either from inputs so large that float64 products overflow (named with
their magnitudes) or from a limitation of that library on the model; a singular mass matrix is a
:class:`~bridge.errors.SingularMassMatrixError` naming the DOFs that move no inertia. Results of the
single-state hot path need no check when the inputs are moderate (:data:`bridge.conventions.state.MODERATE`)
and so is the model (:func:`model_scale` below :data:`MODERATE_MODEL`): no product can overflow.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from bridge.conventions.state import finite_weights
from bridge.errors import InvalidValueError, SingularMassMatrixError
from bridge.model.model import Model

__all__ = [
    "LARGE_INPUT",
    "LARGE_INPUT_FLOAT32",
    "MASS_QUANTITIES",
    "MODERATE_MODEL",
    "QUANTITY_NAMES",
    "REGULAR",
    "check_finite",
    "forward_result",
    "guard_mass",
    "input_note",
    "massless_error",
    "model_scale",
    "needs_guard",
    "raise_singular",
]

#: inputs beyond this magnitude are named as the cause of a non-finite result
LARGE_INPUT = 1e50
#: the same for an engine computing in float32 (largest finite 3.4e38: squares overflow from 1.8e19)
LARGE_INPUT_FLOAT32 = 1e15

#: a mass matrix with a condition number below this is inverted when an engine refuses it
REGULAR = 1e12

#: models whose lengths, masses and inertias all stay below this are of moderate size
MODERATE_MODEL = 1e20

#: KinDyn cache key -> the method's name (for error messages)
QUANTITY_NAMES = {
    "M": "mass_matrix",
    "h": "bias_forces",
    "X": "frame_transform",
    "v": "frame_velocity",
    "J": "frame_jacobian",
    "Jdnu": "frame_bias_acc",
    "g": "gravity_forces",
    "com": "com_position",
    "vcom": "com_velocity",
    "Jcom": "com_jacobian",
    "hG": "centroidal_momentum",
    "hG[A]": "centroidal_momentum",
    "hB": "total_momentum",
    "CMM": "centroidal_momentum_matrix",
    "Jmomentum": "total_momentum_jacobian",
}

#: KinDyn cache keys of the quantities that need a positive total mass (the centre of mass and momenta)
MASS_QUANTITIES = frozenset({"com", "vcom", "Jcom", "hG", "hG[A]", "hB", "CMM", "Jmomentum"})


def model_scale(model: Model) -> float:
    """The largest magnitude among the model's link inertias (mass, first and second moments),
    joint placements and axis origins (0 for an empty model)."""
    scale = 0.0
    for link in model.links:
        scale = max(scale, float(np.abs(link.inertia.as_matrix()).max(initial=0.0)))
    for joint in model.joints:
        scale = max(scale, float(np.abs(joint.parent_H_child.translation).max(initial=0.0)))
        scale = max(scale, float(np.abs(joint.axis_origin).max(initial=0.0)))
    return scale


def check_finite(value: np.ndarray, what: str, model_name: str, note: Callable[[], str]) -> np.ndarray:
    """``value`` if every entry is finite, else an :class:`InvalidValueError` naming ``what`` and
    the model, with ``note()`` saying where the non-finite values come from."""
    flat = value.reshape(-1)
    n = flat.shape[0]
    m = value.shape[-1] * (value.shape[-2] if value.ndim > 1 else 1) if value.ndim else 1
    if 0 < n <= 4096:
        ok = math.isfinite(flat.dot(finite_weights(n)))
    elif 0 < m <= 4096 and n % m == 0:  # one product per sample (see finite_weights), then N numbers
        ok = bool(np.isfinite(flat.reshape(-1, m).dot(finite_weights(m))).all())
    else:
        ok = bool(np.isfinite(flat).all())
    if not ok:
        raise InvalidValueError(f"{what} of model {model_name!r} is not finite: {note()}")
    return value


def check_all_finite(values: tuple, what: str, model_name: str, note: Callable[[], str]) -> None:
    """:func:`check_finite` of several arrays: once on their common C-contiguous owner when they
    are views of one (a batch's three derivatives), so that no strided copy is made."""
    bases = {id(v.base) for v in values if isinstance(v, np.ndarray)}
    owner = values[0].base if isinstance(values[0], np.ndarray) else None
    if len(bases) == 1 and owner is not None and owner.flags.c_contiguous:
        check_finite(owner, what, model_name, note)
        return
    for v in values:
        check_finite(np.asarray(v), what, model_name, note)


def needs_guard(model: Model) -> bool:
    """Whether the centre-of-mass quantities of ``model`` need :func:`guard_mass`: its total mass is
    zero, or it has a fixed base and no DOF (some libraries return NaN on it)."""
    return not model.total_mass > 0 or (not model.floating and not model.n_dofs)


def guard_mass(model: Model, key: str, com_position: Callable[[], np.ndarray]) -> None:
    """Before KinDyn computes the quantity of cache ``key`` (in :data:`MASS_QUANTITIES`) on a model
    that :func:`needs_guard`: an InvalidValueError if the total mass is zero (the quantity is
    undefined); for the total momentum, derived from the centre of mass, ``com_position()`` first, so
    that a non-finite centre of mass is named as such."""
    if not model.total_mass > 0:
        raise InvalidValueError(
            f"{QUANTITY_NAMES.get(key, key)} of model {model.name!r} is undefined: the total mass is "
            f"zero (all {len(model.links)} links are massless), so there is no centre of mass"
        )
    if key == "hB":
        com_position()


def input_note(
    largest: Mapping[str, float], engine_name: str, frozen: bool = False, precision: str = "float64"
) -> str:
    """Where a non-finite result comes from, given the largest magnitude of each input (empty when
    there is no state): inputs beyond :data:`LARGE_INPUT` (:data:`LARGE_INPUT_FLOAT32` for an engine
    of ``precision`` "float32"), or else the engine itself (``frozen``: on a model with a fixed base
    and no DOF, which some libraries do not handle)."""
    large = LARGE_INPUT_FLOAT32 if precision == "float32" else LARGE_INPUT
    big = {k: v for k, v in largest.items() if v > large}
    if big or not largest:
        listed = ", ".join(f"{k} up to {v:.3g}" for k, v in big.items()) or "no state"
        if precision == "float32":
            return (
                f"the {engine_name} engine computes in float32 (largest finite 3.4e38) and its products "
                f"overflow; the inputs are too large for it ({listed}): use a float64 engine"
            )
        return f"the float64 products overflow; the inputs are too large ({listed})"
    if frozen:
        return (
            f"the {engine_name} engine returned NaN or infinite values on a model with a fixed base and "
            "no DOF (nothing moves; that library does not handle such a model): try another engine"
        )
    return (
        f"the {engine_name} engine returned NaN or infinite values for moderate inputs (a "
        "limitation of that library on this model; try another engine)"
    )


def raise_singular(model: Model, M: np.ndarray) -> None:
    """Raise :class:`SingularMassMatrixError` for the mass matrices M (..., nv, nv) of ``model``,
    naming the DOFs whose diagonal entry vanishes, or saying that M is not positive definite."""
    nv = model.nv
    nb = nv - model.n_dofs
    d = np.diagonal(M, axis1=-2, axis2=-1).reshape(-1, nv)
    scale = np.abs(d).max(initial=0.0)
    zero = np.all(np.abs(d[:, nb:]) <= 1e-12 * max(scale, 1e-300), axis=0)
    names = [name for name, z in zip(model.dof_names, zero, strict=True) if z]
    if names:
        why = f"these joints move no inertia in this state: {', '.join(names)}"
    else:
        try:
            np.linalg.cholesky(M)
            why = "it is numerically singular"
        except np.linalg.LinAlgError:
            why = (
                "it is not positive definite (singular, or indefinite because of non-physical link "
                "inertias loaded with a warning)"
            )
    raise SingularMassMatrixError(
        f"forward dynamics of model {model.name!r} is undefined: the mass matrix is singular: {why}"
    )


def quiet(fn: Callable, *args: object, singular: tuple[Model, Callable] | None = None) -> object:
    """``fn(*args)`` without numpy's floating-point warnings: on the general paths, where large
    inputs may overflow, every result is checked and a non-finite one raises bridge's error.

    ``singular=(model, mass_matrix)``: a ``LinAlgError`` of ``fn`` (an engine that could not factorize
    the mass matrix) raises what forward dynamics raises instead: the error of ``mass_matrix()`` when
    the state overflows, else ``raise_singular``'s."""
    with np.errstate(all="ignore"):
        if singular is None:
            return fn(*args)
        try:
            return fn(*args)
        except np.linalg.LinAlgError:
            model, mass_matrix = singular
            raise_singular(model, mass_matrix())


def massless_error(model: Model) -> SingularMassMatrixError:
    """Forward dynamics of ``model`` is undefined: joints that move no inertia (``massless_dofs``)."""
    return SingularMassMatrixError(
        f"forward dynamics of model {model.name!r} is undefined: the mass matrix is singular "
        f"because these joints move no inertia: {', '.join(model.massless_dofs)} "
        "(lock them with Model.with_dofs)"
    )


def forward_result(
    kd: Any, nu_dot: np.ndarray | None, tau: np.ndarray, wrenches: Mapping | None
) -> np.ndarray:
    """Forward dynamics as KinDyn ``kd``'s engine gave it, unless the engine could not invert the mass
    matrix (NaN, inf or a LinAlgError, ``None`` here; ``tau`` (..., nv), or (n,) joint torques).

    Then: a singular M is a :class:`SingularMassMatrixError`, whatever the engine; a regular but
    indefinite M (non-physical inertias, which an engine's Cholesky refuses) is solved here as
    ``M nu_dot = tau - h + sum_F J_F^T f_F``, which is what forward dynamics means."""
    if nu_dot is not None:
        flat = nu_dot.reshape(-1)
        n = flat.shape[0]
        if math.isfinite(flat.dot(finite_weights(n))) if 0 < n <= 4096 else np.isfinite(flat).all():
            return nu_dot
    M = kd.mass_matrix()  # raises if the state itself overflows
    nv = M.shape[-1]
    if np.all(np.linalg.cond(M) < REGULAR):
        if tau.shape[-1] != nv:  # joint torques of the hot path
            tau = np.concatenate([np.zeros(nv - kd.model.n_dofs), tau])
        rhs = tau - kd.bias_forces()
        for frame, w in (wrenches or {}).items():
            rhs = rhs + np.einsum("...ji,...j->...i", kd.frame_jacobian(frame), w)
        nu_dot = np.linalg.solve(M, rhs[..., None])[..., 0]
        return check_finite(nu_dot, "forward_dynamics", kd.model.name, kd._input_note)
    raise_singular(kd.model, M)
