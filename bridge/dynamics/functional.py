"""Stateless dynamics for scripts: one question, one call, no ``set_state``.

Every :class:`~bridge.dynamics.kindyn.KinDyn` query has a function of the same name taking the model and a
:class:`~bridge.conventions.state.State` first::

    M = bridge.mass_matrix(model, state)                       # engine="pinocchio"
    C = bridge.coriolis_matrix(model, state, engine="idyntree")
    J = bridge.frame_jacobian(model, state, "l_sole", engine="featherstone")
    tau = bridge.inverse_dynamics(model, state, base_acc, s_ddot, gravity=(0, 0, -9.81))
    dtau_dq, dtau_dnu, M = bridge.inverse_dynamics_derivatives(model, state, base_acc, s_ddot)

The answer is in the state's representation (``state.representation``), with the state's batch
axes; the remaining positional and keyword arguments are those of the KinDyn method. Each call sets
the state on a KinDyn kept per thread, model, engine and representation (the eight most recently
used: the engine is built once per model, not once per call) and returns what that KinDyn returns
(read-only arrays). Code that asks many questions of one state should keep its own KinDyn: its
results are cached per state.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from bridge.conventions.state import State
from bridge.dynamics.kindyn import KinDyn
from bridge.dynamics.queries import QUERIES
from bridge.errors import InvalidValueError
from bridge.model.model import Model

__all__ = ["QUERIES", "kindyn_at", *QUERIES]

_local = threading.local()
_CACHED = 8  # KinDyns kept per thread (the most recently used)


def kindyn_at(model: Model, state: State, engine: str = "pinocchio", gravity: object = None) -> KinDyn:
    """A KinDyn of ``engine`` in ``state.representation`` holding ``state`` (reused per thread,
    model, engine and representation: the next call with the same keys moves it to a new state)."""
    if not isinstance(model, Model):
        raise InvalidValueError(f"model: expected a bridge.Model, got {type(model).__name__}")
    if not isinstance(state, State):
        raise InvalidValueError(
            f"state: expected a bridge.State (bridge.State(world_H_base, s, base_velocity, s_dot, "
            f"representation)), got {type(state).__name__}"
        )
    cache = getattr(_local, "kindyns", None)
    if cache is None:
        cache = _local.kindyns = OrderedDict()
    key = (id(model), str(engine).strip().lower(), state.representation)
    kd = cache.get(key)
    if kd is None or kd.model is not model:
        kd = KinDyn(model, engine=engine, representation=state.representation)
        cache[key] = kd
        while len(cache) > _CACHED:  # a KinDyn holds its model: keep only the most recent few
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    kd.set_robot_state(state, gravity)
    return kd


def _query(name: str) -> Callable[..., np.ndarray]:
    method = getattr(KinDyn, name)

    def query(
        model: Model,
        state: State,
        *args: object,
        engine: str = "pinocchio",
        gravity: object = None,
        **kwargs: object,
    ) -> np.ndarray:
        return getattr(kindyn_at(model, state, engine, gravity), name)(*args, **kwargs)

    query.__name__ = query.__qualname__ = name
    query.__module__ = __name__
    summary = (method.__doc__ or "").strip()
    query.__doc__ = (
        f'``KinDyn.{name}`` at ``state`` without a KinDyn: ``{name}(model, state, *args, engine="pinocchio", '
        f"gravity=None, **kwargs)``, in ``state.representation`` (``gravity`` None: the model's, "
        f"its file's or (0, 0, -9.81)).\n\n"
        f"KinDyn.{name}: {summary}"
    )
    return query


mass_matrix = _query("mass_matrix")
bias_forces = _query("bias_forces")
gravity_forces = _query("gravity_forces")
coriolis_matrix = _query("coriolis_matrix")
coriolis_forces = _query("coriolis_forces")
inverse_dynamics = _query("inverse_dynamics")
forward_dynamics = _query("forward_dynamics")
frame_transform = _query("frame_transform")
frame_velocity = _query("frame_velocity")
frame_jacobian = _query("frame_jacobian")
frame_bias_acc = _query("frame_bias_acc")
frame_acceleration = _query("frame_acceleration")
relative_transform = _query("relative_transform")
relative_jacobian = _query("relative_jacobian")
com_position = _query("com_position")
com_velocity = _query("com_velocity")
com_jacobian = _query("com_jacobian")
centroidal_momentum = _query("centroidal_momentum")
centroidal_momentum_matrix = _query("centroidal_momentum_matrix")
total_momentum = _query("total_momentum")
total_momentum_jacobian = _query("total_momentum_jacobian")
frame_jacobian_derivative = _query("frame_jacobian_derivative")
inverse_dynamics_derivatives = _query("inverse_dynamics_derivatives")  # a tuple of three (..., nv, nv)
forward_dynamics_derivatives = _query("forward_dynamics_derivatives")  # a tuple of three (..., nv, nv)
