"""The change of variables of a model with joints of several coordinates, block by block.

``T = blkdiag(X, D P)``: the joint permutation ``P`` of the velocity entries (whole joints moved
together), then the blocks ``D`` of the planar, ball and free joints at their offsets in the target
(:class:`~bridge.conventions.joint_blocks.JointBlock`), the base block ``X`` at offset 0.
Differentiating, ``T_dot = blkdiag(X_dot, D_dot P)``. :class:`WideChangeOfVariables` has the named
maps of :class:`~bridge.conventions.change_of_variables.ChangeOfVariables`, each applying the blocks
one after the other to the segments of a vector or of a matrix's rows and columns, functionally (no
in-place writes), so that numpy, JAX arrays and CasADi symbols run through it alike; no dense T is
formed unless asked for (:meth:`matrix`, :meth:`derivative`).

This module is neutral: it names no library.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bridge.conventions.change_of_variables import ChangeOfVariables
from bridge.conventions.convention import JointOrder
from bridge.conventions.joint_blocks import JointBlock
from bridge.errors import BridgeError
from bridge.spatial.xp import NUMPY, Ops

__all__ = ["WideChangeOfVariables"]

_ALL = slice(None)


class WideChangeOfVariables(ChangeOfVariables):
    """``nu_t = T nu_s`` with ``T = blkdiag(X, D P)`` (see the module docstring); the same maps as
    :class:`ChangeOfVariables`.

    Args:
        X, X_inv, X_dot: the base block (..., 6, 6) (None: the identity; ignored for a fixed base).
        joints: the :class:`JointOrder` of the velocity entries.
        nu: the source generalized velocity (..., nv).
        wide: the joints' blocks (:class:`JointBlock`, target offsets, increasing).
        ops: the array namespace.
    """

    __slots__ = ("_bias_full", "blocks")

    def __init__(
        self,
        X: Any | None,
        X_inv: Any | None,
        joints: JointOrder,
        nu: Any,
        X_dot: Any | None,
        wide: tuple[JointBlock, ...],
        ops: Ops,
    ) -> None:
        super().__init__(X, X_inv, joints, nu, X_dot, ops=ops)
        base = () if self.X is None else (JointBlock(0, 6, self.X, self._base_inv(), self.X_dot),)
        self.blocks: tuple[JointBlock, ...] = base + tuple(sorted(wide, key=lambda b: b.offset))
        self.bias_free = all(b.X_dot is None for b in self.blocks)
        self.identity = not self.blocks and joints.perm is None
        self._bias_full = None

    # ------------------------------------------------------------------ pieces
    def _gather(self, x: Any, index: np.ndarray | None) -> Any:
        return x if index is None else self.ops.vtake(x, index)

    def _apply(self, y: Any, which: str, transpose: bool = False, zero_rest: bool = False) -> Any:
        """The blocks' matrices ``which`` ("X", "X_inv", "X_dot") applied to the segments of a
        (..., nv) target vector (``transpose``: ``M^T y``); entries outside the blocks are kept, or
        zero with ``zero_rest`` (and blocks without the matrix are zero too)."""
        o = self.ops
        times = (lambda seg, M: o.vecmat(seg, M)) if transpose else (lambda seg, M: o.matvec(M, seg))
        return self._by_blocks(y, which, zero_rest, lambda lo, hi: o.vpart(y, lo, hi), times, o.vcat)

    def _apply_columns(self, A: Any, which: str, zero_rest: bool = False) -> Any:
        """``A M`` for (..., m, nv) matrices: the columns of each block times its matrix ``which``;
        other columns kept (or zero with ``zero_rest``)."""
        o = self.ops
        return self._by_blocks(
            A, which, zero_rest, lambda lo, hi: o.mpart(A, _ALL, slice(lo, hi)), o.matmul,
            lambda pieces: o.block([pieces]),
        )  # fmt: skip

    def _by_blocks(self, x: Any, which: str, zero_rest: bool, part: Any, times: Any, join: Any) -> Any:
        """``x`` cut along its last nv axis into the blocks' segments (``part(lo, hi)``), each block's
        segment mapped by ``times(segment, M)`` with its matrix ``which`` (zero where it has none),
        the segments between blocks kept (zero with ``zero_rest``), joined by ``join(pieces)``."""
        nv = self.joints.nv
        pieces: list = []
        cur = 0
        for b in self.blocks:
            M = getattr(b, which)
            if M is None and not zero_rest:
                continue
            if b.offset > cur:
                gap = part(cur, b.offset)
                pieces.append(0.0 * gap if zero_rest else gap)
            seg = part(b.offset, b.offset + b.width)
            pieces.append(0.0 * seg if M is None else times(seg, M))
            cur = b.offset + b.width
        if cur < nv:
            rest = part(cur, nv)
            pieces.append(0.0 * rest if zero_rest else rest)
        return join(pieces) if pieces else (0.0 * x if zero_rest else x)

    def _columns_T(self, A: Any) -> Any:
        """``A T`` (..., m, nv): the target columns of A as source columns."""
        j = self.joints
        B = self._apply_columns(A, "X")
        return B if j.back is None else self.ops.mtake_cols(B, j.back)

    # ------------------------------------------------------------------ T_dot nu
    @property
    def bias_acceleration(self) -> Any:
        """``T_dot nu`` (..., nv) in the target convention."""
        if self._bias_full is None:
            self._bias_full = self._apply(
                self._gather(self.nu, self.joints.forward_full), "X_dot", zero_rest=True
            )
        return self._bias_full

    def _padded_bias(self, like: Any) -> Any | None:
        return None if self.bias_free else self.bias_acceleration

    def apply_derivative(self, x: Any) -> Any:
        """``T_dot x`` (..., nv) for any (..., nv) vector x."""
        return self._apply(self._gather(x, self.joints.forward_full), "X_dot", zero_rest=True)

    def base_bias_into(self, out: np.ndarray) -> bool:  # pragma: no cover - single-coordinate hot paths only
        raise BridgeError("the single-state hot paths take models of one-coordinate joints only")

    def acceleration_into(self, *args: object) -> None:  # pragma: no cover - single-coordinate hot paths only
        raise BridgeError("the single-state hot paths take models of one-coordinate joints only")

    def kernel_arguments(self, lead: tuple[int, ...]) -> None:
        """None: the compiled kernels take one base block and a permutation only."""
        return None

    # ------------------------------------------------------------------ vectors
    def velocity(self, nu: Any) -> Any:
        return self._apply(self._gather(nu, self.joints.forward_full), "X")

    def velocity_back(self, nu_t: Any, overwrite: bool = False) -> Any:
        return self._gather(self._apply(nu_t, "X_inv"), self.joints.back)

    def acceleration(self, nu_dot: Any) -> Any:
        out = self.velocity(nu_dot)
        return out if self.bias_free else out + self.bias_acceleration

    def acceleration_back(self, nu_dot_t: Any, overwrite: bool = False) -> Any:
        if not self.bias_free:
            nu_dot_t = nu_dot_t - self.bias_acceleration
        return self.velocity_back(nu_dot_t)

    def force(self, tau: Any) -> Any:
        return self._apply(self._gather(tau, self.joints.forward_full), "X_inv", transpose=True)

    def force_back(self, tau_t: Any, overwrite: bool = False) -> Any:
        return self._gather(self._apply(tau_t, "X", transpose=True), self.joints.back)

    def bias_back(self, h_t: Any, M_t: Any) -> Any:
        if not self.bias_free:
            h_t = h_t + self.ops.matvec(M_t, self.bias_acceleration)
        return self.force_back(h_t)

    # ------------------------------------------------------------------ matrices
    def jacobian_back(self, J_t: Any, overwrite: bool = False) -> Any:
        return self._columns_T(J_t)

    def jacobian_derivative_back(self, J_t: Any) -> Any:
        """``J_t T_dot`` (..., m, nv) (see :meth:`ChangeOfVariables.jacobian_derivative_back`)."""
        j = self.joints
        Z = self._apply_columns(J_t, "X_dot", zero_rest=True)
        return Z if j.back is None else self.ops.mtake_cols(Z, j.back)

    def matrix_back(self, M_t: Any, out: np.ndarray | None = None, overwrite: bool = False) -> Any:
        o = self.ops
        result = o.mT(self._columns_T(o.mT(self._columns_T(M_t))))
        if out is not None:
            np.copyto(out, result)
            return out
        return result

    def coriolis_back(self, C_t: Any, M_t: Any) -> Any:
        """``T^T (C_t T + M_t T_dot)`` (..., nv, nv) (see :meth:`ChangeOfVariables.coriolis_back`)."""
        out = self.matrix_back(C_t)
        if self.bias_free:
            return out
        o, j = self.ops, self.joints
        Z = self._apply_columns(M_t, "X_dot", zero_rest=True)  # M_t D_dot
        Z = Z if j.back is None else o.mtake_cols(Z, j.back)  # M_t T_dot
        return out + o.mT(self._columns_T(o.mT(Z)))

    # ------------------------------------------------------------------ dense forms
    def _dense(self, which: str) -> Any:
        """``D P`` (which="X") or ``D_dot P`` ("X_dot"), dense (..., nv, nv)."""
        o, j = self.ops, self.joints
        like = self.nu
        nv = j.nv
        eye = o.constant(np.eye(nv), like)
        D = self._apply_columns(eye, which, zero_rest=which == "X_dot")
        if which == "X_dot" and o is NUMPY:
            D = np.asarray(D)
        return D if j.back is None else o.mtake_cols(D, j.back)

    def matrix(self) -> Any:
        """Dense T (..., nv, nv)."""
        return self._dense("X")

    def derivative(self) -> Any:
        """Dense T_dot (..., nv, nv)."""
        return self._dense("X_dot")
