"""One dynamics facade over any engine, in any velocity representation.

``KinDyn`` is what iDynTree users know from ``KinDynComputations``: set a state, ask for the mass
matrix, bias forces, inverse/forward dynamics, frame kinematics and centre of mass, all in the
chosen representation (:mod:`bridge.conventions.state`), joints in the model's DOF order. The same
questions go to any registered engine, which is what makes cross-validation possible.

States may carry leading batch axes: every result then has the same leading axes. Results are
cached per state and computed lazily.

External wrenches are ``{frame_name: wrench (..., 6)}``, the wrench the environment applies on the
robot at that frame, expressed (linear first) in the frame the representation gives for it:
F (BODY), the world A (INERTIAL) or F[A] (MIXED). They enter as
``inverse_dynamics(a, f) = inverse_dynamics(a) - J_F^T f`` and
``forward_dynamics(tau, f) = forward_dynamics(tau + J_F^T f)``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from threading import get_ident as _ident
from typing import Any

import numpy as np

from bridge._array import as_float_array, check_batch
from bridge.backends import registry
from bridge.backends.protocol import DERIVED_QUANTITIES, Engine, capability, derived
from bridge.conventions.declaration import Axes
from bridge.conventions.state import (
    MODERATE_SQ,
    Representation,
    State,
    all_moderate,
    finite_weights,
    vdot,
    velocity_declaration,
)
from bridge.derivatives.select import pick_derivatives
from bridge.dynamics.arguments import accelerations, generalized_force, join_vectors, wrenches_by_frame
from bridge.dynamics.result_checks import (
    MASS_QUANTITIES,
    MODERATE_MODEL,
    QUANTITY_NAMES,
    check_all_finite,
    check_finite,
    forward_result,
    guard_mass,
    input_note,
    massless_error,
    model_scale,
    needs_guard,
    quiet,
)
from bridge.dynamics.threads import foreign_thread, owned
from bridge.errors import (
    BridgeError,
    InvalidValueError,
    ShapeError,
    StateError,
)
from bridge.model.gravity import model_gravity
from bridge.model.model import Model
from bridge.spatial import Force, Transform

__all__ = ["Engine", "KinDyn"]


def _declines(*_: object) -> None:
    """An optional single-state hook the engine does not offer: KinDyn takes the general path."""
    return None


def _moderate_vector(kd: KinDyn, x: object) -> bool:
    """One moderate (n,) vector on a moderate state and model (see set_state): no overflow."""
    return kd._moderate and type(x) is np.ndarray and x.shape == (kd._n_dofs,) and vdot(x, x) < MODERATE_SQ


def _finite(value: np.ndarray, what: str, kd: KinDyn) -> np.ndarray:
    """``value`` if every entry is finite, else an InvalidValueError (:func:`check_finite`)."""
    return check_finite(value, what, kd.model.name, kd._input_note)


class KinDyn:
    """Kinematics and dynamics of ``model`` computed by ``engine`` in ``representation``.

    Args:
        model: a :class:`bridge.Model`.
        engine: a registered engine (:func:`bridge.backends.registry.engine_names`: "pinocchio",
            "featherstone", ...); one whose library is missing names the extra installing it.
        representation: "body", "inertial" or "mixed" (or a :class:`Representation`); the base
            velocity, generalized velocity/acceleration/forces, Jacobians, frame velocities and
            accelerations and external wrenches are all in this representation.

    Threads (:mod:`bridge.dynamics.threads`): one KinDyn per thread is safe with every engine. A
    KinDyn shared between threads never returns a wrong number: its state belongs to the thread that
    set it last, whose calls it answers one at a time (under a lock); a query from any other thread
    raises :class:`bridge.ThreadOwnershipError` until that thread sets a state of its own (handing a
    KinDyn from thread to thread works: each ``set_state`` moves it to the calling thread).
    """

    def __init__(self, model: Model, engine: str = "pinocchio", representation: object = "mixed") -> None:
        if not isinstance(model, Model):
            raise InvalidValueError(f"KinDyn expects a bridge.Model, got {type(model).__name__}")
        self.model = model
        self.representation = Representation.parse(representation)
        self.engine_name = str(engine).strip().lower()
        engine_class = registry.engine_class(self.engine_name)
        # coupled mimic joints: the engine's own mimic joints, else the full model's engine projected
        native = getattr(engine_class, "coupled_engine", None) if getattr(model, "mimics", ()) else None
        if native is not None and native(model) is not None:
            self._engine = native(model)(model, self.representation)
        elif getattr(model, "mimics", ()):
            from bridge.backends.coupled import CoupledEngine

            self._engine = CoupledEngine(engine_class, model, self.representation)
        else:
            self._engine = engine_class(model, self.representation)
        self._state: State | None = None
        self._cache: dict[Any, np.ndarray] = {}
        # hot-path constants: a state given as arrays (see set_state), the frame names, gravity
        self._has_state = False
        # the single-state hot paths take models of one-coordinate joints
        self._set_single = self._engine.set_single_state if model.single_coordinate else _declines
        # engines answer one unbatched query from its raw arguments (or None: not the plain case)
        single = model.single_coordinate
        self._id_single = (single and capability(self._engine, "inverse_dynamics_single")) or _declines
        self._fd_single = (single and capability(self._engine, "forward_dynamics_single")) or _declines
        # the derivatives: analytical (the engine's capability) + chain rule, or differences
        analytical = capability(self._engine, "body_derivatives") if single else None
        d = self._derivatives = pick_derivatives(self._engine, analytical)
        self._idd_single, self._fdd_single = d.inverse_single, d.forward_single
        # the derived quantities: the engine's own where it computes them, else the generic ones
        self._derived = {name: derived(self._engine, name) for name in DERIVED_QUANTITIES}
        # the centroidal quantities' rows are in G[A], or G[B] where the representation's axes are B's
        self._base_axes = velocity_declaration(self.representation).angular_axes is Axes.BODY
        self._frame_names = frozenset(model.frame_names)
        self._guard_mass = needs_guard(model)
        self._n_dofs = model.n_dofs
        self._nv = model.nv
        self._floating = model.floating
        self._default_gravity = model_gravity(model)  # the file's, else (0, 0, -9.81); read-only
        # a state set through the hot path has finite inputs below bridge.conventions.state.MODERATE; with a
        # model of moderate size too, M, h, J and inverse dynamics cannot overflow and skip the
        # finiteness check of their results (every other path checks them)
        # (a float32 engine's products overflow for moderate inputs: its results are always checked)
        self._precision = getattr(self._engine, "precision", "float64")
        self._model_moderate = self._precision == "float64" and model_scale(model) < MODERATE_MODEL
        self._finite_w_nv = finite_weights(model.nv)
        self._moderate = False
        # threads: the state's owner (the thread that set it) and the lock every call holds
        self._owner: int | None = None
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ state
    def set_state(
        self,
        world_H_base: object,
        s: object,
        base_velocity: object,
        s_dot: object,
        gravity: object = None,
    ) -> None:
        """Set the robot state (leading batch axes allowed on every argument).

        ``world_H_base`` (..., 4, 4) or Transform; ``s``, ``s_dot`` (..., n) in the model's DOF
        order; ``base_velocity`` (..., 6) in this KinDyn's representation (ignored, but still
        checked, for a fixed base); ``gravity`` (..., 3) in world coordinates, default (None) the
        model's: :attr:`bridge.Model.gravity` (its file's), else ``(0, 0, -9.81)``.
        """
        # hot path: one state as plain arrays, checked by the engine's own single-state set-up (or
        # by single_state_arrays); anything else, including every invalid input, goes through
        # State, which raises the errors. The calling thread owns the state (see the class doc).
        lock = self._lock
        lock.acquire()
        try:
            g = self._default_gravity if gravity is None else self._gravity_array(gravity)
            if g is not None and self._set_single(world_H_base, s, base_velocity, s_dot, g):
                self._state = None  # the engine's (rebuilt if it has to be; see state)
                self._gravity = g
                self._cache = {}
                self._has_state = True
                self._moderate = self._model_moderate
                self._owner = _ident()
                return
            state = State(world_H_base, s, base_velocity, s_dot, self.representation, layout=self.model)
            self.set_robot_state(state, gravity)
        finally:
            lock.release()

    def _gravity_array(self, gravity: object) -> np.ndarray | None:
        """One validated (3,) gravity for the hot path, or None (batched or invalid)."""
        if gravity is None:
            return self._default_gravity
        try:
            g = np.array(gravity, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            return None
        if g.shape != (3,) or not all_moderate(g):
            return None
        g.flags.writeable = False
        return g

    def set_robot_state(self, state: State, gravity: object = None) -> None:
        """Set the state from a :class:`State` (converted to this representation if needed)."""
        with self._lock:
            self._set_robot_state(state, gravity)
            self._owner = _ident()

    def _set_robot_state(self, state: State, gravity: object) -> None:
        if not isinstance(state, State):
            raise StateError(f"set_robot_state expects a bridge State, got {type(state).__name__}")
        if state.layout is None and not self.model.single_coordinate:
            state = state.with_layout(self.model)
        try:
            g = as_float_array(self._default_gravity if gravity is None else gravity, "gravity", (3,))
        except BridgeError as exc:
            raise StateError(str(exc)) from None
        state.check_model(self.model)
        parts = (state.world_H_base.matrix[..., 0], state.s, state.base_velocity, state.s_dot)
        batch = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
        try:
            check_batch("gravity", g.shape[:-1], batch)
        except ShapeError as exc:
            raise StateError(str(exc)) from None
        if 0 in batch:
            raise StateError(f"the state is an empty batch (batch shape {batch}): give at least one state")
        if state.representation is not self.representation:
            state = state.to(self.representation)
        if not self.model.floating:  # a fixed base has no base velocity
            H, zero, rep = state.world_H_base, np.zeros(6), self.representation
            state = State(H, state.s, zero, state.s_dot, rep, layout=state.layout)
        self._engine.set_state(state, g)
        self._state = state
        self._gravity = g
        self._cache = {}
        self._has_state = True
        self._moderate = False

    @property
    @owned
    def state(self) -> State:
        if self._state is None:
            if not self._has_state:
                raise StateError("no state set: call set_state(...) first")
            self._state = self._engine.state  # set through the engine's single-state hot path
        return self._state

    @property
    @owned
    def nu(self) -> np.ndarray:
        """Generalized velocity in this representation (..., nv)."""
        nu = self.state.nu
        return nu if self.model.floating else nu[..., 6:]

    @property
    @owned
    def batch_shape(self) -> tuple[int, ...]:
        return self._engine.batch_shape

    def _require_state(self) -> None:
        if not self._has_state:
            raise StateError("no state set: call set_state(...) first")
        if self._owner != _ident():
            raise foreign_thread(self)

    def _query(self, key: Any, fn, *args: object, hot: bool = False) -> np.ndarray:
        """The one cached query: the cached value of ``key``, else ``fn(*args)`` computed, checked
        and stored read-only, for the thread owning the state (the cache read first, the owner
        checked after: a state set in between by another thread is caught; a computation holds the
        lock: bridge.dynamics.threads). ``hot`` (M, h, J): on a moderate state and model (see
        set_state) the result cannot overflow and is stored unchecked; every other result is checked
        finite (and a model of massless bodies guards the mass quantities first)."""
        value = self._cache.get(key)
        if value is not None and self._owner == _ident():
            return value
        lock = self._lock
        lock.acquire()
        try:
            self._require_state()
            value = self._cache.get(key)
            if value is not None:
                return value
            if hot and self._moderate:
                value = fn(*args)
                if type(value) is not np.ndarray:
                    value = np.asarray(value)
            else:
                if self._guard_mass and key in MASS_QUANTITIES:
                    guard_mass(self.model, key, self.com_position)
                value = fn(*args) if self._moderate else quiet(fn, *args)
                if type(value) is not np.ndarray:
                    value = np.asarray(value)
                what = QUANTITY_NAMES.get(key[0] if isinstance(key, tuple) else key, str(key))
                _finite(value, f"{what}({key[1]!r})" if isinstance(key, tuple) else what, self)
            value.setflags(False)  # read-only (write=False; positional: a third of the keyword call's cost)
            self._cache[key] = value
            return value
        finally:
            lock.release()

    def _frame(self, frame: str) -> str:
        if type(frame) is not str:
            if not isinstance(frame, str):
                raise InvalidValueError(f"frame: expected a frame name (str), got {frame!r}")
            frame = str(frame)
        if frame not in self._frame_names:
            self.model.frame(frame)  # raises UnknownNameError with close matches
        return frame

    # ------------------------------------------------------------------ joint space
    def mass_matrix(self) -> np.ndarray:
        """Mass matrix (..., nv, nv), ``nv = 6 + n`` (floating) or ``n`` (fixed)."""
        return self._query("M", self._engine.mass_matrix, hot=True)

    def bias_forces(self) -> np.ndarray:
        """``h = C nu + g`` (..., nv): inverse dynamics at zero acceleration in this representation."""
        return self._query("h", self._engine.bias_forces, hot=True)

    def gravity_forces(self) -> np.ndarray:
        """Generalized gravity forces ``g`` (..., nv)."""
        return self._query("g", self._engine.gravity_forces)

    def _nu_dot(self, base_acc: object, s_ddot: object) -> np.ndarray:
        """The generalized acceleration (..., nv) of the arguments (:mod:`bridge.dynamics.arguments`)."""
        if self._floating and base_acc is not None:
            fast = join_vectors(base_acc, 6, s_ddot, self._n_dofs)
            if fast is not None:
                return fast
        return accelerations(self.model, base_acc, s_ddot, self.batch_shape if self._has_state else None)

    def _wrenches(self, external_wrenches: Mapping[str, object] | None) -> dict[str, np.ndarray] | None:
        if external_wrenches is None:
            return None
        batch = self.batch_shape if self._has_state else None
        return wrenches_by_frame(external_wrenches, self._frame, batch)

    @owned
    def inverse_dynamics(
        self, base_acc: object, s_ddot: object, external_wrenches: Mapping[str, object] | None = None
    ) -> np.ndarray:
        """Generalized forces ``tau`` (..., nv) for the acceleration ``[base_acc; s_ddot]``.

        ``base_acc`` (..., 6) is the time derivative of the base velocity in this representation
        (pass None for a fixed base)."""
        if self._has_state and external_wrenches is None:
            if self._moderate:  # hot path: None unless one plain valid state
                tau = self._id_single(base_acc, s_ddot)
            else:
                tau = quiet(self._id_single, base_acc, s_ddot)
            if tau is not None:
                return tau if self._moderate else _finite(tau, "inverse_dynamics", self)
        self._require_state()
        nu_dot = self._nu_dot(base_acc, s_ddot)
        wrenches = self._wrenches(external_wrenches)
        return _finite(quiet(self._engine.inverse_dynamics, nu_dot, wrenches), "inverse_dynamics", self)

    @owned
    def forward_dynamics(
        self, joint_torques: object, external_wrenches: Mapping[str, object] | None = None
    ) -> np.ndarray:
        """Generalized acceleration ``nu_dot`` (..., nv) in this representation.

        ``joint_torques`` is (..., n) (the base is unactuated) or a full generalized force
        (..., nv) including a base wrench in this representation's base frame.
        """
        if self.model.massless_dofs:
            raise massless_error(self.model)
        n, nv = self._n_dofs, self._nv
        t = joint_torques
        if type(t) is not np.ndarray or t.dtype.kind != "f":
            t = as_float_array(t, "joint_torques", ())
        if t.shape == (n,) and self._has_state and external_wrenches is None:
            try:
                nu_dot = self._fd_single(t)  # hot path: None unless one plain valid state
            except np.linalg.LinAlgError:
                nu_dot = np.full(nv, np.nan)
            if nu_dot is not None:
                if math.isfinite(nu_dot.dot(self._finite_w_nv)):  # the test of forward_result, inlined
                    return nu_dot
                return forward_result(self, nu_dot, t, None)
        self._require_state()
        tau = self._generalized_force(t)
        check_batch("joint_torques", tau.shape[:-1], self.batch_shape)
        wrenches = self._wrenches(external_wrenches)
        try:
            nu_dot = quiet(self._engine.forward_dynamics, tau, wrenches)
        except np.linalg.LinAlgError:
            nu_dot = None
        return forward_result(self, nu_dot, tau, wrenches)

    def _generalized_force(self, t: np.ndarray) -> np.ndarray:
        return generalized_force(t, self._n_dofs, self._nv)

    # ------------------------------------------------------------------ derivatives
    @owned
    def inverse_dynamics_derivatives(
        self, base_acc: object, s_ddot: object, external_wrenches: Mapping[str, object] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Derivatives of :meth:`inverse_dynamics` at the current state and the acceleration
        ``[base_acc; s_ddot]``: ``(dtau_dq, dtau_dnu, dtau_dnudot)``, each (..., nv, nv).

        Everything is in this KinDyn's representation W. ``dtau_dq[:, k]`` is the derivative along
        the k-th tangent direction ``delta = e_k``: the first-order change of tau when the robot
        moves for unit time with generalized velocity ``delta`` in W, joints ``s + delta_s``, base
        pose ``H exp(delta_base^)`` (BODY), ``exp(delta_base^) H`` (INERTIAL) or ``o + delta_p``,
        ``exp(delta_theta^) R`` (MIXED, world axes; :func:`bridge.derivatives.retract`), while
        ``nu``, ``nu_dot`` (in W) and the external wrenches (in the frame the representation gives
        them, F, A or F[A]) stay fixed. ``dtau_dnudot`` is the mass matrix.

        Engines: "pinocchio" uses Pinocchio's analytical ``computeRNEADerivatives`` plus the
        chain-rule terms of the change of variables (docs/theory.md, "Derivatives of the
        dynamics"; one compiled call per state with numba installed), exact to rounding; every
        other engine differences its own inverse dynamics (:mod:`bridge.derivatives.numeric`:
        fourth-order central differences in q, step 1e-3, 1e-11..1e-12 relative; exact central
        differences in nu).
        """
        if self._has_state and external_wrenches is None:
            out = self._idd_single(base_acc, s_ddot)  # hot path: None unless one plain valid state
            if out is not None:  # (read-only already)
                return out
        nu_dot = self._nu_dot(base_acc, s_ddot)
        self._require_state()
        wrenches = self._wrenches(external_wrenches)
        compute = self._derivatives.inverse
        return self._checked_derivatives("inverse_dynamics_derivatives", compute, nu_dot, wrenches)

    @owned
    def forward_dynamics_derivatives(
        self, joint_torques: object, external_wrenches: Mapping[str, object] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Derivatives of :meth:`forward_dynamics` at the current state for ``joint_torques`` (..., n)
        (or a full generalized force (..., nv)): ``(dnudot_dq, dnudot_dnu, dnudot_dtau)``, each
        (..., nv, nv), in this KinDyn's representation, q along the tangent stated in
        :meth:`inverse_dynamics_derivatives`. ``dnudot_dtau`` is the derivative with respect to the
        full generalized force (the inverse mass matrix; the joint torques are its last n columns).

        Engines: "pinocchio" from ``computeABADerivatives`` plus the chain rule; the others by the
        implicit function theorem (``dnudot_dx = -M^-1 dtau_dx`` at ``nu_dot = FD(tau)``)."""
        if self.model.massless_dofs:
            raise massless_error(self.model)
        # (no DOF: the engines' own paths assume one; _checked_derivatives answers (..., 0, 0))
        plain = external_wrenches is None and self._nv > 0
        if self._moderate and plain and (out := self._fdd_single(joint_torques)):
            return out  # hot path (read-only already)
        self._require_state()
        if plain and _moderate_vector(self, joint_torques):  # nothing can overflow
            out = self._derivatives.forward(self._generalized_force(joint_torques), None, self._gravity)
            return tuple(self._read_only(v) for v in out)
        tau = self._generalized_force(as_float_array(joint_torques, "joint_torques", ()))
        check_batch("joint_torques", tau.shape[:-1], self.batch_shape)
        wrenches = self._wrenches(external_wrenches)
        compute = self._derivatives.forward
        return self._checked_derivatives("forward_dynamics_derivatives", compute, tau, wrenches)

    def _checked_derivatives(self, what: str, compute, x: np.ndarray, wrenches) -> tuple[np.ndarray, ...]:
        """``compute(x, wrenches, gravity)``'s three (..., nv, nv) derivatives, read-only and finite
        (else an InvalidValueError naming the inputs); empty for a model without DOFs."""
        if self._nv == 0:
            shape = (*np.broadcast_shapes(self.batch_shape, x.shape[:-1]), 0, 0)
            return tuple(self._read_only(np.zeros(shape)) for _ in range(3))
        out = quiet(compute, x, wrenches, self._gravity, singular=(self.model, self.mass_matrix))
        check_all_finite(out, what, self.model.name, self._input_note)
        return tuple(self._read_only(v) for v in out)

    @staticmethod
    def _read_only(value: object) -> np.ndarray:
        """The engine's result, read-only (engine hooks return fresh arrays: no copy)."""
        if type(value) is not np.ndarray or value.dtype != np.float64:
            value = np.array(value, dtype=np.float64)
        value.setflags(False)  # read-only (write=False; positional: a third of the keyword call's cost)
        return value

    def _input_note(self) -> str:
        """Where a non-finite result comes from (:func:`bridge.dynamics.result_checks.input_note`)."""
        try:
            st = self.state
            parts = {
                "world_H_base": st.world_H_base.matrix,
                "s": st.s,
                "base_velocity": st.base_velocity,
                "s_dot": st.s_dot,
                "gravity": self._gravity,
            }
            largest = {k: float(np.abs(v).max(initial=0)) for k, v in parts.items()}
        except BridgeError:  # pragma: no cover - no state
            largest = {}
        frozen = not self.model.floating and not self._n_dofs
        return input_note(largest, self.engine_name, frozen, self._precision)

    # ------------------------------------------------------------------ frames
    def frame_transform(self, frame: str) -> np.ndarray:
        """``world_H_frame`` (..., 4, 4)."""
        frame = self._frame(frame)
        return self._query(("X", frame), self._engine.frame_transform, frame)

    def frame_velocity(self, frame: str) -> np.ndarray:
        """Frame velocity (..., 6) in this representation (F, A or F[A])."""
        frame = self._frame(frame)
        return self._query(("v", frame), self._engine.frame_velocity, frame)

    def frame_jacobian(self, frame: str) -> np.ndarray:
        """Frame Jacobian (..., 6, nv): ``frame_velocity = J @ nu``."""
        if type(frame) is not str or frame not in self._frame_names:
            frame = self._frame(frame)
        return self._query(("J", frame), self._engine.frame_jacobian, frame, hot=True)

    def frame_bias_acc(self, frame: str) -> np.ndarray:
        """``J_dot @ nu`` (..., 6): the frame acceleration at zero generalized acceleration."""
        frame = self._frame(frame)
        return self._query(("Jdnu", frame), self._engine.frame_bias_acc, frame)

    def frame_jacobian_derivative(self, frame: str) -> np.ndarray:
        """``J_dot`` (..., 6, nv): the time derivative of :meth:`frame_jacobian` along the current
        motion, in this representation (rows in F, A or F[A], columns for ``nu``), so that
        ``J_dot @ nu == frame_bias_acc(frame)`` (the iDynTree/Pinocchio meaning of the matrix; for
        MIXED it includes the change of the base columns with the base orientation)."""
        frame = self._frame(frame)
        return self._query(("Jdot", frame), self._derived["frame_jacobian_derivative"], frame)

    @owned
    def frame_acceleration(self, frame: str, base_acc: object, s_ddot: object) -> np.ndarray:
        """Time derivative of :meth:`frame_velocity` (..., 6) for the acceleration ``[base_acc; s_ddot]``
        (iDynTree's ``getFrameAcc`` semantics in every representation)."""
        frame = self._frame(frame)
        self._require_state()
        nu_dot = self._nu_dot(base_acc, s_ddot)
        return _finite(self._engine.frame_acceleration(frame, nu_dot), f"frame_acceleration({frame!r})", self)

    # ------------------------------------------------------------------ centre of mass
    def com_position(self) -> np.ndarray:
        """Centre of mass in world coordinates (..., 3)."""
        return self._query("com", self._engine.com_position)

    def com_velocity(self) -> np.ndarray:
        """Centre-of-mass velocity in world coordinates (..., 3)."""
        return self._query("vcom", self._engine.com_velocity)

    def com_jacobian(self) -> np.ndarray:
        """(..., 3, nv) with ``com_velocity = J @ nu``."""
        return self._query("Jcom", self._engine.com_jacobian)

    # ------------------------------------------------------------------ momentum
    def centroidal_momentum(self) -> np.ndarray:
        """Centroidal momentum (..., 6), linear first: the total linear momentum and the angular
        momentum about the centre of mass G, expressed in G[B] (BODY) or G[A] (INERTIAL, MIXED),
        iDynTree's ``getCentroidalTotalMomentum`` convention (Pinocchio's ``hg`` is G[A])."""

        def compute() -> np.ndarray:
            h = self._query("hG[A]", self._engine.centroidal_momentum)
            if not self._base_axes:
                return h
            # G[A] -> G[B]: the dual action of G[B]_H_G[A], a pure rotation R^T
            A_R_B = Transform.from_rotation_translation(self.state.world_H_base.rotation, check=False)
            return (A_R_B.inverse() @ Force(h)).vector

        return self._query("hG", compute)

    def total_momentum(self) -> np.ndarray:
        """Total momentum (..., 6), linear first, expressed in B (BODY), the world A (INERTIAL) or
        B[A] (MIXED), B the base link's frame (iDynTree's ``getLinearAngularMomentum``). For a
        floating base it is the first six rows of ``mass_matrix() @ nu``."""

        return self._query("hB", self._derived["total_momentum"])

    def centroidal_momentum_matrix(self) -> np.ndarray:
        """Centroidal momentum matrix (..., 6, nv): ``centroidal_momentum() == CMM @ nu``, rows in
        G[B] (BODY) or G[A] (INERTIAL, MIXED) as :meth:`centroidal_momentum`, columns in this
        representation (iDynTree's ``getCentroidalTotalMomentumJacobian``)."""

        def compute() -> np.ndarray:
            A = self._derived["centroidal_momentum_matrix"]()
            if not self._base_axes:
                return A
            R_T = np.swapaxes(self.state.world_H_base.rotation, -1, -2)[..., None, :, :]
            rows = np.stack([A[..., :3, :], A[..., 3:, :]], axis=-3)  # (..., 2, 3, nv)
            return (R_T @ rows).reshape(*rows.shape[:-3], 6, A.shape[-1])

        return self._query("CMM", compute)

    def total_momentum_jacobian(self) -> np.ndarray:
        """(..., 6, nv) with ``total_momentum() == J @ nu``, rows in B, A or B[A] as
        :meth:`total_momentum` (iDynTree's ``getLinearAngularMomentumJacobian``; for a floating base
        the first six rows of the mass matrix)."""

        return self._query("Jmomentum", self._derived["total_momentum_jacobian"])

    def coriolis_matrix(self) -> np.ndarray:
        """Coriolis matrix C (..., nv, nv) in this representation: ``C nu + g == h`` and
        ``M_dot - C - C^T == 0`` (M_dot the time derivative of :meth:`mass_matrix` along the motion).
        From another convention's C: ``T^T (C T + M T_dot)`` (Pinocchio's ``computeCoriolisMatrix``
        after conversion)."""
        return self._query("C", self._derived["coriolis_matrix"])

    def coriolis_forces(self) -> np.ndarray:
        """``C nu`` (..., nv): the bias forces without gravity, ``h - g``."""
        return self._query("Cnu", self._derived["coriolis_forces"])

    def relative_transform(self, frame: str, reference: str) -> np.ndarray:
        """``reference_H_frame`` (..., 4, 4) (iDynTree's ``getRelativeTransform(reference, frame)``)."""
        frame, reference = self._frame(frame), self._frame(reference)
        return self._query(("relX", frame, reference), self._derived["relative_transform"], frame, reference)

    def relative_jacobian(self, frame: str, reference: str) -> np.ndarray:
        """(..., 6, n): the velocity of ``frame`` F relative to ``reference`` R is ``J @ s_dot``,
        expressed in F (BODY), R (INERTIAL) or F[R] (MIXED): iDynTree's
        ``getRelativeJacobian(reference, frame)`` in each representation. It depends on the joints
        only (the base velocity moves both frames alike)."""
        frame, reference = self._frame(frame), self._frame(reference)
        return self._query(("relJ", frame, reference), self._derived["relative_jacobian"], frame, reference)

    def __repr__(self) -> str:
        return (
            f"KinDyn(model={self.model.name!r}, engine={self.engine_name!r}, "
            f"representation={self.representation.value!r})"
        )
