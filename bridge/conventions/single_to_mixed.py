"""The base block of the change of variables of one unbatched state to MIXED: the single-state
hot path of engines whose convention is MIXED up to a state-dependent block (MuJoCo's free joint,
Drake's angular-first MIXED).

:func:`single_to_mixed` gives what ``change_of_variables(model, state, NEUTRAL[rep], MIXED)``
gives for the base of one state, written out in a few small products: the MIXED base velocity,
``X`` with ``nu_mixed_base = X nu_base``, its inverse and ``T_dot nu``'s base part. An engine whose
base velocity is ``L nu_mixed_base`` composes: ``X_t = L X``, and ``T_dot nu = L_dot nu_mixed_base
+ L (T_dot nu)``.

This module is neutral: it names no library.
"""

from __future__ import annotations

import numpy as np

from bridge.conventions.state import Representation

__all__ = ["single_to_mixed"]


def single_to_mixed(
    rep: Representation, H: np.ndarray, v: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """``(v_mixed, X, X_inv, bias)`` for one floating-base state: the base velocity (6,) in MIXED,
    the base block (6, 6) from ``rep`` to MIXED and its inverse (None for MIXED itself: the
    identity), and ``X_dot v``, the base part (6,) of ``T_dot nu`` (None when zero).

    With ``R = A_R_B``, ``p = A_o_B`` and ``v = (v_lin, omega)`` in ``rep`` (both linear first):

    * BODY: ``X = blkdiag(R, R)``, ``T_dot nu = (R (omega x v_lin), 0)`` (``d/dt R = R omega^``);
    * INERTIAL: ``X = [[1, -p^], [0, 1]]`` (``p_dot = v_lin + omega x p``), ``T_dot nu =
      (omega x p_dot, 0)`` (``d/dt -p^ = -p_dot^``);
    * MIXED: the identity, ``T_dot nu = 0``.

    Args:
        rep: the representation of ``v``.
        H: ``A_H_B`` (4, 4).
        v: the base velocity (6,) in ``rep``.
    """
    if rep is Representation.MIXED:
        return v, None, None, None
    vx, vy, vz, wx, wy, wz = v.tolist()
    X = np.eye(6)
    X_inv = np.eye(6)
    if rep is Representation.BODY:
        R = H[:3, :3]
        X[:3, :3] = X[3:, 3:] = R
        X_inv[:3, :3] = X_inv[3:, 3:] = R.T
        v_mixed = X.dot(v)
        bias = np.zeros(6)
        bias[:3] = R.dot((wy * vz - wz * vy, wz * vx - wx * vz, wx * vy - wy * vx))
        return v_mixed, X, X_inv, bias
    (_, _, _, px), (_, _, _, py), (_, _, _, pz), _ = H.tolist()
    X[:3, 3:] = ((0.0, pz, -py), (-pz, 0.0, px), (py, -px, 0.0))  # -p^
    X_inv[:3, 3:] = ((0.0, -pz, py), (pz, 0.0, -px), (-py, px, 0.0))  # p^
    ax, ay, az = vx + wy * pz - wz * py, vy + wz * px - wx * pz, vz + wx * py - wy * px  # p_dot
    v_mixed = np.array((ax, ay, az, wx, wy, wz))
    bias = np.array((wy * az - wz * ay, wz * ax - wx * az, wx * ay - wy * ax, 0.0, 0.0, 0.0))
    return v_mixed, X, X_inv, bias
