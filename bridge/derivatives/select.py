"""The one place that picks how the dynamics derivatives of a KinDyn are computed.

:func:`pick_derivatives` is called once, when a KinDyn is built, with its engine and the engine's
``body_derivatives`` capability (:mod:`bridge.backends.protocol`; None when the engine has none):

* no capability: :class:`Differences`, differences of the engine's own dynamics
  (:mod:`bridge.derivatives.numeric`);
* the capability: :class:`Analytical`, the library's analytical derivatives in its BODY-based
  convention turned into the representation's by the chain rule. At the first derivative call it
  picks, per joint order and representation, among the joint permutation alone (BODY or a fixed
  base), the compiled chain rule (numba kernels, :func:`compiled_kernels`) and the numpy chain rule
  (:mod:`bridge.derivatives.single` for one state or sample by sample,
  :mod:`bridge.derivatives.chain` vectorised over a batch). numba is imported then, not before.

The capability is duck-typed (this package sits below the backends): :class:`BodyDerivatives`
states what it offers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Protocol

import numpy as np

from bridge import _numba
from bridge.conventions.change_of_variables import ChangeOfVariables, JointOrder
from bridge.conventions.state import Representation, velocity_declaration
from bridge.derivatives import numeric
from bridge.derivatives.chain import (
    forward_dynamics_derivatives_back,
    inverse_dynamics_derivatives_back,
    wrench_position_term,
)

__all__ = ["Analytical", "BodyDerivatives", "Differences", "compiled_kernels", "pick_derivatives"]

Derivs = tuple[np.ndarray, np.ndarray, np.ndarray]
Wrenches = Mapping[str, np.ndarray] | None

_KERNELS: list[ModuleType | None] = []  # [module or None] once looked up


def compiled_kernels() -> ModuleType | None:
    """:mod:`bridge.derivatives.kernels` (numba kernels), or None when numba is not installed or
    the environment variable ``BRIDGE_NUMBA`` is ``0`` (:func:`bridge._numba.enabled`). Looked up
    once per process; numba that is installed but fails to import gives a
    :class:`bridge.BridgeWarning` naming the error, and the numpy path."""
    if not _KERNELS:
        _KERNELS.append(
            _numba.load(
                _import_kernels,
                "numba is installed but bridge's compiled kernels did not load ({}); "
                "the derivatives use the numpy path",
            )
        )
    return _KERNELS[0]


def _import_kernels() -> ModuleType:
    from bridge.derivatives import kernels

    return kernels


class BodyDerivatives(Protocol):  # pragma: no cover - documentation of the capability
    """An engine's analytical derivatives of its own dynamics in a BODY-based convention (``nu_t = T
    nu``, ``T = blkdiag(X, P)``): the ``body_derivatives`` capability. Matrices are the target's,
    in its order; ``tau``/``a`` may be views of the library's buffers (read before its next call)."""

    joints: JointOrder
    representation: Representation

    def single(self) -> bool: ...  # the engine holds one unbatched state set through its hot path
    def inverse_single(self, base_acc: object, s_ddot: object, with_base: bool) -> tuple | None: ...
    def single_pose(self) -> np.ndarray: ...  # (4, 4)
    def single_cov(self, with_velocity: bool) -> ChangeOfVariables: ...
    def single_base_velocity(self) -> np.ndarray: ...  # (6,) in W
    def inverse_at(self, a_t: np.ndarray) -> tuple[np.ndarray, ...]: ...  # (dq, dv, M, tau)
    def forward_at(self, t: np.ndarray, with_acceleration: bool) -> tuple: ...  # (da_dq, da_dv, Minv, a)
    def batch(self) -> tuple[ChangeOfVariables, object]: ...  # (cov, FlatBatch) of the current state
    def poses(self) -> np.ndarray: ...  # the base poses (..., 4, 4)
    def external_forces(self, wrenches: Mapping[str, np.ndarray] | None) -> list | None: ...
    def frame_jacobians(self, frame: str) -> np.ndarray: ...  # (n, 6, nv), target columns
    def inverse_samples(self, a_rows: np.ndarray, fext: list | None, need_tau: bool) -> Iterator[tuple]: ...
    def forward_samples(self, t_rows: np.ndarray, fext: list | None, need_acc: bool) -> Iterator[tuple]: ...
    # optional: forward_single(tau, with_base) -> (da_dq, da_dv, M_inv, X, nu_b, nu_dot_b, t_b) | None, a
    # shortcut of the single-state FD derivatives (the Pinocchio engine's compiled path)


