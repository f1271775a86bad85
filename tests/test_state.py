"""States, representations and the change of variables T / T_dot."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.conventions.convert import convention, velocity_change, velocity_transform
from bridge.conventions.state import Representation, State
from bridge.spatial import Transform
from tests.helpers import random_state, small_model

REPS = ("body", "inertial", "mixed", "pinocchio")


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


@pytest.mark.parametrize("floating", [True, False])
def test_velocity_transform_group_properties(floating: bool) -> None:
    rng = np.random.default_rng(2)
    model = small_model(rng, floating)
    st = random_state(model, rng)
    nv = model.nv
    for a in REPS:
        T, _ = velocity_transform(model, st, a, a)
        np.testing.assert_allclose(T, np.eye(nv), atol=1e-14)
        for b in REPS:
            Tab, Tab_dot = velocity_transform(model, st, a, b)
            Tba, Tba_dot = velocity_transform(model, st, b, a)
            np.testing.assert_allclose(Tab @ Tba, np.eye(nv), atol=1e-13)
            # d/dt (T_ab T_ba) = 0
            np.testing.assert_allclose(Tab_dot @ Tba + Tab @ Tba_dot, 0.0, atol=1e-12)
            for c in REPS:
                Tbc, _ = velocity_transform(model, st, b, c)
                Tac, _ = velocity_transform(model, st, a, c)
                np.testing.assert_allclose(Tbc @ Tab, Tac, atol=1e-12)


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


def _integrate_base(st: State, h: float) -> State:
    """The state after time h moving with constant body velocity (only the pose matters for T)."""
    body = st.to("body")
    H = st.world_H_base @ Transform.exp(h * body.base_velocity)
    s = st.s + h * st.s_dot
    return State(H, s, body.base_velocity, st.s_dot, "body").to(st.representation)


@pytest.mark.parametrize("source", REPS)
@pytest.mark.parametrize("target", REPS)
def test_T_dot_is_the_derivative_of_T(source: str, target: str) -> None:
    rng = np.random.default_rng(4)
    model = small_model(rng)
    for _ in range(3):
        st = random_state(model, rng, "mixed")
        _, T_dot = velocity_transform(model, st, source, target)
        h = 1e-5
        Tp, _ = velocity_transform(model, _integrate_base(st, h), source, target)
        Tm, _ = velocity_transform(model, _integrate_base(st, -h), source, target)
        fd = (Tp - Tm) / (2 * h)
        scale = max(1.0, np.linalg.norm(T_dot))
        assert np.linalg.norm(fd - T_dot) <= 1e-6 * scale


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


@pytest.mark.parametrize("floating", [True, False])
def test_structured_products_equal_dense(floating: bool) -> None:
    rng = np.random.default_rng(7)
    model = small_model(rng, floating)
    st = random_state(model, rng, "inertial", batch=(2,))
    nv = model.nv
    pairs = (("inertial", "pinocchio"), ("mixed", "body"), ("pinocchio", "mixed"))
    for a, b in (*pairs, ("featherstone", "pinocchio"), ("body", "featherstone")):
        vt = velocity_change(model, st, a, b)
        T, Td = vt.matrix(), vt.derivative()
        x = rng.normal(size=(2, nv))
        M = rng.normal(size=(2, nv, nv))
        J = rng.normal(size=(2, 6, nv))
        np.testing.assert_allclose(vt.velocity(x), np.einsum("...ij,...j->...i", T, x), atol=1e-12)
        np.testing.assert_allclose(vt.apply_derivative(x), np.einsum("...ij,...j->...i", Td, x), atol=1e-12)
        np.testing.assert_allclose(vt.velocity_back(x), np.linalg.solve(T, x[..., None])[..., 0], atol=1e-12)
        np.testing.assert_allclose(vt.force_back(x), np.einsum("...ji,...j->...i", T, x), atol=1e-12)
        np.testing.assert_allclose(
            vt.force(x), np.linalg.solve(np.swapaxes(T, -1, -2), x[..., None])[..., 0], atol=1e-12
        )
        np.testing.assert_allclose(vt.jacobian_back(J), J @ T, atol=1e-12)
        np.testing.assert_allclose(vt.matrix_back(M), np.swapaxes(T, -1, -2) @ M @ T, atol=1e-12)
