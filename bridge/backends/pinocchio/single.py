"""The Pinocchio engine's single-state hot path.

One unbatched state takes the same mathematics as the general path with no per-call set-up: the
index arrays (the joint order, the combined permute-and-symmetrise index of M, the q layout) are
computed once per engine, and the change of variables comes from
:class:`bridge.conventions.single_state.SingleStateChange` (its base block read off the pose, its ``T_dot nu``
evaluated only when asked for), applied through its blocks. The state's copies (Pinocchio's q and
v) go to two buffers allocated once, used in turn; inverse and forward dynamics without external
wrenches take KinDyn's raw arguments (:meth:`SingleStatePath.inverse_dynamics_single`,
:meth:`SingleStatePath.forward_dynamics_single`) and write Pinocchio's argument straight into a
per-engine buffer. The State of the general path is rebuilt only if a query asks for it.
"""

from __future__ import annotations

import numpy as np

from bridge.backends.single import LibrarySingleState, SingleMatrixBack
from bridge.conventions.change_of_variables import JointOrder
from bridge.conventions.single_state import SingleStateChange
from bridge.conventions.state import MODERATE_SQ, all_finite, single_arrays, vdot, velocity_declaration
from bridge.spatial.so3 import quaternion_xyzw_of_rows

from .compiled import CompiledPath, compiled_eligible
from .state import PINOCCHIO, PinocchioLayout

__all__ = ["SingleStatePath"]


def _rows_to_q7(rows: list) -> list[float]:
    """``[A_o_B, quaternion (x, y, z, w), w >= 0]`` of one pose given as its rows (``H.tolist()``)
    (:func:`bridge.spatial.so3.quaternion_xyzw_of_rows`)."""
    return [rows[0][3], rows[1][3], rows[2][3], *quaternion_xyzw_of_rows(rows)]


