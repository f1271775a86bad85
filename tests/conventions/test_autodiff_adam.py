"""adam in the graph: adam's KinDyn (JAX and CasADi) in MIXED, converted by bridge to "pinocchio"
and "mujoco", equals Pinocchio's and MuJoCo's own mass matrix and bias forces to 1e-12 (relative
to the largest entry).

adam reads the model's URDF as bridge writes it (``model.to_urdf()``); its gravity is 9.80665 m/s^2,
given to Pinocchio and MuJoCo too. JAX: adam and the conversions in one jitted function (random
models), or adam's eager JAX arrays converted under jit (Solo-12: adam's own jit compiles for about a
minute). CasADi: adam's symbolic M and h converted symbolically (bridge's conversions on SX) into
one ``casadi.Function``. Skipped when ``adam-robotics`` (or jax, or ``liecasadi`` for adam.casadi)
is not installed.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import bridge
from bridge.conventions.convert import convert_bias_forces, convert_mass_matrix
from bridge.conventions.state import State
from bridge.robots import robot_path
from bridge.validation.check import random_states

jax = pytest.importorskip("jax", reason="the [jax] extra is not installed")
jax.config.update("jax_enable_x64", True)
jnp = pytest.importorskip("jax.numpy")
adam = pytest.importorskip("adam", reason="adam-robotics is not installed (pip install adam-robotics)")
pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")

GRAVITY = 9.80665  # adam's default
TOL = 1e-12
TARGETS = ("pinocchio", "mujoco")


def _model(name: str) -> bridge.Model:
    if name == "solo12":
        return bridge.load_urdf(robot_path("solo12"))
    # adam 0.5 builds no prismatic joint
    kinds = ("revolute", "continuous", "fixed")
    return bridge.random_model(5, seed=int(name.split("_")[1]), joint_kinds=kinds)


def _kindyn(module, model: bridge.Model):
    """adam's KinDynComputations of ``module`` (adam.jax or adam.casadi) in MIXED, model DOF order."""
    with contextlib.redirect_stderr(io.StringIO()):  # urdf_parser_py's chatter
        kd = module.KinDynComputations(model.to_urdf(), list(model.dof_names))
    kd.set_frame_velocity_representation(adam.Representations.MIXED_REPRESENTATION)
    return kd


def _single(states: bridge.State, i: int) -> tuple[np.ndarray, ...]:
    """``(H, s, v, s_dot)`` of state ``i`` of a batch."""
    return states.world_H_base.matrix[i], states.s[i], states.base_velocity[i], states.s_dot[i]


def pinocchio_reference(model: bridge.Model, state: bridge.State) -> tuple[np.ndarray, np.ndarray]:
    """Pinocchio's own ``crba`` (symmetrized) and ``nonLinearEffects`` at one state, on
    ``to_pinocchio(model)`` with adam's gravity."""
    pm = bridge.to_pinocchio(model)
    pm.gravity.linear = np.array([0.0, 0.0, -GRAVITY])
    pd = pm.createData()
    q, v = bridge.to_pinocchio_state(model, state)
    M = pin.crba(pm, pd, q)
    return np.triu(M) + np.triu(M, 1).T, pin.nonLinearEffects(pm, pd, q, v)


def mujoco_reference(model: bridge.Model, state: bridge.State) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's own ``mj_fullM`` and ``qfrc_bias`` after ``mj_forward`` at one state, on
    ``to_mujoco(model)`` with adam's gravity."""
    mm = bridge.to_mujoco(model, gravity=(0.0, 0.0, -GRAVITY))
    d = mujoco.MjData(mm)
    d.qpos[:], d.qvel[:] = bridge.to_mujoco_state(model, state)
    mujoco.mj_forward(mm, d)
    M = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, d, M)
    return M, d.qfrc_bias.copy()


REFERENCES = {"pinocchio": pinocchio_reference, "mujoco": mujoco_reference}


