"""Fixtures of the convention tests: random models with a floating and a fixed base, and the
registry-driven list of conventions (every registered one, read at collection time)."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
import bridge.backends.registry
from tests.helpers import small_model, wide_model


@pytest.fixture(scope="package", params=["floating", "fixed", "wide"])
def model(request: pytest.FixtureRequest) -> bridge.Model:
    """A random model (continuous joints, shuffled DOF order, massless links); "wide": planar, ball
    and free joints too, on a fixed base (several free bodies, a free joint below the root)."""
    if request.param == "wide":
        return wide_model(9, floating=False)
    m = bridge.random_model(7, seed=11)
    return m if request.param == "floating" else m.with_fixed_base()


@pytest.fixture(scope="package", params=["floating", "fixed"])
def small(request: pytest.FixtureRequest) -> bridge.Model:
    """Every joint kind, joint-axis origins and a DOF order that is not depth-first."""
    return small_model(np.random.default_rng(7), request.param == "floating")
