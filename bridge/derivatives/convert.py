"""Dynamics derivatives from one convention to another: :func:`convert_dynamics_derivatives`.

A library gives ``dtau/dq``, ``dtau/dnu``, ``dtau/dnu_dot`` (or the forward dynamics' ``dnu_dot/dq``,
``dnu_dot/dnu``, ``dnu_dot/dtau``) in its own convention; this turns them into any other registered
convention (:func:`bridge.conventions.registry.convention_names`): the neutral "body", "inertial",
"mixed" and every library's. Derivatives with respect to q are taken along each convention's
tangent: the first-order change of the configuration when the robot moves with generalized velocity
``delta`` in that convention (for the neutral representations, the motion of
:func:`bridge.derivatives.chain.retract`; for a library, its velocity, e.g. MuJoCo's ``qvel``). So
``d/dq`` in a convention is what a library differentiating along its own velocity (Pinocchio's
``computeRNEADerivatives``, MuJoCo's ``mjd_inverseFD`` on ``qvel``) returns.

Because T depends on the pose and ``T_dot nu`` on the pose and the velocity, the conversion is not
``T^T D T``: it needs the point of the derivatives, the acceleration and the generalized force there
(both in the source convention), and adds the terms of :mod:`bridge.derivatives.functional`.

Array types: numpy (leading batch axes), JAX arrays (``jax.jit``, ``jax.vmap``, ``jax.grad``; the
model stays numpy, only the state and the matrices are traced) and CasADi SX/MX/DM (unbatched;
vectors as columns). Shapes and types are checked for every array type (a :class:`bridge.ShapeError`
naming the argument); finiteness only on values (numpy, concrete JAX arrays), not under tracing nor
for symbols. A numpy source that is BODY-based, with a target whose rate does not depend on the
pose (every neutral representation, and every declaration at the base origin), takes the in-place
numpy specialisation of :mod:`bridge.derivatives.chain` (the engines' path); everything else the
functional path.

This module is neutral: it names no library.
"""

from __future__ import annotations

from typing import Any

from bridge.conventions.change_of_variables import ChangeOfVariables
from bridge.conventions.convention import Convention
from bridge.conventions.convert import _f, same_batch, velocity_change
from bridge.conventions.declaration import BODY_VELOCITY
from bridge.conventions.registry import convention
from bridge.conventions.state import State
from bridge.derivatives import chain
from bridge.derivatives.functional import chain_blocks, forward_back, inverse_back, rate_table
from bridge.errors import InvalidValueError, ShapeError
from bridge.model.model import Model

__all__ = ["convert_dynamics_derivatives"]

_NAMES = {
    "inverse": ("dtau_dq", "dtau_dnu", "dtau_dnudot"),
    "forward": ("dnudot_dq", "dnudot_dnu", "dnudot_dtau"),
}


