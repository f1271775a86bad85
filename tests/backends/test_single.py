"""The single-state hot paths of the library engines (bridge/backends/single.py, and the mujoco and
drake engines' single.py): the compiled and numpy base blocks against the change of variables, the
argument checks, and the engines' results whatever the order of the queries on one state, against a
fresh KinDyn (1e-12), with an invalid state changing nothing."""

from __future__ import annotations

import importlib.util
import itertools

import numpy as np
import pytest

import bridge
from bridge.backends.single import SingleMatrixBack, single_arrays
from bridge.conventions.change_of_variables import NEUTRAL, change_of_variables
from bridge.conventions.convert import convention
from bridge.errors import StateError
from bridge.robots import robot_path
from tests.helpers import assert_close, random_state, small_model

REPS = ("body", "inertial", "mixed")
ENGINES = [e for e in ("mujoco", "drake") if importlib.util.find_spec({"drake": "pydrake"}.get(e, e))]


def _change_and_matrix(seed: int, rep: str, floating: bool) -> tuple:
    """``(rng, model, cov, M)``: a small model's change of variables from ``rep`` to MuJoCo's
    convention at a random state (a DOF order that is not MuJoCo's, depth first) and a random
    symmetric positive definite M (nv, nv)."""
    rng = np.random.default_rng(seed)
    model = small_model(rng, floating)
    state = random_state(model, rng, rep)
    cov = change_of_variables(model, state, NEUTRAL[bridge.Representation.parse(rep)], convention("mujoco"))
    A = rng.normal(size=(model.nv, model.nv))
    return rng, model, cov, A @ A.T


def _back(cov, compiled: bool, **options) -> SingleMatrixBack:
    """The cov's SingleMatrixBack, compiled (skips without numba) or on its numpy path."""
    back = SingleMatrixBack(cov.joints, **options)
    if not compiled:
        back._kernel = back._columns = back._rows = None  # the numpy path (no numba)
    elif back._kernel is None:
        pytest.skip("numba is not installed")
    return back


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
@pytest.mark.parametrize("compiled", [True, False])
def test_matrix_and_columns_back_equal_the_change_of_variables(
    rep: str, floating: bool, compiled: bool
) -> None:
    rng, model, cov, M = _change_and_matrix(3, rep, floating)
    back = _back(cov, compiled)
    J, tau = rng.normal(size=(6, model.nv)), rng.normal(size=model.nv)
    assert_close(back(M.copy(), cov.X), cov.matrix_back(M), 1e-12, "T^T M T")
    assert_close(back.force(tau, cov.X, cov), cov.force_back(tau), 1e-12, "T^T tau")
    assert_close(back.columns(J.copy(), cov.X, cov), cov.jacobian_back(J), 1e-12, "J T")


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("compiled", [True, False])
def test_matrix_back_reads_the_upper_triangle_when_not_full(rep: str, compiled: bool) -> None:
    rng, _, cov, M = _change_and_matrix(4, rep, True)
    back = _back(cov, compiled, full=False)
    upper = np.triu(M) + np.tril(rng.normal(size=M.shape), -1)  # the lower triangle is junk
    assert_close(back(upper, cov.X), cov.matrix_back(M), 1e-12, "T^T M T")


@pytest.mark.parametrize("zero", ["none", "lower-left", "upper-right", "both"])
def test_base_congruence_skips_zero_blocks_exactly(zero: str) -> None:
    """The compiled ``T^T M T`` skips X's off-diagonal 3x3 blocks that are exactly zero (every
    pattern; junk where it must not read M): equal to the dense product."""
    kernels = pytest.importorskip("bridge.backends.single_kernels")
    rng = np.random.default_rng(7)
    nv = 14
    A = rng.normal(size=(nv, nv))
    M = A @ A.T
    X = rng.normal(size=(6, 6))
    if zero in ("lower-left", "both"):
        X[3:, :3] = 0.0
    if zero in ("upper-right", "both"):
        X[:3, 3:] = 0.0
    T = np.eye(nv)
    T[:6, :6] = X
    junk = M.copy()  # (its base rows' lower triangle is not read: junk there)
    junk[6:, :6] = rng.normal(size=(nv - 6, 6))
    junk[:6, :6] = np.triu(M[:6, :6]) + np.tril(rng.normal(size=(6, 6)), -1)
    kernels.base_congruence(junk, X, np.empty((6, 6)))
    assert_close(junk, T.T @ M @ T, 1e-12, f"T^T M T, {zero} zero")


