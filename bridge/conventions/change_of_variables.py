"""The change of variables between generalized-velocity conventions: one object, named maps.

A *convention* says how a generalized velocity is laid out: which 6D base velocity comes first
(BODY, INERTIAL or MIXED, possibly re-ordered or mixed further by a foreign library) and in which
order the joints follow. Between two conventions the generalized velocities are related by

    nu_t = T nu_s,        T = blkdiag(X, P),

with ``X`` (6, 6) the base block (any invertible 6x6 that depends on the base pose and velocity, not
only the rotation blocks of the three neutral representations) and ``P`` a permutation of the joint
velocities. Differentiating, ``nu_dot_t = T nu_dot_s + T_dot nu_s``, and power ``tau . nu`` being
invariant, generalized forces map with ``T^-T``. docs/theory.md ("One change of variables, any two
conventions") derives every map from these two lines; :class:`ChangeOfVariables` implements them,
block by block, never forming the dense (6+n) x (6+n) matrices unless asked for.

Every engine that does not compute natively in the user's representation (Pinocchio in LOCAL with
depth-first joints, bridge's own Featherstone algorithms in world coordinates angular first, ...)
converts through one :class:`ChangeOfVariables` from the user's convention to its own: ``velocity``,
``acceleration`` (with ``T_dot nu``), ``force`` on the way in; ``force_back``, ``matrix_back``,
``jacobian_back``, ``acceleration_back``, ``bias_back`` on the way out.

This module is neutral: each backend describes its own convention with a :class:`Convention`
(its base map relative to BODY and its joint order) and nothing here names a library.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from bridge.conventions.declaration import BaseMaps, BaseVelocity, Configuration
from bridge.conventions.single_state import SingleBias
from bridge.conventions.state import Representation, State, velocity_declaration
from bridge.errors import InvalidValueError

if TYPE_CHECKING:  # pragma: no cover
    from bridge.model.model import Model

__all__ = [
    "BODY",
    "INERTIAL",
    "MIXED",
    "NEUTRAL",
    "BaseMaps",
    "ChangeOfVariables",
    "Convention",
    "JointOrder",
    "change_of_variables",
]


@dataclass(frozen=True, eq=False)
class Convention:
    """A library's convention, declared as data: its base velocity, its configuration and its
    joint order. Every map between two conventions is derived from two such declarations.

    Attributes:
        name: the name users pass ("body", "pinocchio", ...).
        velocity: how the base velocity is written (:class:`~bridge.conventions.declaration.BaseVelocity`;
            a :class:`Representation` or its name stands for the neutral one).
        joint_order: optional ``model -> perm`` with ``native_joints[i] = model_joints[perm[i]]``
            (None: the model's DOF order).
        configuration: where the base pose and the joints sit in the configuration vector
            (:class:`~bridge.conventions.declaration.Configuration`; None: the convention has no
            configuration layout of its own, e.g. a neutral representation).
    """

    name: str
    velocity: BaseVelocity
    joint_order: Callable[[Model], np.ndarray | None] | None = None
    configuration: Configuration | None = None
    _perms: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.velocity, BaseVelocity):
            object.__setattr__(self, "velocity", velocity_declaration(Representation.parse(self.velocity)))
        if self.configuration is not None and not isinstance(self.configuration, Configuration):
            raise InvalidValueError(
                f"Convention {self.name!r}: configuration must be a Configuration, got "
                f"{type(self.configuration).__name__}"
            )
        if self.joint_order is not None and not callable(self.joint_order):
            raise InvalidValueError(f"Convention {self.name!r}: joint_order must be callable (model -> perm)")

    def __repr__(self) -> str:
        return f"Convention({self.name!r})"

    @property
    def representation(self) -> Representation | None:
        """The neutral representation measuring the same velocity (whatever the order of its
        halves), or None (e.g. MuJoCo's free joint)."""
        for rep, conv in NEUTRAL.items():
            if conv.velocity.same_frame(self.velocity):
                return rep
        return None

    def maps(self, world_H_base, v_body: np.ndarray) -> BaseMaps:
        """The base maps of this convention at a pose and BODY base velocity (..., 6)."""
        return self.velocity.maps(world_H_base, v_body)

    def permutation(self, model: Model) -> np.ndarray | None:
        """``perm`` (n,) with ``native[i] = model[perm[i]]``, None for the model's own order
        (computed once per model)."""
        if self.joint_order is None:
            return None
        try:
            cached = self._perms.get(model, _MISSING)
        except TypeError:  # not weak-referenceable: no cache
            return _canonical_perm(self.joint_order(model))
        if cached is _MISSING:
            cached = _canonical_perm(self.joint_order(model))
            self._perms[model] = cached
        return cached


_MISSING = object()


def _canonical_perm(perm: object) -> np.ndarray | None:
    if perm is None:
        return None
    p = np.array(perm, dtype=np.intp)
    if np.array_equal(p, np.arange(p.shape[0])):
        return None
    p.setflags(write=False)
    return p


BODY = Convention("body", "body")
INERTIAL = Convention("inertial", "inertial")
MIXED = Convention("mixed", "mixed")


class JointOrder:
    """The joint block P of T and the index arrays of its products, computed once per model.

    ``(P x)[i] = x[perm[i]]``; ``nb`` is 6 for a floating base, 0 for a fixed one. Index arrays
    are absolute column indices into (nv,) vectors: ``forward`` picks the joints of the target from a
    source vector (``forward_full``: the same behind the base columns), ``back`` a whole source
    vector from a target one (base columns first).
    """

    __slots__ = ("back", "forward", "forward_full", "inverse", "n", "nb", "nv", "perm")

    def __init__(self, perm: np.ndarray | None, n: int, nb: int) -> None:
        self.perm = perm
        self.n, self.nb, self.nv = n, nb, nb + n
        if perm is None:
            self.inverse = self.forward = self.forward_full = self.back = None
        else:
            self.inverse = np.argsort(perm)
            self.forward = nb + perm
            self.forward_full = np.concatenate([np.arange(nb), self.forward]).astype(np.intp)
            self.back = np.concatenate([np.arange(nb), nb + self.inverse]).astype(np.intp)

    @classmethod
    def between(cls, model: Model, source: Convention, target: Convention) -> JointOrder:
        """The joint order from ``source`` to ``target`` for ``model`` (cached per model)."""
        key = (source, target)
        try:
            cache = _ORDERS.setdefault(model, {})
        except TypeError:
            cache = {}
        order = cache.get(key)
        if order is None:
            ps, pt = source.permutation(model), target.permutation(model)
            n = model.n_dofs
            # nu_s = nu_m[ps] and nu_t = nu_m[pt] (m: the model's order)
            inv_s = np.argsort(ps) if ps is not None else np.arange(n)
            perm = _canonical_perm(inv_s[pt] if pt is not None else inv_s)
            order = cache[key] = cls(perm, n, 6 if model.floating else 0)
        return order

    def matrix(self) -> np.ndarray:
        """Dense P (n, n)."""
        P = np.eye(self.n)
        return P if self.perm is None else P[self.perm]


_ORDERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _mv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``A @ x`` for (..., 6, 6) A and (..., 6) x (a BLAS call for one unbatched pair)."""
    if A.ndim == 2 and x.ndim == 1:
        return A.dot(x)
    return np.einsum("...ij,...j->...i", A, x)


def _mtv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``A^T @ x`` for (..., 6, 6) A and (..., 6) x."""
    if A.ndim == 2 and x.ndim == 1:
        return x.dot(A)
    return np.einsum("...ji,...j->...i", A, x)


class ChangeOfVariables:
    """``nu_t = T nu_s`` with ``T = blkdiag(X, P)`` at one (batched) state, and its named maps.

    Args:
        X: base block (..., 6, 6) or None for the identity (also for a fixed base).
        X_inv: its inverse (..., 6, 6), or None to solve when needed (ignored if X is None).
        joints: the :class:`JointOrder` (P and the layout: floating or fixed).
        nu: the source generalized velocity (..., nv) at the state (T_dot nu needs it).
        X_dot: time derivative of X (..., 6, 6), or None for zero.
        bias: ``X_dot @ nu[..., :6]`` when already known, or a function computing it on first use
            (else computed from X_dot on demand).

    Shapes below: nv = 6 + n (floating) or n (fixed); every map broadcasts leading batch axes,
    and one unbatched vector takes plain BLAS calls (the single-state hot paths of the engines).
    The ``*_back`` maps take ``overwrite=True`` when their argument is a fresh array the caller
    gives up (a library's output): it may then be returned as the result (unless it is a view).
    """

    __slots__ = ("X", "X_dot", "X_inv", "_bias", "_bias_fn", "bias_free", "identity", "joints", "nu")

    def __init__(
        self,
        X: np.ndarray | None,
        X_inv: np.ndarray | None,
        joints: JointOrder,
        nu: np.ndarray | None = None,
        X_dot: np.ndarray | None = None,
        bias: np.ndarray | None = None,
    ) -> None:
        floating = joints.nb == 6
        self.X = X if floating else None
        self.X_inv = X_inv if floating else None
        self.X_dot = X_dot if floating else None
        self.joints = joints
        self.nu = nu
        lazy = floating and callable(bias)
        self._bias = bias if floating and not lazy else None
        self._bias_fn = bias if lazy else None
        #: True when ``T_dot nu`` is known to be zero (no base block derivative, no given bias)
        self.bias_free = not floating or (bias is None and X_dot is None)
        #: True when T is the identity and ``T_dot nu`` zero: every map returns its argument (the
        #: engines' hot paths then skip the call)
        self.identity = self.bias_free and self.X is None and joints.perm is None

    # ------------------------------------------------------------------ blocks
    @property
    def floating(self) -> bool:
        return self.joints.nb == 6

    @property
    def base_bias(self) -> np.ndarray | None:
        """``X_dot nu_base`` (..., 6): the base part of ``T_dot nu`` (None when zero)."""
        b = self._bias
        if b is None and not self.bias_free:
            if self._bias_fn is not None:
                b = self._bias = self._bias_fn()
            elif self.X_dot is not None and self.nu is not None:
                b = self._bias = _mv(self.X_dot, self.nu[..., :6])
        return b

    def base_bias_into(self, out: np.ndarray) -> bool:
        """One state: write ``X_dot nu_base`` (6,) into ``out`` (6,) and return True, or return False
        when it is zero (``out`` untouched). Entries known to be zero are not written (MIXED ->
        BODY writes the linear part alone): ``out`` must hold zeros outside what was written before
        (a buffer that only this method writes to, made with zeros)."""
        if self.bias_free:
            return False
        fn = self._bias_fn
        if type(fn) is SingleBias and self._bias is None:
            fn.write_into(out)
            return True
        b = self.base_bias
        if b is None:
            return False
        out[...] = b
        return True

    @property
    def bias_acceleration(self) -> np.ndarray:
        """``T_dot nu`` (..., nv) in the target convention: the target acceleration of zero source
        acceleration (what an engine's inverse dynamics takes to give the bias forces)."""
        b = self.base_bias
        nv = self.joints.nv
        if b is None:
            lead = () if self.nu is None else self.nu.shape[:-1]
            return np.zeros((*lead, nv))
        out = np.zeros((*b.shape[:-1], nv))
        out[..., :6] = b
        return out

    def _base_inv(self) -> np.ndarray:
        if self.X_inv is None:
            self.X_inv = np.linalg.inv(self.X)
        return self.X_inv

    # ------------------------------------------------------------------ vectors
    @staticmethod
    def _assemble(
        x: np.ndarray, base: np.ndarray | None, cols: np.ndarray | None, overwrite: bool = False
    ) -> np.ndarray:
        """A new (..., nv) vector ``x[..., cols]`` (or a copy of x, or x itself with ``overwrite``)
        with its base part replaced by ``base`` (..., 6) when given (``cols`` keeps the base
        columns first)."""
        if x.ndim == 1 and (base is None or base.ndim == 1):  # one state: no broadcasting
            out = x[cols] if cols is not None else (x if overwrite and x.base is None else x.copy())
            if base is not None:
                out[:6] = base
            return out
        out = x.take(cols, axis=-1) if cols is not None else x.copy()
        if base is not None:
            if base.shape[:-1] != out.shape[:-1]:
                lead = np.broadcast_shapes(out.shape[:-1], base.shape[:-1])
                out = np.broadcast_to(out, (*lead, out.shape[-1])).copy()
            out[..., :6] = base
        return out

    def velocity(self, nu: np.ndarray) -> np.ndarray:
        """``T nu`` (..., nv): source -> target velocities."""
        base = None if self.X is None else _mv(self.X, nu[..., :6])
        return self._assemble(nu, base, self.joints.forward_full)

    def acceleration_into(
        self, base: np.ndarray | None, joints: np.ndarray, out_base: np.ndarray, out_joints: np.ndarray
    ) -> None:
        """One state: write ``T [base; joints] + T_dot nu`` into the base (6,) and joint (n,) parts of
        a target vector (``base``/``out_base`` unused for a fixed base)."""
        perm = self.joints.perm
        out_joints[...] = joints if perm is None else joints[perm]
        if self.joints.nb:
            if self.X is None:
                out_base[...] = base
            else:  # (the product is float64 for any real base, written in place)
                np.dot(self.X, base, out=out_base)
            b = self._bias
            if b is not None:
                out_base += b
            elif not self.bias_free:
                fn = self._bias_fn
                if type(fn) is SingleBias:  # three numbers, added in Python floats
                    fn.add_into(out_base)
                else:
                    b = self.base_bias
                    if b is not None:
                        out_base += b

    def velocity_back(self, nu_t: np.ndarray, overwrite: bool = False) -> np.ndarray:
        """``T^-1 nu_t`` (..., nv): target -> source velocities."""
        X = self.X
        if nu_t.ndim == 1 and (X is None or X.ndim == 2):  # one state (the engines' hot path)
            back = self.joints.back
            keep = overwrite and nu_t.base is None
            out = nu_t[back] if back is not None else (nu_t if keep else nu_t.copy())
            if X is not None:
                out[:6] = (self.X_inv if self.X_inv is not None else self._base_inv()).dot(nu_t[:6])
            return out
        base = None if X is None else _mv(self._base_inv(), nu_t[..., :6])
        return self._assemble(nu_t, base, self.joints.back, overwrite)

    def acceleration(self, nu_dot: np.ndarray) -> np.ndarray:
        """``T nu_dot + T_dot nu`` (..., nv): source -> target accelerations."""
        out = self.velocity(nu_dot)
        b = self.base_bias
        if b is not None:
            if out.ndim == 1 and b.ndim == 1:
                out[:6] += b
            else:
                shape = np.broadcast_shapes(out.shape, (*b.shape[:-1], out.shape[-1]))
                out = np.broadcast_to(out, shape).copy()
                out[..., :6] += b
        return out

    def acceleration_back(self, nu_dot_t: np.ndarray, overwrite: bool = False) -> np.ndarray:
        """``T^-1 (nu_dot_t - T_dot nu)`` (..., nv): target -> source accelerations."""
        if self.bias_free:
            return self.velocity_back(nu_dot_t, overwrite)
        fn = self._bias_fn
        if nu_dot_t.ndim == 1 and type(fn) is SingleBias and self._bias is None:
            # one state (the engines' hot path): T_dot nu taken off in Python floats, then X^-1 on
            # the base and the joints permuted back
            if not (overwrite and nu_dot_t.base is None):
                nu_dot_t = nu_dot_t.copy()
            fn.subtract_from(nu_dot_t)
            back = self.joints.back
            out = nu_dot_t if back is None else nu_dot_t[back]
            out[:6] = self.X_inv.dot(nu_dot_t[:6])
            return out
        b = self.base_bias
        if b is not None:
            if nu_dot_t.ndim == 1 and b.ndim == 1:  # one state
                base = nu_dot_t[:6] - b
                if self.X is not None:
                    base = (self.X_inv if self.X_inv is not None else self._base_inv()).dot(base)
                back = self.joints.back
                if back is not None:
                    out = nu_dot_t[back]
                else:
                    out = nu_dot_t if overwrite and nu_dot_t.base is None else nu_dot_t.copy()
                out[:6] = base
                return out
            lead = np.broadcast_shapes(nu_dot_t.shape[:-1], b.shape[:-1])
            nu_dot_t = np.broadcast_to(nu_dot_t, (*lead, nu_dot_t.shape[-1])).copy()
            nu_dot_t[..., :6] -= b
            overwrite = True
        return self.velocity_back(nu_dot_t, overwrite)

    def apply_derivative(self, x: np.ndarray) -> np.ndarray:
        """``T_dot x`` (..., nv) for any (..., nv) vector x."""
        if self.X_dot is None:
            return np.zeros_like(x)
        base = _mv(self.X_dot, x[..., :6])
        out = np.zeros((*base.shape[:-1], x.shape[-1]))
        out[..., :6] = base
        return out

    # ------------------------------------------------------------------ forces
    def force(self, tau: np.ndarray) -> np.ndarray:
        """``T^-T tau`` (..., nv): source -> target generalized forces (power-preserving)."""
        base = None if self.X is None else _mtv(self._base_inv(), tau[..., :6])
        return self._assemble(tau, base, self.joints.forward_full)

    def force_back(self, tau_t: np.ndarray, overwrite: bool = False) -> np.ndarray:
        """``T^T tau_t`` (..., nv): target -> source generalized forces."""
        X = self.X
        if tau_t.ndim == 1 and (X is None or X.ndim == 2):  # one state (the engines' hot path)
            back = self.joints.back
            if back is not None:
                out = tau_t[back]
            else:
                out = tau_t if overwrite and tau_t.base is None else tau_t.copy()
            if X is not None:
                out[:6] = tau_t[:6].dot(X)
            return out
        base = None if X is None else _mtv(X, tau_t[..., :6])
        return self._assemble(tau_t, base, self.joints.back, overwrite)

    def bias_back(self, h_t: np.ndarray, M_t: np.ndarray) -> np.ndarray:
        """``T^T (h_t + M_t T_dot nu)`` (..., nv): the source bias forces from the target's bias
        forces ``h_t`` and mass matrix ``M_t`` (zero source acceleration is the target acceleration
        ``T_dot nu``)."""
        b = self.base_bias
        if b is not None:
            h_t = h_t + np.einsum("...ij,...j->...i", M_t[..., :, :6], b)
        return self.force_back(h_t)

    # ------------------------------------------------------------------ matrices
    def jacobian_back(self, J_t: np.ndarray, overwrite: bool = False) -> np.ndarray:
        """``J_t T`` (..., m, nv): a target Jacobian (``v = J_t nu_t``) as a source one."""
        back, X = self.joints.back, self.X
        keep = overwrite and J_t.base is None
        out = J_t.take(back, axis=-1) if back is not None else (J_t if keep else J_t.copy())
        if X is not None:
            if J_t.ndim == 2 and X.ndim == 2:  # one state (the engines' hot path)
                out[:, :6] = J_t[:, :6].dot(X)
            else:
                out[..., :6] = J_t[..., :6] @ X
        return out

    def matrix_back(self, M_t: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``T^T M_t T`` (..., nv, nv): a target mass matrix (or any quadratic form) as a source one
        (written into ``out`` when given: an array of the result's shape, not overlapping M_t)."""
        back = self.joints.back
        if back is not None:
            M_t = M_t[..., back[:, None], back[None, :]]
        if self.X is None:
            if out is not None:
                np.copyto(out, M_t)
                return out
            return M_t if back is not None else M_t.copy()
        X = self.X
        Xt = np.swapaxes(X, -1, -2)
        batch = np.broadcast_shapes(M_t.shape[:-2], X.shape[:-2])
        nv = self.joints.nv
        if out is None:
            out = np.empty((*batch, nv, nv))
        out[..., :6, :6] = Xt @ M_t[..., :6, :6] @ X
        out[..., :6, 6:] = Xt @ M_t[..., :6, 6:]
        out[..., 6:, :6] = M_t[..., 6:, :6] @ X
        out[..., 6:, 6:] = M_t[..., 6:, 6:]
        return out

    def coriolis_back(self, C_t: np.ndarray, M_t: np.ndarray) -> np.ndarray:
        """``T^T (C_t T + M_t T_dot)`` (..., nv, nv): a target Coriolis matrix as a source one.

        With ``nu_t = T nu``: ``C nu = T^T (C_t nu_t + M_t T_dot nu)`` (the source bias forces
        without gravity) and ``C + C^T = T^T (C_t + C_t^T) T + T_dot^T M_t T + T^T M_t T_dot``, the
        time derivative of ``T^T M_t T``: both properties carry over (docs/theory.md)."""
        out = self.matrix_back(C_t)
        if self.X_dot is None:
            return out
        if out is C_t:
            out = out.copy()
        # M_t T_dot is nonzero in its first six columns only: M_t[:, :6] X_dot; then T^T on the left
        Z = M_t[..., :, :6] @ self.X_dot  # (..., nv, 6), target rows (a new array)
        back = self.joints.back
        if back is not None:
            Z = Z[..., back, :]
        if self.X is not None:
            Z[..., :6, :] = np.swapaxes(self.X, -1, -2) @ Z[..., :6, :]
        lead = np.broadcast_shapes(out.shape[:-2], Z.shape[:-2])
        if out.shape[:-2] != lead:
            out = np.broadcast_to(out, (*lead, *out.shape[-2:])).copy()
        out[..., :, :6] += Z
        return out

    # ------------------------------------------------------------------ dense forms
    def matrix(self) -> np.ndarray:
        """Dense T (..., nv, nv)."""
        j = self.joints
        P = j.matrix()
        if not self.floating:
            return P
        X = np.eye(6) if self.X is None else self.X
        T = np.zeros((*X.shape[:-2], j.nv, j.nv))
        T[..., :6, :6] = X
        T[..., 6:, 6:] = P
        return T

    def derivative(self) -> np.ndarray:
        """Dense T_dot (..., nv, nv)."""
        nv = self.joints.nv
        if self.X_dot is None:
            lead = () if self.X is None else self.X.shape[:-2]
            return np.zeros((*lead, nv, nv))
        Td = np.zeros((*self.X_dot.shape[:-2], nv, nv))
        Td[..., :6, :6] = self.X_dot
        return Td


def change_of_variables(
    model: Model, state: State, source: Convention, target: Convention
) -> ChangeOfVariables:
    """The :class:`ChangeOfVariables` from ``source`` to ``target`` at ``state`` (batched).

    ``nu`` of the result is the state's generalized velocity in ``source``. With each convention's
    base velocity ``L v_B``: ``X = L_t L_s^-1`` and ``X_dot = L_t_dot L_s^-1 + L_t d/dt(L_s^-1)``.
    """
    if not isinstance(state, State) or not hasattr(model, "n_dofs"):
        from bridge.errors import StateError

        raise StateError(
            f"change of variables: expected a model and a bridge State, got {type(model).__name__} and "
            f"{type(state).__name__}"
        )
    state.check_model(model)
    joints = JointOrder.between(model, source, target)
    if not model.floating:
        return ChangeOfVariables(None, None, joints, _reorder(state.s_dot, source, model, 0))
    H = state.world_H_base
    v_body = state.base_velocity_in("body")
    Ls, _, Ls_inv, Ls_inv_dot = source.maps(H, v_body)
    if source.velocity.same_frame(target.velocity):
        # the same velocity on both sides up to the order of the halves: X is that constant
        # permutation exactly (no rounding from L L^-1), with no T_dot; broadcast to the batch
        lead = np.broadcast_shapes(H.batch_shape, v_body.shape[:-1])
        X = _times(target.velocity.reorder(), _transpose(source.velocity.reorder()))
        X_inv = _times(source.velocity.reorder(), _transpose(target.velocity.reorder()))
        X, X_inv = np.broadcast_to(X, (*lead, 6, 6)), np.broadcast_to(X_inv, (*lead, 6, 6))
        X_dot = None
    else:
        Lt, Lt_dot, Lt_inv, _ = target.maps(H, v_body)
        X = Lt @ Ls_inv
        X_inv = Ls @ Lt_inv
        X_dot = None
        if Lt_dot is not None:
            X_dot = Lt_dot @ Ls_inv
        if Ls_inv_dot is not None:
            X_dot = Lt @ Ls_inv_dot if X_dot is None else X_dot + Lt @ Ls_inv_dot
    # the state's generalized velocity in the source convention
    if source.velocity == velocity_declaration(state.representation):
        v_source = state.base_velocity
    else:
        v_source = _mv(Ls, v_body)
    nu = _cat(v_source, _reorder(state.s_dot, source, model, 0))
    return ChangeOfVariables(X, X_inv, joints, nu, X_dot)


def _times(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
    """``a @ b`` (6, 6) with None for the identity."""
    if a is None:
        return np.eye(6) if b is None else b
    return a if b is None else a @ b


def _transpose(a: np.ndarray | None) -> np.ndarray | None:
    return None if a is None else a.T


def _reorder(x: np.ndarray, convention: Convention, model: Model, nb: int) -> np.ndarray:
    """A model-order (..., nb + n) vector with its joints in ``convention``'s order."""
    perm = convention.permutation(model)
    if perm is None:
        return x
    return np.concatenate([x[..., :nb], x[..., nb:][..., perm]], axis=-1)


def _cat(base: np.ndarray, joints: np.ndarray) -> np.ndarray:
    lead = np.broadcast_shapes(base.shape[:-1], joints.shape[:-1])
    return np.concatenate(
        [np.broadcast_to(base, (*lead, 6)), np.broadcast_to(joints, (*lead, joints.shape[-1]))], axis=-1
    )


#: neutral convention of each representation
NEUTRAL: dict[Representation, Convention] = {
    Representation.BODY: BODY,
    Representation.INERTIAL: INERTIAL,
    Representation.MIXED: MIXED,
}
