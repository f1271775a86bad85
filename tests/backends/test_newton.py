"""The Newton backend: Newton's conventions measured on its own calls (``eval_fk``, a Featherstone
step), state and model round trips, per-body twists, and the "newton" engine against float64 engines.

Newton computes in float32 on the CPU: its results are compared with bridge's to 1e-5 relative
(poses, velocities), 1e-4 for accelerations implied by a simulation step (the engine's registry
floor). Skipped (with the reason) only when newton is not installed. warp compiles its kernels the
first time (a minute or two, cached in WARP_CACHE_PATH, see tests/conftest.py).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

pytest.importorskip("newton", reason="Newton is not installed (pip install 'bridge-dynamics[newton]')")

import bridge
from bridge.backends.newton import (
    NEWTON,
    from_newton,
    from_newton_body_velocities,
    from_newton_state,
    to_newton,
    to_newton_body_velocities,
    to_newton_state,
)
from bridge.backends.newton.model import body_order, require_newton
from bridge.conventions.convert import convert_acceleration, convert_generalized_force, convert_mass_matrix
from bridge.errors import BridgeError
from bridge.robots import robot_path
from tests.helpers import assert_close, random_state

REPS = ("body", "inertial", "mixed")


def _robot(name: str, floating: bool = True, base: str | None = None) -> bridge.Model:
    return bridge.load_urdf(
        robot_path(name), base=base, floating=floating, check_inertia=False, mimic="independent"
    )


def _models() -> dict[str, bridge.Model]:
    icub = _robot("iCubGazeboV2_5")
    return {
        "random floating": bridge.random_model(7, seed=11),
        "random fixed": bridge.random_model(6, seed=4).with_fixed_base(),
        "icub": icub,
        "icub re-rooted at l_foot": icub.with_base("l_foot"),
        "panda fixed": _robot("panda", floating=False),
    }


MODELS = _models()


def _eval_fk(newton_model, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton's own forward kinematics: ``(body_q, body_qd)`` (float64 copies)."""
    newton, wp = require_newton()
    state = newton_model.state()
    newton.eval_fk(newton_model, wp.array(q.astype(np.float32)), wp.array(qd.astype(np.float32)), state)
    return state.body_q.numpy().astype(float), state.body_qd.numpy().astype(float)


def _state(model: bridge.Model, seed: int) -> bridge.State:
    state = random_state(model, np.random.default_rng(seed))
    if not model.floating:  # the fixed joint of to_newton is at the identity (world_H_base: state)
        state = bridge.State(bridge.Transform.identity(), state.s, np.zeros(6), state.s_dot, "mixed")
    return state


# ------------------------------------------------------------------------------ conventions
def test_newton_velocity_conventions_measured() -> None:
    """Each fact the NEWTON declaration and the conventions page state, on raw Newton calls: body_q is
    the origin and quaternion x, y, z, w; a free joint's joint_q is [p; x y z w]; its joint_qd and the
    body's body_qd are the COM velocity and the angular velocity in world axes (a body spinning about
    its origin with its COM 0.3 m off the axis has a non-zero linear twist)."""
    newton, wp = require_newton()
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    inertia = wp.mat33(np.eye(3).ravel().tolist())
    body = builder.add_link(com=wp.vec3(0.3, 0.0, 0.0), mass=1.0, inertia=inertia)
    builder.add_articulation([builder.add_joint_free(body)])
    m = builder.finalize(device="cpu")
    half = 0.5 * np.pi / 2  # a quarter turn about z
    q = np.array([0.1, 0.2, 0.3, 0.0, 0.0, np.sin(half), np.cos(half)])
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    omega = np.array([0.0, 0.0, 2.0])
    origin_velocity = np.zeros(3)  # spinning about its origin
    com_velocity = origin_velocity + np.cross(omega, R @ np.array([0.3, 0.0, 0.0]))
    body_q, body_qd = _eval_fk(m, q, np.r_[com_velocity, omega])
    assert_close(body_q[0], q, 1e-7, "body_q = [origin; x y z w]")
    assert_close(body_qd[0], np.r_[com_velocity, omega], 1e-6, "body_qd = [COM velocity; omega], world")
    assert np.linalg.norm(body_qd[0, :3]) > 0.5
    # the declaration says the same: a MIXED state spinning about the origin -> NEWTON's v
    model = bridge.Model(
        "spin",
        (bridge.model.model.Link("b", bridge.SpatialInertia(1.0, [0.3, 0.0, 0.0], np.eye(3))),),
        (),
        (),
        "b",
        (),
    )
    H = bridge.Transform.from_quaternion_wxyz(np.r_[q[6], q[3:6]], q[:3])
    state = bridge.State(H, np.zeros(0), np.r_[origin_velocity, omega], np.zeros(0), "mixed")
    joint_q, joint_qd = to_newton_state(model, state)
    assert_close(joint_q, q, 1e-15, "to_newton_state q")
    assert_close(joint_qd, np.r_[com_velocity, omega], 1e-15, "to_newton_state qd")
    assert NEWTON.velocity.point.value == "base_com"


