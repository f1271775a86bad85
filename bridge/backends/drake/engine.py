"""Dynamics engine over Drake's ``MultibodyPlant``, answering in any velocity representation.

Every quantity comes from Drake on ``to_drake(model)`` and is converted through one
:class:`~bridge.conventions.change_of_variables.ChangeOfVariables` ``v = T nu`` from the representation to
:data:`~bridge.backends.drake.state.DRAKE` (MIXED angular first, Drake's joint order; docs/theory.md,
"One change of variables"). Drake leaves gravity out of its bias term and inverse dynamics: with
``g_D = CalcGravityGeneralizedForces`` (on the right-hand side of Drake's equations of motion),

* ``M = T^T M_D T`` (``CalcMassMatrix``); ``g = -T^T g_D``;
* ``h = T^T (CalcBiasTerm - g_D)`` when ``T_dot nu = 0`` (MIXED), else
  ``T^T (ID_D(T_dot nu) - g_D)``;
* ``tau = T^T (ID_D(T nu_dot + T_dot nu, F_ext) - g_D)`` with ``ID_D = CalcInverseDynamics`` and the
  external wrenches as spatial forces on their bodies (``RigidBody.AddInForce`` into a
  ``MultibodyForces``);
* ``nu_dot = T^-1 (M_D^-1 (T^-T tau - ID_D(0, F_ext) + g_D) - T_dot nu)`` (Cholesky of Drake's M);
* frames: ``CalcRelativeTransform``, ``Frame.CalcSpatialVelocityInWorld``,
  ``CalcJacobianSpatialVelocity`` and ``CalcBiasSpatialAcceleration`` for the point of F at F's
  origin (BODY: expressed in F; MIXED: in A) or at the world origin (INERTIAL, expressed in A).
  Drake's accelerations are classical (the second derivative of the point's position); the
  derivative of a BODY or INERTIAL velocity ``(v, w)`` is that minus ``(w x v, 0)``, of a MIXED one
  the classical acceleration itself;
* centre of mass: ``CalcCenterOfMassPositionInWorld``, ``...TranslationalVelocityInWorld``,
  ``CalcJacobianCenterOfMassTranslationalVelocity``; momenta: ``CalcSpatialMomentumInWorldAboutPoint``.

Ball, free and planar joints are Drake's ``BallRpyJoint``, ``QuaternionFloatingJoint`` and ``PlanarJoint``
(:mod:`.state`): T has a block per such joint (a rotation with a non-zero ``T_dot`` for a ball's BODY
velocity, :mod:`bridge.conventions.joint_blocks`), q their roll-pitch-yaw / quaternion / planar
coordinates (:func:`bridge.conventions.native_wide.native_positions`), and every query takes the
general path (the single-state path declines such models).

A fixed base is welded to the ``world_H_base`` frame on Drake's world body, a FixedOffsetFrame whose
pose is a Context parameter: each sample sets it to that sample's ``world_H_base`` (no new plant per
pose), so frames, the centre of mass and gravity see the base where the state puts it. Gravity is the
plant's uniform field, set per sample when it changes. Drake is not batched: batched states loop
over samples (:class:`~bridge.backends.batch.FlatBatch`); the conversions are vectorised. One
unbatched state set from arrays takes the hot path of :mod:`.single` (the change of variables compiled
from the declarations, one ``SetPositionsAndVelocities``, gravity's forces once per state).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.batch import FlatBatch
from bridge.backends.limits import refuse_too_large
from bridge.conventions.change_of_variables import NEUTRAL, ChangeOfVariables, JointOrder, change_of_variables
from bridge.conventions.frames import frame_acceleration, frame_force, frame_jacobian, frame_motion
from bridge.conventions.native_wide import native_positions
from bridge.conventions.single_state import single_base_change
from bridge.conventions.state import Representation, State, velocity_declaration
from bridge.model.model import Model

from .model import WORLD_H_BASE, instance_name, require_drake, to_drake
from .single import DrakeSingleState
from .state import DRAKE, drake_layout

__all__ = ["DrakeEngine"]

#: the frame representation Drake's frame quantities are asked in (F[A])
_MIXED = "mixed"
_ORIGIN = np.zeros(3)
_SWAP = np.array([3, 4, 5, 0, 1, 2])


def _quaternion_wxyz(H: np.ndarray) -> tuple[float, float, float, float]:
    """The unit quaternion (w, x, y, z) of the rotation of one pose H (4, 4), in Python floats
    (Shepperd's method: the largest of the four squared components first)."""
    (a, b, c, _), (d, e, f, _), (g, h, i, _), _ = H.tolist()
    t = a + e + i
    if t >= a and t >= e and t >= i:
        r = math.sqrt(1.0 + t)
        k = 0.5 / r
        w, x, y, z = 0.5 * r, (h - f) * k, (c - g) * k, (d - b) * k
    elif a >= e and a >= i:
        r = math.sqrt(1.0 + a - e - i)
        k = 0.5 / r
        w, x, y, z = (h - f) * k, 0.5 * r, (b + d) * k, (c + g) * k
    elif e >= i:
        r = math.sqrt(1.0 - a + e - i)
        k = 0.5 / r
        w, x, y, z = (c - g) * k, (b + d) * k, 0.5 * r, (f + h) * k
    else:
        r = math.sqrt(1.0 - a - e + i)
        k = 0.5 / r
        w, x, y, z = (d - b) * k, (c + g) * k, (f + h) * k, 0.5 * r
    n = math.sqrt(w * w + x * x + y * y + z * z)
    return w / n, x / n, y / n, z / n


def _declines(*_args: object) -> bool:
    """The single-state hot path declining a state (a model with joints of several coordinates)."""
    return False


class DrakeEngine(DrakeSingleState, EngineBase):
    """Engine protocol implementation (see :class:`bridge.dynamics.kindyn.Engine`) on Drake.

    Attributes: ``plant`` (the engine's own finalized MultibodyPlant: its gravity field is changed
    per sample) and ``context``.
    """

    name = "drake"
    #: optional capabilities (:mod:`bridge.backends.protocol`): the single-state hot paths of
    #: :mod:`.single`
    CAPABILITIES = frozenset({"inverse_dynamics_single", "forward_dynamics_single"})
    #: derived quantities Drake computes (the others are :mod:`bridge.backends.generic`'s)
    NATIVE_QUANTITIES = frozenset({"total_momentum"})

    def __init__(self, model: Model, representation: Representation) -> None:
        require_drake()
        refuse_too_large(self.name, model)  # the set-up time budget, before building the plant
        from pydrake.math import RigidTransform
        from pydrake.multibody.tree import JacobianWrtVariable, MultibodyForces

        self._RigidTransform = RigidTransform
        self._kV = JacobianWrtVariable.kV
        self.model = model
        self.representation = Representation.parse(representation)
        self.convention = NEUTRAL[self.representation]
        self.plant = plant = to_drake(model)
        self.context = plant.CreateDefaultContext()
        self.layout = drake_layout(model, plant)
        self._world = plant.world_frame()
        instance = plant.GetModelInstanceByName(instance_name(model))
        self._frames = {name: plant.GetFrameByName(name, instance) for name in model.frame_names}
        self._forces = MultibodyForces(plant)
        world = plant.world_body().model_instance()
        self._weld = None if model.floating else plant.GetFrameByName(WORLD_H_BASE, world)
        # MIXED and fixed bases: the change of variables is constant (a permutation), made once
        # (joints of several coordinates: made per state, block by block)
        self._joints = joints = JointOrder.between(model, self.convention, DRAKE)
        self._constant_cov = None
        self._wide = not model.single_coordinate
        self._change = change = single_base_change(velocity_declaration(self.representation), DRAKE.velocity)
        if (change.constant or not model.floating) and not self._wide:
            eye = np.eye(4)
            self._constant_cov = ChangeOfVariables(*change.matrices(eye, eye.tolist()), joints)
        self._gravity: list[float] | None = None
        self._pose: list | None = None
        self._current = -1
        self._state: State | None = None
        self._cov: ChangeOfVariables | None = None
        self._flat_batch: FlatBatch | None = None
        self.batch_shape: tuple[int, ...] = ()
        if self._wide:  # the single-state path takes one-coordinate joints: the general path alone
            self.set_single_state = _declines
        else:
            self._init_single()

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        model, lay = self.model, self.layout
        flat = self._flat_batch = FlatBatch(state, gravity)
        self.batch_shape = flat.batch_shape
        self._state = state
        if self._single:
            self._use_single_path(False)
        nu = np.concatenate([flat.base_velocity, flat.s_dot], axis=-1) if model.floating else flat.s_dot
        if self._constant_cov is not None and state.representation is self.representation:
            cov = self._cov = self._constant_cov
        else:
            flat_state = flat.state(self.representation)
            cov = self._cov = change_of_variables(model, flat_state, self.convention, DRAKE)
            nu = cov.nu
        self._v = np.ascontiguousarray(cov.velocity(nu))
        if self._wide:  # every joint's positions as Drake stores them (roll-pitch-yaw for a ball)
            self._q = native_positions(model, flat.state(self.representation), DRAKE)
            self._current = -1
            return
        q = np.zeros((flat.n, lay.nq))
        q[:, lay.idx_q] = flat.s
        if model.floating:  # the quaternion is filled in per sample (_select)
            q[:, 4:7] = flat.H[:, :3, 3]
        self._q = q
        self._current = -1

    @property
    def _flat(self) -> FlatBatch:
        """The current state's samples (a batch of one, made from the copies, after
        :meth:`set_single_state`: the Context holds that state already)."""
        flat = self._flat_batch
        if flat is None:
            flat = self._flat_batch = FlatBatch(self.state, self._g1)
            self._q, self._v = self._q1[None], self._v1[None]
        return flat

    @property
    def cov(self) -> ChangeOfVariables:
        """The change of variables to Drake's convention at the current state (on demand after
        :meth:`set_single_state`)."""
        if self._cov is None:
            self._cov = change_of_variables(self.model, self.state, self.convention, DRAKE)
        return self._cov

    def _select(self, i: int) -> None:
        """Load sample i (gravity, a fixed base's pose, q and v) into the plant and context."""
        if i == self._current:
            return
        plant, c, flat = self.plant, self.context, self._flat
        g = flat.gravity[i].tolist()
        if g != self._gravity:
            plant.mutable_gravity_field().set_gravity_vector(flat.gravity[i])
            self._gravity = g
        if self._weld is not None:
            pose = flat.H[i].tolist()
            if pose != self._pose:
                self._weld.SetPoseInParentFrame(c, self._RigidTransform(flat.H[i]))
                self._pose = pose
        q = self._q[i]
        if self.model.floating and not self._wide:
            q[:4] = _quaternion_wxyz(flat.H[i])
        plant.SetPositions(c, q)
        plant.SetVelocities(c, self._v[i])
        self._current = i

    def _loop(self, fn, *vectors: np.ndarray) -> np.ndarray:
        """``fn(i, *vectors_i)`` for every sample with sample i selected: a flat (n, ...) array;
        ``vectors`` are flat (n, k) (or (k,) for every sample)."""
        flat = self._flat
        rows = [np.broadcast_to(v, (flat.n, v.shape[-1])) for v in vectors]
        out = []
        for i in range(flat.n):
            self._select(i)
            out.append(fn(i, *(r[i] for r in rows)))
        return np.asarray(out)

    def _batched(self, flat_result: np.ndarray) -> np.ndarray:
        return self._flat.unflatten(flat_result)

    # ------------------------------------------------------------------ joint space
    def mass_matrix(self) -> np.ndarray:
        if self._single:
            return self._mass_matrix_single()
        M = self._loop(lambda _i: self.plant.CalcMassMatrix(self.context))
        return self._batched(self.cov.matrix_back(M))

    def _gravity_d(self) -> np.ndarray:
        return self.plant.CalcGravityGeneralizedForces(self.context)

    def gravity_forces(self) -> np.ndarray:
        g = self._loop(lambda _i: -self._gravity_d())
        return self._batched(self.cov.force_back(g))

    def _id(self, i: int, vdot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        """Drake's generalized forces for acceleration ``vdot`` (Drake's convention), gravity and
        the external wrenches of sample i included."""
        forces = self._external(i, wrenches)
        return self.plant.CalcInverseDynamics(self.context, vdot, forces) - self._gravity_d()

    def bias_forces(self) -> np.ndarray:
        if self._single:
            return self._bias_forces_single()
        cov = self.cov
        if cov.bias_free:
            h = self._loop(lambda _i: self.plant.CalcBiasTerm(self.context) - self._gravity_d())
        else:
            h = self._loop(lambda i, a: self._id(i, a, None), cov.bias_acceleration)
        return self._batched(cov.force_back(h))

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        cov = self.cov
        vdot = cov.acceleration(self._flat.flat_view(nu_dot, nu_dot.shape[-1]))
        tau = self._loop(lambda i, a: self._id(i, a, wrenches), vdot)
        return self._batched(cov.force_back(tau))

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        cov = self.cov
        zero = np.zeros(self.layout.nv)

        def one(i, t):
            M = self.plant.CalcMassMatrix(self.context)
            rhs = t - self._id(i, zero, wrenches)
            L = np.linalg.cholesky(M)
            return np.linalg.solve(L.T, np.linalg.solve(L, rhs))

        vdot = self._loop(one, cov.force(self._flat.flat_view(tau, tau.shape[-1])))
        return self._batched(cov.acceleration_back(vdot))

    def _external(self, i: int, wrenches: Mapping[str, np.ndarray] | None):
        """A MultibodyForces with sample i's external wrenches ``{frame: (f, tau) in the
        representation's frame for F}`` as spatial forces on the frames' bodies."""
        from pydrake.multibody.math import SpatialForce

        forces = self._forces
        forces.SetZero()
        if not wrenches:
            return forces
        c, rep = self.context, self.representation
        for name, w in wrenches.items():
            frame = self._frames[name]
            body = frame.body()
            H = self._world_H(frame)
            wi = frame_force(H, self._flat.flat_view(w, 6)[i], rep, _MIXED)  # at F's origin, world axes
            F = SpatialForce(wi[3:], wi[:3])  # Drake: torque first
            p = H[:3, 3] - body.EvalPoseInWorld(c).translation()
            body.AddInForce(c, p, F, self._world, forces)
        return forces

    # ------------------------------------------------------------------ frames
    def _world_H(self, frame) -> np.ndarray:
        return self.plant.CalcRelativeTransform(self.context, self._world, frame).GetAsMatrix4()

    def frame_transform(self, frame: str) -> np.ndarray:
        f = self._frames[frame]
        return self._batched(self._loop(lambda _i: self._world_H(f)))

    def _mixed_velocity(self, f) -> np.ndarray:
        """F's velocity in F[A] (6,), linear first."""
        V = f.CalcSpatialVelocityInWorld(self.context)
        return np.concatenate([V.translational(), V.rotational()])

    def _with_poses(self, f, one, *vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(world_H_frame (n, 4, 4), one(i, *vectors_i) (n, ...))`` over the flat samples (see
        :meth:`_loop`): Drake's values with the frame's pose, so that their conversion to the
        representation is one batched call (:mod:`bridge.conventions.frames`) after the loop, not
        one per sample."""
        poses = []

        def each(i: int, *args: np.ndarray) -> np.ndarray:
            poses.append(self._world_H(f))
            return one(i, *args)

        values = self._loop(each, *vectors)
        return np.asarray(poses), values

    def frame_velocity(self, frame: str) -> np.ndarray:
        f = self._frames[frame]
        H, v = self._with_poses(f, lambda _i: self._mixed_velocity(f))
        return self._batched(frame_motion(H, v, _MIXED, self.representation))

    def _jacobian_d(self, f) -> np.ndarray:
        """Drake's Jacobian (6, nv) of F's velocity in F[A], linear rows first."""
        W = self._world
        J = self.plant.CalcJacobianSpatialVelocity(self.context, self._kV, f, _ORIGIN, W, W)
        return J[_SWAP]

    def frame_jacobian(self, frame: str) -> np.ndarray:
        if self._single:
            return self._frame_jacobian_single(frame)
        f = self._frames[frame]
        H, J = self._with_poses(f, lambda _i: self._jacobian_d(f))
        J = frame_jacobian(H, J, _MIXED, self.representation)
        return self._batched(self.cov.jacobian_back(J))

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        f = self._frames[frame]
        rep = self.representation
        vdot = self.cov.acceleration(self._flat.flat_view(nu_dot, nu_dot.shape[-1]))
        plant, c, W = self.plant, self.context, self._world

        def one(i, a):
            bias = plant.CalcBiasSpatialAcceleration(c, self._kV, f, _ORIGIN, W, W).get_coeffs()[_SWAP]
            acc = self._jacobian_d(f) @ a + bias  # F's classical acceleration in F[A], linear first
            if rep == _MIXED:
                return acc
            return np.concatenate([acc, self._mixed_velocity(f)])

        if rep == _MIXED:
            return self._batched(self._loop(one, vdot))
        H, out = self._with_poses(f, one, vdot)
        return self._batched(frame_acceleration(H, out[:, 6:], out[:, :6], _MIXED, rep))

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        return self.frame_acceleration(frame, np.zeros(self.model.nv))

    # ------------------------------------------------------------------ centre of mass
    def com_position(self) -> np.ndarray:
        return self._batched(self._loop(lambda _i: self.plant.CalcCenterOfMassPositionInWorld(self.context)))

    def com_velocity(self) -> np.ndarray:
        return self._batched(
            self._loop(lambda _i: self.plant.CalcCenterOfMassTranslationalVelocityInWorld(self.context))
        )

    def com_jacobian(self) -> np.ndarray:
        plant, W = self.plant, self._world
        J = self._loop(
            lambda _i: plant.CalcJacobianCenterOfMassTranslationalVelocity(self.context, self._kV, W, W)
        )
        return self._batched(self.cov.jacobian_back(J))

    def _momentum(self, point: np.ndarray) -> np.ndarray:
        """Drake's spatial momentum about ``point`` (world coordinates), linear first, world axes."""
        h = self.plant.CalcSpatialMomentumInWorldAboutPoint(self.context, point)
        return np.concatenate([h.translational(), h.rotational()])

    def centroidal_momentum(self) -> np.ndarray:
        plant = self.plant
        return self._batched(
            self._loop(lambda _i: self._momentum(plant.CalcCenterOfMassPositionInWorld(self.context)))
        )

    def total_momentum(self) -> np.ndarray:
        """About the base origin in B[A] (MIXED) or B (BODY, rotated), about the world origin in A
        (INERTIAL)."""
        rep, flat = self.representation, self._flat

        def one(i):
            H = flat.H[i]
            return frame_force(H, self._momentum(H[:3, 3]), _MIXED, rep)

        return self._batched(self._loop(one))
