"""Derivatives of inverse and forward dynamics by differences, for engines without analytical ones.

What :mod:`bridge.derivatives.select` picks for an engine without the ``body_derivatives``
capability, so every engine has them. All perturbed states go to the engine as ONE batch (one ``set_state``,
one ``inverse_dynamics`` call; batched engines run it vectorised), then the engine's state is set
back. Along the tangent of :func:`bridge.derivatives.retract` (docs/theory.md, "Derivatives of the
dynamics"):

* ``dtau_dq``: the five-point central difference (fourth order) with step ``Q_STEP`` on every
  tangent direction (4 nv inverse dynamics). Its truncation error is ``h^4/30`` times the fifth
  derivative and its rounding error about ``eps |tau| / h``: measured on iCub and random models
  against Pinocchio's analytical derivatives, 1e-11..1e-12 relative (norm-wise);
* ``dtau_dnu``: inverse dynamics is quadratic in ``nu`` in every representation (``T_dot nu`` is
  quadratic, ``T`` does not depend on ``nu``), so the two-point central difference is exact but for
  rounding, whatever the step: step ``V_STEP`` (2 nv inverse dynamics), 1e-14 relative;
* ``dtau_dnudot``: the engine's mass matrix (exact).

Forward dynamics follows from ``ID(q, nu, FD(q, nu, tau)) = tau`` (implicit function theorem):
``dnudot_dq = -M^-1 dtau_dq``, ``dnudot_dnu = -M^-1 dtau_dnu``, ``dnudot_dtau = M^-1``, with the
inverse dynamics derivatives at the forward dynamics' acceleration; the same accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.conventions.state import State
from bridge.derivatives.chain import retract
from bridge.spatial import Transform

__all__ = ["Q_STEP", "V_STEP", "forward_dynamics_derivatives", "inverse_dynamics_derivatives"]

#: step of the five-point difference along the configuration tangent
Q_STEP = 1e-3
#: step of the (exact) central difference in the generalized velocity
V_STEP = 1.0

_STENCIL = np.array([-2.0, -1.0, 1.0, 2.0])
_WEIGHTS = np.array([1.0, -8.0, 8.0, -1.0]) / 12.0


def inverse_dynamics_derivatives(
    engine, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None, gravity: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dtau_dq, dtau_dnu, dtau_dnudot)`` (..., nv, nv) of ``engine`` (any engine of the protocol)
    by differences; the engine's state is the same afterwards."""
    state: State = engine.state
    model = engine.model
    rep = engine.representation
    nv, n = model.nv, model.n_dofs
    nq = model.n_positions
    nb = nv - n
    M = engine.mass_matrix()
    H = state.world_H_base.matrix
    batch = np.broadcast_shapes(
        H.shape[:-2],
        state.s.shape[:-1],
        state.s_dot.shape[:-1],
        state.base_velocity.shape[:-1],
        gravity.shape[:-1],
        nu_dot.shape[:-1],
        *(w.shape[:-1] for w in (wrenches or {}).values()),
    )
    eye = np.eye(nv)
    k = len(_STENCIL)
    # configuration: k * nv points along the tangent; velocity: 2 * nv points
    dq = (_STENCIL[:, None, None] * Q_STEP * eye).reshape(k * nv, nv)
    H_q, s_q = retract(H[..., None, :, :], state.s[..., None, :], dq, rep, layout=model)
    s_dot = np.broadcast_to(state.s_dot, (*batch, n))
    nu = np.concatenate([np.broadcast_to(state.base_velocity, (*batch, 6)), s_dot], -1) if nb else s_dot
    nu_v = nu[..., None, :] + (np.array([-V_STEP, V_STEP])[:, None, None] * eye).reshape(2 * nv, nv)
    m = k * nv + 2 * nv
    lead = (*batch, m)
    Hs = np.empty((*lead, 4, 4))
    Hs[..., : k * nv, :, :] = np.broadcast_to(H_q, (*batch, k * nv, 4, 4))
    Hs[..., k * nv :, :, :] = np.broadcast_to(H[..., None, :, :], (*batch, 2 * nv, 4, 4))
    ss = np.empty((*lead, nq))
    ss[..., : k * nv, :] = np.broadcast_to(s_q, (*batch, k * nv, nq))
    ss[..., k * nv :, :] = np.broadcast_to(state.s[..., None, :], (*batch, 2 * nv, nq))
    nus = np.empty((*lead, nv))
    nus[..., : k * nv, :] = np.broadcast_to(nu[..., None, :], (*batch, k * nv, nv))
    nus[..., k * nv :, :] = np.broadcast_to(nu_v, (*batch, 2 * nv, nv))
    base_v = nus[..., :nb] if nb else np.zeros((*lead, 6))
    perturbed = State(
        Transform(Hs, check=False), ss, base_v, nus[..., nb:], rep, check=False, layout=state.layout
    )
    w_big = None
    if wrenches:
        w_big = {name: np.broadcast_to(w[..., None, :], (*lead, 6)) for name, w in wrenches.items()}
    try:
        engine.set_state(perturbed, np.broadcast_to(gravity[..., None, :], (*lead, 3)))
        tau = engine.inverse_dynamics(np.broadcast_to(nu_dot[..., None, :], (*lead, nv)), w_big)
    finally:
        engine.set_state(state, gravity)
    tq = tau[..., : k * nv, :].reshape(*batch, k, nv, nv)
    dtau_dq = np.einsum("k,...kji->...ij", _WEIGHTS / Q_STEP, tq)
    tv = tau[..., k * nv :, :].reshape(*batch, 2, nv, nv)
    dtau_dnu = np.swapaxes(tv[..., 1, :, :] - tv[..., 0, :, :], -1, -2) / (2.0 * V_STEP)
    return dtau_dq, dtau_dnu, np.broadcast_to(M, (*batch, nv, nv)).copy()


def forward_dynamics_derivatives(
    engine, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None, gravity: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` (..., nv, nv) of ``engine`` from its inverse
    dynamics derivatives at ``FD(tau)`` (implicit function theorem)."""
    nu_dot = engine.forward_dynamics(tau, wrenches)
    dq, dnu, M = inverse_dynamics_derivatives(engine, nu_dot, wrenches, gravity)
    M_inv = np.linalg.inv(M)
    M_inv = 0.5 * (M_inv + np.swapaxes(M_inv, -1, -2))
    return -(M_inv @ dq), -(M_inv @ dnu), M_inv
