"""Compiled kernel (numba) of the library engines' single-state mass matrix.

:class:`bridge.backends.single.SingleMatrixBack` takes a library's mass matrix ``M_t`` (nv, nv) of
one state back to the representation: base rows ``X^T M_t[:6]``, corner ``X^T M_t[:6, :6] X``, the
lower base block mirrored. In numpy that is six calls of half a microsecond each for a few hundred
flops; here it is one compiled call (the numpy path of the class is the reference the tests compare
it with).

Imported only when numba is installed (:func:`bridge.derivatives.select.compiled_kernels` says
so); compiled code is cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["base_columns", "base_congruence", "base_rows"]


@njit(cache=True)
def base_congruence(M: np.ndarray, X: np.ndarray, G: np.ndarray) -> None:
    """In place, ``M`` (nv, nv) symmetric -> ``T^T M T`` for ``T = blkdiag(X, 1)``, ``X`` (6, 6);
    ``G`` (6, nv) scratch."""
    nv = M.shape[0]
    for i in range(6):
        for j in range(nv):
            acc = 0.0
            for k in range(6):
                acc += X[k, i] * M[k, j]
            G[i, j] = acc
    for i in range(6):
        for j in range(6):
            acc = 0.0
            for k in range(6):
                acc += G[i, k] * X[k, j]
            M[i, j] = acc
        for j in range(6, nv):
            M[i, j] = G[i, j]
            M[j, i] = G[i, j]


@njit(cache=True)
def base_columns(J: np.ndarray, X: np.ndarray) -> None:
    """In place, ``J`` (m, nv) -> ``J T`` for ``T = blkdiag(X, 1)``, ``X`` (6, 6)."""
    row = np.empty(6)
    for i in range(J.shape[0]):
        for j in range(6):
            acc = 0.0
            for k in range(6):
                acc += J[i, k] * X[k, j]
            row[j] = acc
        for j in range(6):
            J[i, j] = row[j]


@njit(cache=True)
def base_rows(tau: np.ndarray, X: np.ndarray, out: np.ndarray) -> None:
    """``out = T^T tau`` (nv,) for ``T = blkdiag(X, 1)``, ``X`` (6, 6)."""
    out[6:] = tau[6:]
    for j in range(6):
        acc = 0.0
        for k in range(6):
            acc += tau[k] * X[k, j]
        out[j] = acc
