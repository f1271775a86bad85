"""Random wrong shapes, types and values fed to every public function: only BridgeErrors come out.

Each example takes a valid call and replaces one argument by junk (None, strings, complex numbers,
NaN, inf, 1e200, wrong shapes, empty or ragged arrays, arbitrary objects, bad mappings). The call
must either raise a :class:`bridge.BridgeError` subclass or return a finite result; a raw NumPy,
Python or library exception, or a NaN/inf in a result, fails the test.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bridge
from tests.helpers import small_model

ENGINES = ("pinocchio", "idyntree", "featherstone")
EXAMPLES = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)


# --------------------------------------------------------------------------- junk
def _arrays() -> st.SearchStrategy:
    shapes = st.lists(st.integers(0, 8), min_size=0, max_size=4).map(tuple)
    fill = st.sampled_from([0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e200, -1e308, 1e-320])
    return st.tuples(shapes, fill).map(lambda sf: np.full(sf[0], sf[1]))


JUNK = st.one_of(
    st.sampled_from(
        [
            None,
            "",
            "x",
            "1.0",
            b"\x00",
            1j,
            np.array([1j, 2.0]),
            True,
            [[1.0, 2.0], [3.0]],
            {"a": 1},
            {"b": np.zeros((6, 6))},
            {3: np.zeros(6)},
            object(),
            np.zeros((2, 3), dtype=object),
            np.array(["a", "b"]),
            -1,
            0,
            10**400,
            float("nan"),
            float("inf"),
            1e200,
            -5.0,
            (),
            [],
        ]
    ),
    _arrays(),
)


def _finite(value: object) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.all(np.isfinite(value)))
    if isinstance(value, (tuple, list)):
        return all(_finite(v) for v in value)
    return True


def call(fn: Callable, *args, **kwargs) -> None:
    """Call ``fn``: a BridgeError, or a finite result; anything else fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(*args, **kwargs)
        except bridge.BridgeError:
            return
    assert _finite(out), f"non-finite result from {getattr(fn, '__name__', fn)}"


def corrupt(args: list, index: int, junk: object) -> list:
    out = list(args)
    out[index % len(out)] = junk
    return out


# --------------------------------------------------------------------------- fixtures
@functools.cache
def _model(floating: bool = True) -> bridge.Model:
    return small_model(np.random.default_rng(3), floating=floating)


@functools.cache
def _kindyn(engine: str, floating: bool = True) -> bridge.KinDyn:
    return bridge.KinDyn(_model(floating), engine, "mixed")


def _valid_state(model: bridge.Model) -> list:
    n = model.n_dofs
    return [np.eye(4), np.full(n, 0.1), np.full(6, 0.2), np.full(n, 0.3)]


def _reset(kd: bridge.KinDyn) -> None:
    kd.set_state(*_valid_state(kd.model))


# --------------------------------------------------------------------------- KinDyn
@pytest.mark.parametrize("engine", ENGINES)
@EXAMPLES
@given(junk=JUNK, index=st.integers(0, 4))
def test_set_state_junk(engine: str, junk: object, index: int) -> None:
    kd = _kindyn(engine)
    args = [*_valid_state(kd.model), (0.0, 0.0, -9.81)]
    call(kd.set_state, *corrupt(args, index, junk))
    call(kd.mass_matrix)
    call(kd.bias_forces)
    _reset(kd)


@pytest.mark.parametrize("engine", ENGINES)
@EXAMPLES
@given(junk=JUNK, which=st.integers(0, 11), floating=st.booleans())
def test_kindyn_queries_junk(engine: str, junk: object, which: int, floating: bool) -> None:
    kd = _kindyn(engine, floating)
    _reset(kd)
    n = kd.model.n_dofs
    frame = kd.model.frame_names[-1]
    queries = [
        lambda: kd.inverse_dynamics(junk, np.zeros(n)),
        lambda: kd.inverse_dynamics(np.zeros(6), junk),
        lambda: kd.inverse_dynamics(np.zeros(6), np.zeros(n), junk),
        lambda: kd.inverse_dynamics(np.zeros(6), np.zeros(n), {frame: junk}),
        lambda: kd.forward_dynamics(junk),
        lambda: kd.forward_dynamics(np.zeros(n), junk),
        lambda: kd.forward_dynamics(np.zeros(n), {frame: junk}),
        lambda: kd.frame_transform(junk),
        lambda: kd.frame_jacobian(junk),
        lambda: kd.frame_velocity(junk),
        lambda: kd.frame_acceleration(frame, junk, np.zeros(n)),
        lambda: kd.frame_acceleration(junk, np.zeros(6), np.zeros(n)),
    ]
    call(queries[which])


@EXAMPLES
@given(junk=JUNK, index=st.integers(0, 2))
def test_kindyn_constructor_junk(junk: object, index: int) -> None:
    args = corrupt([_model(), "pinocchio", "mixed"], index, junk)
    call(bridge.KinDyn, *args)


