"""Compiled kernels (numba) of the base block of a single state's ``T = blkdiag(X, 1)``.

Every library engine's single-state path takes a library's results back to the representation
with the base block ``X`` (6, 6) of ``T``: its mass matrix ``T^T M T`` (:func:`base_congruence`,
:func:`congruence_rows`), a Jacobian's base columns ``J T`` (:func:`base_columns`) and a
generalized force's base rows ``T^T tau`` (:func:`base_force`, :func:`base_rows`). In numpy each
is several calls of half a microsecond each for a few hundred flops; here it is one compiled call.
:class:`bridge.backends.single.SingleMatrixBack` (MuJoCo, Drake) calls them with the ``X`` of
:class:`~bridge.conventions.single_state.SingleStateChange`, :mod:`bridge.backends.pinocchio.kernels`
with the ``X`` its ``set_state`` kernel evaluates (the joints permuted there too); the numpy paths
are the reference the tests compare them with.

Imported only when numba is installed (:func:`bridge.derivatives.select.compiled_kernels` says
so); compiled code is cached on disk (``cache=True``). Each kernel is inlined into its callers
(``inline="always"``: a call between numba functions of two modules costs ~0.1 us, as much as the
corner's products); numba's cache of a caller in another module does not see a change here: clear
its ``__pycache__/*.nbi``/``*.nbc`` files after editing.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["base_columns", "base_congruence", "base_force", "base_rows", "congruence_rows"]


@njit(cache=True, inline="always")
def congruence_rows(M: np.ndarray, X: np.ndarray, G: np.ndarray, C: np.ndarray) -> None:
    """``G[:, :nv] = X^T M[:6]`` (6, nv) and ``C = X^T M[:6, :6] X`` (6, 6) of a symmetric ``M``
    (nv, nv), its upper triangle read (``M`` itself not written); ``X`` (6, 6), its zeros skipped
    (half of a block-diagonal ``X``)."""
    nv = M.shape[0]
    for r in range(6):
        first = True  # (the first term is written, the others added: no pass to zero G)
        for k in range(6):
            x = X[k, r]
            if x == 0.0:
                continue
            if first:
                for j in range(6):
                    G[r, j] = x * (M[k, j] if k <= j else M[j, k])
                for j in range(6, nv):
                    G[r, j] = x * M[k, j]
                first = False
            else:
                for j in range(6):
                    G[r, j] += x * (M[k, j] if k <= j else M[j, k])
                for j in range(6, nv):
                    G[r, j] += x * M[k, j]
        if first:  # a zero column of X
            for j in range(nv):
                G[r, j] = 0.0
    for r in range(6):
        for j in range(6):
            C[r, j] = (
                G[r, 0] * X[0, j]
                + G[r, 1] * X[1, j]
                + G[r, 2] * X[2, j]
                + G[r, 3] * X[3, j]
                + (G[r, 4] * X[4, j] + G[r, 5] * X[5, j])
            )


@njit(cache=True, inline="always")
def base_congruence(M: np.ndarray, X: np.ndarray, G: np.ndarray, C: np.ndarray) -> None:
    """In place, ``M`` (nv, nv) symmetric (upper triangle read) -> ``T^T M T`` (full) for ``T =
    blkdiag(X, 1)``, ``X`` (6, 6); ``G`` (6, nv) and ``C`` (6, 6) scratch."""
    congruence_rows(M, X, G, C)
    for r in range(6):
        for j in range(6):
            M[r, j] = C[r, j]
        for j in range(6, M.shape[0]):
            M[r, j] = G[r, j]
            M[j, r] = G[r, j]


@njit(cache=True, inline="always")
def base_columns(J: np.ndarray, X: np.ndarray, out: np.ndarray) -> None:
    """``out[:, :6] = J[:, :6] X`` for ``J`` (m, nv), ``X`` (6, 6) (``out`` may be ``J``: ``J T``
    in place for ``T = blkdiag(X, 1)``)."""
    for i in range(J.shape[0]):
        j0, j1, j2, j3, j4, j5 = J[i, 0], J[i, 1], J[i, 2], J[i, 3], J[i, 4], J[i, 5]
        for c in range(6):
            out[i, c] = (
                j0 * X[0, c] + j1 * X[1, c] + j2 * X[2, c] + j3 * X[3, c] + j4 * X[4, c] + j5 * X[5, c]
            )


@njit(cache=True, inline="always")
def base_force(x: np.ndarray, X: np.ndarray, out: np.ndarray) -> None:
    """``out[:6] = X^T x[:6]`` for ``x`` (nv,), ``X`` (6, 6) (``out`` may be ``x``)."""
    h0, h1, h2, h3, h4, h5 = x[0], x[1], x[2], x[3], x[4], x[5]
    for r in range(6):
        out[r] = X[0, r] * h0 + X[1, r] * h1 + X[2, r] * h2 + X[3, r] * h3 + X[4, r] * h4 + X[5, r] * h5


@njit(cache=True, inline="always")
def base_rows(tau: np.ndarray, X: np.ndarray, out: np.ndarray) -> None:
    """``out = T^T tau`` (nv,) for ``T = blkdiag(X, 1)``, ``X`` (6, 6) (``tau`` read only)."""
    out[6:] = tau[6:]
    base_force(tau, X, out)
