"""The MuJoCo engine's compiled single-state path (bridge/backends/single.py's kernels around MuJoCo's
Python calls): every query, in any order,
with batches and states of the other paths in between, equals the numpy path's (1e-12), and
arguments the kernels do not take (lists, float32, strided arrays, invalid values) give what the
numpy path gives."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import bridge
from bridge.robots import robot_path
from tests.helpers import assert_close, compiled_and_numpy, random_state

REPS = ("body", "inertial", "mixed")


def _models() -> dict[str, bridge.Model]:
    # solo12 (example-robot-data) in MuJoCo's DOF order; a random tree whose order is not MuJoCo's
    revolute = bridge.random_model(7, seed=12, joint_kinds=("revolute", "prismatic", "fixed"))
    return {"solo12": bridge.load_urdf(robot_path("solo12")), "random": revolute}


@pytest.fixture(scope="module")
def models() -> dict[str, bridge.Model]:
    return _models()


def _queries(model: bridge.Model, rng: np.random.Generator) -> dict:
    nu_dot, tau = rng.normal(size=model.nv), rng.normal(size=model.n_dofs)
    frames = model.frame_names
    return {
        "M": lambda kd: kd.mass_matrix(),
        "h": lambda kd: kd.bias_forces(),
        "g": lambda kd: kd.gravity_forces(),
        "J0": lambda kd: kd.frame_jacobian(frames[0]),
        "J": lambda kd: kd.frame_jacobian(frames[-1]),
        "ID": lambda kd: kd.inverse_dynamics(nu_dot[:6], nu_dot[6:]),
        "FD": lambda kd: kd.forward_dynamics(tau),
        "v": lambda kd: kd.frame_velocity(frames[-1]),
        "nu": lambda kd: kd.state.nu,
    }


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("name", ["solo12", "random"])
def test_any_order_of_queries_equals_the_numpy_path(models, rep, name, monkeypatch) -> None:
    """MuJoCo's stages run once per state inside the kernels: every order of queries, on two
    states in turn, with a batch, a list-valued state (the numpy path) and another gravity in
    between, gives the numpy path's results."""
    model = models[name]
    rng = np.random.default_rng(len(name) + len(rep))
    compiled, numpy_path = compiled_and_numpy(model, "mujoco", rep, monkeypatch)
    queries = _queries(model, rng)
    states = [random_state(model, rng, rep) for _ in range(2)]
    orders = [*itertools.permutations(["M", "h", "J", "ID", "FD"], 3)]
    orders.append(("FD", "ID", "g", "v", "J0", "nu", "M"))
    for k, order in enumerate(orders):
        st = states[k % 2]
        arrays = [np.array(x) for x in (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)]
        gravity = (0.1, -0.2, -9.6) if k % 5 == 4 else (0.0, 0.0, -9.81)
        for kd in (compiled, numpy_path):
            if k % 7 == 3:  # a batched state in between
                kd.set_state(*(np.stack([x, x]) for x in arrays))
            if k % 7 == 5:  # a state the kernels do not take (lists): the numpy path in between
                kd.set_state(*(x.tolist() for x in arrays))
                assert kd._engine._state1 is None
            kd.set_state(*arrays, gravity=gravity)
        assert compiled._engine._state1 is not None and numpy_path._engine._state1 is None
        for q in order:
            assert_close(queries[q](compiled), queries[q](numpy_path), 1e-12, f"{name} {rep} {order} {q}")


@pytest.mark.parametrize("rep", REPS)
def test_arguments_the_kernels_do_not_take(models, rep, monkeypatch) -> None:
    """Lists, float32, read-only and strided arguments of ID and FD, and invalid values, on a state
    of the compiled path: what the numpy path gives (the same numbers, the same errors)."""
    model = models["random"]
    rng = np.random.default_rng(3)
    compiled, numpy_path = compiled_and_numpy(model, "mujoco", rep, monkeypatch)
    st = random_state(model, rng, rep)
    for kd in (compiled, numpy_path):
        kd.set_state(*(np.array(x) for x in (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)))
    assert compiled._engine._state1 is not None
    a = rng.normal(size=2 * model.nv)
    tau = rng.normal(size=2 * model.n_dofs)
    read_only = a[: model.nv].copy()
    read_only.setflags(write=False)
    accelerations = [
        (a[:6].tolist(), a[6 : model.nv].tolist()),
        (a[:6].astype(np.float32), a[6 : model.nv].astype(np.float32)),
        (read_only[:6], read_only[6:]),
        (a[0:12:2], a[12 : 12 + 2 * model.n_dofs : 2]),  # strided
    ]
    for base_acc, s_ddot in accelerations:
        assert_close(
            compiled.inverse_dynamics(base_acc, s_ddot), numpy_path.inverse_dynamics(base_acc, s_ddot), 1e-12
        )
    for t in (tau[: model.n_dofs].astype(np.float32), tau[::2], tau[: model.n_dofs].tolist()):
        assert_close(compiled.forward_dynamics(t), numpy_path.forward_dynamics(t), 1e-12)
    bad = [(np.full(6, np.nan), a[6 : model.nv]), (a[:6], a[6:8]), (a[:5], a[6 : model.nv])]
    for base_acc, s_ddot in bad:
        for kd in (compiled, numpy_path):
            with pytest.raises(bridge.errors.BridgeError):
                kd.inverse_dynamics(base_acc, s_ddot)
    t_bad = np.full(model.n_dofs, np.inf)
    answers = []
    for kd in (compiled, numpy_path):
        try:
            answers.append(kd.forward_dynamics(t_bad))
        except bridge.errors.BridgeError as exc:
            answers.append(type(exc))
    if isinstance(answers[1], type):
        assert answers[0] is answers[1]
    else:
        assert_close(answers[0], answers[1], 1e-12)
    # and the state's own queries still answer as the numpy path's
    assert_close(compiled.mass_matrix(), numpy_path.mass_matrix(), 1e-12)
    assert_close(compiled.bias_forces(), numpy_path.bias_forces(), 1e-12)


