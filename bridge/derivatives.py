"""Derivatives of the dynamics in any representation: the tangent of the configuration and the
chain-rule terms of the change of variables (docs/theory.md, "Derivatives of the dynamics").

**Tangent.** A derivative "with respect to q" is taken along ``delta = (delta_base, delta_s)``
(..., nv): the first-order change when the robot moves with generalized velocity ``delta`` in the
representation W for unit time. Joints move by ``s + delta_s``; the base pose ``H = (R, o)`` moves by

* BODY: ``H exp(delta_base^)`` (the twist in base coordinates);
* INERTIAL: ``exp(delta_base^) H`` (the twist in world coordinates);
* MIXED: ``o + delta_p`` and ``exp(delta_theta^) R`` (both in world axes).

:func:`retract` is that motion, exactly. Velocities and accelerations are held fixed in W
coordinates, and external wrenches in the frame the representation gives them (F, A or F[A]).

**Chain rule.** An engine computing in a BODY-based convention (``nu_t = T nu``, ``T =
blkdiag(X, P)``, ``X = B_X_W``, P any joint permutation, e.g. Pinocchio's) gives the derivatives of
its own dynamics at fixed target velocity and acceleration. Because T depends on the base pose and
``T_dot nu`` on the pose and the velocity, the derivatives in W are not ``T^T D T``:
:func:`inverse_dynamics_derivatives_back` and :func:`forward_dynamics_derivatives_back` add the
terms, each a (..., 6, 6) block on the base rows or columns (:func:`rate_matrix`,
:func:`rate_transpose_matrix`, :func:`bias_position_matrix`, :func:`bias_velocity_matrix`), and
apply T by blocks and index permutations, never forming dense (nv, nv) products with T. External
wrenches held fixed in A or F[A] add ``J^T K J`` (:func:`wrench_position_matrix`) to an engine's
derivative that holds them fixed in the body.

This module is neutral: it names no library.
"""

from __future__ import annotations

import numpy as np

from bridge.change_of_variables import ChangeOfVariables
from bridge.spatial.so3 import skew, so3_exp, so3_left_jacobian
from bridge.spatial.vectors import crm
from bridge.state import Representation

__all__ = [
    "bias_position_matrix",
    "bias_velocity_matrix",
    "force_cross_matrix",
    "forward_dynamics_derivatives_back",
    "inverse_dynamics_derivatives_back",
    "rate_matrix",
    "rate_transpose_matrix",
    "retract",
    "wrench_position_matrix",
    "wrench_position_term",
]

_BODY, _INERTIAL, _MIXED = Representation.BODY, Representation.INERTIAL, Representation.MIXED


