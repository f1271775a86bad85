"""Scale: every engine answers a 5,000-link chain or refuses it at once, naming the limit.

Each library's size check (the registry's ``size_check``) runs before anything is built: a refusal
must come from that precheck (``refuse_too_large`` in the traceback, the library's converter never
called), name the limit and the engines that take the model. The budgets (memory, set-up time) are
the user's to change. Wall-clock bounds are generous secondary checks only (CI machines are slow).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import bridge
from bridge.backends import limits, registry
from bridge.validation.cross_validation import available_engines

CHAIN_LINKS = 5000


@pytest.fixture(scope="module")
def chain() -> bridge.Model:
    """A 5,000-link floating chain of revolute joints, every link with mass."""
    return bridge.random_model(
        CHAIN_LINKS, seed=0, joint_kinds=("revolute",), branching=0.0, massless_probability=0.0
    )


@pytest.fixture(autouse=True)
def _default_budgets(monkeypatch):
    monkeypatch.delenv(limits.MEMORY_ENV, raising=False)
    monkeypatch.delenv(limits.SETUP_ENV, raising=False)
    limits.reset_budget()
    yield
    limits.reset_budget()


def _record(engine: str) -> registry.Library:
    record = registry.library(engine)
    if not record.installed:
        pytest.skip(f"{engine} is not installed")
    return record


def _size_problem(engine: str, model: bridge.Model) -> str | None:
    check = _record(engine).load("size_check")
    return None if check is None else check(model)


@pytest.mark.parametrize("engine", registry.engine_names())
def test_a_5000_link_chain_is_refused_by_the_precheck_or_passes_it(engine, chain, monkeypatch) -> None:
    """A refusal comes from the size check before the library builds anything (its model converter
    is made to fail if called), within seconds, naming the limit and the engines that take it."""
    record = _record(engine)
    reason = _size_problem(engine, chain)
    if reason is None:
        return  # answered: test_a_5000_link_chain_is_answered (slow)
    if record.to_model is not None:
        module, _, name = record.to_model.partition(":")

        def never(*args, **kwargs):
            raise AssertionError(f"{engine}: the model was converted before the size check refused it")

        engine_module = registry.resolve(record.engine.partition(":")[0])  # imported before patching
        monkeypatch.setattr(registry.resolve(module), name, never)
        monkeypatch.setattr(engine_module, name, never, raising=False)
    start = time.perf_counter()
    with pytest.raises(bridge.ModelTooLargeError) as err:
        bridge.KinDyn(chain, engine)
    elapsed = time.perf_counter() - start
    assert any(entry.name == "refuse_too_large" for entry in err.traceback)
    text = str(err.value)
    assert f"engine {engine!r} refuses model {chain.name!r}" in text and reason in text
    takers = limits.engines_taking(chain, exclude=engine)
    assert engine not in takers
    assert all(f"engine={name!r}" in text for name in takers)
    assert isinstance(err.value, bridge.BackendError) and isinstance(err.value, MemoryError)
    assert elapsed < 10.0  # measured 0.2 to 0.4 s; generous for loaded CI machines


def test_every_5000_link_refusal_leaves_an_engine_that_takes_the_chain(chain) -> None:
    takers = limits.engines_taking(chain)
    assert takers and all(_size_problem(name, chain) is None for name in takers)


@pytest.mark.slow
@pytest.mark.parametrize("engine", registry.engine_names())
def test_a_5000_link_chain_is_answered(engine, chain) -> None:
    """The engines whose size check takes the chain answer it: finite inverse dynamics, set up in
    about 1.2 to 3 s on a loaded 2-core machine (iDynTree and bridge's featherstone)."""
    _record(engine)
    if _size_problem(engine, chain) is not None:
        pytest.skip(f"{engine} refuses the chain (test_a_5000_link_chain_is_refused_by_the_precheck...)")
    start = time.perf_counter()
    kd = bridge.KinDyn(chain, engine)
    n = chain.n_dofs
    kd.set_state(np.eye(4), np.zeros(n), np.zeros(6), np.zeros(n))
    tau = kd.inverse_dynamics(np.zeros(6), np.zeros(n))
    assert tau.shape == (chain.nv,) and np.all(np.isfinite(tau))
    assert time.perf_counter() - start < 30.0


def test_a_chain_of_some_hundred_links_is_answered_by_every_engine() -> None:
    """The representative quick case: 200 links, within every size check, on every engine."""
    model = bridge.random_model(
        200, seed=1, joint_kinds=("revolute",), branching=0.0, massless_probability=0.0
    )
    n = model.n_dofs
    taus = {}
    for engine in available_engines():  # (those compared by default: jaxsim on request, in its tests)
        assert _size_problem(engine, model) is None
        kd = bridge.KinDyn(model, engine)
        kd.set_state(np.eye(4), np.zeros(n), np.zeros(6), np.zeros(n))
        taus[engine] = kd.inverse_dynamics(np.zeros(6), np.zeros(n))
    ref = next(iter(taus.values()))
    for engine, tau in taus.items():
        rtol = max(1e-9, registry.library(engine).rtol)  # (a float32 library states its floor)
        np.testing.assert_allclose(tau, ref, rtol=rtol, atol=rtol * np.max(np.abs(ref)), err_msg=engine)


# --------------------------------------------------------------------------- MuJoCo's depth limit
def _chain(n_links: int, **kwargs) -> bridge.Model:
    return bridge.random_model(
        n_links, seed=2, joint_kinds=("revolute",), branching=0.0, massless_probability=0.0, **kwargs
    )


def test_mujoco_depth_limit_is_checked_on_the_deepest_body() -> None:
    pytest.importorskip("mujoco")
    from bridge.backends.mujoco.bodies import MAX_DEPTH, depth_problem, plan_bodies, size_problem

    fits, too_deep = _chain(MAX_DEPTH, floating=False), _chain(MAX_DEPTH + 1, floating=False)
    assert size_problem(fits) is None and depth_problem(fits, plan_bodies(fits)) is None
    text = size_problem(too_deep)
    assert f"at most {MAX_DEPTH} deep" in text and f"'link{MAX_DEPTH}' at depth {MAX_DEPTH + 1}" in text
    assert depth_problem(too_deep, plan_bodies(too_deep)) == text
    # fixed joints add no body: a chain twice as long, every other joint fixed, fits
    welded = bridge.random_model(
        2 * MAX_DEPTH - 1, seed=3, joint_kinds=("revolute", "fixed"), branching=0.0, massless_probability=0.0
    )
    movable_depth = 1 + sum(j.movable for j in welded.joints)
    assert (size_problem(welded) is None) == (movable_depth <= MAX_DEPTH)


def test_to_mujoco_refuses_a_too_deep_model_before_building_its_spec(monkeypatch) -> None:
    pytest.importorskip("mujoco")
    from bridge.backends.mujoco import model as mujoco_model
    from bridge.backends.mujoco.bodies import MAX_DEPTH

    def never(*args, **kwargs):
        raise AssertionError("the MjSpec was built")

    monkeypatch.setattr(mujoco_model, "build_spec", never)
    with pytest.raises(bridge.ModelTooLargeError, match=f"at most {MAX_DEPTH} deep") as err:
        bridge.to_mujoco(_chain(MAX_DEPTH + 5))
    assert "engine='featherstone'" in str(err.value)


@pytest.mark.slow
def test_mujoco_compiler_takes_max_depth_and_refuses_one_more() -> None:
    """The measured limit itself: MuJoCo compiles bodies nested MAX_DEPTH deep and fails one deeper
    (about 1.5 s each)."""
    mujoco = pytest.importorskip("mujoco")
    from bridge.backends.mujoco.bodies import MAX_DEPTH

    def nested(depth: int):
        spec = mujoco.MjSpec()
        body = spec.worldbody
        for i in range(depth):
            body = body.add_body(name=f"b{i}", pos=[0, 0, 0.1], mass=1, inertia=[1, 1, 1])
            body.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0])
        return spec

    assert nested(MAX_DEPTH).compile().nbody == MAX_DEPTH + 1
    with pytest.raises(ValueError, match="depth limit"):
        nested(MAX_DEPTH + 1).compile()


