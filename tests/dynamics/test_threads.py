"""KinDyn and threads (bridge.dynamics.threads): one KinDyn per thread is safe with every engine; a
KinDyn shared between threads answers the thread that set its state and raises for any other, never
returning a wrong number.

Threads hammer KinDyns in parallel (the interpreter switching threads every microsecond, so that
calls interleave as much as they can) and every result is compared with a single-threaded
reference. Found before: a shared Pinocchio or MuJoCo KinDyn returned a wrong M or h in 2 to 9 of
300 calls, and two threads each with its own iDynTree KinDyn raised SWIG TypeErrors (iDynTree's
numpy overload of setRobotState is not thread-safe).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.backends import registry
from tests.dynamics._models import MODELS, ONE_COORDINATE
from tests.helpers import assert_close, random_state

ENGINES = registry.available_engines()  # every installed engine, jaxsim too
THREADS = 3
STATES = 12  # per thread


#: a batch that takes the parallel compiled kernels (bridge._numba.PARALLEL_MIN states and more)
LARGE = (40,)


def _batch(engine: str) -> tuple[int, ...]:
    """The states' batch shape: one state (the engines' single-state hot paths), but for jaxsim,
    which compiles per batch size (a batch of two, as in test_engine_isolation)."""
    return (2,) if engine == "jaxsim" else ()


def _queries(kd: bridge.KinDyn, a: np.ndarray, tau: np.ndarray) -> dict[str, Callable[[], np.ndarray]]:
    model = kd.model
    base_acc = a[..., :6] if model.floating else None
    s_ddot = a[..., model.nv - model.n_dofs :]
    out = {
        "mass_matrix": kd.mass_matrix,
        "bias_forces": kd.bias_forces,
        "gravity_forces": kd.gravity_forces,
        "frame_jacobian": lambda: kd.frame_jacobian("tool"),
        "frame_velocity": lambda: kd.frame_velocity("tool"),
        "inverse_dynamics": lambda: kd.inverse_dynamics(base_acc, s_ddot),
        "forward_dynamics": lambda: kd.forward_dynamics(tau),
        "com_position": kd.com_position,
        "nu": lambda: kd.nu,
    }
    if kd.engine_name == "pinocchio":  # analytical derivatives, compiled single-state kernels
        out["inverse_dynamics_derivatives"] = lambda: kd.inverse_dynamics_derivatives(base_acc, s_ddot)[0]
    return out


def _cases(engine: str, model: bridge.Model, seed: int, batch: tuple | None = None, k: int = STATES) -> list:
    """``k`` (state, gravity, a, tau) cases, each with a different gravity (batch: :func:`_batch`)."""
    rng = np.random.default_rng(seed)
    batch = _batch(engine) if batch is None else batch
    out = []
    for _ in range(k):
        state = random_state(model, rng, batch=batch)
        g = rng.normal(size=(*batch, 3)) * 5.0
        out.append((state, g, rng.normal(size=(*batch, model.nv)), rng.normal(size=(*batch, model.n_dofs))))
    return out


def _reference(engine: str, model: bridge.Model, cases: list[tuple]) -> list[dict[str, np.ndarray]]:
    kd = bridge.KinDyn(model, engine=engine)
    out = []
    for state, g, a, tau in cases:
        kd.set_robot_state(state, g)
        out.append({name: np.array(q()) for name, q in _queries(kd, a, tau).items()})
    return out


def _set(kd: bridge.KinDyn, state: bridge.State, g: np.ndarray) -> None:
    """set_state with arrays (the hot path) for one state, set_robot_state for a batch."""
    if state.s.ndim == 1:
        kd.set_state(state.world_H_base.matrix, state.s, state.base_velocity, state.s_dot, g)
    else:
        kd.set_robot_state(state, g)


@contextmanager
def _switching() -> Iterator[None]:
    """The interpreter switching threads every microsecond (5 ms by default): calls interleave."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _run(workers: list[Callable[[], None]]) -> None:
    """Run the workers in parallel threads (started together), re-raising the first failure."""
    start = threading.Barrier(len(workers))
    errors: list[BaseException] = []

    def run(work: Callable[[], None]) -> None:
        try:
            start.wait()
            work()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    with _switching():
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]


def _tolerance(engine: str) -> float:
    # the same engine on the same state: identical numbers (1e-12 leaves room for BLAS's threads)
    return 1e-12


def _model(floating: bool, compiled: bool) -> bridge.Model:
    """The small tree; with ``compiled``, its one-coordinate variant (what the compiled paths take)."""
    return ONE_COORDINATE if compiled else MODELS[floating]


