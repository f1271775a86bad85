"""Featherstone's state maps, the centroidal momentum matrix and the ready ``casadi.Function``s
inside autodiff graphs (issue 27): JAX under jit and CasADi equal numpy (1e-13); ``casadi.jacobian``
equals central differences; bad shapes are named."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.backends.featherstone.state import from_featherstone_state, to_featherstone_state
from bridge.conventions.convert import convert_jacobian
from bridge.conventions.native_state import to_native_state
from bridge.conventions.registry import convention
from bridge.conventions.state import State
from tests.helpers import random_state, small_model

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)
casadi = pytest.importorskip("casadi")


@pytest.fixture(scope="module", params=[True, False], ids=["floating", "fixed"])
def model(request) -> bridge.Model:
    return small_model(np.random.default_rng(1), floating=request.param)


def _arrays(st: State) -> tuple:
    return st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot


def test_featherstone_state_under_jit_equals_numpy(model) -> None:
    st = random_state(model, np.random.default_rng(2), "mixed")

    @jax.jit
    def run(arrays):
        xfb, q, qd = to_featherstone_state(model, State(*arrays, "mixed"))
        back = from_featherstone_state(model, xfb, q, qd, "mixed")
        return xfb, q, qd, back.world_H_base.matrix, back.base_velocity, back.s, back.s_dot

    xfb, q, qd, H, vb, s, sd = run(tuple(jnp.asarray(x) for x in _arrays(st)))
    xfb_ref, q_ref, qd_ref = to_featherstone_state(model, st)
    if model.floating:
        np.testing.assert_allclose(np.asarray(xfb), xfb_ref, atol=1e-13)
        np.testing.assert_allclose(np.asarray(H), st.world_H_base.matrix, atol=1e-13)
        np.testing.assert_allclose(np.asarray(vb), st.base_velocity, atol=1e-13)
    else:
        assert xfb is None
    np.testing.assert_allclose(np.asarray(q), q_ref, atol=1e-15)
    np.testing.assert_allclose(np.asarray(qd), qd_ref, atol=1e-15)
    np.testing.assert_allclose(np.asarray(s), st.s, atol=1e-13)
    np.testing.assert_allclose(np.asarray(sd), st.s_dot, atol=1e-15)


def test_featherstone_state_in_casadi_equals_numpy(model) -> None:
    st = random_state(model, np.random.default_rng(3), "body")
    n = model.n_dofs
    H, s, v, sd = (
        casadi.SX.sym("H", 4, 4),
        casadi.SX.sym("s", n),
        casadi.SX.sym("v", 6),
        casadi.SX.sym("sd", n),
    )
    xfb, q, qd = to_featherstone_state(model, State(H, s, v, sd, "body"))
    outs = [q, qd] if xfb is None else [xfb, q, qd]
    got = casadi.Function("f", [H, s, v, sd], outs)(*_arrays(st))
    ref = [x for x in to_featherstone_state(model, st) if x is not None]
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(np.array(g).ravel(), r, atol=1e-13)
    # and back, symbolic in (xfb, q, qd)
    syms = [
        casadi.SX.sym(k, x.shape[-1]) for k, x in zip(("xfb", "q", "qd")[3 - len(ref) :], ref, strict=True)
    ]
    args = syms if model.floating else [None, *syms]
    back = from_featherstone_state(model, *args, "inertial")
    F = casadi.Function("g", syms, [back.base_velocity, back.s, back.s_dot])
    vb, s_back, sd_back = F(*ref)
    if model.floating:
        np.testing.assert_allclose(np.array(vb).ravel(), st.base_velocity_in("inertial"), atol=1e-12)
    np.testing.assert_allclose(np.array(s_back).ravel(), st.s, atol=1e-13)
    np.testing.assert_allclose(np.array(sd_back).ravel(), st.s_dot, atol=1e-13)


def test_featherstone_bad_shapes_are_named() -> None:
    model = small_model(np.random.default_rng(1))
    n = model.n_dofs
    with pytest.raises(bridge.StateError, match="xfb"):
        from_featherstone_state(model, jnp.zeros(12), jnp.zeros(n), jnp.zeros(n))
    with pytest.raises(bridge.StateError, match="qd"):
        from_featherstone_state(
            model, casadi.SX.sym("x", 13), casadi.SX.sym("q", n), casadi.SX.sym("qd", n + 1)
        )


@pytest.mark.parametrize("target", ["body", "inertial", "pinocchio", "mujoco"])
def test_centroidal_momentum_matrix_converts_like_a_jacobian(target: str) -> None:
    """``A_G`` from KinDyn in MIXED, converted (JAX under jit, and numpy), equals KinDyn's in the
    target representation (the momentum ``A_G nu`` is the same physical quantity)."""
    model = small_model(np.random.default_rng(4))
    st = random_state(model, np.random.default_rng(5), "mixed")
    kd = bridge.KinDyn(model, engine="featherstone", representation="mixed")
    kd.set_state(*_arrays(st))
    A = kd.centroidal_momentum_matrix()
    ref = convert_jacobian(model, st, A, "mixed", target)
    got = jax.jit(lambda a, arrays: convert_jacobian(model, State(*arrays, "mixed"), a, "mixed", target))(
        jnp.asarray(A), tuple(jnp.asarray(x) for x in _arrays(st))
    )
    np.testing.assert_allclose(np.asarray(got), ref, atol=1e-13)
    nu_t = bridge.convert_velocity(model, st, st.nu, "mixed", target)
    np.testing.assert_allclose(ref @ nu_t, A @ st.nu, atol=1e-12)
    if target in ("body", "inertial"):  # KinDyn's rows: G[A] in MIXED and INERTIAL, G[B] in BODY
        kt = bridge.KinDyn(model, engine="featherstone", representation=target)
        kt.set_state(*_arrays(st.to(target)))
        Rt = st.world_H_base.matrix[:3, :3].T
        rows = np.kron(np.eye(2), Rt) if target == "body" else np.eye(6)
        np.testing.assert_allclose(rows @ ref, kt.centroidal_momentum_matrix(), atol=1e-12)


# ----------------------------------------------------------------------------- casadi.Function helpers
def _inputs(model, st: State, source: str) -> list:
    conv = convention(source)
    if conv.configuration is not None:
        return list(to_native_state(model, st, conv))
    nu = st.to(source).nu if model.floating else st.s_dot
    return [st.world_H_base.matrix, st.s, nu] if model.floating else [st.s, nu]


@pytest.mark.parametrize(
    ("source", "target"), [("pinocchio", "mixed"), ("mujoco", "body"), ("mixed", "drake")]
)
def test_casadi_helpers_equal_numpy(model, source: str, target: str) -> None:
    rng = np.random.default_rng(6)
    st = random_state(model, rng, "body")
    nv = model.nv
    ins = _inputs(model, st, source)
    M = rng.normal(size=(nv, nv))
    M = M @ M.T + nv * np.eye(nv)
    h, J = rng.normal(size=nv), rng.normal(size=(6, nv))
    T, Td = bridge.casadi_velocity_transform(model, source, target)(*ins)
    T_ref, Td_ref = bridge.velocity_transform(model, st, source, target)
    np.testing.assert_allclose(np.array(T), T_ref, atol=1e-13)
    np.testing.assert_allclose(np.array(Td), Td_ref, atol=1e-13 * max(1.0, np.abs(Td_ref).max()))
    F = bridge.casadi_mass_matrix(model, source, target)
    assert F.name_in() == [*(["q", "nu"] if convention(source).configuration else F.name_in()[:-1]), "M"]
    cases = (
        (F(*ins, M), bridge.convert_mass_matrix(model, st, M, source, target)),
        (
            bridge.casadi_bias_forces(model, source, target)(*ins, h, M),
            bridge.convert_bias_forces(model, st, h, M, source, target),
        ),
        (
            bridge.casadi_jacobian(model, source, target)(*ins, J),
            convert_jacobian(model, st, J, source, target),
        ),
    )
    for got, ref in cases:
        np.testing.assert_allclose(
            np.array(got).reshape(ref.shape), ref, atol=1e-13 * max(1.0, np.abs(ref).max())
        )


def test_casadi_jacobian_of_a_helper_equals_central_differences() -> None:
    model = small_model(np.random.default_rng(1))
    st = random_state(model, np.random.default_rng(7), "body")
    F = bridge.casadi_velocity_transform(model, "mujoco", "mixed")
    q, nu = F.sx_in()
    T_dot = F(q, nu)[1]
    dF = casadi.Function("d", [q, nu], [casadi.jacobian(casadi.vec(T_dot), nu)])
    q0, nu0 = to_native_state(model, st, convention("mujoco"))
    got = np.array(dF(q0, nu0))
    f = casadi.Function("f", [q, nu], [casadi.vec(T_dot)])
    eps = 1e-6
    num = np.column_stack(
        [
            (np.array(f(q0, nu0 + e)) - np.array(f(q0, nu0 - e))).ravel() / (2 * eps)
            for e in eps * np.eye(model.nv)
        ]
    )
    np.testing.assert_allclose(got, num, rtol=1e-7, atol=1e-7)