@pytest.mark.parametrize("engine", ENGINES)
@EXAMPLES
@given(
    batch=st.lists(st.lists(st.integers(0, 3), max_size=2).map(tuple), min_size=5, max_size=5),
)
def test_batch_shapes_that_may_not_broadcast(engine: str, batch: list) -> None:
    kd = _kindyn(engine)
    _reset(kd)  # each example from the same state
    n = kd.model.n_dofs
    H = np.broadcast_to(np.eye(4), (*batch[0], 4, 4))
    call(
        kd.set_state,
        H,
        np.zeros((*batch[1], n)),
        np.zeros((*batch[2], 6)),
        np.zeros((*batch[3], n)),
        np.broadcast_to([0.0, 0.0, -9.81], (*batch[4], 3)),
    )
    call(kd.mass_matrix)
    call(kd.forward_dynamics, np.ones((*batch[4], n)))
    call(kd.inverse_dynamics, np.zeros((*batch[2], 6)), np.zeros((*batch[1], n)))
    _reset(kd)


# --------------------------------------------------------------------------- other public functions
def _state(model: bridge.Model) -> bridge.State:
    return bridge.State(*_valid_state(model))


@EXAMPLES
@given(junk=JUNK, index=st.integers(0, 4))
def test_state_junk(junk: object, index: int) -> None:
    call(bridge.State, *corrupt([*_valid_state(_model()), "mixed"], index, junk))


def _pinocchio_q(model: bridge.Model) -> np.ndarray:
    return bridge.to_pinocchio_state(model, _state(model))[0]


@EXAMPLES
@given(junk=JUNK, which=st.integers(0, 9), index=st.integers(0, 5))
def test_conversions_junk(junk: object, which: int, index: int) -> None:
    model = _model()
    state = _state(model)
    nv = model.nv
    fns: list[tuple[Callable, list]] = [
        (bridge.velocity_transform, [model, state, "body", "pinocchio"]),
        (bridge.convert_velocity, [model, state, np.zeros(nv), "body", "mixed"]),
        (bridge.convert_acceleration, [model, state, np.zeros(nv), "inertial", "featherstone"]),
        (bridge.convert_jacobian, [model, state, np.zeros((6, nv)), "body", "mixed"]),
        (bridge.convert_generalized_force, [model, state, np.zeros(nv), "mixed", "pinocchio"]),
        (bridge.convert_mass_matrix, [model, state, np.eye(nv), "body", "inertial"]),
        (bridge.convert_bias_forces, [model, state, np.zeros(nv), np.eye(nv), "body", "mixed"]),
        (bridge.to_pinocchio_state, [model, state]),
        (bridge.from_pinocchio_state, [model, _pinocchio_q(model), np.zeros(nv), "mixed"]),
        (bridge.integrate, [state, np.zeros(6), np.zeros(model.n_dofs), 0.01]),
    ]
    fn, args = fns[which]
    call(fn, *corrupt(args, index, junk))


@EXAMPLES
@given(junk=JUNK, which=st.integers(0, 6))
def test_model_conversions_junk(junk: object, which: int) -> None:
    fns = [
        bridge.to_pinocchio,
        bridge.from_pinocchio,
        bridge.to_idyntree,
        bridge.from_idyntree,
        bridge.to_featherstone,
        bridge.from_featherstone,
        lambda x: bridge.from_pinocchio(bridge.to_pinocchio(_model()), floating=x),
    ]
    call(fns[which], junk)


@EXAMPLES
@given(junk=JUNK, key=st.sampled_from(["path_or_xml", "base", "joints", "floating", "locked", "mimic",
                                        "strict", "check_inertia"]))  # fmt: skip
def test_load_urdf_junk(junk: object, key: str) -> None:
    from pathlib import Path

    kwargs = {"path_or_xml": str(Path(__file__).resolve().parents[1] / "models" / "offsets.urdf")}
    kwargs[key] = junk
    call(bridge.load_urdf, **kwargs)


@EXAMPLES
@given(junk=JUNK, which=st.integers(0, 3))
def test_model_methods_junk(junk: object, which: int) -> None:
    model = _model()
    fns = [
        lambda: model.with_base(junk),
        lambda: model.with_dofs(junk),
        lambda: model.with_dofs(model.dof_names[:1], locked={model.dof_names[1]: junk}),
        lambda: model.forward_kinematics(junk),
    ]
    call(fns[which])


@EXAMPLES
@given(junk=JUNK, key=st.sampled_from(["model", "engines", "representations", "samples", "seed", "frames",
                                        "rtol", "fd_rtol", "fd_samples", "identities"]))  # fmt: skip
def test_cross_validate_junk(junk: object, key: str) -> None:
    kwargs = {"model": _model(), "engines": ["pinocchio"], "representations": ["body"], "samples": 1,
              "fd_samples": 0}  # fmt: skip
    kwargs[key] = junk
    if key in ("samples", "fd_samples") and isinstance(junk, int) and not isinstance(junk, bool):
        kwargs[key] = min(junk, 2)  # a valid count: keep the run short
    if key == "engines" and isinstance(junk, str) and junk:
        return  # a non-empty string is a comma-separated list of engines (tested elsewhere)
    call(bridge.cross_validate, **kwargs)


@EXAMPLES
@given(junk=JUNK, which=st.integers(0, 6))
def test_spatial_constructors_junk(junk: object, which: int) -> None:
    fns = [
        bridge.Transform,
        lambda x: bridge.Transform.from_rotation_translation(x, None),
        lambda x: bridge.Transform.from_quaternion_xyzw(x),
        bridge.Motion,
        bridge.Force,
        lambda x: bridge.SpatialInertia(x, np.zeros(3), np.eye(3)),
        lambda x: bridge.random_model(x),
    ]
    call(fns[which], junk)
