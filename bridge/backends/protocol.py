"""The engine protocol: what every engine behind :class:`bridge.KinDyn` implements.

Defaults of its optional hooks are in :class:`bridge.backends.base.EngineBase`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np

from bridge.conventions.state import Representation, State
from bridge.model.model import Model

__all__ = ["Engine"]


class Engine(Protocol):  # pragma: no cover - documentation of the protocol
    """What an engine implements. Arrays carry the state's batch axes in front.

    The hooks ``state``, ``set_single_state``, ``inverse_dynamics_single``,
    ``forward_dynamics_single``, ``inverse_dynamics_derivatives_single``, ``total_momentum``, the
    derived quantities (centroidal momentum matrix, total momentum Jacobian, Coriolis matrix and
    forces, relative transform and Jacobian) and ``inverse_dynamics_derivatives`` /
    ``forward_dynamics_derivatives`` have defaults in :class:`bridge.backends.base.EngineBase`.
    """

    name: str
    batch_shape: tuple[int, ...]

    def __init__(self, model: Model, representation: Representation) -> None: ...
    def set_state(self, state: State, gravity: np.ndarray) -> None: ...
    @property
    def state(self) -> State: ...  # the current state (rebuilt by engines with a hot path)
    def set_single_state(
        self, world_H_base: object, s: object, base_velocity: object, s_dot: object, gravity: np.ndarray
    ) -> bool: ...  # one unbatched state as arrays; False (nothing changed) if not one valid state
    def inverse_dynamics_single(self, base_acc: object, s_ddot: object) -> np.ndarray | None: ...
    def forward_dynamics_single(self, t: np.ndarray) -> np.ndarray | None: ...
    def inverse_dynamics_derivatives_single(
        self, base_acc: object, s_ddot: object
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None: ...  # read-only arrays, or None
    def mass_matrix(self) -> np.ndarray: ...
    def bias_forces(self) -> np.ndarray: ...
    def gravity_forces(self) -> np.ndarray: ...
    def inverse_dynamics(
        self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None
    ) -> np.ndarray: ...
    def forward_dynamics(self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None) -> np.ndarray: ...
    def frame_transform(self, frame: str) -> np.ndarray: ...
    def frame_velocity(self, frame: str) -> np.ndarray: ...
    def frame_jacobian(self, frame: str) -> np.ndarray: ...
    def frame_bias_acc(self, frame: str) -> np.ndarray: ...
    def frame_acceleration(self, frame: str, nu_dot: np.ndarray) -> np.ndarray: ...
    def com_position(self) -> np.ndarray: ...
    def com_velocity(self) -> np.ndarray: ...
    def com_jacobian(self) -> np.ndarray: ...
    def centroidal_momentum(self) -> np.ndarray: ...  # (..., 6) in G[A], linear first
    def total_momentum(self) -> np.ndarray | None: ...  # in B / A / B[A]; None: derived by KinDyn
    # the quantities after M and h: exact generic defaults in EngineBase (bridge.backends.generic)
    def centroidal_momentum_matrix(self) -> np.ndarray: ...  # (..., 6, nv), rows in G[A]
    def total_momentum_jacobian(self) -> np.ndarray | None: ...  # rows in B / A / B[A]; None: derived
    def coriolis_matrix(self) -> np.ndarray: ...  # (..., nv, nv): C nu + g = h, M_dot = C + C^T
    def coriolis_forces(self) -> np.ndarray: ...  # C nu (..., nv)
    def frame_jacobian_derivative(self, frame: str) -> np.ndarray: ...  # (..., 6, nv) d/dt frame_jacobian
    def relative_transform(self, frame: str, reference: str) -> np.ndarray: ...  # reference_H_frame
    def relative_jacobian(self, frame: str, reference: str) -> np.ndarray: ...  # (..., 6, n)
    def inverse_dynamics_derivatives(
        self, nu_dot: np.ndarray, wrenches: Mapping[str, np.ndarray] | None, gravity: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...  # (dtau_dq, dtau_dnu, dtau_dnudot)
    def forward_dynamics_derivatives(
        self, tau: np.ndarray, wrenches: Mapping[str, np.ndarray] | None, gravity: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...  # (dnudot_dq, dnudot_dnu, dnudot_dtau)
