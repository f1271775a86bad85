"""Dynamics engine over iDynTree's ``KinDynComputations``.

iDynTree already works in the neutral semantics (see :mod:`.kindyn`), so this engine only moves
numbers in and out: its change of variables is the identity.

* Forward dynamics is not part of ``KinDynComputations``: it solves ``M nu_dot = tau - ID(0, f)``
  with iDynTree's own mass matrix and inverse dynamics (Cholesky).
* External wrenches on a frame F are moved to F's link L in L's representation frame
  (L, A or L[A]) and passed as ``LinkWrenches``, which KinDynComputations reads in that frame.
* Gravity forces refresh the kinematics first (:func:`.kindyn.gravity_forces`).
* Native ``getCentroidalTotalMomentumJacobian`` (rows rotated to G[A] in BODY),
  ``getLinearAngularMomentumJacobian``, ``getRelativeTransform`` and ``getRelativeJacobian``. The
  Coriolis matrix is the generic one (:mod:`bridge.backends.generic`): iDynTree's
  ``getCoriolisAndMassMatrices`` (15.1) agrees with it for a fixed base only (for a floating base
  its mass-matrix derivative is not the time derivative of M along the motion), and crashes the
  process on some models (ur5_robot).
* Joint armature (iDynTree models have none): bridge adds ``diag(armature)`` to the joint block
  of M and ``armature * s_ddot`` to the joint torques of inverse dynamics; forward dynamics solves
  with that M, so all three agree with engines that carry armature natively (bias and gravity
  forces, momentum and the Coriolis matrix do not change).
* A fixed base: iDynTree models are always floating; the base velocity and acceleration are held
  at zero and the joint blocks of every quantity are returned.

iDynTree is not batched: batched states loop over samples (:class:`~bridge.backends.batch.FlatBatch`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.batch import FlatBatch
from bridge.conventions.declaration import Axes
from bridge.conventions.frames import frame_force
from bridge.conventions.state import Representation, State, velocity_declaration
from bridge.errors import BackendError
from bridge.model.model import Model

from .kindyn import bias_forces, generalized_forces, gravity_forces, kindyn, mass_matrix, set_robot_state
from .kindyn import to_numpy as _np

__all__ = ["IDynTreeEngine"]


class IDynTreeEngine(EngineBase):
    """Engine protocol implementation (see :class:`bridge.dynamics.kindyn.Engine`) on iDynTree."""

    name = "idyntree"
    #: derived quantities iDynTree computes (the others are :mod:`bridge.backends.generic`'s)
    NATIVE_QUANTITIES = frozenset(
        {
            "centroidal_momentum_matrix",
            "total_momentum",
            "total_momentum_jacobian",
            "relative_transform",
            "relative_jacobian",
        }
    )

    def __init__(self, model: Model, representation: Representation) -> None:
        super().__init__(model, representation)
        import idyntree.bindings as idyn

        self._idyn = idyn
        # iDynTree's centroidal rows are in G[B] where the representation's axes are the base's
        self._base_axes = velocity_declaration(self.representation).angular_axes is Axes.BODY
        self.kd = kindyn(model, self.representation.value)
        self.imodel = self.kd.model()
        self._M = idyn.FreeFloatingMassMatrix(self.imodel)
        self._tau = idyn.FreeFloatingGeneralizedTorques(self.imodel)
        self._J = idyn.MatrixDynSize(6, 6 + model.n_dofs)
        self._Jcom = idyn.MatrixDynSize(3, 6 + model.n_dofs)
        self._Jrel = idyn.MatrixDynSize(6, model.n_dofs)
        self._floating = model.floating
        self._sl = slice(None) if model.floating else slice(6, None)
        self._armature = model.armature if model.has_armature else None
        self._nb = 6 if model.floating else 0

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        self._state = state
        self._flat = FlatBatch(state, gravity)
        self.batch_shape = self._flat.batch_shape
        self._current = -1

    def _select(self, i: int) -> None:
        if self._current == i:
            return
        flat = self._flat
        v = flat.base_velocity[i] if self._floating else np.zeros(6)
        set_robot_state(self.kd, flat.H[i], flat.s[i], v, flat.s_dot[i], flat.gravity[i])  # (thread-safe)
        self._current = i

    def _loop(self, fn, *vectors: np.ndarray) -> np.ndarray:
        return self._flat.loop(fn, *vectors, select=self._select)

    # ------------------------------------------------------------------ joint space
    def _mass_matrix_one(self) -> np.ndarray:
        M = mass_matrix(self.kd, self._M)[self._sl, self._sl]
        if self._armature is not None:
            nb = self._nb
            M[nb:, nb:][np.diag_indices(len(self._armature))] += self._armature
        return M

    def mass_matrix(self) -> np.ndarray:
        return self._loop(lambda _i: self._mass_matrix_one())

    def bias_forces(self) -> np.ndarray:
        return self._loop(lambda _i: bias_forces(self.kd, self._tau)[self._sl])

    def gravity_forces(self) -> np.ndarray:
        return self._loop(lambda _i: gravity_forces(self.kd, self._tau)[self._sl])

    def _link_wrenches(self, i: int, wrenches: Mapping[str, np.ndarray] | None):
        idyn = self._idyn
        ext = idyn.LinkWrenches(self.imodel)
        ext.zero()
        if not wrenches:
            return ext
        rep = self.representation
        for name, w in wrenches.items():
            link, _ = self.model.frame_placement(name)
            # F's wrench in the representation's frame for F, to the world A, to the one for L
            f = frame_force(self._world_H(name), self._flat.flat_view(w, 6)[i], rep, "inertial")
            f = frame_force(self._world_H(link), f, "inertial", rep)
            idx = self.imodel.getLinkIndex(link)
            target = ext(idx)
            current = target.toNumPy()
            new = current + f
            for k in range(6):
                target.setVal(k, float(new[k]))
        return ext

    def _inverse_dynamics_one(self, i: int, nu_dot: np.ndarray, wrenches) -> np.ndarray:
        if self._floating:
            base_acc, sdd = nu_dot[:6], nu_dot[6:]
        else:
            base_acc, sdd = np.zeros(6), nu_dot
        ext = self._link_wrenches(i, wrenches)
        if not self.kd.inverseDynamics(
            np.ascontiguousarray(base_acc), np.ascontiguousarray(sdd), ext, self._tau
        ):
            raise BackendError("iDynTree inverseDynamics failed")
        tau = generalized_forces(self._tau)[self._sl]
        if self._armature is not None:
            tau[self._nb :] += self._armature * sdd
        return tau

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        return self._loop(lambda i, a: self._inverse_dynamics_one(i, a, wrenches), nu_dot)

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        nv = self.model.nv

        def one(i, t):
            M = self._mass_matrix_one()
            rhs = t - self._inverse_dynamics_one(i, np.zeros(nv), wrenches)
            L = np.linalg.cholesky(M)
            return np.linalg.solve(L.T, np.linalg.solve(L, rhs))

        return self._loop(one, tau)

    # ------------------------------------------------------------------ frames
    def _world_H(self, frame: str) -> np.ndarray:
        # keep the iDynTree Transform alive while reading it (its accessors return references)
        transform = self.kd.getWorldTransform(frame)
        return _np(transform.asHomogeneousTransform())

    def frame_transform(self, frame: str) -> np.ndarray:
        return self._loop(lambda _i: self._world_H(frame))

    def frame_velocity(self, frame: str) -> np.ndarray:
        return self._loop(lambda _i: _np(self.kd.getFrameVel(frame)))

    def frame_jacobian(self, frame: str) -> np.ndarray:
        def one(_i):
            if not self.kd.getFrameFreeFloatingJacobian(frame, self._J):
                raise BackendError(f"iDynTree getFrameFreeFloatingJacobian failed for frame {frame!r}")
            return self._J.toNumPy()[:, self._sl].copy()

        return self._loop(one)

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        return self._loop(lambda _i: _np(self.kd.getFrameBiasAcc(frame)))

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        def one(_i, a):
            base_acc, sdd = (a[:6], a[6:]) if self._floating else (np.zeros(6), a)
            acc = self.kd.getFrameAcc(frame, np.ascontiguousarray(base_acc), np.ascontiguousarray(sdd))
            return _np(acc)

        return self._loop(one, nu_dot)

    # ------------------------------------------------------------------ centre of mass
    def com_position(self) -> np.ndarray:
        return self._loop(lambda _i: _np(self.kd.getCenterOfMassPosition()))

    def com_velocity(self) -> np.ndarray:
        return self._loop(lambda _i: _np(self.kd.getCenterOfMassVelocity()))

    def centroidal_momentum(self) -> np.ndarray:
        """In G[A] (iDynTree gives G[B] in its BODY_FIXED representation: rotated here)."""
        body = self._base_axes

        def one(i):
            h = _np(self.kd.getCentroidalTotalMomentum().asVector())
            if body:
                R = self._flat.H[i, :3, :3]
                h = np.concatenate([R @ h[:3], R @ h[3:]])
            return h

        return self._loop(one)

    def total_momentum(self) -> np.ndarray:
        """``getLinearAngularMomentum``: in B, A or B[A] (the representation)."""
        return self._loop(lambda _i: _np(self.kd.getLinearAngularMomentum().asVector()))

    def com_jacobian(self) -> np.ndarray:
        def one(_i):
            self.kd.getCenterOfMassJacobian(self._Jcom)
            return self._Jcom.toNumPy()[:, self._sl].copy()

        return self._loop(one)

    # ------------------------------------------------------------------ derived quantities
    def centroidal_momentum_matrix(self) -> np.ndarray:
        """``getCentroidalTotalMomentumJacobian``, rows in G[A] (iDynTree's BODY rows are G[B])."""
        body = self._base_axes

        def one(i):
            if not self.kd.getCentroidalTotalMomentumJacobian(self._J):
                raise BackendError("iDynTree getCentroidalTotalMomentumJacobian failed")
            A = self._J.toNumPy()[:, self._sl].copy()
            if body:
                R = self._flat.H[i, :3, :3]
                A = np.concatenate([R @ A[:3], R @ A[3:]])
            return A

        return self._loop(one)

    def total_momentum_jacobian(self) -> np.ndarray:
        """``getLinearAngularMomentumJacobian``: rows in B, A or B[A] (the representation)."""

        def one(_i):
            if not self.kd.getLinearAngularMomentumJacobian(self._J):
                raise BackendError("iDynTree getLinearAngularMomentumJacobian failed")
            return self._J.toNumPy()[:, self._sl].copy()

        return self._loop(one)

    def relative_transform(self, frame: str, reference: str) -> np.ndarray:
        """``getRelativeTransform(reference, frame)``."""

        def one(_i):
            transform = self.kd.getRelativeTransform(reference, frame)  # alive while read
            return _np(transform.asHomogeneousTransform())

        return self._loop(one)

    def relative_jacobian(self, frame: str, reference: str) -> np.ndarray:
        """``getRelativeJacobian(reference, frame)`` (frame indices of the iDynTree model)."""
        ref, idx = self.imodel.getFrameIndex(reference), self.imodel.getFrameIndex(frame)

        def one(_i):
            if not self.kd.getRelativeJacobian(ref, idx, self._Jrel):
                raise BackendError(f"iDynTree getRelativeJacobian failed for {frame!r} w.r.t. {reference!r}")
            return self._Jrel.toNumPy().copy()

        return self._loop(one)