def _kindyn(
    engine: str, model: bridge.Model, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> bridge.KinDyn:
    """A KinDyn; ``compiled``: its library engine takes its compiled single-state path (numba
    kernels over state arrays of its own) from the first state, not after 100,000 states."""
    if not compiled:
        return bridge.KinDyn(model, engine=engine)
    from bridge.backends.single import LibrarySingleState
    from bridge.derivatives.select import compiled_kernels

    if compiled_kernels() is None:
        pytest.skip("numba is not installed (or BRIDGE_NUMBA=0): no compiled path")
    with monkeypatch.context() as m:
        m.setattr(LibrarySingleState, "COMPILE_AFTER", 0)
        kd = bridge.KinDyn(model, engine=engine)
    assert kd._engine._kern is not None, f"{engine}: no compiled single-state path"
    return kd


# (the engines with a compiled single-state path, for floating bases: their variant taking it from
# the first state)
COMPILED = [e for e in ("pinocchio", "mujoco", "drake") if e in ENGINES]
PATHS = [(e, False) for e in ENGINES] + [(e, True) for e in COMPILED]
PATH_IDS = [f"{e}-compiled" if c else e for e, c in PATHS]
# (and a large batch for the engines with batched compiled kernels, parallel ones included: numba's
# threading layer aborts the process on concurrent parallel launches, bridge._numba serialises them)
CASES = [(e, False, f, None) for e in ENGINES for f in (True, False)]
CASES += [(e, True, True, None) for e in COMPILED]
CASES += [(e, False, True, LARGE) for e in ("pinocchio", "featherstone", "newton") if e in ENGINES]
CASE_IDS = [
    f"{e}{'-compiled' if c else ''}-{'floating' if f else 'fixed'}{'-batch' if b else ''}"
    for e, c, f, b in CASES
]


@pytest.mark.parametrize(("engine", "compiled", "floating", "batch"), CASES, ids=CASE_IDS)
def test_one_kindyn_per_thread_is_safe(
    engine: str, compiled: bool, floating: bool, batch: tuple | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threads, each with its own KinDyn on the same model, set states and ask every kind of query
    in parallel: every answer equals the single-threaded one."""
    model = _model(floating, compiled)
    cases = [_cases(engine, model, seed, batch, 4 if batch else STATES) for seed in range(THREADS)]
    refs = [_reference(engine, model, c) for c in cases]
    kds = [_kindyn(engine, model, compiled, monkeypatch) for _ in range(THREADS)]

    def worker(k: int) -> Callable[[], None]:
        def work() -> None:
            for rounds in range(2):
                for i, (state, g, a, tau) in enumerate(cases[k]):
                    _set(kds[k], state, g)
                    for name, query in _queries(kds[k], a, tau).items():
                        what = f"{engine} thread {k} round {rounds} state {i}: {name}"
                        assert_close(query(), refs[k][i][name], _tolerance(engine), what)

        return work

    _run([worker(k) for k in range(THREADS)])


@pytest.mark.parametrize(("engine", "compiled"), PATHS, ids=PATH_IDS)
def test_a_shared_kindyn_never_returns_a_wrong_number(
    engine: str, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threads share one KinDyn, each setting its own states and asking about them: an answer is
    either the one for the state that thread set, or a ThreadOwnershipError (another thread set its
    state in between); never another state's numbers, never another error."""
    model = _model(True, compiled)
    cases = [_cases(engine, model, seed) for seed in range(THREADS)]
    refs = [_reference(engine, model, c) for c in cases]
    kd = _kindyn(engine, model, compiled, monkeypatch)
    answered = [0] * THREADS
    refused = [0] * THREADS

    def worker(k: int) -> Callable[[], None]:
        def work() -> None:
            for rounds in range(3):
                for i, (state, g, a, tau) in enumerate(cases[k]):
                    _set(kd, state, g)
                    for name, query in _queries(kd, a, tau).items():
                        try:
                            value = query()
                        except bridge.ThreadOwnershipError:
                            refused[k] += 1
                            continue
                        what = f"{engine} shared, thread {k} round {rounds} state {i}: {name}"
                        assert_close(value, refs[k][i][name], _tolerance(engine), what)
                        answered[k] += 1

        return work

    _run([worker(k) for k in range(THREADS)])
    assert sum(answered) > 0, (answered, refused)


def test_the_thread_that_sets_the_state_owns_the_answers() -> None:
    """The contract, step by step: a KinDyn answers the thread that set its state; every query from
    another thread (cached or not, properties too) raises ThreadOwnershipError naming both threads,
    until that thread sets a state, which moves the KinDyn to it; a KinDyn without a state raises
    StateError in any thread."""
    model = MODELS[True]
    rng = np.random.default_rng(3)
    kd = bridge.KinDyn(model, engine="pinocchio")
    a, tau = rng.normal(size=model.nv), rng.normal(size=model.n_dofs)

    def in_thread(fn: Callable[[], object]) -> object:
        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(fn)
            exc = future.exception()
            return exc if exc is not None else future.result()

    assert isinstance(in_thread(kd.mass_matrix), bridge.StateError)  # no state yet: no owner
    state = random_state(model, rng)
    _set(kd, state, np.array([0.0, 0.0, -9.81]))
    M = kd.mass_matrix()  # cached now: the cached answer is refused to other threads too
    queries = dict(_queries(kd, a, tau), state=lambda: kd.state, batch_shape=lambda: kd.batch_shape)
    queries["coriolis_matrix"] = kd.coriolis_matrix
    queries["forward_dynamics_derivatives"] = lambda: kd.forward_dynamics_derivatives(tau)
    queries["frame_acceleration"] = lambda: kd.frame_acceleration("tool", a[:6], a[6:])
    for name, query in queries.items():
        exc = in_thread(query)
        assert isinstance(exc, bridge.ThreadOwnershipError), f"{name} from another thread: {exc!r}"
        assert "set_state" in str(exc) and str(threading.get_ident()) in str(exc)
    assert_close(kd.mass_matrix(), M, 0.0, "the owner's cached M")
    # another thread sets a state: it owns the answers now, and this thread's queries raise
    other = random_state(model, rng)

    def take_over() -> np.ndarray:
        kd.set_robot_state(other)
        return kd.mass_matrix()

    M_other = in_thread(take_over)
    ref = bridge.KinDyn(model, engine="pinocchio")
    ref.set_robot_state(other)
    assert_close(M_other, ref.mass_matrix(), 1e-12, "M for the thread that set the state")
    with pytest.raises(bridge.ThreadOwnershipError):
        kd.mass_matrix()
    with pytest.raises(bridge.ThreadOwnershipError):
        kd.inverse_dynamics(a[:6], a[6:])
    _set(kd, state, np.array([0.0, 0.0, -9.81]))  # back to this thread
    assert_close(kd.mass_matrix(), M, 1e-12, "M after taking the KinDyn back")


def test_a_kindyn_handed_from_thread_to_thread_works() -> None:
    """A worker pool using one KinDyn for one task at a time, each task on whichever thread runs it:
    each set_state moves the KinDyn to that thread, and every answer is right."""
    model = MODELS[True]
    cases = _cases("pinocchio", model, 7)
    refs = _reference("pinocchio", model, cases)
    kd = bridge.KinDyn(model, engine="pinocchio")
    lock = threading.Lock()  # the user's: one task at a time

    def task(i: int) -> None:
        state, g, a, tau = cases[i]
        with lock:
            _set(kd, state, g)
            for name, query in _queries(kd, a, tau).items():
                assert_close(query(), refs[i][name], 1e-12, f"task {i}: {name}")

    with ThreadPoolExecutor(3) as pool:
        for future in [pool.submit(task, i) for i in range(len(cases))]:
            future.result()


def test_the_kindyn_page_example_runs() -> None:
    """docs/api/kindyn.md's Threads example runs as written."""
    from tests.docs.test_tutorials import python_blocks

    page = Path(__file__).resolve().parents[2] / "docs" / "api" / "kindyn.md"
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    assert blocks, "no Python example on the KinDyn page"
    namespace: dict = {"__name__": "kindyn_page"}
    for i, code in enumerate(blocks, 1):
        exec(compile(code, f"{page.name} (python block {i})", "exec"), namespace)
    assert len(namespace["errors"]) == 1


def test_threads_building_their_first_kindyns_at_once() -> None:
    """In a fresh process (nothing imported, no library's kernels loaded yet), three threads build
    their own KinDyn of every engine at the same time and ask it: the libraries' first imports and
    kernel loads race, and every thread gets the same numbers (jaxsim, which compiles for tens of
    seconds per model, is in the tests above)."""
    code = textwrap.dedent(
        """
        import sys, threading, warnings
        import numpy as np
        import bridge
        from bridge.backends import registry
        from tests.helpers import random_state

        warnings.simplefilter("ignore")
        model = bridge.random_model(5, seed=1)
        state = random_state(model, np.random.default_rng(0))
        frame = model.frame_names[-1]
        for engine in [e for e in registry.available_engines() if e != "jaxsim"]:
            start, answers, errors = threading.Barrier(3), {}, []

            def work(k):
                try:
                    start.wait()
                    kd = bridge.KinDyn(model, engine=engine)
                    kd.set_robot_state(state)
                    answers[k] = (kd.mass_matrix(), kd.bias_forces(), kd.frame_bias_acc(frame))
                except Exception as exc:
                    errors.append(repr(exc))

            threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, (engine, errors)
            for k in (1, 2):
                for a, b in zip(answers[0], answers[k]):
                    assert np.array_equal(a, b), engine
            print(engine, "ok")
        """
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "pinocchio ok" in out.stdout, out.stdout
