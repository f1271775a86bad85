"""Compiled (numba) CRBA of a batch for joints of any width (planar, ball, free anywhere).

The compiled specialisation of :func:`.general.crba`: the same composite inertias
``I^c_parent += I^c_i`` (world coordinates, about the world origin, linear first) and blocks
``M_ij = S_w,i^T I^c_i S_w,j`` for j on i's path to the base, over the bodies of a
:class:`~.general.GeneralTree` packed once per model into flat arrays (:class:`.general_compiled.
PackedTree`): the parent of each body and its joint's velocities as a start and a width (0 to 6).

:func:`crba_par` (``prange`` over blocks of states) and :func:`crba_ser` (one block) take, per state
n, the world motion subspaces of every body side by side, ``S[n]`` (6, nv), the world inertias
``I[n]`` (nb, 6, 6) and write ``M[n]`` (nv, nv) whole. Two optional arguments let the caller fold a
block-diagonal change of variables ``T`` (whole joints permuted, each joint's velocities mapped by
its own block ``D_i``) into the kernel, giving ``T^T (M + A) T`` with the armature ``A`` directly:

* ``col`` (nv,): the row and column of the result of each of the tree's velocities (``S`` holds its
  columns in that order: ``S = S_w T`` for a change of variables, ``S_w`` with ``col = arange``);
* ``D`` (N, nv, 6): row r of T within its joint's block (``D[n, r, c] = T[r, col[start + c]]`` for
  the joint of velocities ``start .. start + width``), read only for the armature (``D_i^T a_i D_i``);
  an array of shape (0, 0, 6) is the identity.

This module imports numba at its top and is imported only through :mod:`.general_compiled`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from bridge._numba import named

from .numba_kernels import _JIT

__all__ = ["crba_par", "crba_ser"]

#: the width of a spatial vector (linear first, then angular)
SIX = 6


def _crba(
    parent: np.ndarray,
    start: np.ndarray,
    width: np.ndarray,
    arm: np.ndarray,
    col: np.ndarray,
    S: np.ndarray,
    I: np.ndarray,  # noqa: E741 (the inertias, as in the algorithm)
    D: np.ndarray,
    M: np.ndarray,
    nblk: int,
) -> None:
    """``M[n]`` (nv, nv) for the N states of ``S`` (N, 6, nv) and ``I`` (N, nb, 6, 6), ``nblk``
    blocks of states; ``parent``, ``start``, ``width`` (nb,) int64 and ``arm`` (nb,) the packed tree
    (bodies in depth-first order, body 0 the base); ``col``, ``D``: see the module docstring."""
    N, nb, nv = M.shape[0], parent.shape[0], M.shape[1]
    identity = D.shape[0] == 0
    for blk in prange(nblk):
        Ic = np.empty((nb, SIX, SIX))  # composite inertias of one state
        F = np.empty((SIX, SIX))  # I^c_i S_i, (6, width_i)
        for n in range(blk * N // nblk, (blk + 1) * N // nblk):
            for i in range(nb):
                for r in range(SIX):
                    for c in range(SIX):
                        Ic[i, r, c] = I[n, i, r, c]
            for i in range(nb - 1, 0, -1):  # leaves first: each body's subtree into its parent
                p = parent[i]
                for r in range(SIX):
                    for c in range(SIX):
                        Ic[p, r, c] += Ic[i, r, c]
            for r in range(nv):
                for c in range(nv):
                    M[n, r, c] = 0.0
            for i in range(nb):
                k = width[i]
                if k == 0:
                    continue
                s0 = start[i]
                for r in range(SIX):  # F = I^c_i S_i
                    for c in range(k):
                        acc = 0.0
                        for x in range(SIX):
                            acc += Ic[i, r, x] * S[n, x, col[s0 + c]]
                        F[r, c] = acc
                j = i  # M_ji = S_j^T F for j = i and up the path
                while j >= 0:
                    kj = width[j]
                    if kj:
                        t0 = start[j]
                        for a in range(kj):
                            ra = col[t0 + a]
                            for c in range(k):
                                acc = 0.0
                                for x in range(SIX):
                                    acc += S[n, x, ra] * F[x, c]
                                cc = col[s0 + c]
                                M[n, ra, cc] = acc
                                M[n, cc, ra] = acc
                    j = parent[j]
                a_i = arm[i]
                if a_i != 0.0:  # T_i^T a_i T_i on the joint's block
                    for c1 in range(k):
                        for c2 in range(k):
                            acc = 0.0
                            if identity:
                                acc = a_i if c1 == c2 else 0.0
                            else:
                                for r in range(k):
                                    acc += D[n, s0 + r, c1] * D[n, s0 + r, c2]
                                acc *= a_i
                            M[n, col[s0 + c1], col[s0 + c2]] += acc


crba_par = njit(parallel=True, **_JIT)(named(_crba, "_par"))
crba_ser = njit(**_JIT)(named(_crba, "_ser"))
