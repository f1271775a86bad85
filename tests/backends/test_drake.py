"""The Drake backend: Drake's conventions measured on raw Drake calls, state and model round trips,
and the "drake" engine against the others (1e-10 relative) on random models and real robots,
floating, fixed and re-rooted. Skipped (with the reason) only when pydrake is not installed."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")

import bridge
from bridge.backends.drake import (
    DRAKE,
    drake_layout,
    from_drake,
    from_drake_state,
    set_world_H_base,
    to_drake,
    to_drake_state,
)
from bridge.conventions.change_of_variables import MIXED, change_of_variables
from bridge.conventions.convert import velocity_transform
from bridge.robots import robot_path
from bridge.validation.check import available_engines, cross_validate
from tests.helpers import assert_close, assert_single_state_path_equals_batched, random_state, small_model

OTHERS = ("pinocchio", "featherstone")
ENGINES = (*OTHERS, "drake")
REPS = ("body", "inertial", "mixed")


def _ok(report) -> None:
    assert report.results, "cross-validation compared nothing"
    assert "drake" in report.engines
    assert report.ok, "\n" + str(report)


@pytest.fixture(scope="module")
def small():
    return small_model(np.random.default_rng(0))


@pytest.fixture(scope="module")
def small_plant(small):
    """The small floating model, its plant and a context at a random state."""
    rng = np.random.default_rng(1)
    plant = to_drake(small)
    st = random_state(small, rng, "mixed")
    q, v = to_drake_state(small, st)
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, q)
    plant.SetVelocities(context, v)
    return plant, context, st, q, v


# ------------------------------------------------------------------ Drake's conventions, measured
def test_floating_q_is_quaternion_wxyz_then_position(small, small_plant) -> None:
    plant, context, st, q, _ = small_plant
    X = plant.CalcRelativeTransform(context, plant.world_frame(), plant.GetBodyByName("a").body_frame())
    np.testing.assert_allclose(X.GetAsMatrix4(), st.world_H_base.matrix, atol=1e-14)
    np.testing.assert_allclose(q[:4], st.world_H_base.as_quaternion_wxyz(), atol=1e-15)
    np.testing.assert_allclose(q[4:7], st.world_H_base.translation, atol=1e-15)


def test_floating_v_is_world_angular_then_origin_velocity(small, small_plant) -> None:
    """v[0:3] = omega in world, v[3:6] = d/dt of the base origin in world: MIXED, angular first."""
    plant, context, st, q, v = small_plant
    V = plant.GetBodyByName("a").EvalSpatialVelocityInWorld(context)
    np.testing.assert_allclose(V.rotational(), v[:3], atol=1e-14)
    np.testing.assert_allclose(V.translational(), v[3:6], atol=1e-14)
    np.testing.assert_allclose(v[:6], st.base_velocity[[3, 4, 5, 0, 1, 2]], atol=1e-14)
    qdot = plant.MapVelocityToQDot(context, v)
    np.testing.assert_allclose(qdot[4:7], v[3:6], atol=1e-14)
    # quaternion rate 1/2 (0, omega_world) (x) q
    w, x = q[0], q[1:4]
    om = v[:3]
    expected = 0.5 * np.concatenate([[-om @ x], w * om + np.cross(om, x)])
    np.testing.assert_allclose(qdot[:4], expected, atol=1e-14)


def test_bias_term_and_inverse_dynamics_leave_gravity_out(small, small_plant) -> None:
    from pydrake.multibody.tree import MultibodyForces

    plant, context, _, _, v = small_plant
    g = plant.CalcGravityGeneralizedForces(context)
    assert np.linalg.norm(g) > 1.0
    Cv = plant.CalcBiasTerm(context)
    ID0 = plant.CalcInverseDynamics(context, np.zeros(plant.num_velocities()), MultibodyForces(plant))
    assert_close(ID0, Cv, 1e-12, "ID(0) = C v")
    c2 = plant.CreateDefaultContext()
    plant.SetPositions(c2, plant.GetPositions(context))
    assert np.allclose(plant.CalcBiasTerm(c2), 0.0), "bias term at v = 0 carries no gravity"
    forces = MultibodyForces(plant)
    plant.CalcForceElementsContribution(c2, forces)  # gravity (no damping in to_drake)
    ID_g = plant.CalcInverseDynamics(c2, np.zeros(plant.num_velocities()), forces)
    assert_close(ID_g, -g, 1e-12, "force elements = gravity")
    # bridge's h = C nu + g with g = -CalcGravityGeneralizedForces
    kd = bridge.KinDyn(small, "pinocchio", "mixed")
    kd.set_robot_state(from_drake_state(small, plant.GetPositions(context), v))
    cov = change_of_variables(small, kd.state, MIXED, DRAKE)
    assert_close(cov.force_back(Cv - g), kd.bias_forces(), 1e-10, "h")
    assert_close(cov.force_back(-g), kd.gravity_forces(), 1e-10, "g")


def test_velocity_order_is_read_from_the_plant(small) -> None:
    plant = to_drake(small)
    lay = drake_layout(small, plant)
    starts = [plant.GetJointByName(d).velocity_start() for d in small.dof_names]
    assert [small.dof_names[k] for k in lay.perm] == [
        d for _, d in sorted(zip(starts, small.dof_names, strict=True))
    ]
    assert sorted(starts) == list(range(6, 6 + small.n_dofs))


def test_no_deprecated_drake_calls(small) -> None:
    """Every Drake call the backend makes is in its current (non-deprecated) form."""
    rng = np.random.default_rng(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for floating in (True, False):
            m = small_model(rng, floating)
            from_drake(to_drake(m))
            for rep in REPS:
                kd = bridge.KinDyn(m, "drake", rep)
                kd.set_robot_state(random_state(m, rng, rep))
                a = rng.normal(size=6) if floating else None
                sdd = rng.normal(size=m.n_dofs)
                kd.mass_matrix(), kd.bias_forces(), kd.gravity_forces(), kd.com_jacobian()
                kd.inverse_dynamics(a, sdd, {"tool": rng.normal(size=6)})
                kd.forward_dynamics(rng.normal(size=m.n_dofs), {"tool": rng.normal(size=6)})
                kd.frame_acceleration("tool", a, sdd), kd.frame_velocity("f"), kd.total_momentum()
                kd.centroidal_momentum(), kd.com_velocity(), kd.frame_transform("e")
    drake_warnings = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert not drake_warnings, [str(w.message) for w in drake_warnings]


# ------------------------------------------------------------------ states
@pytest.mark.parametrize("rep", REPS)
def test_state_round_trip(small, rep: str) -> None:
    rng = np.random.default_rng(3)
    st = random_state(small, rng, rep, batch=(2, 3))
    q, v = to_drake_state(small, st)
    assert q.shape == (2, 3, small.n_dofs + 7) and v.shape == (2, 3, small.nv)
    back = from_drake_state(small, q, v, rep)
    np.testing.assert_allclose(back.world_H_base.matrix, st.world_H_base.matrix, atol=1e-14)
    np.testing.assert_allclose(back.s, st.s, atol=1e-15)
    np.testing.assert_allclose(back.s_dot, st.s_dot, atol=1e-15)
    np.testing.assert_allclose(back.base_velocity, st.base_velocity, atol=1e-12)


def test_velocity_transform_to_drake(small) -> None:
    """MIXED -> drake is a constant permutation (T_dot = 0); from BODY it is not constant."""
    rng = np.random.default_rng(4)
    st = random_state(small, rng, "mixed")
    T, Td = velocity_transform(small, st, "mixed", "drake")
    assert np.array_equal(T @ T.T, np.eye(small.nv)) and set(np.unique(T)) == {0.0, 1.0}
    assert not Td.any()
    _, v = to_drake_state(small, st)
    assert_close(T @ st.nu, v, 1e-14)
    T_body, Td_body = velocity_transform(small, st.to("body"), "body", "drake")
    assert_close(T_body @ st.to("body").nu, v, 1e-12)
    assert np.abs(Td_body).max() > 0.0


def test_fixed_base_state_has_joints_only() -> None:
    rng = np.random.default_rng(5)
    m = small_model(rng, floating=False)
    st = random_state(m, rng, "mixed")
    q, v = to_drake_state(m, st)
    assert q.shape == (m.n_dofs,) and v.shape == (m.n_dofs,)
    back = from_drake_state(m, q, v)
    np.testing.assert_allclose(back.s, st.s, atol=1e-15)
    np.testing.assert_allclose(back.world_H_base.matrix, np.eye(4))
    # the base pose is the world_H_base frame parameter of a context
    plant = to_drake(m)
    context = plant.CreateDefaultContext()
    set_world_H_base(plant, context, st.world_H_base)
    plant.SetPositions(context, q)
    X = plant.CalcRelativeTransform(context, plant.world_frame(), plant.GetBodyByName(m.base).body_frame())
    np.testing.assert_allclose(X.GetAsMatrix4(), st.world_H_base.matrix, atol=1e-14)
    with pytest.raises(bridge.BackendError, match="world_H_base"):
        floating_plant = to_drake(m.with_floating_base())
        set_world_H_base(floating_plant, floating_plant.CreateDefaultContext(), np.eye(4))


def test_state_errors(small) -> None:
    with pytest.raises(bridge.StateError, match="drake state"):
        from_drake_state(small, np.zeros(3), np.zeros(small.nv))


# ------------------------------------------------------------------ models
def _same_dynamics(a: bridge.Model, b: bridge.Model, seed: int = 6) -> None:
    """Pinocchio on both models (b's DOFs put in a's order) gives the same M, h, frames."""
    rng = np.random.default_rng(seed)
    b = b.with_dofs(a.dof_names)
    st = random_state(a, rng, "mixed", batch=(3,))
    frames = [f for f in a.frame_names if f in set(b.frame_names)]
    assert set(a.frame_names) == set(b.frame_names)
    values = []
    for m_ in (a, b):
        kd = bridge.KinDyn(m_, "pinocchio", "mixed")
        kd.set_robot_state(st)
        values.append((kd.mass_matrix(), kd.bias_forces(), np.array([kd.frame_transform(f) for f in frames])))
    for x, y in zip(*values, strict=True):
        assert_close(x, y, 1e-12)


@pytest.mark.parametrize("floating", [True, False])
def test_model_round_trip_keeps_dynamics(floating: bool) -> None:
    model = small_model(np.random.default_rng(7), floating)
    back = from_drake(to_drake(model))
    assert back.floating is floating and back.base == model.base
    # a revolute joint without position limits comes back continuous (Drake has one revolute type)
    unbounded = {
        j.name
        for j in model.joints
        if j.kind.value == "revolute" and j.limits.lower is j.limits.upper is None
    }
    expected = {j.name: "continuous" if j.name in unbounded else j.kind.value for j in model.joints}
    assert {j.name: j.kind.value for j in back.joints} == expected
    assert set(back.dof_names) == set(model.dof_names)
    np.testing.assert_allclose(back.total_mass, model.total_mass, rtol=1e-14)
    _same_dynamics(model, back)


def test_model_round_trip_random_and_robot() -> None:
    for seed in range(3):
        m = bridge.random_model(12, seed, floating=seed != 1)
        back = from_drake(to_drake(m))
        for j in m.movable_joints:
            lj, lb = j.limits, back.joint(j.name).limits
            assert (lj.lower, lj.upper, lj.velocity) == (lb.lower, lb.upper, lb.velocity)
        _same_dynamics(m, back, seed)
    icub = bridge.load_urdf(robot_path("iCubGazeboV2_5"))
    _same_dynamics(icub, from_drake(to_drake(icub)))


def test_rerooted_round_trip_keeps_axis_origins() -> None:
    m = bridge.random_model(8, 11)
    m = m.with_base(m.links[-1].name)
    assert any(np.any(j.axis_origin != 0) for j in m.movable_joints)
    _same_dynamics(m, from_drake(to_drake(m)))


def test_unsupported_inertia_and_engine_left_out() -> None:
    rng = np.random.default_rng(8)
    m = small_model(rng)
    link = m.links[1]
    odd = bridge.Link(link.name, bridge.SpatialInertia(0.0, np.zeros(3), np.diag([0.1, 0.1, 0.1])))
    bad = m.replace(links=(m.links[0], odd, *m.links[2:]))
    with pytest.raises(bridge.UnsupportedError, match=f"link '{link.name}'"):
        to_drake(bad)
    report = cross_validate(bad, samples=2, identities=False, representations=("mixed",))
    assert "drake" not in report.engines and any("'drake' left out" in n for n in report.notes)
    assert report.ok


def test_drake_joins_the_default_engines() -> None:
    assert "drake" in available_engines()
    report = cross_validate(small_model(np.random.default_rng(9)), samples=2, representations=("mixed",))
    assert report.engines[:3] == ["pinocchio", "idyntree", "featherstone"] and "drake" in report.engines
    _ok(report)


def test_missing_drake_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setitem(sys.modules, "pydrake", None)
    with pytest.raises(bridge.BridgeError, match=r"\[drake\]"):
        bridge.KinDyn(small_model(np.random.default_rng(0)), "drake")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "pydrake" else real(n, *a))
    assert "drake" not in available_engines()


def test_import_bridge_does_not_import_drake() -> None:
    code = "import sys, bridge; bridge.KinDyn; bridge.to_drake; print('pydrake' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ the engine
@pytest.mark.parametrize("floating", [True, False])
def test_engine_small_model(floating: bool) -> None:
    model = small_model(np.random.default_rng(0), floating)
    _ok(cross_validate(model, engines=ENGINES, samples=10, seed=1))


def test_external_wrenches_and_bias_terms_by_hand() -> None:
    """ID(a, f) = M a + h - J^T f and FD inverts it, in every representation (T_dot terms included)."""
    rng = np.random.default_rng(10)
    model = small_model(rng)
    for rep in REPS:
        st = random_state(model, rng, rep, batch=(2,))
        kd = bridge.KinDyn(model, "drake", rep)
        kd.set_robot_state(st)
        a, sdd = rng.normal(size=(2, 6)), rng.normal(size=(2, model.n_dofs))
        f = {"tool": rng.normal(size=(2, 6)), "c": rng.normal(size=(2, 6))}
        nu_dot = np.concatenate([a, sdd], axis=-1)
        M, h = kd.mass_matrix(), kd.bias_forces()
        expected = np.einsum("bij,bj->bi", M, nu_dot) + h
        for name, w in f.items():
            expected -= np.einsum("bji,bj->bi", kd.frame_jacobian(name), w)
        tau = kd.inverse_dynamics(a, sdd, f)
        assert_close(tau, expected, 1e-10, rep)
        assert_close(kd.forward_dynamics(tau, f), nu_dot, 1e-9, rep)
        acc = kd.frame_acceleration("tool", a, sdd)
        J, Jdnu = kd.frame_jacobian("tool"), kd.frame_bias_acc("tool")
        assert_close(acc, np.einsum("bij,bj->bi", J, nu_dot) + Jdnu, 1e-10, rep)


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
def test_single_state_path_equals_the_batched_path(rep: str, floating: bool) -> None:
    assert_single_state_path_equals_batched("drake", small_model(np.random.default_rng(6), floating), rep)


def test_fixed_base_pose_per_sample() -> None:
    """A batch of fixed-base states with different base poses: each sample is welded where it says."""
    rng = np.random.default_rng(12)
    model = small_model(rng, floating=False)
    st = random_state(model, rng, "mixed", batch=(4,))
    kd, ref = bridge.KinDyn(model, "drake"), bridge.KinDyn(model, "pinocchio")
    kd.set_robot_state(st)
    ref.set_robot_state(st)
    np.testing.assert_allclose(kd.frame_transform(model.base), st.world_H_base.matrix, atol=1e-14)
    assert_close(kd.gravity_forces(), ref.gravity_forces())
    assert_close(kd.frame_transform("tool"), ref.frame_transform("tool"))
    assert_close(kd.com_position(), ref.com_position())


@pytest.mark.parametrize("seed", range(4))
def test_random_models(seed: int) -> None:
    model = bridge.random_model(6 + 3 * seed, 100 + seed, floating=seed % 2 == 0)
    _ok(cross_validate(model, engines=ENGINES, samples=5, seed=seed))


@pytest.mark.parametrize("seed", range(2))
def test_rerooted_random_models(seed: int) -> None:
    model = bridge.random_model(10, 1000 + seed)
    _ok(cross_validate(model.with_base(model.links[-1].name), engines=ENGINES, samples=5, seed=seed))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(200, 260))
def test_random_models_sweep(seed: int) -> None:
    model = bridge.random_model(4 + seed % 20, seed, floating=seed % 3 != 0)
    if seed % 4 == 0:
        model = model.with_base(model.links[-1].name)
    _ok(cross_validate(model, engines=ENGINES, samples=5, seed=seed))


def _robot(name: str, base: str | None = None, floating: bool = True) -> bridge.Model:
    return bridge.load_urdf(
        robot_path(name), base=base, floating=floating, check_inertia=False, mimic="independent"
    )


@pytest.mark.parametrize(
    ("name", "base", "floating"),
    [
        ("iCubGazeboV2_5", None, True),
        ("iCubGazeboV2_5", "l_sole", True),
        ("talos_reduced", None, True),
        ("panda", None, False),
        ("solo12", "FL_FOOT", True),
        ("ur5_robot", None, False),
    ],
)
def test_robots(name: str, base: str | None, floating: bool) -> None:
    _ok(cross_validate(_robot(name, base, floating), engines=("pinocchio", "drake"), samples=5, seed=0))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["iCubGazeboV2_5", "talos_full_v2", "anymal_c_simple_description/anymal"])
def test_robots_all_engines(name: str) -> None:
    """All four engines, floating, fixed and re-rooted at a leaf."""
    model = _robot(name)
    for m in (model, model.with_fixed_base(), model.with_base(model.links[-1].name)):
        _ok(cross_validate(m, engines=(*ENGINES, "idyntree"), samples=10, seed=0))


def _all_robots() -> list[str]:
    from bridge.robots import robot_names

    return robot_names()


@pytest.mark.slow
@pytest.mark.parametrize("name", _all_robots())
def test_all_robots_sweep(name: str) -> None:
    """Every robot that loads; the ones with massless links that carry a rotational inertia (which
    Drake cannot represent) fail with an UnsupportedError naming the link."""
    try:
        model = _robot(name)
    except bridge.BridgeError:
        pytest.skip(f"{name} does not load")
    try:
        to_drake(model)
    except bridge.UnsupportedError as exc:
        assert "massless body with a rotational inertia" in str(exc)
        return
    _ok(cross_validate(model, engines=("pinocchio", "drake"), samples=10, seed=0))