class SingleStatePath(CompiledPath, LibrarySingleState):
    """Mixin of :class:`bridge.backends.pinocchio.engine.PinocchioEngine`: one unbatched state (the
    machinery the library engines share, :class:`~bridge.backends.single.LibrarySingleState`, with
    Pinocchio's q and the compiled path of :mod:`.compiled`).

    Uses the engine's ``model``, ``representation``, ``pm``, ``data``, ``_pin``, ``joints``
    (:class:`JointOrder` to Pinocchio's order) and its general path's ``_batch``/``_prepare``.
    """

    #: the compiled path's queries while a compiled single state is current (else None)
    _queries = None

    def _init_single(self, lay: PinocchioLayout, joints: JointOrder) -> None:
        pin, model = self._pin, self.model
        n, nv = model.n_dofs, model.nv
        nb = joints.nb
        self._nb, self._nv, self._qb = nb, nv, (7 if nb else 0)
        # M = M_pin[back][:, back], read from the upper triangle unless Pinocchio's crba returns the
        # full symmetric matrix (its Python binding does; checked once here)
        full = False
        if nv:
            M0 = pin.crba(self.pm, self.data, pin.neutral(self.pm))
            full = M0.shape == (nv, nv) and np.array_equal(M0, M0.T) and M0.base is None
        self._mass_back = SingleMatrixBack(joints, self._compile_after, full)
        cont = np.asarray(lay.continuous, dtype=bool)
        self._q_joints_perm_only = not bool(cont.any())  # then q[qb:] = s[perm]
        self._q_dst, self._q_src = lay.idx_q[~cont], np.flatnonzero(~cont)
        self._qc_dst, self._qc_src = lay.idx_q[cont], np.flatnonzero(cont)
        self._qc_dst1 = self._qc_dst + 1
        self._shape_n = (n,)
        inv = joints.inverse  # s and s_dot in q and v (s: when q holds it as it is)
        self._s_index = self._qb + (np.arange(n) if inv is None else inv)
        self._sd_index = nb + (np.arange(n) if inv is None else inv)
        # two buffers [q | v | base velocity], alternately the current state's and the spare
        # (see set_single_state), with their views sliced once
        nq, qb = lay.nq, self._qb
        self._bufs = []
        for _ in range(2):
            buf = np.empty(nq + nv + 6)
            q, v, vb = buf[:nq], buf[nq : nq + nv], buf[nq + nv :]
            self._bufs.append((buf, q, v, vb, q[:qb], q[qb:], v[:nb], v[nb:]))
        self._spare = 0
        # one change of variables per buffer, filled again for each state (it writes v)
        source = velocity_declaration(self.representation)
        self._fills = [
            SingleStateChange(source, PINOCCHIO.velocity, joints, b[6], b[7]).fill for b in self._bufs
        ]
        self._acc = np.empty(nv)  # Pinocchio-order arguments of the single-state ID and FD
        self._acc_parts = (self._acc, self._acc[:nb], self._acc[nb:])  # (whole, base, joints)
        self._a_bias = np.zeros(nv)  # the bias forces' Pinocchio acceleration: joints stay zero
        self._a_bias_base = self._a_bias[:nb]  # written by ChangeOfVariables.base_bias_into only
        tau = np.zeros(nv)
        self._tau = (tau, tau[nb:])
        self._zero_base = np.zeros(6)
        self._zero_base.setflags(write=False)
        self._g_last: np.ndarray | None = None
        self._single = False
        self._mode: str | None = None  # the path: None (general), "numpy" or "compiled"
        self._queries = None  # the compiled path's queries (.compiled) while its state is current
        # the compiled path (.compiled): numba, a floating base, one-coordinate joints
        eligible = compiled_eligible(PINOCCHIO.velocity, joints, bool(cont.any()))
        self._init_compiled(
            source, PINOCCHIO.velocity, joints, PINOCCHIO.configuration, lay.idx_q if eligible else None
        )

    # ------------------------------------------------------------------ state
    def set_single_state(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object, gravity: np.ndarray
    ) -> bool:
        """The shared :meth:`~bridge.backends.single.LibrarySingleState.set_single_state`, with
        float64 arrays of the right shapes taken by the compiled path once it is loaded (its kernel
        checks them as :func:`~bridge.conventions.state.single_arrays` does). The inputs are
        copied (into q and v); the State is rebuilt from the copies only if asked for."""
        kern = self._kern
        if kern is not None:  # the compiled path (.compiled): four contiguous float64 arrays
            # One state array, kern.states[0], written in place at every state: its kernel checks
            # everything before it writes anything (False: the array unchanged), and nothing handed
            # out is a view of it (the State is rebuilt from copies). The current state's names
            # then stay bound from one state to the next: no stores on this path (about 0.15 us of
            # the 0.25 us it spent around the kernel, measured on iCub).
            state = kern.state
            try:
                done = kern.k.set_state(world_H_base, s, base_velocity, s_dot, state)
            except TypeError:
                done = None  # (not four contiguous float64 arrays: the numpy path below)
            if done:
                if self._state1 is not state:  # (the first compiled state since another path)
                    self._current_compiled(kern.states[0])
                else:
                    self._state = self._cov = self._q = None
                if gravity is not self._g_last:
                    self._set_gravity(gravity)
                return True
            if done is not None:
                return False
        taken = single_arrays(world_H_base, s, base_velocity, s_dot, self._shape_n)
        return taken is not None and self._take_single(*taken, gravity)

    def _current_compiled(self, arrays: tuple) -> None:
        """Make the compiled path's state array (:class:`~bridge.backends.single.CompiledSingle`)
        the current single state, its queries on."""
        state, q, v, _, vbc, H1, bias, X, cov = arrays
        self._state1, self._H1, self._abias1, self._Xb1, self._cov1 = state, H1, bias, X, cov
        self._q1, self._v1, self._vb1 = q, v, vbc
        self._state = self._cov = self._q = None
        if self._mode != "compiled":
            self._use_single_path(True, "compiled")

    def _take_single(
        self, H: np.ndarray, rows: list, s: np.ndarray, base_velocity: np.ndarray, s_dot: np.ndarray,
        gravity: np.ndarray,
    ) -> bool:  # fmt: skip
        """Copy one state's checked arrays (:func:`~bridge.conventions.state.single_arrays`) into
        Pinocchio's q and v, or return False, changing nothing (not finite or not moderate)."""
        nb = self._nb
        # the copies go to the spare one of two buffers, so that the current state stays intact
        # until this one is known to be valid: q, v, a copy of the base velocity (for the State)
        spare = self._spare
        buf, q, v, vb, q_base, q_joints = self._bufs[spare][:6]
        vb[...] = base_velocity
        cov = self._fills[spare](H, rows, vb, s_dot)  # T nu into v, and T at this state
        if nb:
            q_base[...] = _rows_to_q7(rows)
        perm = self.joints.perm
        if self._q_joints_perm_only:
            q_joints[...] = s if perm is None else s[perm]
            s_copy = None
        else:
            if not all_finite(s_copy := np.array(s, dtype=np.float64)):
                return False
            q[self._q_dst] = s_copy[self._q_src]
            sc = s_copy[self._qc_src]
            q[self._qc_dst] = np.cos(sc)
            q[self._qc_dst1] = np.sin(sc)
        if not vdot(buf, buf) < MODERATE_SQ:  # finite and moderate (all_moderate, inlined)
            return False
        # ---- valid: commit (this buffer is now the current state's, the other one the spare)
        self._spare ^= 1
        self._state1 = None
        if self._mode != "numpy":
            self._use_single_path(True, "numpy")
        if self._kern_args is not None:  # (the compiled path, not loaded yet: see COMPILE_AFTER)
            self._n_numpy += 1
            if self._n_numpy >= self._compile_after:
                self._load_compiled()
        self._commit(cov, q, v, vb if nb else self._zero_base, rows, s_copy, gravity)
        if not nb and rows != self._world_fixed:
            self._batch()
            self._prepare(0)  # the fixed base pose
        return True

    def _commit(self, cov, q, v, vb, rows, s_copy, gravity: np.ndarray) -> None:
        """Make the checked copies the current single state (the numpy path's queries on)."""
        self._cov1 = cov
        self._q1, self._v1, self._vb1, self._rows, self._s_copy = q, v, vb, rows, s_copy
        self._state = None
        self._cov = None
        self._q = None  # the general path's (1, k) views, made on demand (_batch)
        if gravity is not self._g_last:
            self._set_gravity(gravity)

    def _set_gravity(self, gravity: np.ndarray) -> None:
        """A single state's gravity (3,), set in Pinocchio's model when it changed."""
        self._g_last = self._g1 = gravity
        g = gravity.tolist()
        if g != self._g_list:
            self.pm.gravity = self._pin.Motion(np.array(g), np.zeros(3))
            self._g_list = g

    def _use_single_path(self, single: bool, mode: str = "numpy") -> None:
        """Switch to the single-state path of ``mode``: "numpy" (this module's queries) or
        "compiled" (the closures of :mod:`.compiled`, made at the first compiled state), or to the
        engine's general path (``single`` False)."""
        self._mode = mode if single else None
        if mode == "compiled" and self._compiled_queries is None:
            self._bind_compiled()
        self._queries = self._compiled_queries if self._mode == "compiled" else None
        if single:
            self.batch_shape = ()  # (a batched state before this one must not leave its shape)
            self._rows = self._s_copy = None
        else:
            self._state1 = None  # (no compiled state any more)
        self._single = single

    # ------------------------------------------------------------------ queries
    # (the compiled path's when its state is current, else numpy's from the copies)
    def _mass_matrix_single(self) -> np.ndarray:
        if self._queries is not None:
            return self._queries.mass_matrix()
        return self._mass_back(self._crba(self._q1), self._cov1.X)

    def _bias_forces_single(self) -> np.ndarray:
        if self._queries is not None:
            return self._queries.bias_forces()
        pin, pm, d, cov = self._pin, self.pm, self.data, self._cov1
        # Pinocchio's acceleration of zero nu_dot, T_dot nu: zero but for the base part
        if cov.base_bias_into(self._a_bias_base):
            h = pin.rnea(pm, d, self._q1, self._v1, self._a_bias)
        else:
            h = pin.nle(pm, d, self._q1, self._v1)
        return h if cov.identity else cov.force_back(h, True)

    def _gravity_forces_single(self) -> np.ndarray:
        if self._queries is not None:
            return self._queries.gravity_forces()
        g = self._pin.computeGeneralizedGravity(self.pm, self.data, self._q1)
        return g if self._cov1.identity else self._cov1.force_back(g, True)

    def _inverse_dynamics_single(self, nu_dot: np.ndarray, fext: list | None) -> np.ndarray:
        pin, pm, d, cov = self._pin, self.pm, self.data, self._cov1
        a = cov.acceleration(nu_dot)
        if fext is None:
            return cov.force_back(pin.rnea(pm, d, self._q1, self._v1, a), True)
        return cov.force_back(pin.rnea(pm, d, self._q1, self._v1, a, fext[0]), True)

    def _forward_dynamics_single(self, tau: np.ndarray, fext: list | None) -> np.ndarray:
        pin, pm, d, cov = self._pin, self.pm, self.data, self._cov1
        t = cov.force(tau)
        if fext is None:
            a = pin.aba(pm, d, self._q1, self._v1, t)
        else:
            a = pin.aba(pm, d, self._q1, self._v1, t, fext[0])
        return cov.acceleration_back(a, True)

    def _frame_jacobian_single(self, frame: str) -> np.ndarray:
        if self._queries is not None:
            return self._queries.frame_jacobian(frame)
        J = self._pin.computeFrameJacobian(self.pm, self.data, self._q1, self._frame_id[frame], self._ref)
        if J.ndim == 1:  # Eigen returns a 6x1 Jacobian as a flat (6,) array
            J = J.reshape(6, self._nv)
        return J if self._cov1.identity else self._cov1.jacobian_back(J, True)

    def inverse_dynamics_single(self, base_acc: object, s_ddot: object) -> np.ndarray | None:
        """Hot path of ``KinDyn.inverse_dynamics`` without external wrenches: tau (nv,) for the raw
        ``base_acc`` (6,) (None for a fixed base) and ``s_ddot`` (n,), ``a = T nu_dot + T_dot nu``
        written straight into Pinocchio's order (no nu_dot in between).

        None, doing nothing, unless the state is one single state and the arguments are one finite
        acceleration of the right shapes: the caller's general path then takes batches and raises
        the errors.
        """
        if self._state1 is not None:  # the compiled path: one kernel, Pinocchio's rnea, one kernel
            try:
                done = self._kern.k.acceleration(self._state1, base_acc, s_ddot, self._acc)
            except TypeError:  # not contiguous float64 arrays: the numpy path below
                done = None
            if done is not None:
                return self._inverse_dynamics_compiled() if done else None
        if not self._single or self._acceleration_single(base_acc, s_ddot) is False:
            return None
        if self._state1 is not None:
            return self._inverse_dynamics_compiled()
        tau = self._pin.rnea(self.pm, self.data, self._q1, self._v1, self._acc)
        return tau if self._cov1.identity else self._cov1.force_back(tau, True)

    def _acceleration_single(self, base_acc: object, s_ddot: object) -> np.ndarray | bool | None:
        """Write Pinocchio's acceleration ``a = T nu_dot + T_dot nu`` (nv,) of the raw ``base_acc``
        (6,) (None for a fixed base) and ``s_ddot`` (n,) into the engine's buffer ``_acc``; return
        ``base_acc`` as an array (None for a fixed base), or False, when the arguments are not one
        finite acceleration of the right shapes (the caller's general path then raises the errors).
        """
        if self._state1 is not None:
            done = self._acceleration_compiled(base_acc, s_ddot)
            if done is not None:
                return base_acc if done else False
        args = self._acceleration_into(base_acc, s_ddot, *self._acc_parts)
        return False if args is None else args[0]

    def forward_dynamics_single(self, t: np.ndarray) -> np.ndarray | None:
        """Hot path of ``KinDyn.forward_dynamics`` without external wrenches: nu_dot (nv,) for the
        joint torques ``t`` (n,) (a float array; the base wrench is zero, so ``T^{-T} tau`` is the
        permuted ``t`` behind six zeros).

        None, doing nothing, when the state is not one single state or ``t`` is not finite (the
        caller's general path then takes it and raises the errors).
        """
        if not self._single or not float(vdot(t, t)) < MODERATE_SQ:  # (all_moderate; float32 t too)
            return None
        tau, tau_joints = self._tau  # its base part stays zero
        perm = self.joints.perm
        tau_joints[...] = t if perm is None else t[perm]
        if self._state1 is not None:
            return self._forward_dynamics_compiled(tau)
        a = self._pin.aba(self.pm, self.data, self._q1, self._v1, tau)
        return a if self._cov1.identity else self._cov1.acceleration_back(a, True)
