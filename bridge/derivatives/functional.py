"""The chain rule of dynamics derivatives between any two conventions, functional and generic over
the array namespace (numpy with batch axes, JAX under ``jit``/``vmap``/``grad``, CasADi SX/MX/DM).

Derivatives with respect to ``q`` in a convention are taken along that convention's tangent: the
first-order change when the robot moves with generalized velocity ``delta`` *in that convention*
(its base part ``L delta_B`` for a BODY velocity ``delta_B``; :func:`bridge.derivatives.chain.retract`
is one such motion for the neutral representations). With ``nu_2 = T nu_1``, ``T = blkdiag(X, P)``,
``X = L_2 L_1^-1`` (the :class:`~bridge.conventions.change_of_variables.ChangeOfVariables` from the
*wanted* convention 1 to the *given* convention 2), every term of the chain rule comes from each
declaration's rate ``Omega(H, w) = L^-1 dL[w]`` (:meth:`BaseVelocity.rate`, linear in the BODY
velocity w) and ``D = Omega_2 - Omega_1``:

* ``Y(y) = L_2 K_D(L_1^-1 y) L_1^-1``: ``Y delta_1 = dX[delta] y`` (``K(z) w = Omega(w) z``);
* ``Z(f) = L_1^-T Kt_D(L_2^T f) L_1^-1``: ``Z delta_1 = dX[delta]^T f`` (``Kt(g) w = Omega(w)^T g``);
* the base part of ``T_dot nu_1`` is ``b = L_2 D(v_B) v_B`` (``v_B = L_1^-1 nu_1``), with
  ``B_nu = db/dnu_1 = L_2 (D(v_B) + K_D(v_B)) L_1^-1`` and ``B_q = db/dq = L_2 [K_2(D(v_B) v_B) +
  d_H(D(v_B) v_B) - (D(v_B) + K_D(v_B)) K_1(v_B)] L_1^-1``, where ``d_H`` is the change of Omega
  with the pose at fixed w: Omega depends on the pose through ``q = R^T p`` alone, affinely
  (:meth:`BaseVelocity.rate`), and ``q`` moves by ``dv + q x dw`` along a BODY tangent ``(dv, dw)``.

:func:`chain_blocks` evaluates the four blocks ``(Y(nu_1), Y(nu_dot_1) + B_q, B_nu, Z(tau_2))``;
:func:`inverse_back` and :func:`forward_back` assemble the derivatives in convention 1 (formulas
in :func:`bridge.derivatives.chain.inverse_dynamics_derivatives_back`). Nothing writes in place
and nothing reads values, so the functions trace and build symbolic graphs; the numpy in-place
specialisation for a BODY-based given convention stays in :mod:`bridge.derivatives.chain`.

:func:`rate_table` is the same derivation specialised once per declaration whose rate does not depend
on the pose (every neutral representation, and any declaration at the base origin): Omega as a
constant (6, 6, 6) table, from which :mod:`bridge.derivatives.chain` (numpy, in place) and
:mod:`bridge.derivatives.kernels` (numba) evaluate the four blocks for a BODY given convention.

This module is neutral: it names no library.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from bridge.conventions.change_of_variables import ChangeOfVariables
from bridge.conventions.declaration import BaseVelocity
from bridge.spatial.xp import NUMPY, Ops

__all__ = ["RateTable", "chain_blocks", "exp_se3_parts", "forward_back", "inverse_back", "rate_table"]

_E6 = np.eye(6)
_E3 = np.eye(3)

Block = Any  # a (..., 6, 6) block, or None for zero


def _columns(o: Ops, cols: list) -> Any:
    """The (..., 6, k) matrix whose columns are the k (..., 6) vectors ``cols``."""
    if not o.batched:
        ca = o.ca  # type: ignore[attr-defined]
        return ca.horzcat(*(o.asarray(c) for c in cols))
    lead = np.broadcast_shapes(*(tuple(c.shape[:-1]) for c in cols))
    return o.xp.stack([o.xp.broadcast_to(c, (*lead, c.shape[-1])) for c in cols], axis=-1)


def _add(a: Block, b: Block) -> Block:
    return b if a is None else (a if b is None else a + b)


def _sub(a: Block, b: Block) -> Block:
    if b is None:
        return a
    return -b if a is None else a - b


class _Rate:
    """``Omega(H, w)`` of one declaration as a linear function of w (None throughout for BODY)."""

    def __init__(self, decl: BaseVelocity, H: Any, o: Ops) -> None:
        self.decl, self.H, self.o = decl, H, o
        self.zero = decl.is_body  # (Omega = 0)
        self._units: list | None = None

    def at(self, w: Any) -> Block:
        return None if self.zero else self.decl.rate(self.H, w, self.o)

    def units(self) -> list:
        """``Omega(H, e_k)`` for the six unit vectors (made once)."""
        if self._units is None:
            o = self.o
            self._units = [self.decl.rate(self.H, o.constant(_E6[k], self.H), o) for k in range(6)]
        return self._units

    def K(self, z: Any) -> Block:
        """``K(z)`` (..., 6, 6) with ``K(z) w = Omega(w) z``."""
        if self.zero:
            return None
        return _columns(self.o, [self.o.matvec(U, z) for U in self.units()])

    def Kt(self, g: Any) -> Block:
        """``Kt(g)`` (..., 6, 6) with ``Kt(g) w = Omega(w)^T g``."""
        if self.zero:
            return None
        return _columns(self.o, [self.o.vecmat(g, U) for U in self.units()])

    def pose_change(self, w: Any, z: Any) -> Block:
        """``d_H`` (..., 6, 6): the change of ``Omega(w) z`` along a BODY tangent at fixed w, z.
        Omega is affine in ``q = R^T p``, so ``d_H = G [1, q^]`` with G's columns the change for a
        unit change of q."""
        if self.zero:
            return None
        o = self.o
        R, p = o.pose_parts(getattr(self.H, "matrix", self.H))
        eye = o.eye(3, p)
        at = [o.matvec(self.decl.rate(o.pose(eye, o.constant(c, p)), w, o), z) for c in (0 * _E3[0], *_E3)]
        G = _columns(o, [a - at[0] for a in at[1:]])
        return o.block([[G, o.matmul(G, o.skew(o.vecmat(p, R)))]])


def _mm(o: Ops, *factors: Block) -> Block:
    """The product of the factors (None if any is None: a zero block)."""
    if any(f is None for f in factors):
        return None
    out = factors[0]
    for f in factors[1:]:
        out = o.matmul(out, f)
    return out


def chain_blocks(
    o: Ops,
    H: Any,
    wanted: BaseVelocity,
    given: BaseVelocity,
    L2: Any,
    L1_inv: Any,
    nu_b: Any,
    acc_b: Any,
    force_b: Any,
) -> tuple[Block, Block, Block, Block]:
    """``(Y(nu_b), Y(acc_b) + B_q, B_nu, Z(force_b))`` (each (..., 6, 6), or None for zero) of the
    module docstring, from the wanted convention 1 to the given convention 2.

    Args:
        o: the array namespace.
        H: base poses (..., 4, 4).
        wanted: the base velocity declaration of convention 1 (its rate).
        given: the base velocity declaration of convention 2 (its rate).
        L2: ``L_2`` (..., 6, 6) (convention 2's base velocity is ``L_2 v_B``).
        L1_inv: ``L_1^-1`` (..., 6, 6).
        nu_b: the base velocity (..., 6) in convention 1.
        acc_b: the base acceleration (..., 6) in convention 1.
        force_b: the base part (..., 6) of the generalized force in convention 2.
    """
    r1, r2 = _Rate(wanted, H, o), _Rate(given, H, o)

    def KD(z: Any) -> Block:
        return _sub(r2.K(z), r1.K(z))

    def Y(y: Any) -> Block:
        return _mm(o, L2, KD(o.matvec(L1_inv, y)), L1_inv)

    g = o.vecmat(force_b, L2)
    Z = _mm(o, o.mT(L1_inv), _sub(r2.Kt(g), r1.Kt(g)), L1_inv)
    vB = o.matvec(L1_inv, nu_b)
    D = _sub(r2.at(vB), r1.at(vB))
    if D is None:
        return Y(nu_b), Y(acc_b), None, Z
    DK = _add(D, KD(vB))
    u = o.matvec(D, vB)
    term = _add(r2.K(u), _sub(r2.pose_change(vB, vB), r1.pose_change(vB, vB)))
    term = _sub(term, _mm(o, DK, r1.K(vB)))
    Bq = _mm(o, L2, term, L1_inv)
    return Y(nu_b), _add(Y(acc_b), Bq), _mm(o, L2, DK, L1_inv), Z


# --------------------------------------------------------------------------- the constant rate
@dataclass(frozen=True, eq=False)
class RateTable:
    """A declaration's rate ``Omega(w) = sum_k U[:, :, k] w_k`` when it does not depend on the pose,
    and what the chain rule to a BODY given convention reads from it (``X = L^-1``, ``D = -Omega``
    in :func:`chain_blocks`, ``d_H = 0``):

    ``Y(y) = -K(X y) X``, ``Z(f) = -X^T Kt(f) X``, ``B_nu = -S(u) X`` and
    ``Y(y) + B_q = (S(u) K(u) - K(X y)) X`` with ``u = X nu``, ``K(z) w = Omega(w) z``,
    ``Kt(g) w = Omega(w)^T g`` and ``S(u) = Omega(u) + K(u)``.

    Attributes:
        U: (6, 6, 6) ``U[i, j, k]``: entry (i, j) of Omega for the unit velocity ``e_k``.
        Kr: (6, 36): ``K(z) = (z @ Kr).reshape(6, 6)``.
        Sr: (6, 36): ``S(z) = (z @ Sr).reshape(6, 6)``.
        Ktr: (6, 36): ``Kt(g) = (g @ Ktr).reshape(6, 6)``.
        KSKt: (6, 144): ``[-Kr | 0 | -Sr | Ktr]``: one product with a vector ``z`` gives
            ``-K(z)``, room for a third (6, 6) block, ``-S(z)`` side by side (an (18, 6) matrix, row
            major) and ``Kt(z)`` (the numpy single-state path).
        moves: Omega is not zero (X varies with the pose: Y and Z are not zero).
        bias: S is not zero (``T_dot nu`` does not vanish: B_q and B_nu are not zero).
        used: the velocity components ``k`` Omega depends on (the nonzero columns of K and Kt).
        diagonal: ``X = L^-1`` is block diagonal (the declared point is the base origin).
        entries: (m, 3) the indices ``(i, j, k)`` of U's nonzero entries, and ``coefs`` (m,) their
            values (the compiled kernels' form).
    """

    U: np.ndarray
    Kr: np.ndarray
    Sr: np.ndarray
    Ktr: np.ndarray
    KSKt: np.ndarray
    moves: bool
    bias: bool
    used: np.ndarray
    diagonal: bool
    entries: np.ndarray
    coefs: np.ndarray


# poses at which the rate is evaluated to find out whether it depends on the pose
_PROBES = (
    np.array([[0.36, 0.48, -0.8, 0.7], [-0.8, 0.6, 0.0, -1.3], [0.48, 0.64, 0.6, 2.1], [0, 0, 0, 1.0]]),
    np.array([[0.0, -1.0, 0.0, -0.4], [1.0, 0.0, 0.0, 0.9], [0.0, 0.0, 1.0, 0.3], [0, 0, 0, 1.0]]),
)


@lru_cache(maxsize=256)
def rate_table(decl: BaseVelocity) -> RateTable | None:
    """The constant :class:`RateTable` of a declaration's rate (:meth:`BaseVelocity.rate`), derived
    once per declaration: Omega at the identity pose for the six unit velocities, checked equal at
    two other poses (None when it depends on the pose, e.g. the world origin's velocity in body
    axes: then only :func:`chain_blocks` applies). All zeros for BODY."""
    o = NUMPY

    def at(H: np.ndarray) -> np.ndarray:
        U = np.zeros((6, 6, 6))
        for k in range(6):
            Om = decl.rate(H, _E6[k], o)
            if Om is not None:
                U[:, :, k] = Om
        return U

    U = at(np.eye(4))
    scale = max(1.0, float(np.abs(U).max()))
    if any(not np.allclose(at(H), U, rtol=0.0, atol=1e-12 * scale) for H in _PROBES):
        return None
    U.setflags(write=False)
    S = U + U.transpose(0, 2, 1)  # S(z)[i, m] = sum_j (U[i, m, j] + U[i, j, m]) z_j
    tables = (U.transpose(1, 0, 2).reshape(6, 36), S.transpose(2, 0, 1).reshape(6, 36), U.reshape(6, 36))
    zero = np.zeros((6, 36))
    tables = (*tables, np.concatenate((-tables[0], zero, -tables[1], tables[2]), axis=1))
    for t in tables:
        t.setflags(write=False)
    entries = np.argwhere(U != 0.0).astype(np.intp)
    return RateTable(
        U,
        *tables,
        moves=bool(U.any()),
        bias=bool(S.any()),
        used=np.flatnonzero(U.any(axis=(0, 1))),
        diagonal=not any(decl.matrices(H, o)[1][:3, 3:].any() for H in _PROBES),
        entries=entries,
        coefs=U[tuple(entries.T)].copy(),
    )


# --------------------------------------------------------------------------- assembly
def _joint_columns(cov: ChangeOfVariables, A: Any) -> Any:
    """The joint columns (..., m, n) of a given-convention matrix, in convention 1's order."""
    o, j = cov.ops, cov.joints
    q = o.mpart(A, slice(None), slice(j.nb, j.nv))
    return q if j.inverse is None else o.mtake_cols(q, j.inverse)


def _rows(cov: ChangeOfVariables, K: Any, base_map: Any) -> Any:
    """``blkdiag(base_map^T, P^T) K``: rows from convention 2 to 1 (``base_map`` (..., 6, 6))."""
    o = cov.ops
    return o.mT(cov._columns_back(o.mT(K), base_map))


def _on_base(cov: ChangeOfVariables, A: Any, B: Block) -> Any:
    """``A`` plus the (..., 6, 6) block B on its base rows and columns."""
    if B is None:
        return A
    o, n = cov.ops, cov.joints.n
    return A + o.block([[B, o.mzeros(6, n, B)], [o.mzeros(n, 6, B), o.mzeros(n, n, B)]])


def _assemble(
    cov: ChangeOfVariables, A: Any, base_cols: Any, before: Block, base_map: Any, after: Block
) -> Any:
    """``blkdiag(base_map^T, P^T) (A' + before) + after``: A' is A with its joint columns in
    convention 1's order and its base columns ``base_cols`` (..., nv, 6); ``before``/``after`` on
    the base block."""
    o = cov.ops
    K = _on_base(cov, o.block([[base_cols, _joint_columns(cov, A)]]), before)
    return _on_base(cov, _rows(cov, K, base_map), after)


def _base_cols(o: Ops, pairs: list[tuple[Any, Block]]) -> Any:
    """``sum A[:, :6] B`` over the pairs (zero blocks skipped)."""
    out = None
    for A, B in pairs:
        if B is not None:
            out = _add(out, o.matmul(o.mpart(A, slice(None), slice(0, 6)), B))
    return out


def inverse_back(
    cov: ChangeOfVariables, blocks: tuple | None, dq: Any, dv: Any, M: Any
) -> tuple[Any, Any, Any]:
    """``(dtau_dq, dtau_dnu, dtau_dnudot)`` (..., nv, nv) in convention 1 from the given derivatives
    ``dq, dv, M`` (..., nv, nv) in convention 2 and :func:`chain_blocks` (``cov``: 1 -> 2)."""
    if not cov.floating or cov.X is None:
        return tuple(cov.matrix_back(A) for A in (dq, dv, M))  # type: ignore[return-value]
    o, X = cov.ops, cov.X
    Y_nu, inner, Bnu, Z = blocks or (None,) * 4
    out_q = _assemble(cov, dq, _base_cols(o, [(dq, X), (dv, Y_nu), (M, inner)]), None, X, Z)
    out_v = _assemble(cov, dv, _base_cols(o, [(dv, X), (M, Bnu)]), None, X, None)
    return out_q, out_v, cov.matrix_back(M)


def forward_back(
    cov: ChangeOfVariables, blocks: tuple | None, da_dq: Any, da_dv: Any, M_inv: Any
) -> tuple[Any, Any, Any]:
    """``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` (..., nv, nv) in convention 1 from the given
    derivatives (..., nv, nv) in convention 2 and :func:`chain_blocks` (``cov``: 1 -> 2)."""
    o = cov.ops
    if not cov.floating or cov.X is None:
        return cov.matrix_back(da_dq), cov.matrix_back(da_dv), cov.matrix_back(M_inv)
    X, XiT = cov.X, o.mT(cov._base_inv())
    Y_nu, inner, Bnu, Z = blocks or (None,) * 4
    ZX = _mm(o, XiT, Z)
    base_q = _base_cols(o, [(da_dq, X), (da_dv, Y_nu), (M_inv, None if ZX is None else -ZX)])
    out_q = _assemble(cov, da_dq, base_q, None if inner is None else -inner, XiT, None)
    out_v = _assemble(cov, da_dv, _base_cols(o, [(da_dv, X)]), None if Bnu is None else -Bnu, XiT, None)
    out_t = _rows(cov, cov._columns_back(M_inv, XiT), XiT)
    return out_q, out_v, out_t


# --------------------------------------------------------------------------- the tangent
def _scaled(o: Ops, a: Any, M: Any) -> Any:
    """(..., ) scalars times (..., 3, 3) matrices."""
    return a[..., None, None] * M if o.batched else a * M


def exp_se3_parts(o: Ops, w: Any) -> tuple[Any, Any]:
    """``(exp(w^), V(w))`` (..., 3, 3): the SO(3) exponential of (..., 3) vectors and its left
    Jacobian, functional (series below an angle of 1e-6, without a square root of zero, so that
    gradients at ``w = 0`` are finite)."""
    t2 = o.vdot(w, w)
    small = t2 < 1e-12
    safe = o.where(small, 1.0 + 0.0 * t2, t2)
    t = o.sqrt(safe)
    s, c = o.sin(t), o.cos(t)
    A = o.where(small, 1.0 - t2 / 6.0, s / t)
    B = o.where(small, 0.5 - t2 / 24.0, (1.0 - c) / safe)
    C = o.where(small, 1.0 / 6.0 - t2 / 120.0, (t - s) / (safe * t))
    W = o.skew(w)
    W2 = o.matmul(W, W)
    eye = o.eye(3, w)
    return eye + _scaled(o, A, W) + _scaled(o, B, W2), eye + _scaled(o, B, W) + _scaled(o, C, W2)
