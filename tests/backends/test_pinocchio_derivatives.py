"""The Pinocchio engine's fused single-state derivative paths (bridge.backends.pinocchio.derivatives:
the acceleration kernel, Pinocchio's derivative call and the compiled chain rule reading Pinocchio's
data and the engine's state array in place) give the numbers of the numpy path (no numba) for every
representation, joint order and state, on iCub (icub-models), solo12 (example-robot-data) and random
trees; they decline what they do not take (other dtypes, lists, shapes, strided arrays, torques
that are not moderate) and leave it, and every error, to KinDyn's general path; their results are fresh and
read-only.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
import bridge.derivatives.select as select
from bridge.backends.single import LibrarySingleState
from bridge.model.random import random_model
from bridge.robots import robot_path
from tests.helpers import assert_close, random_transform

REPS = ("body", "inertial", "mixed")


@pytest.fixture
def compiled(monkeypatch) -> None:
    pytest.importorskip("numba", reason="the fused paths need numba (the 'fast' extra)")
    if select.compiled_kernels() is None:
        pytest.skip("compiled kernels turned off (BRIDGE_NUMBA=0)")
    monkeypatch.setattr(LibrarySingleState, "COMPILE_AFTER", 0)  # the compiled path from the first state


def _models() -> list[tuple[str, bridge.Model]]:
    rng = np.random.default_rng(21)
    icub = bridge.load_urdf(robot_path("iCubGazeboV2_5"), check_inertia=False)
    names = [str(x) for x in rng.permutation(icub.dof_names)]
    return [
        ("icub", icub),
        ("icub_permuted", bridge.load_urdf(robot_path("iCubGazeboV2_5"), joints=names, check_inertia=False)),
        ("solo12", bridge.load_urdf(robot_path("solo12"), check_inertia=False)),
        ("random", random_model(9, rng, joint_kinds=("revolute", "prismatic"))),
    ]


MODELS = _models()


def _state(model: bridge.Model, rng: np.random.Generator) -> tuple:
    n = model.n_dofs
    H = random_transform(rng).matrix.copy()
    H[:3, 3] *= 3.0
    return H, rng.uniform(-1.5, 1.5, n), rng.normal(size=6), rng.normal(size=n)


def _numpy_kindyn(model: bridge.Model, rep: str, monkeypatch) -> bridge.KinDyn:
    """A KinDyn as without numba: the engine's numpy single-state path, the numpy chain rule."""
    with monkeypatch.context() as m:
        m.setattr(select, "_KERNELS", [None])
        kd = bridge.KinDyn(model, "pinocchio", rep)
        kd.set_state(*_state(model, np.random.default_rng(0)))
        kd.inverse_dynamics_derivatives(np.zeros(6), np.zeros(model.n_dofs))  # (makes its chains now)
        kd.forward_dynamics_derivatives(np.zeros(model.n_dofs))
    assert kd._engine._kern is None
    assert kd._derivatives.strategy in ("analytical+numpy", "analytical+permutation")
    return kd


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("case", [m[0] for m in MODELS])
def test_fused_paths_equal_the_numpy_path(rep: str, case: str, compiled, monkeypatch) -> None:
    model = dict(MODELS)[case]
    rng = np.random.default_rng(len(case) + len(rep))
    fast = bridge.KinDyn(model, "pinocchio", rep)
    slow = _numpy_kindyn(model, rep, monkeypatch)
    n = model.n_dofs
    for _ in range(3):  # (the engine's two state arrays alternate)
        x = _state(model, rng)
        ba, sdd, tq = rng.normal(size=6), rng.normal(size=n), rng.normal(size=n)
        fast.set_state(*x)
        slow.set_state(*x)
        assert fast._engine._mode == "compiled" and slow._engine._mode == "numpy"
        got = [*fast.inverse_dynamics_derivatives(ba, sdd), *fast.forward_dynamics_derivatives(tq)]
        want = [*slow.inverse_dynamics_derivatives(ba, sdd), *slow.forward_dynamics_derivatives(tq)]
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            assert g.shape == (model.nv, model.nv) and not g.flags.writeable
            assert_close(g, w, rtol=1e-12, atol=1e-10, what=f"{case} {rep} result {k}")
    # the fused paths are what ran
    d = fast._derivatives
    assert d._id_fused[0] is d._id_chain and d._id_fused[1] is not select._none
    assert d._fd_fused[0] is d._fd_chain and d._fd_fused[1] is not select._none
    assert d._id_fused[1](ba, sdd) is not None and d._fd_fused[1](tq) is not None