# ------------------------------------------------------------------------------ eval_fk
@pytest.mark.parametrize("name", list(MODELS))
def test_eval_fk_gives_bridge_poses_and_com_velocities(name: str) -> None:
    """Newton's eval_fk on to_newton_state's coordinates: every body's pose and COM twist equal
    bridge's (Pinocchio's frame poses and velocities, converted with the declaration) to 1e-5."""
    model = MODELS[name]
    newton_model = to_newton(model)
    kd = bridge.KinDyn(model, engine="pinocchio", representation="mixed")
    for seed in range(2):
        state = _state(model, seed)
        kd.set_robot_state(state)
        body_q, body_qd = _eval_fk(newton_model, *to_newton_state(model, state))
        for rep in REPS:
            velocities = to_newton_body_velocities(model, body_q, body_qd, rep)
            kd_rep = bridge.KinDyn(model, engine="pinocchio", representation=rep)
            kd_rep.set_robot_state(state.to(rep))
            for link in model.links[:: max(1, len(model.links) // 8)]:
                what = f"{name} {link.name} {rep}"
                assert_close(velocities[link.name], kd_rep.frame_velocity(link.name), 1e-5, what)
        for i, link in enumerate(model.link(n) for n in body_order(model)):
            H = kd.frame_transform(link.name)
            H = getattr(H, "matrix", H)
            assert_close(body_q[i, :3], H[:3, 3], 1e-5, f"{name} {link.name} origin")
            # the twist at the COM, world axes, from MIXED: o_dot + omega x (R c)
            v = kd.frame_velocity(link.name)
            com = v[:3] + np.cross(v[3:], H[:3, :3] @ link.inertia.com)
            assert_close(body_qd[i], np.r_[com, v[3:]], 1e-5, f"{name} {link.name} body_qd")
        # and back: bridge's frame velocities -> Newton's body_qd
        velocities = {link.name: kd.frame_velocity(link.name) for link in model.links}
        back = from_newton_body_velocities(model, body_q, velocities, "mixed")
        assert_close(back, body_qd, 1e-5, "body_qd from frame velocities")


# ------------------------------------------------------------------------------ round trips
@pytest.mark.parametrize("name", ["random floating", "random fixed", "icub re-rooted at l_foot"])
def test_state_round_trips_are_exact(name: str) -> None:
    """(joint_q, joint_qd) -> State -> (joint_q, joint_qd) exact in float64 arithmetic (1e-14), in
    every representation; the quaternion's sign is Newton's."""
    model = MODELS[name]
    rng = np.random.default_rng(3)
    q, qd = to_newton_state(model, _state(model, 5))
    q = q + 0.0 * rng.normal(size=q.shape)
    for rep in REPS:
        back_q, back_qd = to_newton_state(model, from_newton_state(model, q, qd, rep))
        assert_close(back_q, q, 1e-14, f"joint_q via {rep}")
        assert_close(back_qd, qd, 1e-13, f"joint_qd via {rep}")


@pytest.mark.parametrize("name", ["random floating", "icub re-rooted at l_foot", "panda fixed"])
def test_model_round_trip(name: str) -> None:
    """from_newton(to_newton(m)): the same links, inertias (float32), joints and DOF order (Newton's
    depth-first one)."""
    model = MODELS[name]
    newton_model = to_newton(model)
    # body k is the child of joint k (Newton's Featherstone solver needs it)
    assert np.array_equal(newton_model.joint_child.numpy(), np.arange(newton_model.body_count))
    back = from_newton(newton_model)
    assert back.floating == model.floating and back.base == model.base
    assert {link.name for link in back.links} == {link.name for link in model.links}
    for link in model.links:
        assert_close(back.link(link.name).inertia.as_matrix(), link.inertia.as_matrix(), 1e-6, link.name)
    assert set(back.dof_names) == set(model.dof_names)
    state = _state(back, 1)
    poses = back.forward_kinematics(state.s)
    original = model.forward_kinematics(np.array([state.s[back.dof_index(d)] for d in model.dof_names]))
    for link in model.links:
        assert_close(poses[link.name].matrix, original[link.name].matrix, 1e-6, f"{name} {link.name} pose")


# ------------------------------------------------------------------------------ a simulation step
@pytest.mark.parametrize("name", ["random floating", "random fixed", "icub"])
def test_a_featherstone_step_implies_bridges_forward_dynamics(name: str) -> None:
    """One step of Newton's Featherstone solver (no contacts; damping, limit and target stiffness
    zero): (joint_qd(dt) - joint_qd) / dt equals bridge's forward dynamics converted to Newton's
    convention to 1e-4, under joint torques and a base wrench (given in Newton's coordinates, T^-T
    of bridge's). iCub's mass matrix is ill-conditioned for float32 (forward error 1.4e-4 here):
    compared in the backward sense, ``M a``, there."""
    newton, _ = require_newton()
    model = MODELS[name]
    if name.startswith("random"):
        model = bridge.random_model(6, seed=3, massless_probability=0.0)
        model = model if name.endswith("floating") else model.with_fixed_base()
    newton_model = to_newton(model)
    solver = newton.solvers.SolverFeatherstone(newton_model, angular_damping=0.0)
    rng = np.random.default_rng(2)
    state = _state(model, 8)
    tau = rng.normal(size=model.nv) * 5.0
    if not model.floating:
        tau = tau[: model.n_dofs]
    kd = bridge.KinDyn(model, engine="pinocchio", representation="mixed")
    kd.set_robot_state(state)
    wrench = tau[:6] if model.floating else None
    wrenches = {model.base: wrench} if model.floating else None
    nu_dot = kd.forward_dynamics(tau[6:] if model.floating else tau, wrenches)
    expected = convert_acceleration(model, state, nu_dot, "mixed", "newton")
    # the base wrench at the base origin in world axes (MIXED's dual) as a generalized force
    tau_mixed = np.r_[wrench, tau[6:]] if model.floating else tau
    tau_newton = convert_generalized_force(model, state, tau_mixed, "mixed", "newton")
    q, qd = to_newton_state(model, state)
    before, after = newton_model.state(), newton_model.state()
    before.joint_q.assign(q.astype(np.float32))
    before.joint_qd.assign(qd.astype(np.float32))
    newton.eval_fk(newton_model, before.joint_q, before.joint_qd, before)
    control = newton_model.control()
    control.joint_f.assign(tau_newton.astype(np.float32))
    dt = 1e-2
    solver.step(before, after, control, None, dt)
    implied = (after.joint_qd.numpy().astype(float) - qd.astype(np.float32).astype(float)) / dt
    # backward error (the generalized force the difference stands for), what a float32 solve
    # guarantees whatever the conditioning of M; forward error where M is well conditioned
    M = convert_mass_matrix(model, state, kd.mass_matrix(), "mixed", "newton")
    what = f"{name}: Newton's step vs bridge's forward dynamics"
    assert_close(M @ implied, M @ expected, 1e-4, f"{what} (M times)", atol=0.0)
    if name.startswith("random"):
        assert_close(implied, expected, 1e-4, what, atol=0.0)


# ------------------------------------------------------------------------------ the engine
@pytest.mark.parametrize("name", ["random floating", "random fixed", "icub re-rooted at l_foot"])
def test_newton_engine_cross_validates(name: str) -> None:
    """The "newton" engine against Pinocchio in every representation (to its float32 floor, 1e-4;
    the report says so)."""
    model = MODELS[name]
    if name == "icub re-rooted at l_foot":
        model = model.with_dofs(model.dof_names[:8])
    report = bridge.cross_validate(model, engines=["pinocchio", "newton"], samples=2, fd_samples=1)
    assert report.ok, "\n" + str(report)
    assert any("newton: compared to rtol 0.0001" in note for note in report.notes)
    assert report.worst(engines="pinocchio vs newton") < 1e-5


def test_newton_engine_borrows_nothing() -> None:
    """Every required core method of the engine protocol is the Newton engine's own (defined on its
    class or bridge's shared EngineBase), no attribute holds another engine, and an unknown attribute
    raises AttributeError instead of resolving to another engine."""
    from bridge.backends.base import EngineBase
    from bridge.backends.newton.engine import NewtonEngine
    from bridge.backends.protocol import Engine
    from bridge.backends.registry import engine_class, engine_names

    model = MODELS["random floating"]
    engine = NewtonEngine(model, "mixed")
    engine.set_state(_state(model, 0), np.array([0.0, 0.0, -9.81]))
    assert "__getattr__" not in vars(NewtonEngine) and not hasattr(EngineBase, "__getattr__")
    core = [n for n in vars(Engine) if not n.startswith("_") and callable(getattr(Engine, n))]
    assert {"frame_bias_acc", "frame_acceleration", "mass_matrix"} <= set(core)
    for name in core:
        owner = next(c for c in NewtonEngine.__mro__ if name in vars(c))
        assert owner in (NewtonEngine, EngineBase), f"{name} from {owner}"
    others = tuple(engine_class(e) for e in engine_names() if e != "newton")
    assert not [k for k, v in vars(engine).items() if isinstance(v, others)]
    with pytest.raises(AttributeError):
        engine.not_a_quantity  # noqa: B018
    with pytest.raises(AttributeError):
        engine.frame_jacobian_derivative  # noqa: B018 (a derived quantity: generic, not another engine's)


@pytest.mark.parametrize("name", ["icub", "random floating", "random fixed"])
def test_newton_frame_accelerations_are_newtons(name: str) -> None:
    """frame_acceleration and frame_bias_acc (Newton's Featherstone forward pass) equal Pinocchio's
    (float64) in every representation to the engine's float32 floor (registry rtol 1e-4; measured
    worst 1.1e-6 on iCub, 4e-7 on the random trees), at three states with random accelerations."""
    model = MODELS[name]
    rng = np.random.default_rng(5)
    from bridge.validation.sampling import default_frames, random_states

    states = random_states(model, 3, rng)
    frames = default_frames(model)
    for rep in REPS:
        kn = bridge.KinDyn(model, engine="newton", representation=rep)
        kp = bridge.KinDyn(model, engine="pinocchio", representation=rep)
        st = states.to(rep)
        kn.set_robot_state(st)
        kp.set_robot_state(st)
        nu_dot = rng.normal(size=(3, model.nv))
        base_acc = nu_dot[:, :6] if model.floating else None
        s_ddot = nu_dot[:, model.nv - model.n_dofs :]
        for f in frames:
            what = f"{name} {f} {rep}"
            assert_close(kn.frame_bias_acc(f), kp.frame_bias_acc(f), 1e-5, f"{what} bias acc")
            a, b = kn.frame_acceleration(f, base_acc, s_ddot), kp.frame_acceleration(f, base_acc, s_ddot)
            assert_close(a, b, 1e-5, f"{what} acceleration")


@pytest.mark.parametrize("version", ["1.7.0", "1.9.0", "2.0", "1.8.0rc1-dev", "unknown"])
def test_newton_frame_accelerations_refuse_unchecked_versions(version: str, monkeypatch) -> None:
    """Newton's body accelerations come from its internal kernels (its public API has none): with a
    release they were not checked with, frame accelerations raise a BackendError naming it, and the
    public quantities still work (the mass matrix, the Jacobian)."""
    import newton

    from bridge.backends.newton import accelerations

    model = MODELS["random floating"]
    kn = bridge.KinDyn(model, engine="newton", representation="mixed")
    kn.set_robot_state(random_state(model, np.random.default_rng(1)))
    frame = model.links[-1].name
    expected = accelerations.internal_kernels()  # the installed, checked release
    release = tuple(int(p) for p in version.split(".")[:2]) if version[0].isdigit() else None
    monkeypatch.setattr(newton, "__version__", version)
    if release in accelerations.CHECKED_VERSIONS:
        assert accelerations.internal_kernels() == expected
        return
    with pytest.raises(BridgeError, match=f"Newton {version}.*internal Featherstone kernels"):
        kn.frame_acceleration(frame, np.zeros(6), np.zeros(model.n_dofs))
    with pytest.raises(BridgeError, match=f"Newton {version}"):
        kn.frame_bias_acc(frame)
    assert kn.mass_matrix().shape == (model.nv, model.nv)
    assert np.all(np.isfinite(kn.frame_jacobian(frame)))


def test_cross_validate_compares_newtons_frame_accelerations() -> None:
    """cross_validate compares newton's frame accelerations, bias accelerations and the Jacobian
    derivative built on them with a float64 engine (none is borrowed from another engine)."""
    model = MODELS["random fixed"]
    report = bridge.cross_validate(model, engines=["pinocchio", "newton"], samples=2, fd_samples=0)
    assert report.ok, "\n" + str(report)
    for quantity in ("frame_bias_acc", "frame_acceleration", "frame_jacobian_derivative"):
        rows = [r for r in report.results if r.quantity == quantity and r.engines == "pinocchio vs newton"]
        assert len(rows) >= 3 and max(r.max_rel for r in rows) < 1e-5, quantity
    assert not any("not compared" in note for note in report.notes)


def test_newton_joins_cross_validate_by_default() -> None:
    model = bridge.random_model(3, seed=1).with_fixed_base()
    report = bridge.cross_validate(model, samples=1, fd_samples=0)
    assert "newton" in report.engines and report.ok, "\n" + str(report)


def test_import_bridge_imports_neither_warp_nor_newton() -> None:
    code = (
        "import sys, bridge, bridge.backends.registry as r; r.available_engines(); bridge.to_newton; "
        "from bridge.conventions.registry import convention; convention('newton'); "
        "print('warp' in sys.modules or 'newton' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


# ------------------------------------------------------------------------------ batches, float32 range
def test_a_batch_is_one_newton_call_per_function(monkeypatch) -> None:
    """A batch of states is Newton's model replicated into one world per state: forward kinematics,
    the mass matrices and the Jacobians of the whole batch are one call each (the engine evaluated
    states one by one: ``bridge check --samples 20`` took 45 s with Newton, 8.8 s without)."""
    newton, _ = require_newton()
    model = MODELS["random floating"]
    calls = {"eval_fk": 0, "eval_mass_matrix": 0, "eval_jacobian": 0}
    for name in calls:
        original = getattr(newton, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(newton, name, counted)
    kd = bridge.KinDyn(model, engine="newton")
    states = random_state(model, np.random.default_rng(1), batch=(4, 3))
    kd.set_robot_state(states)
    M, J = kd.mass_matrix(), kd.frame_jacobian(model.frame_names[-1])
    kd.bias_forces()
    assert calls == {"eval_fk": 1, "eval_mass_matrix": 1, "eval_jacobian": 1}
    assert M.shape == (4, 3, model.nv, model.nv) and J.shape == (4, 3, 6, model.nv)
    kp = bridge.KinDyn(model, engine="pinocchio")
    kp.set_robot_state(states)
    assert_close(M, kp.mass_matrix(), 1e-5, "a batch of 12 states: M")


@settings(max_examples=30)
@given(
    which=st.sampled_from(["base_velocity", "s_dot", "s", "base position", "gravity"]),
    exponent=st.integers(16, 300),
)
@example(which="s_dot", exponent=20)
@example(which="base_velocity", exponent=20)
@example(which="s", exponent=39)
@example(which="base position", exponent=39)
def test_float32_overflow_is_an_error_never_nan(which: str, exponent: int) -> None:
    """Newton computes in float32 (largest finite 3.4e38): inputs whose products overflow it
    (velocities of 1e20, positions of 1e39) give an InvalidValueError saying so from every query,
    never NaN (they took KinDyn's unchecked hot path, safe for float64 inputs below 1e50 only)."""
    model = MODELS["random floating"]
    rng = np.random.default_rng(exponent)
    n = model.n_dofs
    H, s, v, sd, g = (
        np.eye(4),
        rng.uniform(-1, 1, n),
        rng.normal(size=6),
        rng.normal(size=n),
        np.array([0, 0, -9.81]),
    )
    big = 10.0**exponent
    if which == "base_velocity":
        v = v * big
    elif which == "s_dot":
        sd = sd * big
    elif which == "s":
        s = s * big
    elif which == "base position":
        H[:3, 3] = big
    else:
        g = g * big
    kd = bridge.KinDyn(model, engine="newton")
    kd.set_state(H, s, v, sd, g)
    frame = model.frame_names[-1]
    queries = {
        "mass_matrix": kd.mass_matrix,
        "bias_forces": kd.bias_forces,
        "gravity_forces": kd.gravity_forces,
        "inverse_dynamics": lambda: kd.inverse_dynamics(np.zeros(6), np.zeros(n)),
        "forward_dynamics": lambda: kd.forward_dynamics(np.zeros(n)),
        "frame_transform": lambda: kd.frame_transform(frame),
        "frame_velocity": lambda: kd.frame_velocity(frame),
        "frame_jacobian": lambda: kd.frame_jacobian(frame),
        "frame_bias_acc": lambda: kd.frame_bias_acc(frame),
        "com_position": kd.com_position,
        "centroidal_momentum": kd.centroidal_momentum,
        "coriolis_matrix": kd.coriolis_matrix,
    }
    for name, query in queries.items():
        try:
            value = query()
        except bridge.InvalidValueError as exc:
            assert "not finite" in str(exc) and ("float32" in str(exc) or "float64" in str(exc)), str(exc)
            continue
        assert np.all(np.isfinite(value)), f"{name} with {which} ~ 1e{exponent}: {value}"


@pytest.mark.parametrize(
    "field", ["mass", "com", "inertia", "placement", "axis origin", "armature", "gravity"]
)
def test_to_newton_refuses_values_beyond_float32(field: str) -> None:
    """A mass, centre of mass, inertia, joint placement, axis origin or armature beyond float32's
    range (Newton stores float32: it would be inf) is an UnsupportedError naming the link or joint,
    from to_newton and from KinDyn(engine="newton")."""
    import dataclasses

    base = MODELS["random floating"]
    big = 1e39
    link, joint = base.links[1], next(j for j in base.joints if j.movable)
    links, joints, gravity = list(base.links), list(base.joints), (0.0, 0.0, -9.81)
    i = link.inertia
    if field in ("mass", "com", "inertia"):
        mass, com, inertia = float(i.mass), np.asarray(i.com), np.asarray(i.inertia_com)
        if field == "mass":
            mass = big
        elif field == "com":
            com = com + big
        else:
            inertia = np.diag([big, big, big])
        links[1] = dataclasses.replace(link, inertia=bridge.SpatialInertia(mass, com, inertia))
        name = f"link {link.name!r}"
    elif field == "gravity":
        gravity, name = (0.0, 0.0, -big), "gravity"
    else:
        change = {
            "placement": {"parent_H_child": bridge.Transform.from_translation([big, 0.0, 0.0])},
            "axis origin": {"axis_origin": np.array([0.0, big, 0.0])},
            "armature": {"armature": big},
        }[field]
        joints[joints.index(joint)] = dataclasses.replace(joint, **change)
        name = f"joint {joint.name!r}"
    model = base.replace(links=tuple(links), joints=tuple(joints))
    with pytest.raises(bridge.UnsupportedError, match=f"float32.*{name}"):
        to_newton(model, gravity)
    if field != "gravity":  # (KinDyn refuses it when built: cross_validate leaves newton out)
        with pytest.raises(bridge.UnsupportedError, match=name):
            bridge.KinDyn(model, engine="newton")


@pytest.mark.parametrize("name", ["random floating", "random fixed"])
def test_large_joint_angles_keep_float32_precision(name: str) -> None:
    """A revolute joint turned 10,000 times (a wheel after a long run) is the same configuration:
    Newton's answers there equal Pinocchio's to its float32 floor (float32 spaces 6e4 rad 4e-3
    apart, so the angle is reduced to [-pi, pi) in float64 before Newton sees it)."""
    model = MODELS[name]
    rng = np.random.default_rng(4)
    state = random_state(model, rng)
    turns = np.array(
        [
            2 * np.pi * 10_000 * (j.kind.value in ("revolute", "continuous"))
            for j in map(model.joint, model.dof_names)
        ]
    )
    far = bridge.State(state.world_H_base, state.s + turns, state.base_velocity, state.s_dot, "mixed")
    kn, kp = bridge.KinDyn(model, engine="newton"), bridge.KinDyn(model, engine="pinocchio")
    kn.set_robot_state(far)
    kp.set_robot_state(state)
    frame = model.frame_names[-1]
    for what, a, b in [
        ("mass_matrix", kn.mass_matrix(), kp.mass_matrix()),
        ("bias_forces", kn.bias_forces(), kp.bias_forces()),
        ("frame_transform", kn.frame_transform(frame), kp.frame_transform(frame)),
        ("frame_jacobian", kn.frame_jacobian(frame), kp.frame_jacobian(frame)),
    ]:
        assert_close(a, b, 1e-5, f"{name} at 10,000 turns: {what}")
