"""No engine mutates a library object that another KinDyn or another state can see.

Engines set gravity, a fixed base's pose and the state into their library's objects (a Pinocchio
model's gravity and root placements, MuJoCo's ``opt.gravity`` and base body, Drake's gravity field
and weld frame, Newton's per-world gravity and root joints): if two KinDyns shared such an object,
or a batch shared it between its states, one would compute with the other's gravity or pose (Newton
did: its model was cached per bridge model, and gravity forces came out 90 % off). Property: for
every installed engine, KinDyns on the same model with different gravities and base poses, set and
queried interleaved, and one batch with a gravity and a pose per state, give what a fresh KinDyn
gives for each case alone (1e-10 relative; Newton, float32, 1e-4).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge
from bridge.backends import registry
from tests.dynamics._models import MODELS
from tests.helpers import assert_close, random_state

ENGINES = registry.available_engines()  # every installed engine, jaxsim too
GRAVITY = st.lists(st.floats(-20.0, 20.0), min_size=3, max_size=3).map(np.array)


def _rtol(engine: str) -> float:
    return max(1e-10, registry.library(engine).rtol)


def _answers(kd: bridge.KinDyn, a: np.ndarray, tau: np.ndarray) -> dict[str, np.ndarray]:
    """What depends on gravity and on the base pose, for the KinDyn's current state."""
    model = kd.model
    base_acc = a[..., :6] if model.floating else None
    return {
        "gravity_forces": kd.gravity_forces(),
        "bias_forces": kd.bias_forces(),
        "inverse_dynamics": kd.inverse_dynamics(base_acc, a[..., model.nv - model.n_dofs :]),
        "forward_dynamics": kd.forward_dynamics(tau),
        "frame_transform": kd.frame_transform("tool"),
        "com_position": kd.com_position(),
    }


def _stack(states: list[bridge.State]) -> bridge.State:
    return bridge.State(
        bridge.Transform(np.stack([s.world_H_base.matrix for s in states])),
        np.stack([s.s for s in states]),
        np.stack([s.base_velocity for s in states]),
        np.stack([s.s_dot for s in states]),
        "mixed",
    )


def _case(kd: bridge.KinDyn, state: bridge.State, g: np.ndarray, copies: int) -> None:
    """``kd`` set to one case: ``state`` and gravity ``g`` (as a batch of ``copies`` copies when
    ``copies > 1``: jaxsim compiles per batch size, so that every call of its test has one size)."""
    if copies > 1:
        state, g = _stack([state] * copies), np.stack([g] * copies)
    kd.set_robot_state(state, g)


def _first(answers: dict, copies: int) -> dict:
    return {k: v[0] for k, v in answers.items()} if copies > 1 else answers


def _check(engine: str, floating: bool, gravities: list[np.ndarray], seed: int, copies: int = 1) -> None:
    rng = np.random.default_rng(seed)
    model = MODELS[floating]
    k = len(gravities)
    states = [random_state(model, rng) for _ in range(k)]
    a = rng.normal(size=(k, model.nv))
    tau = rng.normal(size=(k, model.n_dofs))
    expected = []
    for i in range(k):  # a fresh KinDyn per case
        kd = bridge.KinDyn(model, engine=engine)
        _case(kd, states[i], gravities[i], copies)
        expected.append(_first(_answers(kd, a[i], tau[i]), copies))
    rtol = _rtol(engine)
    # k KinDyns on one model: every state set first, then every query asked, in turn
    kds = [bridge.KinDyn(model, engine=engine) for _ in range(k)]
    for kd, state, g in zip(kds, states, gravities, strict=True):
        _case(kd, state, g, copies)
    got = [_first(_answers(kd, a[i], tau[i]), copies) for i, kd in enumerate(kds)]
    for i in range(k):
        for name, value in got[i].items():
            assert_close(value, expected[i][name], rtol, f"{engine}: KinDyn {i} of {k}, interleaved: {name}")
    # one batch, a gravity and a base pose per state
    kd = bridge.KinDyn(model, engine=engine)
    kd.set_robot_state(_stack(states), np.stack(gravities))
    for name, value in _answers(kd, a, tau).items():
        for i in range(k):
            assert_close(value[i], expected[i][name], rtol, f"{engine}: state {i} of a batch: {name}")


@pytest.mark.parametrize("floating", [True, False], ids=["floating", "fixed"])
@pytest.mark.parametrize("engine", ENGINES)
def test_kindyns_and_states_do_not_share_gravity_or_base_pose(engine: str, floating: bool) -> None:
    # (jaxsim compiles per batch size, for tens of seconds: one example, every call two states)
    slow = engine == "jaxsim"

    @settings(max_examples=1 if slow else 6)
    @given(gravities=st.lists(GRAVITY, min_size=2, max_size=2 if slow else 3), seed=st.integers(0, 2**16))
    def check(gravities: list[np.ndarray], seed: int) -> None:
        _check(engine, floating, gravities, seed, copies=2 if slow else 1)

    check()
