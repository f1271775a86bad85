"""Junk fed to the newer surfaces: MJCF text, every library's model and state converters (read from the
registry), and every derivative function (KinDyn's and the stateless ones).

As in :mod:`tests.test_bad_input_properties`: each call raises a :class:`bridge.BridgeError` or returns
a finite result; a raw exception, a crash or a silent NaN/inf fails. MJCF text is a valid file with
one attribute of each kind (positions, quaternions, masses, inertias, axes, ranges, sizes, gravity,
...) set to a hostile value (NaN, inf, 1e308, negative, empty, words, too many numbers) or with its
characters mutated; a file that loads must give finite dynamics, and nothing may print from C
(MuJoCo's own "XML contains a 'NaN'" line).
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bridge
from bridge.backends import registry
from tests.helpers import assert_close, random_state
from tests.test_bad_input_properties import JUNK, _model, _valid_state, call, corrupt

ENGINES = registry.available_engines()
EXAMPLES = settings(
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    deadline=None,
)
needs_mujoco = pytest.mark.skipif(not registry.library("mujoco").installed, reason="needs the mujoco extra")


# --------------------------------------------------------------------------- MJCF text
#: a valid MJCF file with one slot per attribute kind ({name} is filled with the value to try)
MJCF = """<mujoco model="junk">
  <compiler angle="{angle}"/>
  <option gravity="{gravity}" timestep="{timestep}"/>
  <worldbody>
    <body name="{torso_name}" pos="{body_pos}" quat="{body_quat}">
      <freejoint name="root"/>
      <inertial pos="{ipos}" mass="{mass}" diaginertia="{diaginertia}"/>
      <site name="imu" pos="{site_pos}" size="{site_size}"/>
      <body name="arm" pos="0 0 0.3" euler="{euler}">
        <joint name="shoulder" type="hinge" axis="{axis}" pos="{joint_pos}" ref="{ref}" range="{range}"
               armature="{armature}" damping="{damping}"/>
        <geom type="capsule" size="{geom_size}" fromto="0 0 0 0 0 0.4" density="{density}"/>
        <body name="hand" pos="0 0 0.4">
          <joint name="wrist" type="slide" axis="1 0 0"/>
          <inertial pos="0 0 0" mass="0.5" fullinertia="{fullinertia}"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
VALID = {
    "torso_name": "torso",
    "angle": "radian",
    "gravity": "0 0 -9.81",
    "timestep": "0.002",
    "body_pos": "0 0 1",
    "body_quat": "1 0 0 0",
    "ipos": "0 0 0",
    "mass": "2",
    "diaginertia": "0.1 0.1 0.1",
    "site_pos": "0 0 0.1",
    "site_size": "0.01",
    "euler": "0 0.3 0",
    "axis": "0 1 0",
    "joint_pos": "0 0 0",
    "ref": "0",
    "range": "-1 1",
    "armature": "0.01",
    "damping": "0",
    "geom_size": "0.05",
    "density": "1000",
    "fullinertia": "0.01 0.01 0.01 0 0 0",
}
#: (the last: bytes that are not UTF-8, written with surrogateescape: a latin-1 name)
HOSTILE = ["nan", "inf", "-inf", "1e308", "-1e308", "1e200", "-1", "0", "", "abc", "1e-320", "-0", "NaN nan",
           "1 2 3 4 5 6 7 8", "0x10", "1,2,3", "\u00e9", "9" * 400, "\udce9\udcff"]  # fmt: skip
_DIR = Path(tempfile.mkdtemp(prefix="bridge_junk_mjcf_"))


def _vector(slot: str, value: str) -> str:
    """``value`` repeated to the length the slot wants (a NaN in each of a vector's entries too)."""
    n = len(VALID[slot].split())
    return value if n == 1 or " " in value or not value else " ".join([value] * n)


