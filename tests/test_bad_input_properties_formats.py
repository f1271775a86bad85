"""Junk through the writers' arguments, SDF flags, and JAX / CasADi arrays: a BridgeError or a
right answer, never a silently wrong number.

* ``to_mjcf`` / ``to_mujoco`` / ``to_sdf`` / ``to_urdf``: junk gravity, floors and limits raise (a bool
  is not 1 kg, NaN is not written into a file);
* concrete JAX arrays and CasADi DMs with NaN or inf raise in every conversion, complex JAX arrays
  raise (never the real part alone), float32 JAX poses that are reflections raise; under
  ``jax.jit`` (no values) the same calls trace.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bridge
from tests.test_bad_input_properties import JUNK, call

EXAMPLES = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
VALUES = st.sampled_from([np.nan, np.inf, -np.inf])


@functools.cache
def _model(floating: bool = True) -> bridge.Model:
    return bridge.random_model(5, 7, floating=floating, massless_probability=0.0, armature_probability=0.5)


# --------------------------------------------------------------------------- writers
@EXAMPLES
@given(junk=JUNK, key=st.sampled_from(["gravity", "bound_mass", "bound_inertia", "balance_inertia"]))
def test_mjcf_writer_junk(junk: object, key: str) -> None:
    pytest.importorskip("mujoco")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            text = bridge.to_mjcf(_model(), **{key: junk})
        except bridge.BridgeError:
            return
    assert "nan" not in text.lower() and "inf" not in text.lower()
    if key in ("bound_mass", "bound_inertia"):
        assert not isinstance(junk, (bool, np.bool_))  # True is not 1 kg


@EXAMPLES
@given(junk=JUNK, key=st.sampled_from(["lower", "upper", "effort", "velocity"]), fmt=st.integers(0, 2))
def test_writers_junk_limits(junk: object, key: str, fmt: int) -> None:
    model = _model()
    j = model.movable_joints[0]
    limits = dataclasses.replace(j.limits, **{key: junk})
    broken = model.replace(
        joints=tuple(dataclasses.replace(x, limits=limits) if x is j else x for x in model.joints)
    )
    write = (broken.to_sdf, broken.to_urdf, lambda: bridge.to_mjcf(broken))[fmt]
    if fmt == 2:
        pytest.importorskip("mujoco")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            text = write()
        except bridge.BridgeError:
            return
    assert junk is None or (
        isinstance(junk, (int, float)) and not isinstance(junk, bool) and np.isfinite(junk)
    )
    assert "nan" not in text.lower()


@EXAMPLES
@given(junk=JUNK)
def test_model_gravity_junk(junk: object) -> None:
    try:
        model = _model().replace(gravity=junk)
    except bridge.BridgeError:
        return
    assert model.gravity is None or (model.gravity.shape == (3,) and np.all(np.isfinite(model.gravity)))


@EXAMPLES
@given(flag=st.text(max_size=6), where=st.sampled_from(["degrees", "static"]))
def test_sdf_boolean_junk(flag: str, where: str) -> None:
    flag = "".join(c for c in flag if c.isprintable() and c not in "<>&\"'")
    pose = f'<pose degrees="{flag}">0 0 0 0 0 90</pose>' if where == "degrees" else ""
    static = f"<static>{flag}</static>" if where == "static" else ""
    text = f'<sdf version="1.9"><model name="m">{static}<link name="a">{pose}</link></model></sdf>'
    try:
        bridge.load_sdf(text)
    except bridge.BridgeError:
        return
    assert flag.strip().lower() in ("true", "false", "1", "0")


# --------------------------------------------------------------------------- JAX and CasADi
def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def _conversions(model: bridge.Model, state: bridge.State, x, M) -> list:
    nv = model.nv
    return [
        lambda: bridge.convert_velocity(model, state, x, "mixed", "body"),
        lambda: bridge.convert_acceleration(model, state, x, "inertial", "pinocchio"),
        lambda: bridge.convert_generalized_force(model, state, x, "body", "mixed"),
        lambda: bridge.convert_mass_matrix(model, state, M, "body", "inertial"),
        lambda: bridge.convert_bias_forces(model, state, x, M, "body", "mixed"),
        lambda: bridge.convert_jacobian(model, state, M[:6], "body", "mixed"),
        lambda: bridge.convert_dynamics_derivatives(
            model, state, (M, M, M), "mixed", "body", acceleration=x, force=x[:nv]
        ),
    ]


@EXAMPLES
@given(value=VALUES, which=st.integers(0, 6), index=st.integers(0, 100), casadi=st.booleans())
def test_concrete_foreign_arrays_with_nan_raise(value: float, which: int, index: int, casadi: bool) -> None:
    model = _model()
    nv = model.nv
    state = bridge.State(np.eye(4), np.zeros(model.n_dofs), np.zeros(6), np.zeros(model.n_dofs))
    x, M = np.zeros(nv), np.eye(nv)
    x[index % nv] = value  # every conversion reads x or M (or both)
    M.flat[index % M.size] = value
    if casadi:
        ca = pytest.importorskip("casadi")
        x, M = ca.DM(x), ca.DM(M)
    else:
        _, jnp = _jax()
        x, M = jnp.asarray(x), jnp.asarray(M)
    with pytest.raises(bridge.BridgeError, match="NaN or infinite"):
        _conversions(model, state, x, M)[which]()


@EXAMPLES
@given(which=st.integers(0, 6), part=st.floats(-1e3, 1e3).filter(lambda v: v != 0.0))
def test_complex_jax_arrays_raise(which: int, part: float) -> None:
    _, jnp = _jax()
    model = _model()
    state = bridge.State(np.eye(4), np.zeros(model.n_dofs), np.zeros(6), np.zeros(model.n_dofs))
    x = jnp.zeros(model.nv) + 1j * part
    M = jnp.eye(model.nv) + 1j * part
    with pytest.raises(bridge.BridgeError, match="complex"):
        _conversions(model, state, x, M)[which]()


@EXAMPLES
@given(field=st.integers(0, 3), value=VALUES, dtype=st.sampled_from(["float32", "float64", "complex"]))
def test_foreign_states_are_checked(field: int, value: float, dtype: str) -> None:
    """A State of JAX arrays: NaN and complex refused, then every state map is safe."""
    _, jnp = _jax()
    model = _model()
    n = model.n_dofs
    parts = [np.eye(4), np.zeros(n), np.zeros(6), np.zeros(n)]
    parts[field] = parts[field].copy()
    parts[field].flat[-1 if field else 0] = value
    arrays = [jnp.asarray(p, dtype=jnp.float32 if dtype == "float32" else jnp.float64) for p in parts]
    if dtype == "complex":
        arrays = [jnp.asarray(p) + 0.0j for p in parts]
    with pytest.raises(bridge.BridgeError):
        state = bridge.State(*arrays)
        bridge.to_pinocchio_state(model, state)
    q = jnp.asarray(np.r_[np.zeros(3), 0, 0, 0, 1.0, np.zeros(n)])
    v = jnp.asarray(np.full(6 + n, value))
    call(bridge.from_pinocchio_state, model, q, v, "mixed")
    with pytest.raises(bridge.BridgeError):
        bridge.from_pinocchio_state(model, q, v, "mixed")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reflections_are_refused_at_each_precision(dtype: str) -> None:
    jax, jnp = _jax()
    model = _model()
    n = model.n_dofs
    R = np.diag([1.0, 1.0, -1.0, 1.0])
    zeros = [jnp.zeros(n, dtype), jnp.zeros(6, dtype), jnp.zeros(n, dtype)]
    with pytest.raises(bridge.StateError, match="reflection"):
        bridge.State(jnp.asarray(R, dtype), zeros[0], zeros[1], zeros[2])
    rotation = bridge.Transform.exp_so3([0.1, 0.2, 0.3]).matrix
    state = bridge.State(jnp.asarray(rotation, dtype), *zeros)  # a rotation at that precision passes
    assert state.world_H_base.matrix.dtype == jnp.dtype(dtype)

    @jax.jit
    def traced(H):  # no values under tracing: nothing to check, the shapes still are
        st_ = bridge.State(H, *zeros)
        return bridge.convert_velocity(model, st_, jnp.zeros(model.nv, dtype), "mixed", "body")

    assert traced(jnp.asarray(rotation, dtype)).shape == (model.nv,)
