"""The single-state chain rule of the ID and FD derivatives (bridge.derivatives.single): the
compiled kernels (numba, bridge.derivatives.kernels) give the numbers of the numpy paths (ID: the
precomputed plan; FD and the small blocks: the general formulas of bridge.derivatives.chain), for every
joint order, both representations, any memory layout of the engine's matrices; the numpy paths
are what runs without numba. (That they equal central differences of bridge's own ID and FD is
tests/derivatives/test_kindyn_derivatives.py, which runs whichever path is installed;
``test_kindyn_*`` below runs the other one too.)
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import bridge
import bridge.derivatives.select as select
from bridge.conventions.change_of_variables import ChangeOfVariables, JointOrder
from bridge.conventions.state import Representation, velocity_declaration
from bridge.derivatives.chain import (
    _base_X,
    bias_position_matrix,
    bias_velocity_matrix,
    forward_dynamics_derivatives_back,
    rate_matrix,
    rate_transpose_matrix,
)
from bridge.derivatives.functional import rate_table
from bridge.derivatives.single import SingleStateForwardDerivatives, SingleStateInverseDerivatives
from bridge.errors import BridgeWarning, InvalidValueError
from tests.helpers import assert_close, random_transform

REPS = [Representation.INERTIAL, Representation.MIXED]


def _rates(rep: Representation):
    """W's rate table (the kernels' data)."""
    return rate_table(velocity_declaration(rep))


def _needs_numba() -> None:
    pytest.importorskip("numba", reason="the compiled kernels need numba (the 'fast' extra)")
    if select.compiled_kernels() is None:
        pytest.skip("compiled kernels turned off (BRIDGE_NUMBA=0)")


def _inputs(rng: np.random.Generator, nv: int, rep: Representation, f_ordered_M: bool):
    """Random arguments of one call: X = B_X_W of a random pose, base velocity, acceleration and
    wrench, the three (nv, nv) matrices (M symmetric, F-ordered like Pinocchio's if asked), and
    the pose (INERTIAL reads it)."""
    H = random_transform(rng)
    R = H.rotation
    if rep is Representation.MIXED:
        X = np.zeros((6, 6))
        X[:3, :3] = X[3:, 3:] = R.T
    else:
        X = H.inverse().motion_matrix()
    M = rng.normal(size=(nv, nv))
    M = M + M.T
    if f_ordered_M:
        M = np.asfortranarray(M)
    return (
        X,
        rng.normal(size=6),
        rng.normal(size=6),
        rng.normal(size=6),
        rng.normal(size=(nv, nv)),
        rng.normal(size=(nv, nv)),
        M,
        H.matrix,
    )


def _orders(rng: np.random.Generator, n: int) -> list[JointOrder]:
    return [JointOrder(None, n, 6), JointOrder(rng.permutation(n), n, 6)]


@pytest.mark.parametrize("rep", REPS, ids=lambda r: r.value)
@pytest.mark.parametrize("f_ordered_M", [True, False])
@pytest.mark.parametrize("n", [0, 1, 7, 32])
def test_compiled_equals_numpy(rep: Representation, f_ordered_M: bool, n: int) -> None:
    _needs_numba()
    rng = np.random.default_rng(n + 100 * f_ordered_M)
    for joints in _orders(rng, n):
        fast = SingleStateInverseDerivatives(joints, rep, compiled=True)
        slow = SingleStateInverseDerivatives(joints, rep, compiled=False)
        assert fast.compiled and not slow.compiled
        for _ in range(3):
            args = _inputs(rng, joints.nv, rep, f_ordered_M)
            got, want = fast(*args), slow(*args)
            for g, w in zip(got, want, strict=True):
                assert g.shape == (joints.nv, joints.nv) and not g.flags.writeable
                assert_close(g, w, rtol=1e-13, atol=1e-13)
            assert not np.shares_memory(got[0], args[4])  # fresh, not the engine's matrices


def test_compiled_takes_integer_acceleration_and_strided_matrices() -> None:
    _needs_numba()
    rng = np.random.default_rng(7)
    joints = JointOrder(rng.permutation(5), 5, 6)
    fast = SingleStateInverseDerivatives(joints, Representation.MIXED, compiled=True)
    slow = SingleStateInverseDerivatives(joints, Representation.MIXED, compiled=False)
    X, nu, _, f, dq, dv, M, _ = _inputs(rng, 11, Representation.MIXED, True)
    acc = np.array([1, -2, 0, 3, 1, -1])
    big = rng.normal(size=(22, 22))
    dq = big[::2, ::2]  # a strided view
    for g, w in zip(fast(X, nu, acc, f, dq, dv, M), slow(X, nu, acc, f, dq, dv, M), strict=True):
        assert_close(g, w, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("rep", ["inertial", "mixed"])
@pytest.mark.parametrize("case", ["icub", "icub_permuted", "random"])
def test_kindyn_compiled_and_numpy_paths_agree(rep: str, case: str) -> None:
    """KinDyn's hot path with either implementation of the chain rule (the other one swapped in)."""
    from bridge.robots import robot_path

    rng = np.random.default_rng(3)
    if case == "random":
        model = bridge.random_model(14, 5, floating=True)
    else:
        model = bridge.load_urdf(robot_path("iCubGazeboV2_5"), check_inertia=False)
        if case == "icub_permuted":
            names = [str(x) for x in rng.permutation(model.dof_names)]
            model = bridge.load_urdf(robot_path("iCubGazeboV2_5"), joints=names, check_inertia=False)
    n = model.n_dofs
    kd = bridge.KinDyn(model, "pinocchio", rep)
    kd.set_state(random_transform(rng).matrix, rng.uniform(-1, 1, n), rng.normal(size=6), rng.normal(size=n))
    a, s_ddot = rng.normal(size=6), rng.normal(size=n)
    default = [x.copy() for x in kd.inverse_dynamics_derivatives(a, s_ddot)]
    engine, derivatives = kd._engine, kd._derivatives
    compiled = derivatives._id_chain.compiled
    if not compiled and select.compiled_kernels() is None:
        pytest.skip("no compiled path to compare with (numba missing or BRIDGE_NUMBA=0)")
    rep = kd.representation
    derivatives._id_chain = SingleStateInverseDerivatives(engine.joints, rep, compiled=not compiled)
    other = kd.inverse_dynamics_derivatives(a, s_ddot)
    for g, w in zip(other, default, strict=True):
        assert_close(g, w, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("rep", REPS, ids=lambda r: r.value)
def test_compiled_blocks_equal_the_formulas(rep: Representation) -> None:
    """X^-1, Y(nu), Y(y) + B_q, B_nu and Z(f) of the kernels against bridge.derivatives."""
    _needs_numba()
    from bridge.derivatives import kernels

    rng = np.random.default_rng(11)
    for _ in range(5):
        H = random_transform(rng).matrix
        nu, y, f = rng.normal(size=(3, 6))
        X = _base_X(H, rep)
        got = kernels.blocks(X, nu, y, f, kernels.constants(False, _rates(rep), np.arange(6), 0, 0))
        inner = rate_matrix(H, y, rep)
        Bq, Bnu = bias_position_matrix(H, nu, rep), bias_velocity_matrix(H, nu, rep)
        want = [
            np.linalg.inv(X),
            rate_matrix(H, nu, rep),
            inner if Bq is None else inner + Bq,
            np.zeros((6, 6)) if Bnu is None else Bnu,
            rate_transpose_matrix(H, f, rep),
        ]
        for g, w in zip(got, want, strict=True):
            assert_close(g, w, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("rep", REPS, ids=lambda r: r.value)
@pytest.mark.parametrize("n", [0, 3, 20])
def test_forward_compiled_equals_general(rep: Representation, n: int) -> None:
    _needs_numba()
    rng = np.random.default_rng(n)
    for joints in _orders(rng, n):
        fast = SingleStateForwardDerivatives(joints, rep, compiled=True)
        assert fast.usable and fast.compiled
        assert not SingleStateForwardDerivatives(joints, rep, compiled=False).usable
        for f_ordered in (True, False):
            X, nu, nu_dot, tau, A_q, A_v, M_inv, H = _inputs(rng, joints.nv, rep, f_ordered)
            cov = ChangeOfVariables(X, np.linalg.inv(X), joints, np.concatenate((nu, rng.normal(size=n))))
            nu_dot_full = np.concatenate((nu_dot, rng.normal(size=n)))
            # (the general function reads tau_t's and nu_dot's base parts only)
            tau_t = np.concatenate((tau, np.zeros(n)))
            want = forward_dynamics_derivatives_back(cov, H, rep, A_q, A_v, M_inv, tau_t, nu_dot_full)
            got = fast(X, nu, nu_dot, tau, A_q, A_v, M_inv)
            for g, w in zip(got, want, strict=True):
                assert not g.flags.writeable
                assert_close(g, w, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("rep", REPS, ids=lambda r: r.value)
@pytest.mark.parametrize("pose", ["identity", "rotation_only", "translation_only", "quarter_turn"])
def test_compiled_at_structured_poses(rep: Representation, pose: str) -> None:
    """Poses where X has more zero blocks than it must (no rotation, no translation, a quarter turn
    with exact zeros): the kernels skip a row block of L or a block of G when it is zero, which
    must change nothing (ID against the numpy plan, FD against the general function)."""
    _needs_numba()
    rng = np.random.default_rng(21)
    R = {"quarter_turn": np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])}.get(
        pose, random_transform(rng).rotation if pose == "rotation_only" else np.eye(3)
    )
    p = np.zeros(3) if pose in ("identity", "rotation_only") else rng.normal(size=3)
    H = np.eye(4)
    H[:3, :3], H[:3, 3] = R, p
    X = _base_X(H, rep)
    n = 9
    for joints in _orders(rng, n):
        _, nu, nu_dot, tau, A0, A1, M, _ = _inputs(rng, joints.nv, rep, True)
        got = SingleStateInverseDerivatives(joints, rep, compiled=True)(X, nu, nu_dot, tau, A0, A1, M, H)
        want = SingleStateInverseDerivatives(joints, rep, compiled=False)(X, nu, nu_dot, tau, A0, A1, M, H)
        for g, w in zip(got, want, strict=True):
            assert_close(g, w, rtol=1e-13, atol=1e-13)
        cov = ChangeOfVariables(X, np.linalg.inv(X), joints, np.concatenate((nu, rng.normal(size=n))))
        nu_dot_full = np.concatenate((nu_dot, rng.normal(size=n)))
        tau_t = np.concatenate((tau, np.zeros(n)))
        want = forward_dynamics_derivatives_back(cov, H, rep, A0, A1, M, tau_t, nu_dot_full)
        got = SingleStateForwardDerivatives(joints, rep, compiled=True)(X, nu, nu_dot, tau, A0, A1, M)
        for g, w in zip(got, want, strict=True):
            assert_close(g, w, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("rep", ["inertial", "mixed"])
@pytest.mark.parametrize("case", ["icub_permuted", "random"])
def test_kindyn_forward_compiled_and_general_paths_agree(rep: str, case: str) -> None:
    pytest.importorskip("numba", reason="no compiled path to compare with")
    from bridge.robots import robot_path

    rng = np.random.default_rng(4)
    if case == "random":
        model = bridge.random_model(14, 6, floating=True)
    else:
        names = [str(x) for x in rng.permutation(bridge.load_urdf(robot_path("iCubGazeboV2_5")).dof_names)]
        model = bridge.load_urdf(robot_path("iCubGazeboV2_5"), joints=names, check_inertia=False)
    n = model.n_dofs
    kd = bridge.KinDyn(model, "pinocchio", rep)
    kd.set_state(random_transform(rng).matrix, rng.uniform(-1, 1, n), rng.normal(size=6), rng.normal(size=n))
    tau = rng.normal(size=n)
    default = [x.copy() for x in kd.forward_dynamics_derivatives(tau)]
    engine, derivatives = kd._engine, kd._derivatives
    if not derivatives._fd_chain.compiled:
        pytest.skip("compiled kernels turned off (BRIDGE_NUMBA=0)")
    derivatives._fd_chain = SingleStateForwardDerivatives(engine.joints, kd.representation, compiled=False)
    general = kd.forward_dynamics_derivatives(tau)
    for g, w in zip(general, default, strict=True):
        assert_close(g, w, rtol=1e-11, atol=1e-9)


@pytest.fixture
def fresh_lookup(monkeypatch):
    """compiled_kernels() looks up again (and the lookup is restored afterwards)."""
    monkeypatch.setattr(select, "_KERNELS", [])
    return monkeypatch


def test_environment_turns_the_kernels_off(fresh_lookup) -> None:
    fresh_lookup.setenv("BRIDGE_NUMBA", "0")
    assert select.compiled_kernels() is None
    joints = JointOrder(None, 3, 6)
    assert not SingleStateInverseDerivatives(joints, Representation.MIXED).compiled
    with pytest.raises(InvalidValueError, match="numba"):
        SingleStateInverseDerivatives(joints, Representation.MIXED, compiled=True)


def test_without_numba_the_numpy_path_runs_silently(fresh_lookup, recwarn) -> None:
    fresh_lookup.delenv("BRIDGE_NUMBA", raising=False)
    fresh_lookup.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    assert select.compiled_kernels() is None
    assert not [w for w in recwarn if issubclass(w.category, BridgeWarning)]


def test_broken_numba_warns_and_falls_back(fresh_lookup) -> None:
    pytest.importorskip("numba")
    fresh_lookup.delenv("BRIDGE_NUMBA", raising=False)
    fresh_lookup.setitem(sys.modules, "bridge.derivatives.kernels", None)
    fresh_lookup.delattr(bridge.derivatives, "kernels", raising=False)
    with pytest.warns(BridgeWarning, match="numba is installed but"):
        assert select.compiled_kernels() is None


@pytest.mark.parametrize("rep", ["body", "inertial", "mixed"])
@pytest.mark.parametrize("nb", [0, 6])
def test_body_or_fixed_base_permutes_only(rep: str, nb: int) -> None:
    """T is the joint permutation alone: the three matrices with rows and columns to W's order."""
    rng = np.random.default_rng(nb)
    for joints in (JointOrder(None, 5, nb), JointOrder(rng.permutation(5), 5, nb)):
        chain = SingleStateInverseDerivatives(joints, rep)
        if rep != "body" and nb:
            assert not chain.permutes_only
            continue
        assert chain.permutes_only and not chain.compiled and not chain.needs_pose
        mats = [rng.normal(size=(joints.nv, joints.nv)) for _ in range(3)]
        mats[2] = np.asfortranarray(mats[2] + mats[2].T)
        back = np.arange(joints.nv) if joints.back is None else joints.back
        got = chain(None, None, None, None, *mats)
        for g, m in zip(got, mats, strict=True):
            assert not g.flags.writeable and not np.shares_memory(g, m)
            np.testing.assert_array_equal(g, m[np.ix_(back, back)])
        with pytest.raises(InvalidValueError, match="permutation"):
            SingleStateInverseDerivatives(joints, rep, compiled=True)


def test_bad_base() -> None:
    with pytest.raises(InvalidValueError, match="3 base DOFs"):
        SingleStateInverseDerivatives(JointOrder(None, 3, 3), Representation.MIXED)


def test_import_bridge_does_not_import_numba() -> None:
    """numba (about 0.15 s to import) loads on the first derivative call only."""
    code = "import sys, bridge; bridge.KinDyn; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
