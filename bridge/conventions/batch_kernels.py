"""Compiled kernels (numba) of the batched change of variables of a matrix, ``T^T M T``.

:meth:`bridge.conventions.change_of_variables.ChangeOfVariables.matrix_back` of a float64 numpy
batch (N, nv, nv) with a joint permutation in ``T = blkdiag(X, P)`` runs :func:`matrix_back_par`
(``prange`` over blocks of states, :func:`bridge._numba.launch`) or :func:`matrix_back_ser` here
when numba is usable (:func:`bridge._numba.enabled`); its numpy path is the reference the tests
compare them with. Per state (:func:`back_one`) the kernel reads the base rows and columns (the whole
matrix into a per-block scratch when there is a permutation), then writes the source matrix: the
joint block gathered through the permutation, the base rows ``X^T M_t[:6, p]``, the base columns
``M_t[p, :6] X`` and the base block ``(X^T M_t[:6, :6]) X``, in the numpy path's order of products.
The result may be the input itself (in place): only the scratch is extra.

(The Featherstone CRBA does not call these: it writes each matrix in the source convention as it
makes it, see :func:`bridge.backends.featherstone.numba_kernels._crba_stage`.) :func:`back_one` and
:func:`scratch` are inlined (``inline="always"``): a kernel of another module inlining them is not
recompiled when they change (delete its ``__pycache__/*.nbi`` and ``*.nbc``).

Arrays are indexed element by element (no per-state views: a view of an array shared by the
threads counts a reference atomically on one cache line, and two threads would then run at one
thread's speed); each block works on its own copy of the permutation.

This module imports numba at its top and is imported only through
:func:`bridge.conventions.change_of_variables.compiled_matrix_kernels` (or by the kernels that inline
it). Compiled code is cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from bridge._numba import named

__all__ = ["back_one", "matrix_back_par", "matrix_back_ser", "scratch"]

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}
_INL = {**_JIT, "inline": "always"}


@njit(**_INL)
def scratch(nv: int, permuted: bool) -> tuple:
    """The per-block scratch of :func:`back_one` (and the block's copy of the permutation, made by
    the caller): ``(S, R, C, Xn, Pr, Pc, Y)``."""
    return (
        np.empty((nv, nv) if permuted else (0, 0)),
        np.empty((6, nv)),
        np.empty((6, nv)),
        np.empty((6, 6)),
        np.empty((6, nv)),
        np.empty((6, nv)),
        np.empty((6, 6)),
    )


@njit(**_INL)
def back_one(M, out, n, X, p, nb, inplace, S, R, C, Xn, Pr, Pc, Y):
    """``out[n] = T^T M[n] T`` for one state n (see :func:`_matrix_back` for the arguments; ``p``
    the block's copy of the permutation, (0,) for none; the scratch from :func:`scratch`)."""
    nv = M.shape[1]
    NX = X.shape[0]
    if p.shape[0] > 0:  # the whole matrix into the scratch, then gathered into out
        for a in range(nv):
            for b in range(nv):
                S[a, b] = M[n, a, b]
        for a in range(nb, nv):
            pa = p[a]
            for b in range(nb, nv):
                out[n, a, b] = S[pa, p[b]]
        for c in range(nb):
            for b in range(nv):
                R[c, b] = S[c, p[b]]
                C[c, b] = S[p[b], c]
    else:
        if not inplace:
            for a in range(nb, nv):
                for b in range(nb, nv):
                    out[n, a, b] = M[n, a, b]
        for c in range(nb):
            for b in range(nv):
                R[c, b] = M[n, c, b]
        for b in range(nv):
            for c in range(nb):
                C[c, b] = M[n, b, c]
    if nb == 0:
        return
    if NX == 0:  # X the identity
        for c in range(6):
            for b in range(nv):
                out[n, c, b] = R[c, b]
        for b in range(nv):
            for c in range(6):
                out[n, b, c] = C[c, b]
        return
    xn = n if NX > 1 else 0
    for c in range(6):
        for r in range(6):
            Xn[c, r] = X[xn, c, r]
    # the base rows X^T R and the base columns (X^T C)^T at the joint entries (b >= 6), row by row
    # over contiguous entries
    Pr[:, :] = 0.0
    Pc[:, :] = 0.0
    for r in range(6):
        for c in range(6):
            x = Xn[c, r]
            for b in range(6, nv):
                Pr[r, b] += x * R[c, b]
                Pc[r, b] += x * C[c, b]
    for r in range(6):
        for b in range(6, nv):
            out[n, r, b] = Pr[r, b]
    for a in range(6, nv):
        for r in range(6):
            out[n, a, r] = Pc[r, a]
    for r in range(6):  # base block: (X^T M[:6, :6]) X
        for d in range(6):
            acc = 0.0
            for c in range(6):
                acc += Xn[c, r] * R[c, d]
            Y[r, d] = acc
    for r in range(6):
        for s in range(6):
            acc = 0.0
            for d in range(6):
                acc += Y[r, d] * Xn[d, s]
            out[n, r, s] = acc


def _matrix_back(M: np.ndarray, X: np.ndarray, perm: np.ndarray, nb: int, out: np.ndarray, nblk: int) -> None:
    """``out[n] = T^T M[n] T`` for the N states of ``M`` (N, nv, nv); ``out`` (N, nv, nv) is ``M``
    itself (in place) or an array not overlapping it.

    ``X`` (NX, 6, 6): the base block of every state (NX = N), of all states (NX = 1) or the identity
    (NX = 0); ``perm`` (nv,) int64: ``out[a, b]`` takes ``M[perm[a], perm[b]]`` before the base
    block (its first ``nb`` entries are 0..nb-1), or (0,) for no permutation; ``nb``: 6 (floating
    base) or 0. Without a permutation and in place, the joint block is not touched.
    """
    N, nv = M.shape[0], M.shape[1]
    permuted = perm.shape[0] > 0
    inplace = out.ctypes.data == M.ctypes.data
    for blk in prange(nblk):
        p = perm.copy()
        S, R, C, Xn, Pr, Pc, Y = scratch(nv, permuted)
        for n in range(blk * N // nblk, (blk + 1) * N // nblk):
            back_one(M, out, n, X, p, nb, inplace, S, R, C, Xn, Pr, Pc, Y)


matrix_back_par = njit(parallel=True, **_JIT)(named(_matrix_back, "_par"))
matrix_back_ser = njit(**_JIT)(named(_matrix_back, "_ser"))
