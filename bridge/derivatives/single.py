"""The chain rule of :func:`bridge.derivatives.inverse_dynamics_derivatives_back` for one unbatched
floating-base state in INERTIAL or MIXED, made once per joint order and representation (the hot
path of ``KinDyn.inverse_dynamics_derivatives`` on the "pinocchio" engine).

Two implementations of the same formulas:

* compiled: one call of a numba kernel (:func:`bridge.derivatives.kernels.chain_rule`), when numba
  is installed (the ``fast`` extra; ``BRIDGE_NUMBA=0`` in the environment turns it off;
  :func:`bridge.derivatives.select.compiled_kernels`); an engine may call :attr:`kernel` itself on
  its own buffers, with the constants of ``constants(x_at, nu_at, bias_at)`` (the Pinocchio
  engine's fused paths), or through :meth:`packed` (batches);
* numpy: a few stacked products and ``take`` gathers through precomputed flat indices (the
  reference the tests compare the kernels with, and the path without numba).

:mod:`bridge.derivatives.select` picks between them (``compiled=`` of the classes here).
This module is neutral: it names no dynamics library.
"""

from __future__ import annotations

import numpy as np

from bridge._cache import per_model
from bridge.conventions.change_of_variables import JointOrder
from bridge.conventions.state import Representation, velocity_declaration
from bridge.derivatives.chain import BlocksScratch, flat_index, unbatched_blocks
from bridge.derivatives.functional import rate_table
from bridge.derivatives.select import compiled_kernels
from bridge.errors import InvalidValueError

__all__ = ["SingleStateForwardDerivatives", "SingleStateInverseDerivatives"]

# value slots of the (24, 18) block matrix G of SingleStateInverseDerivatives (index 0 holds 0.0)
_V_X = 1  # X (6, 6)
_V_Y = _V_X + 36  # Y(nu), Y(nu_dot) + B_q, B_nu, -Z(tau_t) (each (6, 6))
_V_END = _V_Y + 144


def _g_index() -> np.ndarray:
    """Indices (24, 18) into the value vector of :class:`SingleStateInverseDerivatives` giving its
    block matrix G: rows 0:18 act on the base columns of ``[D_q, D_v, M]`` (their base rows times
    ``X^T``), rows 18:24 on six constant columns ``[-I; 0]`` (the term ``Z`` on the base block)."""
    G = np.zeros((24, 18), dtype=np.intp)
    X = _V_X + np.arange(36).reshape(6, 6)
    G[:6, :6] = G[6:12, 6:12] = G[12:18, 12:18] = X
    Y = _V_Y + np.arange(144).reshape(4, 6, 6)
    G[6:12, :6], G[12:18, :6], G[12:18, 6:12], G[18:24, :6] = Y  # Y(nu), Y(nu_dot) + B_q, B_nu, -Z
    return G


