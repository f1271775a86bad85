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
  One unbatched state goes first through the engine's fused path when it offers one
  (``inverse_fused`` / ``forward_fused``: its call and the compiled kernel reading its buffers),
  then through the single-state chain rule, then the general functions.

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

__all__ = [
    "Analytical",
    "BodyDerivatives",
    "Differences",
    "compiled_kernels",
    "kernels_loaded",
    "pick_derivatives",
]

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


def kernels_loaded() -> bool:
    """Whether :func:`compiled_kernels` has loaded the kernels in this process (numba runs)."""
    return bool(_KERNELS) and _KERNELS[0] is not None


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
    # optional: inverse_fused(chain) / forward_fused(chain) -> a function of KinDyn's raw arguments
    # (base_acc, s_ddot) / (joint_torques) returning the three derivatives or None, or None: the
    # library's call and the chain's compiled kernel in one step (the Pinocchio engine's compiled state)


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

    def forward_single(self, joint_torques: object) -> None:
        """No hot path: KinDyn takes :meth:`forward`."""
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
        # the engine's fused hot paths (its call and the compiled chain rule), made at the first call
        self._id_fused: object = None
        self._fd_fused: object = None

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

    def _fused(self, forward: bool):
        """The engine's fused single-state path (``inverse_fused`` / ``forward_fused`` of the
        capability, optional) on the current chain, or :func:`_none`; made once per chain."""
        chain = self._fd_chain if forward else self._id_chain
        if chain is None:
            chain = self._chains()[forward]
        make = getattr(self._body, "forward_fused" if forward else "inverse_fused", None)
        run = None if make is None else make(chain)
        return (chain, _none if run is None else run)

    # ------------------------------------------------------------------ inverse dynamics
    def inverse_single(self, base_acc: object, s_ddot: object) -> Derivs | None:
        """Hot path of ``KinDyn.inverse_dynamics_derivatives`` without external wrenches: three
        read-only (nv, nv) arrays for the raw ``base_acc`` (6,) (None for a fixed base) and
        ``s_ddot`` (n,), or None, doing nothing, unless the engine holds one single state and the
        arguments are one finite acceleration (KinDyn's general path then raises the errors)."""
        fused = self._id_fused
        if fused is None or fused[0] is not self._id_chain:
            fused = self._id_fused = self._fused(False)
        out = fused[1](base_acc, s_ddot)
        if out is not None:
            return out
        chain = self._id_chain
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
            w = nud_b = None
            if not chain.permutes_only:  # X and the base velocity of every sample, packed once
                w = _packed(cov.X, cov.nu[..., :6], flat)
                nud_b = np.ascontiguousarray(flat.flat_view(nu_dot[..., :6], 6), dtype=np.float64)
            out = np.empty((flat.n, 3, nv, nv))
            for i, (dq, dv, M, tau) in enumerate(body.inverse_samples(rows, fext, w is not None)):
                if extra is not None:
                    dq = dq + extra[i]
                if w is None:
                    chain(None, None, None, None, dq, dv, M, out=out[i])
                else:
                    chain.packed(w[i], nud_b[i], tau, dq, dv, M, out[i])
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
    def forward_single(self, joint_torques: object) -> Derivs | None:
        """Hot path of ``KinDyn.forward_dynamics_derivatives`` without external wrenches on a
        moderate state: three read-only (nv, nv) arrays for the raw ``joint_torques`` (n,), or
        None, doing nothing, unless the engine's fused path takes them (KinDyn's general path
        then does)."""
        fused = self._fd_fused
        if fused is None or fused[0] is not self._fd_chain:
            fused = self._fd_fused = self._fused(True)
        return fused[1](joint_torques)

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
        w = None
        if not chain.permutes_only:  # X, the base velocity and T_dot nu of every sample, packed once
            b = cov.base_bias
            w = _packed(cov.X, cov.nu[..., :6], flat, np.zeros(6) if b is None else b)
        out = np.empty((n, 3, nv, nv))
        for i, (da_dq, da_dv, M_inv, a) in enumerate(self._body.forward_samples(rows, fext, w is not None)):
            if extra is not None:
                da_dq = da_dq - M_inv @ extra[i]
            if w is None:
                chain(None, None, None, None, da_dq, da_dv, M_inv, out=out[i])
            else:  # (the kernel takes the engine's acceleration: X^-1 (a_b - T_dot nu))
                chain.packed(w[i], a, rows[i], da_dq, da_dv, M_inv, out[i])
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


def _packed(X: np.ndarray, nu_b: np.ndarray, flat, bias: np.ndarray | None = None) -> np.ndarray:
    """Per flat sample ``[X (36) | nu_b (6) | bias (6)]`` (n, 42 or 48), the float buffers of
    :meth:`bridge.derivatives.single.SingleStateInverseDerivatives.packed`: X (..., 6, 6), the base
    velocities (..., 6) and (FD) the engine's ``T_dot nu`` base parts (..., 6), broadcast to the batch."""
    shape, n = flat.batch_shape, flat.n
    parts = [np.broadcast_to(X, (*shape, 6, 6)).reshape(n, 36)]
    parts += [np.broadcast_to(v[..., :6], (*shape, 6)).reshape(n, 6) for v in (nu_b, bias) if v is not None]
    return np.concatenate(parts, axis=1)