def test_the_kernels_take_a_state_as_the_checks_do(models, monkeypatch) -> None:
    """A state the kernels reject changes nothing: MuJoCo's data keeps the previous state, whose
    stages computed are reused."""
    model = models["solo12"]
    compiled, _ = compiled_and_numpy(model, "mujoco", "body", monkeypatch)
    st = random_state(model, np.random.default_rng(9), "body")
    H, s, vb, sd = (np.array(x) for x in (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot))
    compiled.set_state(H, s, vb, sd)
    engine = compiled._engine
    M, h = compiled.mass_matrix().copy(), compiled.bias_forces().copy()
    qpos = engine.data.qpos.copy()
    for args in ((H, s, np.r_[vb[:5], np.nan], sd), (H * 2.0, s, vb, sd)):
        with pytest.raises(bridge.errors.BridgeError):
            compiled.set_state(*args)
        assert engine._state1 is not None
        assert_close(engine.data.qpos, qpos, 0.0, "MuJoCo's data unchanged")
        assert_close(engine.mass_matrix(), M, 0.0, "the engine's M (not KinDyn's cache)")
        assert_close(engine.bias_forces(), h, 0.0)


#: ways to make one state invalid: (which argument, how)
_INVALID = [(arg, how) for arg in ("H", "s", "vb", "sd") for how in ("nan", "inf")]
_INVALID += [("H", "not a rotation"), ("H", "last row")]


def _invalid(arrays: list, arg: str, how: str, entry: int) -> list:
    """Copies of ``arrays`` ``(H, s, vb, sd)`` with one argument made invalid."""
    out = [x.copy() for x in arrays]
    x = out[("H", "s", "vb", "sd").index(arg)]
    if how == "not a rotation":
        x[:3, :3] *= 1.5
    elif how == "last row":
        x[3, entry % 4] += 0.5
    else:
        x.flat[entry % (12 if arg == "H" else x.size)] = np.nan if how == "nan" else -np.inf
    return out


@settings(max_examples=25, deadline=None)
@given(
    n_links=st.integers(2, 9),
    seed=st.integers(0, 2**16),
    rep=st.sampled_from(REPS),
    invalid=st.sampled_from(_INVALID),
    entry=st.integers(0, 2**16),
)
def test_mujocos_data_is_written_all_or_nothing(n_links, seed, rep, invalid, entry) -> None:
    """The compiled path's kernel writes a checked state into MjData's own ``qpos`` and ``qvel``
    (and the engine's one state array) only when the whole state is valid: after an invalid one
    (a NaN or an infinity in any argument, a pose that is not one) the error is raised, the
    MjData, the state array and the engine's answers (its stages reused) are those of the previous
    state, and the next queries answer as a fresh KinDyn at that state."""
    model = bridge.random_model(
        n_links, seed=seed, joint_kinds=("revolute", "prismatic", "fixed"), massless_probability=0.0
    )
    assume(model.n_dofs > 0)
    with pytest.MonkeyPatch.context() as patch:
        compiled, _ = compiled_and_numpy(model, "mujoco", rep, patch)
    rng = np.random.default_rng(seed)
    state = random_state(model, rng, rep)
    arrays = [np.array(x) for x in (state.world_H_base.matrix, state.s, state.base_velocity, state.s_dot)]
    compiled.set_state(*arrays)
    engine, frame = compiled._engine, model.frame_names[-1]
    assert engine._state1 is not None, "the compiled path"
    before = (engine.mass_matrix(), engine.bias_forces(), engine.frame_jacobian(frame))
    data = (engine.data.qpos.copy(), engine.data.qvel.copy(), engine._state1.copy())
    with pytest.raises(bridge.errors.BridgeError):
        compiled.set_state(*_invalid(arrays, *invalid, entry))
    assert engine._state1 is not None
    for now, then, what in zip(
        (engine.data.qpos, engine.data.qvel, engine._state1), data, ("qpos", "qvel", "state"), strict=True
    ):
        assert_close(now, then, 0.0, f"{what} unchanged after {invalid}")
    after = (engine.mass_matrix(), engine.bias_forces(), engine.frame_jacobian(frame))
    for now, then in zip(after, before, strict=True):
        assert_close(now, then, 0.0, f"the engine's answers after {invalid}")
    fresh = bridge.KinDyn(model, "mujoco", rep)
    fresh.set_state(*arrays)
    nu_dot, tau = rng.normal(size=model.nv), rng.normal(size=model.n_dofs)
    for query in (
        lambda kd: kd.mass_matrix(),
        lambda kd: kd.bias_forces(),
        lambda kd: kd.frame_jacobian(frame),
        lambda kd: kd.inverse_dynamics(nu_dot[:6], nu_dot[6:]),
        lambda kd: kd.forward_dynamics(tau),
    ):
        assert_close(query(compiled), query(fresh), 1e-12, f"{rep} after {invalid}")