class _SingleState:
    """What both single-state classes make once: whether T is the joint permutation alone (BODY or
    a fixed base), the compiled kernels, the permutation and the engine index of each W index."""

    def __init__(self, joints: JointOrder, rep: Representation, compiled: bool | None) -> None:
        self.rep = rep = Representation.parse(rep)
        decl = velocity_declaration(rep)
        nv = joints.nv
        self._shape = (3, nv, nv)
        name = type(self).__name__
        if joints.nb not in (0, 6):
            raise InvalidValueError(f"{name}: {joints.nb} base DOFs (0 or 6)")
        self._rates = rates = rate_table(decl)
        if rates is None or decl.reorder() is not None:
            raise InvalidValueError(f"{name}: {decl} (a rate that depends on the pose, or angular first)")
        #: T is the joint permutation alone (W's rate is zero, or a fixed base): a call reads only
        #: the three matrices
        self.permutes_only = not rates.moves or joints.nb == 0
        kernels = None if compiled is False or self.permutes_only else compiled_kernels()
        if compiled and kernels is None:
            why = "a permutation" if self.permutes_only else "numba (pip install 'bridge[fast]')"
            raise InvalidValueError(f"{name}(compiled=True) needs {why}")
        #: whether a compiled kernel does the work
        self.compiled = kernels is not None
        self._kernels = kernels
        self._permuted = _Permuted(joints) if self.permutes_only else None
        back = joints.back
        self._order = np.arange(nv, dtype=np.intp) if back is None else np.asarray(back, dtype=np.intp)
        #: the compiled kernel (:func:`bridge.derivatives.kernels.chain_rule`) or None
        self.kernel = None if kernels is None else kernels.chain_rule
        self._ints = self._w = None
        if kernels is not None:  # X and the base velocity packed into w (offsets 0 and 36)
            self._ints = self.constants(0, 36)
            self._w = np.empty(42)
            self._wX, self._wnu = self._w[:36].reshape(6, 6), self._w[36:]

    _forward = False

    def constants(self, x_at: int, nu_at: int, bias_at: int = -1) -> np.ndarray:
        """The int constants of :attr:`kernel` for an engine's float buffer holding ``X`` at
        ``x_at`` and the base velocity in W at ``nu_at`` (and, FD, its ``T_dot nu`` at ``bias_at``:
        the kernel then takes the engine's acceleration), see :func:`bridge.derivatives.kernels.constants`."""
        kernels = self._kernels
        if kernels is None:
            raise InvalidValueError(f"{type(self).__name__}: no compiled kernels")
        return kernels.constants(self._forward, self._rates, self._order, x_at, nu_at, bias_at)

    def packed(self, w: np.ndarray, y: np.ndarray, f: np.ndarray, A0, A1, A2, out: np.ndarray) -> None:
        """The kernel into ``out`` (3, nv, nv) for one sample's packed ``w = [X (36) | nu_b (6) |
        T_dot nu's base part (6, FD)]``, its base acceleration in W (ID) or the engine's
        acceleration (FD) ``y`` and the engine's force ``f`` (its first six entries read)."""
        ints = self._ints_packed
        if ints is None:
            ints = self._ints_packed = self.constants(0, 36, 42 if self._forward else -1)
        self.kernel(ints, w, y, f, A0, A1, A2.T if A2.flags.f_contiguous else A2, out)  # (A2 symmetric)

    _ints_packed: np.ndarray | None = None

    def _compiled(self, X, nu_b, y_b, f_b, A0, A1, A2, out) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The kernel's result for ``X``, ``nu_b`` (packed into the instance's buffer), the base
        acceleration ``y_b`` and force ``f_b`` in a fresh read-only array (or ``out``)."""
        self._wX[...] = X
        self._wnu[...] = nu_b
        if y_b.dtype != np.float64:  # (one compiled specialization)
            y_b = y_b.astype(np.float64)
        fresh = out is None
        if fresh:
            out = np.empty(self._shape)
        self.kernel(self._ints, self._w, y_b, f_b, A0, A1, A2, out)
        if fresh:
            out.setflags(write=False)
        return out[0], out[1], out[2]


class SingleStateInverseDerivatives(_SingleState):
    """:func:`bridge.derivatives.inverse_dynamics_derivatives_back` for one unbatched state, with
    every index array and scratch buffer made once (per joint order and representation).

    BODY, or a fixed base: T is the joint permutation alone; a call copies the three matrices into
    one fresh array (one ``take`` through a precomputed flat index when the joints are permuted).

    A floating base in any other representation, compiled (``compiled=None`` and numba installed, or
    ``compiled=True``): one call of a kernel of :mod:`bridge.derivatives.kernels`. Otherwise numpy:
    the chain-rule terms are right products on the base columns or left products on the base rows
    (the base stays first in both orders). A call copies the three matrices into one scratch
    buffer, applies ``X^T`` to their base rows (one stacked product), gathers their base columns
    side by side, plus six constant columns ``[-I; 0]``, into an (nv, 24) matrix C (one ``take``),
    and multiplies it by a (24, 18) block matrix G: ``C G`` holds the base columns of
    ``T^T [D_q T + D_v[:, b] Y(nu) + M[:, b] (Y(nu_dot) + B_q)] + Z(tau_t)``,
    ``T^T [D_v T + M[:, b] B_nu]`` and ``T^T M T``. One more ``take`` with a precomputed flat index
    then permutes rows and columns of all three into one fresh (3, nv, nv) array, reading the base
    columns from ``C G``. G is itself one ``take`` from a short vector of values: ``X`` and the four
    blocks made from W's rate table (:func:`bridge.derivatives.chain.unbatched_blocks`).

    Not thread-safe (the scratch buffers are per instance); the returned arrays are fresh.
    """

    def __init__(self, joints: JointOrder, rep: Representation, compiled: bool | None = None) -> None:
        super().__init__(joints, rep, compiled)
        nv = joints.nv
        #: the numpy path reads the base pose (never: the blocks read X alone)
        self.needs_pose = False
        n2 = nv * nv
        if self.permutes_only or self.compiled:  # no numpy plan
            return
        self._c_idx, self._out_idx = _single_index(joints)
        self._g_idx = _g_index()
        # scratch: [D_q, D_v, M (3, nv, nv) | X^T times their base rows (3, 6, nv) | C G (nv, 18)
        # | 0.0, -1.0]
        src = np.zeros(3 * n2 + 36 * nv + 2)
        src[-1] = -1.0
        self._src = src
        self._mats = src[: 3 * n2].reshape(3, nv, nv)
        self._top = self._mats[:, :6, :]
        self._rows = src[3 * n2 : 3 * n2 + 18 * nv].reshape(3, 6, nv)
        self._CG = src[3 * n2 + 18 * nv : 3 * n2 + 36 * nv].reshape(nv, 18)
        self._C = np.zeros((nv, 24))
        self._G = np.zeros((24, 18))
        vals = np.zeros(_V_END)
        self._vals = vals
        self._X = vals[_V_X : _V_X + 36].reshape(6, 6)
        self._Xt = self._X.T
        self._Y = vals[_V_Y:_V_END].reshape(4, 6, 6)
        self._scratch = BlocksScratch()

    def __call__(
        self,
        X: np.ndarray | None,
        nu_b: np.ndarray | None,
        nu_dot_b: np.ndarray | None,
        tau_b: np.ndarray | None,
        dtau_dq_t: np.ndarray,
        dtau_dv_t: np.ndarray,
        M_t: np.ndarray,
        world_H_base: np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(dtau_dq, dtau_dnu, dtau_dnudot)`` (nv, nv) in W, as
        :func:`inverse_dynamics_derivatives_back` (one state; three read-only views of one fresh
        array, or, given a C-contiguous ``out`` (3, nv, nv), three views of it, written).

        Args:
            X: ``B_X_W`` (6, 6) (not read when :attr:`permutes_only`, nor the next three).
            nu_b: the base velocity in W (6,).
            nu_dot_b: the base acceleration in W (6,).
            tau_b: the base part (6,) of the target's inverse dynamics at the state.
            dtau_dq_t: the target's derivative (nv, nv) with respect to its tangent, in its order.
            dtau_dv_t: the target's derivative (nv, nv) with respect to its velocity, in its order.
            M_t: the target's mass matrix (nv, nv), in its order.
            world_H_base: the base pose (4, 4) (read when :attr:`needs_pose`).
            out: where to write the result (one sample of a batch), or None.
        """
        if M_t.flags.f_contiguous:  # symmetric: an F-ordered one (Pinocchio's) is read as its transpose
            M_t = M_t.T
        if self._permuted is not None:
            return self._permuted(dtau_dq_t, dtau_dv_t, M_t, out)
        if self.kernel is not None:
            return self._compiled(X, nu_b, nu_dot_b, tau_b, dtau_dq_t, dtau_dv_t, M_t, out)
        self._X[...] = X
        unbatched_blocks(self._rates, self._X, nu_b, nu_dot_b, tau_b, self._Y, self._scratch)
        mats = self._mats
        mats[0], mats[1], mats[2] = dtau_dq_t, dtau_dv_t, M_t
        np.matmul(self._Xt, self._top, out=self._rows)
        C = self._src.take(self._c_idx, mode="clip", out=self._C)
        np.dot(C, self._vals.take(self._g_idx, mode="clip", out=self._G), out=self._CG)
        if out is not None:
            self._src.take(self._out_idx, mode="clip", out=out)
            return out[0], out[1], out[2]
        out = self._src.take(self._out_idx, mode="clip")
        out.setflags(write=False)  # (and so its three views)
        return out[0], out[1], out[2]


