"""Derivatives of the dynamics in any representation: the tangent of the configuration and the
chain-rule terms of the change of variables (docs/theory.md, "Derivatives of the dynamics").

**Tangent.** A derivative "with respect to q" is taken along ``delta = (delta_base, delta_s)``
(..., nv): the first-order change when the robot moves with generalized velocity ``delta`` in the
representation W for unit time. Joints move by ``s + delta_s``; the base pose ``H = (R, o)`` moves by

* BODY: ``H exp(delta_base^)`` (the twist in base coordinates);
* INERTIAL: ``exp(delta_base^) H`` (the twist in world coordinates);
* MIXED: ``o + delta_p`` and ``exp(delta_theta^) R`` (both in world axes).

:func:`retract` is that motion, exactly, derived from W's declaration (:func:`_flow`: the
closed-form motion with a constant declared velocity, for any point, axes and order). Velocities
and accelerations are held fixed in W coordinates, and external wrenches in the frame the
representation gives them (F, A or F[A]).

**Chain rule.** An engine computing in a BODY-based convention (``nu_t = T nu``, ``T =
blkdiag(X, P)``, ``X = B_X_W``, P any joint permutation, e.g. Pinocchio's) gives the derivatives of
its own dynamics at fixed target velocity and acceleration. Because T depends on the base pose and
``T_dot nu`` on the pose and the velocity, the derivatives in W are not ``T^T D T``:
:func:`inverse_dynamics_derivatives_back` and :func:`forward_dynamics_derivatives_back` add the
terms, each a (..., 6, 6) block on the base rows or columns (:func:`rate_matrix`,
:func:`rate_transpose_matrix`, :func:`bias_position_matrix`, :func:`bias_velocity_matrix`), and
apply T by blocks and index permutations, never forming dense (nv, nv) products with T. External
wrenches held fixed in A or F[A] add ``J^T K J`` (:func:`wrench_position_matrix`) to an engine's
derivative that holds them fixed in the body. Every block comes from W's declaration: its rate
Omega as the constant table of :func:`bridge.derivatives.functional.rate_table` (``Y(y) = -K(X y)
X`` and its siblings, zero blocks where the table says so), or, where Omega depends on the pose,
:func:`bridge.derivatives.functional.chain_blocks`; the functions take a :class:`Representation`
or any base velocity declaration.

**Array types.** Every function here also takes JAX arrays (under ``jax.jit``, ``jax.vmap``,
``jax.grad``) and CasADi SX/MX/DM matrices (unbatched, vectors as columns): those go through the
functional, namespace-generic path of :mod:`bridge.derivatives.functional` (the same formulas,
derived from the declarations' rates), and numpy arrays through the in-place numpy code below (the
engines' hot path). Nothing reads the values of a traced or symbolic argument; the numpy path's
``world_H_base=None`` shortcut (the blocks read X alone) is numpy-only.

This module is neutral: it names no library.
"""

from __future__ import annotations

import numpy as np

from bridge._cache import per_model
from bridge.conventions.change_of_variables import ChangeOfVariables, JointOrder
from bridge.conventions.declaration import BODY_VELOCITY, Axes, BaseVelocity, Point
from bridge.conventions.state import Representation, velocity_declaration
from bridge.derivatives.functional import (
    RateTable,
    chain_blocks,
    exp_se3_parts,
    forward_back,
    inverse_back,
    rate_table,
)
from bridge.errors import InvalidValueError
from bridge.spatial.so3 import skew, so3_exp, so3_left_jacobian
from bridge.spatial.xp import NUMPY, Ops, is_foreign, namespace

__all__ = [
    "base_blocks",
    "bias_position_matrix",
    "bias_velocity_matrix",
    "flat_index",
    "force_cross_matrix",
    "forward_dynamics_derivatives_back",
    "inverse_dynamics_derivatives_back",
    "rate_matrix",
    "rate_transpose_matrix",
    "retract",
    "wrench_position_matrix",
    "wrench_position_term",
]


