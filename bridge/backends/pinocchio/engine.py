"""Dynamics engine over Pinocchio's own algorithms, answering in any velocity representation.

Every quantity comes from Pinocchio (crba, rnea, aba, frame Jacobians, frame accelerations,
centre of mass) on ``to_pinocchio(model)`` and is converted through one
:class:`~bridge.conventions.change_of_variables.ChangeOfVariables` ``nu_pin = T nu`` from the
representation to
:data:`~bridge.backends.pinocchio.state.PINOCCHIO` (docs/theory.md, "One change of variables, any two
conventions"):

* ``M = T^T M_pin T``; ``h = T^T ID_pin(q, v, T_dot nu)`` (zero acceleration in the
  representation is *not* zero acceleration for Pinocchio);
* ``tau = T^T ID_pin(q, v, T nu_dot + T_dot nu, f_ext)``;
* ``nu_dot = T^{-1} (ABA_pin(q, v, T^{-T} tau, f_ext) - T_dot nu)``;
* ``C = T^T (C_pin T + M_pin T_dot)`` from ``computeCoriolisMatrix``; the centroidal momentum
  matrix ``Ag T`` from ``computeCentroidalMap`` (rows in G[A]);
* frame accelerations: Pinocchio's spatial acceleration in LOCAL (BODY) and WORLD (INERTIAL)
  is the derivative of the velocity in that representation; for MIXED the derivative of the
  mixed velocity is Pinocchio's *classical* acceleration in LOCAL_WORLD_ALIGNED.

Pinocchio is not batched: batched states loop over samples (:class:`~bridge.backends.batch.FlatBatch`);
all conversions are vectorised over the batch. One unbatched state takes the hot path of
:mod:`.single`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.batch import FlatBatch
from bridge.backends.limits import refuse_too_large
from bridge.conventions.change_of_variables import NEUTRAL, ChangeOfVariables, JointOrder, change_of_variables
from bridge.conventions.frames import frame_acceleration, frame_force
from bridge.conventions.state import Representation, State
from bridge.model.model import Model
from bridge.spatial import cross

from .data import create_data
from .derivatives import PinocchioBodyDerivatives
from .model import to_pinocchio
from .single import SingleStatePath
from .state import PINOCCHIO, pinocchio_layout, to_pinocchio_state

#: Pinocchio's name of each representation's frame (``pinocchio.ReferenceFrame``)
REFERENCE_FRAME = {"body": "LOCAL", "inertial": "WORLD", "mixed": "LOCAL_WORLD_ALIGNED"}

__all__ = ["PinocchioEngine"]


class PinocchioEngine(SingleStatePath, EngineBase):
    """Engine protocol implementation (see :class:`bridge.dynamics.kindyn.Engine`) on Pinocchio."""

    name = "pinocchio"
    #: optional capabilities (:mod:`bridge.backends.protocol`): the single-state hot paths of
    #: :mod:`.single` and Pinocchio's analytical derivatives (:mod:`.derivatives`)
    CAPABILITIES = frozenset({"inverse_dynamics_single", "forward_dynamics_single", "body_derivatives"})
    #: derived quantities Pinocchio computes (``computeCentroidalMap``, ``computeCoriolisMatrix``,
    #: ``getFrameJacobianTimeVariation``); the others are :mod:`bridge.backends.generic`'s
    NATIVE_QUANTITIES = frozenset(
        {"centroidal_momentum_matrix", "coriolis_matrix", "frame_jacobian_derivative"}
    )

    @staticmethod
    def coupled_engine(model: Model) -> type | None:
        """The engine class that runs the coupled model ``model`` natively (Pinocchio's mimic
        joints, :mod:`.coupled`), or None when Pinocchio cannot take its mimic joints (KinDyn then
        projects the full model's dynamics, :class:`bridge.backends.coupled.CoupledEngine`)."""
        from .mimic import mimic_problem

        if mimic_problem(model) is not None:
            return None
        from .coupled import PinocchioMimicEngine

        return PinocchioMimicEngine

    def __init__(self, model: Model, representation: Representation) -> None:
        refuse_too_large(self.name, model)  # ModelTooLargeError beyond the memory budget, at once
        import pinocchio as pin

        self._pin = pin
        self.model = model
        self.representation = Representation.parse(representation)
        self.convention = NEUTRAL[self.representation]
        self.pm = to_pinocchio(model)
        self.data = create_data(self.pm, model)  # ModelTooLargeError past the memory
        self._ref = getattr(pin.ReferenceFrame, REFERENCE_FRAME[self.representation.value])
        self._lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
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
                j: pl.copy()
                for j, pl in enumerate(self.pm.jointPlacements)
                if j > 0 and self.pm.parents[j] == 0
            }
            self._root_frames = {
                f: fr.placement.copy() for f, fr in enumerate(self.pm.frames) if fr.parentJoint == 0
            }
        self.joints = JointOrder.between(model, self.convention, PINOCCHIO)
        if model.single_coordinate:
            self._init_single(pinocchio_layout(model), self.joints)
        else:  # joints of several coordinates: the general path alone
            self._single, self._kern, self._state1 = False, None, None
            self._nv, self._nb = model.nv, self.joints.nb
        self._state: State | None = None
        self._cov: ChangeOfVariables | None = None
        self._flat: FlatBatch | None = None
        self._q = None
        self.batch_shape: tuple[int, ...] = ()
        self.body_derivatives = PinocchioBodyDerivatives(self)

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        if (
            self._kern is not None or self.model.single_coordinate
        ) and (
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
        flat = self._flat = FlatBatch(state, gravity)
        self.batch_shape = flat.batch_shape
        self._q = flat.flatten(q, (q.shape[-1],))
        self._v = flat.flatten(v, (v.shape[-1],))
        self._state = state
        self._cov = None
        if self._single:
            self._use_single_path(False)

    def _batch(self) -> None:
        """After a single state: the general path's per-sample arrays (a batch of one)."""
        if self._q is None:
            st = self.state
            self._flat = FlatBatch(st, self._g1)
            self.batch_shape = ()
            self._q, self._v = self._q1[None], self._v1[None]

    @property
    def cov(self) -> ChangeOfVariables:
        """The change of variables to Pinocchio's convention at the current state (on demand)."""
        if self._cov is None:
            self._cov = change_of_variables(self.model, self.state, self.convention, PINOCCHIO)
        return self._cov

    def _prepare(self, i: int) -> None:
        """Load sample i's gravity (and, for a fixed base, its base pose) into the Pinocchio model."""
        flat = self._flat
        g = flat.gravity[i].tolist()
        if g != self._g_list:
            self.pm.gravity = self._pin.Motion(np.array(g), np.zeros(3))
            self._g_list = g
            self._g_last = None  # set_single_state's shortcut no longer applies
        if not self.model.floating:
            H = flat.H[i]
            key = H.tolist()
            if key != self._world_fixed:
                world_M_base = self._pin.SE3(H[:3, :3].copy(), H[:3, 3].copy())
                for j, placement in self._root_joints.items():
                    self.pm.jointPlacements[j] = world_M_base * placement
                for f, placement in self._root_frames.items():
                    self.pm.frames[f].placement = world_M_base * placement
                self._world_fixed = key

    def _loop(self, fn, *vectors: np.ndarray) -> np.ndarray:
        """``fn(i, *vectors_i)`` for every sample, stacked into the batch shape."""
        self._batch()
        return self._flat.loop(fn, *vectors, select=self._prepare)

    # ------------------------------------------------------------------ joint-space dynamics
    def mass_matrix(self) -> np.ndarray:
        if self._queries is not None:  # a compiled single state: its query, one call
            return self._queries.mass_matrix()
        if self._single:
            return self._mass_matrix_single()
        M = self._loop(lambda i: self._crba(self._q[i]).copy())
        M = np.triu(M) + np.swapaxes(np.triu(M, 1), -1, -2)
        return self.cov.matrix_back(M)

    def _rnea(self, a_pin: np.ndarray, fext: list | None) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data

        def one(i, a):
            if fext is None:
                return pin.rnea(pm, d, self._q[i], self._v[i], a).copy()
            return pin.rnea(pm, d, self._q[i], self._v[i], a, fext[i]).copy()

        return self._loop(one, a_pin)

    def bias_forces(self) -> np.ndarray:
        if self._queries is not None:  # a compiled single state: its query, one call
            return self._queries.bias_forces()
        if self._single:
            return self._bias_forces_single()
        cov = self.cov
        return cov.force_back(self._rnea(cov.bias_acceleration, None))

    def gravity_forces(self) -> np.ndarray:
        if self._queries is not None:  # a compiled single state: its query, one call
            return self._queries.gravity_forces()
        if self._single:
            return self._gravity_forces_single()
        pin, pm, d = self._pin, self.pm, self.data
        g = self._loop(lambda i: pin.computeGeneralizedGravity(pm, d, self._q[i]).copy())
        return self.cov.force_back(g)

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        if self._single and nu_dot.ndim == 1:
            return self._inverse_dynamics_single(nu_dot, self._fext(wrenches))
        cov = self.cov
        return cov.force_back(self._rnea(cov.acceleration(nu_dot), self._fext(wrenches)))

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        if self._single and tau.ndim == 1:
            return self._forward_dynamics_single(tau, self._fext(wrenches))
        pin, pm, d = self._pin, self.pm, self.data
        cov = self.cov
        fext = self._fext(wrenches)

        def one(i, t):
            if fext is None:
                return pin.aba(pm, d, self._q[i], self._v[i], t).copy()
            return pin.aba(pm, d, self._q[i], self._v[i], t, fext[i]).copy()

        return cov.acceleration_back(self._loop(one, cov.force(tau)))

    def _fext(self, wrenches: Mapping[str, np.ndarray] | None) -> list | None:
        """Per-sample lists of Pinocchio joint forces (joint-local) from frame wrenches."""
        if not wrenches:
            return None
        pin, pm, d = self._pin, self.pm, self.data
        rep = self.representation
        self._batch()
        flat_batch = self._flat
        out = []
        flat = {name: flat_batch.flat_view(w, 6) for name, w in wrenches.items()}
        for i in range(flat_batch.n):
            self._prepare(i)
            pin.forwardKinematics(pm, d, self._q[i])
            forces = [np.zeros(6) for _ in range(pm.njoints)]
            for name, w in flat.items():
                fid = self._frame_id[name]
                frame = pm.frames[fid]
                jid = frame.parentJoint
                # the wrench in F (bridge.conventions.frames), then on the joint
                f_F = frame_force((d.oMi[jid] * frame.placement).homogeneous, w[i], rep, "body")
                forces[jid] += frame.placement.act(pin.Force(f_F)).vector
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
        if self._queries is not None:  # a compiled single state: its query, one call
            return self._queries.frame_jacobian(frame)
        if self._single:
            return self._frame_jacobian_single(frame)
        fid = self._frame_id[frame]
        pin, pm, d = self._pin, self.pm, self.data
        nv = self._nv  # Eigen returns a 6x1 Jacobian as a flat (6,) array: reshape
        J = self._loop(
            lambda i: pin.computeFrameJacobian(pm, d, self._q[i], fid, self._ref).reshape(6, nv).copy()
        )
        return self.cov.jacobian_back(J)

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        pin, pm, d = self._pin, self.pm, self.data
        fid, rep, lwa = self._frame_id[frame], self.representation, self._lwa

        def one(i, a):
            # F's classical acceleration: the derivative of its velocity in F[A] (MIXED), mapped to
            # the representation through bridge.conventions.frames
            pin.forwardKinematics(pm, d, self._q[i], self._v[i], a)
            acc = pin.getFrameClassicalAcceleration(pm, d, fid, lwa).vector.copy()
            if rep == "mixed":
                return acc
            v = pin.getFrameVelocity(pm, d, fid, lwa).vector
            H = pin.updateFramePlacement(pm, d, fid).homogeneous
            return frame_acceleration(H, v, acc, "mixed", rep)

        return self._loop(one, self.cov.acceleration(nu_dot))

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        return self.frame_acceleration(frame, np.zeros(self.model.nv))

    def frame_jacobian_derivative(self, frame: str) -> np.ndarray:
        """``d/dt (J_pin T) = J_dot_pin T + J_pin T_dot``: ``getFrameJacobianTimeVariation`` in the
        representation's frame (LOCAL, WORLD or LOCAL_WORLD_ALIGNED) is the time derivative of
        ``getFrameJacobian`` in that frame; ``T_dot`` changes the base columns and those of the
        planar, ball and free joints."""
        pin, pm, d = self._pin, self.pm, self.data
        fid, ref, nv = self._frame_id[frame], self._ref, self._nv
        if nv == 0:  # nothing moves (Pinocchio's getFrameJacobianTimeVariation would crash on nv = 0)
            return np.zeros((*self.batch_shape, 6, 0))

        def one(i):
            pin.computeJointJacobiansTimeVariation(pm, d, self._q[i], self._v[i])
            pin.updateFramePlacements(pm, d)
            out = np.empty((12, nv))
            out[:6] = pin.getFrameJacobianTimeVariation(pm, d, fid, ref).reshape(6, nv)
            out[6:] = pin.getFrameJacobian(pm, d, fid, ref).reshape(6, nv)
            return out

        both = self._loop(one)
        cov = self.cov
        J_dot = cov.jacobian_back(both[..., :6, :])
        if not cov.bias_free:
            J_dot = J_dot + cov.jacobian_derivative_back(both[..., 6:, :])
        return J_dot

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
                H = self._flat.H[i]
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
        flat_com = self.com_position().reshape(-1, 3)

        def one(i):
            hg = pin.computeCentroidalMomentum(pm, d, self._q[i], self._v[i])
            p = hg.linear.copy()
            # from Pinocchio's centre of mass to the robot's: k_c = k_pin + (c_pin - c) x p
            return np.concatenate([p, hg.angular + cross(d.com[0] - flat_com[i], p)])

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
        return self.cov.jacobian_back(J)

    # ------------------------------------------------------------------ derived quantities
    def centroidal_momentum_matrix(self) -> np.ndarray:
        """``computeCentroidalMap`` (about Pinocchio's centre of mass) moved to the robot's centre
        of mass, columns converted: (..., 6, nv), rows in G[A]."""
        pin, pm, d = self._pin, self.pm, self.data
        nv = pm.nv
        flat_com = self.com_position().reshape(-1, 3)

        def one(i):
            Ag = pin.computeCentroidalMap(pm, d, self._q[i]).reshape(6, nv).copy()
            # k_c = k_pin + (c_pin - c) x p, column by column
            Ag[3:] += np.cross(d.com[0] - flat_com[i], Ag[:3].T).T
            return Ag

        return self.cov.jacobian_back(self._loop(one))

    def coriolis_matrix(self) -> np.ndarray:
        """``computeCoriolisMatrix`` in Pinocchio's coordinates, as ``T^T (C_pin T + M_pin T_dot)``."""
        pin, pm, d = self._pin, self.pm, self.data
        nv = pm.nv

        def one(i):
            C = pin.computeCoriolisMatrix(pm, d, self._q[i], self._v[i]).reshape(nv, nv).copy()
            M = self._crba(self._q[i])
            return np.concatenate([C, np.triu(M) + np.triu(M, 1).T], axis=-1)

        CM = self._loop(one)
        return self.cov.coriolis_back(CM[..., :nv], CM[..., nv:])
