"""The MuJoCo engine's single-state hot path.

One unbatched state given as arrays takes the mathematics of the general path with no per-call
set-up, as the Pinocchio engine's does: the change of variables ``qvel = T nu`` is
:class:`bridge.conventions.single_state.SingleStateChange` from the representation's declaration to
:data:`~bridge.backends.mujoco.state.MUJOCO`'s, writing MuJoCo's velocity straight into one of two
buffers ``[qpos | qvel | base velocity]`` (the current state's and the spare, used in turn so that an
invalid state changes nothing), copied into the ``MjData`` once checked.

With numba, after :data:`~bridge.backends.single.COMPILE_AFTER` states, float64 arrays take the
library engines' compiled path instead (:class:`~bridge.backends.single.CompiledSingle`): one kernel
(:func:`~bridge.backends.single_kernels.set_state_into`) checks the state, writes ``qpos``, ``qvel``
and the change of variables (compiled from the same declarations) into one state array, written in
place at every state, and, once all is checked, ``qpos`` and ``qvel`` into the ``MjData``'s own
arrays (public numpy views of its buffers): an invalid state writes nothing. The results go back
through its kernels (:mod:`bridge.backends.single_kernels`; a BODY frame Jacobian moved and taken
back in one call), called through their compiled entry points (:func:`bridge._numba.direct`: every
argument is the engine's buffer or an ``MjData`` array, of fixed types). MuJoCo itself is called
through its Python API only (no compiled code calls its C functions: an error there would end the
process instead of raising).

MuJoCo's pipeline runs only as far as a query needs, once per state: ``mj_fwdPosition`` (poses, the
centre of mass, ``qM``) for the mass matrix and the Jacobians; for the bias forces,
``mj_fwdVelocity`` (``qfrc_bias``) when zero acceleration in the representation is ``qacc = 0``
(MIXED), else MuJoCo's ``qfrc_bias + M T_dot nu`` as one ``mj_rne`` with ``qacc = T_dot nu`` after
``mj_comVel`` (one pass of the recursion instead of ``mj_fwdVelocity`` and ``mj_mulM``); inverse and
forward dynamics skip the stages already computed (``mj_inverseSkip`` / ``mj_forwardSkip``, past
the velocities or the positions). Results are read from the ``MjData`` arrays in place (views made
once) and copied only by the change of variables that takes them back. Everything
else (gravity forces, frame velocities and accelerations, the centre of mass, external wrenches,
links of the kinematic twin) takes the engine's general path on a batch of one, made on demand.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from bridge._numba import direct
from bridge.backends.single import LibrarySingleState, SingleMatrixBack, StateArrays
from bridge.conventions.single_state import SingleStateChange, single_base_change
from bridge.conventions.state import MODERATE_SQ, vdot, velocity_declaration
from bridge.spatial.so3 import matrix_to_quaternion_wxyz, quaternion_xyzw_of_rows

from .state import MUJOCO

__all__ = ["MujocoSingleState"]

_POSITION, _VELOCITY = 1, 2  # the MjData stages computed for the current single state


class MujocoSingleState(LibrarySingleState):
    """Mixin of :class:`bridge.backends.mujoco.engine.MujocoEngine`: one unbatched state.

    Uses the engine's ``model``, ``representation``, ``mm``, ``data``, ``_mj``, ``_joints``,
    ``_frames``, ``_on_twin``, ``_base_body`` and ``_fullM``; its general path makes a batch of one
    from the copies when a query needs it (the engine's ``_flat``).
    """

    #: the compiled state's kernels once loaded (:meth:`_load_compiled`): numba's entry points for
    #: the engine's own buffers and MjData's arrays (types fixed by construction, so no dispatch)
    _k_matrix = _k_vector = _k_columns = _k_frame_columns = _k_acceleration_back = None

    def _init_single(self) -> None:
        mj, m, d, joints = self._mj, self.mm, self.data, self._joints
        nb, nv, nq = joints.nb, joints.nv, m.nq
        self._nb, self._shape_n, self._perm = nb, (joints.n,), joints.perm
        qb, inv = (7 if nb else 0), joints.inverse
        self._s_index = qb + (np.arange(joints.n) if inv is None else inv)  # s and s_dot in qpos, qvel
        self._sd_index = nb + (np.arange(joints.n) if inv is None else inv)
        # MjData's arrays, read and written in place (views of its buffers, made once)
        self._d_qpos, self._d_qvel, self._d_qacc = d.qpos, d.qvel, d.qacc
        self._d_applied = d.qfrc_applied[nb:]  # its base part stays zero (the general path resets it)
        self._d_forces = d.qfrc_applied  # (the compiled path writes the whole of it: six zeros first)
        self._d_bias, self._d_inverse = d.qfrc_bias, d.qfrc_inverse
        self._d_acc = (d.qacc, d.qacc[:nb], d.qacc[nb:])  # qacc and its base and joint parts
        self._fwd_position, self._fwd_velocity = mj.mj_fwdPosition, mj.mj_fwdVelocity
        self._com_velocity, self._rne, self._jac = mj.mj_comVel, mj.mj_rne, mj.mj_jac
        self._inverse, self._inverse_skip = mj.mj_inverse, mj.mj_inverseSkip
        self._forward, self._forward_skip = mj.mj_forward, mj.mj_forwardSkip
        self._skip_position, self._skip_velocity = mj.mjtStage.mjSTAGE_POS, mj.mjtStage.mjSTAGE_VEL
        self._shape_nn, self._shape_6nv = (nv, nv), (6, nv)
        self._M_scratch = np.empty((nv, nv))  # MuJoCo's mass matrix, when a kernel permutes it back
        # two buffers [qpos | qvel | base velocity], alternately the current state's and the spare
        self._bufs, fills = [], []
        source = velocity_declaration(self.representation)
        for _ in range(2):
            buf = np.empty(nq + nv + 6)
            q, v, vb = buf[:nq], buf[nq : nq + nv], buf[nq + nv :]
            self._bufs.append((buf, q, v, vb, q[: 7 if nb else 0], q[7 if nb else 0 :]))
            fills.append(SingleStateChange(source, MUJOCO.velocity, joints, v[:nb], v[nb:]).fill)
        self._fills, self._spare = fills, 0
        self._mass_back = SingleMatrixBack(joints, self._compile_after)
        self._a_bias = np.zeros(nv)  # T_dot nu in MuJoCo's convention: joints stay zero
        self._a_bias_base = self._a_bias[:nb]
        # frame Jacobians: mj_jac at F's origin gives F[A]; at A's origin, A (INERTIAL) at once;
        # else F[A] is moved to the representation (the change compiled from the declarations)
        rep_frame = velocity_declaration(self.representation)
        mixed, inertial = velocity_declaration("mixed"), velocity_declaration("inertial")
        change = single_base_change(mixed, rep_frame)
        self._frame_change = None if rep_frame in (mixed, inertial) else change
        # F[A] -> F is the source's own map to BODY (one matrix, not X and its inverse)
        self._frame_to_body = rep_frame.is_body and not rep_frame.swap
        self._H_frame = np.eye(4)  # a frame's pose, written per query
        # the compiled path's: the frame change's constants (+ room for a pose and its matrix),
        # MuJoCo's Jacobian rows and M a written into scratch arrays (views made once)
        self._frame_data = None
        if self._frame_change is not None:
            which = 2 if self._frame_to_body else 0  # (the source's map to BODY, or X)
            c = change.pack(SimpleNamespace(n=0, nv=6, perm=None, back=None), [which])
            self._frame_data = np.concatenate([c, np.zeros(52)])
        jac = np.empty((6, nv))
        self._jac_scratch = (jac, jac[:3], jac[3:])
        self._h_scratch = np.empty(nv)
        # frame -> (the point mj_jac takes, origin (3,), rotation (9,), body): views of MjData rows
        origin = np.zeros(3)
        self._jac_frames = {}
        for name, (objtype, oid, bid) in self._frames.items():
            if name in self._on_twin:
                continue
            site = objtype == mj.mjtObj.mjOBJ_SITE
            pos, mat = (d.site_xpos[oid], d.site_xmat[oid]) if site else (d.xpos[oid], d.xmat[oid])
            self._jac_frames[name] = (origin if rep_frame == inertial else pos, pos, mat, bid)
        self._zero_base = np.zeros(6)
        self._zero_base.setflags(write=False)
        self._g_last: np.ndarray | None = None
        self._g_list: list | None = None
        self._base_rows: list | None = None
        self._stage = 0
        # the compiled path (numba): one-coordinate joints (qpos holds s as it is)
        one_coordinate = nq == nv + (1 if nb else 0)
        self._init_compiled(
            source, MUJOCO.velocity, joints, MUJOCO.configuration, self._s_index if one_coordinate else None
        )

    def _load_compiled(self) -> None:
        """The compiled path, and with it its kernels' entry points for the arrays this engine
        hands them (:func:`bridge._numba.direct`: the engine's buffers and MjData's arrays, float64
        and C-contiguous by construction; the user's arrays go through numba's dispatch)."""
        super()._load_compiled()
        kern = self._kern
        if kern is None:
            return
        k, state, nv = kern.k, kern.state, self._nv
        M, v, J = np.empty(self._shape_nn), np.empty(nv), np.empty(self._shape_6nv)
        matrix = (
            direct(k.matrix_back, M, state) if kern.in_place else direct(k.matrix_back_permuted, M, state, M)
        )
        self._k_matrix = None if kern.identity else matrix
        self._k_vector = direct(k.vector_back_permuted, self._d_bias, state, v)
        self._k_acceleration_back = direct(k.acceleration_back, self._d_qacc, state, v)
        self._k_columns = direct(k.columns_back_permuted, J, state, J)
        if self._frame_data is not None and self._jac_frames:
            _, pos, mat, _ = next(iter(self._jac_frames.values()))
            self._k_frame_columns = direct(k.frame_columns_back, J, pos, mat, self._frame_data, state, J)

    # ------------------------------------------------------------------ state
    def _take_single(
        self, H: np.ndarray, rows: list, s: np.ndarray, v: np.ndarray, sd: np.ndarray, gravity: np.ndarray
    ) -> bool:
        """Copy one state's arrays (:func:`~bridge.conventions.state.single_arrays`) into MuJoCo's
        convention and the MjData, or return False, changing nothing (not finite or not moderate)."""
        nb, perm, spare = self._nb, self._perm, self._spare
        buf, q, qvel, vb, q_base, q_joints = self._bufs[spare]
        vb[...] = v
        cov = self._fills[spare](H, rows, vb, sd)  # qvel = T nu, and T at this state
        if nb:
            x, y, z, w = quaternion_xyzw_of_rows(rows)
            q_base[...] = (rows[0][3], rows[1][3], rows[2][3], w, x, y, z)
        q_joints[...] = s if perm is None else s[perm]
        if not vdot(buf, buf) < MODERATE_SQ:  # finite and moderate (all_moderate, inlined)
            return False
        # ---- valid: commit (this buffer is now the current state's, the other one the spare)
        self._spare ^= 1
        self._commit(q, qvel, vb, cov, gravity)
        if not nb and rows != self._base_rows:  # a fixed base: the base body's placement
            self.mm.body_pos[self._base_body] = H[:3, 3]
            self.mm.body_quat[self._base_body] = matrix_to_quaternion_wxyz(H[:3, :3])
            self._base_rows = rows
        self._rows = rows
        return True

    def set_single_state(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object, gravity: np.ndarray
    ) -> bool:
        """The shared :meth:`~bridge.backends.single.LibrarySingleState.set_single_state`, with
        float64 arrays of the right shapes taken by the compiled path once it is loaded (its kernel
        checks them as :func:`~bridge.conventions.state.single_arrays` does, then writes MuJoCo's
        ``qpos`` and ``qvel`` into the MjData)."""
        kern = self._kern
        if kern is not None:
            # One state array, kern.states[0], written in place at every state: its kernel checks
            # everything before it writes anything (False: the array unchanged), and nothing handed
            # out is a view of it (the State is rebuilt from copies). The current state's views
            # then stay bound from one state to the next (as the Pinocchio engine's).
            state = kern.state
            try:  # (MuJoCo's qpos and qvel written by the kernel too, once the state is checked)
                done = kern.k.set_state_into(
                    world_H_base, s, base_velocity, s_dot, state, self._d_qpos, self._d_qvel
                )
            except TypeError:
                done = None  # (not four contiguous float64 arrays: the numpy path below)
            if done:
                if self._state1 is not state:  # (the first compiled state since another path)
                    self._current_compiled(kern.states[0])
                self._stage = 0
                self._current = -1
                self._state = self._cov = self._flat_batch = None
                if gravity is not self._g_last:
                    self._set_gravity(gravity)
                return True
            if done is not None:
                return False
        return self._set_single_numpy(world_H_base, s, base_velocity, s_dot, gravity)

    def _current_compiled(self, arrays: StateArrays) -> None:
        """Make the compiled path's state array (:class:`~bridge.backends.single.CompiledSingle`)
        the current single state, its queries on."""
        self._state1, self._H1, self._abias1, self._rows = arrays.state, arrays.H, arrays.bias, None
        self._cov1, self._q1, self._v1, self._vb1 = arrays.cov, arrays.q, arrays.v, arrays.vb
        self.batch_shape = ()
        if not self._single:
            self._use_single_path(True)

    def _commit(self, q: np.ndarray, qvel: np.ndarray, vb: np.ndarray, cov, gravity: np.ndarray) -> None:
        """Make a checked state (MuJoCo's ``qpos``, ``qvel``, the base velocity in the
        representation, the change of variables) the current single state: copied into the MjData."""
        self._d_qpos[...] = q
        self._d_qvel[...] = qvel
        self._set_gravity(gravity)
        self._stage = 0
        self._current = -1
        self._cov1, self._q1, self._v1, self._vb1 = cov, q, qvel, vb
        self._state = self._cov = self._flat_batch = None
        self.batch_shape = ()
        if not self._single:
            self._use_single_path(True)

    def _set_gravity(self, gravity: np.ndarray) -> None:
        """MuJoCo's gravity (3,) of a single state (set only when it changes)."""
        if gravity is not self._g_last:
            self._g_last = self._g1 = gravity
            g = gravity.tolist()
            if g != self._g_list:
                self.mm.opt.gravity[:] = g
                self._g_list = g

    def _velocities(self) -> None:
        """MuJoCo's position and velocity stages of the current single state (``qfrc_bias``)."""
        if self._stage < _VELOCITY:
            m, d = self.mm, self.data
            if self._stage < _POSITION:
                self._fwd_position(m, d)
            self._fwd_velocity(m, d)
            self._stage = _VELOCITY

    def _run(self, skipping, whole) -> None:
        """MuJoCo's inverse or forward dynamics: ``skipping(m, d, stage, 0)`` past the stages of the
        state already computed (velocities, or positions alone), else ``whole(m, d)``."""
        stage = self._stage
        if stage >= _VELOCITY:
            skipping(self.mm, self.data, self._skip_velocity, 0)
            return
        if stage >= _POSITION:
            skipping(self.mm, self.data, self._skip_position, 0)
        else:
            whole(self.mm, self.data)
        self._stage = _VELOCITY

    def _bias_mj(self, a: np.ndarray) -> np.ndarray:
        """MuJoCo's ``qfrc_bias + M a`` (nv,) for its acceleration ``a`` (nv,): one RNE with
        ``qacc = a`` (``mj_rne`` with its acceleration), after the centre-of-mass velocities of the
        velocity stage alone (``mj_comVel``; the stage is not marked computed: ``mj_fwdVelocity``
        computes more, which inverse and forward dynamics then run). Read from a scratch array, in
        place (the next call overwrites it)."""
        m, d = self.mm, self.data
        if self._stage < _POSITION:
            self._fwd_position(m, d)
            self._stage = _POSITION
        self._d_qacc[...] = a
        if self._stage < _VELOCITY:
            self._com_velocity(m, d)
        h = self._h_scratch
        self._rne(m, d, 1, h)
        return h

    # ------------------------------------------------------------------ queries
    def _mass_matrix_single(self) -> np.ndarray:
        if self._stage < _POSITION:
            self._fwd_position(self.mm, self.data)
            self._stage = _POSITION
        state = self._state1
        if state is not None:  # the compiled state: MuJoCo's matrix taken back by one kernel
            if self._kern.in_place:  # (in place, or nothing to do when T is the identity)
                M = np.empty(self._shape_nn)
                self._fullM(self.mm, self.data, M)
                if self._k_matrix is not None:
                    self._k_matrix(M, state)
                return M
            M, out = self._M_scratch, np.empty(self._shape_nn)
            self._fullM(self.mm, self.data, M)
            self._k_matrix(M, state, out)
            return out
        M = np.empty(self._shape_nn)
        self._fullM(self.mm, self.data, M)
        return self._mass_back(M, self._cov1.X)

    def _bias_forces_single(self) -> np.ndarray:
        # zero acceleration in the representation is qacc = T_dot nu: qfrc_bias + M_mj T_dot nu
        state = self._state1
        if state is not None:  # the compiled state: T_dot nu in its array
            if self._kern.bias_free:
                if self._stage < _VELOCITY:
                    self._velocities()
                x = self._d_bias
            else:
                x = self._bias_mj(self._abias1)
            h = np.empty(self._nv)
            self._k_vector(x, state, h)
            return h
        cov = self._cov1
        if cov.base_bias_into(self._a_bias_base):
            return self._mass_back.force(self._bias_mj(self._a_bias), cov.X, cov)
        self._velocities()
        return self._mass_back.force(self._d_bias, cov.X, cov)

    def _frame_jacobian_single(self, frame: str) -> np.ndarray:
        point, pos, mat, bid = self._jac_frames[frame]  # (a frame of MuJoCo's model, not the twin's)
        if self._stage < _POSITION:
            self._fwd_position(self.mm, self.data)
            self._stage = _POSITION
        state = self._state1
        if state is not None:  # the compiled state: one kernel from MuJoCo's rows
            J, jacp, jacr = self._jac_scratch
            self._jac(self.mm, self.data, jacp, jacr, point, bid)
            out = np.empty(self._shape_6nv)
            if self._frame_data is None:
                self._k_columns(J, state, out)
            else:
                self._k_frame_columns(J, pos, mat, self._frame_data, state, out)
            return out
        J = np.empty(self._shape_6nv)  # linear rows first
        self._jac(self.mm, self.data, J[:3], J[3:], point, bid)
        change = self._frame_change
        if change is not None:  # F[A] -> the representation's frame (BODY: F)
            H = self._H_frame
            H[:3, :3] = mat.reshape(3, 3)
            H[:3, 3] = pos
            rows = H.tolist()
            X = change.to_body(H, rows) if self._frame_to_body else change.matrices(H, rows)[0]
            J = X.dot(J)
        return self._mass_back.columns(J, self._cov1.X, self._cov1)

    def inverse_dynamics_single(self, base_acc: object, s_ddot: object) -> np.ndarray | None:
        """Hot path of ``KinDyn.inverse_dynamics`` without external wrenches: tau (nv,) for the raw
        ``base_acc`` (6,) (None for a fixed base) and ``s_ddot`` (n,), MuJoCo's
        ``qacc = T nu_dot + T_dot nu`` written straight into its ``MjData``.

        None, doing nothing, unless the state is one single state and the arguments are one finite
        acceleration of the right shapes (the caller's general path then raises the errors)."""
        state = self._state1
        if state is not None:  # the compiled state: float64 arrays take its kernels
            try:
                done = self._kern.k.acceleration(state, base_acc, s_ddot, self._d_qacc)
            except TypeError:  # not contiguous float64 arrays: the numpy path below
                done = None
            if done:
                self._run(self._inverse_skip, self._inverse)
                tau = np.empty(self._nv)
                self._k_vector(self._d_inverse, state, tau)
                return tau
            if done is not None:
                return None
        if not self._single or self._acceleration_into(base_acc, s_ddot, *self._d_acc) is None:
            return None
        self._run(self._inverse_skip, self._inverse)
        if state is not None:
            return self._force_back(self._d_inverse)
        return self._mass_back.force(self._d_inverse, self._cov1.X, self._cov1)

    def forward_dynamics_single(self, t: np.ndarray) -> np.ndarray | None:
        """Hot path of ``KinDyn.forward_dynamics`` without external wrenches: nu_dot (nv,) for the
        joint torques ``t`` (n,) (a float array; the base wrench is zero, so ``T^-T tau`` is the
        permuted ``t`` behind six zeros), MuJoCo's ``qfrc_applied`` written in place.

        None, doing nothing, when the state is not one single state or ``t`` is not finite."""
        state = self._state1
        if state is not None:  # the compiled state: a float64 t checked and written by one kernel
            try:
                done = self._kern.k.joint_forces(t, state, self._d_forces)
            except TypeError:  # (float32, or strided: the numpy path below)
                done = None
            if done:
                self._run(self._forward_skip, self._forward)
                out = np.empty(self._nv)
                self._k_acceleration_back(self._d_qacc, state, out)
                return out
            if done is not None:
                return None
        if not self._single or not float(vdot(t, t)) < MODERATE_SQ:  # (all_moderate; float32 t too)
            return None
        perm = self._perm
        self._d_applied[...] = t if perm is None else t[perm]
        self._run(self._forward_skip, self._forward)
        if state is not None:
            out = np.empty(self._nv)
            self._k_acceleration_back(self._d_qacc, state, out)
            return out
        return self._cov1.acceleration_back(self._d_qacc)
