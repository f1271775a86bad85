"""Dynamics engine over MuJoCo's own functions, answering in any velocity representation.

The neutral model becomes :func:`~bridge.backends.mujoco.model.to_mujoco` (rigid-body dynamics
with the joints' armature only: no contacts, constraints, springs, dampers or actuators) and a
neutral state becomes MuJoCo's ``(qpos, qvel)``; every quantity comes from MuJoCo and is converted through ONE
:class:`~bridge.conventions.change_of_variables.ChangeOfVariables` ``qvel = T nu`` from the representation to
:data:`~bridge.backends.mujoco.state.MUJOCO` (docs/theory.md, "One change of variables"):

* ``M = T^T M_mj T`` with ``M_mj`` from ``mj_fullM``;
* ``h = T^T (qfrc_bias + M_mj T_dot nu)`` (``qfrc_bias = C qvel + g`` is MuJoCo's inverse dynamics
  at zero ``qacc``, which is not zero acceleration in the representation), ``g = T^T qfrc_bias``
  at zero velocity;
* ``tau = T^T mj_inverse(qpos, qvel, T nu_dot + T_dot nu)``;
* ``nu_dot = T^-1 (mj_forward(qpos, qvel, qfrc_applied = T^-T tau) - T_dot nu)``;
* frames: poses from ``xpos/xmat`` (links that name a body) and ``site_xpos/site_xmat`` (other
  links and extra frames), velocities from ``mj_objectVelocity``, Jacobians from ``mj_jac`` at the
  frame origin, accelerations from ``mj_rnePostConstraint`` + ``mj_objectAcceleration`` (MuJoCo's
  classical acceleration, which carries ``-gravity``: it is added back), each moved from MuJoCo's
  ``F[A]`` (angular first) to the representation's frame (F, A or F[A], linear first);
* centre of mass from ``subtree_com``, ``mj_subtreeVel`` and ``mj_jacSubtreeCom`` of the world body.

External wrenches enter through the frame Jacobians in the representation:
``ID(a, f) = ID(a) - J_F^T f`` and ``FD(tau, f) = FD(tau + J_F^T f)``.
A fixed base is the base body welded to the world, moved to each sample's ``world_H_base``.
MuJoCo is not batched here: batched states loop over samples (:class:`~bridge.backends.batch.FlatBatch`).
One unbatched state set from arrays takes the hot path of :mod:`.single` (the change of variables
compiled from the declarations, MuJoCo's stages run once per state, results read in place).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.batch import FlatBatch
from bridge.backends.limits import refuse_too_large
from bridge.conventions.change_of_variables import NEUTRAL, ChangeOfVariables, JointOrder, change_of_variables
from bridge.conventions.frames import frame_acceleration, frame_jacobian, frame_motion
from bridge.conventions.state import Representation, State
from bridge.model.model import Model
from bridge.spatial import Transform
from bridge.spatial.so3 import matrix_to_quaternion_wxyz

from .bodies import lumped_of
from .model import compile_model, mujoco_body_name, require_mujoco
from .single import _VELOCITY as _VELOCITY_STAGE
from .single import MujocoSingleState
from .state import MUJOCO, to_mujoco_state
from .twin import KinematicTwin, merged_links

__all__ = ["MujocoEngine"]

#: the frame representation MuJoCo's frame velocities and Jacobians come in (F[A])
_MIXED = "mixed"


def _full_mass_matrix(mujoco, m, d):
    """``fn(m, d, out)`` writing the dense mass matrix: ``mj_fullM(m, d, dst)`` in MuJoCo 4, the
    3.x ``mj_fullM(m, dst, d.qM)`` before (tried once on ``m, d``)."""
    out = np.zeros((m.nv, m.nv))
    try:
        mujoco.mj_fullM(m, d, out)
    except TypeError:
        return lambda m, d, out: mujoco.mj_fullM(m, out, d.qM)
    return mujoco.mj_fullM


class MujocoEngine(MujocoSingleState, EngineBase):
    """Engine protocol implementation (see :class:`bridge.dynamics.kindyn.Engine`) on MuJoCo."""

    name = "mujoco"
    #: optional capabilities (:mod:`bridge.backends.protocol`): the single-state hot paths of
    #: :mod:`.single`
    CAPABILITIES = frozenset({"inverse_dynamics_single", "forward_dynamics_single"})

    def __init__(self, model: Model, representation: Representation) -> None:
        super().__init__(model, representation)
        mujoco = require_mujoco()
        refuse_too_large(self.name, model)  # MuJoCo's body depth limit, before compiling anything
        self._mj = mujoco
        self.convention = NEUTRAL[self.representation]
        # (merged links' frames: on the twin; free joints as slides and a ball: the base's body moves)
        self.mm = compile_model(model, warn_unsited=False, native_free=False)
        self.data = mujoco.MjData(self.mm)
        self._data_g = mujoco.MjData(self.mm)  # zero velocity: gravity forces
        self._fullM = _full_mass_matrix(mujoco, self.mm, self.data)
        OBJ = mujoco.mjtObj
        # frame -> (object type, object id, body id); links merged into a body with several joints
        # have no MuJoCo object: they are bodies of the kinematic twin (in self._on_twin)
        self._frames: dict[str, tuple[int, int, int]] = {}
        merged = merged_links(model)
        self._twin = KinematicTwin(model) if merged else None
        self._on_twin = set(merged)
        links = set(model.link_names)  # (model.link_names builds a tuple per call)
        for name in model.frame_names:
            if name in merged:
                self._frames[name] = self._twin.frame(name, model)
                continue
            bid = mujoco.mj_name2id(self.mm, OBJ.mjOBJ_BODY, mujoco_body_name(name, links))
            if bid >= 0 and name in links:
                self._frames[name] = (OBJ.mjOBJ_XBODY, bid, bid)
            else:
                sid = mujoco.mj_name2id(self.mm, OBJ.mjOBJ_SITE, name)
                self._frames[name] = (OBJ.mjOBJ_SITE, sid, int(self.mm.site_bodyid[sid]))
        base = mujoco_body_name(lumped_of(model).base, links)
        self._base_body = mujoco.mj_name2id(self.mm, OBJ.mjOBJ_BODY, base)
        self._nv = self.mm.nv
        self._total_mass = float(np.sum(self.mm.body_mass))
        self._current = -1
        self._joints = JointOrder.between(model, self.convention, MUJOCO)
        self._cov: ChangeOfVariables | None = None
        self._flat_batch: FlatBatch | None = None
        if model.single_coordinate:
            self._init_single()
        # (joints of several coordinates: the general path alone, KinDyn calls no single-state path)

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        if state.representation is not self.representation:
            state = state.to(self.representation)
        self._state = state
        flat = self._flat_batch = FlatBatch(state, gravity)
        self.batch_shape = flat.batch_shape
        qpos, qvel = to_mujoco_state(self.model, state)
        self._qpos = flat.flatten(qpos, (qpos.shape[-1],))
        self._qvel = flat.flatten(qvel, (qvel.shape[-1],))
        if not self.model.floating:
            self._base_quat = Transform(flat.H, check=False).as_quaternion_wxyz()
        self._cov: ChangeOfVariables | None = None
        self._current = -1
        self._state1 = None  # (the compiled single state's array is no longer the current state)
        if self._single:
            self._use_single_path(False)

    @property
    def _flat(self) -> FlatBatch:
        """The current state's samples (a batch of one, made from the copies, after
        :meth:`set_single_state`)."""
        flat = self._flat_batch
        if flat is None:
            flat = self._flat_batch = FlatBatch(self.state, self._g1)
            self._qpos, self._qvel = self._q1[None], self._v1[None]
            if not self.model.floating:
                self._base_quat = matrix_to_quaternion_wxyz(flat.H[0, :3, :3])[None]
        return flat

    @property
    def cov(self) -> ChangeOfVariables:
        """The change of variables to MuJoCo's convention at the current state (on demand)."""
        if self._cov is None:
            self._cov = change_of_variables(self.model, self.state, self.convention, MUJOCO)
        return self._cov

    def _load(self, i: int, data=None) -> None:
        """Sample i into ``data`` (default: the main MjData), positions and velocities computed
        (the gravity data keeps zero velocity)."""
        mj, m = self._mj, self.mm
        d = self.data if data is None else data
        if data is None and self._current == i:
            return
        flat = self._flat
        m.opt.gravity[:] = flat.gravity[i]
        if not self.model.floating:
            m.body_pos[self._base_body] = flat.H[i, :3, 3]
            m.body_quat[self._base_body] = self._base_quat[i]
        d.qpos[:] = self._qpos[i]
        d.qvel[:] = 0.0 if data is not None else self._qvel[i]
        d.qacc[:] = 0.0
        d.qfrc_applied[:] = 0.0
        mj.mj_fwdPosition(m, d)
        mj.mj_fwdVelocity(m, d)
        # the gravity data moved the model's gravity and base pose to sample i
        self._current = i if data is None else -1
        self._g_last = self._g_list = self._base_rows = None  # (the single-state path's shortcuts)
        if data is None:
            self._stage = _VELOCITY_STAGE

    def _loop(self, fn, *vectors: np.ndarray) -> np.ndarray:
        return self._flat.loop(fn, *vectors, select=self._load)

    # ------------------------------------------------------------------ joint space
    def _mass_mj(self) -> np.ndarray:
        nv = self._nv

        def one(_i):
            out = np.zeros((nv, nv))
            self._fullM(self.mm, self.data, out)
            return out

        return self._loop(one)

    def mass_matrix(self) -> np.ndarray:
        if self._single:
            return self._mass_matrix_single()
        return self.cov.matrix_back(self._mass_mj())

    def bias_forces(self) -> np.ndarray:
        if self._single:
            return self._bias_forces_single()
        h = self._loop(lambda _i: self.data.qfrc_bias.copy())
        # zero acceleration in the representation is qacc = T_dot nu: M_mj enters when that is not 0
        M = None if self.cov.bias_free else self._mass_mj()
        return self.cov.bias_back(h, M)

    def gravity_forces(self) -> np.ndarray:
        dg = self._data_g

        def one(i):
            self._load(i, dg)
            return dg.qfrc_bias.copy()

        g = self._flat.loop(one)
        return self.cov.force_back(g)

    def _wrench_forces(self, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray | None:
        """``sum_F J_F^T f_F`` (..., nv) in the representation, or None."""
        if not wrenches:
            return None
        total = None
        for name, w in wrenches.items():
            tau = np.einsum("...ij,...i->...j", self.frame_jacobian(name), w)
            total = tau if total is None else total + tau
        return total

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        mj, m, d = self._mj, self.mm, self.data
        cov = self.cov

        def one(_i, qacc):
            d.qacc[:] = qacc
            mj.mj_inverse(m, d)
            return d.qfrc_inverse.copy()

        tau = cov.force_back(self._loop(one, cov.acceleration(nu_dot)))
        self._current = -1
        ext = self._wrench_forces(wrenches)
        return tau if ext is None else tau - ext

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        mj, m, d = self._mj, self.mm, self.data
        ext = self._wrench_forces(wrenches)
        if ext is not None:
            tau = tau + ext
        cov = self.cov

        def one(_i, f):
            d.qfrc_applied[:] = f
            mj.mj_forward(m, d)
            return d.qacc.copy()

        qacc = self._loop(one, cov.force(tau))
        d.qfrc_applied[:] = 0.0  # (the single-state path writes the joints' part alone)
        self._current = -1
        return cov.acceleration_back(qacc)

    # ------------------------------------------------------------------ frames
    def _md(self, frame: str):
        """``(MjModel, MjData)`` holding ``frame`` at the loaded sample: the engine's, or the kinematic
        twin's for a link merged into a body with several joints (:mod:`.twin`)."""
        if frame in self._on_twin:
            return self._twin.follow(self.mm, self.data, self._base_body)
        return self.mm, self.data

    def _pose(self, frame: str) -> tuple[np.ndarray, np.ndarray]:
        """(world_R_frame (3, 3), origin (3,)) of the loaded sample."""
        objtype, oid, _ = self._frames[frame]
        _, d = self._md(frame)
        if objtype == self._mj.mjtObj.mjOBJ_SITE:
            return d.site_xmat[oid].reshape(3, 3), d.site_xpos[oid]
        return d.xmat[oid].reshape(3, 3), d.xpos[oid]

    def frame_transform(self, frame: str) -> np.ndarray:
        def one(_i):
            R, o = self._pose(frame)
            H = np.eye(4)
            H[:3, :3] = R
            H[:3, 3] = o
            return H

        return self._loop(one)

    def _mixed_velocity(self, frame: str) -> np.ndarray:
        """MuJoCo's velocity of the loaded sample at the frame in F[A], angular first (6,)."""
        objtype, oid, _ = self._frames[frame]
        res = np.zeros(6)
        self._mj.mj_objectVelocity(*self._md(frame), objtype, oid, res, 0)
        return res

    def _world_H(self, frame: str) -> np.ndarray:
        """``world_H_frame`` (4, 4) of the loaded sample."""
        R, o = self._pose(frame)
        H = np.eye(4)
        H[:3, :3] = R
        H[:3, 3] = o
        return H

    def _with_poses(self, frame: str, one):
        """``(each, poses)``: ``each(i, ...)`` is ``one(i, ...)`` (MuJoCo's values of sample i, for
        :meth:`_loop`) that also appends the frame's pose (4, 4) to ``poses``, so that the values'
        conversion to the representation is one batched call (:mod:`bridge.conventions.frames`)
        after the loop, not one per sample."""
        poses = []

        def each(i: int, *args: np.ndarray) -> np.ndarray:
            poses.append(self._world_H(frame))
            return one(i, *args)

        return each, poses

    def _batched_poses(self, poses: list) -> np.ndarray:
        return self._flat.unflatten(np.asarray(poses))

    def frame_velocity(self, frame: str) -> np.ndarray:
        each, poses = self._with_poses(frame, lambda _i: self._mixed_velocity(frame))
        v = self._loop(each)  # F[A], angular first
        x = np.concatenate([v[..., 3:], v[..., :3]], axis=-1)
        return frame_motion(self._batched_poses(poses), x, _MIXED, self.representation)

    def frame_jacobian(self, frame: str) -> np.ndarray:
        if self._single and frame in self._jac_frames:  # (not a link of the kinematic twin)
            return self._frame_jacobian_single(frame)
        mj = self._mj
        nv = self._nv
        _, _, bid = self._frames[frame]

        def one(_i):
            jac = np.zeros((6, nv))  # F[A], linear rows first
            _, o = self._pose(frame)
            m, d = self._md(frame)
            mj.mj_jac(m, d, jac[:3], jac[3:], np.array(o), bid)
            return jac

        each, poses = self._with_poses(frame, one)
        J = self._loop(each)
        J = frame_jacobian(self._batched_poses(poses), J, _MIXED, self.representation)
        return self.cov.jacobian_back(J)

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        mj = self._mj
        objtype, oid, _ = self._frames[frame]
        rep = self.representation

        def one(i, qacc):
            m, d = self._md(frame)
            d.qacc[:] = qacc
            mj.mj_rnePostConstraint(m, d)
            acc = np.zeros(6)
            mj.mj_objectAcceleration(m, d, objtype, oid, acc, 0)
            # d/dt (p_dot, omega): the classical acceleration, MuJoCo's with -gravity taken off
            a_mixed = np.concatenate([acc[3:] + self._flat.gravity[i], acc[:3]])
            if rep == _MIXED:
                return a_mixed
            v = self._mixed_velocity(frame)
            return np.concatenate([a_mixed, v[3:], v[:3]])  # and the velocity, linear first

        each, poses = self._with_poses(frame, one)
        out = self._loop(each, self.cov.acceleration(nu_dot))
        self._current = -1
        if rep == _MIXED:
            return out
        return frame_acceleration(self._batched_poses(poses), out[..., 6:], out[..., :6], _MIXED, rep)

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        return self.frame_acceleration(frame, np.zeros(self.model.nv))

    # ------------------------------------------------------------------ centre of mass
    def com_position(self) -> np.ndarray:
        return self._loop(lambda _i: self.data.subtree_com[0].copy())

    def com_velocity(self) -> np.ndarray:
        def one(_i):
            self._mj.mj_subtreeVel(self.mm, self.data)
            return self.data.subtree_linvel[0].copy()

        return self._loop(one)

    def com_jacobian(self) -> np.ndarray:
        nv = self._nv

        def one(_i):
            jacp = np.zeros((3, nv))
            self._mj.mj_jacSubtreeCom(self.mm, self.data, jacp, 0)
            return jacp

        return self.cov.jacobian_back(self._loop(one))

    def centroidal_momentum(self) -> np.ndarray:
        """``(m vcom, angular momentum about the COM)`` in G[A] from ``mj_subtreeVel``."""
        mass = self._total_mass

        def one(_i):
            self._mj.mj_subtreeVel(self.mm, self.data)
            d = self.data
            return np.concatenate([mass * d.subtree_linvel[0], d.subtree_angmom[0]])

        return self._loop(one)