def pick_derivatives(engine: object, body: BodyDerivatives | None) -> Differences | Analytical:
    """The derivative functions of ``engine``: :class:`Analytical` on its ``body_derivatives``
    capability ``body``, or :class:`Differences` when it is None."""
    return Differences(engine) if body is None else Analytical(body)


class Differences:
    """Derivatives by differences of the engine's own dynamics (:mod:`bridge.derivatives.numeric`)."""

    strategy = "differences"

    def __init__(self, engine: object) -> None:
        self._engine = engine

    def inverse_single(self, base_acc: object, s_ddot: object) -> None:
        """No hot path: KinDyn takes :meth:`inverse`."""
        return None

    def inverse(self, nu_dot: np.ndarray, wrenches: Wrenches, gravity: np.ndarray) -> Derivs:
        """``(dtau_dq, dtau_dnu, dtau_dnudot)`` (..., nv, nv) in the representation."""
        return numeric.inverse_dynamics_derivatives(self._engine, nu_dot, wrenches, gravity)

    def forward(self, tau: np.ndarray, wrenches: Wrenches, gravity: np.ndarray) -> Derivs:
        """``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` (..., nv, nv) in the representation."""
        return numeric.forward_dynamics_derivatives(self._engine, tau, wrenches, gravity)


class Analytical:
    """The library's analytical derivatives (``body``) and the chain rule to the representation.

    The chain-rule objects (:mod:`bridge.derivatives.single`) are made at the first call:
    ``_id_chain`` / ``_fd_chain``. Batches go sample by sample when the chain rule is compiled or
    the joint permutation alone, else through the numpy chain rule vectorised over the batch.
    """

    def __init__(self, body: BodyDerivatives) -> None:
        self._body = body
        self._rep = body.representation
        self._body_rep = velocity_declaration(self._rep).is_body  # its wrenches are fixed in the body
        self._inverse_raw = body.inverse_single
        self._id_chain = None
        self._fd_chain = None

    @property
    def strategy(self) -> str:
        """ "analytical+permutation", "analytical+compiled" or "analytical+numpy" (after the first
        call; "analytical" before)."""
        chain = self._id_chain
        if chain is None:
            return "analytical"
        kind = "permutation" if chain.permutes_only else "compiled" if chain.compiled else "numpy"
        return "analytical+" + kind

    def _chains(self):
        """The single-state chain rules, made once: compiled when the kernels load, else numpy."""
        from bridge.derivatives.single import SingleStateForwardDerivatives, SingleStateInverseDerivatives

        compiled = None if compiled_kernels() is not None else False
        joints, rep = self._body.joints, self._rep
        self._id_chain = SingleStateInverseDerivatives(joints, rep, compiled=compiled)
        self._fd_chain = SingleStateForwardDerivatives(joints, rep, compiled=compiled)
        return self._id_chain, self._fd_chain

    # ------------------------------------------------------------------ inverse dynamics
    def inverse_single(self, base_acc: object, s_ddot: object) -> Derivs | None:
        """Hot path of ``KinDyn.inverse_dynamics_derivatives`` without external wrenches: three
        read-only (nv, nv) arrays for the raw ``base_acc`` (6,) (None for a fixed base) and
        ``s_ddot`` (n,), or None, doing nothing, unless the engine holds one single state and the
        arguments are one finite acceleration (KinDyn's general path then raises the errors)."""
        chain = self._id_chain
        if chain is None:
            chain = self._chains()[0]
        out = self._inverse_raw(base_acc, s_ddot, not chain.permutes_only)
        if out is None:
            return None
        dq, dv, M, X, nu_b, ba, tau_b = out
        if X is None:
            return chain(None, None, None, None, dq, dv, M)
        return chain(X, nu_b, ba, tau_b, dq, dv, M, self._body.single_pose() if chain.needs_pose else None)

    def inverse(self, nu_dot: np.ndarray, wrenches: Wrenches, gravity: np.ndarray) -> Derivs:
        """``(dtau_dq, dtau_dnu, dtau_dnudot)`` (..., nv, nv) in the representation (q along the
        tangent of :func:`bridge.derivatives.retract`)."""
        chain = self._id_chain
        if chain is None:
            chain = self._chains()[0]
        body = self._body
        if body.single() and not wrenches and nu_dot.ndim == 1:
            cov = body.single_cov(True)
            dq, dv, M, tau = body.inverse_at(cov.acceleration(nu_dot))
            if chain.permutes_only:
                return chain(None, None, None, None, dq, dv, M)
            H = body.single_pose() if chain.needs_pose else None
            return chain(cov.X, cov.nu[:6], nu_dot[:6], tau[:6], dq, dv, M, H)
        cov, flat = body.batch()
        fext = body.external_forces(wrenches)
        a_t = cov.acceleration(nu_dot)
        extra = self._wrench_terms(wrenches, flat)  # (uses the library's data: before the loops)
        nv = a_t.shape[-1]
        rows = flat.flat_view(a_t, nv)
        if chain.permutes_only or chain.compiled:
            X = nu_b = nud_b = None
            if not chain.permutes_only:
                X = _flat_blocks(cov.X, flat)
                nu_b, nud_b = flat.flat_view(cov.nu[..., :6], 6), flat.flat_view(nu_dot[..., :6], 6)
            out = np.empty((flat.n, 3, nv, nv))
            for i, (dq, dv, M, tau) in enumerate(body.inverse_samples(rows, fext, X is not None)):
                if extra is not None:
                    dq = dq + extra[i]
                if X is None:
                    chain(None, None, None, None, dq, dv, M, out=out[i])
                else:
                    chain(X[i], nu_b[i], nud_b[i], tau[:6], dq, dv, M, out=out[i])
            return flat.unflatten(out[:, 0]), flat.unflatten(out[:, 1]), flat.unflatten(out[:, 2])
        dq, dv, M, tau = _stacked(body.inverse_samples(rows, fext, True), flat.n, nv)
        if extra is not None:
            dq += extra
        dq, dv, M, tau = (flat.unflatten(x) for x in (dq, dv, M, tau))
        nu_dot = np.broadcast_to(nu_dot, (*flat.batch_shape, nu_dot.shape[-1]))
        return inverse_dynamics_derivatives_back(cov, body.poses(), self._rep, dq, dv, M, tau, nu_dot)

    def _wrench_terms(self, wrenches: Mapping[str, np.ndarray] | None, flat) -> np.ndarray | None:
        """``sum_F J_F^T K(f_F) J_F`` (n, nv, nv) in the target's coordinates for the flat samples, or
        None (no wrenches, or BODY, where the target's fixed-in-the-body forces are the user's)."""
        if not wrenches or self._body_rep:
            return None
        total = None
        for name, w in wrenches.items():
            J = self._body.frame_jacobians(name)
            term = wrench_position_term(J, flat.flat_view(w, 6)[: flat.n], self._rep)
            total = term if total is None else total + term
        return total

    # ------------------------------------------------------------------ forward dynamics
    def forward(self, tau: np.ndarray, wrenches: Wrenches, gravity: np.ndarray) -> Derivs:
        """``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` (..., nv, nv) in the representation;
        ``dnudot_dtau`` is the inverse mass matrix."""
        chain = self._fd_chain
        if chain is None:
            chain = self._chains()[1]
        body = self._body
        if body.single() and not wrenches and tau.ndim == 1:
            return self._forward_one(chain, tau)
        cov, flat = body.batch()
        fext = body.external_forces(wrenches)
        tau_t = cov.force(tau)
        extra = self._wrench_terms(wrenches, flat)
        nv = tau_t.shape[-1]
        rows = flat.flat_view(tau_t, nv)
        if chain.usable:
            return self._forward_per_sample(chain, cov, flat, rows, fext, extra)
        da_dq, da_dv, M_inv, a = _stacked(body.forward_samples(rows, fext, True), flat.n, nv)
        if extra is not None:
            da_dq -= M_inv @ extra
        da_dq, da_dv, M_inv, a = (flat.unflatten(x) for x in (da_dq, da_dv, M_inv, a))
        tau_t = np.broadcast_to(tau_t, (*flat.batch_shape, nv))
        nu_dot = cov.acceleration_back(a)
        H = body.poses()
        return forward_dynamics_derivatives_back(cov, H, self._rep, da_dq, da_dv, M_inv, tau_t, nu_dot)

    def _forward_one(self, chain, tau: np.ndarray) -> Derivs:
        """One single state without wrenches: the single-state chain rule when usable (the joint
        permutation alone, or one compiled kernel), else the general function."""
        body = self._body
        if chain.usable:
            fast = getattr(body, "forward_single", _none)  # (an optional shortcut of the engine)
            out = fast(tau, not chain.permutes_only)
            if out is not None:
                da_dq, da_dv, M_inv, X, nu_b, nu_dot_b, t_b = out
                return chain(X, nu_b, nu_dot_b, t_b, da_dq, da_dv, M_inv)
        if chain.usable:
            cov = body.single_cov(False)
            t = cov.force(tau)
            if chain.permutes_only:
                da_dq, da_dv, M_inv, _ = body.forward_at(t, False)
                return chain(None, None, None, None, da_dq, da_dv, M_inv)
            da_dq, da_dv, M_inv, a = body.forward_at(t, True)
            nu_dot_b = cov.acceleration_back(a)[:6]
            return chain(cov.X, body.single_base_velocity(), nu_dot_b, t[:6], da_dq, da_dv, M_inv)
        cov = body.single_cov(True)
        t = cov.force(tau)
        da_dq, da_dv, M_inv, a = body.forward_at(t, True)
        nu_dot = cov.acceleration_back(a)
        H = body.single_pose()
        return forward_dynamics_derivatives_back(cov, H, self._rep, da_dq, da_dv, M_inv, t, nu_dot)

    def _forward_per_sample(self, chain, cov, flat, rows, fext, extra) -> Derivs:
        """Batched FD derivatives sample by sample (the chain rule compiled, or the permutation
        alone): the base acceleration in W, ``X^-1 (a_base - T_dot nu)``, from the target's."""
        n, nv = flat.n, rows.shape[-1]
        X = X_inv = nu_b = bias = None
        if not chain.permutes_only:
            X, X_inv = _flat_blocks(cov.X, flat), _flat_blocks(cov._base_inv(), flat)
            nu_b = flat.flat_view(cov.nu[..., :6], 6)
            b = cov.base_bias
            bias = None if b is None else flat.flat_view(b, 6)
        out = np.empty((n, 3, nv, nv))
        for i, (da_dq, da_dv, M_inv, a) in enumerate(self._body.forward_samples(rows, fext, X is not None)):
            if extra is not None:
                da_dq = da_dq - M_inv @ extra[i]
            if X is None:
                chain(None, None, None, None, da_dq, da_dv, M_inv, out=out[i])
                continue
            a_b = a[:6]
            nud_b = X_inv[i].dot(a_b if bias is None else a_b - bias[i])
            chain(X[i], nu_b[i], nud_b, rows[i, :6], da_dq, da_dv, M_inv, out=out[i])
        return flat.unflatten(out[:, 0]), flat.unflatten(out[:, 1]), flat.unflatten(out[:, 2])


def _none(*_: object) -> None:
    return None


def _stacked(samples: Iterator[tuple], n: int, nv: int) -> tuple[np.ndarray, ...]:
    """Per-sample ``(A, B, C, vector)`` stacked into (n, nv, nv) x 3 and (n, nv)."""
    out = [np.empty((n, nv, nv)) for _ in range(3)] + [np.empty((n, nv))]
    for i, res in enumerate(samples):
        for k in range(4):
            out[k][i] = res[k]
    return tuple(out)


def _flat_blocks(x: np.ndarray, flat) -> np.ndarray:
    """(..., 6, 6) blocks broadcast to the batch and flattened: a C-contiguous (n, 6, 6) array."""
    return np.ascontiguousarray(np.broadcast_to(x, (*flat.batch_shape, 6, 6)).reshape(flat.n, 6, 6))
