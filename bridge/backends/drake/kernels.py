"""Compiled kernels (numba) of the Drake engine's single state: a frame Jacobian in one call.

Drake's ``CalcJacobianSpatialVelocity`` gives a (6, nv) array in Fortran order, angular rows first;
:func:`columns_back` reads it as it is (its transpose, (nv, 6) in C order, no copy), puts the
linear rows first and takes it to the source's velocity by the state's ``T`` (the state array of
:class:`~bridge.backends.single.CompiledSingle`, joints permuted back) in one pass, where numpy's
``take`` and a kernel were two calls.

:func:`spatial_columns_back` serves the INERTIAL representation without the frame's pose: there a
frame's velocity and the base's are both the twist at the world origin in world axes, so a frame
moving with the base has the base's twist and the base block of its Jacobian ``J_I`` is the
identity. With ``J = J_M T`` the Jacobian of the frame's F[A] velocity (Drake's at the frame's
origin, world axes) taken to the INERTIAL velocity, ``J_I = F J`` for the (invertible) map ``F``
from F[A] to the spatial twist, and ``J[:, :6] = F^-1``: ``J_I = J[:, :6]^-1 J``, without the
``CalcRelativeTransform`` (the frame's pose) that asking Drake for the point at the world origin
needs. The 6 x 6 solve is Gaussian elimination with partial pivoting.

Imported only when numba is installed (the engine asks
:func:`bridge.derivatives.select.compiled_kernels`); compiled code is cached on disk
(``cache=True``). The kernels of :mod:`bridge.backends.single_kernels` are inlined
(``inline="always"``): after editing them, clear this package's ``__pycache__/*.nbi``/``*.nbc``.
"""

from __future__ import annotations

import numpy as np
from numba import float64, njit, types, void

from bridge._numba import kernel
from bridge.backends import single_kernels as sk

__all__ = ["columns_back", "spatial_columns_back"]

_V, _M = float64[::1], float64[:, ::1]
_RM = types.Array(float64, 2, "C", readonly=True)


@njit(cache=True, inline="always")
def _columns_back(Jt: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """``out = J T`` (6, nv), linear rows first, of Drake's ``J = Jt^T`` (angular rows first)."""
    nv = Jt.shape[0]
    for i in range(6):
        r = (i + 3) % 6  # (Drake's row of out's row i)
        for j in range(6, nv):
            out[i, j] = Jt[sk._order(state, j), r]
    X = sk._X(state, False)
    for i in range(6):
        r = (i + 3) % 6
        j0, j1, j2, j3, j4, j5 = Jt[0, r], Jt[1, r], Jt[2, r], Jt[3, r], Jt[4, r], Jt[5, r]
        for c in range(6):
            out[i, c] = (
                j0 * X[0, c] + j1 * X[1, c] + j2 * X[2, c] + j3 * X[3, c] + j4 * X[4, c] + j5 * X[5, c]
            )


@kernel([void(j, _V, _M) for j in (_M, _RM)])
def columns_back(Jt: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """``out = J T`` (6, nv) of Drake's frame Jacobian given as its transpose ``Jt`` (nv, 6)
    (angular columns first), the joints permuted back."""
    _columns_back(Jt, state, out)


@kernel([void(j, _V, _M) for j in (_M, _RM)])
def spatial_columns_back(Jt: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """``out = B^-1 J T`` (6, nv), ``B`` the base block of ``J T``: the INERTIAL Jacobian from
    Drake's F[A] one given as its transpose ``Jt`` (nv, 6) (module docstring)."""
    _columns_back(Jt, state, out)
    nv = out.shape[1]
    w = sk._work(state) + 72  # B in the state's scratch block (free after set_state)
    B = state[w : w + 36].reshape((6, 6))
    for i in range(6):
        for c in range(6):
            B[i, c] = out[i, c]
    for k in range(6):  # eliminate below and above the pivot: B -> I, out -> B^-1 out
        p = k
        for i in range(k + 1, 6):
            if abs(B[i, k]) > abs(B[p, k]):
                p = i
        if p != k:
            for c in range(6):
                B[k, c], B[p, c] = B[p, c], B[k, c]
            for c in range(nv):
                out[k, c], out[p, c] = out[p, c], out[k, c]
        d = 1.0 / B[k, k]
        for c in range(6):
            B[k, c] *= d
        for c in range(nv):
            out[k, c] *= d
        for i in range(6):
            if i != k and B[i, k] != 0.0:
                f = B[i, k]
                for c in range(6):
                    B[i, c] -= f * B[k, c]
                for c in range(nv):
                    out[i, c] -= f * out[k, c]
