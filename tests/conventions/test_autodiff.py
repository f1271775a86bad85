"""The conversions inside autodiff graphs: JAX arrays (jit, vmap, jvp, grad) and CasADi symbols.

Every conversion equals the numpy path (1e-13 in float64) for every registered convention; the
derivative of T along the motion (``jax.jvp``) is T_dot; gradients through conversions equal central
differences; CasADi expressions evaluated through ``casadi.Function`` equal numpy, and their
``casadi.jacobian`` equals central differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
import bridge.backends.registry
from bridge.conventions.convert import (
    convert_acceleration,
    convert_bias_forces,
    convert_generalized_force,
    convert_jacobian,
    convert_mass_matrix,
    convert_velocity,
)
from bridge.conventions.native_state import from_native_state, to_native_state
from bridge.conventions.registry import convention, convention_names
from bridge.conventions.state import State
from bridge.spatial.so3 import skew

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)

NAMES = convention_names()
REPS = ("body", "inertial", "mixed")


def _numbers(model: bridge.Model, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=4)
    H = bridge.Transform.from_quaternion_wxyz(q / np.linalg.norm(q), rng.normal(size=3)).matrix
    n, nv = model.n_dofs, model.nv
    M = rng.normal(size=(nv, nv))
    return {
        "H": H,
        "s": rng.normal(size=n),
        "v": rng.normal(size=6),
        "sd": rng.normal(size=n),
        "nu": rng.normal(size=nv),
        "M": M @ M.T + nv * np.eye(nv),
        "h": rng.normal(size=nv),
        "J": rng.normal(size=(6, nv)),
    }


def _state(x: dict, rep: str, lib=np) -> State:
    return State(lib.asarray(x["H"]), lib.asarray(x["s"]), lib.asarray(x["v"]), lib.asarray(x["sd"]), rep)


@pytest.fixture(scope="module", params=[True, False], ids=["floating", "fixed"])
def model(request) -> bridge.Model:
    return bridge.random_model(4, seed=5, floating=request.param)


CONVERSIONS = (
    ("velocity", lambda m, st, x, s, t: convert_velocity(m, st, x["nu"], s, t)),
    ("acceleration", lambda m, st, x, s, t: convert_acceleration(m, st, x["nu"], s, t)),
    ("force", lambda m, st, x, s, t: convert_generalized_force(m, st, x["nu"], s, t)),
    ("mass_matrix", lambda m, st, x, s, t: convert_mass_matrix(m, st, x["M"], s, t)),
    ("bias_forces", lambda m, st, x, s, t: convert_bias_forces(m, st, x["h"], x["M"], s, t)),
    ("jacobian", lambda m, st, x, s, t: convert_jacobian(m, st, x["J"], s, t)),
    ("T", lambda m, st, x, s, t: bridge.velocity_transform(m, st, s, t)[0]),
    ("T_dot", lambda m, st, x, s, t: bridge.velocity_transform(m, st, s, t)[1]),
)


@pytest.mark.parametrize("target", NAMES)
@pytest.mark.parametrize("rep", REPS)
def test_jax_under_jit_equals_numpy(model, rep: str, target: str) -> None:
    x = _numbers(model, seed=len(target))

    @jax.jit
    def run(arrays: dict) -> list:
        st = _state(arrays, rep, jnp)
        return [fn(model, st, arrays, rep, target) for _, fn in CONVERSIONS]

    out = run({k: jnp.asarray(v) for k, v in x.items()})
    st = _state(x, rep)
    for (name, fn), got in zip(CONVERSIONS, out, strict=True):
        ref = fn(model, st, x, rep, target)
        assert isinstance(got, jax.Array), name
        np.testing.assert_allclose(np.asarray(got), ref, rtol=0, atol=1e-13 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("target", NAMES)
def test_jax_vmap_equals_the_numpy_batch(model, target: str) -> None:
    xs = [_numbers(model, seed=k) for k in range(4)]
    batch = {k: np.stack([x[k] for x in xs]) for k in xs[0]}

    def one(arrays: dict):
        st = _state(arrays, "mixed", jnp)
        return bridge.velocity_transform(model, st, "mixed", target), convert_bias_forces(
            model, st, arrays["h"], arrays["M"], "mixed", target
        )

    (T, Td), h = jax.vmap(one)({k: jnp.asarray(v) for k, v in batch.items()})
    st = _state(batch, "mixed")
    T_ref, Td_ref = bridge.velocity_transform(model, st, "mixed", target)
    # (a fixed base's T is the joint permutation, the same for every state: numpy does not repeat it)
    np.testing.assert_allclose(np.asarray(T), np.broadcast_to(T_ref, T.shape), atol=1e-13)
    np.testing.assert_allclose(np.asarray(Td), np.broadcast_to(Td_ref, Td.shape), atol=1e-13)
    h_ref = convert_bias_forces(model, st, batch["h"], batch["M"], "mixed", target)
    np.testing.assert_allclose(np.asarray(h), h_ref, atol=1e-12)


def _pose_rate(H: np.ndarray, v_body: np.ndarray) -> np.ndarray:
    """``d/dt H = H [v_B]^`` (4, 4)."""
    hat = np.zeros((4, 4))
    hat[:3, :3] = skew(v_body[3:])
    hat[:3, 3] = v_body[:3]
    return H @ hat


@pytest.mark.parametrize("target", NAMES)
@pytest.mark.parametrize("source", NAMES)
def test_jvp_of_T_along_the_motion_is_T_dot(source: str, target: str) -> None:
    """T depends on the pose: its derivative along the state's motion (the pose moving with the
    state's velocity, the base velocity itself held) is T_dot, for every pair of conventions."""
    model = bridge.random_model(3, seed=2)
    x = _numbers(model, seed=3)
    st = _state(x, "body")
    H_dot = _pose_rate(x["H"], x["v"])  # the pose moving with the state's (BODY) velocity

    def T_of(H):  # T depends on the pose alone
        st_h = State(H, jnp.asarray(x["s"]), jnp.asarray(x["v"]), jnp.asarray(x["sd"]), "body")
        return bridge.velocity_transform(model, st_h, source, target)[0]

    _, dT = jax.jvp(T_of, (jnp.asarray(x["H"]),), (jnp.asarray(H_dot),))
    T_dot = bridge.velocity_transform(model, st, source, target)[1]
    np.testing.assert_allclose(np.asarray(dT), T_dot, rtol=0, atol=1e-12 * max(1.0, np.abs(T_dot).max()))


