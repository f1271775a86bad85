"""The single-state change of variables, compiled from two declarations, equals the reference path
for every pair of registered conventions; each declaration's body rate is ``L^-1 L_dot v_B``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bridge
import bridge.backends.registry
from bridge.conventions.blocks import Block, Term, evaluate
from bridge.conventions.change_of_variables import change_of_variables
from bridge.conventions.registry import convention, convention_names
from bridge.conventions.single_state import SingleStateChange, single_base_change
from bridge.conventions.state import State
from bridge.spatial.so3 import skew

NAMES = convention_names()


def _state(model: bridge.Model, rep: str, seed: int) -> State:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=4)
    H = bridge.Transform.from_quaternion_wxyz(q / np.linalg.norm(q), rng.normal(size=3))
    n = model.n_dofs
    return State(H, rng.normal(size=n), rng.normal(size=6), rng.normal(size=n), rep)


@pytest.fixture(scope="module")
def model() -> bridge.Model:
    return bridge.random_model(4, seed=7)


@pytest.mark.parametrize(("source", "target"), list(itertools.product(NAMES, NAMES)))
@pytest.mark.parametrize("rep", ["body", "inertial", "mixed"])
def test_compiled_change_equals_the_reference(model, source: str, target: str, rep: str) -> None:
    state = _state(model, rep, seed=len(source) + 3 * len(target))
    s, t = convention(source).bound(model), convention(target).bound(model)
    ref = change_of_variables(model, state, s, t)
    change = single_base_change(s.velocity, t.velocity)
    H = state.world_H_base.matrix
    X, X_inv = change.matrices(H, H.tolist())
    X_ref = np.eye(6) if ref.X is None else ref.X
    np.testing.assert_allclose(X, X_ref, rtol=0, atol=1e-13)
    np.testing.assert_allclose(X_inv @ X, np.eye(6), rtol=0, atol=1e-13)
    v_s = ref.nu[:6]
    v_B = state.base_velocity_in("body")
    np.testing.assert_allclose(change.to_body(H, H.tolist()) @ v_s, v_B, atol=1e-13)
    bias = change.bias(H, state.base_velocity_in("body"))
    b_ref = np.zeros(6) if ref.base_bias is None else ref.base_bias
    if bias is None:
        assert change.bias_free
        np.testing.assert_allclose(b_ref, 0.0, atol=1e-13)
    else:
        np.testing.assert_allclose(bias(), b_ref, rtol=0, atol=1e-12)
    assert change.identity == (s.velocity == t.velocity)


@pytest.mark.parametrize("name", NAMES)
def test_body_rate_is_the_declared_rate(name: str) -> None:
    rng = np.random.default_rng(1)
    com = rng.normal(size=3)  # the base COM of a declaration at it
    decl = convention(name).velocity.bound(com)
    q = rng.normal(size=4)
    H = bridge.Transform.from_quaternion_wxyz(q / np.linalg.norm(q), rng.normal(size=3))
    v_B = rng.normal(size=6)
    _, L_dot, L_inv, _ = decl.maps(H, v_B)
    # (an angular-first declaration permutes L's rows and L^-1's columns: the product is the same)
    expected = np.zeros(6) if L_dot is None else L_inv @ L_dot @ v_B
    c_wv, c_q, c_c = decl.body_rate()
    v, w = v_B[:3], v_B[3:]
    qv = H.rotation.T @ H.translation
    lin = c_wv * np.cross(w, v) + c_q * np.cross(v - np.cross(w, qv), w) + c_c * np.cross(w, np.cross(w, com))
    np.testing.assert_allclose(expected, np.r_[lin, 0.0, 0.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("rep", ["body", "inertial", "mixed"])
@pytest.mark.parametrize("target", NAMES)
def test_buffered_change_fills_the_reference(model, rep: str, target: str) -> None:
    """SingleStateChange (the Pinocchio engine's filler, for any target) writes T nu and returns a
    ChangeOfVariables whose maps equal the reference's."""
    state = _state(model, rep, seed=11)
    s, t = convention(rep), convention(target).bound(model)
    ref = change_of_variables(model, state, s, t)
    from bridge.conventions.change_of_variables import JointOrder

    joints = JointOrder.between(model, s, t)
    v_base, v_joints = np.zeros(6), np.zeros(model.n_dofs)
    fill = SingleStateChange(s.velocity, t.velocity, joints, v_base, v_joints).fill
    H = state.world_H_base.matrix
    cov = fill(H, H.tolist(), state.base_velocity, state.s_dot)
    np.testing.assert_allclose(np.r_[v_base, v_joints], ref.velocity(ref.nu), atol=1e-13)
    a = np.random.default_rng(2).normal(size=model.nv)
    np.testing.assert_allclose(cov.acceleration_back(ref.acceleration(a)), a, atol=1e-12)
    np.testing.assert_allclose(cov.bias_acceleration, ref.bias_acceleration, atol=1e-12)


def test_blocks_algebra_matches_numbers() -> None:
    rng = np.random.default_rng(4)
    q = rng.normal(size=4)
    H = bridge.Transform.from_quaternion_wxyz(q / np.linalg.norm(q), rng.normal(size=3))
    R, p = H.rotation, H.translation
    K = Block((Term(True, -1, 0, 2.0),))  # 2 (R^T p)^
    M = Block((Term(False, 0, 1),)) @ K  # R 2 (R^T p)^ = 2 p^ R
    assert M.terms == (Term(True, 0, 1, 2.0),)
    np.testing.assert_allclose(evaluate(K, R, p), 2 * skew(R.T @ p), atol=1e-14)
    np.testing.assert_allclose(evaluate(M, R, p), R @ (2 * skew(R.T @ p)), atol=1e-14)
    np.testing.assert_allclose(evaluate(K.T, R, p), (2 * skew(R.T @ p)).T, atol=1e-14)
    np.testing.assert_allclose(evaluate(M.T, R, p), (R @ (2 * skew(R.T @ p))).T, atol=1e-14)
    assert (Block((Term(False, 0, 1),)) @ Block((Term(False, 0, -1),))).rotation == 0  # R R^T = 1 exactly


@pytest.mark.parametrize(("source", "target"), list(itertools.product(NAMES, NAMES)))
@pytest.mark.parametrize("floating", [True, False])
def test_compiled_fill_equals_the_numpy_fill(source: str, target: str, floating: bool) -> None:
    """SingleStateChange.compile (one numba call from the packed declarations, body-fixed points
    included) writes the velocity and gives the change of variables of the numpy ``fill``, to
    1e-12, for every pair of registered conventions, with their joint orders; read-only, strided and
    float32 inputs give the same numbers."""
    pytest.importorskip("numba")
    from bridge.derivatives.select import compiled_kernels

    if compiled_kernels() is None:
        pytest.skip("BRIDGE_NUMBA=0")
    from bridge.conventions import single_kernels
    from bridge.conventions.change_of_variables import JointOrder

    model = bridge.random_model(5, seed=9, floating=floating)
    s, t = convention(source).bound(model), convention(target).bound(model)
    joints = JointOrder.between(model, s, t)
    results = []
    for compiled in (False, True):
        rng = np.random.default_rng(len(source) * 7 + len(target))
        v = np.zeros(model.nv)
        change = SingleStateChange(s.velocity, t.velocity, joints, v[: joints.nb], v[joints.nb :])
        done = compiled and change.compile(single_kernels)
        assert done == (compiled and floating and not single_base_change(s.velocity, t.velocity).constant)
        out = []
        for k in range(3):
            state = _state(model, "body", seed=k)
            H, vb, sd = state.world_H_base.matrix, np.array(state.base_velocity), np.array(state.s_dot)
            if k == 1:
                H, sd = np.asfortranarray(H), np.repeat(sd, 2)[::2]
            elif k == 2:
                sd = sd.astype(np.float32)
            cov = change.fill(H, H.tolist(), vb, sd)
            a = rng.normal(size=model.nv)
            out += [
                v.copy(),
                cov.velocity(a),
                cov.acceleration(a),
                cov.force_back(a),
                cov.acceleration_back(a),
            ]
        results.append(out)
    for x, y in zip(*results, strict=True):
        np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12)
