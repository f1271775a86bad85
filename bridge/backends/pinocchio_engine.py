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
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.backends.pinocchio import to_pinocchio, to_pinocchio_state
from bridge.model.model import Model
from bridge.state import Representation, State, structured_velocity_transform

__all__ = ["PinocchioEngine"]


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
        self._gravity = None
        # fixed base: Pinocchio's universe is the base link frame; the base pose is applied by
        # moving what hangs from the universe (joints and frames of joint 0) per sample.
        self._world_fixed = None
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

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        q, v = to_pinocchio_state(self.model, state)
        self.batch_shape = np.broadcast_shapes(q.shape[:-1], gravity.shape[:-1])
        n = int(np.prod(self.batch_shape, dtype=int))
        self._q = np.broadcast_to(q, (*self.batch_shape, q.shape[-1])).reshape(n, -1)
        self._v = np.broadcast_to(v, (*self.batch_shape, v.shape[-1])).reshape(n, -1)
        self._g = np.broadcast_to(gravity, (*self.batch_shape, 3)).reshape(n, 3)
        H = state.world_H_base.matrix
        self._H = np.broadcast_to(H, (*self.batch_shape, 4, 4)).reshape(n, 4, 4)
        self.state = state
        self.vt = structured_velocity_transform(self.model, state, self.representation, "pinocchio")
        self.nu = state.nu if self.model.floating else state.s_dot
        self._n = n

    def _prepare(self, i: int) -> None:
        """Load sample i's gravity (and, for a fixed base, its base pose) into the Pinocchio model."""
        g = self._g[i]
        if self._gravity is None or not np.array_equal(g, self._gravity):
            self.pm.gravity = self._pin.Motion(np.asarray(g, dtype=float), np.zeros(3))
            self._gravity = g.copy()
        if not self.model.floating:
            H = self._H[i]
            if self._world_fixed is None or not np.array_equal(H, self._world_fixed):
                world_M_base = self._pin.SE3(H[:3, :3].copy(), H[:3, 3].copy())
                for j, placement in self._root_joints.items():
                    self.pm.jointPlacements[j] = world_M_base * placement
                for f, placement in self._root_frames.items():
                    self.pm.frames[f].placement = world_M_base * placement
                self._world_fixed = H.copy()

    def _loop(self, fn, *vectors: np.ndarray) -> np.ndarray:
        """Call ``fn(i, *vectors_i)`` for every flattened sample; stack into the batch shape.

        ``vectors`` have shape (..., k) broadcastable to the batch shape.
        """
        flat = [np.broadcast_to(a, (*self.batch_shape, a.shape[-1])).reshape(self._n, -1) for a in vectors]
        out = []
        for i in range(self._n):
            self._prepare(i)
            out.append(fn(i, *(a[i] for a in flat)))
        out = np.asarray(out)
        return out.reshape(*self.batch_shape, *out.shape[1:])

    # ------------------------------------------------------------------ joint-space dynamics
    def mass_matrix(self) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
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
        a_pin = self.vt.apply_derivative(self.nu)
        return self.vt.transpose_apply(self._rnea(a_pin, None))

    def gravity_forces(self) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data

        def one(i):
            return pin.computeGeneralizedGravity(pm, d, self._q[i]).copy()

        return self.vt.transpose_apply(self._loop(one))

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        a_pin = self.vt.apply(nu_dot) + self.vt.apply_derivative(self.nu)
        return self.vt.transpose_apply(self._rnea(a_pin, self._fext(wrenches)))

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        tau_pin = self.vt.transpose_solve(tau)
        fext = self._fext(wrenches)

        def one(i, t):
            if fext is None:
                return pin.aba(pm, d, self._q[i], self._v[i], t).copy()
            return pin.aba(pm, d, self._q[i], self._v[i], t, fext[i]).copy()

        a_pin = self._loop(one, tau_pin)
        return self.vt.solve(a_pin - self.vt.apply_derivative(self.nu))

    def _fext(self, wrenches: Mapping[str, np.ndarray] | None) -> list | None:
        """Per-sample lists of Pinocchio joint forces (joint-local) from frame wrenches."""
        if not wrenches:
            return None
        pin, pm, d = self._pin, self.pm, self.data
        rep = self.representation
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
        nv = pm.nv  # Eigen returns a 6x1 Jacobian as a flat (6,) array: reshape
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
