"""The axioms of the change of variables, for every registered convention and every pair of them.

The conventions are read from the registry at collection time (:func:`bridge.convention_names`),
so a convention is tested by being registered; the checks themselves are in
:mod:`tests.conventions.axioms`. Random models (floating and fixed base) and random single states
in each neutral representation, seeded.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bridge
import bridge.backends.registry
from bridge.conventions.convert import convention_names, velocity_change
from tests.conventions import axioms
from tests.helpers import random_state

NAMES = convention_names()
PAIRS = list(itertools.product(NAMES, NAMES))


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_axioms_of_every_pair(model: bridge.Model, a: str, b: str) -> None:
    axioms.resolved(a, b)
    axioms.accepted(model, a, b)
    for state in axioms.states(model, seed=100 + PAIRS.index((a, b))):
        for check in axioms.AXIOMS.values():
            check(model, state, a, b)
        for name in (a, b):
            axioms.check_declared_joint_frames(model, state, name)


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_composition(small: bridge.Model, a: str, b: str) -> None:
    axioms.resolved(a, b)
    (state,) = axioms.states(small, seed=4, count=1)[2:]
    for c in NAMES:
        axioms.resolved(c)
        axioms.check_composition(small, state, a, b, c)


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_axioms_on_the_small_model(small: bridge.Model, a: str, b: str) -> None:
    axioms.resolved(a, b)
    rng = np.random.default_rng(4)
    for _ in range(3):
        state = random_state(small, rng, "mixed")
        axioms.check_T_dot(small, state, a, b)
        axioms.check_invertible(small, state, a, b)


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_batched_structured_maps_equal_dense(small: bridge.Model, a: str, b: str) -> None:
    axioms.resolved(a, b)
    state = random_state(small, np.random.default_rng(7), "inertial", batch=(2,))
    axioms.check_structured_equals_dense(small, state, a, b, seed=7)
    # and the batch equals its samples
    cov = velocity_change(small, state, a, b)
    T = np.broadcast_to(cov.matrix(), (2, small.nv, small.nv))
    Td = np.broadcast_to(cov.derivative(), (2, small.nv, small.nv))
    for i in range(2):
        single = bridge.State(
            state.world_H_base[i], state.s[i], state.base_velocity[i], state.s_dot[i], "inertial"
        )
        one = velocity_change(small, single, a, b)
        np.testing.assert_allclose(T[i], one.matrix(), atol=1e-15)
        np.testing.assert_allclose(Td[i], one.derivative(), atol=1e-15)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("floating", [True, False])
def test_axioms_sweep(seed: int, floating: bool) -> None:
    """Every axiom, declared frame and round trip of every pair on larger random models."""
    model = bridge.random_model(12, seed=seed, floating=floating)
    names = [n for n in NAMES if axioms.available(n)]
    for i, (a, b) in enumerate(itertools.product(names, names)):
        state = axioms.states(model, seed=1000 * seed + i, count=1)[i % 3]
        axioms.check_all(model, state, a, b)