class _Permuted:
    """``P^T A_k P`` (rows and columns to W's order) of three (nv, nv) matrices of one state, into
    one fresh array: three copies, or one ``take`` through a precomputed flat index."""

    def __init__(self, joints: JointOrder) -> None:
        nv, back = joints.nv, joints.back
        self._shape = (3, nv, nv)
        self._mats = np.empty(self._shape)
        if back is None:
            self._flat = None
        else:
            self._flat = (np.arange(3)[:, None] * (nv * nv) + flat_index(joints)).ravel()

    def __call__(
        self, A0: np.ndarray, A1: np.ndarray, A2: np.ndarray, out: np.ndarray | None = None
    ) -> tuple[np.ndarray, ...]:
        """Three read-only views of one fresh (3, nv, nv) array (or, given a C-contiguous ``out``
        (3, nv, nv), written into it and three views of it)."""
        fresh = out is None
        if self._flat is None:
            if fresh:  # (one concatenate: a third of the time of three copies into an empty array)
                out = np.concatenate((A0, A1, A2)).reshape(self._shape)
            else:
                out[0], out[1], out[2] = A0, A1, A2
        else:
            mats = self._mats
            mats[0], mats[1], mats[2] = A0, A1, A2
            if fresh:
                out = mats.take(self._flat).reshape(self._shape)
            else:
                mats.take(self._flat, out=out.reshape(-1))
        if fresh:
            out.setflags(write=False)
        return out[0], out[1], out[2]