# --------------------------------------------------------------------------- the tangent
def retract(
    world_H_base: np.ndarray, s: np.ndarray, delta: np.ndarray, representation: object
) -> tuple[np.ndarray, np.ndarray]:
    """The configuration reached by moving with generalized velocity ``delta`` for unit time.

    Args:
        world_H_base: base poses (..., 4, 4).
        s: joint positions (..., n).
        delta: (..., 6 + n) (floating base: base part first, in ``representation``) or (..., n)
            (the base does not move).
        representation: the representation W of ``delta``'s base part.

    Returns:
        ``(world_H_base', s')`` with the broadcast batch axes: BODY ``H exp(d^)``, INERTIAL
        ``exp(d^) H``, MIXED ``(exp(d_theta^) R, o + d_p)``; ``s' = s + delta_s``.
    """
    rep = Representation.parse(representation)
    H = np.asarray(world_H_base, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    n = s.shape[-1]
    s_new = s + delta[..., delta.shape[-1] - n :]
    if delta.shape[-1] == n:
        lead = np.broadcast_shapes(H.shape[:-2], delta.shape[:-1])
        return np.broadcast_to(H, (*lead, 4, 4)).copy(), s_new
    d = delta[..., :6]
    if rep is _MIXED:
        lead = np.broadcast_shapes(H.shape[:-2], d.shape[:-1])
        out = np.zeros((*lead, 4, 4))
        out[..., :3, :3] = so3_exp(d[..., 3:]) @ H[..., :3, :3]
        out[..., :3, 3] = H[..., :3, 3] + d[..., :3]
        out[..., 3, 3] = 1.0
        return out, s_new
    E = np.zeros((*d.shape[:-1], 4, 4))  # the SE(3) exponential of the twist d (linear first)
    E[..., :3, :3] = so3_exp(d[..., 3:])
    E[..., :3, 3] = np.einsum("...ij,...j->...i", so3_left_jacobian(d[..., 3:]), d[..., :3])
    E[..., 3, 3] = 1.0
    return (H @ E if rep is _BODY else E @ H), s_new


# --------------------------------------------------------------------------- 6x6 blocks
def force_cross_matrix(f: np.ndarray) -> np.ndarray:
    """``K(f)`` (..., 6, 6) with ``K(f) a = a x* f = -crm(a)^T f`` for motions a, forces f (..., 6):
    ``[[0, -f_lin^], [-f_lin^, -f_ang^]]``."""
    f = np.asarray(f, dtype=np.float64)
    out = np.zeros((*f.shape[:-1], 6, 6))
    F = skew(f[..., :3])
    out[..., :3, 3:] = -F
    out[..., 3:, :3] = -F
    out[..., 3:, 3:] = -skew(f[..., 3:])
    return out


def _base_X(H: np.ndarray, rep: Representation) -> np.ndarray:
    """``B_X_W`` (..., 6, 6) of a pose (W = A or B[A])."""
    Rt = np.swapaxes(H[..., :3, :3], -1, -2)
    X = np.zeros((*H.shape[:-2], 6, 6))
    X[..., :3, :3] = Rt
    X[..., 3:, 3:] = Rt
    if rep is _INERTIAL:
        X[..., :3, 3:] = -Rt @ skew(H[..., :3, 3])
    return X


def rate_matrix(H: np.ndarray, y: np.ndarray, rep: Representation) -> np.ndarray | None:
    """``Y`` (..., 6, 6) with ``Y delta_base = (dX[delta]) y``: the change of ``X = B_X_W`` along the
    tangent ``delta`` applied to a fixed (..., 6) vector ``y`` (None for BODY, where X is constant).

    INERTIAL: ``dX[delta] = -crm(X delta) X``, so ``Y = crm(X y) X``. MIXED: ``dX[delta] =
    -blkdiag(R^T dth^, R^T dth^)``, so ``Y = [[0, R^T y_lin^], [0, R^T y_ang^]]``.
    """
    if rep is _BODY:
        return None
    if rep is _INERTIAL:
        X = _base_X(H, rep)
        return crm(np.einsum("...ij,...j->...i", X, y)) @ X
    Rt = np.swapaxes(H[..., :3, :3], -1, -2)
    lead = np.broadcast_shapes(Rt.shape[:-2], y.shape[:-1])
    out = np.zeros((*lead, 6, 6))
    out[..., :3, 3:] = Rt @ skew(y[..., :3])
    out[..., 3:, 3:] = Rt @ skew(y[..., 3:])
    return out


def rate_transpose_matrix(H: np.ndarray, f: np.ndarray, rep: Representation) -> np.ndarray | None:
    """``Z`` (..., 6, 6) with ``Z delta_base = (dX[delta])^T f`` for a fixed (..., 6) force ``f``
    (None for BODY). INERTIAL: ``Z = X^T K(f) X``; MIXED: ``Z = [[0, -(R f_lin)^], [0, -(R f_ang)^]]``."""
    if rep is _BODY:
        return None
    if rep is _INERTIAL:
        X = _base_X(H, rep)
        return np.swapaxes(X, -1, -2) @ force_cross_matrix(f) @ X
    R = H[..., :3, :3]
    lead = np.broadcast_shapes(R.shape[:-2], f.shape[:-1])
    out = np.zeros((*lead, 6, 6))
    out[..., :3, 3:] = -skew(np.einsum("...ij,...j->...i", R, f[..., :3]))
    out[..., 3:, 3:] = -skew(np.einsum("...ij,...j->...i", R, f[..., 3:]))
    return out


def bias_position_matrix(H: np.ndarray, nu_base: np.ndarray, rep: Representation) -> np.ndarray | None:
    """The derivative (..., 6, 6) of the base part of ``T_dot nu`` along ``delta_base`` at fixed
    ``nu``. Zero (None) for BODY and INERTIAL (where ``T_dot nu = 0`` identically); MIXED:
    ``T_dot nu = (-R^T (w x v), 0)`` with ``nu_base = (v, w)``, whose derivative is
    ``[[0, -R^T (w x v)^], [0, 0]]``."""
    if rep is not _MIXED:
        return None
    Rt = np.swapaxes(H[..., :3, :3], -1, -2)
    wxv = np.cross(nu_base[..., 3:], nu_base[..., :3])
    lead = np.broadcast_shapes(Rt.shape[:-2], nu_base.shape[:-1])
    out = np.zeros((*lead, 6, 6))
    out[..., :3, 3:] = -Rt @ skew(wxv)
    return out


def bias_velocity_matrix(H: np.ndarray, nu_base: np.ndarray, rep: Representation) -> np.ndarray | None:
    """The derivative (..., 6, 6) of the base part of ``T_dot nu`` with respect to the base velocity
    ``nu_base = (v, w)`` (None for BODY and INERTIAL); MIXED: ``[[-R^T w^, R^T v^], [0, 0]]``."""
    if rep is not _MIXED:
        return None
    Rt = np.swapaxes(H[..., :3, :3], -1, -2)
    lead = np.broadcast_shapes(Rt.shape[:-2], nu_base.shape[:-1])
    out = np.zeros((*lead, 6, 6))
    out[..., :3, :3] = -Rt @ skew(nu_base[..., 3:])
    out[..., :3, 3:] = Rt @ skew(nu_base[..., :3])
    return out


def wrench_position_matrix(f: np.ndarray, rep: Representation) -> np.ndarray | None:
    """``K`` (..., 6, 6) such that a wrench ``f`` held fixed in the representation's frame C of a
    frame F (F, A or F[A]) adds ``J_C^T K J_C`` to ``d tau / d q`` of inverse dynamics, on top of
    the derivative at a wrench fixed in the body (``J_C`` (..., 6, nv) the Jacobian of C, its rows
    in C, its columns in any velocity coordinates, the same as the derivative's). None for BODY;
    INERTIAL ``K(f)``; MIXED ``K(f)`` with its linear columns zeroed (the wrench translates with F)."""
    if rep is _BODY:
        return None
    K = force_cross_matrix(f)
    if rep is _MIXED:
        K[..., :, :3] = 0.0
    return K


def wrench_position_term(J: np.ndarray, f: np.ndarray, rep: Representation) -> np.ndarray | None:
    """``J^T K J`` (..., nv, nv) of :func:`wrench_position_matrix` (None for BODY)."""
    K = wrench_position_matrix(f, rep)
    if K is None:
        return None
    if rep is _MIXED:  # only the angular columns of K: J^T (K[:, 3:] J[3:])
        return np.swapaxes(J, -1, -2) @ (K[..., :, 3:] @ J[..., 3:, :])
    return np.swapaxes(J, -1, -2) @ (K @ J)


# --------------------------------------------------------------------------- T by blocks
def _cols_T(cov: ChangeOfVariables, A: np.ndarray) -> np.ndarray:
    """``A T`` (..., m, nv): base columns times X, joint columns permuted (a new array)."""
    return cov.jacobian_back(A)


def _cols_T_inv_T(cov: ChangeOfVariables, A: np.ndarray) -> np.ndarray:
    """``A T^-T`` (..., m, nv)."""
    back = cov.joints.back
    out = A[..., back] if back is not None else A.copy()
    if cov.X is not None:
        out[..., :6] = A[..., :6] @ np.swapaxes(cov._base_inv(), -1, -2)
    return out


def _rows_T_T(cov: ChangeOfVariables, A: np.ndarray) -> np.ndarray:
    """``T^T A`` (..., nv, m): base rows times X^T, joint rows permuted (a new array)."""
    back = cov.joints.back
    out = A[..., back, :] if back is not None else A.copy()
    if cov.X is not None:
        out[..., :6, :] = np.swapaxes(cov.X, -1, -2) @ A[..., :6, :]
    return out


def _rows_T_inv(cov: ChangeOfVariables, A: np.ndarray) -> np.ndarray:
    """``T^-1 A`` (..., nv, m)."""
    back = cov.joints.back
    out = A[..., back, :] if back is not None else A.copy()
    if cov.X is not None:
        out[..., :6, :] = cov._base_inv() @ A[..., :6, :]
    return out


def _add(out: np.ndarray, rows: slice, cols: slice, term: np.ndarray | None) -> np.ndarray:
    """``out[..., rows, cols] += term`` (broadcasting out's batch axes if the term has more)."""
    if term is None:
        return out
    shape = np.broadcast_shapes(out.shape, (*term.shape[:-2], *out.shape[-2:]))
    if shape != out.shape:
        out = np.broadcast_to(out, shape).copy()
    out[..., rows, cols] += term
    return out


_B = slice(0, 6)
_ALL = slice(None)


def inverse_dynamics_derivatives_back(
    cov: ChangeOfVariables,
    world_H_base: np.ndarray,
    rep: Representation,
    dtau_dq_t: np.ndarray,
    dtau_dv_t: np.ndarray,
    M_t: np.ndarray,
    tau_t: np.ndarray,
    nu_dot: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The derivatives of ``ID^W = T^T ID_t(q, T nu, T nu_dot + T_dot nu)`` in W.

    Args:
        cov: the change of variables from W to a BODY-based target convention (``X = B_X_W``), at
            the state (its ``nu`` is the velocity in W).
        world_H_base: base poses (..., 4, 4).
        rep: W.
        dtau_dq_t, dtau_dv_t, M_t: the target engine's derivatives (..., nv, nv) of its inverse
            dynamics with respect to its tangent, velocity and acceleration (in its order).
        tau_t: its inverse dynamics (..., nv) at the state (a generalized force in the target).
        nu_dot: the acceleration in W (..., nv).

    Returns:
        ``(dtau_dq, dtau_dnu, dtau_dnudot)`` (..., nv, nv) in W, q along :func:`retract`'s tangent:
        ``dtau_dq = T^T [D_q T + D_v[:, b] Y(nu) + M_t[:, b] (Y(nu_dot) + B_q)] + Z(tau_t)``,
        ``dtau_dnu = T^T [D_v T + M_t[:, b] B_nu]``, ``dtau_dnudot = T^T M_t T`` (b the base columns,
        Y :func:`rate_matrix`, Z :func:`rate_transpose_matrix`, B :func:`bias_position_matrix`,
        :func:`bias_velocity_matrix`).
    """
    dq = _cols_T(cov, dtau_dq_t)
    dnu = _cols_T(cov, dtau_dv_t)
    if cov.floating and rep is not _BODY:
        H, nu = world_H_base, cov.nu
        Y_nu = rate_matrix(H, nu[..., :6], rep)
        inner = rate_matrix(H, nu_dot[..., :6], rep)
        Bq = bias_position_matrix(H, nu[..., :6], rep)
        if Bq is not None:
            inner = inner + Bq
        dq = _add(dq, _ALL, _B, dtau_dv_t[..., :, :6] @ Y_nu + M_t[..., :, :6] @ inner)
        Bnu = bias_velocity_matrix(H, nu[..., :6], rep)
        if Bnu is not None:
            dnu = _add(dnu, _ALL, _B, M_t[..., :, :6] @ Bnu)
        dq = _rows_T_T(cov, dq)
        dq = _add(dq, _B, _B, rate_transpose_matrix(H, tau_t[..., :6], rep))
    else:
        dq = _rows_T_T(cov, dq)
    return dq, _rows_T_T(cov, dnu), cov.matrix_back(M_t)


def forward_dynamics_derivatives_back(
    cov: ChangeOfVariables,
    world_H_base: np.ndarray,
    rep: Representation,
    da_dq_t: np.ndarray,
    da_dv_t: np.ndarray,
    M_inv_t: np.ndarray,
    tau_t: np.ndarray,
    nu_dot: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The derivatives of ``FD^W = T^-1 (FD_t(q, T nu, T^-T tau) - T_dot nu)`` in W.

    Args:
        cov, world_H_base, rep: as in :func:`inverse_dynamics_derivatives_back`.
        da_dq_t, da_dv_t, M_inv_t: the target engine's derivatives (..., nv, nv) of its forward
            dynamics with respect to its tangent, velocity and generalized force.
        tau_t: the generalized force in the target (..., nv) (``T^-T tau``).
        nu_dot: the acceleration in W (..., nv) (the forward dynamics at the state).

    Returns:
        ``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` (..., nv, nv) in W:
        ``dnudot_dq = T^-1 [A_q T + A_v[:, b] Y(nu) - M_t^-1[:, b] X^-T Z(tau_t) - (Y(nu_dot) + B_q)_bb]``,
        ``dnudot_dnu = T^-1 [A_v T - (B_nu)_bb]``, ``dnudot_dtau = T^-1 M_t^-1 T^-T``.
    """
    dq = _cols_T(cov, da_dq_t)
    dnu = _cols_T(cov, da_dv_t)
    if cov.floating and rep is not _BODY:
        H, nu = world_H_base, cov.nu
        Y_nu = rate_matrix(H, nu[..., :6], rep)
        Z = rate_transpose_matrix(H, tau_t[..., :6], rep)
        XiT = np.swapaxes(cov._base_inv(), -1, -2)
        dq = _add(dq, _ALL, _B, da_dv_t[..., :, :6] @ Y_nu - M_inv_t[..., :, :6] @ (XiT @ Z))
        inner = rate_matrix(H, nu_dot[..., :6], rep)
        Bq = bias_position_matrix(H, nu[..., :6], rep)
        if Bq is not None:
            inner = inner + Bq
        dq = _add(dq, _B, _B, -inner)
        Bnu = bias_velocity_matrix(H, nu[..., :6], rep)
        if Bnu is not None:
            dnu = _add(dnu, _B, _B, -Bnu)
    return _rows_T_inv(cov, dq), _rows_T_inv(cov, dnu), _rows_T_inv(cov, _cols_T_inv_T(cov, M_inv_t))
