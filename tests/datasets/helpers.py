"""What the datasets tests share: the conventions with a configuration, random native states (with
quaternions of both signs), a float64 comparison."""

from __future__ import annotations

import numpy as np

from bridge.conventions.native_state import from_native_state, to_native_state
from bridge.conventions.registry import convention
from bridge.conventions.state import State
from bridge.model.model import Model
from bridge.spatial import Transform
from bridge.validation.sampling import random_states
from tests.helpers import assert_close

#: every registered library convention with a configuration layout (q)
LIBRARIES = ("pinocchio", "mujoco", "drake", "featherstone", "newton", "jaxsim")
#: the neutral representations (bridge's State layout)
NEUTRAL = ("body", "inertial", "mixed")


def quaternion_columns(model: Model, conv: str) -> list[list[int]]:
    """The q indices of each unit quaternion (base, ball and free joints) of ``conv``'s layout."""
    from bridge.datasets.layout import layout

    lay = layout(model, conv)
    out = []
    for at, owner in enumerate(lay.owners):
        if {"qw", "qx", "qy", "qz"} <= set(owner.q):
            start = lay.q_offsets[at]
            out.append([start + owner.q.index(m) for m in ("qw", "qx", "qy", "qz")])
    return out


def native_states(
    model: Model, n: int, conv: str, seed: int = 0, flip: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(q, v, a, tau)`` (n, ...) of random states in ``conv``'s layout; ``flip``: every other
    state's quaternions negated (the same rotations, the other sign)."""
    rng = np.random.default_rng(seed)
    state = random_states(model, n, rng)
    if convention(conv).configuration is None:  # bridge's State: [p, quaternion (w, x, y, z), s], nu
        state = state.to(conv)
        q = np.concatenate(
            [state.world_H_base.translation, state.world_H_base.as_quaternion_wxyz(), state.s], -1
        )
        q, v = (q, state.nu) if model.floating else (np.array(state.s), state.s_dot)
    else:
        q, v = to_native_state(model, state, convention(conv))
    q = np.array(q)
    if flip:
        for idx in quaternion_columns(model, conv):
            q[::2, idx] = -q[::2, idx]
    a = rng.normal(size=v.shape)
    tau = rng.normal(size=v.shape)
    return q, np.array(v), a, tau


def reference_state(model: Model, q: np.ndarray, v: np.ndarray, conv: str) -> State:
    """The State (BODY) of ``(q, v)`` in ``conv``'s layout, read by bridge's own
    ``from_native_state`` (a neutral layout: made directly)."""
    c = convention(conv)
    if c.configuration is not None:
        return from_native_state(model, q, v, c, "body")
    layout_arg = None if model.single_coordinate else model
    if not model.floating:
        H = np.broadcast_to(np.eye(4), (q.shape[0], 4, 4))
        return State(H, q, np.zeros((q.shape[0], 6)), v, conv, layout=layout_arg).to("body")
    H = Transform.from_quaternion_wxyz(q[:, 3:7], q[:, :3])
    return State(H, q[:, 7:], v[:, :6], v[:, 6:], conv, layout=layout_arg).to("body")


def close(actual: object, desired: object, rtol: float, what: str) -> None:
    """Entry by entry to ``rtol`` (relative to each array's largest entry, at least 1)."""
    assert_close(actual, desired, rtol, what, norm="max")