def convert_dynamics_derivatives(
    model: Model,
    state: State,
    derivatives: tuple[Any, Any, Any],
    source: object,
    target: object,
    *,
    acceleration: Any,
    force: Any,
    kind: str = "inverse",
) -> tuple[Any, Any, Any]:
    """Derivatives of the inverse (or forward) dynamics from convention ``source`` to ``target``.

    Args:
        model: the model (numpy constants).
        state: the state the derivatives were taken at (any representation; numpy, JAX or CasADi).
        derivatives: ``kind="inverse"``: ``(dtau_dq, dtau_dnu, dtau_dnudot)`` (..., nv, nv) in
            ``source`` (rows: generalized forces, columns: the tangent, velocity, acceleration);
            ``kind="forward"``: ``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` (..., nv, nv).
        source: the convention the derivatives are in: a name
            (:func:`bridge.conventions.registry.convention_names`) or a
            :class:`~bridge.conventions.convention.Convention`.
        target: the convention wanted (a name or a Convention).
        acceleration: the generalized acceleration (..., nv) in ``source`` at the point (the one
            inverse dynamics was evaluated at, or the forward dynamics' result).
        force: the generalized force (..., nv) in ``source`` at the point (inverse dynamics' result,
            or the force forward dynamics was evaluated at).
        kind: "inverse" or "forward".

    Returns:
        The three derivatives (..., nv, nv) in ``target``, in the namespace of the arguments:
        ``dtau_dq = T^T [D_q T + D_v[:, b] Y(nu) + M[:, b] (Y(nu_dot) + B_q)] + Z(tau)``,
        ``dtau_dnu = T^T [D_v T + M[:, b] B_nu]``, ``dtau_dnudot = T^T M T`` with ``nu_source = T
        nu_target`` (forward dynamics: :func:`bridge.derivatives.chain.forward_dynamics_derivatives_back`).

    Raises:
        ShapeError: an argument of the wrong shape (named).
        InvalidValueError: an unknown ``kind``; non-finite values (numpy or concrete JAX only).
    """
    if kind not in _NAMES:
        raise InvalidValueError(f"kind: expected 'inverse' or 'forward', got {kind!r}")
    conv_s, conv_t = _convention(source).bound(model), _convention(target).bound(model)
    cov = velocity_change(model, state, conv_t, conv_s)  # nu_source = T nu_target
    nv = model.nv
    if not isinstance(derivatives, (tuple, list)) or len(derivatives) != 3:
        raise ShapeError(f"derivatives: expected a tuple of three (..., {nv}, {nv}) matrices")
    mats = [_f(x, name, (nv, nv), cov) for x, name in zip(derivatives, _NAMES[kind], strict=True)]
    acc = _f(acceleration, "acceleration", (nv,), cov)
    frc = _f(force, "force", (nv,), cov)
    named = {name: (m, 2) for name, m in zip(_NAMES[kind], mats, strict=True)}
    *mats, acc, frc = same_batch(cov, **named, acceleration=(acc, 1), force=(frc, 1))  # (one batch)
    a_t = cov.acceleration_back(acc)  # the acceleration in the target
    H = state.world_H_base.matrix
    if _numpy_specialisation(cov, conv_s, conv_t):
        fn = (
            chain.inverse_dynamics_derivatives_back
            if kind == "inverse"
            else chain.forward_dynamics_derivatives_back
        )
        return fn(cov, H, conv_t.velocity, *mats, frc, a_t)
    blocks = _blocks(cov, H, conv_s, conv_t, frc, a_t)
    return (inverse_back if kind == "inverse" else forward_back)(cov, blocks, *mats)


def _convention(x: object) -> Convention:
    return x if isinstance(x, Convention) else convention(x)


def _numpy_specialisation(cov: ChangeOfVariables, conv_s: Convention, conv_t: Convention) -> bool:
    """Whether the numpy chain rule of :mod:`bridge.derivatives.chain` applies: numpy arrays, a BODY
    source in linear-first order, a target whose rate does not depend on the pose (its
    :func:`~bridge.derivatives.functional.rate_table`)."""
    return (
        cov.ops.name == "numpy"
        and conv_s.velocity == BODY_VELOCITY
        and rate_table(conv_t.velocity) is not None
    )


def _blocks(cov: ChangeOfVariables, H: Any, conv_s: Convention, conv_t: Convention, force: Any, a_t: Any):
    """:func:`bridge.derivatives.functional.chain_blocks` from ``target`` (1) to ``source`` (2), or
    None when T is constant (a fixed base, or the same base velocity up to the order of its halves)."""
    if not cov.floating or cov.X is None or conv_s.velocity.same_frame(conv_t.velocity):
        return None
    o = cov.ops
    L1_inv = conv_t.velocity.matrices(H, o, which=(False, True))[1]
    L2 = conv_s.velocity.matrices(H, o, which=(True, False))[0]
    nu_b, acc_b, f_b = (o.vpart(x, 0, 6) for x in (cov.nu, a_t, force))
    return chain_blocks(o, H, conv_t.velocity, conv_s.velocity, L2, L1_inv, nu_b, acc_b, f_b)
