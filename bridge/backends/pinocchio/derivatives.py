"""Derivatives of inverse and forward dynamics on Pinocchio's analytical algorithms.

Pinocchio's ``computeRNEADerivatives`` and ``computeABADerivatives`` differentiate its own dynamics
in its own coordinates: the LOCAL (BODY) base velocity, the tangent ``q (+) delta`` (the base pose
times ``exp(delta_base^)``), joints depth first, and external forces held fixed in the joint
frames. :mod:`bridge.derivatives.chain` turns them into the derivatives in the KinDyn's representation
along its tangent (docs/theory.md, "Derivatives of the dynamics"): wrenches held fixed in A or
F[A] add ``J^T K J`` in Pinocchio's coordinates; the change of variables adds a few (6, 6) blocks
on the base rows and columns and permutes the joints. Batches loop over samples for Pinocchio's
calls; the chain rule is vectorised over the batch.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.conventions.change_of_variables import ChangeOfVariables
from bridge.conventions.state import Representation
from bridge.derivatives.chain import (
    forward_dynamics_derivatives_back,
    inverse_dynamics_derivatives_back,
    wrench_position_term,
)
from bridge.derivatives.single import SingleStateForwardDerivatives, SingleStateInverseDerivatives

__all__ = ["PinocchioDerivatives"]


class PinocchioDerivatives:
    """Mixin of :class:`bridge.backends.pinocchio.engine.PinocchioEngine`: the derivative hooks of
    the engine protocol (``inverse_dynamics_derivatives``, ``forward_dynamics_derivatives``)."""

    def _single_cov(self) -> ChangeOfVariables:
        """The single-state path's change of variables with the velocity in the representation."""
        c, nb, inv = self._cov1, self._nb, self.joints.inverse
        joints = self._v1[nb:] if inv is None else self._v1[nb:][inv]
        nu = np.concatenate((self._vb1, joints)) if nb else joints
        return ChangeOfVariables(c.X, c.X_inv, self.joints, nu, bias=c.base_bias)

    def _fills_result(self) -> bool:
        """Whether Pinocchio's derivative algorithms leave tau (``data.tau``) and the acceleration
        (``data.ddq``) in ``data`` (checked once per engine; else they are computed again)."""
        fills = self._derivatives_fill
        if fills is None:
            pin, pm = self._pin, self.pm
            d = pm.createData()
            q = pin.neutral(pm)
            v = np.linspace(0.1, 0.9, pm.nv)
            pin.computeRNEADerivatives(pm, d, q, v, v)
            tau = d.tau.copy()
            pin.computeABADerivatives(pm, d, q, v, v)
            d0 = pm.createData()
            fills = bool(
                np.allclose(tau, pin.rnea(pm, d0, q, v, v), rtol=1e-12, atol=1e-12)
                and np.allclose(d.ddq, pin.aba(pm, d0, q, v, v), rtol=1e-10, atol=1e-10)
            )
            self._derivatives_fill = fills
        return fills

    def _wrench_terms(self, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray | None:
        """``sum_F J_F^T K(f_F) J_F`` (n, nv, nv) in Pinocchio's coordinates for the flat samples,
        or None (no wrenches, or BODY, where Pinocchio's fixed-in-the-body forces are the user's)."""
        if not wrenches or self.representation is Representation.BODY:
            return None
        pin, pm, d, flat = self._pin, self.pm, self.data, self._flat
        nv = pm.nv
        total = None
        for name, w in wrenches.items():
            fid = self._frame_id[name]
            J = np.empty((flat.n, 6, nv))
            for i in range(flat.n):
                self._prepare(i)
                J[i] = pin.computeFrameJacobian(pm, d, self._q[i], fid, self._ref).reshape(6, nv)
            term = wrench_position_term(J, flat.flat_view(w, 6)[: flat.n], self.representation)
            total = term if total is None else total + term
        return total

    def _derivative_loop(self, fn, vec: np.ndarray, fext: list | None) -> tuple[np.ndarray, ...]:
        """Per flat sample i: ``fn(q_i, v_i, vec_i, fext_i)`` -> (D_q, D_v, third, vector); stacked
        (n, nv, nv) x 3 and (n, nv)."""
        flat = self._flat
        nv = self.pm.nv
        vecs = flat.flat_view(vec, nv)
        out = [np.empty((flat.n, nv, nv)) for _ in range(3)] + [np.empty((flat.n, nv))]
        for i in range(flat.n):
            self._prepare(i)
            res = fn(self._q[i], self._v[i], vecs[i], None if fext is None else fext[i])
            for k in range(4):
                out[k][i] = res[k]
        return tuple(out)

    def inverse_dynamics_derivatives_single(
        self, base_acc: object, s_ddot: object
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Hot path of ``KinDyn.inverse_dynamics_derivatives`` without external wrenches: the
        derivatives (nv, nv) x 3 for the raw ``base_acc`` (6,) (None for a fixed base) and
        ``s_ddot`` (n,), Pinocchio's acceleration written straight into its buffer, the chain rule
        (or, in BODY and for a fixed base, the joint permutation alone) by the engine's
        :class:`bridge.derivatives.single.SingleStateInverseDerivatives` (made once). None, doing
        nothing, unless the state is one single state and the arguments one finite acceleration
        (the caller's general path then takes batches and raises the errors).
        """
        if not self._single:
            return None
        ba = self._acceleration_single(base_acc, s_ddot)
        if ba is False:
            return None
        pin, pm, d, a = self._pin, self.pm, self.data, self._acc
        dq, dv, M = pin.computeRNEADerivatives(pm, d, self._q1, self._v1, a)
        chain = self._id_chain
        if chain is None:
            chain = self._id_chain = SingleStateInverseDerivatives(self.joints, self.representation)
            # the base part of tau: a view of data.tau, which the call above filled (read before
            # any other Pinocchio call; made once, data lives as long as the engine)
            self._tau_base = d.tau[:6]
        if chain.permutes_only:
            return chain(None, None, None, None, dq, dv, M)
        fills = self._derivatives_fill
        if fills is None:
            fills = self._fills_result()
        tau_b = self._tau_base if fills else pin.rnea(pm, d, self._q1, self._v1, a)[:6]
        H = np.array(self._rows) if chain.needs_pose else None
        return chain(self._cov1.X, self._vb1, ba, tau_b, dq, dv, M, H)

    _id_chain: SingleStateInverseDerivatives | None = None
    _fd_chain: SingleStateForwardDerivatives | None = None
    _derivatives_fill: bool | None = None  # see _fills_result

    def inverse_dynamics_derivatives(
        self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None, gravity: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(dtau_dq, dtau_dnu, dtau_dnudot)`` (..., nv, nv) in the representation (q along the
        tangent of :func:`bridge.derivatives.retract`), from ``computeRNEADerivatives``."""
        pin, pm, d = self._pin, self.pm, self.data
        if self._single and not wrenches and nu_dot.ndim == 1:
            cov = self._single_cov()
            a = cov.acceleration(nu_dot)
            dq, dv, M = pin.computeRNEADerivatives(pm, d, self._q1, self._v1, a)
            # data.tau is read (its base part) before any other Pinocchio call: no copy; one MIXED
            # state does not need the pose
            tau = d.tau if self._fills_result() else pin.rnea(pm, d, self._q1, self._v1, a)
            rep = self.representation
            H = None if rep is Representation.MIXED else np.array(self._rows)
            return inverse_dynamics_derivatives_back(cov, H, rep, dq, dv, M, tau, nu_dot)
        self._batch()
        cov = self.cov
        fext = self._fext(wrenches)
        a_pin = cov.acceleration(nu_dot)
        chain = self._id_chain
        if chain is None:
            chain = self._id_chain = SingleStateInverseDerivatives(self.joints, self.representation)
            self._tau_base = self.data.tau[:6]
        if chain.permutes_only or chain.compiled:
            return self._id_per_sample(chain, cov, nu_dot, a_pin, fext, wrenches)

        def one(q, v, a, f):
            if f is None:
                dq, dv, M = pin.computeRNEADerivatives(pm, d, q, v, a)
                tau = pin.rnea(pm, d, q, v, a)
            else:
                dq, dv, M = pin.computeRNEADerivatives(pm, d, q, v, a, f)
                tau = pin.rnea(pm, d, q, v, a, f)
            return dq, dv, M, tau

        dq, dv, M, tau = self._derivative_loop(one, a_pin, fext)
        extra = self._wrench_terms(wrenches)
        if extra is not None:
            dq += extra
        flat = self._flat
        dq, dv, M, tau = (flat.unflatten(x) for x in (dq, dv, M, tau))
        nu_dot = np.broadcast_to(nu_dot, (*flat.batch_shape, nu_dot.shape[-1]))
        H = self.state.world_H_base.matrix
        return inverse_dynamics_derivatives_back(cov, H, self.representation, dq, dv, M, tau, nu_dot)

    def forward_dynamics_derivatives(
        self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None, gravity: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(dnudot_dq, dnudot_dnu, dnudot_dtau)`` (..., nv, nv) in the representation, from
        ``computeABADerivatives``; ``dnudot_dtau`` is the inverse mass matrix."""
        pin, pm, d = self._pin, self.pm, self.data
        if self._single and not wrenches and tau.ndim == 1:
            chain = self._fd_chain
            if chain is None:
                chain = self._fd_chain = SingleStateForwardDerivatives(self.joints, self.representation)
            if chain.usable:  # the joint permutation alone, or one compiled kernel
                cov = self._cov1
                t = cov.force(tau)
                da_dq, da_dv, Minv = pin.computeABADerivatives(pm, d, self._q1, self._v1, t)
                if chain.permutes_only:
                    return chain(None, None, None, None, da_dq, da_dv, Minv)
                a = d.ddq if self._fills_result() else pin.aba(pm, d, self._q1, self._v1, t)
                nu_dot_b = cov.acceleration_back(a)[:6]
                return chain(cov.X, self._vb1, nu_dot_b, t[:6], da_dq, da_dv, Minv)
            cov = self._single_cov()
            t = cov.force(tau)
            da_dq, da_dv, Minv = pin.computeABADerivatives(pm, d, self._q1, self._v1, t)
            a = d.ddq.copy() if self._fills_result() else pin.aba(pm, d, self._q1, self._v1, t)
            H = np.array(self._rows)
            nu_dot = cov.acceleration_back(a)
            return forward_dynamics_derivatives_back(
                cov, H, self.representation, da_dq, da_dv, Minv, t, nu_dot
            )
        self._batch()
        cov = self.cov
        fext = self._fext(wrenches)
        tau_pin = cov.force(tau)
        chain = self._fd_chain
        if chain is None:
            chain = self._fd_chain = SingleStateForwardDerivatives(self.joints, self.representation)
        if chain.usable:
            return self._fd_per_sample(chain, cov, tau_pin, fext, wrenches)

        def one(q, v, t, f):
            if f is None:
                da_dq, da_dv, Minv = pin.computeABADerivatives(pm, d, q, v, t)
                a = pin.aba(pm, d, q, v, t)
            else:
                da_dq, da_dv, Minv = pin.computeABADerivatives(pm, d, q, v, t, f)
                a = pin.aba(pm, d, q, v, t, f)
            return da_dq, da_dv, Minv, a

        da_dq, da_dv, Minv, a = self._derivative_loop(one, tau_pin, fext)
        extra = self._wrench_terms(wrenches)
        if extra is not None:
            da_dq -= Minv @ extra
        flat = self._flat
        da_dq, da_dv, Minv, a = (flat.unflatten(x) for x in (da_dq, da_dv, Minv, a))
        tau_pin = np.broadcast_to(tau_pin, (*flat.batch_shape, tau_pin.shape[-1]))
        nu_dot = cov.acceleration_back(a)
        H = self.state.world_H_base.matrix
        return forward_dynamics_derivatives_back(
            cov, H, self.representation, da_dq, da_dv, Minv, tau_pin, nu_dot
        )

    # ------------------------------------------------------------------ batches, sample by sample
    def _samples(self, rows: np.ndarray, fext: list | None):
        """For each flat sample i, loaded (:meth:`_prepare`): ``(i, args)`` with Pinocchio's
        arguments ``(model, data, q_i, v_i, rows[i])``, plus the sample's external forces if any."""
        pm, d = self.pm, self.data
        for i in range(self._flat.n):
            self._prepare(i)
            args = (pm, d, self._q[i], self._v[i], rows[i])
            yield i, (args if fext is None else (*args, fext[i]))

    def _id_per_sample(
        self,
        chain: SingleStateInverseDerivatives,
        cov: ChangeOfVariables,
        nu_dot: np.ndarray,
        a_pin: np.ndarray,
        fext: list | None,
        wrenches: Mapping[str, np.ndarray] | None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Batched ID derivatives when the chain rule is compiled (or the joint permutation
        alone): per sample, Pinocchio's call, then the chain rule straight into that sample's
        slice of the result (no stacked copies of Pinocchio's matrices, no batched numpy chain)."""
        pin, pm, d, flat = self._pin, self.pm, self.data, self._flat
        n, nv = flat.n, pm.nv
        extra = self._wrench_terms(wrenches)  # (uses data: before the loop)
        a_rows = flat.flat_view(a_pin, nv)
        X = nu_b = nud_b = None
        if not chain.permutes_only:
            X = _flat_blocks(cov.X, flat)
            nu_b, nud_b = flat.flat_view(cov.nu[..., :6], 6), flat.flat_view(nu_dot[..., :6], 6)
        fills = fext is None and self._fills_result()
        out = np.empty((n, 3, nv, nv))
        for i, args in self._samples(a_rows, fext):
            dq, dv, M = pin.computeRNEADerivatives(*args)
            if extra is not None:
                dq = dq + extra[i]
            if X is None:
                chain(None, None, None, None, dq, dv, M, out=out[i])
            else:
                tau_b = d.tau[:6] if fills else pin.rnea(*args)[:6]
                chain(X[i], nu_b[i], nud_b[i], tau_b, dq, dv, M, out=out[i])
        return flat.unflatten(out[:, 0]), flat.unflatten(out[:, 1]), flat.unflatten(out[:, 2])

    def _fd_per_sample(
        self,
        chain: SingleStateForwardDerivatives,
        cov: ChangeOfVariables,
        tau_pin: np.ndarray,
        fext: list | None,
        wrenches: Mapping[str, np.ndarray] | None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Batched FD derivatives sample by sample, as :meth:`_id_per_sample` (the base
        acceleration in W, ``X^-1 (a_base - T_dot nu)``, from Pinocchio's per sample)."""
        pin, pm, d, flat = self._pin, self.pm, self.data, self._flat
        n, nv = flat.n, pm.nv
        extra = self._wrench_terms(wrenches)
        t_rows = flat.flat_view(tau_pin, nv)
        X = X_inv = nu_b = bias = None
        if not chain.permutes_only:
            X, X_inv = _flat_blocks(cov.X, flat), _flat_blocks(cov._base_inv(), flat)
            nu_b = flat.flat_view(cov.nu[..., :6], 6)
            b = cov.base_bias
            bias = None if b is None else flat.flat_view(b, 6)
        fills = fext is None and self._fills_result()
        out = np.empty((n, 3, nv, nv))
        for i, args in self._samples(t_rows, fext):
            da_dq, da_dv, M_inv = pin.computeABADerivatives(*args)
            if extra is not None:
                da_dq = da_dq - M_inv @ extra[i]
            if X is None:
                chain(None, None, None, None, da_dq, da_dv, M_inv, out=out[i])
                continue
            a_b = (d.ddq if fills else pin.aba(*args))[:6]
            nud_b = X_inv[i].dot(a_b if bias is None else a_b - bias[i])
            chain(X[i], nu_b[i], nud_b, t_rows[i, :6], da_dq, da_dv, M_inv, out=out[i])
        return flat.unflatten(out[:, 0]), flat.unflatten(out[:, 1]), flat.unflatten(out[:, 2])


def _flat_blocks(x: np.ndarray, flat) -> np.ndarray:
    """(..., 6, 6) blocks broadcast to the batch and flattened: a C-contiguous (n, 6, 6) array."""
    return np.ascontiguousarray(np.broadcast_to(x, (*flat.batch_shape, 6, 6)).reshape(flat.n, 6, 6))

