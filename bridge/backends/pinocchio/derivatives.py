"""Pinocchio's analytical derivatives of its own dynamics: the engine's ``body_derivatives``
capability (:mod:`bridge.backends.protocol`).

Pinocchio's ``computeRNEADerivatives`` and ``computeABADerivatives`` differentiate its dynamics in
its own coordinates: the LOCAL (BODY) base velocity, the tangent ``q (+) delta`` (the base pose
times ``exp(delta_base^)``), joints depth first, external forces held fixed in the joint frames.
:class:`PinocchioBodyDerivatives` hands them over as they are, with what the chain rule needs (the
change of variables, the base pose, Pinocchio's tau and acceleration, frame Jacobians in its
coordinates); :mod:`bridge.derivatives.select` turns them into the derivatives in the KinDyn's
representation (docs/theory.md, "Derivatives of the dynamics"). Batches loop over samples for
Pinocchio's calls. On the engine's compiled single state, :meth:`PinocchioBodyDerivatives.inverse_fused`
and :meth:`~PinocchioBodyDerivatives.forward_fused` do a whole derivative call in three steps (the
acceleration kernel, Pinocchio's call, the chain rule's kernel reading Pinocchio's data and the
engine's state array in place; docs/performance.md, "Dynamics derivatives at the library's speed").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

from bridge._numba import direct
from bridge.conventions.change_of_variables import ChangeOfVariables
from bridge.conventions.state import MODERATE_SQ, vdot
from bridge.derivatives.select import compiled_kernels, kernels_loaded

__all__ = ["PinocchioBodyDerivatives"]

_F64 = np.dtype(np.float64)


class PinocchioBodyDerivatives:
    """The interface of :class:`bridge.derivatives.select.BodyDerivatives` on one
    :class:`~bridge.backends.pinocchio.engine.PinocchioEngine` (made once per engine; it reads the
    engine's current state at every call).

    Attributes:
        joints: the joint order between the representation and Pinocchio's.
        representation: the engine's representation.
    """

    def __init__(self, engine) -> None:
        self._engine = engine
        self._pin, self._pm, self._data = engine._pin, engine.pm, engine.data
        self.joints = engine.joints
        self.representation = engine.representation
        self._fills: bool | None = None
        self._tau_base: np.ndarray | None = None

    # ------------------------------------------------------------------ one unbatched state
    def single(self) -> bool:
        """Whether the engine holds one unbatched state set through its hot path."""
        return self._engine._single

    def fills_result(self) -> bool:
        """Whether Pinocchio's derivative algorithms leave tau (``data.tau``) and the acceleration
        (``data.ddq``) in ``data`` (checked once; else they are computed again)."""
        fills = self._fills
        if fills is None:
            pin, pm = self._pin, self._pm
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
            self._fills = fills
        return fills

    def inverse_single(self, base_acc: object, s_ddot: object, with_base: bool) -> tuple | None:
        """Pinocchio's ``(dq, dv, M)`` at the engine's single state for KinDyn's raw ``base_acc`` (6,)
        (None for a fixed base) and ``s_ddot`` (n,), its acceleration written straight into its
        buffer; with ``with_base`` also ``X = B_X_W`` (6, 6), the base velocity in W (6,), the base
        acceleration in W (6,) and the base part (6,) of Pinocchio's tau (a view of its data, valid
        until its next call). None, doing nothing, unless the state is one single state and the
        arguments one finite acceleration (the caller's general path then raises the errors)."""
        e = self._engine
        if not e._single:
            return None
        ba = e._acceleration_single(base_acc, s_ddot)
        if ba is False:
            return None
        pin, pm, d = self._pin, self._pm, self._data
        dq, dv, M = pin.computeRNEADerivatives(pm, d, e._q1, e._v1, e._acc)
        if not with_base:
            return dq, dv, M, None, None, None, None
        fills = self._fills
        if fills is None:
            fills = self.fills_result()
        if fills:
            tau_b = self._tau_base
            if tau_b is None:  # a view of data.tau, which the call above filled (data lives as long)
                tau_b = self._tau_base = d.tau[:6]
        else:
            tau_b = pin.rnea(pm, d, e._q1, e._v1, e._acc)[:6]
        return dq, dv, M, e._base_X(), e._vb1, ba, tau_b

    # ------------------------------------------------------------------ fused hot paths
    # One state set through the compiled path (.compiled): the acceleration kernel, Pinocchio's call
    # and the chain rule's kernel reading Pinocchio's matrices, tau or ddq as the views its call
    # returns (the same memory every call) and X, the base velocity and T_dot nu in the engine's
    # state array as it is; nothing else is copied, and the result is one fresh read-only array.
    def _compiled_possible(self) -> bool:
        """Whether the engine has (or may load) a compiled single-state path and Pinocchio's
        derivative calls leave tau and the acceleration in its data. Loads the engine's compiled
        path now when numba already runs (the derivatives' kernels loaded it: the engine's kernels then
        load from numba's disk cache in a few milliseconds each, at their first use, and the next
        state set takes that path), instead of after ``COMPILE_AFTER`` states."""
        e = self._engine
        if e._kern is None and e._kern_args is not None and kernels_loaded():
            e._load_compiled()
        return (e._kern is not None or e._kern_args is not None) and self.fills_result()

    def _offsets(self, *parts: str) -> tuple[int, ...]:
        """Where the ``parts`` (e.g. ``"X"``, ``"vb"``, ``"bias"``) start in the engine's compiled
        state array (:attr:`bridge.backends.single.CompiledSingle.parts`, the layout of
        :func:`bridge.backends.single_kernels.layout`; loaded: called at a compiled state only)."""
        layout = self._engine._kern.parts
        return tuple(layout[p].start for p in parts)

    def inverse_fused(self, chain) -> Callable[[object, object], tuple | None] | None:
        """The ID derivatives of KinDyn's raw ``(base_acc, s_ddot)`` at the engine's compiled single
        state through ``chain`` (a :class:`bridge.derivatives.single.SingleStateInverseDerivatives`):
        a function returning three read-only (nv, nv) views of one fresh array, or None (doing
        nothing: another state or other arguments; the caller's other paths then take them). None
        when this engine has no such path (no compiled state possible, or Pinocchio's call does
        not leave tau in its data)."""
        e = self._engine
        if not ((chain.permutes_only or chain.compiled) and self._compiled_possible()):
            return None
        pin, pm, d = self._pin, self._pm, self._data
        rnead, empty = pin.computeRNEADerivatives, np.empty
        shape, acc = chain._shape, e._acc
        kernel = chain.kernel
        tau = d.tau  # (a view of Pinocchio's data, which lives as long as the engine)
        ints = copy = call = None  # the kernel's constants and entry point, made at the first compiled state

        def run(base_acc: object, s_ddot: object) -> tuple | None:
            nonlocal ints, copy, call
            st = e._state1
            if st is None:
                return None
            # the engine's acceleration kernel checks the arguments: its explicit signatures take
            # contiguous float64 arrays only (TypeError otherwise), it checks their shapes and the
            # result finite and moderate (False otherwise)
            try:
                if not e._kern.k.acceleration(st, base_acc, s_ddot, acc):
                    return None
            except TypeError:
                return None
            dq, dv, M = rnead(pm, d, e._q1, e._v1, acc)
            out = empty(shape)
            if kernel is None:
                copy = copy or _copy_kernel(chain, dq, dv, M.T, out)
                copy[0](copy[1], dq, dv, M.T, out)
            else:
                if ints is None:  # (the kernel's entry point: base_acc is a float64 (6,) array, which
                    # the acceleration kernel's dispatch has checked)
                    ints = chain.constants(*self._offsets("X", "vb"))
                    call = direct(kernel, ints, st, empty(6), tau, dq, dv, M.T, out)
                call(ints, st, base_acc, tau, dq, dv, M.T, out)  # (M symmetric: its F-ordered transpose)
            out.setflags(False)  # (read-only, and so its three views; positional: a third of the cost)
            return out[0], out[1], out[2]

        return run

    def forward_fused(self, chain) -> Callable[[object], tuple | None] | None:
        """The FD derivatives of KinDyn's raw joint torques (n,) (zero base wrench) at the engine's
        compiled single state through ``chain`` (a
        :class:`bridge.derivatives.single.SingleStateForwardDerivatives`), as
        :meth:`inverse_fused`; the torques must be moderate (the caller checks the state is)."""
        e = self._engine
        if not (chain.usable and self._compiled_possible()):
            return None
        pin, pm, d = self._pin, self._pm, self._data
        abad, empty = pin.computeABADerivatives, np.empty
        shape, shape_n, perm = chain._shape, e._shape_n, self.joints.perm
        kernel = chain.kernel
        t = np.zeros(self._pm.nv)  # Pinocchio's generalized force: T^-T [0; tau] = [0; P tau]
        t_joints = t[6:]
        ddq = d.ddq  # (a view of Pinocchio's data)
        ints = copy = call = None

        def run(tau: object) -> tuple | None:
            nonlocal ints, copy, call
            st = e._state1
            if (
                st is None
                or type(tau) is not np.ndarray
                or tau.dtype is not _F64
                or tau.shape != shape_n
                or not vdot(tau, tau) < MODERATE_SQ
            ):
                return None
            if perm is None:
                t_joints[...] = tau
            else:
                tau.take(perm, out=t_joints)
            da_dq, da_dv, M_inv = abad(pm, d, e._q1, e._v1, t)
            out = empty(shape)
            if kernel is None:
                copy = copy or _copy_kernel(chain, da_dq, da_dv, M_inv, out)
                copy[0](copy[1], da_dq, da_dv, M_inv, out)
            else:
                if ints is None:  # (the kernel takes Pinocchio's acceleration and the state's T_dot nu)
                    ints = chain.constants(*self._offsets("X", "vb", "bias"))
                    call = direct(kernel, ints, st, ddq, t, da_dq, da_dv, M_inv, out)
                call(ints, st, ddq, t, da_dq, da_dv, M_inv, out)
            out.setflags(False)  # (read-only, and so its three views; positional: a third of the cost)
            return out[0], out[1], out[2]

        return run

    def single_pose(self) -> np.ndarray:
        """The single state's base pose (4, 4) (a fresh array)."""
        return self._engine._pose1()

    def single_cov(self, with_velocity: bool) -> ChangeOfVariables:
        """The single state's change of variables (with the velocity in the representation as its
        ``nu`` when asked for)."""
        e = self._engine
        c = e._cov1
        if not with_velocity:
            return c
        nb, inv = e._nb, self.joints.inverse
        joints = e._v1[nb:] if inv is None else e._v1[nb:][inv]
        nu = np.concatenate((e._vb1, joints)) if nb else joints
        X_inv = None if c.X is None else c._base_inv()
        return ChangeOfVariables(c.X, X_inv, self.joints, nu, bias=c.base_bias)

    def single_base_velocity(self) -> np.ndarray:
        """The single state's base velocity in W (6,) (zero for a fixed base)."""
        return self._engine._vb1

    def inverse_at(self, a_t: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(dq, dv, M, tau)`` of Pinocchio at the single state for its acceleration ``a_t`` (nv,)
        (``tau`` may be a view of its data: read it before another call)."""
        pin, pm, d, e = self._pin, self._pm, self._data, self._engine
        dq, dv, M = pin.computeRNEADerivatives(pm, d, e._q1, e._v1, a_t)
        tau = d.tau if self.fills_result() else pin.rnea(pm, d, e._q1, e._v1, a_t)
        return dq, dv, M, tau

    def forward_single(self, tau: np.ndarray, with_base: bool) -> tuple | None:
        """The compiled single state (:mod:`.compiled`): Pinocchio's ``(da_dq, da_dv, M_inv)`` for
        the source generalized force ``tau`` (nv,) and, with ``with_base``, ``X`` (6, 6), the base
        velocity in W (6,), the base acceleration in W (6,) and the base part (6,) of Pinocchio's
        force (else four Nones). None otherwise (the caller then takes the general single-state
        path)."""
        e = self._engine
        kern = e._kern
        if e._state1 is None or tau.dtype != np.float64:
            return None
        if kern.identity:  # the representation's convention is Pinocchio's: tau is its force
            return (*self.forward_at(tau, False)[:3], None, None, None, None)
        t = np.empty(tau.shape[0])
        try:  # (the kernels' explicit signatures: contiguous arrays, else the general path)
            kern.k.force(tau, e._state1, t)
        except TypeError:
            return None
        if not with_base:
            return (*self.forward_at(t, False)[:3], None, None, None, None)
        da_dq, da_dv, M_inv, a = self.forward_at(t, True)
        nu_dot = np.empty_like(t)
        kern.k.acceleration_back(a, e._state1, nu_dot)
        return da_dq, da_dv, M_inv, e._Xb1, e._vb1, nu_dot[:6], t[:6]

    def forward_at(self, t: np.ndarray, with_acceleration: bool) -> tuple:
        """``(da_dq, da_dv, M_inv, a)`` of Pinocchio at the single state for its generalized force
        ``t`` (nv,) (``a`` None unless asked for; may be a view of its data)."""
        pin, pm, d, e = self._pin, self._pm, self._data, self._engine
        da_dq, da_dv, M_inv = pin.computeABADerivatives(pm, d, e._q1, e._v1, t)
        a = None
        if with_acceleration:
            a = d.ddq if self.fills_result() else pin.aba(pm, d, e._q1, e._v1, t)
        return da_dq, da_dv, M_inv, a

    # ------------------------------------------------------------------ batches, sample by sample
    def batch(self) -> tuple[ChangeOfVariables, object]:
        """The current state as a batch: its change of variables and its
        :class:`~bridge.backends.batch.FlatBatch`."""
        e = self._engine
        e._batch()
        return e.cov, e._flat

    def poses(self) -> np.ndarray:
        """The current state's base poses (..., 4, 4)."""
        return self._engine.state.world_H_base.matrix

    def external_forces(self, wrenches: Mapping[str, np.ndarray] | None) -> list | None:
        """Pinocchio's external forces per flat sample (in its joint frames), or None."""
        return self._engine._fext(wrenches)

    def frame_jacobians(self, frame: str) -> np.ndarray:
        """The frame's Jacobians (n, 6, nv) per flat sample, rows in the representation's frame for
        it (F, A or F[A]), columns in Pinocchio's velocity coordinates."""
        e, pin, pm, d = self._engine, self._pin, self._pm, self._data
        flat, fid, nv = e._flat, e._frame_id[frame], pm.nv
        J = np.empty((flat.n, 6, nv))
        for i in range(flat.n):
            e._prepare(i)
            J[i] = pin.computeFrameJacobian(pm, d, e._q[i], fid, e._ref).reshape(6, nv)
        return J

    def _samples(self, rows: np.ndarray, fext: list | None) -> Iterator[tuple]:
        """Per flat sample, loaded: Pinocchio's arguments ``(model, data, q_i, v_i, rows[i])``, plus
        the sample's external forces if any."""
        e, pm, d = self._engine, self._pm, self._data
        for i in range(e._flat.n):
            e._prepare(i)
            args = (pm, d, e._q[i], e._v[i], rows[i])
            yield args if fext is None else (*args, fext[i])

    def inverse_samples(self, a_rows: np.ndarray, fext: list | None, need_tau: bool) -> Iterator[tuple]:
        """Per flat sample i: ``(dq, dv, M, tau)`` of Pinocchio for its accelerations ``a_rows[i]``
        (``tau`` None unless asked for; may be a view of its data)."""
        pin, d = self._pin, self._data
        fills = fext is None and self.fills_result()
        for args in self._samples(a_rows, fext):
            dq, dv, M = pin.computeRNEADerivatives(*args)
            tau = None
            if need_tau:
                tau = d.tau if fills else pin.rnea(*args)
            yield dq, dv, M, tau

    def forward_samples(self, t_rows: np.ndarray, fext: list | None, need_acc: bool) -> Iterator[tuple]:
        """Per flat sample i: ``(da_dq, da_dv, M_inv, a)`` of Pinocchio for its generalized forces
        ``t_rows[i]`` (``a`` None unless asked for; may be a view of its data)."""
        pin, d = self._pin, self._data
        fills = fext is None and self.fills_result()
        for args in self._samples(t_rows, fext):
            da_dq, da_dv, M_inv = pin.computeABADerivatives(*args)
            a = None
            if need_acc:
                a = d.ddq if fills else pin.aba(*args)
            yield da_dq, da_dv, M_inv, a


def _copy_kernel(chain, *examples: np.ndarray) -> tuple:
    """The permutation's kernel (:func:`bridge.derivatives.kernels.copy_permuted`; its entry point
    for the types of ``examples``, Pinocchio's three matrices and the result) and its constants for
    ``chain`` (T the joint permutation; numba runs: the engine's state is compiled)."""
    kernels = compiled_kernels()
    ints = kernels.constants(False, False, chain._order, 0, 0)
    return direct(kernels.copy_permuted, ints, *examples), ints