class SingleStateForwardDerivatives(_SingleState):
    """:func:`bridge.derivatives.forward_dynamics_derivatives_back` for one unbatched state, made
    once per joint order and representation, where it is fast: BODY or a fixed base (the joint
    permutation alone) and, with the compiled kernels, a floating base in INERTIAL or MIXED (one call
    of :func:`bridge.derivatives.kernels.chain_rule`). :attr:`usable` is False otherwise (the
    caller then takes the general function).
    """

    _forward = True

    def __init__(self, joints: JointOrder, rep: Representation, compiled: bool | None = None) -> None:
        super().__init__(joints, rep, compiled)
        #: whether :meth:`__call__` may be used
        self.usable = self.permutes_only or self.compiled

    def __call__(
        self,
        X: np.ndarray | None,
        nu_b: np.ndarray | None,
        nu_dot_b: np.ndarray | None,
        tau_b: np.ndarray | None,
        da_dq_t: np.ndarray,
        da_dv_t: np.ndarray,
        M_inv_t: np.ndarray,
        out: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` (nv, nv) in W (three read-only views of one fresh
        array, or, given a C-contiguous ``out`` (3, nv, nv), three views of it, written).

        Args:
            X: ``B_X_W`` (6, 6) (not read when :attr:`permutes_only`, nor the next three).
            nu_b: the base velocity in W (6,).
            nu_dot_b: the base acceleration (the forward dynamics) in W (6,).
            tau_b: the base part (6,) of the generalized force in the target (``T^-T tau``).
            da_dq_t: the target's derivative (nv, nv) with respect to its tangent, in its order.
            da_dv_t: the target's derivative (nv, nv) with respect to its velocity, in its order.
            M_inv_t: the target's inverse mass matrix (nv, nv), in its order.
            out: where to write the result (one sample of a batch), or None.
        """
        if M_inv_t.flags.f_contiguous:  # symmetric: read an F-ordered one as its transpose
            M_inv_t = M_inv_t.T
        if self._permuted is not None:
            return self._permuted(da_dq_t, da_dv_t, M_inv_t, out)
        if self.kernel is None:
            raise InvalidValueError("SingleStateForwardDerivatives: not usable (no compiled kernels)")
        return self._compiled(X, nu_b, nu_dot_b, tau_b, da_dq_t, da_dv_t, M_inv_t, out)


@per_model
def _single_index(joints: JointOrder) -> tuple[np.ndarray, np.ndarray]:
    """The take indices of :class:`SingleStateInverseDerivatives` into its scratch buffer (made once
    per joint order): C (nv, 24) in the target's row order, and the result (3, nv, nv)."""
    back = joints.back
    nv = joints.nv
    n2 = nv * nv
    rows, CG = 3 * n2, 3 * n2 + 18 * nv  # offsets of the base rows times X^T and of C G
    order = np.arange(nv) if back is None else back
    k = np.arange(3)[:, None, None]
    r = np.arange(nv)[None, :, None]
    c = np.arange(6)[None, None, :]
    # C[r, 6k + c]: the base columns of the row-transformed matrices, then [-I; 0]
    C = np.where(r < 6, rows + k * 6 * nv + np.minimum(r, 5) * nv + c, k * n2 + r * nv + c)
    C = C.transpose(1, 0, 2).reshape(nv, 18)
    zero = CG + 18 * nv  # the scratch's constants 0.0, -1.0
    eye = np.full((nv, 6), zero)
    eye[np.arange(6), np.arange(6)] = zero + 1
    # result[k, i, j]: permuted; base columns from C G, base rows from X^T times them
    i = np.arange(nv)[None, :, None]
    j = order[None, None, :]
    out = np.where(
        np.arange(nv)[None, None, :] < 6,
        CG + order[i] * 18 + 6 * k + np.minimum(np.arange(nv), 5)[None, None, :],
        np.where(i < 6, rows + k * 6 * nv + np.minimum(i, 5) * nv + j, k * n2 + order[i] * nv + j),
    )
    return np.concatenate((C, eye), axis=1).astype(np.intp), out.astype(np.intp)
