"""The Pinocchio engine's compiled single-state path (bridge.backends.pinocchio.compiled, numba
kernels) gives the numbers of its numpy path (the path without numba) for every representation,
joint order and state, on iCub (icub-models) and random trees; it declines what it does not take
(other dtypes, lists, continuous joints, a fixed base) and leaves every error to the checking path.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bridge
import bridge.derivatives.select as select
from bridge.backends.single import COMPILE_AFTER, LibrarySingleState
from bridge.errors import StateError
from bridge.model.random import random_model
from bridge.robots import robot_path
from tests.helpers import assert_close, random_transform

REPS = ("body", "inertial", "mixed")


@pytest.fixture(autouse=True)
def _needs_numba(monkeypatch) -> None:
    pytest.importorskip("numba", reason="the compiled path needs numba (the 'fast' extra)")
    if select.compiled_kernels() is None:
        pytest.skip("compiled kernels turned off (BRIDGE_NUMBA=0)")
    monkeypatch.setattr(LibrarySingleState, "COMPILE_AFTER", 0)  # the compiled path from the first state


def _numpy_kindyn(model: bridge.Model, rep: str, monkeypatch) -> bridge.KinDyn:
    """A KinDyn made as without numba (its engine takes the numpy single-state path)."""
    with monkeypatch.context() as m:
        m.setattr(select, "_KERNELS", [None])
        kd = bridge.KinDyn(model, "pinocchio", rep)
    assert kd._engine._kern is None
    return kd


def _inputs(model: bridge.Model, rng: np.random.Generator) -> tuple:
    n = model.n_dofs
    H = random_transform(rng).matrix.copy()
    H[:3, 3] *= 3.0
    return (
        H, rng.uniform(-2, 2, n), rng.normal(size=6), rng.normal(size=n),
        rng.normal(size=6), rng.normal(size=n), rng.normal(size=n),
    )  # fmt: skip


def _answers(kd: bridge.KinDyn, frames: list[str], x: tuple) -> dict[str, np.ndarray]:
    H, s, v, sd, ba, sdd, tq = x
    kd.set_state(H, s, v, sd)
    out = {
        "M": kd.mass_matrix(),
        "h": kd.bias_forces(),
        "g": kd.gravity_forces(),
        "ID": kd.inverse_dynamics(ba, sdd),
        "FD": kd.forward_dynamics(tq),
        "nu": kd.state.nu,
        "H": kd.state.world_H_base.matrix,
        "s": kd.state.s,
        "C": kd.coriolis_matrix(),
        "com": kd.com_position(),
    }
    for f in frames:
        out[f"J {f}"] = kd.frame_jacobian(f)
        out[f"v {f}"] = kd.frame_velocity(f)
    dq, dv, _ = kd.inverse_dynamics_derivatives(ba, sdd)
    out["dID/dq"], out["dID/dnu"] = dq, dv
    out["dFD/dq"], out["dFD/dnu"], out["dFD/dtau"] = kd.forward_dynamics_derivatives(tq)
    return out


def _models() -> list[bridge.Model]:
    rng = np.random.default_rng(5)
    # revolute and prismatic joints only (continuous joints: q is not s, the numpy path); shuffled
    # DOF orders, so that most joint orders differ from Pinocchio's depth-first one
    return [
        random_model(12, rng, joint_kinds=("revolute", "prismatic", "fixed"), n_frames=3) for _ in range(3)
    ]


@pytest.mark.parametrize("rep", REPS)
def test_compiled_equals_numpy_random_trees(rep: str, monkeypatch) -> None:
    rng = np.random.default_rng(11)
    permuted = 0
    for model in _models():
        fast, slow = bridge.KinDyn(model, "pinocchio", rep), _numpy_kindyn(model, rep, monkeypatch)
        permuted += fast._engine.joints.perm is not None
        frames = list(model.frame_names)[-3:]
        for _ in range(3):
            x = _inputs(model, rng)
            a, b = _answers(fast, frames, x), _answers(slow, frames, x)
            assert fast._engine._mode == "compiled" and slow._engine._mode == "numpy"
            for key in b:
                assert_close(a[key], b[key], 1e-12, f"{model.name} {rep} {key}")
    assert permuted  # (the joint-order branches of the kernels ran)


@pytest.mark.parametrize("rep", REPS)
def test_compiled_equals_numpy_icub(rep: str, monkeypatch) -> None:
    icub = bridge.load_urdf(robot_path("iCubGazeboV2_5"))
    fast, slow = bridge.KinDyn(icub, "pinocchio", rep), _numpy_kindyn(icub, rep, monkeypatch)
    x = _inputs(icub, np.random.default_rng(3))
    a, b = _answers(fast, ["l_sole", "r_hand"], x), _answers(slow, ["l_sole", "r_hand"], x)
    assert fast._engine._mode == "compiled"
    for key in b:
        assert_close(a[key], b[key], 1e-12, f"iCub {rep} {key}")


def test_other_inputs_take_the_numpy_path_with_the_same_numbers(monkeypatch) -> None:
    model = _models()[0]
    kd, ref = bridge.KinDyn(model, "pinocchio", "inertial"), _numpy_kindyn(model, "inertial", monkeypatch)
    H, s, v, sd, ba, sdd, _ = _inputs(model, np.random.default_rng(4))
    ref.set_state(H, s, v, sd)
    # lists, float32 (exactly representable here) and read-only arrays: the same state
    s32 = np.round(s, 2).astype(np.float32)
    ref.set_state(H, s32.astype(np.float64), v, sd)
    M, h = ref.mass_matrix(), ref.bias_forces()
    tau = ref.inverse_dynamics(ba, sdd)
    ro = [np.array(x) for x in (H, v, sd)]
    for x in ro:
        x.setflags(write=False)
    for args in ((H.tolist(), s32.tolist(), list(v), list(sd)), (H, s32, v, sd), (ro[0], s32, ro[1], ro[2])):
        kd.set_state(*args)
        assert_close(kd.mass_matrix(), M, 1e-12)
        assert_close(kd.bias_forces(), h, 1e-12)
        assert_close(kd.inverse_dynamics(list(ba), sdd), tau, 1e-12)
        assert_close(kd.inverse_dynamics(ba, sdd), tau, 1e-12)
    kd.set_state(H, s32.astype(np.float64), v, sd)
    assert kd._engine._mode == "compiled"


def test_batch_then_single_then_batch() -> None:
    model = _models()[1]
    rng = np.random.default_rng(6)
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    H, s, v, sd, *_ = _inputs(model, rng)
    kd.set_state(H, s, v, sd)
    M1 = kd.mass_matrix().copy()
    kd.set_state(np.stack([H, H]), np.stack([s, s]), np.stack([v, v]), np.stack([sd, sd]))
    assert kd.batch_shape == (2,)
    assert_close(kd.mass_matrix()[1], M1, 1e-12)
    kd.set_state(H, s, v, sd)
    assert kd.batch_shape == () and kd._engine._mode == "compiled"
    assert_close(kd.mass_matrix(), M1, 1e-12)


@pytest.mark.parametrize("bad", ["nan s", "inf v", "nan H", "skewed H", "last row", "mirror"])
def test_invalid_states_raise_as_without_numba(bad: str, monkeypatch) -> None:
    model = _models()[2]
    H, s, v, sd, *_ = _inputs(model, np.random.default_rng(8))
    H, s, v = H.copy(), s.copy(), v.copy()
    if bad == "nan s":
        s[1] = np.nan
    elif bad == "inf v":
        v[4] = np.inf
    elif bad == "nan H":
        H[1, 3] = np.nan
    elif bad == "skewed H":
        H[0, 1] += 0.3
    elif bad == "last row":
        H[3, 0] = 0.5
    else:
        H[:3, 0] *= -1.0
    errors = []
    for kd in (bridge.KinDyn(model, "pinocchio", "mixed"), _numpy_kindyn(model, "mixed", monkeypatch)):
        with pytest.raises(StateError) as info, warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # (numpy's, on the path without numba)
            kd.set_state(H, s, v, sd)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_a_failed_state_leaves_the_previous_one() -> None:
    model = _models()[0]
    kd = bridge.KinDyn(model, "pinocchio", "inertial")
    H, s, v, sd, *_ = _inputs(model, np.random.default_rng(9))
    kd.set_state(H, s, v, sd)
    M = kd.mass_matrix().copy()
    nan = s.copy()
    nan[0] = np.nan
    for _ in range(2):  # (the state array is written in place: twice, nothing may change)
        with pytest.raises(StateError):
            kd.set_state(H, nan, v, sd)
    assert_close(kd.mass_matrix(), M, 0.0)
    assert_close(kd.state.s, s, 0.0)


def test_earlier_states_and_results_stay_as_they_were() -> None:
    """The compiled path writes one state array in place: a State and results taken at one state are
    not views of it, and each new state's queries are its own (three states in a row)."""
    model = _models()[0]
    rng = np.random.default_rng(13)
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    ref = bridge.KinDyn(model, "pinocchio", "mixed")
    frame = model.frames[-1].name
    taken = []
    for _ in range(3):
        H, s, v, sd, *_ = _inputs(model, rng)
        kd.set_state(H, s, v, sd)
        assert kd._engine._mode == "compiled"
        taken.append(((H, s, v, sd), kd.state, kd.mass_matrix(), kd.frame_jacobian(frame)))
    for (H, s, v, sd), state, M, J in taken:
        ref.set_robot_state(bridge.State(H, s[None], v, sd, "mixed"))  # (a batch of one: the general path)
        assert_close(state.world_H_base.matrix, H, 0.0)
        assert_close(state.s, s, 0.0)
        assert_close(state.base_velocity, v, 0.0)
        assert_close(state.s_dot, sd, 0.0)
        assert_close(M, ref.mass_matrix()[0], 1e-12)
        assert_close(J, ref.frame_jacobian(frame)[0], 1e-12)
    assert_close(kd.state.s, taken[-1][0][1], 0.0)


