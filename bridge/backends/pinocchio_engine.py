"""Dynamics engine over Pinocchio's own algorithms, answering in any velocity representation.

Every quantity comes from Pinocchio (crba, rnea, aba, frame Jacobians, frame accelerations,
centre of mass) on ``to_pinocchio(model)`` and is converted through the change of variables
``nu_pin = T nu`` (base block ``B_X_W``, joint permutation P) and its derivative, as
../shared/reference/003 derives (with the errata of DESIGN.md):

* ``M = T^T M_pin T``; ``h = T^T ID_pin(q, v, T_dot nu)`` (zero acceleration in the
  representation is *not* zero acceleration for Pinocchio);
* ``tau = T^T ID_pin(q, v, T nu_dot + T_dot nu, f_ext)``;
* ``nu_dot = T^{-1} (ABA_pin(q, v, T^{-T} tau, f_ext) - T_dot nu)``;
* frame accelerations: Pinocchio's spatial acceleration in LOCAL (BODY) and WORLD (INERTIAL)
  is the derivative of the velocity in that representation; for MIXED the derivative of the
  mixed velocity is Pinocchio's *classical* acceleration in LOCAL_WORLD_ALIGNED.

Pinocchio is not batched: batched states loop over samples inside this module; all conversions are
vectorised over the batch.

A single (unbatched) state takes a hot path with the same mathematics and no per-call set-up: the
index arrays (joint permutation, the combined permute-and-symmetrise index of M, the q layout) are
computed once per engine, T is applied through its blocks (rotation blocks R or R^T, read off the
base pose, for MIXED; T^{-1} = T^T there, so no solve), its derivative enters only where it is not
zero (``T_dot nu = (-omega_B x v_B, 0, ...)`` for MIXED, zero for BODY and INERTIAL), and the
State and VelocityTransform objects of the general path are built only if a general-path query
asks for them. The state's copies (Pinocchio's q and v) go to two buffers allocated once, used
in turn, and inverse and forward dynamics without external wrenches take KinDyn's raw arguments
(:meth:`PinocchioEngine.inverse_dynamics_single`, :meth:`PinocchioEngine.forward_dynamics_single`),
writing Pinocchio's acceleration or torque straight into a per-engine buffer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from bridge.backends.pinocchio import pinocchio_layout, to_pinocchio, to_pinocchio_state
from bridge.model.model import Model
from bridge.spatial import Transform
from bridge.state import (
    Representation,
    State,
    all_finite,
    finite_weights,
    pose_rows_valid,
    structured_velocity_transform,
)

__all__ = ["PinocchioEngine"]

_BODY, _INERTIAL, _MIXED = Representation.BODY, Representation.INERTIAL, Representation.MIXED
_F64 = np.dtype(np.float64)

# flat indices into a (4, 4) pose H giving blkdiag(R^T, R^T) (6, 6); 12 is H[3, 0] == 0
_BLKDIAG_RT = np.full((6, 6), 12, dtype=np.intp)
for _i in range(3):
    for _j in range(3):
        _BLKDIAG_RT[_i, _j] = _BLKDIAG_RT[3 + _i, 3 + _j] = 4 * _j + _i
del _i, _j


def _rows_to_q7(rows: list) -> list[float]:
    """``[A_o_B, quaternion (x, y, z, w), w >= 0]`` of one pose given as its rows (``H.tolist()``).

    The same branch choice (largest of trace and diagonal, first one on ties) and sign convention
    as :func:`bridge.spatial.so3.matrix_to_quaternion_xyzw`, in Python floats, without its
    batched numpy calls.
    """
    (m00, m01, m02, px), (m10, m11, m12, py), (m20, m21, m22, pz), _ = rows
    tr = m00 + m11 + m22
    if tr >= m00 and tr >= m11 and tr >= m22:
        x, y, z, w = m21 - m12, m02 - m20, m10 - m01, 1.0 + tr
    elif m00 >= m11 and m00 >= m22:
        x, y, z, w = 1.0 + m00 - m11 - m22, m01 + m10, m02 + m20, m21 - m12
    elif m11 >= m22:
        x, y, z, w = m01 + m10, 1.0 - m00 + m11 - m22, m12 + m21, m02 - m20
    else:
        x, y, z, w = m02 + m20, m12 + m21, 1.0 - m00 - m11 + m22, m10 - m01
    k = 1.0 / (x * x + y * y + z * z + w * w) ** 0.5
    if w < 0.0:
        k = -k
    return [px, py, pz, x * k, y * k, z * k, w * k]


class PinocchioEngine:
    """Engine protocol implementation (see :class:`bridge.kindyn.KinDyn`) on Pinocchio."""

    name = "pinocchio"

    def __init__(self, model: Model, representation: Representation) -> None:
        import pinocchio as pin

        self._pin = pin
        self.model = model
        self.representation = Representation.parse(representation)
        self.pm = to_pinocchio(model)
        self.data = self.pm.createData()
        self._ref = {
            Representation.BODY: pin.ReferenceFrame.LOCAL,
            Representation.INERTIAL: pin.ReferenceFrame.WORLD,
            Representation.MIXED: pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
        }[self.representation]
        FT = pin.FrameType
        self._frame_id: dict[str, int] = {}
        for fid, f in enumerate(self.pm.frames):
            if f.type in (FT.BODY, FT.OP_FRAME) and f.name not in self._frame_id:
                self._frame_id[f.name] = fid
        self._g_list: list[float] | None = None
        # fixed base: Pinocchio's universe is the base link frame; the base pose is applied by
        # moving what hangs from the universe (joints and frames of joint 0) per sample.
        self._world_fixed: list | None = None
        if not model.floating:
            self._root_joints = {
                j: pm_placement
                for j, pm_placement in enumerate(self.pm.jointPlacements)
                if j > 0 and self.pm.parents[j] == 0
            }
            self._root_frames = {
                f: fr.placement.copy() for f, fr in enumerate(self.pm.frames) if fr.parentJoint == 0
            }
            self._root_joints = {j: pl.copy() for j, pl in self._root_joints.items()}

        # single-state hot path: every index array once per engine
        lay = pinocchio_layout(model)
        n, nv = model.n_dofs, model.nv
        nb = 6 if model.floating else 0
        self._nb, self._nv, self._nq, self._qb = nb, nv, lay.nq, (7 if model.floating else 0)
        perm = np.asarray(lay.perm, dtype=np.intp)
        identity = bool(np.array_equal(perm, np.arange(n)))
        # Pinocchio <- neutral: x_pin[nb:] = x[_pcols] (joint part of T and T^{-T})
        self._perm = None if identity else perm
        self._pcols = None if identity else nb + perm
        # neutral <- Pinocchio: x = x_pin[_cols] (joint part of T^T and T^{-1})
        cols = np.concatenate([np.arange(nb), nb + np.argsort(perm)]).astype(np.intp)
        self._cols = None if identity else cols
        # M = M_pin[cols][:, cols], read from the upper triangle: one take permutes and symmetrises
        i, j = cols[:, None], cols[None, :]
        self._M_idx = np.minimum(i, j) * nv + np.maximum(i, j)
        if identity and nv:
            # no permutation: skip the take if Pinocchio's crba returns the full symmetric matrix
            # (its Python binding does; checked once here)
            q0 = pin.neutral(self.pm)
            M0 = pin.crba(self.pm, self.data, q0)
            if M0.shape == (nv, nv) and np.array_equal(M0, M0.T) and M0.base is None:
                self._M_idx = None
        cont = np.asarray(lay.continuous, dtype=bool)
        self._q_joints_perm_only = not bool(cont.any())  # then q[qb:] = s[perm]
        self._q_dst, self._q_src = lay.idx_q[~cont], np.flatnonzero(~cont)
        self._qc_dst, self._qc_src = lay.idx_q[cont], np.flatnonzero(cont)
        self._single = False
        self._state: State | None = None
        self._vt = None
        self._nu: np.ndarray | None = None
        self._a_bias = np.zeros(nv)
        self._inv_perm = None if identity else np.argsort(perm)
        self._qc_dst1 = self._qc_dst + 1
        self._shape_n = (n,)
        self._finite_w = finite_weights(lay.nq + nv + 6)
        # two buffers [q | v | base velocity], alternately the current state's and the spare
        # (see set_single_state), with their views sliced once
        nq, qb = lay.nq, self._qb
        self._bufs = []
        for _ in range(2):
            buf = np.empty(nq + nv + 6)
            q, v, vb = buf[:nq], buf[nq : nq + nv], buf[nq + nv :]
            self._bufs.append((buf, q, v, vb, q[:qb], q[qb:], v[:nb], v[nb:]))
        self._spare = 0
        # the Pinocchio-order arguments of the single-state inverse and forward dynamics
        a = np.empty(nv)
        self._acc = (a, a[:nb], a[nb:])
        tau = np.zeros(nv)
        self._tau = (tau, tau[nb:])
        self._finite_w_nv = finite_weights(nv)
        self._zero_base = np.zeros(6)
        self._zero_base.setflags(write=False)
        self._g_last: np.ndarray | None = None

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        if (
            state.representation is self.representation
            and state.world_H_base.matrix.ndim == 2
            and state.s.ndim == 1
            and state.s_dot.ndim == 1
            and state.base_velocity.ndim == 1
            and gravity.ndim == 1
            and self.set_single_state(state.world_H_base, state.s, state.base_velocity, state.s_dot, gravity)
        ):
            self._state = state
            return
        q, v = to_pinocchio_state(self.model, state)
        self.batch_shape = np.broadcast_shapes(q.shape[:-1], gravity.shape[:-1])
        n = int(np.prod(self.batch_shape, dtype=int))
        self._q = np.broadcast_to(q, (*self.batch_shape, q.shape[-1])).reshape(n, -1)
        self._v = np.broadcast_to(v, (*self.batch_shape, v.shape[-1])).reshape(n, -1)
        self._g = np.broadcast_to(gravity, (*self.batch_shape, 3)).reshape(n, 3)
        H = state.world_H_base.matrix
        self._H = np.broadcast_to(H, (*self.batch_shape, 4, 4)).reshape(n, 4, 4)
        self._state = state
        self._vt = None
        self._nu = None
        self._n = n
        self._single = False

    def set_single_state(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object, gravity: np.ndarray
    ) -> bool:
        """Hot path of :meth:`set_state` for one unbatched state given as arrays (``world_H_base``
        (4, 4) or a Transform, ``s``/``s_dot`` (n,), ``base_velocity`` (6,) in this engine's
        representation, ignored but checked for a fixed base) and a checked ``gravity`` (3,).

        Checks the arrays as :class:`State` does and returns False, changing nothing, when they
        are not one valid state (the caller then builds a State, which raises the error). The
        inputs are copied (into q and v); the State is rebuilt from the copies only if asked for.
        """
        H = world_H_base
        try:
            if type(H) is not np.ndarray or H.dtype is not _F64:
                H = np.asarray(H.matrix if isinstance(H, Transform) else H, dtype=np.float64)
            if type(s) is not np.ndarray:
                s = np.asarray(s, dtype=np.float64)
            if type(s_dot) is not np.ndarray:
                s_dot = np.asarray(s_dot, dtype=np.float64)
            if type(base_velocity) is not np.ndarray:
                base_velocity = np.asarray(base_velocity, dtype=np.float64)
        except (TypeError, ValueError):
            return False
        shape = self._shape_n
        if (
            H.shape != (4, 4)
            or s.shape != shape
            or s_dot.shape != shape
            or base_velocity.shape != (6,)
            or s.dtype.kind not in "fiu"
            or s_dot.dtype.kind not in "fiu"
            or base_velocity.dtype.kind not in "fiu"
        ):
            return False
        rows = H.tolist()
        if not pose_rows_valid(rows):
            return False
        nb, perm = self._nb, self._perm
        # the copies go to the spare one of two buffers, so that the current state stays intact
        # until this one is known to be valid: q, v, a copy of the base velocity (for the State)
        buf, q, v, vb, q_base, q_joints, v_base, v_joints = self._bufs[self._spare]
        vb[...] = base_velocity
        v_joints[...] = s_dot if perm is None else s_dot[perm]
        X = X_inv = None
        if nb:
            q_base[...] = _rows_to_q7(rows)
            rep = self.representation
            if rep is _BODY:
                v_base[...] = vb
            else:
                # base block of T: X = B_X_W (6, 6), W = B[A] (MIXED) or A (INERTIAL); one take
                # reads blkdiag(R^T, R^T) out of H (its zeros from H[3, 0], checked to be 0)
                X = H.take(_BLKDIAG_RT)
                if rep is _INERTIAL:  # B_X_A = [[R^T, -R^T skew(p)], [0, R^T]], inverse A_X_B
                    px, py, pz = rows[0][3], rows[1][3], rows[2][3]
                    X[:3, 3:] = X[:3, :3] @ np.array([[0.0, pz, -py], [-pz, 0.0, px], [py, -px, 0.0]])
                    X_inv = Transform._wrap(np.array(rows)).motion_matrix()
                v_base[...] = X.dot(vb)
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
        if not math.isfinite(buf.dot(self._finite_w)):  # one finiteness test (see all_finite)
            return False
        # ---- valid: commit (this buffer is now the current state's, the other one the spare)
        self._spare ^= 1
        self._X, self._X_inv = X, X_inv
        self._vb1 = vb if nb else self._zero_base
        self._q1, self._v1, self._rows, self._s_copy, self._g1 = q, v, rows, s_copy, gravity
        self._abias: list[float] | None = None
        self._single = True
        self._state = None
        self._vt = None
        self._nu = None
        self._q = None  # the general path's (1, k) views, made on demand (_batch)
        if gravity is not self._g_last:
            self._g_last = gravity
            g = gravity.tolist()
            if g != self._g_list:
                self.pm.gravity = self._pin.Motion(np.array(g), np.zeros(3))
                self._g_list = g
        if not nb and rows != self._world_fixed:
            self._batch()
            self._prepare(0)  # the fixed base pose
        return True

    def _batch(self) -> None:
        """After a single state: the general path's per-sample arrays (a batch of one)."""
        if self._q is None:
            self.batch_shape = ()
            self._n = 1
            self._q, self._v, self._g = self._q1[None], self._v1[None], self._g1[None]
            self._H = np.array(self._rows)[None]

    @property
    def state(self) -> State:
        """The current state (rebuilt from the copies after :meth:`set_single_state`)."""
        if self._state is None:
            nb, nv, inv = self._nb, self._nv, self._inv_perm
            q, v = self._q1, self._v1
            if self._s_copy is not None:
                s = self._s_copy
            else:
                s = q[self._qb :].copy() if inv is None else q[self._qb :][inv]
            s_dot = v[nb:nv].copy() if inv is None else v[nb:nv][inv]
            H = Transform._wrap(np.array(self._rows))
            vb = self._vb1.copy() if self._nb else self._vb1  # the buffer is reused later
            self._state = State._trusted(H, s, vb, s_dot, self.representation)
        return self._state

    @property
    def vt(self):
        """The block-structured change of variables to Pinocchio's convention (built on demand)."""
        if self._vt is None:
            self._vt = structured_velocity_transform(self.model, self.state, self.representation, "pinocchio")
        return self._vt

    @property
    def nu(self) -> np.ndarray:
        """The generalized velocity in this representation, (..., nv)."""
        if self._nu is None:
            st = self.state
            self._nu = st.nu if self.model.floating else st.s_dot
        return self._nu

    def _prepare(self, i: int) -> None:
        """Load sample i's gravity (and, for a fixed base, its base pose) into the Pinocchio model."""
        g = self._g[i].tolist()
        if g != self._g_list:
            self.pm.gravity = self._pin.Motion(np.array(g), np.zeros(3))
            self._g_list = g
            self._g_last = None  # set_single_state's shortcut no longer applies
        if not self.model.floating:
            H = self._H[i]
            key = H.tolist()
            if key != self._world_fixed:
                world_M_base = self._pin.SE3(H[:3, :3].copy(), H[:3, 3].copy())
                for j, placement in self._root_joints.items():
                    self.pm.jointPlacements[j] = world_M_base * placement
                for f, placement in self._root_frames.items():
                    self.pm.frames[f].placement = world_M_base * placement
                self._world_fixed = key

    def _loop(self, fn, *vectors: np.ndarray) -> np.ndarray:
        """Call ``fn(i, *vectors_i)`` for every flattened sample; stack into the batch shape.

        ``vectors`` have shape (..., k) broadcastable to the batch shape.
        """
        self._batch()
        flat = [np.broadcast_to(a, (*self.batch_shape, a.shape[-1])).reshape(self._n, -1) for a in vectors]
        out = []
        for i in range(self._n):
            self._prepare(i)
            out.append(fn(i, *(a[i] for a in flat)))
        out = np.asarray(out)
        return out.reshape(*self.batch_shape, *out.shape[1:])

    # ------------------------------------------------------------------ single-state conversions
    # X (6, 6) is the base block of T (None for BODY); MIXED: X = blkdiag(R^T, R^T), so
    # X^{-1} = X^T; one 6x6 BLAS call is cheaper here than two 3x3 block calls (numpy's per-call
    # cost dominates at this size), and no dense (6+n)x(6+n) matrix is ever formed.
    def _to_pin(self, x: np.ndarray, forces: bool = False) -> np.ndarray:
        """One state: ``T x`` (velocities, accelerations) or, with ``forces``, ``T^{-T} x``; (nv,)."""
        nb = self._nb
        out = np.empty(self._nv)
        out[nb:] = x[nb:] if self._pcols is None else x[self._pcols]
        if nb:
            X = self._X
            if X is None:
                out[:6] = x[:6]
            elif forces and self.representation is _INERTIAL:
                out[:6] = self._X_inv.T.dot(x[:6])
            else:
                out[:6] = X.dot(x[:6])
        return out

    def _from_pin(self, x: np.ndarray, accelerations: bool = False) -> np.ndarray:
        """One state: ``T^T x`` (generalized forces) or, with ``accelerations``, ``T^{-1} x``; (nv,).

        ``x`` is a fresh array from Pinocchio (it may be reused for the result)."""
        cols = self._cols
        out = x[cols] if cols is not None else (x if x.base is None else x.copy())
        if self._X is not None:
            if accelerations and self.representation is _INERTIAL:
                out[:6] = self._X_inv.dot(x[:6])
            else:
                out[:6] = self._X.T.dot(x[:6])
        return out

    def _bias_acc(self) -> list[float] | None:
        """One state: the base-linear part of ``T_dot nu`` (MIXED only: ``-omega_B x v_B``), else None.

        With ``X = blkdiag(R^T, R^T)``, ``X_dot nu_base = (-omega_B x R^T d/dt o_B, 0)``; BODY and
        INERTIAL have ``T_dot nu = 0`` (for INERTIAL it is ``-crm(v_B) v_B``)."""
        if self.representation is not _MIXED or not self._nb:
            return None
        if self._abias is None:
            vx, vy, vz, wx, wy, wz = self._v1[:6].tolist()
            self._abias = [wz * vy - wy * vz, wx * vz - wz * vx, wy * vx - wx * vy]
        return self._abias

    # ------------------------------------------------------------------ joint-space dynamics
    def mass_matrix(self) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        if self._single:
            M = pin.crba(pm, d, self._q1)
            X = self._X
            if X is not None:
                # base rows of T^T M T in Pinocchio's order, written into its (fresh) copy
                M6 = M[:6]
                G = X.T.dot(M6)
                M6[...] = G
                M6[:, :6] = G[:, :6].dot(X)
                if self._M_idx is None:
                    M[6:, :6] = G[:, 6:].T
                    return M
            # one take permutes the joints and mirrors the upper triangle (base columns included)
            return M if self._M_idx is None else M.take(self._M_idx)
        M = self._loop(lambda i: pin.crba(pm, d, self._q[i]).copy())
        M = np.triu(M) + np.swapaxes(np.triu(M, 1), -1, -2)
        return self.vt.congruence(M)

    def _rnea(self, a_pin: np.ndarray, fext: list | None) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data

        def one(i, a):
            if fext is None:
                return pin.rnea(pm, d, self._q[i], self._v[i], a).copy()
            return pin.rnea(pm, d, self._q[i], self._v[i], a, fext[i]).copy()

        return self._loop(one, a_pin)

    def bias_forces(self) -> np.ndarray:
        if self._single:
            pin, pm, d = self._pin, self.pm, self.data
            ab = self._bias_acc()
            if ab is None:
                h = pin.nle(pm, d, self._q1, self._v1)
            else:
                a = self._a_bias  # zero but for the base-linear part (Pinocchio copies its arguments)
                a[:3] = ab
                h = pin.rnea(pm, d, self._q1, self._v1, a)
            return self._from_pin(h)
        a_pin = self.vt.apply_derivative(self.nu)
        return self.vt.transpose_apply(self._rnea(a_pin, None))

    def gravity_forces(self) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        if self._single:
            return self._from_pin(pin.computeGeneralizedGravity(pm, d, self._q1))

        def one(i):
            return pin.computeGeneralizedGravity(pm, d, self._q[i]).copy()

        return self.vt.transpose_apply(self._loop(one))

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        if self._single and nu_dot.ndim == 1:
            pin, pm, d = self._pin, self.pm, self.data
            a = self._to_pin(nu_dot)
            ab = self._bias_acc()
            if ab is not None:  # element by element: cheaper than a numpy call for 3 numbers
                a[0] += ab[0]
                a[1] += ab[1]
                a[2] += ab[2]
            fext = self._fext(wrenches)
            if fext is None:
                return self._from_pin(pin.rnea(pm, d, self._q1, self._v1, a))
            return self._from_pin(pin.rnea(pm, d, self._q1, self._v1, a, fext[0]))
        a_pin = self.vt.apply(nu_dot) + self.vt.apply_derivative(self.nu)
        return self.vt.transpose_apply(self._rnea(a_pin, self._fext(wrenches)))

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        if self._single and tau.ndim == 1:
            t = self._to_pin(tau, forces=True)
            fext = self._fext(wrenches)
            if fext is None:
                a = pin.aba(pm, d, self._q1, self._v1, t)
            else:
                a = pin.aba(pm, d, self._q1, self._v1, t, fext[0])
            return self._nu_dot_from_pin(a)
        tau_pin = self.vt.transpose_solve(tau)
        fext = self._fext(wrenches)

        def one(i, t):
            if fext is None:
                return pin.aba(pm, d, self._q[i], self._v[i], t).copy()
            return pin.aba(pm, d, self._q[i], self._v[i], t, fext[i]).copy()

        a_pin = self._loop(one, tau_pin)
        return self.vt.solve(a_pin - self.vt.apply_derivative(self.nu))

    def inverse_dynamics_single(self, base_acc: object, s_ddot: object) -> np.ndarray | None:
        """Hot path of ``KinDyn.inverse_dynamics`` without external wrenches: tau (nv,) for the raw
        ``base_acc`` (6,) (None for a fixed base) and ``s_ddot`` (n,), ``a = T nu_dot + T_dot nu``
        written straight into Pinocchio's order (no nu_dot in between).

        None, doing nothing, unless the state is one single state and the arguments are one finite
        acceleration of the right shapes: the caller's general path then takes batches and raises
        the errors.
        """
        if not self._single:
            return None
        nb = self._nb
        try:
            if type(s_ddot) is not np.ndarray:
                s_ddot = np.asarray(s_ddot, dtype=np.float64)
            if nb and type(base_acc) is not np.ndarray:
                base_acc = np.asarray(base_acc, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if s_ddot.shape != self._shape_n or s_ddot.dtype.kind not in "fiu":
            return None
        if not nb:
            if base_acc is not None:
                return None
        elif base_acc.shape != (6,) or base_acc.dtype.kind not in "fiu":
            return None
        a, a_base, a_joints = self._acc  # Pinocchio copies its arguments: one buffer per engine
        a_joints[...] = s_ddot if self._perm is None else s_ddot[self._perm]
        if nb:
            X = self._X
            a_base[...] = base_acc if X is None else X.dot(base_acc)
            ab = self._bias_acc()
            if ab is not None:  # element by element: cheaper than a numpy call for 3 numbers
                a[0] += ab[0]
                a[1] += ab[1]
                a[2] += ab[2]
        if not math.isfinite(a.dot(self._finite_w_nv)):  # an inf or NaN in the arguments
            return None
        return self._from_pin(self._pin.rnea(self.pm, self.data, self._q1, self._v1, a))

    def forward_dynamics_single(self, t: np.ndarray) -> np.ndarray | None:
        """Hot path of ``KinDyn.forward_dynamics`` without external wrenches: nu_dot (nv,) for the
        joint torques ``t`` (n,) (a float array; the base wrench is zero, so ``T^{-T} tau`` is the
        permuted ``t`` behind six zeros).

        None, doing nothing, when the state is not one single state or ``t`` is not finite (the
        caller's general path then takes it and raises the errors).
        """
        if not self._single or not all_finite(t):
            return None
        tau, tau_joints = self._tau  # its base part stays zero
        tau_joints[...] = t if self._perm is None else t[self._perm]
        return self._nu_dot_from_pin(self._pin.aba(self.pm, self.data, self._q1, self._v1, tau))

    def _nu_dot_from_pin(self, a: np.ndarray) -> np.ndarray:
        """One state's Pinocchio acceleration (nv,) -> nu_dot: subtract ``T_dot nu`` (three numbers
        for MIXED, in place) and undo T."""
        ab = self._bias_acc()
        if ab is not None:
            a[0] -= ab[0]
            a[1] -= ab[1]
            a[2] -= ab[2]
        return self._from_pin(a, accelerations=True)

    def _fext(self, wrenches: Mapping[str, np.ndarray] | None) -> list | None:
        """Per-sample lists of Pinocchio joint forces (joint-local) from frame wrenches."""
        if not wrenches:
            return None
        pin, pm, d = self._pin, self.pm, self.data
        rep = self.representation
        self._batch()
        out = []
        flat = {
            name: np.broadcast_to(w, (*self.batch_shape, 6)).reshape(self._n, 6)
            for name, w in wrenches.items()
        }
        for i in range(self._n):
            self._prepare(i)
            pin.forwardKinematics(pm, d, self._q[i])
            forces = [np.zeros(6) for _ in range(pm.njoints)]
            for name, w in flat.items():
                fid = self._frame_id[name]
                frame = pm.frames[fid]
                jid = frame.parentJoint
                if rep is Representation.BODY:
                    J_H_C = frame.placement
                else:
                    J_H_A = d.oMi[jid].inverse()
                    if rep is Representation.INERTIAL:
                        J_H_C = J_H_A
                    else:  # C = F[A]: origin of F, orientation of A
                        o_F = (d.oMi[jid] * frame.placement).translation
                        J_H_C = J_H_A * pin.SE3(np.eye(3), o_F)
                forces[jid] += J_H_C.act(pin.Force(w[i])).vector
            vec = pin.StdVec_Force()
            for f in forces:
                vec.append(pin.Force(f))
            out.append(vec)
        return out

    # ------------------------------------------------------------------ frames
    def frame_transform(self, frame: str) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        fid = self._frame_id[frame]

        def one(i):
            pin.forwardKinematics(pm, d, self._q[i])
            return pin.updateFramePlacement(pm, d, fid).homogeneous.copy()

        return self._loop(one)

    def frame_velocity(self, frame: str) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        fid = self._frame_id[frame]

        def one(i):
            pin.forwardKinematics(pm, d, self._q[i], self._v[i])
            return pin.getFrameVelocity(pm, d, fid, self._ref).vector.copy()

        return self._loop(one)

    def frame_jacobian(self, frame: str) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        fid = self._frame_id[frame]
        nv = self._nv  # Eigen returns a 6x1 Jacobian as a flat (6,) array: reshape
        if self._single:
            J = pin.computeFrameJacobian(pm, d, self._q1, fid, self._ref)
            if J.ndim == 1:
                J = J.reshape(6, nv)
            out = J if self._cols is None else J.take(self._cols, axis=1)
            if self._X is not None:
                out[:, :6] = J[:, :6].dot(self._X)
            return out
        J = self._loop(
            lambda i: pin.computeFrameJacobian(pm, d, self._q[i], fid, self._ref).reshape(6, nv).copy()
        )
        return self.vt.right_apply(J)

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        fid = self._frame_id[frame]
        a_pin = self.vt.apply(nu_dot) + self.vt.apply_derivative(self.nu)
        mixed = self.representation is Representation.MIXED

        def one(i, a):
            pin.forwardKinematics(pm, d, self._q[i], self._v[i], a)
            if mixed:
                return pin.getFrameClassicalAcceleration(pm, d, fid, self._ref).vector.copy()
            return pin.getFrameAcceleration(pm, d, fid, self._ref).vector.copy()

        return self._loop(one, a_pin)

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        return self.frame_acceleration(frame, np.zeros(self.model.nv))

    # ------------------------------------------------------------------ centre of mass
    # Pinocchio's centre of mass leaves out the universe body, which for a fixed base carries the base
    # link (and what is welded to it); the robot's centre of mass includes it.
    def _base_share(self) -> tuple[float, float, np.ndarray]:
        """(mass of the moving subtree, mass welded to a fixed base, its COM in base coordinates)."""
        if self.model.floating:
            return 1.0, 0.0, np.zeros(3)
        I0 = self.pm.inertias[0]
        total = float(sum(self.pm.inertias[j].mass for j in range(self.pm.njoints)))
        return total, float(I0.mass), np.array(I0.lever)

    def com_position(self) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        total, m0, c0 = self._base_share()

        def one(i):
            c = pin.centerOfMass(pm, d, self._q[i]).copy()
            if m0 > 0.0:
                H = self._H[i]
                c = ((total - m0) * c + m0 * (H[:3, :3] @ c0 + H[:3, 3])) / total
            return c

        return self._loop(one)

    def com_velocity(self) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        total, m0, _ = self._base_share()

        def one(i):
            pin.centerOfMass(pm, d, self._q[i], self._v[i])
            return d.vcom[0].copy() * ((total - m0) / total)

        return self._loop(one)

    def centroidal_momentum(self) -> np.ndarray:
        """``computeCentroidalMomentum`` (about Pinocchio's centre of mass, which leaves out a fixed
        base's welded mass) moved to the robot's centre of mass: (..., 6) in G[A], linear first."""
        pin, pm, d = self._pin, self.pm, self.data
        com = self.com_position()
        flat_com = com.reshape(-1, 3)

        def one(i):
            hg = pin.computeCentroidalMomentum(pm, d, self._q[i], self._v[i])
            p = hg.linear.copy()
            # from Pinocchio's centre of mass to the robot's: k_c = k_pin + (c_pin - c) x p
            return np.concatenate([p, hg.angular + np.cross(d.com[0] - flat_com[i], p)])

        return self._loop(one)

    def com_jacobian(self) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        total, m0, _ = self._base_share()
        nv = pm.nv
        J = self._loop(
            lambda i: (
                pin.jacobianCenterOfMass(pm, d, self._q[i]).reshape(3, nv).copy() * ((total - m0) / total)
            )
        )
        return self.vt.right_apply(J)