def convert_to_targets(model: bridge.Model, H, s, v, sd, M, h) -> dict:
    """adam's MIXED ``(M, h)`` converted to each of :data:`TARGETS` (any array type)."""
    state = State(H, s, v, sd, "mixed")
    return {
        t: (
            convert_mass_matrix(model, state, M, "mixed", t),
            convert_bias_forces(model, state, h, M, "mixed", t),
        )
        for t in TARGETS
    }


def _close(got, ref) -> None:
    np.testing.assert_allclose(np.asarray(got), ref, rtol=0, atol=TOL * max(1.0, np.abs(ref).max()))


def _check(model: bridge.Model, H, s, v, sd, out: dict) -> None:
    state = State(H, s, v, sd, "mixed")
    for target in TARGETS:
        M_ref, h_ref = REFERENCES[target](model, state)
        _close(out[target][0], M_ref)
        _close(out[target][1], h_ref)


def test_adam_jax_jitted_and_converted_equals_pinocchio_and_mujoco() -> None:
    """adam and the conversions in one jitted function."""
    import adam.jax

    model = _model("random_4")
    kd = _kindyn(adam.jax, model)

    @jax.jit
    def run(H, s, v, sd):
        return convert_to_targets(model, H, s, v, sd, kd.mass_matrix(H, s), kd.bias_force(H, s, v, sd))

    states = random_states(model, 2, np.random.default_rng(1)).to("mixed")
    for i in range(2):
        x = _single(states, i)
        out = run(*map(jnp.asarray, x))
        assert all(isinstance(a, jax.Array) for pair in out.values() for a in pair)
        _check(model, *x, out)


@pytest.mark.parametrize("name", ["random_7", "solo12"])
def test_adam_jax_converted_under_jit_equals_pinocchio_and_mujoco(name: str) -> None:
    """adam's (eager) JAX arrays converted in a jitted function."""
    import adam.jax

    model = _model(name)
    kd = _kindyn(adam.jax, model)
    convert = jax.jit(lambda H, s, v, sd, M, h: convert_to_targets(model, H, s, v, sd, M, h))
    x = _single(random_states(model, 1, np.random.default_rng(3)).to("mixed"), 0)
    H, s, v, sd = map(jnp.asarray, x)
    out = convert(H, s, v, sd, kd.mass_matrix(H, s), kd.bias_force(H, s, v, sd))
    _check(model, *x, out)


@pytest.mark.parametrize("name", ["random_4", "solo12"])
def test_adam_casadi_converted_symbolically_equals_pinocchio(name: str) -> None:
    casadi = pytest.importorskip("casadi", reason="the [casadi] extra is not installed")
    pytest.importorskip("liecasadi", reason="liecasadi (adam.casadi's dependency) is not installed")
    import adam.casadi

    model = _model(name)
    kd = _kindyn(adam.casadi, model)
    n = model.n_dofs
    H, s = casadi.SX.sym("H", 4, 4), casadi.SX.sym("s", n)
    v, sd = casadi.SX.sym("v", 6), casadi.SX.sym("sd", n)
    M, h = kd.mass_matrix(H, s), kd.bias_force(H, s, v, sd)
    state = State(H, s, v, sd, "mixed")
    M_p = convert_mass_matrix(model, state, M, "mixed", "pinocchio")
    h_p = convert_bias_forces(model, state, h, M, "mixed", "pinocchio")
    assert isinstance(M_p, casadi.SX) and isinstance(h_p, casadi.SX)
    fn = casadi.Function("pinocchio_M_h", [H, s, v, sd], [M_p, h_p])
    states = random_states(model, 2, np.random.default_rng(5)).to("mixed")
    for i in range(2):
        x = _single(states, i)
        M_ref, h_ref = pinocchio_reference(model, State(*x, "mixed"))
        got_M, got_h = fn(*x)
        _close(np.asarray(got_M), M_ref)
        _close(np.asarray(got_h).ravel(), h_ref)
