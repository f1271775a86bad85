"""Convert joint-space quantities between velocity conventions.

Conventions: "body", "inertial", "mixed" (base velocity representation, joints in the model's DOF
order) and "pinocchio" (LOCAL base velocity, Pinocchio's depth-first joint order). With
``nu_t = T nu_s`` (``T, T_dot = velocity_transform(model, state, s, t)``):

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

from bridge.model.model import Model
from bridge.state import State, structured_velocity_transform

__all__ = [
    "convert_acceleration",
    "convert_bias_forces",
    "convert_generalized_force",
    "convert_jacobian",
    "convert_mass_matrix",
    "convert_velocity",
]


def _nu(model: Model, state: State, source: object) -> np.ndarray:
    """The state's generalized velocity in ``source`` convention."""
    vt = structured_velocity_transform(model, state, state.representation, source)
    nu = state.nu if model.floating else state.s_dot
    return vt.apply(nu)


def convert_velocity(
    model: Model, state: State, nu: np.ndarray, source: object, target: object
) -> np.ndarray:
    """``nu_t = T nu_s``, (..., nv)."""
    return structured_velocity_transform(model, state, source, target).apply(np.asarray(nu, dtype=float))


def convert_acceleration(
    model: Model, state: State, nu_dot: np.ndarray, source: object, target: object
) -> np.ndarray:
    """``nu_dot_t = T nu_dot_s + T_dot nu_s``, (..., nv)."""
    vt = structured_velocity_transform(model, state, source, target)
    return vt.apply(np.asarray(nu_dot, dtype=float)) + vt.apply_derivative(_nu(model, state, source))


def convert_jacobian(model: Model, state: State, J: np.ndarray, source: object, target: object) -> np.ndarray:
    """``J_t = J_s T_{t->s}`` for (..., m, nv) Jacobians with ``v = J nu``."""
    return structured_velocity_transform(model, state, target, source).right_apply(np.asarray(J, dtype=float))


def convert_generalized_force(
    model: Model, state: State, tau: np.ndarray, source: object, target: object
) -> np.ndarray:
    """``tau_t = T_{t->s}^T tau_s`` for (..., nv) generalized forces (power-preserving)."""
    return structured_velocity_transform(model, state, target, source).transpose_apply(
        np.asarray(tau, dtype=float)
    )


def convert_mass_matrix(
    model: Model, state: State, M: np.ndarray, source: object, target: object
) -> np.ndarray:
    """``M_t = T_{t->s}^T M_s T_{t->s}`` for (..., nv, nv)."""
    return structured_velocity_transform(model, state, target, source).congruence(np.asarray(M, dtype=float))


def convert_bias_forces(
    model: Model, state: State, h: np.ndarray, M: np.ndarray, source: object, target: object
) -> np.ndarray:
    """Bias forces ``h_t = T_{t->s}^T (h_s + M_s T_dot_{t->s} nu_t)``, (..., nv).

    ``M`` is the mass matrix in the *source* convention.
    """
    vt = structured_velocity_transform(model, state, target, source)
    nu_t = _nu(model, state, target)
    a_s = vt.apply_derivative(nu_t)
    return vt.transpose_apply(
        np.asarray(h, dtype=float) + np.einsum("...ij,...j->...i", np.asarray(M, dtype=float), a_s)
    )