def test_matrix_back_loads_its_kernels_after_compile_after_matrices() -> None:
    _, _, cov, M = _change_and_matrix(5, "mixed", True)
    back = SingleMatrixBack(cov.joints, compile_after=2)
    loaded = []
    for _ in range(3):
        assert_close(back(M.copy(), cov.X), cov.matrix_back(M), 1e-12, "T^T M T")
        loaded.append(back._kernel is not None)
    numba = bridge.derivatives.select.compiled_kernels() is not None
    assert loaded == [False, numba, numba]


def test_single_arrays_takes_one_valid_state_only() -> None:
    H, s, v = np.eye(4), np.zeros(3), np.zeros(6)
    assert single_arrays(bridge.Transform(H), s, v, s, (3,)) is not None
    assert single_arrays(H.tolist(), [0, 0, 0], v, s, (3,)) is not None
    bad_pose = H.copy()
    bad_pose[0, 1] = 0.5
    for args in (
        (H[None], s, v, s),  # batched
        (H, np.zeros(4), v, s),  # shape
        (H, s, np.zeros(5), s),
        (H, s.astype(complex), v, s),  # kind
        (bad_pose, s, v, s),  # not a rotation
        (H, "abc", v, s),
    ):
        assert single_arrays(*args, (3,)) is None


def _queries(model: bridge.Model, rng: np.random.Generator) -> dict:
    nu_dot, tau = rng.normal(size=model.nv), rng.normal(size=model.n_dofs)
    base_acc = nu_dot[:6] if model.floating else None
    frame = model.frame_names[-1]
    return {
        "M": lambda kd: kd.mass_matrix(),
        "h": lambda kd: kd.bias_forces(),
        "g": lambda kd: kd.gravity_forces(),
        "J": lambda kd: kd.frame_jacobian(frame),
        "ID": lambda kd: kd.inverse_dynamics(base_acc, nu_dot[model.nv - model.n_dofs :]),
        "FD": lambda kd: kd.forward_dynamics(tau),
        "v": lambda kd: kd.frame_velocity(frame),
    }


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
def test_any_order_of_queries_gives_a_fresh_kindyns_results(engine: str, rep: str, floating: bool) -> None:
    """The library's stages computed once per state are reused only for that state: every order of
    queries (and a batched state in between) gives what a fresh KinDyn gives."""
    rng = np.random.default_rng(11)
    model = small_model(rng, floating)
    states = [random_state(model, rng, rep) for _ in range(2)]
    queries = _queries(model, rng)
    g = np.array([0.2, -0.1, -9.7])
    reference = []
    for st in states:
        kd = bridge.KinDyn(model, engine, rep)
        kd.set_state(st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot, gravity=g)
        reference.append({name: fn(kd) for name, fn in queries.items()})
    kd = bridge.KinDyn(model, engine, rep)
    orders = [*itertools.permutations(["M", "h", "J", "ID", "FD"], 3), ("FD", "ID", "g", "v", "M")]
    for k, order in enumerate(orders):
        i = k % 2
        st = states[i]
        arrays = (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)
        if k % 7 == 3:  # a batched state in between
            kd.set_state(*(np.stack([x, x]) for x in arrays))
        kd.set_state(st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot, gravity=g)
        for name in order:
            assert_close(queries[name](kd), reference[i][name], 1e-12, f"{engine} {rep} {order} {name}")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
def test_an_invalid_state_changes_nothing(engine: str, rep: str) -> None:
    model = bridge.load_urdf(robot_path("solo12"))
    rng = np.random.default_rng(4)
    st = random_state(model, rng, rep)
    queries = _queries(model, rng)
    kd = bridge.KinDyn(model, engine, rep)
    kd.set_state(st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)
    before = {name: fn(kd) for name, fn in queries.items() if name in ("M", "ID")}
    kd.set_state(st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)  # nothing cached
    s_bad = st.s.copy()
    s_bad[0] = np.nan
    with pytest.raises(StateError):
        kd.set_state(st.world_H_base.matrix, s_bad, st.base_velocity, st.s_dot)
    for name, value in before.items():
        assert_close(queries[name](kd), value, 1e-12, f"{engine} {rep} {name} after an invalid state")
    assert_close(kd.state.s, st.s, 0.0, "the state is kept")


# ---------------------------------------------------------------------------- the compiled path
def _kindyn(model: bridge.Model, engine: str, rep: str, compiled: bool, monkeypatch) -> bridge.KinDyn:
    """A KinDyn whose engine takes the compiled single-state path from the first state, or never."""
    from bridge.backends.single import LibrarySingleState

    with monkeypatch.context() as m:
        m.setattr(LibrarySingleState, "COMPILE_AFTER", 0 if compiled else 10**12)
        return bridge.KinDyn(model, engine, rep)


