"""The Drake engine's single-state hot path.

One unbatched state given as arrays takes the mathematics of the general path with no per-call
set-up, as the Pinocchio and MuJoCo engines' do: the change of variables ``v = T nu`` is
:class:`bridge.conventions.single_state.SingleStateChange` from the representation's declaration to
:data:`~bridge.backends.drake.state.DRAKE`'s, writing Drake's velocity straight into one of two
buffers ``[q | v | base velocity]`` (the current state's and the spare, used in turn so that an
invalid state changes nothing), given to the Context in one ``SetPositionsAndVelocities``.

With numba, after :data:`~bridge.backends.single.COMPILE_AFTER` states, float64 arrays take the
library engines' compiled path instead (:class:`~bridge.backends.single.CompiledSingle`): one kernel
checks the state and writes ``[q | v]`` and the change of variables (compiled from the same
declarations) into a state array, and the results go back through its kernels
(:mod:`bridge.backends.single_kernels`): the mass matrix in place in Drake's array, a frame
Jacobian read in Drake's order by one kernel of :mod:`.kernels` (INERTIAL: Drake's F[A] Jacobian
taken to the spatial one without the frame's pose, see there), the queries switched once.

Drake's generalized forces of gravity enter once per state as the force elements' contribution
(``CalcForceElementsContribution``, gravity being the plant's only force element) in the
``MultibodyForces`` of ``CalcInverseDynamics``: ``h_D = ID_D(T_dot nu, F_g)`` and
``tau_D = ID_D(T nu_dot + T_dot nu, F_g)`` in one call each (``CalcBiasTerm`` and
``CalcGravityGeneralizedForces`` cost an inverse dynamics each). Frame Jacobians are asked of
Drake in the representation where it has it (F[A]: expressed in A at F's origin; F: expressed in
F), else moved from F[A] by the change compiled from the declarations. Everything else (gravity
forces, frame velocities and accelerations, the centre of mass, external wrenches) takes the
engine's general path on a batch of one, made on demand.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from bridge import _numba
from bridge.backends.single import LibrarySingleState, SingleMatrixBack
from bridge.conventions.single_state import SingleStateChange, single_base_change
from bridge.conventions.state import MODERATE_SQ, vdot, velocity_declaration
from bridge.spatial.so3 import quaternion_xyzw_of_rows

from .state import DRAKE

__all__ = ["DrakeSingleState"]

_SWAP = np.array([3, 4, 5, 0, 1, 2])  # Drake's angular-first rows -> linear first


def _import_kernels():
    from . import kernels

    return kernels


#: the Drake engine's kernels (:mod:`.kernels`), or None (numba off or not loading)
_drake_kernels = _numba.loader(
    _import_kernels, "numba is installed but the Drake engine's kernels did not load ({}); it uses numpy"
)


class DrakeSingleState(LibrarySingleState):
    """Mixin of :class:`bridge.backends.drake.engine.DrakeEngine`: one unbatched state.

    Uses the engine's ``model``, ``representation``, ``plant``, ``context``, ``layout``,
    ``_joints``, ``_frames``, ``_world``, ``_weld`` and ``_kV``; its general path rebuilds a batch
    of one from the copies when a query needs it.
    """

    #: the compiled state's frame Jacobian kernel (:mod:`.kernels`) once loaded, else None
    _k_jacobian = None
    _compiled_queries = False  # the compiled state is current (its queries: ``_<query>_compiled``)

    def _init_single(self) -> None:
        from pydrake.multibody.tree import MultibodyForces

        plant, joints, lay = self.plant, self._joints, self.layout
        nb, nv, nq = joints.nb, joints.nv, lay.nq
        self._nb, self._nv, self._shape_n = nb, nv, (joints.n,)
        self._idx_q = lay.idx_q
        inv = joints.inverse  # s and s_dot in q and v
        self._s_index, self._sd_index = lay.idx_q, nb + (np.arange(joints.n) if inv is None else inv)
        # the joints' positions: a slice of q when Drake keeps the model's order (else an index)
        qb = 7 if nb else 0
        in_order = np.array_equal(lay.idx_q, np.arange(qb, nq))
        self._bufs, fills = [], []
        source = velocity_declaration(self.representation)
        for _ in range(2):
            buf = np.empty(nq + nv + 6)
            q, v, vb = buf[:nq], buf[nq : nq + nv], buf[nq + nv :]
            self._bufs.append((buf, buf[: nq + nv], q, v, vb, q[qb:] if in_order else None))
            fills.append(SingleStateChange(source, DRAKE.velocity, joints, v[:nb], v[nb:]).fill)
        self._fills, self._spare = fills, 0
        self._mass_back = SingleMatrixBack(joints, self._compile_after)
        self._forces_g = MultibodyForces(plant)  # gravity's contribution at the current state
        self._a_bias = np.zeros(nv)  # T_dot nu in Drake's convention: joints stay zero
        self._a_bias_base = self._a_bias[:nb]
        self._zeros_nv = np.zeros(nv)
        self._acc = np.empty(nv)  # Drake's acceleration of the single-state inverse dynamics
        self._acc_parts = (self._acc, self._acc[:nb], self._acc[nb:])  # (whole, base, joints)
        self._tau = np.zeros(nv)  # Drake's generalized force of joint torques: the base stays zero
        self._tau_joints = self._tau[nb:]
        self._zero_base = np.zeros(6)
        self._zero_base.setflags(write=False)
        # frame Jacobians in Drake's own frames: F[A] (F's origin, expressed in A), F (expressed in
        # F: BODY), A (the point of F at A's origin: INERTIAL); else moved from F[A] by the change
        # compiled from the declarations
        rep = velocity_declaration(self.representation)
        mixed, body, inertial = (velocity_declaration(r) for r in ("mixed", "body", "inertial"))
        self._jac_in_frame = rep == body
        self._jac_at_world = rep == inertial
        known = (mixed, body, inertial)
        self._frame_change = None if rep in known else single_base_change(mixed, rep)
        self._g_last: np.ndarray | None = None
        self._state_g = False  # gravity's forces of the current state computed
        # the compiled path (numba): one-coordinate joints (q holds s as it is)
        one_coordinate = nq == nv + (1 if nb else 0)
        q_index = lay.idx_q if one_coordinate else None
        self._init_compiled(source, DRAKE.velocity, joints, DRAKE.configuration, q_index)

    def _load_compiled(self) -> None:
        """The compiled path, and with it the frame Jacobians' kernel (:mod:`.kernels`)."""
        LibrarySingleState._load_compiled(self)
        if self._kern is not None and self._frame_change is None:
            k = _drake_kernels()
            if k is not None:
                self._k_jacobian = k.spatial_columns_back if self._jac_at_world else k.columns_back
        if self._kern is not None:  # the compiled state's queries' kernels
            kern = self._kern
            self._shape_J = (6, self._nv)
            self._k_matrix = kern.k.matrix_back if kern.in_place and not kern.identity else None
            self._k_vector = kern.k.vector_back_permuted

    # ------------------------------------------------------------------ state
    def _take_single(
        self, H: np.ndarray, rows: list, s: np.ndarray, v: np.ndarray, sd: np.ndarray, gravity: np.ndarray
    ) -> bool:
        """Copy one state's arrays (:func:`~bridge.conventions.state.single_arrays`) into Drake's
        convention and the Context, or return False, changing nothing (not finite or not moderate)."""
        nb, spare = self._nb, self._spare
        buf, qv, q, vel, vb, q_joints = self._bufs[spare]
        vb[...] = v
        cov = self._fills[spare](H, rows, vb, sd)  # v = T nu, and T at this state
        if nb:
            x, y, z, w = quaternion_xyzw_of_rows(rows)
            q[:7] = (w, x, y, z, rows[0][3], rows[1][3], rows[2][3])
        if q_joints is not None:
            q_joints[...] = s
        else:
            q[self._idx_q] = s
        if not vdot(buf, buf) < MODERATE_SQ:  # finite and moderate (all_moderate, inlined)
            return False
        # ---- valid: commit (this buffer is now the current state's, the other one the spare)
        self._spare ^= 1
        if not nb and rows != self._pose:  # a fixed base: the weld's pose parameter
            self._weld.SetPoseInParentFrame(self.context, self._RigidTransform(H))
            self._pose = rows
        self._commit(qv, q, vel, vb, cov, gravity)
        self._rows = rows
        return True

    def _commit_compiled(self, arrays: tuple, gravity: np.ndarray) -> None:
        """Make the compiled path's state array (:class:`~bridge.backends.single.CompiledSingle`)
        the current single state (:meth:`_commit` written out; the compiled queries on)."""
        state, q, v, qv, vb, H, bias, _, cov = arrays
        if gravity is not self._g_last:
            self._set_gravity(gravity)
        self.plant.SetPositionsAndVelocities(self.context, qv)
        self._current = 0
        self._state_g = False
        self._cov1, self._q1, self._v1, self._vb1, self._g1 = cov, q, v, vb, gravity
        self._state1, self._H1, self._abias1, self._rows = state, H, bias, None
        self._state = self._cov = self._flat_batch = None
        self.batch_shape = ()
        if not self._compiled_queries:
            self._use_single_path(True, compiled=True)

    def _use_single_path(self, single: bool, compiled: bool = False) -> None:
        """Switch to the single-state path (``compiled``: the compiled state's queries) or, ``single``
        False, to the engine's general path."""
        self._compiled_queries = single and compiled
        self._single = single

    def _set_gravity(self, gravity: np.ndarray) -> None:
        """The plant's gravity (3,) of a single state (set only when it changes)."""
        self._g_last = gravity
        g = gravity.tolist()
        if g != self._gravity:
            self.plant.mutable_gravity_field().set_gravity_vector(gravity)
            self._gravity = g

    def _commit(self, qv: np.ndarray, q: np.ndarray, v: np.ndarray, vb: np.ndarray, cov, gravity) -> None:
        """Make a checked state (Drake's ``[q | v]``, the base velocity in the representation, the
        change of variables) the current single state: given to the Context."""
        if gravity is not self._g_last:
            self._set_gravity(gravity)
        self.plant.SetPositionsAndVelocities(self.context, qv)
        self._current = 0
        self._state_g = False
        self._cov1, self._q1, self._v1, self._vb1, self._g1 = cov, q, v, vb, gravity
        self._state = self._cov = self._flat_batch = None
        self.batch_shape = ()
        if not self._single or self._compiled_queries:
            self._use_single_path(True)

    def _gravity_forces_d(self):
        """The MultibodyForces holding gravity's contribution at the current state."""
        forces = self._forces_g
        if not self._state_g:
            forces.SetZero()
            self.plant.CalcForceElementsContribution(self.context, forces)
            self._state_g = True
        return forces

    def _bias_d(self, representation: bool = True) -> np.ndarray:
        """Drake's generalized forces (gravity in) at zero acceleration in the representation
        (``vdot = T_dot nu``), or in Drake's convention (``vdot = 0``) when not ``representation``."""
        if self._state1 is not None:  # the compiled state: T_dot nu in its array
            a = self._abias1 if representation else self._zeros_nv
        else:
            bias = representation and self._cov1.base_bias_into(self._a_bias_base)
            a = self._a_bias if bias else self._zeros_nv
        return self.plant.CalcInverseDynamics(self.context, a, self._gravity_forces_d())

    # ------------------------------------------------------------------ queries
    def _mass_matrix_single(self) -> np.ndarray:
        return self._mass_matrix_compiled() if self._compiled_queries else self._mass_matrix_numpy()

    def _bias_forces_single(self) -> np.ndarray:
        return self._bias_forces_compiled() if self._compiled_queries else self._bias_forces_numpy()

    def _frame_jacobian_single(self, frame: str) -> np.ndarray:
        if self._compiled_queries:
            return self._frame_jacobian_compiled(frame)
        return self._frame_jacobian_numpy(frame)

    def _mass_matrix_numpy(self) -> np.ndarray:
        M = self.plant.CalcMassMatrix(self.context)
        if self._state1 is not None:  # (Drake's M is in Fortran order; symmetric: M.T is M in C order)
            return self._matrix_back(M.T if not M.flags.c_contiguous else M)
        return self._mass_back(M, self._cov1.X)

    def _bias_forces_numpy(self) -> np.ndarray:
        if self._state1 is not None:
            return self._force_back(self._bias_d())
        return self._mass_back.force(self._bias_d(), self._cov1.X, self._cov1)

    def _mass_matrix_compiled(self) -> np.ndarray:
        """The compiled state's mass matrix: Drake's (Fortran order, symmetric: its transpose is
        it in C order) taken back in place by one kernel when the joint order is the same."""
        if self._k_matrix is None:
            return self._mass_matrix_numpy()
        M = self.plant.CalcMassMatrix(self.context).T
        try:
            self._k_matrix(M, self._state1)
        except TypeError:  # (not C order after all: the general conversion)
            return self._matrix_back(np.ascontiguousarray(M))
        return M

    def _bias_forces_compiled(self) -> np.ndarray:
        """The compiled state's bias forces: Drake's inverse dynamics at ``T_dot nu`` (the state
        array's), gravity's forces in, taken back by one kernel."""
        tau = self.plant.CalcInverseDynamics(self.context, self._abias1, self._gravity_forces_d())
        out = np.empty(self._nv)
        self._k_vector(tau, self._state1, out)
        return out

    def _frame_jacobian_compiled(self, frame: str) -> np.ndarray:
        """The compiled state's frame Jacobian: Drake's, read in its order by one kernel
        (:mod:`.kernels`; INERTIAL: from F[A], without the frame's pose)."""
        if self._k_jacobian is None:
            return self._frame_jacobian_numpy(frame)
        f, W = self._frames[frame], self._world
        J = self.plant.CalcJacobianSpatialVelocity(
            self.context, self._kV, f, _ORIGIN, W, f if self._jac_in_frame else W
        )
        out = np.empty(self._shape_J)
        self._k_jacobian(J.T, self._state1, out)
        return out

    def _frame_jacobian_numpy(self, frame: str) -> np.ndarray:
        f = self._frames[frame]
        plant, c, W = self.plant, self.context, self._world
        if self._jac_at_world:  # the point of F at A's origin, expressed in A
            X_FW = plant.CalcRelativeTransform(c, f, W)
            J = plant.CalcJacobianSpatialVelocity(c, self._kV, f, X_FW.translation(), W, W)
        else:  # F's origin, expressed in F (BODY) or A
            J = plant.CalcJacobianSpatialVelocity(c, self._kV, f, _ORIGIN, W, f if self._jac_in_frame else W)
        J = J.take(_SWAP, axis=0)
        change = self._frame_change
        if change is not None:  # pragma: no cover - every neutral representation is one of Drake's
            H = self._world_H(f)
            J = change.matrices(H, H.tolist())[0].dot(J)
        if self._state1 is not None:
            return self._columns_back(J)
        return self._mass_back.columns(J, self._cov1.X, self._cov1)

    def inverse_dynamics_single(self, base_acc: object, s_ddot: object) -> np.ndarray | None:
        """Hot path of ``KinDyn.inverse_dynamics`` without external wrenches: tau (nv,) for the raw
        ``base_acc`` (6,) (None for a fixed base) and ``s_ddot`` (n,), Drake's
        ``vdot = T nu_dot + T_dot nu`` written into a buffer.

        None, doing nothing, unless the state is one single state and the arguments are one finite
        acceleration of the right shapes (the caller's general path then raises the errors)."""
        a = self._acc
        done = self._acceleration_compiled(base_acc, s_ddot, a)
        if done is None:  # (not the compiled path's arguments)
            if not self._single or self._acceleration_into(base_acc, s_ddot, *self._acc_parts) is None:
                return None
        elif not done:
            return None
        tau = self.plant.CalcInverseDynamics(self.context, a, self._gravity_forces_d())
        if self._state1 is not None:
            return self._force_back(tau)
        return self._mass_back.force(tau, self._cov1.X, self._cov1)

    def forward_dynamics_single(self, t: np.ndarray) -> np.ndarray | None:
        """Hot path of ``KinDyn.forward_dynamics`` without external wrenches: nu_dot (nv,) for the
        joint torques ``t`` (n,) (a float array; the base wrench is zero, so ``T^-T tau`` is the
        permuted ``t`` behind six zeros): ``M_D^-1 (tau_D - h_D)`` by Cholesky.

        None, doing nothing, when the state is not one single state or ``t`` is not finite."""
        if not self._single or not float(vdot(t, t)) < MODERATE_SQ:  # (all_moderate; float32 t too)
            return None
        perm = self._joints.perm
        self._tau_joints[...] = t if perm is None else t[perm]
        rhs = self._tau - self._bias_d(False)
        M = self.plant.CalcMassMatrix(self.context)
        vdot_d = cho_solve(cho_factor(M, lower=True, check_finite=False), rhs, check_finite=False)
        if self._state1 is not None:
            self._kern.k.acceleration_back(vdot_d, self._state1, vdot_d if self._kern.in_place else rhs)
            return vdot_d if self._kern.in_place else rhs
        return self._cov1.acceleration_back(vdot_d, True)


_ORIGIN = np.zeros(3)