@st.composite
def mjcf_texts(draw) -> str:
    values = dict(VALID)
    for slot in draw(st.lists(st.sampled_from(sorted(VALID)), min_size=1, max_size=2, unique=True)):
        value = draw(st.sampled_from(HOSTILE))
        values[slot] = _vector(slot, value) if draw(st.integers(0, 3)) else value  # mostly whole
    text = MJCF.format(**values)
    if not draw(st.integers(0, 3)):  # mutate characters: cut a span, or insert junk
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 40)))
        junk = draw(st.sampled_from(["", "<", ">", '"', "&", "\x00", "<body>", "</body>"]))
        text = text[:i] + junk + text[j:]
    return text


def _c_output(capfd) -> str:
    ctypes.CDLL(None).fflush(None)
    out, err = capfd.readouterr()
    return out + err


def _dynamics_finite_or_refused(model: bridge.Model) -> None:
    """A loaded model: finite M, ID and FD on every engine, or a BridgeError."""
    n = model.n_dofs
    for engine in ENGINES:
        try:
            kd = bridge.KinDyn(model, engine)
        except bridge.BridgeError:
            continue
        call(kd.set_state, np.eye(4), np.full(n, 0.1), np.full(6, 0.2), np.full(n, 0.3))
        call(kd.mass_matrix)
        call(kd.inverse_dynamics, np.zeros(6), np.zeros(n))
        call(kd.forward_dynamics, np.zeros(n))