def _compiled_models() -> dict[str, bridge.Model]:
    rng = np.random.default_rng(5)
    revolute = bridge.random_model(7, seed=12, joint_kinds=("revolute", "prismatic", "fixed"))
    return {"solo12": bridge.load_urdf(robot_path("solo12")), "random": revolute, "small": small_model(rng)}


@pytest.fixture(scope="module")
def compiled_models() -> dict[str, bridge.Model]:
    return _compiled_models()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("name", ["solo12", "random", "small"])
def test_the_compiled_path_equals_the_numpy_path(compiled_models, engine, rep, name, monkeypatch) -> None:
    """With numba, every query of a state set through the compiled kernels (one call: the checks,
    q, v and the change of variables from the declarations) equals the numpy path's, to 1e-12, for
    float64 arrays, read-only arrays (a State's), lists and float32 inputs alike."""
    if bridge.derivatives.select.compiled_kernels() is None:
        pytest.skip("numba is not installed (or BRIDGE_NUMBA=0)")
    model = compiled_models[name]
    rng = np.random.default_rng(len(name) + len(rep))
    kds = [_kindyn(model, engine, rep, c, monkeypatch) for c in (True, False)]
    queries = _queries(model, rng)
    for k in range(4):
        st = random_state(model, rng, rep)
        arrays = [st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot]  # read-only
        if k == 1:
            arrays = [np.array(x) for x in arrays]  # writable
        elif k == 2:
            arrays = [x.tolist() for x in arrays]
        elif k == 3:
            arrays = [arrays[0], *(np.asarray(x, dtype=np.float32) for x in arrays[1:])]
        answers = []
        for kd in kds:
            kd.set_state(*arrays)
            state = {"nu": kd.state.nu, "H": kd.state.world_H_base.matrix}
            answers.append({q: fn(kd) for q, fn in queries.items()} | state)
        compiled = kds[0]._engine._state1 is not None
        if name != "small":  # (one-coordinate joints: the compiled path's models)
            assert kds[0]._engine._kern is not None
        if k in (0, 1):  # float64 arrays, read-only or not: the compiled path when there is one
            assert compiled == (kds[0]._engine._kern is not None), f"{engine} {name}: not compiled"
        assert kds[1]._engine._state1 is None
        for q in answers[1]:
            assert_close(
                answers[0][q], answers[1][q], 1e-12, f"{engine} {rep} {name} {q} (compiled {compiled})"
            )


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
def test_the_compiled_path_rejects_what_state_rejects(engine, rep, monkeypatch) -> None:
    """Invalid and unusual inputs on the compiled path: the same errors as the numpy path, the
    previous state kept; a batch in between and back."""
    if bridge.derivatives.select.compiled_kernels() is None:
        pytest.skip("numba is not installed (or BRIDGE_NUMBA=0)")
    model = bridge.load_urdf(robot_path("solo12"))
    rng = np.random.default_rng(8)
    kd = _kindyn(model, engine, rep, True, monkeypatch)
    st = random_state(model, rng, rep)
    H, s, vb, sd = (np.array(x) for x in (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot))
    kd.set_state(H, s, vb, sd)
    assert kd._engine._state1 is not None
    M = kd.mass_matrix().copy()
    bad = [
        (H, np.full_like(s, np.nan), vb, sd),
        (H, s, np.r_[vb[:5], np.inf], sd),
        (H * 2.0, s, vb, sd),
        (H, s[:-1], vb, sd[:-1]),
    ]
    for args in bad:
        with pytest.raises(bridge.errors.BridgeError):
            kd.set_state(*args)
        assert_close(kd.mass_matrix(), M, 0.0, "the previous state is kept")
    kd.set_state(*(np.stack([x, x]) for x in (H, s, vb, sd)))  # a batch
    assert kd.mass_matrix().shape == (2, model.nv, model.nv)
    kd.set_state(H, s, vb, sd)
    assert_close(kd.mass_matrix(), M, 1e-12, "back to the single state")


