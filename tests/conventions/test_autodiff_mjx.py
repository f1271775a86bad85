"""MJX in the graph: MuJoCo's mass matrix and bias forces from ``mjx.forward`` under ``jax.jit``,
converted from "mujoco" to MIXED and BODY by bridge inside the same jitted function, equal bridge's
numpy engines (Pinocchio, Featherstone) on the same model to 1e-12 (relative to the largest entry).

The MuJoCo model is ``bridge.to_mujoco(model)`` (rigid-body dynamics, no geoms), on random
floating-base models and on a shipped robot (example-robot-data's Solo-12). Skipped when
``mujoco-mjx`` (or jax) is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.conventions.convert import convert_bias_forces, convert_mass_matrix
from bridge.robots import robot_path
from bridge.validation.check import random_states

jax = pytest.importorskip("jax", reason="the [jax] extra is not installed")
jax.config.update("jax_enable_x64", True)
jnp = pytest.importorskip("jax.numpy")
mjx = pytest.importorskip("mujoco.mjx", reason="mujoco-mjx is not installed (pip install mujoco-mjx)")

REPS = ("mixed", "body")
ENGINES = ("pinocchio", "featherstone")
TOL = 1e-12


def mjx_dynamics(model: bridge.Model):
    """A jitted ``(qpos, qvel) -> {rep: (M, h)}``: MJX's ``qM`` (as a dense matrix) and
    ``qfrc_bias`` at MuJoCo's ``(qpos, qvel)``, converted from "mujoco" to each of :data:`REPS`."""
    m = mjx.put_model(bridge.to_mujoco(model))

    @jax.jit
    def run(qpos, qvel):
        d = mjx.forward(m, mjx.make_data(m).replace(qpos=qpos, qvel=qvel))
        M = mjx.full_m(m, d)
        out = {}
        for rep in REPS:
            state = bridge.from_mujoco_state(model, qpos, qvel, rep)
            out[rep] = (
                convert_mass_matrix(model, state, M, "mujoco", rep),
                convert_bias_forces(model, state, d.qfrc_bias, M, "mujoco", rep),
            )
        return out

    return run


def _case(request) -> bridge.Model:
    name = request.param
    if name == "solo12":
        return bridge.load_urdf(robot_path("solo12"))
    return bridge.random_model(5, seed=int(name.split("_")[1]))


@pytest.fixture(scope="module", params=["random_3", "random_8", "solo12"])
def case(request):
    """(model, states, the jitted MJX outputs for each state)."""
    model = _case(request)
    states = random_states(model, 2, np.random.default_rng(4))
    qpos, qvel = bridge.to_mujoco_state(model, states)
    run = mjx_dynamics(model)
    return model, states, [run(jnp.asarray(qpos[i]), jnp.asarray(qvel[i])) for i in range(2)]


def _single(states: bridge.State, i: int) -> bridge.State:
    """State ``i`` of a batch."""
    H, v = states.world_H_base.matrix[i], states.base_velocity[i]
    return bridge.State(H, states.s[i], v, states.s_dot[i], states.representation)


def _close(got, ref) -> None:
    assert isinstance(got, jax.Array)
    assert got.dtype == jnp.float64
    np.testing.assert_allclose(np.asarray(got), ref, rtol=0, atol=TOL * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rep", REPS)
def test_mjx_forward_converted_equals_bridge_numpy_engines(case, rep: str, engine: str) -> None:
    model, states, outs = case
    kd = bridge.KinDyn(model, engine=engine, representation=rep)
    for i, out in enumerate(outs):
        kd.set_robot_state(_single(states, i).to(rep))
        M, h = out[rep]
        _close(M, kd.mass_matrix())
        _close(h, kd.bias_forces())


def test_mjx_batch_under_vmap_equals_the_numpy_batch() -> None:
    """vmap over MJX and the conversion together equals bridge's batched numpy engine."""
    model = bridge.random_model(4, seed=11)
    states = random_states(model, 3, np.random.default_rng(2))
    qpos, qvel = bridge.to_mujoco_state(model, states)
    M, h = jax.vmap(lambda q, v: mjx_dynamics(model)(q, v)["mixed"])(jnp.asarray(qpos), jnp.asarray(qvel))
    kd = bridge.KinDyn(model, engine="featherstone", representation="mixed")
    kd.set_robot_state(states.to("mixed"))
    _close(M, kd.mass_matrix())
    _close(h, kd.bias_forces())
