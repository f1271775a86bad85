"""The one picker of the derivatives (bridge.derivatives.select): what each engine and representation
gets, and the capability lookup it rests on (bridge.backends.protocol.capability)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import bridge
import bridge.derivatives.select as select
from bridge.backends.protocol import CAPABILITIES, capability
from tests.helpers import random_state, small_model

MIMIC_URDF = str(Path(__file__).resolve().parents[2] / "models" / "mimic_offsets.urdf")


def _picked(model, engine: str, rep: str) -> str:
    """The strategy of a fresh KinDyn after one derivative call."""
    kd = bridge.KinDyn(model, engine, rep)
    kd.set_robot_state(random_state(model, np.random.default_rng(0), rep))
    kd.inverse_dynamics_derivatives(*(np.zeros(6) if model.floating else None, np.zeros(model.n_dofs)))
    return kd._derivatives.strategy


@pytest.mark.parametrize("numba", [True, False])
def test_pinocchio_strategies(numba: bool, monkeypatch) -> None:
    if not numba:
        monkeypatch.setattr(select, "_KERNELS", [None])
    elif select.compiled_kernels() is None:
        pytest.skip("no compiled kernels (numba missing or BRIDGE_NUMBA=0)")
    rng = np.random.default_rng(2)
    floating, fixed = small_model(rng, True), small_model(rng, False)
    chain = "analytical+compiled" if numba else "analytical+numpy"
    assert _picked(floating, "pinocchio", "mixed") == chain
    assert _picked(floating, "pinocchio", "inertial") == chain
    assert _picked(floating, "pinocchio", "body") == "analytical+permutation"
    assert _picked(fixed, "pinocchio", "mixed") == "analytical+permutation"


def test_analytical_before_the_first_call() -> None:
    kd = bridge.KinDyn(small_model(np.random.default_rng(3)), "pinocchio", "mixed")
    assert kd._derivatives.strategy == "analytical"


@pytest.mark.parametrize("engine", ["featherstone", "idyntree"])
def test_other_engines_take_differences(engine: str) -> None:
    model = small_model(np.random.default_rng(4))
    assert _picked(model, engine, "mixed") == "differences"


def test_capability_lookup() -> None:
    """Declared capabilities are found (bound to the engine), undeclared ones are None."""
    model = small_model(np.random.default_rng(5))
    pin_engine = bridge.KinDyn(model, "pinocchio", "mixed")._engine
    for name in CAPABILITIES:
        assert capability(pin_engine, name) is not None
    assert capability(pin_engine, "inverse_dynamics_single").__self__ is pin_engine
    assert capability(pin_engine, "no_such_capability") is None
    other = bridge.KinDyn(model, "featherstone", "mixed")._engine
    assert all(capability(other, name) is None for name in CAPABILITIES)


def test_pinocchio_mimic_engine_takes_differences() -> None:
    """Pinocchio's derivative algorithms take no mimic joints: the native mimic engine does not
    declare them (nor its aba), so derivatives are differences."""
    from bridge.backends.pinocchio.coupled import PinocchioMimicEngine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.NonPhysicalInertiaWarning)
        model = bridge.load_urdf(MIMIC_URDF, mimic="coupled")
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    assert isinstance(kd._engine, PinocchioMimicEngine)
    assert capability(kd._engine, "body_derivatives") is None
    assert capability(kd._engine, "forward_dynamics_single") is None
    assert capability(kd._engine, "inverse_dynamics_single") is not None
    assert _picked(model, "pinocchio", "mixed") == "differences"
