"""A plan's conversion equals the reference change of variables (``change_of_variables`` at the state
``from_native_state`` reads) for every pair of conventions: velocities ``T v``, accelerations
``T a + T_dot v``, generalized forces ``T^-T tau``; configurations entry by entry, quaternion signs
kept."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import bridge
from bridge.conventions.change_of_variables import change_of_variables
from bridge.conventions.native_state import from_native_state, to_native_state
from bridge.conventions.registry import convention
from bridge.datasets.plan import StatePlan, neutral_state
from bridge.errors import BridgeError
from tests.datasets.helpers import (
    LIBRARIES,
    NEUTRAL,
    close,
    native_states,
    quaternion_columns,
    reference_state,
)
from tests.helpers import wide_model

_ALL = (*LIBRARIES, *NEUTRAL)


def _columns(x: np.ndarray) -> list[np.ndarray]:
    return list(np.ascontiguousarray(x.T))


def _check(model: bridge.Model, source: str, target: str, n: int = 64, seed: int = 0) -> None:
    q, v, a, tau = native_states(model, n, source, seed)
    cs, ct = convention(source), convention(target)
    plan = StatePlan(model, source, target)
    out = plan.convert({"q": _columns(q), "v": _columns(v), "a": _columns(a), "tau": _columns(tau)})
    state = reference_state(model, q, v, source)
    cov = change_of_variables(model, state, cs, ct)
    what = f"{model.name}: {source} -> {target}"
    close(np.stack(out["v"], -1), cov.velocity(v), 1e-13, f"{what} velocity")
    close(np.stack(out["a"], -1), cov.acceleration(a), 1e-13, f"{what} acceleration")
    close(np.stack(out["tau"], -1), cov.force(tau), 1e-13, f"{what} force")
    # the configuration is the same state: read back in the target, it is the source's state
    q_t = np.stack(out["q"], -1)
    if ct.configuration is not None:
        back = from_native_state(model, q_t, np.stack(out["v"], -1), ct, "body")
        close(back.world_H_base.matrix, state.world_H_base.matrix, 1e-13, f"{what} pose")
        close(back.nu, state.nu, 1e-13, f"{what} state velocity")
        ref, _ = to_native_state(model, state, ct)
        for idx in quaternion_columns(model, target):  # the signs: ours are the source's
            ref[:, idx] *= np.sign(ref[:, idx] * q_t[:, idx]).sum(-1, keepdims=True).clip(-1, 1)
        close(q_t, ref, 1e-13, f"{what} configuration")


@pytest.mark.parametrize(("source", "target"), list(itertools.permutations(_ALL, 2)))
def test_every_pair_equals_the_reference_on_a_humanoid(source: str, target: str) -> None:
    _check(bridge.load_urdf("iCubGazeboV2_5"), source, target)


@pytest.mark.parametrize("source", NEUTRAL)
def test_a_neutral_layout_is_bridges_state(source: str) -> None:
    model = bridge.load_urdf("solo12")
    q, v, a, _ = native_states(model, 20, "mujoco", 4)
    to_neutral = StatePlan(model, "mujoco", source)
    cols = to_neutral.convert({"q": _columns(q), "v": _columns(v), "a": _columns(a)})
    state = neutral_state(to_neutral, {f: np.stack(c, -1) for f, c in cols.items()})
    ref = from_native_state(model, q, v, convention("mujoco"), source)
    close(state.world_H_base.matrix, ref.world_H_base.matrix, 1e-14, "pose")
    close(state.s, ref.s, 1e-14, "s")
    close(state.nu, ref.nu, 1e-13, "nu")


@settings(max_examples=25)
@given(
    seed=st.integers(0, 10_000),
    pair=st.sampled_from(list(itertools.permutations(LIBRARIES, 2))),
    floating=st.booleans(),
)
def test_random_models_with_every_joint_kind(seed: int, pair: tuple[str, str], floating: bool) -> None:
    model = wide_model(seed, floating=floating)
    try:
        StatePlan(model, *pair)
    except BridgeError as exc:  # a library without these joints (jaxsim, newton) says so by name
        assert model.coordinates.describe() or "mimic" in str(exc), exc
        return
    _check(model, *pair, n=16, seed=seed)


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), pair=st.sampled_from(list(itertools.permutations(LIBRARIES, 2))))
def test_random_one_coordinate_models(seed: int, pair: tuple[str, str]) -> None:
    model = bridge.random_model(8, seed=seed, joint_kinds=("revolute", "continuous", "prismatic", "fixed"))
    _check(model, *pair, n=16, seed=seed)


def test_round_trips_keep_the_configuration_bit_for_bit() -> None:
    model = bridge.load_urdf("iCubGazeboV2_5")
    q, v, _, _ = native_states(model, 200, "mujoco", 1)
    there = StatePlan(model, "mujoco", "pinocchio").convert({"q": _columns(q), "v": _columns(v)})
    back = StatePlan(model, "pinocchio", "mujoco").convert(there)
    assert np.array_equal(np.stack(back["q"], -1), q)  # (w < 0 in every other state: signs kept)
    assert (q[::2, 3] < 0).any() or (q[::2, 3] == 0).all()
    close(np.stack(back["v"], -1), v, 1e-14, "velocity")


def test_continuous_joints_through_cos_sin_come_back_modulo_two_pi() -> None:
    model = bridge.random_model(6, seed=5, joint_kinds=("continuous",))
    q, v, _, _ = native_states(model, 50, "mujoco", 2)
    q[:, 7:] = np.random.default_rng(0).uniform(-3 * np.pi, 3 * np.pi, q[:, 7:].shape)
    pin = StatePlan(model, "mujoco", "pinocchio").convert({"q": _columns(q), "v": _columns(v)})
    back = np.stack(StatePlan(model, "pinocchio", "mujoco").convert(pin)["q"], -1)
    wrapped = np.angle(np.exp(1j * (back[:, 7:] - q[:, 7:])))
    assert np.abs(wrapped).max() < 1e-12
    assert np.all(np.abs(back[:, 7:]) <= np.pi)


@settings(max_examples=15)
@given(
    seed=st.integers(0, 10_000),
    pair=st.sampled_from(list(itertools.permutations(LIBRARIES, 2))),
    wide=st.booleans(),
)
def test_rows_and_columns_give_the_same_numbers(seed: int, pair: tuple[str, str], wide: bool) -> None:
    """``convert_rows`` (the arrays' path: one gather per row, computed entries as columns) equals
    ``convert`` (the files' path) bit for bit, with columns in a shuffled order."""
    kinds = ("revolute", "continuous", "prismatic", "fixed", *(("ball", "free", "planar") if wide else ()))
    model = bridge.random_model(7, seed=seed, joint_kinds=kinds)
    try:
        plan = StatePlan(model, *pair)
    except BridgeError:
        assume(False)
    q, v, a, tau = native_states(model, 24, pair[0], seed)
    rng = np.random.default_rng(seed)
    arrays, index = {}, {}
    for f, x in (("q", q), ("v", v), ("a", a), ("tau", tau)):
        perm = rng.permutation(x.shape[1])
        arrays[f] = x[:, perm]
        index[f] = tuple(np.argsort(perm))  # entry i is column index[f][i]
    out = {f: np.empty((24, plan.target.width(f))) for f in arrays}
    plan.convert_rows(arrays, index, out)
    columns = plan.convert({"q": _columns(q), "v": _columns(v), "a": _columns(a), "tau": _columns(tau)})
    for f, values in columns.items():
        assert np.array_equal(out[f], np.stack(values, -1)), f