@needs_mujoco
@EXAMPLES
@given(text=mjcf_texts(), loader=st.sampled_from(["load_mjcf", "load_model"]))
def test_mjcf_text_junk(text: str, loader: str, capfd) -> None:
    path = _DIR / "junk.xml"
    path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    _c_output(capfd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = getattr(bridge, loader)(path)
        except bridge.BridgeError:
            model = None
    printed = _c_output(capfd)
    assert "XML contains" not in printed and "WARNING" not in printed, printed
    if model is not None:
        _dynamics_finite_or_refused(model)
        call(bridge.to_mujoco, model)


@needs_mujoco
@EXAMPLES
@given(junk=JUNK, loader=st.sampled_from(["load_mjcf", "load_model"]))
def test_mjcf_loaders_junk_arguments(junk: object, loader: str) -> None:
    call(getattr(bridge, loader), junk)


# --------------------------------------------------------------------------- every exporter
EXPORTERS = [(name, kind) for name, record in registry.LIBRARIES.items() for kind in sorted(record.exports)]


@pytest.mark.parametrize(("library", "kind"), EXPORTERS)
@EXAMPLES
@given(junk=JUNK, which=st.integers(0, 7), floating=st.booleans())
def test_every_registered_exporter_junk(library: str, kind: str, junk: object, which: int, floating: bool):
    """The model or one keyword of an exporter (``to_mjcf``: gravity, bound_mass, ...) is junk."""
    record = registry.library(library)
    if not record.installed:
        pytest.skip(f"{library} is not installed")
    fn = registry.resolve(record.exports[kind])
    optional = [
        p.name for p in inspect.signature(fn).parameters.values() if p.default is not inspect.Parameter.empty
    ]
    k = which % (1 + len(optional))
    if k == 0:
        call(fn, junk)
    else:
        call(fn, _model(floating), **{optional[k - 1]: junk})


# --------------------------------------------------------------------------- batch axes, any array
CONVERSIONS = ["velocity", "acceleration", "generalized_force", "mass_matrix", "jacobian", "bias_forces"]


@pytest.mark.parametrize("array", ["numpy", "jax"])
@settings(max_examples=40, deadline=None)
@given(
    state_batch=st.sampled_from([(), (1,), (3,), (2, 3)]),
    batches=st.lists(st.sampled_from([(), (1,), (2,), (3,), (4,), (2, 3), (3, 1)]), min_size=2, max_size=2),
    which=st.sampled_from(CONVERSIONS),
)
def test_conversions_with_batch_axes_that_may_not_broadcast(
    array: str, state_batch: tuple, batches: list, which: str
) -> None:
    """Each array's batch axes broadcast with the state's and with each other's, or a ShapeError
    names them (a JAX array too: it failed deep inside jax.numpy)."""
    if array == "jax":
        jnp = pytest.importorskip("jax.numpy")
        import jax

        jax.config.update("jax_enable_x64", True)
        asarray = jnp.asarray
    else:
        asarray = np.asarray
    model = _model()
    nv = model.nv
    rng = np.random.default_rng(0)
    state = random_state(model, rng, "mixed", state_batch)
    tails = {"mass_matrix": (nv, nv), "jacobian": (6, nv)}
    x = asarray(np.ones((*batches[0], *tails.get(which, (nv,)))))
    args = [x, asarray(np.tile(np.eye(nv), (*batches[1], 1, 1)))] if which == "bias_forces" else [x]
    used = [batches[0], batches[1]] if which == "bias_forces" else [batches[0]]
    try:
        expected = np.broadcast_shapes(state_batch, *used)
    except ValueError:
        expected = None
    fn = getattr(bridge, f"convert_{which}")
    if expected is None:
        with pytest.raises(bridge.ShapeError, match="batch shape"):
            fn(model, state, *args, "pinocchio", "mixed")
        return
    out = np.asarray(fn(model, state, *args, "pinocchio", "mixed"))
    assert tuple(out.shape[: len(expected)]) == expected and np.all(np.isfinite(out))

    def at(a: object, k: tuple, tail: tuple) -> np.ndarray:
        return np.broadcast_to(np.asarray(a), (*expected, *tail))[k]

    for k in np.ndindex(*expected):  # each sample: the conversion of that sample alone
        n = (model.n_dofs,)
        H, v = at(state.world_H_base.matrix, k, (4, 4)), at(state.base_velocity, k, (6,))
        single = bridge.State(H, at(state.s, k, n), v, at(state.s_dot, k, n), "mixed")
        own = [at(a, k, np.asarray(a).shape[len(b) :]) for a, b in zip(args, used, strict=True)]
        assert_close(out[k], fn(model, single, *own, "pinocchio", "mixed"), 1e-13)


@pytest.mark.parametrize("array", ["numpy", "jax"])
@settings(max_examples=30, deadline=None)
@given(
    state_batch=st.sampled_from([(), (1,), (3,)]),
    batches=st.lists(st.sampled_from([(), (1,), (2,), (3,)]), min_size=2, max_size=2),
    kind=st.sampled_from(["inverse", "forward"]),
)
def test_derivative_conversion_with_batch_axes_that_may_not_broadcast(
    array: str, state_batch: tuple, batches: list, kind: str
) -> None:
    """``convert_dynamics_derivatives``: the derivatives' batch and the acceleration's and force's
    broadcast with the state's and each other's, or a ShapeError names them."""
    asarray = pytest.importorskip("jax.numpy").asarray if array == "jax" else np.asarray
    model = _model()
    nv = model.nv
    state = random_state(model, np.random.default_rng(1), "body", state_batch)
    rng = np.random.default_rng(2)
    D = tuple(asarray(rng.normal(size=(*batches[0], nv, nv))) for _ in range(3))
    acc, force = (asarray(rng.normal(size=(*batches[1], nv))) for _ in range(2))
    options = {"acceleration": acc, "force": force, "kind": kind}
    try:
        expected = np.broadcast_shapes(state_batch, *batches)
    except ValueError:
        with pytest.raises(bridge.ShapeError, match="batch shape"):
            bridge.convert_dynamics_derivatives(model, state, D, "body", "mixed", **options)
        return
    out = [
        np.asarray(o)
        for o in bridge.convert_dynamics_derivatives(model, state, D, "body", "mixed", **options)
    ]
    assert all(o.shape == (*expected, nv, nv) for o in out)

    def at(a: object, k: tuple, tail: tuple) -> np.ndarray:
        return np.broadcast_to(np.asarray(a), (*expected, *tail))[k]

    n = (model.n_dofs,)
    for k in np.ndindex(*expected):  # each sample: the conversion of that sample alone
        H, v = at(state.world_H_base.matrix, k, (4, 4)), at(state.base_velocity, k, (6,))
        single = bridge.State(H, at(state.s, k, n), v, at(state.s_dot, k, n), "body")
        one = {"acceleration": at(acc, k, (nv,)), "force": at(force, k, (nv,)), "kind": kind}
        own = tuple(at(d, k, (nv, nv)) for d in D)
        for o, ref in zip(
            out, bridge.convert_dynamics_derivatives(model, single, own, "body", "mixed", **one), strict=True
        ):
            assert_close(o[k], ref, 1e-13)


# --------------------------------------------------------------------------- every converter
CONVERTERS = [
    (name, field)
    for name, record in registry.LIBRARIES.items()
    for field in ("to_model", "from_model", "to_state", "from_state")
    if getattr(record, field) is not None
]


@functools.cache
def _library_model(name: str, floating: bool) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return registry.library(name).load("to_model")(_model(floating))


def _valid_arguments(name: str, field: str, floating: bool) -> list:
    """A valid positional call of the converter ``field`` of library ``name``."""
    model = _model(floating)
    state = bridge.State(*_valid_state(model))
    if field == "to_model":
        return [model]
    if field == "from_model":
        return [_library_model(name, floating)]
    if field == "to_state":
        return [model, state]
    native = registry.library(name).load("to_state")(model, state)
    return [model, *native]


@pytest.mark.parametrize(("library", "field"), CONVERTERS)
@EXAMPLES
@given(junk=JUNK, which=st.integers(0, 7), floating=st.booleans())
def test_every_registered_converter_junk(library: str, field: str, junk: object, which: int, floating: bool):
    """One argument of the converter (a positional one, or an optional one by keyword) is junk."""
    record = registry.library(library)
    if not record.installed:
        pytest.skip(f"{library} is not installed")
    fn = record.load(field)
    args = _valid_arguments(library, field, floating)
    optional = [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.default is not inspect.Parameter.empty and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    slots = len(args) + len(optional)
    k = which % slots
    if k < len(args):
        call(fn, *corrupt(args, k, junk))
    else:
        call(fn, *args, **{optional[k - len(args)]: junk})


# --------------------------------------------------------------------------- every derivative function
DERIVATIVES = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives", "frame_jacobian_derivative")


@functools.cache
def _kindyn(engine: str, floating: bool) -> bridge.KinDyn:
    return bridge.KinDyn(_model(floating), engine, "mixed")


def _derivative_arguments(model: bridge.Model, name: str) -> list:
    n = model.n_dofs
    frame = model.frame_names[-1]
    return {
        "inverse_dynamics_derivatives": [np.zeros(6), np.zeros(n), {frame: np.ones(6)}],
        "forward_dynamics_derivatives": [np.ones(n), {frame: np.ones(6)}],
        "frame_jacobian_derivative": [frame],
    }[name]


#: models without DOF (the crash of issue 29 was Pinocchio's derivative with nv = 0): one link, and
#: two links welded together, each on a fixed and on a floating base
_LINK = '<link name="{}"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>'  # noqa: E501
NO_DOF = {
    "one_link": f'<robot name="one">{_LINK.format("a")}<link name="tool"/>'
    '<joint name="t" type="fixed"><parent link="a"/><child link="tool"/></joint></robot>',
    "welded": f'<robot name="welded">{_LINK.format("a")}{_LINK.format("b")}'
    '<joint name="w" type="fixed"><parent link="a"/><child link="b"/></joint></robot>',
}


@functools.cache
def _edge_kindyn(engine: str, kind: str, floating: bool) -> bridge.KinDyn | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = bridge.load_urdf(NO_DOF[kind], floating=floating)
    try:
        return bridge.KinDyn(model, engine)
    except bridge.BridgeError:
        return None


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", sorted(NO_DOF))
@pytest.mark.parametrize("batch", [(), (2,)])
def test_derivatives_of_a_model_without_dofs(engine: str, kind: str, batch: tuple) -> None:
    """Fixed or floating, one state or a batch: every derivative is (..., nv, nv) with nv 0 or 6 (a
    fixed base without DOF crashed forward_dynamics_derivatives in Drake, iDynTree, MuJoCo, Newton)."""
    for floating in (False, True):
        kd = _edge_kindyn(engine, kind, floating)
        if kd is None:
            continue
        nv = kd.model.nv
        empty = np.zeros((*batch, 0))
        kd.set_state(np.broadcast_to(np.eye(4), (*batch, 4, 4)), empty, np.full((*batch, 6), 0.2), empty)
        frame = kd.model.frame_names[-1]
        for args, name in (((np.zeros(0),), "forward_dynamics_derivatives"),
                           ((np.zeros(0), {frame: np.ones(6)}), "forward_dynamics_derivatives"),
                           ((np.zeros(6), np.zeros(0)), "inverse_dynamics_derivatives")):  # fmt: skip
            out = getattr(kd, name)(*args)
            assert [o.shape for o in out] == [(*batch, nv, nv)] * 3, (name, floating)
            assert all(np.all(np.isfinite(o)) for o in out)


@pytest.mark.parametrize("engine", ENGINES)
@EXAMPLES
@given(
    junk=JUNK,
    name=st.sampled_from(DERIVATIVES),
    index=st.integers(0, 2),
    floating=st.booleans(),
    kind=st.sampled_from(["small", "small", *NO_DOF]),
)
def test_kindyn_derivatives_junk(engine: str, junk: object, name: str, index: int, floating: bool, kind: str):
    kd = _kindyn(engine, floating) if kind == "small" else _edge_kindyn(engine, kind, floating)
    if kd is None:
        return  # the engine refused the model with a BridgeError
    kd.set_state(*_valid_state(kd.model))
    args = _derivative_arguments(kd.model, name)
    call(getattr(kd, name), *args)  # valid arguments: an answer or a BridgeError
    call(getattr(kd, name), *corrupt(args, index, junk))


@pytest.mark.parametrize("engine", ENGINES)
@EXAMPLES
@given(
    name=st.sampled_from(DERIVATIVES),
    which=st.sampled_from(["s", "base_velocity", "s_dot"]),
    scale=st.sampled_from([1e200, -1e300, 1e154, 1e100, 1e50, 1e-300]),
    floating=st.booleans(),
)
def test_derivatives_of_extreme_states(engine: str, name: str, which: str, scale: float, floating: bool):
    """Huge velocities or positions: the derivatives raise like forward dynamics, or are finite."""
    kd = _kindyn(engine, floating)
    H, s, v, sd = _valid_state(kd.model)
    values = {"s": s, "base_velocity": v, "s_dot": sd}
    values[which] = np.full_like(values[which], scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no numpy warning may print either
        try:
            kd.set_state(H, values["s"], values["base_velocity"], values["s_dot"])
            out = getattr(kd, name)(*_derivative_arguments(kd.model, name))
        except bridge.BridgeError:
            return
    assert all(np.all(np.isfinite(x)) for x in (out if isinstance(out, tuple) else (out,)))


@EXAMPLES
@given(
    junk=JUNK,
    name=st.sampled_from(DERIVATIVES),
    index=st.integers(0, 6),
    engine=st.sampled_from(ENGINES),
)
def test_stateless_derivatives_junk(junk: object, name: str, index: int, engine: str) -> None:
    """``bridge.<derivative>(model, state, *args, engine=..., gravity=...)`` with one argument junk."""
    model = _model()
    state = bridge.State(*_valid_state(model))
    args = [model, state, *_derivative_arguments(model, name)]
    fn = getattr(bridge, name)
    if index < len(args):
        call(fn, *corrupt(args, index, junk), engine=engine)
    elif index % 2:
        call(fn, *args, engine=junk)
    else:
        call(fn, *args, engine=engine, gravity=junk)