def test_results_are_fresh(compiled) -> None:
    """Each call's result is its own array: Pinocchio's data (which the next call overwrites) is
    read, never handed out."""
    model = dict(MODELS)["icub"]
    rng = np.random.default_rng(3)
    for rep in REPS:
        kd = bridge.KinDyn(model, "pinocchio", rep)
        kd.set_state(*_state(model, rng))
        ba, sdd, tq = rng.normal(size=6), rng.normal(size=model.n_dofs), rng.normal(size=model.n_dofs)
        first = kd.inverse_dynamics_derivatives(ba, sdd)
        keep = [x.copy() for x in first]
        fd = kd.forward_dynamics_derivatives(tq)
        keep_fd = [x.copy() for x in fd]
        kd.set_state(*_state(model, rng))
        kd.inverse_dynamics_derivatives(-ba, sdd)
        kd.forward_dynamics_derivatives(-tq)
        data = kd._engine.data
        for x, y in zip([*first, *fd], [*keep, *keep_fd], strict=True):
            np.testing.assert_array_equal(x, y)
            for field in (data.dtau_dq, data.dtau_dv, data.M, data.ddq_dq, data.ddq_dv, data.Minv):
                assert not np.shares_memory(x, field)


@pytest.mark.parametrize("rep", REPS)
def test_declined_arguments_take_the_general_path(rep: str, compiled, monkeypatch) -> None:
    """Lists, integer arrays, wrong shapes and torques that are not moderate: the same numbers or
    the same errors as with the fused paths turned off."""
    model = dict(MODELS)["icub_permuted"]
    rng = np.random.default_rng(8)
    x = _state(model, rng)
    n = model.n_dofs
    kd = bridge.KinDyn(model, "pinocchio", rep)
    kd.set_state(*x)
    off = bridge.KinDyn(model, "pinocchio", rep)
    off.set_state(*x)
    off.inverse_dynamics_derivatives(np.zeros(6), np.zeros(n))
    off._derivatives._id_fused = (off._derivatives._id_chain, select._none)
    off._derivatives._fd_fused = (off._derivatives._fd_chain, select._none)
    tq, tau = rng.normal(size=n), rng.normal(size=model.nv)
    cases = [
        ("list torques", lambda k: k.forward_dynamics_derivatives(tq.tolist())),
        ("int torques", lambda k: k.forward_dynamics_derivatives(np.arange(n))),
        ("full generalized force", lambda k: k.forward_dynamics_derivatives(tau)),
        ("list acceleration", lambda k: k.inverse_dynamics_derivatives([0.1] * 6, list(tq))),
        ("float32 acceleration", lambda k: k.inverse_dynamics_derivatives(np.ones(6, np.float32), tq)),
        ("strided acceleration", lambda k: k.inverse_dynamics_derivatives(np.ones(12)[::2], tq[::-1])),
        ("read-only acceleration", lambda k: k.inverse_dynamics_derivatives(*_read_only(np.ones(6), tq))),
        ("strided torques", lambda k: k.forward_dynamics_derivatives(np.repeat(tq, 2)[::2])),
        ("torques not moderate", lambda k: k.forward_dynamics_derivatives(np.full(n, 1e60))),
    ]
    for what, call in cases:
        for g, w in zip(call(kd), call(off), strict=True):
            assert_close(g, w, rtol=1e-12, atol=1e-10, what=what)
    for bad in (np.full(n, np.nan), np.ones(n + 1), np.ones((2, n))):
        with pytest.raises(bridge.BridgeError) as want:
            off.forward_dynamics_derivatives(bad)
        with pytest.raises(type(want.value)):
            kd.forward_dynamics_derivatives(bad)
    with pytest.raises(bridge.BridgeError) as want:
        off.inverse_dynamics_derivatives(np.full(6, np.inf), tq)
    with pytest.raises(type(want.value)):
        kd.inverse_dynamics_derivatives(np.full(6, np.inf), tq)


def _read_only(*arrays: np.ndarray) -> list[np.ndarray]:
    out = [x.copy() for x in arrays]
    for x in out:
        x.setflags(write=False)
    return out


def test_first_derivative_call_loads_the_engines_compiled_path() -> None:
    """numba runs once the chain rule is compiled: the engine's compiled path loads then (its cached
    kernels, ~80 ms) instead of after COMPILE_AFTER states, and the next state takes it."""
    pytest.importorskip("numba")
    if select.compiled_kernels() is None:
        pytest.skip("compiled kernels turned off (BRIDGE_NUMBA=0)")
    model = dict(MODELS)["solo12"]
    rng = np.random.default_rng(4)
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    x = _state(model, rng)
    kd.set_state(*x)
    assert kd._engine._kern is None and kd._engine._mode == "numpy"
    a = rng.normal(size=model.nv)
    first = kd.inverse_dynamics_derivatives(a[:6], a[6:])
    assert kd._engine._kern is not None
    kd.set_state(*x)
    assert kd._engine._mode == "compiled"
    for g, w in zip(kd.inverse_dynamics_derivatives(a[:6], a[6:]), first, strict=True):
        assert_close(g, w, rtol=1e-12, atol=1e-10)
