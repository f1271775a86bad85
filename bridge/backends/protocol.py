"""The engine protocol: what every engine behind :class:`bridge.KinDyn` implements, the quantities
derived from it, and the optional capabilities an engine may declare.

**Required core** (:class:`Engine`): the state (``set_state``, ``set_single_state``, ``state``), the
joint-space dynamics (``mass_matrix``, ``bias_forces``, ``gravity_forces``, ``inverse_dynamics``,
``forward_dynamics``), the frame quantities (``frame_transform``, ``frame_velocity``,
``frame_jacobian``, ``frame_bias_acc``, ``frame_acceleration``), the centre of mass
(``com_position``, ``com_velocity``, ``com_jacobian``) and the centroidal momentum. Arrays carry the
state's batch axes in front.

**Derived quantities** (:data:`DERIVED_QUANTITIES`: centroidal momentum matrix, total momentum and
its Jacobian, Coriolis matrix and forces, relative transform and Jacobian, frame Jacobian
derivative) follow from the core: each one's exact generic construction is the function of the
same name in :mod:`bridge.backends.generic` (the one place), taking the engine first. An engine
whose library computes one natively names it in its class's ``NATIVE_QUANTITIES`` and defines the
method; :func:`derived` returns the engine's method or the generic function bound to the engine,
looked up once (KinDyn does it when it is built).

**Optional capabilities** are declared, by name, in the engine class's ``CAPABILITIES`` (a
frozenset) and found by :func:`capability`, once: they have no default, and an engine derived from
another one declares the set it keeps. The names and what each one is are in :data:`CAPABILITIES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Protocol

import numpy as np

from bridge.backends import generic
from bridge.conventions.state import Representation, State
from bridge.errors import UnknownNameError
from bridge.model.model import Model

__all__ = ["CAPABILITIES", "DERIVED_QUANTITIES", "Engine", "capability", "derived"]

#: the quantities derived from the core (name -> what the method returns); the generic construction
#: of each is ``bridge.backends.generic.<name>(engine, ...)``
DERIVED_QUANTITIES: dict[str, str] = {
    "centroidal_momentum_matrix": "() -> (..., 6, nv): A nu is the centroidal momentum in G[A], linear first",
    "total_momentum": "() -> (..., 6): the total momentum in B / A / B[A] (the representation's base frame)",
    "total_momentum_jacobian": "() -> (..., 6, nv): J nu is total_momentum()",
    "coriolis_matrix": "() -> (..., nv, nv): C nu + g = h, M_dot = C + C^T",
    "coriolis_forces": "() -> (..., nv): C nu = h - g",
    "frame_jacobian_derivative": "(frame) -> (..., 6, nv): d/dt frame_jacobian(frame) along the motion",
    "relative_transform": "(frame, reference) -> (..., 4, 4): reference_H_frame",
    "relative_jacobian": (
        "(frame, reference) -> (..., 6, n): F's velocity relative to R per unit s_dot, in F / R / F[R]"
    ),
}

#: the optional capabilities an engine may declare (name -> what the attribute is)
CAPABILITIES: dict[str, str] = {
    "inverse_dynamics_single": (
        "method (base_acc, s_ddot) -> tau (nv,) or None: inverse dynamics of one unbatched state from "
        "KinDyn's raw arguments, no external wrenches (None: KinDyn takes the general path)"
    ),
    "forward_dynamics_single": (
        "method (t (n,)) -> nu_dot (nv,) or None: forward dynamics of one unbatched state for joint "
        "torques (None: the general path)"
    ),
    "body_derivatives": (
        "object: the library's analytical derivatives of its own dynamics in a BODY-based convention "
        "(the duck-typed interface of bridge.derivatives.select.BodyDerivatives); bridge.derivatives "
        "applies the chain rule to the representation. Without it, derivatives are differences"
    ),
}


def capability(engine: object, name: str) -> object | None:
    """The engine's attribute ``name`` (a bound method, or an object) when its class declares the
    capability in ``CAPABILITIES``, else None. Look it up once, not per call."""
    if name not in getattr(type(engine), "CAPABILITIES", ()):
        return None
    return getattr(engine, name)


def derived(engine: object, name: str) -> Callable[..., np.ndarray]:
    """The callable computing the derived quantity ``name`` (:data:`DERIVED_QUANTITIES`) for
    ``engine``: its own method when its class names it in ``NATIVE_QUANTITIES``, else the generic
    construction :func:`bridge.backends.generic.<name>` bound to the engine. Look it up once, not per
    call."""
    if name not in DERIVED_QUANTITIES:
        raise UnknownNameError("derived quantity", name, DERIVED_QUANTITIES)
    if name in getattr(type(engine), "NATIVE_QUANTITIES", ()):
        return getattr(engine, name)
    return partial(getattr(generic, name), engine)


class Engine(Protocol):  # pragma: no cover - documentation of the protocol
    """The required core of an engine (see the module docstring for the derived quantities and the
    optional capabilities)."""

    name: str
    model: Model
    representation: Representation
    batch_shape: tuple[int, ...]
    #: the optional capabilities this engine offers (names of :data:`CAPABILITIES`)
    CAPABILITIES: frozenset[str]
    #: the derived quantities its library computes natively (names of :data:`DERIVED_QUANTITIES`)
    NATIVE_QUANTITIES: frozenset[str]

    def __init__(self, model: Model, representation: Representation) -> None: ...
    def set_state(self, state: State, gravity: np.ndarray) -> None: ...
    @property
    def state(self) -> State: ...  # the current state (rebuilt by engines with a hot path)
    def set_single_state(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object, gravity: np.ndarray
    ) -> bool: ...  # one unbatched state as arrays; False (nothing changed) if not one valid state
    def mass_matrix(self) -> np.ndarray: ...  # (..., nv, nv)
    def bias_forces(self) -> np.ndarray: ...  # (..., nv)
    def gravity_forces(self) -> np.ndarray: ...  # (..., nv)
    def inverse_dynamics(
        self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None
    ) -> np.ndarray: ...  # (..., nv)
    def forward_dynamics(
        self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None
    ) -> np.ndarray: ...  # (..., nv)
    def frame_transform(self, frame: str) -> np.ndarray: ...  # world_H_frame (..., 4, 4)
    def frame_velocity(self, frame: str) -> np.ndarray: ...  # (..., 6) in F / A / F[A]
    def frame_jacobian(self, frame: str) -> np.ndarray: ...  # (..., 6, nv), rows in F / A / F[A]
    def frame_bias_acc(self, frame: str) -> np.ndarray: ...  # J_dot nu (..., 6)
    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray: ...  # (..., 6)
    def com_position(self) -> np.ndarray: ...  # (..., 3) in A
    def com_velocity(self) -> np.ndarray: ...  # (..., 3) in A
    def com_jacobian(self) -> np.ndarray: ...  # (..., 3, nv)
    def centroidal_momentum(self) -> np.ndarray: ...  # (..., 6) in G[A], linear first