# --------------------------------------------------------------------------- budgets
def test_pinocchio_memory_budget_is_the_users_to_change(monkeypatch) -> None:
    """A 300-DOF model needs 1.7 GB of Pinocchio data: refused under a 1 GB budget (set in Python or
    in the environment), at once, naming the budget and how to raise it; taken under the default."""
    _record("pinocchio")
    model = _chain(295, floating=True)  # 300 DOFs
    assert model.nv == 300 and _size_problem("pinocchio", model) is None
    limits.set_budget(memory="1GB")
    with pytest.raises(bridge.ModelTooLargeError) as err:
        bridge.KinDyn(model, "pinocchio")
    text = str(err.value)
    assert "1.7 GB" in text and "memory budget of 1.0 GB" in text and "bridge.set_budget(memory=...)" in text
    assert limits.MEMORY_ENV in text and "engine='featherstone'" in text
    assert any(entry.name == "refuse_too_large" for entry in err.traceback)
    limits.reset_budget()
    monkeypatch.setenv(limits.MEMORY_ENV, "1e9")
    assert "memory budget of 1.0 GB" in _size_problem("pinocchio", model)
    monkeypatch.setenv(limits.MEMORY_ENV, "2 GB")
    assert _size_problem("pinocchio", model) is None
    bridge.set_budget(memory=1e9)  # the Python setting wins over the environment
    assert _size_problem("pinocchio", model) is not None


