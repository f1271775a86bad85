"""Dynamics engine over jaxsim (JAX), answering in jaxsim's own velocity representations.

jaxsim computes in BODY, MIXED and INERTIAL natively (``VelRepr``), so the engine builds its states in
the KinDyn's representation: the change of variables to jaxsim's convention of that representation
(:data:`~bridge.backends.jaxsim.state.JAXSIM_CONVENTIONS`) is derived from the two declarations and
is jaxsim's joint order alone (no base block). The model is ``to_jaxsim(model)`` (through
SDFormat, :mod:`.model`); the jaxsim functions are compiled once per model and representation and
batched over the states with ``jax.vmap`` (:mod:`.compiled`). Per state, each bundle is evaluated
once:

* M, h, g: ``free_floating_mass_matrix`` / ``_bias_forces`` / ``_gravity_forces`` (a fixed base: the
  joint block); inverse dynamics ``inverse_dynamics``; forward dynamics ``forward_dynamics_aba``;
  external wrenches as jaxsim link forces in the representation (each frame's wrench moved to the
  frame's jaxsim link through the world, :func:`bridge.conventions.frames.frame_force`);
* frames: ``link.*`` for the links of ``model.lumped()``, ``frame.*`` for the other frames (merged
  links, extra frames): transform, velocity, Jacobian, ``jacobian_derivative`` (``J_dot nu`` and the
  native :meth:`JaxsimEngine.frame_jacobian_derivative`);
* centre of mass and momenta: ``com.com_position``, the centre-of-mass velocity and Jacobian (the
  linear rows of ``average_centroidal_velocity_jacobian``), ``com.centroidal_momentum`` and
  ``centroidal_momentum_jacobian``, ``model.total_momentum`` and ``total_momentum_jacobian``. jaxsim
  expresses the centroidal quantities in G[B] in BODY, bridge in G[A]: they are moved with the frame
  maps of the frame G_B (:mod:`bridge.conventions.frames`).

Gravity is part of a jaxsim model (``(0, 0, -9.81)``, :data:`JAXSIM_GRAVITY`). A state with another
gravity ``g`` gets the exact difference of the generalized gravity forces, which are linear in
gravity: ``-m J_com^T (g - g_jaxsim)`` (``m`` the total mass, ``J_com`` jaxsim's centre-of-mass
Jacobian), added to h, g and the inverse dynamics and taken from the forces of the forward dynamics.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bridge.backends.base import EngineBase
from bridge.backends.batch import FlatBatch
from bridge.backends.limits import refuse_too_large
from bridge.conventions.change_of_variables import NEUTRAL, ChangeOfVariables, JointOrder
from bridge.conventions.frames import frame_force, frame_jacobian
from bridge.conventions.native_state import to_native_state
from bridge.conventions.single_state import single_base_change
from bridge.conventions.state import Representation, State, velocity_declaration
from bridge.model.model import Model
from bridge.spatial import Transform

from .compiled import compiled
from .model import jaxsim_names, to_jaxsim
from .state import JAXSIM_CONVENTIONS, jaxsim_tree

__all__ = ["JAXSIM_GRAVITY", "JaxsimEngine"]

#: the gravity of jaxsim's models built by bridge (world coordinates)
JAXSIM_GRAVITY = np.array([0.0, 0.0, -9.81])
_BODY, _MIXED, _INERTIAL = "body", "mixed", "inertial"
#: where the per-frame arrays start in the kinematics bundle (:mod:`.compiled`)
_FRAMES = 7


def _numpy(x: object) -> np.ndarray:
    """A jaxsim result as a new numpy array, its non-finite entries (overflowing inputs) as NaN, as
    the other engines give them: bridge's finiteness check then raises its error without a numpy
    warning (a sum of +inf and -inf warns)."""
    out = np.array(x)
    bad = ~np.isfinite(out)
    if bad.any():
        out[bad] = np.nan
    return out


def _padding(n: int) -> int:
    """Padding rows taking a batch of ``n`` states to the next power of two: jaxsim's functions are
    compiled per batch size, so batches of 1, 2, 4, 8, ... states share the compiled code."""
    return (1 << max(n - 1, 0).bit_length()) - n


class JaxsimEngine(EngineBase):
    """Engine protocol implementation (see :class:`bridge.dynamics.kindyn.Engine`) on jaxsim.

    Attributes: ``js_model`` (jaxsim's ``JaxSimModel``), ``convention`` (jaxsim's convention of the
    representation), ``cov`` (the constant change of variables to it).
    """

    name = "jaxsim"
    #: derived quantities jaxsim computes (the others are :mod:`bridge.backends.generic`'s)
    NATIVE_QUANTITIES = frozenset(
        {
            "total_momentum",
            "total_momentum_jacobian",
            "centroidal_momentum_matrix",
            "frame_jacobian_derivative",
        }
    )

    def __init__(self, model: Model, representation: Representation) -> None:
        super().__init__(model, representation)
        rep = self.representation
        refuse_too_large(self.name, model)  # jaxsim's builder recursion, before building anything
        self.js_model = to_jaxsim(model)
        self.convention = JAXSIM_CONVENTIONS[rep]
        self._compiled = compiled(model, rep)
        self._links, self._frames = jaxsim_names(model)
        tree = jaxsim_tree(model)
        self._link_of = dict(self._links)
        for name in self._frames:  # the jaxsim link each frame is attached to
            self._link_of[name] = self._links[tree.frame_placement(name)[0]]
        self._mass = model.total_mass
        change = single_base_change(velocity_declaration(rep), self.convention.velocity)
        eye = np.eye(4)
        joints = JointOrder.between(model, NEUTRAL[rep], self.convention)
        self.cov = ChangeOfVariables(*change.matrices(eye, eye.tolist()), joints)
        self._nb = 0 if model.floating else 6  # jaxsim's base columns a fixed base drops

    # ------------------------------------------------------------------ state
    def set_state(self, state: State, gravity: np.ndarray) -> None:
        model = self.model
        flat = self._flat = FlatBatch(state, gravity, pad=_padding)
        self.batch_shape = flat.batch_shape
        self._state, self._single_args = state, None
        q, v = to_native_state(model, flat.state(self.representation), self.convention)
        q, v = (
            np.asarray(q, dtype=float).reshape(flat.rows, -1),
            np.asarray(v, dtype=float).reshape(flat.rows, -1),
        )
        if model.floating:
            self._args = (q[:, :3], q[:, 3:7], q[:, 7:], v[:, :6], v[:, 6:])
        else:  # the base pose from the state, no base velocity
            quat = Transform(flat.H, check=False).as_quaternion_wxyz().reshape(flat.rows, 4)
            self._args = (flat.H[:, :3, 3], quat, q, np.zeros((flat.rows, 6)), v)
        dg = flat.gravity - JAXSIM_GRAVITY
        self._dg = dg if np.any(dg != 0.0) else None
        self._results: dict[tuple, tuple[np.ndarray, ...]] = {}

    def _bundle(self, name: str) -> tuple[np.ndarray, ...]:
        """The arrays of the compiled bundle ``name`` (no arguments) at the current states, flat
        (n, ...), evaluated once per state."""
        out = self._results.get(name)
        if out is None:
            out = self._results[name] = tuple(_numpy(x) for x in self._compiled(name)(*self._args))
        return out

    def _solve(self, nu_dot: np.ndarray, f_id: np.ndarray, tau: np.ndarray, f_fd: np.ndarray) -> tuple:
        """jaxsim's (inverse dynamics, forward dynamics) at the current states, flat (n, 6 + n)."""
        out = self._compiled("solve")(*self._args, nu_dot, f_id, tau, f_fd)
        return tuple(_numpy(x) for x in out)

    def _joints(self, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        """``x`` without jaxsim's base rows/columns (the ``axes`` of size 6 + n) for a fixed base."""
        if not self._nb:
            return x
        index = [slice(None)] * x.ndim
        for a in axes:
            index[a] = slice(6, None)
        return x[tuple(index)]

    def _batched(self, x: np.ndarray) -> np.ndarray:
        return self._flat.unflatten(x)

    # ------------------------------------------------------------------ gravity
    def _gravity_difference(self) -> np.ndarray | None:
        """``-m J_com^T (g - g_jaxsim)`` (n, nv) in the representation, or None when every state's
        gravity is jaxsim's."""
        if self._dg is None:
            return None
        return -self._mass * np.einsum("nij,ni->nj", self._com_jacobian(), self._dg)

    def _with_gravity(self, x: np.ndarray) -> np.ndarray:
        dg = self._gravity_difference()
        return x if dg is None else x + dg

    # ------------------------------------------------------------------ joint space
    def mass_matrix(self) -> np.ndarray:
        M = self._joints(self._bundle("dynamics")[0], (1, 2))
        return self._batched(self.cov.matrix_back(M))

    def bias_forces(self) -> np.ndarray:
        h = self._joints(self._bundle("dynamics")[1], (1,))
        return self._batched(self._with_gravity(self.cov.force_back(h)))

    def gravity_forces(self) -> np.ndarray:
        g = self._joints(self._bundle("dynamics")[2], (1,))
        return self._batched(self._with_gravity(self.cov.force_back(g)))

    def _native_accelerations(self, nu_dot: np.ndarray) -> np.ndarray:
        a = self.cov.acceleration(self._flat.flat_view(nu_dot, nu_dot.shape[-1]))
        a = np.broadcast_to(a, (self._flat.rows, a.shape[-1]))
        return a if not self._nb else np.concatenate([np.zeros((self._flat.rows, 6)), a], axis=-1)

    def inverse_dynamics(self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        a = self._native_accelerations(nu_dot)
        f = self._link_forces(wrenches)
        zero_t = np.zeros((self._flat.rows, self.model.n_dofs))
        tau = self._joints(self._solve(a, f, zero_t, np.zeros_like(f))[0], (1,))
        return self._batched(self._with_gravity(self.cov.force_back(tau)))

    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        flat = self._flat
        t = np.broadcast_to(flat.flat_view(tau, tau.shape[-1]), (flat.rows, tau.shape[-1]))
        dg = self._gravity_difference()
        t = self.cov.force(t if dg is None else t - dg)
        f = self._link_forces(wrenches)
        if self.model.floating:  # the base's generalized force: a wrench on the base in the representation
            f[:, self._links[self.model.base]] += t[:, :6]
            t = t[:, 6:]
        acc = self._solve(
            np.zeros((flat.rows, 6 + self.model.n_dofs)), np.zeros_like(f), np.ascontiguousarray(t), f
        )[1]
        return self._batched(self.cov.acceleration_back(self._joints(acc, (1,))))

    def _link_forces(self, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray:
        """jaxsim's link forces (n, nL, 6) in the representation: each frame's wrench (its
        representation's frame for F) summed, through the world, on the frame's jaxsim link."""
        n, nL = self._flat.rows, len(self._links)
        f = np.zeros((n, nL, 6))
        if not wrenches:
            return f
        rep = self.representation
        for name, w in wrenches.items():
            world_H_F = self._frame(name)[0]
            w = np.broadcast_to(self._flat.flat_view(np.asarray(w, dtype=float), 6), (n, 6))
            f[:, self._link_of[name]] += frame_force(world_H_F, w, rep, _INERTIAL)
        poses = self._bundle("kinematics")[_FRAMES][:, :nL]
        return np.ascontiguousarray(frame_force(poses, f, _INERTIAL, rep))

    # ------------------------------------------------------------------ frames
    def _frame(self, frame: str) -> tuple[np.ndarray, ...]:
        """(world_H_F, velocity, Jacobian, J_dot nu, J_dot) of a frame, flat, jaxsim's columns."""
        i = self._links.get(frame)
        i = self._frames[frame] if i is None else i
        return tuple(x[:, i] for x in self._bundle("kinematics")[_FRAMES:])

    def frame_transform(self, frame: str) -> np.ndarray:
        return self._batched(self._frame(frame)[0])

    def frame_velocity(self, frame: str) -> np.ndarray:
        return self._batched(self._frame(frame)[1])

    def _frame_jacobian(self, frame: str) -> np.ndarray:
        return self.cov.jacobian_back(self._joints(self._frame(frame)[2], (2,)))

    def frame_jacobian(self, frame: str) -> np.ndarray:
        return self._batched(self._frame_jacobian(frame))

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        return self._batched(self._frame(frame)[3])

    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray:
        a = self._flat.flat_view(nu_dot, nu_dot.shape[-1])
        J = self._frame_jacobian(frame)
        return self._batched(
            np.einsum("nij,nj->ni", J, np.broadcast_to(a, J.shape[::2])) + self._frame(frame)[3]
        )

    def frame_jacobian_derivative(self, frame: str) -> np.ndarray:
        return self._batched(self.cov.jacobian_back(self._joints(self._frame(frame)[4], (2,))))

    # ------------------------------------------------------------------ centre of mass and momenta
    def _centroidal_frame(self) -> np.ndarray:
        """world_H_G (n, 4, 4) of the frame G_B: the centre of mass, the base's axes."""
        H = self._flat.H.copy()
        H[:, :3, 3] = self._bundle("kinematics")[0]
        return H

    def _to_world_axes(self, x: np.ndarray, force: bool) -> np.ndarray:
        """A centroidal motion or force (n, 6, k) from jaxsim's G[B] (BODY) to G[A]."""
        if self.representation is not Representation.BODY:
            return x
        H = self._centroidal_frame()
        if not force:
            return frame_jacobian(H, x, _BODY, _MIXED)
        return np.swapaxes(frame_force(H[:, None], np.swapaxes(x, -1, -2), _BODY, _MIXED), -1, -2)

    def com_position(self) -> np.ndarray:
        return self._batched(self._bundle("kinematics")[0])

    def com_velocity(self) -> np.ndarray:
        return self._batched(self._bundle("kinematics")[1])

    def _com_jacobian(self) -> np.ndarray:
        J = self._to_world_axes(self._bundle("kinematics")[2], force=False)[:, :3]
        return self.cov.jacobian_back(self._joints(J, (2,)))

    def com_jacobian(self) -> np.ndarray:
        return self._batched(self._com_jacobian())

    def centroidal_momentum(self) -> np.ndarray:
        h = self._to_world_axes(self._bundle("kinematics")[3][..., None], force=True)[..., 0]
        return self._batched(h)

    def centroidal_momentum_matrix(self) -> np.ndarray:
        A = self._to_world_axes(self._bundle("kinematics")[4], force=True)
        return self._batched(self.cov.jacobian_back(self._joints(A, (2,))))

    def total_momentum(self) -> np.ndarray:
        return self._batched(self._bundle("kinematics")[5])

    def total_momentum_jacobian(self) -> np.ndarray:
        return self._batched(self.cov.jacobian_back(self._joints(self._bundle("kinematics")[6], (2,))))