def test_declined_without_a_floating_base_or_with_continuous_joints() -> None:
    rng = np.random.default_rng(2)
    fixed = random_model(6, rng, joint_kinds=("revolute",), floating=False)
    continuous = random_model(6, rng, joint_kinds=("continuous", "revolute"))
    assert bridge.KinDyn(fixed, "pinocchio", "mixed")._engine._kern is None
    assert bridge.KinDyn(continuous, "pinocchio", "mixed")._engine._kern is None


def test_loaded_after_compile_after_states(monkeypatch) -> None:
    monkeypatch.setattr(LibrarySingleState, "COMPILE_AFTER", 3)
    model = _models()[0]
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    H, s, v, sd, *_ = _inputs(model, np.random.default_rng(10))
    modes = []
    for _ in range(5):
        kd.set_state(H, s, v, sd)
        modes.append(kd._engine._mode)
        M = kd.mass_matrix()
    assert modes == ["numpy", "numpy", "numpy", "compiled", "compiled"]
    ref = _numpy_kindyn(model, "mixed", monkeypatch)
    ref.set_state(H, s, v, sd)
    assert_close(M, ref.mass_matrix(), 1e-12)


def test_a_general_state_after_a_compiled_one(monkeypatch) -> None:
    """A State (set_robot_state) after a compiled single state: every query is the new state's."""
    model = _models()[1]
    rng = np.random.default_rng(12)
    kd = bridge.KinDyn(model, "pinocchio", "body")
    H, s, v, sd, ba, sdd, tq = _inputs(model, rng)
    kd.set_state(H, s, v, sd)
    assert kd._engine._mode == "compiled"
    H2, s2, v2, sd2, *_ = _inputs(model, rng)
    st = bridge.State(H2, s2[None], v2, sd2, "body")  # a batch of one: the general path
    kd.set_robot_state(st)
    ref = _numpy_kindyn(model, "body", monkeypatch)
    ref.set_state(H2, s2, v2, sd2)
    assert_close(kd.inverse_dynamics(ba, sdd)[0], ref.inverse_dynamics(ba, sdd), 1e-12)
    assert_close(kd.forward_dynamics(tq)[0], ref.forward_dynamics(tq), 1e-12)
    assert_close(kd.mass_matrix()[0], ref.mass_matrix(), 1e-12)


def test_the_shared_helper_puts_pinocchio_on_each_path(monkeypatch) -> None:
    """``tests.helpers.compiled_and_numpy`` gives a Pinocchio KinDyn on the compiled path from the
    first state and one that stays on the numpy path (Pinocchio's path follows the shared COMPILE_AFTER),
    and the two agree."""
    from tests.helpers import compiled_and_numpy

    model = random_model(7, np.random.default_rng(11), joint_kinds=("revolute", "prismatic"))
    monkeypatch.setattr(LibrarySingleState, "COMPILE_AFTER", COMPILE_AFTER)  # (this module's fixture: 0)
    compiled, numpy_path = compiled_and_numpy(model, "pinocchio", "mixed", monkeypatch)
    x = _inputs(model, np.random.default_rng(3))
    frames = [model.links[-1].name]
    got, want = _answers(compiled, frames, x), _answers(numpy_path, frames, x)
    assert compiled._engine._state1 is not None
    assert numpy_path._engine._state1 is None
    for key in want:
        assert_close(got[key], want[key], rtol=1e-10, atol=1e-10)
