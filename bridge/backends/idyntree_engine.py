"""Dynamics engine over iDynTree's ``KinDynComputations``.

iDynTree already works in the neutral semantics (base velocity and every quantity in the chosen
representation, accelerations as derivatives of velocities in that representation, DOF order of
the model, because ``to_idyntree`` serializes the DOFs in ``model.dof_names`` order), so this
engine only moves numbers in and out.

* Forward dynamics is not part of ``KinDynComputations``: it solves ``M nu_dot = tau - ID(0, f)``
  with iDynTree's own mass matrix and inverse dynamics (Cholesky).
* External wrenches on a frame F are moved to F's link L in L's representation frame
  (L, A or L[A]) and passed as ``LinkWrenches``, which KinDynComputations reads in that frame.
* ``generalizedGravityForces`` is preceded by a forward-kinematics refresh (see the comment there:
  iDynTree 15.1 otherwise converts its base wrench with stale link poses).
* A fixed base: iDynTree models are always floating; the base velocity and acceleration are held
  at zero and the joint blocks of every quantity are returned.

iDynTree is not batched: batched states loop over samples here.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.model.model import Model
from bridge.spatial import Force, Transform
from bridge.state import Representation, State

__all__ = ["IDynTreeEngine"]


def _np(obj) -> np.ndarray:
    """Copy an iDynTree vector/matrix to numpy while ``obj`` is guaranteed alive.

    Several iDynTree getters return temporaries whose ``toNumPy()`` views their memory: copying
    inside this call (``obj`` is held by the argument) avoids reading freed memory.
    """
    return np.array(obj.toNumPy(), copy=True)


class IDynTreeEngine:
    """Engine protocol implementation (see :class:`bridge.kindyn.KinDyn`) on iDynTree."""

    name = "idyntree"

    def __init__(self, model: Model, representation: Representation) -> None:
        import idyntree.bindings as idyn

        from bridge.backends.idyntree import kindyn

        self._idyn = idyn
        self.model = model
        self.representation = Representation.parse(representation)
        self.kd = kindyn(model, self.representation.value)
        self.imodel = self.kd.model()
        self._M = idyn.FreeFloatingMassMatrix(self.imodel)
        self._tau = idyn.FreeFloatingGeneralizedTorques(self.imodel)
        self._J = idyn.MatrixDynSize(6, 6 + model.n_dofs)
        self._Jcom = idyn.MatrixDynSize(3, 6 + model.n_dofs)
        self._floating = model.floating
        self._sl = slice(None) if model.floating else slice(6, None)

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        H = state.world_H_base.matrix
        batch = np.broadcast_shapes(
            H.shape[:-2],
            state.s.shape[:-1],
            state.base_velocity.shape[:-1],
            state.s_dot.shape[:-1],
            gravity.shape[:-1],
        )
        n = int(np.prod(batch, dtype=int))
        k = self.model.n_dofs
        self.batch_shape = batch
        self._n = n
        self._H = np.ascontiguousarray(np.broadcast_to(H, (*batch, 4, 4)).reshape(n, 4, 4))
        self._s = np.ascontiguousarray(np.broadcast_to(state.s, (*batch, k)).reshape(n, k))
        self._v = np.ascontiguousarray(np.broadcast_to(state.base_velocity, (*batch, 6)).reshape(n, 6))
        self._sd = np.ascontiguousarray(np.broadcast_to(state.s_dot, (*batch, k)).reshape(n, k))
        self._g = np.ascontiguousarray(np.broadcast_to(gravity, (*batch, 3)).reshape(n, 3))
        self._current = -1

    def _select(self, i: int) -> None:
        if self._current == i:
            return
        from bridge.errors import BackendError

        v = self._v[i] if self._floating else np.zeros(6)
        if not self.kd.setRobotState(self._H[i], self._s[i], v, self._sd[i], self._g[i]):
            raise BackendError("iDynTree rejected the robot state (setRobotState returned false)")
        self._current = i

    def _loop(self, fn, *vectors: np.ndarray) -> np.ndarray:
        flat = [np.broadcast_to(a, (*self.batch_shape, a.shape[-1])).reshape(self._n, -1) for a in vectors]
        out = []
        for i in range(self._n):
            self._select(i)
            out.append(fn(i, *(a[i] for a in flat)))
        arr = np.asarray(out)
        return arr.reshape(*self.batch_shape, *arr.shape[1:])

    # ------------------------------------------------------------------ joint space
    def _full_mass_matrix(self, _i: int) -> np.ndarray:
        self.kd.getFreeFloatingMassMatrix(self._M)
        return self._M.toNumPy().copy()

    def mass_matrix(self) -> np.ndarray:
        sl = self._sl
        return self._loop(lambda i: self._full_mass_matrix(i)[sl, sl])

    def _generalized(self) -> np.ndarray:
        return np.concatenate([_np(self._tau.baseWrench()), _np(self._tau.jointTorques())])

    def bias_forces(self) -> np.ndarray:
        def one(_i):
            self.kd.generalizedBiasForces(self._tau)
            return self._generalized()[self._sl]

        return self._loop(one)

    def gravity_forces(self) -> np.ndarray:
        def one(_i):
            # iDynTree (checked on 15.1) converts the base wrench of generalizedGravityForces with the
            # link poses of the *last* forward-kinematics pass without refreshing them: in INERTIAL
            # and MIXED it returns a stale base wrench unless kinematics are up to date. Any call
            # that refreshes them (getWorldTransform) first makes the result exact.
            self.kd.getWorldTransform(self.model.base)
            self.kd.generalizedGravityForces(self._tau)
            return self._generalized()[self._sl]

        return self._loop(one)

    def _link_wrenches(self, i: int, wrenches: Mapping[str, np.ndarray] | None):
        idyn = self._idyn
        ext = idyn.LinkWrenches(self.imodel)
        ext.zero()
        if not wrenches:
            return ext
        rep = self.representation
        for name, w in wrenches.items():
            link, link_H_frame = self.model.frame_placement(name)
            f = Force(np.broadcast_to(w, (*self.batch_shape, 6)).reshape(self._n, 6)[i])
            if rep is Representation.BODY:
                f = link_H_frame @ f
            elif rep is Representation.MIXED:
                o_F = self._world_H(name)[:3, 3]
                o_L = self._world_H(link)[:3, 3]
                f = Transform.from_translation(o_F - o_L) @ f
            idx = self.imodel.getLinkIndex(link)
            target = ext(idx)
            current = target.toNumPy()
            new = current + f.vector
            for k in range(6):
                target.setVal(k, float(new[k]))
        return ext

    def _inverse_dynamics_one(self, i: int, nu_dot: np.ndarray, wrenches) -> np.ndarray:
        if self._floating:
            base_acc, sdd = nu_dot[:6], nu_dot[6:]
        else:
            base_acc, sdd = np.zeros(6), nu_dot
        ext = self._link_wrenches(i, wrenches)
        from bridge.errors import BackendError

        if not self.kd.inverseDynamics(
            np.ascontiguousarray(base_acc), np.ascontiguousarray(sdd), ext, self._tau
        ):
            raise BackendError("iDynTree inverseDynamics failed")
        return self._generalized()[self._sl]

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        return self._loop(lambda i, a: self._inverse_dynamics_one(i, a, wrenches), nu_dot)

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        sl = self._sl
        nv = self.model.nv

        def one(i, t):
            M = self._full_mass_matrix(i)[sl, sl]
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
        from bridge.errors import BackendError

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
        body = self.representation is Representation.BODY

        def one(i):
            h = _np(self.kd.getCentroidalTotalMomentum().asVector())
            if body:
                R = self._H[i, :3, :3]
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
