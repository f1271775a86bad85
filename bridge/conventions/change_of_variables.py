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

from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from bridge import _numba
from bridge.conventions.convention import BODY, INERTIAL, MIXED, NEUTRAL, Convention, JointOrder
from bridge.conventions.declaration import BaseMaps
from bridge.conventions.single_state import SingleBias
from bridge.conventions.state import State, velocity_declaration
from bridge.spatial.xp import NUMPY, Ops, namespace

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


def _mv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``A @ x`` for (..., 6, 6) A and (..., 6) x (a BLAS call for one unbatched pair)."""
    if A.ndim == 2 and x.ndim == 1:
        return A.dot(x)
    return np.einsum("...ij,...j->...i", A, x)


def _single(x: Any) -> bool:
    """One unbatched numpy vector: the engines' hot path (BLAS calls, writes in place)."""
    return type(x) is np.ndarray and x.ndim == 1


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
        ops: the array namespace (:mod:`bridge.spatial.xp`; default: found from X and nu).

    Shapes below: nv = 6 + n (floating) or n (fixed); every map broadcasts leading batch axes.
    The reference path is functional (no in-place writes) and runs on numpy, JAX arrays and
    CasADi matrices (vectors as columns) alike; one unbatched numpy vector takes plain BLAS calls
    instead (the single-state hot paths of the engines). The ``*_back`` maps take
    ``overwrite=True`` when their argument is a fresh numpy array the caller gives up (a library's
    output): it may then be returned as the result (unless it is a view).
    """

    __slots__ = (
        "X",
        "X_dot",
        "X_inv",
        "_bias",
        "_bias_fn",
        "_inv_fn",
        "bias_free",
        "identity",
        "joints",
        "nu",
        "ops",
    )

    def __init__(
        self,
        X: Any | None,
        X_inv: Any | None,
        joints: JointOrder,
        nu: Any | None = None,
        X_dot: Any | None = None,
        bias: Any | None = None,
        ops: Ops | None = None,
    ) -> None:
        floating = joints.nb == 6
        self.X = X if floating else None
        self.X_inv = X_inv if floating else None
        self._inv_fn = None  # a lazy X^-1 (the single-state paths)
        self.X_dot = X_dot if floating else None
        self.joints = joints
        self.nu = nu
        self.ops = ops if ops is not None else namespace(X, nu, X_dot)
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
    def base_bias(self) -> Any | None:
        """``X_dot nu_base`` (..., 6): the base part of ``T_dot nu`` (None when zero)."""
        b = self._bias
        if b is None and not self.bias_free:
            if self._bias_fn is not None:
                b = self._bias = self._bias_fn()
            elif self.X_dot is not None and self.nu is not None:
                o = self.ops
                b = self._bias = o.matvec(self.X_dot, o.vpart(self.nu, 0, 6))
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

    def _padded_bias(self, like: Any) -> Any | None:
        """``T_dot nu`` (..., nv) (its base part, then zeros), or None when zero."""
        b = self.base_bias
        if b is None:
            return None
        o = self.ops
        return o.vcat([b, o.vzeros(self.joints.n, like)])

    @property
    def bias_acceleration(self) -> Any:
        """``T_dot nu`` (..., nv) in the target convention: the target acceleration of zero source
        acceleration (what an engine's inverse dynamics takes to give the bias forces)."""
        o = self.ops
        padded = self._padded_bias(self.nu)
        if padded is not None:
            return padded
        if o.batched:
            lead = () if self.nu is None else tuple(self.nu.shape[:-1])
            return o.xp.zeros((*lead, self.joints.nv), dtype=o.float_dtype(self.nu))
        return o.vzeros(self.joints.nv)

    def _base_inv(self) -> Any:
        if self.X_inv is None and self._inv_fn is not None:
            self.X_inv = self._inv_fn()
        if self.X_inv is None:
            o = self.ops
            self.X_inv = o.ca.inv(self.X) if o.name == "casadi" else o.xp.linalg.inv(self.X)
        return self.X_inv

    # ------------------------------------------------------------------ the functional path
    def _map(self, x: Any, base_map: Any | None, transpose: bool, joints: np.ndarray | None) -> Any:
        """``[B base; joints permuted]`` of a (..., nv) vector: ``B`` the base map (``x_b B`` when
        ``transpose``), ``joints`` the gather of the joint entries (None: kept)."""
        o, nb, nv = self.ops, self.joints.nb, self.joints.nv
        if o is NUMPY and type(x) is np.ndarray:  # one gather into a new array, its base part set
            j = self.joints
            cols = None if joints is None else (j.forward_full if joints is j.perm else j.back)
            out = x.take(cols, axis=-1) if cols is not None else x.copy()
            if nb and base_map is not None:
                b = o.vecmat(x[..., :6], base_map) if transpose else o.matvec(base_map, x[..., :6])
                if b.shape[:-1] != out.shape[:-1]:
                    lead = np.broadcast_shapes(out.shape[:-1], b.shape[:-1])
                    out = np.broadcast_to(out, (*lead, nv)).copy()
                out[..., :6] = b
            return out
        q = o.vpart(x, nb, nv)
        if joints is not None:
            q = o.vtake(q, joints)
        if not nb:
            return q
        b = o.vpart(x, 0, 6)
        if base_map is not None:
            b = o.vecmat(b, base_map) if transpose else o.matvec(base_map, b)
        return o.vcat([b, q])

    def _minus_bias(self, x: Any) -> Any:
        padded = self._padded_bias(x)
        return x if padded is None else x - padded

    # ------------------------------------------------------------------ vectors
    def velocity(self, nu: Any) -> Any:
        """``T nu`` (..., nv): source -> target velocities."""
        if type(nu) is np.ndarray and nu.ndim == 1 and (self.X is None or self.X.ndim == 2):
            fwd = self.joints.forward_full
            out = nu[fwd] if fwd is not None else nu.copy()
            if self.X is not None:
                out[:6] = self.X.dot(nu[:6])
            return out
        return self._map(nu, self.X, False, self.joints.perm)

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

    def velocity_back(self, nu_t: Any, overwrite: bool = False) -> Any:
        """``T^-1 nu_t`` (..., nv): target -> source velocities."""
        X = self.X
        if type(nu_t) is np.ndarray and nu_t.ndim == 1 and (X is None or X.ndim == 2):  # one state
            back = self.joints.back
            keep = overwrite and nu_t.base is None
            out = nu_t[back] if back is not None else (nu_t if keep else nu_t.copy())
            if X is not None:
                out[:6] = (self.X_inv if self.X_inv is not None else self._base_inv()).dot(nu_t[:6])
            return out
        return self._map(nu_t, None if X is None else self._base_inv(), False, self.joints.inverse)

    def acceleration(self, nu_dot: Any) -> Any:
        """``T nu_dot + T_dot nu`` (..., nv): source -> target accelerations."""
        out = self.velocity(nu_dot)
        b = self.base_bias
        if b is None:
            return out
        if _single(out) and _single(b):  # one state: in place
            out[:6] += b
            return out
        return out + self._padded_bias(nu_dot)

    def acceleration_back(self, nu_dot_t: Any, overwrite: bool = False) -> Any:
        """``T^-1 (nu_dot_t - T_dot nu)`` (..., nv): target -> source accelerations."""
        if self.bias_free:
            return self.velocity_back(nu_dot_t, overwrite)
        fn = self._bias_fn
        single = type(nu_dot_t) is np.ndarray and nu_dot_t.ndim == 1
        if single and type(fn) is SingleBias and self._bias is None:
            # one state (the engines' hot path): T_dot nu taken off in Python floats, then X^-1 on
            # the base and the joints permuted back
            if not (overwrite and nu_dot_t.base is None):
                nu_dot_t = nu_dot_t.copy()
            fn.subtract_from(nu_dot_t)
            back = self.joints.back
            out = nu_dot_t if back is None else nu_dot_t[back]
            out[:6] = (self.X_inv if self.X_inv is not None else self._base_inv()).dot(nu_dot_t[:6])
            return out
        b = self.base_bias
        if _single(nu_dot_t) and b is not None and _single(b):  # one state
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
        return self.velocity_back(self._minus_bias(nu_dot_t))

    def apply_derivative(self, x: Any) -> Any:
        """``T_dot x`` (..., nv) for any (..., nv) vector x."""
        o = self.ops
        if self.X_dot is None:
            return 0.0 * x
        base = o.matvec(self.X_dot, o.vpart(x, 0, 6))
        return o.vcat([base, o.vzeros(self.joints.n, x)])

    # ------------------------------------------------------------------ forces
    def force(self, tau: Any) -> Any:
        """``T^-T tau`` (..., nv): source -> target generalized forces (power-preserving)."""
        X = self.X
        if type(tau) is np.ndarray and tau.ndim == 1 and (X is None or X.ndim == 2):  # one state
            fwd = self.joints.forward_full
            out = tau[fwd] if fwd is not None else tau.copy()
            if X is not None:
                out[:6] = tau[:6].dot(self._base_inv())
            return out
        return self._map(tau, None if self.X is None else self._base_inv(), True, self.joints.perm)

    def force_back(self, tau_t: Any, overwrite: bool = False) -> Any:
        """``T^T tau_t`` (..., nv): target -> source generalized forces."""
        X = self.X
        if type(tau_t) is np.ndarray and tau_t.ndim == 1 and (X is None or X.ndim == 2):  # one state
            back = self.joints.back
            if back is not None:
                out = tau_t[back]
            else:
                out = tau_t if overwrite and tau_t.base is None else tau_t.copy()
            if X is not None:
                out[:6] = tau_t[:6].dot(X)
            return out
        return self._map(tau_t, X, True, self.joints.inverse)

    def bias_back(self, h_t: Any, M_t: Any) -> Any:
        """``T^T (h_t + M_t T_dot nu)`` (..., nv): the source bias forces from the target's bias
        forces ``h_t`` and mass matrix ``M_t`` (zero source acceleration is the target acceleration
        ``T_dot nu``)."""
        b = self.base_bias
        if b is not None:
            o = self.ops
            h_t = h_t + o.matvec(o.mpart(M_t, slice(None), slice(0, 6)), b)
        return self.force_back(h_t)

    # ------------------------------------------------------------------ matrices
    def _columns_back(self, A: Any, X: Any | None) -> Any:
        """``A T`` for a (..., m, nv) matrix of target columns: base columns times X, joint columns
        permuted back."""
        o, nb, nv = self.ops, self.joints.nb, self.joints.nv
        rows = slice(None)
        q = o.mpart(A, rows, slice(nb, nv))
        if self.joints.inverse is not None:
            q = o.mtake_cols(q, self.joints.inverse)
        if not nb:
            return q
        b = o.mpart(A, rows, slice(0, 6))
        if X is not None:
            b = o.matmul(b, X)
        return o.block([[b, q]])

    def jacobian_back(self, J_t: Any, overwrite: bool = False) -> Any:
        """``J_t T`` (..., m, nv): a target Jacobian (``v = J_t nu_t``) as a source one."""
        back, X = self.joints.back, self.X
        if type(J_t) is np.ndarray and J_t.ndim == 2 and (X is None or X.ndim == 2):  # one state
            keep = overwrite and J_t.base is None
            out = J_t.take(back, axis=-1) if back is not None else (J_t if keep else J_t.copy())
            if X is not None:
                out[:, :6] = J_t[:, :6].dot(X)
            return out
        return self._columns_back(J_t, X)

    def jacobian_derivative_back(self, J_t: Any) -> Any:
        """``J_t T_dot`` (..., m, nv): with :meth:`jacobian_back` of ``J_dot_t``, the time derivative of
        ``J_t T`` (a target Jacobian and its derivative as a source one); zero but for the base
        columns here."""
        o = self.ops
        out = 0.0 * self._columns_back(J_t, None)
        if self.X_dot is None:
            return out
        base = o.matmul(o.mpart(J_t, slice(None), slice(0, 6)), self.X_dot)
        return o.block([[base, o.mpart(out, slice(None), slice(6, self.joints.nv))]])

    def matrix_back(self, M_t: Any, out: np.ndarray | None = None, overwrite: bool = False) -> Any:
        """``T^T M_t T`` (..., nv, nv): a target mass matrix (or any quadratic form) as a source one
        (written into ``out`` when given: a numpy array of the result's shape, not overlapping
        M_t; with ``overwrite``, a numpy batch M_t the caller gives up may be written over and
        returned)."""
        o = self.ops
        if o is NUMPY and type(M_t) is np.ndarray and M_t.ndim > 2:
            # the compiled kernel with a joint permutation (1.7x numpy's gather per core); without
            # one, numpy's batched products are as fast (the kernel then serves the Featherstone
            # CRBA, state by state in cache)
            res = None if self.joints.perm is None else self._matrix_back_compiled(M_t, out, overwrite)
            return res if res is not None else self._matrix_back_batch(M_t, out, overwrite)
        M = self._columns_back(M_t, self.X)
        result = o.mT(self._columns_back(o.mT(M), self.X))
        if out is not None:
            np.copyto(out, result)
            return out
        return result

    def _matrix_back_batch(
        self, M_t: np.ndarray, out: np.ndarray | None, overwrite: bool = False
    ) -> np.ndarray:
        """:meth:`matrix_back` of a numpy batch (..., nv, nv): one gather (the joint permutation on
        both sides) into the result, then X^T on the base rows and X on the base columns (a few
        passes over the batch, not a block assembly per side). The reference of the compiled
        kernel (:mod:`bridge.conventions.batch_kernels`)."""
        j = self.joints
        if out is not None and out.flags.c_contiguous:
            res = out
        elif overwrite and out is None and M_t.flags.c_contiguous and M_t.dtype == np.float64:
            res = M_t
        else:
            res = np.empty(M_t.shape)
        if j.inverse is not None:  # (an index pair: several times faster than np.take of the flat entries)
            res[...] = M_t[..., j.back[:, None], j.back]
        elif res is not M_t:
            np.copyto(res, M_t)
        X = self.X
        if j.nb and X is not None:
            res[..., :6, :] = np.matmul(np.swapaxes(X, -1, -2), res[..., :6, :])
            res[..., :, :6] = np.matmul(res[..., :, :6], X)
        if out is not None and res is not out:
            np.copyto(out, res)
            return out
        return res

    def _matrix_back_compiled(
        self, M_t: np.ndarray, out: np.ndarray | None, overwrite: bool
    ) -> np.ndarray | None:
        """:meth:`matrix_back` of a float64 numpy batch by the compiled kernel, or None (numba not
        usable, or arrays the kernel does not take: the numpy path then runs)."""
        kernels = compiled_matrix_kernels()
        if kernels is None or M_t.dtype != np.float64 or not M_t.flags.c_contiguous:
            return None
        args = self.kernel_arguments(M_t.shape[:-2])
        if args is None:
            return None
        if out is not None and out.flags.c_contiguous and out.dtype == np.float64:
            res = out
        else:
            res = M_t if overwrite and out is None else np.empty(M_t.shape)
        nv = M_t.shape[-1]
        N = int(np.prod(M_t.shape[:-2], dtype=int))
        M, R = M_t.reshape(N, nv, nv), res.reshape(N, nv, nv)
        X, perm, nb = args
        _numba.launch(kernels.matrix_back_par, kernels.matrix_back_ser, N, M, X, perm, nb, R)
        if out is not None and res is not out:
            np.copyto(out, res)
            return out
        return res

    def kernel_arguments(self, lead: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int] | None:
        """``(X, perm, nb)``, T as the compiled kernels of :mod:`bridge.conventions.batch_kernels`
        take it for a numpy batch of shape ``lead``: X (N, 6, 6), (1, 6, 6) (one for all) or (0, 6, 6)
        (the identity, or a fixed base), C-contiguous float64; perm (nv,) the gather of the rows into
        the source's order, or (0,) for none; nb 6 or 0. None when the base block does not broadcast
        to ``lead`` (or is not a numpy array)."""
        j = self.joints
        X = np.empty((0, 6, 6))
        if j.nb and self.X is not None:
            X = _flat_base_blocks(self.X, tuple(lead))
            if X is None:
                return None
        perm = j.back if j.back is not None else np.empty(0, dtype=np.intp)
        return X, perm, j.nb

    def coriolis_back(self, C_t: Any, M_t: Any) -> Any:
        """``T^T (C_t T + M_t T_dot)`` (..., nv, nv): a target Coriolis matrix as a source one.

        With ``nu_t = T nu``: ``C nu = T^T (C_t nu_t + M_t T_dot nu)`` (the source bias forces
        without gravity) and ``C + C^T = T^T (C_t + C_t^T) T + T_dot^T M_t T + T^T M_t T_dot``, the
        time derivative of ``T^T M_t T``: both properties carry over (docs/theory.md)."""
        out = self.matrix_back(C_t)
        if self.X_dot is None:
            return out
        o = self.ops
        # M_t T_dot: M_t[:, :6] X_dot in the first six columns, zero elsewhere; then T^T on the left
        Z = o.matmul(o.mpart(M_t, slice(None), slice(0, 6)), self.X_dot)  # (..., nv, 6) target rows
        Z = o.mT(self._columns_back(o.mT(Z), self.X))  # source rows
        nv = self.joints.nv
        zeros = o.xp.zeros((nv, nv - 6)) if o.name != "casadi" else o.mzeros(nv, nv - 6)
        return out + o.block([[Z, zeros]])

    # ------------------------------------------------------------------ dense forms
    def matrix(self) -> Any:
        """Dense T (..., nv, nv)."""
        j, o = self.joints, self.ops
        P = o.constant(j.matrix(), self.nu)
        if not self.floating:
            return P
        X = o.eye(6, self.nu) if self.X is None else self.X
        return o.block([[X, o.mzeros(6, j.n, self.nu)], [o.mzeros(j.n, 6, self.nu), P]])

    def derivative(self) -> Any:
        """Dense T_dot (..., nv, nv)."""
        j, o = self.joints, self.ops
        if self.X_dot is None:
            if o.batched:
                lead = () if self.X is None else tuple(self.X.shape[:-2])
                return o.xp.zeros((*lead, j.nv, j.nv), dtype=o.float_dtype(self.nu))
            return o.mzeros(j.nv, j.nv)
        return o.block(
            [
                [self.X_dot, o.mzeros(6, j.n, self.nu)],
                [o.mzeros(j.n, 6, self.nu), o.mzeros(j.n, j.n, self.nu)],
            ]
        )


def change_of_variables(
    model: Model, state: State, source: Convention, target: Convention
) -> ChangeOfVariables:
    """The :class:`ChangeOfVariables` from ``source`` to ``target`` at ``state`` (batched; numpy,
    JAX or CasADi, as the state's arrays are).

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
    o = state.ops
    joints = JointOrder.between(model, source, target)
    unbound = (source, target)
    source, target = source.bound(model), target.bound(model)
    wide = None if model.single_coordinate else _wide_joints(model, state, o)
    s_dot = state.s_dot if wide is None else wide.velocities_in(unbound[0])
    if not model.floating:
        nu_s = _reorder(o, s_dot, source, model)
        if wide is not None:
            return wide.change(None, None, joints, nu_s, None, *unbound)
        return ChangeOfVariables(None, None, joints, nu_s, ops=o)
    H = state.world_H_base
    v_body = state.base_velocity_in("body")
    Ls, Ls_inv = source.velocity.matrices(H, o)
    if source.velocity.same_frame(target.velocity):
        # the same velocity on both sides up to the order of the halves: X is that constant
        # permutation exactly (no rounding from L L^-1), with no T_dot
        X = o.constant(_times(target.velocity.reorder(), _transpose(source.velocity.reorder())), v_body)
        X_inv = o.constant(_times(source.velocity.reorder(), _transpose(target.velocity.reorder())), v_body)
        if o.batched:
            lead = np.broadcast_shapes(H.batch_shape, tuple(v_body.shape[:-1]))
            X, X_inv = o.broadcast_to(X, (*lead, 6, 6)), o.broadcast_to(X_inv, (*lead, 6, 6))
        X_dot = None
    else:
        Lt, Lt_inv = target.velocity.matrices(H, o)
        X = o.matmul(Lt, Ls_inv)
        X_inv = o.matmul(Ls, Lt_inv)
        # X_dot = L_t_dot L_s^-1 + L_t d/dt(L_s^-1) = L_t (Omega_t - Omega_s) L_s^-1
        Omega_t, Omega_s = target.velocity.rate(H, v_body, o), source.velocity.rate(H, v_body, o)
        if Omega_t is None and Omega_s is None:
            X_dot = None
        else:
            D = -Omega_s if Omega_t is None else (Omega_t if Omega_s is None else Omega_t - Omega_s)
            X_dot = o.matmul(o.matmul(Lt, D), Ls_inv)
    # the state's generalized velocity in the source convention
    if source.velocity == velocity_declaration(state.representation):
        v_source = state.base_velocity
    else:
        v_source = o.matvec(Ls, v_body)
    nu = o.vcat([v_source, _reorder(o, s_dot, source, model)])
    if wide is not None:
        return wide.change(X, X_inv, joints, nu, X_dot, *unbound)
    return ChangeOfVariables(X, X_inv, joints, nu, X_dot, ops=o)


def _wide_joints(model: Model, state: State, o: Ops):
    """The joints of several coordinates of ``model`` at ``state``
    (:class:`bridge.conventions.joint_blocks.WideJoints`)."""
    from bridge.conventions.joint_blocks import WideJoints

    return WideJoints(model, state, o)


def _import_matrix_kernels() -> ModuleType:
    from bridge.conventions import batch_kernels

    return batch_kernels


#: :mod:`bridge.conventions.batch_kernels` (numba), or None when numba is not usable
#: (:func:`bridge._numba.enabled`; kernels that fail to load give a :class:`bridge.BridgeWarning`)
compiled_matrix_kernels = _numba.loader(
    _import_matrix_kernels, "the compiled change of variables did not load ({}); the numpy path runs"
)


def _flat_base_blocks(X: np.ndarray, lead: tuple[int, ...]) -> np.ndarray | None:
    """Base blocks (..., 6, 6) for a batch of shape ``lead`` as a C-contiguous float64 (1, 6, 6)
    (one block for all) or (N, 6, 6) array, or None when they do not broadcast to ``lead``."""
    if type(X) is not np.ndarray or X.shape[-2:] != (6, 6):
        return None
    xl = X.shape[:-2]
    try:
        if np.broadcast_shapes(xl, lead) != lead:
            return None
    except ValueError:
        return None
    if all(st == 0 or d == 1 for st, d in zip(X.strides[:-2], xl, strict=True)):  # one block for all
        return np.ascontiguousarray(X[(0,) * len(xl)], dtype=np.float64).reshape(1, 6, 6)
    return np.ascontiguousarray(np.broadcast_to(X, (*lead, 6, 6)), dtype=np.float64).reshape(-1, 6, 6)


def _times(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
    """``a @ b`` (6, 6) with None for the identity."""
    if a is None:
        return np.eye(6) if b is None else b
    return a if b is None else a @ b


def _transpose(a: np.ndarray | None) -> np.ndarray | None:
    return None if a is None else a.T


def _reorder(o: Ops, x: Any, convention: Convention, model: Model) -> Any:
    """Joint velocities (..., n) in the model's order -> ``convention``'s order."""
    perm = convention.entry_permutation(model)
    return x if perm is None else o.vtake(x, perm)
