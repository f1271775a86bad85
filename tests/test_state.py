"""States, representations and the change of variables T / T_dot: specific values.

The axioms of T (invertible, T_dot its derivative, composition, every named map equal to its dense
formula) are checked for every registered convention in :mod:`tests.conventions.test_axioms`."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.conventions.convert import convention, velocity_transform
from bridge.conventions.state import Representation, State
from tests.helpers import random_state, small_model


def test_representation_aliases() -> None:
    assert Representation.parse("LOCAL_WORLD_ALIGNED") is Representation.MIXED
    assert Representation.parse("BODY_FIXED_REPRESENTATION") is Representation.BODY
    assert Representation.parse("world") is Representation.INERTIAL
    from bridge.backends.pinocchio import PINOCCHIO

    assert convention("pinocchio") is PINOCCHIO
    with pytest.raises(bridge.BridgeError, match="unknown velocity representation 'sideways'"):
        Representation.parse("sideways")


def test_state_to_round_trip_and_meaning() -> None:
    rng = np.random.default_rng(1)
    model = small_model(rng)
    st = random_state(model, rng, "body")
    H = st.world_H_base
    R, p = H.rotation, H.translation
    vb = st.base_velocity
    mixed = st.to("mixed").base_velocity
    inertial = st.to("inertial").base_velocity
    # mixed: (d/dt o, omega in world); inertial: (d/dt o - omega x o, omega in world)
    np.testing.assert_allclose(mixed[:3], R @ vb[:3], atol=1e-14)
    np.testing.assert_allclose(mixed[3:], R @ vb[3:], atol=1e-14)
    np.testing.assert_allclose(inertial[:3], mixed[:3] - np.cross(mixed[3:], p), atol=1e-14)
    for a in ("body", "inertial", "mixed"):
        for b in ("body", "inertial", "mixed"):
            back = st.to(a).to(b).to("body").base_velocity
            np.testing.assert_allclose(back, vb, atol=1e-13)


def test_velocity_transform_maps_states() -> None:
    rng = np.random.default_rng(3)
    model = small_model(rng)
    st = random_state(model, rng, "inertial")
    for rep in ("body", "inertial", "mixed"):
        T, _ = velocity_transform(model, st, "inertial", rep)
        np.testing.assert_allclose(T @ st.nu, st.to(rep).nu, atol=1e-13)
    _, v_pin = bridge.to_pinocchio_state(model, st)
    T, _ = velocity_transform(model, st, "inertial", "pinocchio")
    np.testing.assert_allclose(T @ st.nu, v_pin, atol=1e-13)


def test_batched_velocity_transform_matches_single() -> None:
    rng = np.random.default_rng(5)
    model = small_model(rng)
    st = random_state(model, rng, "mixed", batch=(4, 3))
    T, Td = velocity_transform(model, st, "mixed", "pinocchio")
    assert T.shape == (4, 3, model.nv, model.nv)
    for i in range(4):
        for j in range(3):
            single = State(st.world_H_base[i, j], st.s[i, j], st.base_velocity[i, j], st.s_dot[i, j], "mixed")
            Ts, Tds = velocity_transform(model, single, "mixed", "pinocchio")
            np.testing.assert_allclose(T[i, j], Ts, atol=1e-15)
            np.testing.assert_allclose(Td[i, j], Tds, atol=1e-15)


def test_bad_states_raise() -> None:
    rng = np.random.default_rng(6)
    model = small_model(rng)
    good = random_state(model, rng)
    H = good.world_H_base.as_matrix()
    with pytest.raises(bridge.StateError, match="base_velocity"):
        State(H, good.s, np.zeros(5), good.s_dot)
    with pytest.raises(bridge.StateError, match="s_dot"):
        State(H, good.s, np.zeros(6), np.zeros(3))
    bad = H.copy()
    bad[3, 0] = 1.0
    with pytest.raises(bridge.StateError, match=r"last row must be \[0, 0, 0, 1\]"):
        State(bad, good.s, np.zeros(6), good.s_dot)
    bad = H.copy()
    bad[0, 0] += 0.1
    with pytest.raises(bridge.StateError, match="not orthonormal"):
        State(bad, good.s, np.zeros(6), good.s_dot)
    with pytest.raises(bridge.StateError, match="NaN"):
        State(H, np.full(model.n_dofs, np.nan), np.zeros(6), good.s_dot)
    short = State(H, np.zeros(2), np.zeros(6), np.zeros(2))
    with pytest.raises(bridge.StateError, match="2 joint positions but model 'small' has 4 DOFs"):
        velocity_transform(model, short, "mixed", "body")
    with pytest.raises(bridge.StateError, match="q"):
        bridge.from_pinocchio_state(model, np.zeros(3), np.zeros(model.nv))
    assert issubclass(bridge.StateError, ValueError)