# ---------------------------------------------------------------------------- no re-bound methods
@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
@pytest.mark.parametrize("engine", ["pinocchio", *ENGINES])
def test_the_paths_switch_without_rebinding_methods(engine: str, compiled: bool, monkeypatch) -> None:
    """Switching between the numpy, compiled and general paths (a single state, a batch, a list
    state, single states again) leaves no method of the engine shadowed on the instance (no
    callable in its ``__dict__`` named like a method of its class, no bound method of its own),
    and every query answers as a fresh KinDyn's."""
    from bridge.derivatives.select import compiled_kernels

    if compiled and compiled_kernels() is None:
        pytest.skip("numba is not installed (or BRIDGE_NUMBA=0)")
    model = bridge.random_model(6, seed=3, joint_kinds=("revolute", "prismatic"))
    rng = np.random.default_rng(11)
    after = 0 if compiled else 10**12
    with monkeypatch.context() as m:
        from bridge.backends.single import LibrarySingleState

        m.setattr(LibrarySingleState, "COMPILE_AFTER", after)
        kd = bridge.KinDyn(model, engine, "mixed")
    eng = kd._engine
    frame = model.frame_names[-1]
    methods = {name for name in dir(type(eng)) if callable(getattr(type(eng), name, None))}
    states = [random_state(model, rng, "mixed") for _ in range(3)]
    arrays = [
        [np.array(x) for x in (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)] for st in states
    ]
    steps = [arrays[0], [np.stack([x, x]) for x in arrays[1]], [x.tolist() for x in arrays[2]], arrays[1]]
    for k, step in enumerate(steps):
        kd.set_state(*step)
        if k in (0, 3):  # one single state of float arrays: the path asked for
            assert (eng._state1 is not None) is compiled, f"{engine} step {k}: not the {after} path"
        shadowed = sorted(n for n, v in vars(eng).items() if callable(v) and n in methods)
        own = sorted(n for n, v in vars(eng).items() if getattr(v, "__self__", None) is eng)
        assert not shadowed and not own, f"{engine} step {k}: re-bound on the instance: {shadowed + own}"
        fresh = bridge.KinDyn(model, engine, "mixed")
        fresh.set_state(*step)
        for name, query in (("M", "mass_matrix"), ("h", "bias_forces")):
            assert_close(getattr(kd, query)(), getattr(fresh, query)(), 1e-12, f"{engine} step {k} {name}")
        assert_close(kd.frame_jacobian(frame), fresh.frame_jacobian(frame), 1e-12, f"{engine} step {k} J")


# ---------------------------------------------------------------------------- when it loads
def _single_state_engines() -> list[str]:
    """The installed registered engines with a library single-state path (LibrarySingleState)."""
    from bridge.backends import registry
    from bridge.backends.single import LibrarySingleState

    engines = registry.available_engines()
    return [e for e in engines if issubclass(registry.engine_class(e), LibrarySingleState)]


@pytest.mark.parametrize("engine", _single_state_engines())
def test_the_environment_sets_when_the_compiled_path_loads(engine: str, monkeypatch) -> None:
    """``BRIDGE_COMPILE_AFTER``: an engine made with it set serves that many single states on numpy,
    then its compiled path (read once, when the engine is made); ``0`` compiles from the first
    state; the numbers are the same on both paths."""
    from bridge.derivatives.select import compiled_kernels

    if compiled_kernels() is None:
        pytest.skip("numba is not installed (or BRIDGE_NUMBA=0)")
    model = _compiled_models()["random"]
    rng = np.random.default_rng(21)
    states = [random_state(model, rng, "mixed") for _ in range(4)]
    kds = {}
    for after in ("2", "0", "1_000_000"):
        monkeypatch.setenv("BRIDGE_COMPILE_AFTER", after)
        kds[after] = bridge.KinDyn(model, engine, "mixed")
    monkeypatch.setenv("BRIDGE_COMPILE_AFTER", "0")  # (the engines made above keep their number)
    loaded = {after: [] for after in kds}
    for st in states:
        for after, kd in kds.items():
            kd.set_state(st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)
            loaded[after].append(kd._engine._kern is not None)
        ref = kds["1_000_000"]
        for after in ("2", "0"):
            assert_close(kds[after].mass_matrix(), ref.mass_matrix(), 1e-12, f"{engine} after={after} M")
            assert_close(kds[after].bias_forces(), ref.bias_forces(), 1e-12, f"{engine} after={after} h")
    assert loaded == {
        "2": [False, True, True, True],
        "0": [True, True, True, True],
        "1_000_000": [False, False, False, False],
    }


@pytest.mark.parametrize("value", ["-1", "abc", "1.5", "2e4", "²"])
def test_a_wrong_compile_after_names_the_variable(value: str, monkeypatch) -> None:
    monkeypatch.setenv("BRIDGE_COMPILE_AFTER", value)
    model = _compiled_models()["random"]
    with pytest.raises(bridge.InvalidValueError, match=r"BRIDGE_COMPILE_AFTER.*whole number"):
        bridge.KinDyn(model, "pinocchio", "mixed")
