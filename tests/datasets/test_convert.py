"""``bridge.convert_states``: round trips between every pair of libraries exact to 1e-12 on a humanoid
and a quadruped (quaternion signs kept), columns matched by name, leading axes, and bad arrays named
by argument, state and column."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bridge
from bridge.datasets.convert import NativeStates, state_columns
from bridge.errors import DatasetError
from tests.datasets.helpers import LIBRARIES, close, native_states

_ROBOTS = ("iCubGazeboV2_5", "solo12")


def _round_trip(model: bridge.Model, n: int, source: str, target: str, repeat: int = 1) -> None:
    """``n`` random states (tiled ``repeat`` times) there and back; with ``repeat`` > 1 (a million
    states) without the generalized forces, to keep the test's memory near 2 GB."""
    q, v, a, tau = (np.tile(x, (repeat, 1)) for x in native_states(model, n, source, seed=n))
    tau = tau if repeat == 1 else None
    there = bridge.convert_states(model, q, v, source, target, acceleration=a, force=tau)
    back = bridge.convert_states(
        model, there.q, there.v, target, source, acceleration=there.acceleration, force=there.force
    )
    q2, v2, a2 = back.q, back.v, back.acceleration
    what = f"{model.name} {source} -> {target} -> {source} ({n * repeat} states)"
    close(q2, q, 1e-12, f"{what}: q")
    close(v2, v, 1e-12, f"{what}: v")
    close(a2, a, 1e-12, f"{what}: a")
    if tau is not None:
        close(back.force, tau, 1e-12, f"{what}: tau")
    # no (cos, sin) pair on these robots: the configuration, quaternion signs included, bit for bit
    assert np.array_equal(q2, q), what


@pytest.mark.parametrize("robot", _ROBOTS)
def test_mujoco_pinocchio_mujoco_on_100000_states(robot: str) -> None:
    _round_trip(bridge.load_urdf(robot), 100_000, "mujoco", "pinocchio")


@pytest.mark.parametrize(("source", "target"), list(itertools.combinations(LIBRARIES, 2)))
@pytest.mark.parametrize("robot", _ROBOTS)
def test_every_pair_of_libraries_round_trips(robot: str, source: str, target: str) -> None:
    _round_trip(bridge.load_urdf(robot), 5_000, source, target)


@pytest.mark.slow
@pytest.mark.parametrize(("source", "target"), list(itertools.combinations(LIBRARIES, 2)))
@pytest.mark.parametrize("robot", _ROBOTS)
def test_every_pair_of_libraries_round_trips_on_a_million_states(
    robot: str, source: str, target: str
) -> None:
    _round_trip(bridge.load_urdf(robot), 100_000, source, target, repeat=10)


def test_leading_axes_and_unpacking() -> None:
    model = bridge.load_urdf("solo12")
    q, v, a, _ = native_states(model, 12, "drake", 3)
    out = bridge.convert_states(
        model, q.reshape(3, 4, -1), v.reshape(3, 4, -1), "drake", "newton", acceleration=a.reshape(3, 4, -1)
    )
    assert isinstance(out, NativeStates) and len(out) == 3 and out.force is None
    q_n, v_n, a_n = out
    flat = bridge.convert_states(model, q, v, "drake", "newton", acceleration=a)
    assert q_n.shape == (3, 4, q.shape[1]) and np.array_equal(q_n.reshape(12, -1), flat.q)
    assert np.array_equal(v_n.reshape(12, -1), flat.v) and np.array_equal(
        a_n.reshape(12, -1), flat.acceleration
    )
    (only_q,) = bridge.convert_states(model, q, None, "drake", "mujoco")
    assert np.array_equal(only_q, bridge.convert_states(model, q, v, "drake", "mujoco").q)


def test_a_log_in_another_dof_order_is_matched_by_name() -> None:
    model = bridge.load_urdf("iCubGazeboV2_5")
    q, v, _, _ = native_states(model, 50, "mujoco", 7)
    names_q, names_v = state_columns(model, "mujoco", ("q",)), state_columns(model, "mujoco", ("v",))
    rng = np.random.default_rng(0)
    pq, pv = rng.permutation(len(names_q)), rng.permutation(len(names_v))
    shuffled = bridge.convert_states(
        model, q[:, pq], v[:, pv], "mujoco", "pinocchio",
        columns={"q": [names_q[i] for i in pq], "v": [names_v[i] for i in pv]},
    )  # fmt: skip
    plain = bridge.convert_states(model, q, v, "mujoco", "pinocchio")
    assert np.array_equal(shuffled.q, plain.q) and np.array_equal(shuffled.v, plain.v)


def test_state_columns_are_the_layout() -> None:
    model = bridge.load_urdf("solo12")
    names = state_columns(model, "pinocchio", ("q", "v", "tau"))
    assert names[:7] == tuple(f"base/q{k}" for k in range(7)) and names[-1].endswith("/tau0")
    assert len(names) == 19 + 18 + 18


def _bad(model, q, v, **kw) -> str:
    with pytest.raises(DatasetError) as info:
        bridge.convert_states(model, q, v, "mujoco", "pinocchio", **kw)
    return str(info.value)


def test_bad_arrays_are_named() -> None:
    model = bridge.load_urdf("solo12")
    q, v, a, _ = native_states(model, 10, "mujoco", 1)
    nan = v.copy()
    nan[4, 9] = np.nan
    column = state_columns(model, "mujoco", ("v",))[9]
    assert _bad(model, q, nan) == f"convert_states: v, state 4, column {column!r}: nan is not a finite number"
    tilted = q.copy()
    tilted[7, 3:7] *= 1.01
    msg = _bad(model, tilted, v)
    assert "q, state 7" in msg and "'base/q3', 'base/q4', 'base/q5', 'base/q6'" in msg and "norm 1.01" in msg
    np.testing.assert_allclose(
        bridge.convert_states(model, tilted, v, "mujoco", "pinocchio", normalize=True).q[7, 3:7],
        q[7, [4, 5, 6, 3]], atol=1e-15,
    )  # fmt: skip
    assert "v: 9 states" in _bad(model, q, v[:9])
    assert "q: 18 columns, but model 'solo' has 19" in _bad(model, q[:, :-1], v)
    assert "dtype <U" in _bad(model, q.astype(str), v)
    assert "columns['q']: 3 names for the 19 columns" in _bad(model, q, v, columns={"q": ["a", "b", "c"]})
    assert "unknown field 'x'" in _bad(model, q, v, columns={"x": []})
    assert "accelerations convert with the velocities" in _bad(model, q, None, acceleration=a)
    with pytest.raises(bridge.BridgeError, match="unknown velocity convention 'bullet'"):
        bridge.convert_states(model, q, v, "mujoco", "bullet")


def test_a_state_index_with_leading_axes() -> None:
    model = bridge.load_urdf("solo12")
    q, v, _, _ = native_states(model, 6, "mujoco", 1)
    v[5, 0] = np.inf
    msg = _bad(model, q.reshape(2, 3, -1), v.reshape(2, 3, -1))
    assert "state (1, 2), column 'base/v0': inf is not a finite number" in msg
