"""Dynamics derivatives converted between conventions (:func:`bridge.convert_dynamics_derivatives`),
in numpy, under ``jax.jit``/``jax.grad`` and in CasADi graphs (issue 27).

The reference is bridge's own analytical derivatives (the "pinocchio" engine) in each neutral
representation: converting them from one representation to another equals the other's (1e-10),
directly and through every registered library convention (the functional path). The blocks of the
functional path equal the numpy chain rule's; JAX and CasADi equal numpy (1e-13).
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.conventions.convert import convert_acceleration, convert_generalized_force
from bridge.conventions.registry import convention_names
from bridge.conventions.state import Representation, State
from bridge.derivatives import chain
from bridge.derivatives.chain import _graph_blocks, retract
from tests.helpers import random_state, small_model

REPS = ("body", "inertial", "mixed")
LIBS = tuple(n for n in convention_names() if n not in REPS and n not in ("local", "world"))


def _rel(got, ref) -> float:
    return max(
        float(np.abs(np.asarray(g) - r).max()) / max(1.0, float(np.abs(r).max()))
        for g, r in zip(got, ref, strict=True)
    )


@pytest.fixture(scope="module")
def point():
    """A model, a state, and the analytical ID and FD derivatives at one point in each representation:
    ``{rep: (acceleration, tau, ID derivatives, FD derivatives)}``."""
    pytest.importorskip("pinocchio")
    rng = np.random.default_rng(3)
    model = small_model(rng)
    st = random_state(model, rng, "body")
    a, t = rng.normal(size=model.nv), rng.normal(size=model.nv)
    out = {}
    for rep in REPS:
        s = st.to(rep)
        kd = bridge.KinDyn(model, engine="pinocchio", representation=rep)
        kd.set_state(s.world_H_base, s.s, s.base_velocity, s.s_dot)
        ar = convert_acceleration(model, st, a, "body", rep)
        tau = kd.inverse_dynamics(ar[:6], ar[6:])
        tr = convert_generalized_force(model, st, t, "body", rep)
        fd_acc = kd.forward_dynamics(tr)
        out[rep] = (
            ar,
            tau,
            kd.inverse_dynamics_derivatives(ar[:6], ar[6:]),
            tr,
            fd_acc,
            kd.forward_dynamics_derivatives(tr),
        )
    return model, st, out


def _convert(model, st, data, source, target, kind):
    ar, tau, ID, tr, fd_acc, FD = data
    if kind == "inverse":
        return bridge.convert_dynamics_derivatives(model, st, ID, source, target, acceleration=ar, force=tau)
    return bridge.convert_dynamics_derivatives(
        model, st, FD, source, target, acceleration=fd_acc, force=tr, kind="forward"
    )


def _moved(model, st, data, source, target):
    """The point (acceleration and forces) in ``target``."""
    ar, tau, _, tr, fd_acc, _ = data
    a2 = convert_acceleration(model, st, ar, source, target)
    return (
        a2,
        convert_generalized_force(model, st, tau, source, target),
        None,
        convert_generalized_force(model, st, tr, source, target),
        convert_acceleration(model, st, fd_acc, source, target),
        None,
    )


@pytest.mark.parametrize("kind", ["inverse", "forward"])
@pytest.mark.parametrize("target", REPS)
@pytest.mark.parametrize("source", REPS)
def test_equals_the_analytical_derivatives_of_the_target(point, source, target, kind) -> None:
    model, st, data = point
    ref = data[target][2 if kind == "inverse" else 5]
    assert _rel(_convert(model, st, data[source], source, target, kind), ref) < 1e-10


@pytest.mark.parametrize("kind", ["inverse", "forward"])
@pytest.mark.parametrize("lib", LIBS)
def test_through_every_library_convention(point, lib, kind) -> None:
    """source -> lib -> target equals the target's analytical derivatives (the functional path
    both ways, for every registered convention)."""
    model, st, data = point
    for source, target in (("mixed", "body"), ("body", "inertial"), ("inertial", "mixed")):
        mid = _convert(model, st, data[source], source, lib, kind)
        moved = list(_moved(model, st, data[source], source, lib))
        moved[2] = moved[5] = mid
        got = _convert(model, st, tuple(moved), lib, target, kind)
        assert _rel(got, data[target][2 if kind == "inverse" else 5]) < 1e-10, (source, target)


def test_a_batch_equals_one_state_at_a_time(point) -> None:
    model, st, data = point
    batch = State(
        *(np.stack([x, x]) for x in (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)), "body"
    )
    ar, tau, ID = data["mixed"][:3]
    got = bridge.convert_dynamics_derivatives(
        model,
        batch,
        tuple(np.stack([d, d]) for d in ID),
        "mixed",
        "mujoco",
        acceleration=np.stack([ar, ar]),
        force=np.stack([tau, tau]),
    )
    one = _convert(model, st, data["mixed"], "mixed", "mujoco", "inverse")
    for g, r in zip(got, one, strict=True):
        np.testing.assert_allclose(g, np.stack([r, r]), atol=1e-13)


def test_functional_blocks_equal_the_numpy_chain_rule() -> None:
    rng = np.random.default_rng(0)
    H = random_state(small_model(rng), rng).world_H_base.matrix
    y, a, f = rng.normal(size=(3, 6))
    for rep in (Representation.INERTIAL, Representation.MIXED):
        Y, inner, Bnu, Z = _graph_blocks(H, rep, nu_b=y, acc_b=a, f_b=f)
        Bq = chain.bias_position_matrix(H, y, rep)
        Bv = chain.bias_velocity_matrix(H, y, rep)
        np.testing.assert_allclose(Y, chain.rate_matrix(H, y, rep), atol=1e-14)
        np.testing.assert_allclose(Z, chain.rate_transpose_matrix(H, f, rep), atol=1e-14)
        np.testing.assert_allclose(
            inner, chain.rate_matrix(H, a, rep) + (0 if Bq is None else Bq), atol=1e-14
        )
        np.testing.assert_allclose(Bnu, np.zeros((6, 6)) if Bv is None else Bv, atol=1e-14)


def test_bad_arguments_are_named(point) -> None:
    model, st, data = point
    ar, tau, ID = data["mixed"][:3]
    with pytest.raises(bridge.ShapeError, match="dtau_dnu"):
        bridge.convert_dynamics_derivatives(
            model, st, (ID[0], ID[1][:-1], ID[2]), "mixed", "body", acceleration=ar, force=tau
        )
    with pytest.raises(bridge.ShapeError, match="force"):
        bridge.convert_dynamics_derivatives(model, st, ID, "mixed", "body", acceleration=ar, force=tau[:-1])
    with pytest.raises(bridge.BridgeError, match="kind"):
        bridge.convert_dynamics_derivatives(
            model, st, ID, "mixed", "body", acceleration=ar, force=tau, kind="x"
        )


# ------------------------------------------------------------------------------------------ JAX
def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def _arrays(st: State) -> tuple:
    return st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot


def _jstate(arrays: tuple, jnp) -> State:
    return State(*(jnp.asarray(x) for x in arrays), "body")


@pytest.mark.parametrize("kind", ["inverse", "forward"])
@pytest.mark.parametrize("target", ("body", "mixed", "mujoco", "featherstone"))
def test_jax_jit_equals_numpy(point, target, kind) -> None:
    jax, jnp = _jax()
    model, st, data = point

    @jax.jit
    def run(arrays):
        return _convert(model, _jstate(arrays[0], jnp), arrays[1], "mixed", target, kind)

    numbers = jax.tree_util.tree_map(jnp.asarray, data["mixed"])
    got = run((_arrays(st), numbers))
    ref = _convert(model, st, data["mixed"], "mixed", target, kind)
    assert all(isinstance(g, jax.Array) for g in got)
    assert _rel(got, ref) < 1e-13
    if target in REPS:
        assert _rel(got, data[target][2 if kind == "inverse" else 5]) < 1e-10


def test_jax_grad_through_the_conversion_equals_central_differences(point) -> None:
    jax, jnp = _jax()
    model, st, data = point
    ar, tau, ID = data["mixed"][:3]
    w = np.random.default_rng(2).normal(size=(model.nv, model.nv))

    def f(v):
        s = State(jnp.asarray(st.world_H_base.matrix), jnp.asarray(st.s), v, jnp.asarray(st.s_dot), "body")
        out = bridge.convert_dynamics_derivatives(model, s, ID, "mixed", "mujoco", acceleration=ar, force=tau)
        return jnp.sum(w * out[0]) + jnp.sum(w * out[1])

    v0 = jnp.asarray(st.base_velocity)
    g = jax.jit(jax.grad(f))(v0)
    eps = 1e-6
    num = [(float(f(v0 + e)) - float(f(v0 - e))) / (2 * eps) for e in eps * np.eye(6)]
    np.testing.assert_allclose(np.asarray(g), num, rtol=1e-7, atol=1e-7)


def test_jax_retract_and_blocks_equal_numpy() -> None:
    jax, jnp = _jax()
    rng = np.random.default_rng(5)
    model = small_model(rng)
    st = random_state(model, rng)
    H, s = st.world_H_base.matrix, st.s
    delta = rng.normal(size=model.nv)
    y = rng.normal(size=6)
    for rep in REPS:
        Hr, sr = jax.jit(lambda H, s, d, rep=rep: retract(H, s, d, rep))(
            jnp.asarray(H), jnp.asarray(s), jnp.asarray(delta)
        )
        H_ref, s_ref = retract(H, s, delta, rep)
        np.testing.assert_allclose(np.asarray(Hr), H_ref, atol=1e-13)
        np.testing.assert_allclose(np.asarray(sr), s_ref, atol=1e-13)
        # at delta = 0, jacfwd of the pose is finite (no square root of zero)
        J = jax.jacfwd(lambda d, rep=rep: retract(jnp.asarray(H), jnp.asarray(s), d, rep)[0])(
            jnp.zeros(model.nv)
        )
        assert np.isfinite(np.asarray(J)).all()
        r = Representation.parse(rep)
        for fn in (
            chain.rate_matrix,
            chain.rate_transpose_matrix,
            chain.bias_position_matrix,
            chain.bias_velocity_matrix,
        ):
            ref = fn(H, y, r)
            got = fn(jnp.asarray(H), jnp.asarray(y), r)
            if ref is None:
                assert got is None
            else:
                np.testing.assert_allclose(np.asarray(got), ref, atol=1e-14, err_msg=fn.__name__)
        K = chain.wrench_position_matrix(y, r)
        got = chain.wrench_position_matrix(jnp.asarray(y), r)
        assert (K is None) == (got is None)
        if K is not None:
            np.testing.assert_allclose(np.asarray(got), K, atol=1e-15)


def test_jax_bad_shape_is_named_under_jit(point) -> None:
    jax, jnp = _jax()
    model, st, data = point
    ar, tau, ID = data["mixed"][:3]

    @jax.jit
    def run(d):
        return bridge.convert_dynamics_derivatives(
            model, _jstate(_arrays(st), jnp), (ID[0], d, ID[2]), "mixed", "body", acceleration=ar, force=tau
        )

    with pytest.raises(bridge.ShapeError, match="dtau_dnu"):
        run(jnp.zeros((model.nv, model.nv - 1)))


# ---------------------------------------------------------------------------------------- CasADi
@pytest.mark.parametrize("kind", ["inverse", "forward"])
@pytest.mark.parametrize("target", ("inertial", "pinocchio", "drake"))
def test_casadi_function_equals_numpy(point, target, kind) -> None:
    casadi = pytest.importorskip("casadi")
    model, st, data = point
    nv, n = model.nv, model.n_dofs
    H, s, v, sd = (
        casadi.SX.sym("H", 4, 4),
        casadi.SX.sym("s", n),
        casadi.SX.sym("v", 6),
        casadi.SX.sym("sd", n),
    )
    D = [casadi.SX.sym(f"D{i}", nv, nv) for i in range(3)]
    a, t = casadi.SX.sym("a", nv), casadi.SX.sym("t", nv)
    sym_st = State(H, s, v, sd, "body")
    sym = (a, t, D, t, a, D)
    out = _convert(model, sym_st, sym, "mixed", target, kind)
    F = casadi.Function("d", [H, s, v, sd, a, t, *D], list(out))
    ar, tau, ID, tr, fd_acc, FD = data["mixed"]
    acc, frc, mats = (ar, tau, ID) if kind == "inverse" else (fd_acc, tr, FD)
    got = F(st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot, acc, frc, *mats)
    ref = _convert(model, st, data["mixed"], "mixed", target, kind)
    assert _rel([np.array(g) for g in got], ref) < 1e-13


def test_casadi_bad_shape_is_named(point) -> None:
    casadi = pytest.importorskip("casadi")
    model, st, data = point
    ar, tau, ID = data["mixed"][:3]
    bad = casadi.SX.sym("x", model.nv, model.nv + 1)
    with pytest.raises(bridge.ShapeError, match="dtau_dq"):
        bridge.convert_dynamics_derivatives(
            model, st, (bad, ID[1], ID[2]), "mixed", "body", acceleration=ar, force=tau
        )