# --------------------------------------------------------------------------- the tangent
def retract(
    world_H_base: np.ndarray,
    s: np.ndarray,
    delta: np.ndarray,
    representation: object,
    layout: object = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The configuration reached by moving with generalized velocity ``delta`` for unit time.

    Args:
        world_H_base: base poses (..., 4, 4).
        s: joint positions (..., n) ((..., nq) with joints of several coordinates).
        delta: (..., 6 + n) (floating base: base part first, in ``representation``) or (..., n)
            (the base does not move); (..., [6 +] nv) with joints of several coordinates.
        representation: the representation W of ``delta``'s base part (and of each free, ball and
            planar joint's part).
        layout: the model (or its :class:`~bridge.model.joints.Coordinates`) when it has joints of
            several coordinates: each moves on its manifold along W's tangent
            (:meth:`bridge.model.joints.JointSpec.integrate`), the others by ``s + delta_s``.

    Returns:
        ``(world_H_base', s')`` with the broadcast batch axes: BODY ``H exp(d^)``, INERTIAL
        ``exp(d^) H``, MIXED ``(exp(d_theta^) R, o + d_p)``; ``s' = s + delta_s``.
    """
    rep = Representation.parse(representation)
    coords = getattr(layout, "coordinates", layout)
    if coords is not None and not coords.single:
        return _retract_wide(world_H_base, s, delta, rep, coords)
    if _graph(world_H_base, s, delta):
        return _retract_graph(namespace(world_H_base, s, delta), world_H_base, s, delta, rep)
    H = np.asarray(world_H_base, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    n = s.shape[-1]
    s_new = s + delta[..., delta.shape[-1] - n :]
    if delta.shape[-1] == n:
        lead = np.broadcast_shapes(H.shape[:-2], delta.shape[:-1])
        return np.broadcast_to(H, (*lead, 4, 4)).copy(), s_new
    E, V = so3_exp, so3_left_jacobian
    return _flow(NUMPY, velocity_declaration(rep), H, delta[..., :6], lambda w: (E(w), V(w))), s_new


def _flow(o: Ops, decl: BaseVelocity, H: object, d: object, exp_parts) -> object:
    """The base pose (..., 4, 4) reached from H by moving with the constant base velocity ``d``
    (..., 6) declared by ``decl`` for unit time, in closed form from the declaration
    (``exp_parts(w) = (exp(w^), V(w))``, the SO(3) exponential and its left Jacobian). The angular
    velocity in world axes, ``w = d_ang`` (world axes) or ``R d_ang`` (body axes), stays constant
    along the motion (``R(t) = exp(t w^) R``: ``exp(t w^) w = w``), so the rotation is
    ``exp(w^) R``. The declared point moves by the linear half: a point fixed in the base (its
    origin or centre of mass ``c``, at ``x = p + R c``) by ``d_lin`` (world axes) or by
    ``V(w) R d_lin`` (body axes: ``x_dot = R(t) d_lin``); the body point at the world origin
    (``p_dot = w x p + d_lin`` in world axes, ``w x p + R(t) d_lin`` in body axes) so that
    ``p' = exp(w^) p + V(w) d_lin`` or ``exp(w^) (p + R d_lin)``. BODY is ``H exp(d^)``, INERTIAL
    ``exp(d^) H``, MIXED ``(exp(d_ang^) R, p + d_lin)``."""
    first, second = o.vpart(d, 0, 3), o.vpart(d, 3, 6)
    lin, ang = (second, first) if decl.swap else (first, second)
    R, p = o.pose_parts(H)
    world_lin, world_ang = decl.linear_axes is Axes.WORLD, decl.angular_axes is Axes.WORLD
    w = ang if world_ang else o.matvec(R, ang)
    E, V = exp_parts(w)
    R_new = o.matmul(E, R)
    if decl.point is Point.WORLD_ORIGIN:
        if world_lin:
            return o.pose(R_new, o.matvec(E, p) + o.matvec(V, lin))
        return o.pose(R_new, o.matvec(E, p + o.matvec(R, lin)))
    step = lin if world_lin else o.matvec(V, o.matvec(R, lin))
    if decl.point is Point.BASE_ORIGIN:
        return o.pose(R_new, p + step)
    c = o.constant(decl._com(), p)
    return o.pose(R_new, p + o.matvec(R, c) + step - o.matvec(R_new, c))


def _retract_wide(
    world_H_base: object, s: object, delta: object, rep: Representation, coords
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`retract` of a model with joints of several coordinates (numpy)."""
    from bridge.errors import StateError
    from bridge.model.joints import Tangent

    if _graph(world_H_base, s, delta):
        raise StateError("retract: joints of several coordinates take numpy arrays")
    s = np.asarray(s, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    nv = coords.nv
    d_joints = delta[..., delta.shape[-1] - nv :]
    base_delta = delta[..., : delta.shape[-1] - nv]
    H, _ = retract(world_H_base, np.zeros(0), base_delta, rep)
    lead = np.broadcast_shapes(H.shape[:-2], s.shape[:-1], d_joints.shape[:-1])
    out = np.array(np.broadcast_to(s, (*lead, coords.nq)))
    tangent = Tangent(rep.value)
    singles = [k for k in range(len(coords.kinds)) if coords.kinds[k].nq == 1]
    if singles:
        q_idx = coords.q_start[singles]
        out[..., q_idx] = out[..., q_idx] + d_joints[..., coords.v_start[singles]]
    for k in coords.wide:
        q_sl, v_sl = coords.q_slice(k), coords.v_slice(k)
        out[..., q_sl] = coords.kinds[k].spec.integrate(out[..., q_sl], d_joints[..., v_sl], tangent)
    return np.broadcast_to(H, (*lead, 4, 4)).copy(), out


def _graph(*arrays: object) -> bool:
    """Whether any argument is a JAX array or a CasADi matrix (the functional path)."""
    return any(is_foreign(a) for a in arrays)


def _retract_graph(o: Ops, H: object, s: object, delta: object, rep: Representation) -> tuple:
    """:func:`retract` on the functional path (JAX, CasADi)."""
    H, s, delta = o.asarray(H, s), o.asarray(s, H), o.asarray(delta, H)
    n, nd = o.vsize(s), o.vsize(delta)
    s_new = s + o.vpart(delta, nd - n, nd)
    if nd == n:
        return H, s_new
    d = o.vpart(delta, 0, 6)
    return _flow(o, velocity_declaration(rep), H, d, lambda w: exp_se3_parts(o, w)), s_new


def _graph_blocks(H: object, rep: object, nu_b=None, acc_b=None, f_b=None) -> tuple:
    """:func:`bridge.derivatives.functional.chain_blocks` from W = ``rep`` (or its declaration) to
    BODY (X = B_X_W)."""
    o = namespace(H, nu_b, acc_b, f_b)
    decl = _declaration(rep)
    zero = o.vzeros(6, H)
    L1_inv = decl.matrices(H, o, which=(False, True))[1]
    args = (zero if x is None else o.asarray(x, H) for x in (nu_b, acc_b, f_b))
    return chain_blocks(o, H, decl, BODY_VELOCITY, o.eye(6, H), L1_inv, *args)


# --------------------------------------------------------------------------- 6x6 blocks
def _declaration(rep: object) -> BaseVelocity:
    """W's base velocity declaration (a :class:`Representation`, its name, or a declaration)."""
    return rep if isinstance(rep, BaseVelocity) else velocity_declaration(Representation.parse(rep))


def _table(rep: object) -> RateTable | None:
    """The constant rate table of W's declaration (None: its rate depends on the pose)."""
    return rate_table(_declaration(rep))


def force_cross_matrix(f: np.ndarray) -> np.ndarray:
    """``K(f)`` (..., 6, 6) with ``K(f) a = a x* f = -crm(a)^T f`` for motions a, forces f (..., 6):
    ``[[0, -f_lin^], [-f_lin^, -f_ang^]]``."""
    if _graph(f):
        o = namespace(f)
        F, Fa = o.skew(o.vpart(f, 0, 3)), o.skew(o.vpart(f, 3, 6))
        return o.block([[o.mzeros(3, 3, F), -F], [-F, -Fa]])
    f = np.asarray(f, dtype=np.float64)
    out = np.zeros((*f.shape[:-1], 6, 6))
    F = skew(f[..., :3])
    out[..., :3, 3:] = -F
    out[..., 3:, :3] = -F
    out[..., 3:, 3:] = -skew(f[..., 3:])
    return out


def _base_X(H: np.ndarray, rep: object) -> np.ndarray:
    """``B_X_W = L_W^-1`` (..., 6, 6) of a pose (from W's declaration)."""
    return _declaration(rep).matrices(H, NUMPY, which=(False, True))[1]


def _fixed(rep: object) -> bool:
    """``X = B_X_W`` does not depend on the pose (W's rate is zero: T is constant)."""
    t = _table(rep)
    return t is not None and not t.moves


def _apply(z: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``(z @ table).reshape(..., 6, 6)``: K, S or Kt of :class:`RateTable` at (..., 6) vectors."""
    return (z @ table).reshape(*z.shape[:-1], 6, 6)


def _vec(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", A, x)


def _blocks(rep: object, H: object, y: object = None, nu: object = None, f: object = None) -> tuple:
    """The chain rule's blocks from W = ``rep`` to BODY at poses H (..., 4, 4): ``Y(y)``,
    ``(B_q(nu), B_nu(nu))`` and ``Z(f)`` (None where zero), from W's declaration: its
    :class:`RateTable` on numpy arrays, :func:`chain_blocks` otherwise (a traced or symbolic
    argument, or a rate that depends on the pose)."""
    decl = _declaration(rep)
    t = rate_table(decl)
    if t is not None and not t.moves:
        return None, (None, None), None
    if t is None or _graph(H, y, nu, f):
        Y, Bq, Bnu, Z = _graph_blocks(H, decl, nu_b=nu if nu is not None else y, f_b=f)
        bias = nu is not None and (t is None or t.bias)
        return Y, ((Bq, Bnu) if bias else (None, None)), None if f is None else Z
    H = np.asarray(H, dtype=np.float64)
    X = _base_X(H, decl)
    Y = B = Z = None
    if y is not None:
        Y = -(_apply(_vec(X, np.asarray(y, dtype=np.float64)), t.Kr) @ X)
    if nu is not None and t.bias:
        u = _vec(X, np.asarray(nu, dtype=np.float64))
        S = _apply(u, t.Sr)
        B = (S @ _apply(u, t.Kr) @ X, -(S @ X))
    if f is not None:
        Z = -(np.swapaxes(X, -1, -2) @ _apply(np.asarray(f, dtype=np.float64), t.Ktr) @ X)
    return Y, (B or (None, None)), Z


def rate_matrix(H: np.ndarray, y: np.ndarray, rep: object) -> np.ndarray | None:
    """``Y`` (..., 6, 6) with ``Y delta_base = (dX[delta]) y``: the change of ``X = B_X_W`` along the
    tangent ``delta`` applied to a fixed (..., 6) vector ``y`` (None where X is constant, BODY):
    ``Y = -K(X y) X`` (:class:`~bridge.derivatives.functional.RateTable`). INERTIAL: ``crm(X y) X``;
    MIXED: ``[[0, R^T y_lin^], [0, R^T y_ang^]]``."""
    return _blocks(rep, H, y=y)[0]


def rate_transpose_matrix(H: np.ndarray, f: np.ndarray, rep: object) -> np.ndarray | None:
    """``Z`` (..., 6, 6) with ``Z delta_base = (dX[delta])^T f`` for a fixed (..., 6) force ``f``
    (None for BODY): ``Z = -X^T Kt(f) X``. INERTIAL: ``X^T K(f) X``; MIXED:
    ``[[0, -(R f_lin)^], [0, -(R f_ang)^]]``."""
    return _blocks(rep, H, f=f)[2]


def bias_position_matrix(H: np.ndarray, nu_base: np.ndarray, rep: object) -> np.ndarray | None:
    """The derivative (..., 6, 6) of the base part of ``T_dot nu`` along ``delta_base`` at fixed
    ``nu``: ``S(u) K(u) X`` (``u = X nu``); None where ``T_dot nu`` vanishes identically (S = 0:
    BODY, INERTIAL). MIXED: ``[[0, -R^T (w x v)^], [0, 0]]`` with ``nu_base = (v, w)``."""
    return _blocks(rep, H, nu=nu_base)[1][0]


def bias_velocity_matrix(H: np.ndarray, nu_base: np.ndarray, rep: object) -> np.ndarray | None:
    """The derivative (..., 6, 6) of the base part of ``T_dot nu`` with respect to the base velocity
    ``nu_base``: ``-S(X nu) X`` (None where S = 0: BODY, INERTIAL); MIXED
    ``[[-R^T w^, R^T v^], [0, 0]]``."""
    return _blocks(rep, H, nu=nu_base)[1][1]


def wrench_position_matrix(f: np.ndarray, rep: object) -> np.ndarray | None:
    """``K`` (..., 6, 6) such that a wrench ``f`` held fixed in the representation's frame C of a
    frame F (F, A or F[A]) adds ``J_C^T K J_C`` to ``d tau / d q`` of inverse dynamics, on top of
    the derivative at a wrench fixed in the body (``J_C`` (..., 6, nv) the Jacobian of C, its rows
    in C, its columns in any velocity coordinates, the same as the derivative's). From the
    declaration: the wrench seen in F is ``L^T f``, which changes by ``Kt(L^T f) X`` along C's
    velocity, so ``K = -X^T Kt(X^-T f) X``, independent of the pose for a constant rate (evaluated
    at the identity: ``K = -Kt(f)``). None for BODY; INERTIAL ``K(f)``; MIXED ``K(f)`` with its
    linear columns zero (the wrench translates with F; the zero columns are those of the velocity
    components Omega does not depend on)."""
    t = _table(rep)
    if t is None:
        decl = _declaration(rep)
        raise InvalidValueError(f"wrench_position_matrix: the rate of {decl} depends on the pose")
    if not t.moves:
        return None
    if _graph(f):
        return _kt_graph(namespace(f), t, f)
    return -_apply(np.asarray(f, dtype=np.float64), t.Ktr)


def _kt_graph(o: Ops, t: RateTable, f: object) -> object:
    """``-Kt(f) = -sum_j f_j U[j]`` (..., 6, 6) on the functional path."""
    out = None
    for j in range(6):
        if t.U[j].any():
            c, fj = o.constant(-t.U[j], f), o.vpart(f, j, j + 1)
            term = fj[..., None] * c if o.batched else fj * c
            out = term if out is None else out + term
    return out


def wrench_position_term(J: np.ndarray, f: np.ndarray, rep: object) -> np.ndarray | None:
    """``J^T K J`` (..., nv, nv) of :func:`wrench_position_matrix` (None for BODY; only the columns
    of K Omega depends on are multiplied: MIXED's three angular ones)."""
    K = wrench_position_matrix(f, rep)
    if K is None:
        return None
    if _graph(J, f):
        o = namespace(J, f)
        return o.matmul(o.mT(J), o.matmul(K, J))
    used = _table(rep).used
    if used.shape[0] < 6:  # J^T (K[:, used] J[used])
        return np.swapaxes(J, -1, -2) @ (K[..., :, used] @ J[..., used, :])
    return np.swapaxes(J, -1, -2) @ (K @ J)


def base_blocks(
    H: np.ndarray | None, X: np.ndarray, nu_b: np.ndarray, y_b: np.ndarray, f_b: np.ndarray, rep: object
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """``(Y(nu_b), Y(y_b) + B_q, B_nu, Z(f_b))`` (each (..., 6, 6); None where zero: all four when X
    is constant, B_nu where ``T_dot nu`` vanishes) for W = ``rep`` (or its declaration), ``X =
    B_X_W``, from W's :class:`~bridge.derivatives.functional.RateTable` (``H`` the base pose
    (..., 4, 4) is not read then, and may be None); a rate that depends on the pose goes through
    :func:`chain_blocks` (``H`` read). One unbatched state takes a few small products."""
    t = _table(rep)
    if t is None:
        Y, inner, Bnu, Z = _graph_blocks(H, rep, nu_b=nu_b, acc_b=y_b, f_b=f_b)
        return Y, inner, Bnu, Z
    if not t.moves:
        return None, None, None, None
    if X.ndim > 2 or nu_b.ndim > 1 or y_b.ndim > 1 or f_b.ndim > 1:
        Xt = np.swapaxes(X, -1, -2)
        u, a = _vec(X, nu_b), _vec(X, y_b)
        Ku = _apply(u, t.Kr)
        Y_nu, inner = -(Ku @ X), -(_apply(a, t.Kr) @ X)
        Bnu = None
        if t.bias:
            S = _apply(u, t.Sr)
            inner = inner + S @ Ku @ X
            Bnu = -(S @ X)
        return Y_nu, inner, Bnu, -(Xt @ _apply(f_b, t.Ktr) @ X)
    out = unbatched_blocks(t, X, nu_b, y_b, f_b, np.empty((4, 6, 6)))
    np.negative(out[3], out=out[3])
    return out[0], out[1], out[2] if t.bias else None, out[3]


class BlocksScratch:
    """The buffers of :func:`unbatched_blocks` (and views of them), made once by a caller that
    calls it often."""

    def __init__(self) -> None:
        self.W = np.empty((3, 6))  # u = X nu, a = X y, f
        self.P = np.empty((3, 144))  # W @ KSKt
        self.L = self.P[0, :108].reshape(18, 6)  # [-K(u); S(u) K(u) - K(a); -S(u)]
        self.Ku, self.mid = self.P[0, :36].reshape(6, 6), self.P[0, 36:72].reshape(6, 6)
        self.Su = self.P[0, 72:108].reshape(6, 6)
        self.Ka, self.Kt = self.P[1, :36].reshape(6, 6), self.P[2, 108:].reshape(6, 6)
        self.tmp = np.empty((6, 6))


def unbatched_blocks(
    t: RateTable,
    X: np.ndarray,
    nu_b: np.ndarray,
    y_b: np.ndarray,
    f_b: np.ndarray,
    out: np.ndarray,
    scratch: BlocksScratch | None = None,
) -> np.ndarray:
    """``out`` (4, 6, 6) (C-contiguous) set to ``Y(nu_b)``, ``Y(y_b) + B_q``, ``B_nu``, ``-Z(f_b)``
    of one state from W's rate table ``t`` and ``X = B_X_W`` (6, 6) (:func:`base_blocks`): a few
    small products into ``scratch``'s buffers (no allocation when given)."""
    b = BlocksScratch() if scratch is None else scratch
    W = b.W
    np.dot(X, nu_b, out=W[0])
    np.dot(X, y_b, out=W[1])
    W[2] = f_b
    np.dot(W, t.KSKt, out=b.P)  # -K(u), _, -S(u), _ | -K(a), ... | ..., Kt(f)
    np.dot(b.Su, b.Ku, out=b.mid)  # S(u) K(u) - K(a) = (-S(u)) (-K(u)) + (-K(a))
    b.mid += b.Ka
    np.dot(b.L, X, out=out[:3].reshape(18, 6))
    np.dot(X.T, b.Kt, out=b.tmp)
    np.dot(b.tmp, X, out=out[3])
    return out


# --------------------------------------------------------------------------- T by blocks
@per_model
def flat_index(joints: JointOrder) -> np.ndarray:
    """Flat indices (nv * nv,) of ``A[back][:, back]`` in a C-ordered (nv, nv) A for the joint order's
    ``back`` (not None), made once per joint order (a gather by flat index costs a fifth of numpy's
    two-axis fancy indexing)."""
    back = joints.back
    n = back.shape[0]
    return (back[:, None] * n + back[None, :]).ravel()


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` (one BLAS call for two plain matrices)."""
    return a.dot(b) if a.ndim == 2 and b.ndim == 2 else a @ b


def _permuted(cov: ChangeOfVariables, A: np.ndarray) -> np.ndarray:
    """``P^T A P`` on the joint block (rows and columns to the source order; a new array)."""
    back = cov.joints.back
    if back is None:
        return A.copy()
    nv = back.shape[0]
    flat = A.reshape(*A.shape[:-2], nv * nv)
    return flat.take(flat_index(cov.joints), axis=-1).reshape(A.shape)


def _congruence(cov: ChangeOfVariables, A: np.ndarray, left: np.ndarray | None, right: np.ndarray | None):
    """``L A R`` for ``L = blkdiag(left, P^T)``, ``R = blkdiag(right, P)`` (left/right (..., 6, 6)
    or None for the identity): base rows and columns by blocks, joints permuted (a new array)."""
    out = _permuted(cov, A)
    if right is not None:
        out = _batch_like(out, right)
        out[..., :, :6] = out[..., :, :6] @ right
    if left is not None:
        out = _batch_like(out, left)
        out[..., :6, :] = left @ out[..., :6, :]
    return out


def _rows(cov: ChangeOfVariables, C: np.ndarray, left: np.ndarray | None) -> np.ndarray:
    """``blkdiag(left, P^T) C`` for a (..., nv, m) C (a new array)."""
    back = cov.joints.back
    out = C[..., back, :] if back is not None else C.copy()
    if left is not None:
        out = _batch_like(out, left)
        out[..., :6, :] = left @ out[..., :6, :]
    return out


def _batch_like(out: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``out`` broadcast to the batch axes of ``other`` too (a writeable array)."""
    if other.ndim <= 2 or out.shape[:-2] == other.shape[:-2]:
        return out
    shape = (*np.broadcast_shapes(out.shape[:-2], other.shape[:-2]), *out.shape[-2:])
    return out if shape == out.shape else np.broadcast_to(out, shape).copy()


def _T(x: np.ndarray | None) -> np.ndarray | None:
    return None if x is None else np.swapaxes(x, -1, -2)


_B = slice(0, 6)


def _assemble(
    cov: ChangeOfVariables,
    A: np.ndarray,
    base_cols: np.ndarray,
    left: np.ndarray | None,
    before: np.ndarray | None = None,
    after: np.ndarray | None = None,
) -> np.ndarray:
    """``blkdiag(left, P^T) (A') `` where A' is A with its joints permuted and its base columns
    replaced by ``base_cols`` (..., nv, 6) (given in A's row order); ``before``/``after`` (..., 6, 6)
    are added to the base block before/after the rows are multiplied by ``left``."""
    K = _batch_like(_permuted(cov, A), base_cols)
    back = cov.joints.back
    K[..., :, :6] = base_cols if back is None else base_cols.take(back, axis=-2)
    if before is not None:
        K[..., :6, :6] += before
    if left is not None:
        K[..., :6, :] = _mm(left, K[..., :6, :])
    if after is not None:
        K[..., :6, :6] += after
    return K


def inverse_dynamics_derivatives_back(
    cov: ChangeOfVariables,
    world_H_base: np.ndarray,
    rep: object,
    dtau_dq_t: np.ndarray,
    dtau_dv_t: np.ndarray,
    M_t: np.ndarray,
    tau_t: np.ndarray,
    nu_dot: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The derivatives of ``ID^W = T^T ID_t(q, T nu, T nu_dot + T_dot nu)`` in W.

    Args:
        cov: the change of variables from W to a BODY-based target convention (``X = B_X_W``), at
            the state (its ``nu`` is the velocity in W).
        world_H_base: base poses (..., 4, 4) (read only where W's rate depends on the pose; may be
            None otherwise).
        rep: W (a :class:`Representation` or its base velocity declaration).
        dtau_dq_t: the target engine's derivative (..., nv, nv) of its inverse dynamics with
            respect to its tangent (in its order).
        dtau_dv_t: the same with respect to its velocity.
        M_t: the same with respect to its acceleration (its mass matrix).
        tau_t: its inverse dynamics (..., nv) at the state (a generalized force in the target).
        nu_dot: the acceleration in W (..., nv).

    Returns:
        ``(dtau_dq, dtau_dnu, dtau_dnudot)`` (..., nv, nv) in W, q along :func:`retract`'s tangent:
        ``dtau_dq = T^T [D_q T + D_v[:, b] Y(nu) + M_t[:, b] (Y(nu_dot) + B_q)] + Z(tau_t)``,
        ``dtau_dnu = T^T [D_v T + M_t[:, b] B_nu]``, ``dtau_dnudot = T^T M_t T`` (b the base columns,
        Y :func:`rate_matrix`, Z :func:`rate_transpose_matrix`, B :func:`bias_position_matrix`,
        :func:`bias_velocity_matrix`).
    """
    if _graph(cov.X, cov.nu, world_H_base, dtau_dq_t, dtau_dv_t, M_t, tau_t, nu_dot):
        blocks = _body_based_blocks(cov, world_H_base, rep, dtau_dq_t, dtau_dv_t, M_t, tau_t, nu_dot)
        return inverse_back(cov, blocks, dtau_dq_t, dtau_dv_t, M_t)
    X = cov.X
    if not cov.floating or X is None or _fixed(rep):
        Xt = _T(X)
        return tuple(_congruence(cov, A, Xt, X) for A in (dtau_dq_t, dtau_dv_t, M_t))
    Xt = np.swapaxes(X, -1, -2)
    Y_nu, inner, Bnu, Z = base_blocks(world_H_base, X, cov.nu[..., :6], nu_dot[..., :6], tau_t[..., :6], rep)
    # base columns of D_q T + D_v[:, b] Y(nu) + M[:, b] (Y(nu_dot) + B_q) in one product
    W = np.concatenate((dtau_dq_t[..., :, :6], dtau_dv_t[..., :, :6], M_t[..., :, :6]), axis=-1)
    dq = _assemble(cov, dtau_dq_t, W @ np.concatenate(_same_batch(X, Y_nu, inner), axis=-2), Xt, after=Z)
    # base columns of D_v T + M[:, b] B_nu
    base_v = W[..., 6:12] @ X if Bnu is None else W[..., 6:] @ np.concatenate(_same_batch(X, Bnu), axis=-2)
    dnu = _assemble(cov, dtau_dv_t, base_v, Xt)
    return dq, dnu, _assemble(cov, M_t, M_t[..., :, :6] @ X, Xt)


def forward_dynamics_derivatives_back(
    cov: ChangeOfVariables,
    world_H_base: np.ndarray,
    rep: object,
    da_dq_t: np.ndarray,
    da_dv_t: np.ndarray,
    M_inv_t: np.ndarray,
    tau_t: np.ndarray,
    nu_dot: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The derivatives of ``FD^W = T^-1 (FD_t(q, T nu, T^-T tau) - T_dot nu)`` in W.

    Args:
        cov: as in :func:`inverse_dynamics_derivatives_back`.
        world_H_base: base poses (..., 4, 4).
        rep: W (a :class:`Representation` or its base velocity declaration).
        da_dq_t: the target engine's derivative (..., nv, nv) of its forward dynamics with
            respect to its tangent (in its order).
        da_dv_t: the same with respect to its velocity.
        M_inv_t: the same with respect to its generalized force (its inverse mass matrix).
        tau_t: the generalized force in the target (..., nv) (``T^-T tau``).
        nu_dot: the acceleration in W (..., nv) (the forward dynamics at the state).

    Returns:
        ``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` (..., nv, nv) in W:
        ``dnudot_dq = T^-1 [A_q T + A_v[:, b] Y(nu) - M_t^-1[:, b] X^-T Z(tau_t) - (Y(nu_dot) + B_q)_bb]``,
        ``dnudot_dnu = T^-1 [A_v T - (B_nu)_bb]``, ``dnudot_dtau = T^-1 M_t^-1 T^-T``.
    """
    if _graph(cov.X, cov.nu, world_H_base, da_dq_t, da_dv_t, M_inv_t, tau_t, nu_dot):
        blocks = _body_based_blocks(cov, world_H_base, rep, da_dq_t, da_dv_t, M_inv_t, tau_t, nu_dot)
        return forward_back(cov, blocks, da_dq_t, da_dv_t, M_inv_t)
    X = cov.X
    if not cov.floating or X is None or _fixed(rep):
        Xi = None if X is None else cov._base_inv()
        return (
            _congruence(cov, da_dq_t, Xi, X),
            _congruence(cov, da_dv_t, Xi, X),
            _congruence(cov, M_inv_t, Xi, _T(Xi)),
        )
    Xi = cov._base_inv()
    XiT = np.swapaxes(Xi, -1, -2)
    Y_nu, inner, Bnu, Z = base_blocks(world_H_base, X, cov.nu[..., :6], nu_dot[..., :6], tau_t[..., :6], rep)
    # base columns of A_q T + A_v[:, b] Y(nu) - M^-1[:, b] X^-T Z(tau) in one product
    W = np.concatenate((da_dq_t[..., :, :6], da_dv_t[..., :, :6], M_inv_t[..., :, :6]), axis=-1)
    base_q = W @ np.concatenate(_same_batch(X, Y_nu, -(XiT @ Z)), axis=-2)
    dq = _assemble(cov, da_dq_t, base_q, Xi, before=-inner)
    dnu = _assemble(cov, da_dv_t, W[..., 6:12] @ X, Xi, before=None if Bnu is None else -Bnu)
    return dq, dnu, _assemble(cov, M_inv_t, W[..., 12:] @ XiT, Xi)


def _same_batch(*blocks: np.ndarray) -> tuple[np.ndarray, ...]:
    """(..., 6, 6) blocks broadcast to one batch shape (to be stacked)."""
    if all(b.ndim == 2 for b in blocks):
        return blocks
    lead = np.broadcast_shapes(*(b.shape[:-2] for b in blocks))
    return tuple(np.broadcast_to(b, (*lead, 6, 6)) for b in blocks)


def _body_based_blocks(
    cov: ChangeOfVariables, H: object, rep: Representation, *arrays: object
) -> tuple | None:
    """The functional path's blocks from W = ``rep`` to the BODY-based target of ``cov`` (its base
    velocity ``L_t v_B = X L_W v_B``); ``cov.ops`` set to the arguments' namespace."""
    tau_t, nu_dot = arrays[-2], arrays[-1]
    o = cov.ops = namespace(cov.X, cov.nu, H, *arrays)
    if not cov.floating or cov.X is None:
        return None
    decl = _declaration(rep)
    L1, L1_inv = decl.matrices(H, o)
    nu_b, acc_b, f_b = (o.vpart(o.asarray(x, H), 0, 6) for x in (cov.nu, nu_dot, tau_t))
    return chain_blocks(o, H, decl, BODY_VELOCITY, o.matmul(cov.X, L1), L1_inv, nu_b, acc_b, f_b)
