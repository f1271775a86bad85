"""Compiled (numba) mass matrices of a large batch of states in the user's convention, in one launch.

:func:`mass_par` / :func:`mass_ser` take the engine's flat state arrays as they are (base poses
``world_H_base`` (N, 4, 4), joint positions ``s`` (N, k) in the model's order) and write, per state,
``T^T H T`` into the result (N, nv, nv), every entry: the joint data (each joint's cosine and sine
from ``t = tan(q / 2)``, as :class:`~.joints.Joints` computes them), the base block ``X`` of ``T``
evaluated at the state's pose from the constants that
:meth:`bridge.conventions.single_state.SingleBaseChange.pack` compiles from the two conventions'
declarations (:func:`bridge.conventions.single_kernels.change_matrix`), and Featherstone's CRBA
(:func:`.numba_kernels._crba_stage`, the chunked path's kernel), which writes each entry at its row
in the user's joint order and multiplies the base rows and columns by ``X`` as it makes them.
Nothing here is a change of variables written by hand.

What this saves against the chunked path (:meth:`.engine.FeatherstoneEngine._mass_matrix`): the
numpy change of variables of every chunk (the (N, 6, 6) blocks ``X`` built by batched ``matmul``
and ``block``), the joint data and transposed copies of the inputs of every chunk, and all but one
parallel launch (one per chunk of 1,024 states before; each waits for numba's threads to wake up).
Memory beyond the result: a few kB per block of states.

This module imports numba at its top and is imported only through :mod:`.compiled`. Compiled code
is cached on disk (``cache=True``); what it calls from other modules (:func:`.numba_kernels.
_crba_stage`, the helpers of :mod:`.numba_spatial`, :func:`~bridge.conventions.single_kernels.
change_matrix`) is compiled into it: after editing those, delete this package's
``__pycache__/*.nbi`` and ``*.nbc`` (numba's cache checks this module's file only).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from bridge._numba import named
from bridge.conventions.single_kernels import change_matrix

from .numba_kernels import _JIT, STAGE, _crba_block, _crba_stage

__all__ = ["mass_par", "mass_ser"]


def _mass(parent, code, vidx, qidx, Et, rt, mass, h0, Ib0, fperm, pose, s, arm, c, ix, M, nblk):
    """``M[n] = T^T H(q_n) T`` (N, nv, nv) for the N states of ``pose`` (N, 4, 4) and ``s`` (N, k).

    ``fperm`` (nq,): the model's DOF of each joint position of the tree (``q[r] = s[fperm[r]]``);
    ``arm`` (nv,) or (0,): armature in the tree's velocity order; ``c``: the packed constants of
    the base block X of T (:meth:`~bridge.conventions.single_state.SingleBaseChange.pack`), or (0,)
    for none (a fixed base); ``ix`` (nv,): the row of ``M`` of each of the tree's velocities (the
    inverse of T's joint gather, the base first); ``nblk`` blocks of states."""
    nq = fperm.shape[0]
    N = M.shape[0]
    for b in prange(nblk):
        consts, scratch, buffers = _crba_block(
            parent, code, vidx, qidx, fperm, Et, rt, mass, h0, Ib0, arm, ix, nq, c.shape[0]
        )
        parent_, code_, vidx_, qidx_, fperm_, Et_, rt_, mass_, h0_, Ib0_, arm_, ix_ = consts
        Xg, Ew, pw, S, IC, Z = scratch
        Xf = Xg.reshape(Xg.shape[0] * 36)  # (Xg flat, for change_matrix's offsets)
        qb, lcb, lsb, Eb, E3, rb = buffers
        c_ = c.copy()
        H4 = np.empty((4, 4))
        stop = (b + 1) * N // nblk
        for n0 in range(b * N // nblk, stop, STAGE):
            nl = min(STAGE, stop - n0)
            for k in range(nl):
                n = n0 + k
                for r in range(nq):
                    x = s[n, fperm_[r]]
                    qb[r, k] = x
                    t = math.tan(0.5 * x)
                    u = 2.0 / (1.0 + t * t)
                    lsb[r, k] = t * u
                    lcb[r, k] = u - 1.0
                for x in range(4):
                    for y in range(4):
                        H4[x, y] = pose[n, x, y]
                for x in range(3):  # E0 = R^T, r0 = p
                    for y in range(3):
                        Eb[3 * x + y, k] = H4[y, x]
                    rb[x, k] = H4[x, 3]
                if Xg.shape[0] > 0:
                    change_matrix(H4, c_, 0, Xf, 36 * k)
            # (the joints' cosines and sines by joint position: qidx serves as their rows)
            _crba_stage(
                nl, parent_, code_, vidx_, qidx_, qidx_, Et_, rt_, mass_, h0_, Ib0_, qb, lcb, lsb, E3, rb,
                arm_, M[n0:], ix_, Xg, Ew, pw, S, IC, Z,
            )  # fmt: skip


mass_par = njit(parallel=True, **_JIT)(named(_mass, "_par"))
mass_ser = njit(**_JIT)(named(_mass, "_ser"))