def test_drake_setup_budget_is_the_users_to_change(chain) -> None:
    _record("drake")
    assert "over the set-up budget of 2 s" in _size_problem("drake", chain)
    limits.set_budget(setup_seconds=10)
    assert _size_problem("drake", chain) is None
    limits.set_budget(setup_seconds=0.01)
    assert "bridge.set_budget(setup_seconds=...)" in _size_problem("drake", _chain(400))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"memory": -1},
        {"memory": 0},
        {"memory": "lots"},
        {"memory": float("nan")},
        {"memory": True},
        {"setup_seconds": "x"},
        {"setup_seconds": -2.0},
        {"setup_seconds": [1]},
    ],
)
def test_bad_budgets_are_refused(kwargs) -> None:
    with pytest.raises(bridge.InvalidValueError, match="set_budget"):
        bridge.set_budget(**kwargs)


def test_a_bad_budget_in_the_environment_is_named(monkeypatch, chain) -> None:
    _record("pinocchio")
    monkeypatch.setenv(limits.MEMORY_ENV, "plenty")
    with pytest.raises(bridge.InvalidValueError, match=limits.MEMORY_ENV):
        bridge.KinDyn(chain, "pinocchio")


# --------------------------------------------------------------------------- jaxsim's recursion
def test_jaxsim_depth_limit_follows_the_recursion_limit(monkeypatch) -> None:
    """jaxsim's builder recursed past Python's limit between 125 and 140 chained joints (1,000
    frames, measured): the size check refuses beyond ``max_depth`` and moves with the limit."""
    import sys

    from bridge.backends.jaxsim.size import max_depth, size_problem

    limit = max_depth()
    assert 100 <= limit <= 125 and limit == sys.getrecursionlimit() // 8
    assert size_problem(_chain(limit + 1)) is None  # (the base link holds no joint)
    text = size_problem(_chain(limit + 2))
    assert text is not None and f"at most {limit} movable joints" in text
    monkeypatch.setattr(sys, "getrecursionlimit", lambda: 4000)
    assert size_problem(_chain(limit + 2)) is None


@pytest.mark.slow
def test_jaxsim_builds_a_chain_at_its_depth_limit() -> None:
    """The limit is not too cautious: jaxsim builds a chain as deep as it (about 10 s)."""
    pytest.importorskip("jaxsim")
    from bridge.backends.jaxsim.model import to_jaxsim
    from bridge.backends.jaxsim.size import max_depth

    assert to_jaxsim(_chain(max_depth() + 1)) is not None