@pytest.mark.parametrize("target", NAMES)
def test_grad_through_a_conversion_equals_central_differences(target: str) -> None:
    model = bridge.random_model(3, seed=4)
    x = _numbers(model, seed=6)
    w = np.random.default_rng(1).normal(size=model.nv)

    def f(v, nu):
        st = State(jnp.asarray(x["H"]), jnp.asarray(x["s"]), v, jnp.asarray(x["sd"]), "mixed")
        return jnp.dot(w, convert_acceleration(model, st, nu, "mixed", target))

    gv, gnu = jax.grad(f, argnums=(0, 1))(jnp.asarray(x["v"]), jnp.asarray(x["nu"]))
    eps = 1e-6
    for arg, g in ((0, gv), (1, gnu)):
        base = [jnp.asarray(x["v"]), jnp.asarray(x["nu"])]
        num = []
        for i in range(base[arg].shape[0]):
            e = np.zeros(base[arg].shape[0])
            e[i] = eps
            plus, minus = list(base), list(base)
            plus[arg] = base[arg] + e
            minus[arg] = base[arg] - e
            num.append((float(f(*plus)) - float(f(*minus))) / (2 * eps))
        np.testing.assert_allclose(np.asarray(g), num, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("name", [n for n in NAMES if convention(n).configuration is not None])
def test_native_state_round_trip_under_jit(model, name: str) -> None:
    x = _numbers(model, seed=9)
    conv = convention(name)

    @jax.jit
    def run(arrays):
        q, v = to_native_state(model, _state(arrays, "inertial", jnp), conv)
        back = from_native_state(model, q, v, conv, "inertial")
        return q, v, back.world_H_base.matrix, back.s, back.base_velocity, back.s_dot

    q, v, H, s, vb, sd = run({k: jnp.asarray(x[k]) for k in ("H", "s", "v", "sd")})
    q_ref, v_ref = to_native_state(model, _state(x, "inertial"), conv)
    np.testing.assert_allclose(np.asarray(q), q_ref, atol=1e-13)
    np.testing.assert_allclose(np.asarray(v), v_ref, atol=1e-13)
    if model.floating:
        np.testing.assert_allclose(np.asarray(H), x["H"], atol=1e-13)
        np.testing.assert_allclose(np.asarray(vb), x["v"], atol=1e-12)
    # a continuous joint stored as (cos, sin) comes back as its angle modulo 2 pi
    np.testing.assert_allclose(np.cos(np.asarray(s)), np.cos(x["s"]), atol=1e-13)
    np.testing.assert_allclose(np.sin(np.asarray(s)), np.sin(x["s"]), atol=1e-13)
    np.testing.assert_allclose(np.asarray(sd), x["sd"], atol=1e-13)


def test_float32_inputs_work_within_a_stated_tolerance() -> None:
    """float32 JAX inputs stay float32 and agree with float64 numpy to 1e-5 relative."""
    model = bridge.random_model(3, seed=1)
    x = _numbers(model, seed=2)
    st32 = State(*(jnp.asarray(x[k], dtype=jnp.float32) for k in ("H", "s", "v", "sd")), "mixed")
    T, Td = bridge.velocity_transform(model, st32, "mixed", "featherstone")
    assert T.dtype == jnp.float32
    T_ref, Td_ref = bridge.velocity_transform(model, _state(x, "mixed"), "mixed", "featherstone")
    np.testing.assert_allclose(np.asarray(T), T_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(Td), Td_ref, rtol=1e-5, atol=1e-5 * np.abs(Td_ref).max())


def test_bad_shapes_name_the_argument_under_jit() -> None:
    model = bridge.random_model(3, seed=1)
    x = _numbers(model, seed=2)
    st = _state(x, "mixed", jnp)
    with pytest.raises(bridge.ShapeError, match="nu"):
        convert_velocity(model, st, jnp.zeros(model.nv + 1), "mixed", "body")
    with pytest.raises(bridge.StateError, match="base_velocity"):
        State(jnp.asarray(x["H"]), jnp.asarray(x["s"]), jnp.zeros(5), jnp.asarray(x["sd"]), "mixed")
    with pytest.raises(bridge.BridgeError, match="homogeneous matrix"):
        State(jnp.zeros((3, 3)), jnp.asarray(x["s"]), jnp.asarray(x["v"]), jnp.asarray(x["sd"]), "mixed")


def test_concrete_jax_poses_are_checked() -> None:
    """Checks on values run on concrete inputs (not under tracing)."""
    model = bridge.random_model(2, seed=1)
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(bridge.BridgeError, match="orthonormal"):
        State(jnp.asarray(bad), jnp.zeros(model.n_dofs), jnp.zeros(6), jnp.zeros(model.n_dofs), "mixed")

    @jax.jit
    def traced(H):  # no values under tracing: nothing to check, nothing raised
        return State(H, jnp.zeros(model.n_dofs), jnp.zeros(6), jnp.zeros(model.n_dofs), "mixed").nu

    assert traced(jnp.asarray(bad)).shape == (model.nv,)


# ----------------------------------------------------------------------------------------- CasADi
casadi = pytest.importorskip("casadi")


@pytest.mark.parametrize("target", NAMES)
@pytest.mark.parametrize("rep", REPS)
def test_casadi_expressions_equal_numpy(model, rep: str, target: str) -> None:
    x = _numbers(model, seed=len(target) + 1)
    n, nv = model.n_dofs, model.nv
    sym = {
        "H": casadi.SX.sym("H", 4, 4),
        "s": casadi.SX.sym("s", n),
        "v": casadi.SX.sym("v", 6),
        "sd": casadi.SX.sym("sd", n),
        "nu": casadi.SX.sym("nu", nv),
        "M": casadi.SX.sym("M", nv, nv),
        "h": casadi.SX.sym("h", nv),
        "J": casadi.SX.sym("J", 6, nv),
    }
    st = State(sym["H"], sym["s"], sym["v"], sym["sd"], rep)
    outs = [fn(model, st, sym, rep, target) for _, fn in CONVERSIONS]
    F = casadi.Function("f", list(sym.values()), outs)
    got = F(*x.values())
    st_np = _state(x, rep)
    for (name, fn), g in zip(CONVERSIONS, got, strict=True):
        ref = fn(model, st_np, x, rep, target)
        np.testing.assert_allclose(
            np.array(g).reshape(ref.shape),
            ref,
            rtol=0,
            atol=1e-13 * max(1.0, np.abs(ref).max()),
            err_msg=name,
        )


@pytest.mark.parametrize("target", ["pinocchio", "mujoco", "featherstone"])
def test_casadi_jacobian_equals_central_differences(target: str) -> None:
    model = bridge.random_model(3, seed=8)
    x = _numbers(model, seed=4)
    v = casadi.SX.sym("v", 6)
    st = State(x["H"], x["s"], v, x["sd"], "mixed")
    a = convert_acceleration(model, st, x["nu"], "mixed", target)
    J = casadi.Function("J", [v], [casadi.jacobian(a, v)])(x["v"])
    f = casadi.Function("a", [v], [a])
    eps = 1e-6
    num = np.column_stack(
        [(np.array(f(x["v"] + e)) - np.array(f(x["v"] - e))).ravel() / (2 * eps) for e in eps * np.eye(6)]
    )
    np.testing.assert_allclose(np.array(J), num, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("name", [n for n in NAMES if convention(n).configuration is not None])
def test_casadi_native_state_round_trip(model, name: str) -> None:
    x = _numbers(model, seed=12)
    conv = convention(name)
    n = model.n_dofs
    shapes = (("H", (4, 4)), ("s", (n,)), ("v", (6,)), ("sd", (n,)))
    Hs, ss, vs, sds = (casadi.SX.sym(k, *sh) for k, sh in shapes)
    q, v = to_native_state(model, State(Hs, ss, vs, sds, "body"), conv)
    back = from_native_state(model, q, v, conv, "body")
    F = casadi.Function("f", [Hs, ss, vs, sds], [q, v, back.base_velocity, back.s_dot])
    q_n, v_n, vb, sd = F(x["H"], x["s"], x["v"], x["sd"])
    q_ref, v_ref = to_native_state(model, _state(x, "body"), conv)
    np.testing.assert_allclose(np.array(q_n).ravel(), q_ref, atol=1e-13)
    np.testing.assert_allclose(np.array(v_n).ravel(), v_ref, atol=1e-13)
    if model.floating:
        np.testing.assert_allclose(np.array(vb).ravel(), x["v"], atol=1e-12)
    np.testing.assert_allclose(np.array(sd).ravel(), x["sd"], atol=1e-13)


def test_import_bridge_imports_neither_jax_nor_casadi() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, bridge\n"
        "m = bridge.random_model(2, seed=0)\n"
        "st = bridge.State(np.eye(4), np.zeros(m.n_dofs), np.zeros(6), np.zeros(m.n_dofs))\n"
        "bridge.velocity_transform(m, st, 'mixed', 'pinocchio')\n"
        "print('jax' in sys.modules, 'casadi' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("robot", ["iCubGazeboV2_5", "solo12"])
def test_jax_on_a_shipped_robot_equals_numpy(robot: str) -> None:
    """A robot no one here wrote: every conversion of every registered convention under jit equals
    the numpy path to 1e-13 (relative to the largest entry)."""
    try:
        model = bridge.load_urdf(bridge.robot_path(robot))
    except bridge.BridgeError as exc:  # pragma: no cover - the robot packages are in the test extra
        pytest.skip(f"{robot}: {exc}")
    x = _numbers(model, seed=21)
    targets = [n for n in NAMES if n != "mixed"]

    @jax.jit
    def run(arrays: dict) -> list:
        st = _state(arrays, "mixed", jnp)
        return [[fn(model, st, arrays, "mixed", t) for _, fn in CONVERSIONS] for t in targets]

    out = run({k: jnp.asarray(v) for k, v in x.items()})
    st = _state(x, "mixed")
    for target, values in zip(targets, out, strict=True):
        for (name, fn), got in zip(CONVERSIONS, values, strict=True):
            ref = fn(model, st, x, "mixed", target)
            scale = max(1.0, np.abs(ref).max())
            np.testing.assert_allclose(
                np.asarray(got), ref, rtol=0, atol=1e-13 * scale, err_msg=f"{target} {name}"
            )
