"""The "featherstone" engine: every facade quantity in every representation agrees with the Pinocchio
and iDynTree engines (1e-10 relative, norm-wise), batched calls equal single calls, and the
Featherstone state / acceleration / force conversions are consistent."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.backends.featherstone import (
    FDfb,
    IDfree,
    featherstone_velocity_transform,
    from_featherstone_acceleration,
    from_featherstone_force,
    from_featherstone_state,
    to_featherstone,
    to_featherstone_acceleration,
    to_featherstone_force,
    to_featherstone_state,
)
from bridge.backends.featherstone.engine import FeatherstoneEngine
from bridge.robots import robot_path
from bridge.validation.check import cross_validate
from tests.helpers import assert_close, random_state, small_model

ENGINES = ("pinocchio", "featherstone", "idyntree")
REPS = ("body", "inertial", "mixed")


def _assert_ok(report) -> None:
    compared = [r for r in report.results if "featherstone" in r.engines and " vs " in r.engines]
    assert compared, "nothing compared against the featherstone engine"
    quantities = {r.quantity for r in compared}
    assert {"mass_matrix", "inverse_dynamics_wrenches", "frame_acceleration", "com_jacobian"} <= quantities
    assert report.ok, "\n" + str(report)


@pytest.mark.parametrize("floating", [True, False])
def test_small_model_every_quantity(floating: bool) -> None:
    model = small_model(np.random.default_rng(0), floating)
    frames = list(model.frame_names)  # every link and frame
    _assert_ok(cross_validate(model, engines=ENGINES, samples=8, seed=1, frames=frames))


def _random_case(seed: int) -> None:
    model = bridge.random_model(5 + seed % 14, 100 + seed, floating=seed % 3 != 0)
    _assert_ok(cross_validate(model, engines=ENGINES, samples=4, seed=seed))


@pytest.mark.parametrize("seed", range(6))
def test_random_models(seed: int) -> None:
    _random_case(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6, 80))
def test_random_models_sweep(seed: int) -> None:
    _random_case(seed)


def test_random_models_with_prismatic_only_and_rerooted() -> None:
    model = bridge.random_model(8, 7, joint_kinds=("prismatic",))
    _assert_ok(cross_validate(model, engines=ENGINES, samples=4, seed=2))
    rerooted = bridge.random_model(10, 8).with_base("link9")
    _assert_ok(cross_validate(rerooted, engines=ENGINES, samples=4, seed=3))


def test_locked_joints_are_merged_into_their_parent_body() -> None:
    model = small_model(np.random.default_rng(11)).with_dofs(["j3", "j1"], locked={"j2": 0.3, "j4": -0.5})
    fm = to_featherstone(model)
    assert fm.NB == 6 + 2 and fm.joint_names[6:] == ("j1", "j3")  # depth first
    assert {"c", "f"} <= set(fm.placements)  # the links behind locked joints are placements
    _assert_ok(cross_validate(model, engines=ENGINES, samples=4, seed=4, frames=list(model.frame_names)))


ROBOTS = [
    ("iCubGazeboV2_5", {}),
    ("talos_reduced", {}),
    ("panda", {}),
    ("ur5_robot", {"floating": False}),
    ("iCubGazeboV2_5", {"base": "l_sole"}),
]


@pytest.mark.parametrize(
    ("name", "kw"), ROBOTS, ids=[f"{n}{'-' + '-'.join(map(str, k.values())) if k else ''}" for n, k in ROBOTS]
)
def test_robots(name: str, kw: dict) -> None:
    model = bridge.load_urdf(robot_path(name), check_inertia=False, mimic="independent", **kw)
    _assert_ok(cross_validate(model, engines=ENGINES, samples=4, seed=0))


@pytest.mark.slow
def test_all_robots_sweep() -> None:
    from bridge.robots import robot_names

    checked = 0
    for name in robot_names():
        try:
            model = bridge.load_urdf(robot_path(name), mimic="independent")
        except (bridge.InertiaError, bridge.URDFError):
            continue
        _assert_ok(cross_validate(model, engines=("pinocchio", "featherstone"), samples=5, seed=0))
        checked += 1
    assert checked > 20


# --------------------------------------------------------------------------- batches
def _all_quantities(kd: bridge.KinDyn, model, frames, nu_dot, tau, wrenches) -> dict:
    ba = nu_dot[..., :6] if model.floating else None
    sdd = nu_dot[..., model.nv - model.n_dofs :]
    out = {
        "M": kd.mass_matrix(),
        "h": kd.bias_forces(),
        "g": kd.gravity_forces(),
        "id": kd.inverse_dynamics(ba, sdd),
        "idw": kd.inverse_dynamics(ba, sdd, wrenches),
        "fd": kd.forward_dynamics(tau),
        "fdw": kd.forward_dynamics(tau, wrenches),
        "com": kd.com_position(),
        "vcom": kd.com_velocity(),
        "Jcom": kd.com_jacobian(),
    }
    for f in frames:
        out[f"X {f}"] = kd.frame_transform(f)
        out[f"v {f}"] = kd.frame_velocity(f)
        out[f"J {f}"] = kd.frame_jacobian(f)
        out[f"b {f}"] = kd.frame_bias_acc(f)
        out[f"a {f}"] = kd.frame_acceleration(f, ba, sdd)
    return out


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("floating", [True, False])
def test_batched_state_equals_single_states(rep: str, floating: bool) -> None:
    model = small_model(np.random.default_rng(1), floating)
    rng = np.random.default_rng(2)
    batch = (2, 3)
    st = random_state(model, rng, rep, batch)
    g = rng.normal(size=(*batch, 3))
    nu_dot = rng.normal(size=(*batch, model.nv))
    tau = rng.normal(size=(*batch, model.nv))
    frames = ["tool", "f", model.base]
    wrenches = {"tool": rng.normal(size=(*batch, 6)), "c": rng.normal(size=(*batch, 6))}
    kd = bridge.KinDyn(model, "featherstone", rep)
    kd.set_robot_state(st, g)
    assert kd.batch_shape == batch
    batched = _all_quantities(kd, model, frames, nu_dot, tau, wrenches)
    for i in range(batch[0]):
        for j in range(batch[1]):
            one = bridge.State(st.world_H_base[i, j], st.s[i, j], st.base_velocity[i, j], st.s_dot[i, j], rep)
            kd1 = bridge.KinDyn(model, "featherstone", rep)
            kd1.set_robot_state(one, g[i, j])
            single = _all_quantities(
                kd1, model, frames, nu_dot[i, j], tau[i, j], {k: w[i, j] for k, w in wrenches.items()}
            )
            for key, value in single.items():
                assert_close(batched[key][i, j], value, 1e-12, key)


@pytest.mark.parametrize("floating", [True, False])
def test_batch_larger_than_a_chunk_equals_its_parts(floating: bool) -> None:
    from bridge.backends.featherstone.workspace import CHUNK

    model = small_model(np.random.default_rng(7), floating)
    rng = np.random.default_rng(8)
    batch = (3, 700)  # 2100 states: 3 chunks of 701 (the last padded), across the rows
    assert batch[0] * batch[1] > 2 * CHUNK >= batch[1]
    st = random_state(model, rng, "mixed", batch)  # converted to BODY chunk by chunk
    g = rng.normal(size=(3, 1, 3))  # broadcasts
    nu_dot = rng.normal(size=(*batch, model.nv))
    tau = rng.normal(size=(1, model.nv))
    frames = ["tool", model.base]
    wrenches = {"tool": rng.normal(size=(*batch, 6)), "c": rng.normal(size=6)}
    kd = bridge.KinDyn(model, "featherstone", "body")
    kd.set_robot_state(st, g)
    assert kd.batch_shape == batch and kd._engine._chunks is not None
    whole = _all_quantities(kd, model, frames, nu_dot, tau, wrenches)
    for i in range(batch[0]):  # each row alone is one chunk
        one = bridge.State(st.world_H_base[i], st.s[i], st.base_velocity[i], st.s_dot[i], "mixed")
        kd1 = bridge.KinDyn(model, "featherstone", "body")
        kd1.set_robot_state(one, g[i])
        assert kd1._engine._chunks is None
        wi = {k: w[i] if w.ndim > 1 else w for k, w in wrenches.items()}
        part = _all_quantities(kd1, model, frames, nu_dot[i], tau, wi)
        for key, value in part.items():
            assert whole[key].shape == (*batch, *value.shape[1:]), key
            assert_close(whole[key][i], value, 1e-12, key)
    # the same engine then takes a small batch again
    few = bridge.State(st.world_H_base[0, :5], st.s[0, :5], st.base_velocity[0, :5], st.s_dot[0, :5], "mixed")
    kd.set_robot_state(few)
    assert kd._engine._chunks is None
    assert_close(kd.mass_matrix(), whole["M"][0, :5], 1e-12)


def test_engine_flags_and_single_state_fast_path() -> None:
    model = small_model(np.random.default_rng(3))
    eng = FeatherstoneEngine(model, bridge.Representation.MIXED)
    assert eng.name == "featherstone"
    kd = bridge.KinDyn(model, "featherstone", "mixed")
    rng = np.random.default_rng(4)
    st = random_state(model, rng, "mixed")
    kd.set_state(st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)
    assert kd.batch_shape == ()
    assert kd.mass_matrix().shape == (model.nv, model.nv)
    assert kd.frame_jacobian("tool").shape == (6, model.nv)
    ref = bridge.KinDyn(model, "pinocchio", "mixed")
    ref.set_robot_state(st)
    assert_close(kd.forward_dynamics(np.ones(model.n_dofs)), ref.forward_dynamics(np.ones(model.n_dofs)))
    # a state given in another representation is converted
    kd.set_robot_state(st.to("body"))
    assert_close(kd.bias_forces(), ref.bias_forces())


# --------------------------------------------------------------------------- state conversions
@pytest.mark.parametrize("rep", REPS)
def test_state_round_trip_and_xfb_meaning(rep: str) -> None:
    model = small_model(np.random.default_rng(5))
    fm = to_featherstone(model)
    rng = np.random.default_rng(6)
    st = random_state(model, rng, rep, batch=(4,))
    xfb, q, qd = to_featherstone_state(model, st)
    assert xfb.shape == (4, 13) and q.shape == (4, model.n_dofs)
    from bridge.backends.featherstone import rq

    # quaternion of world_R_base (w first): rq gives the coordinate transform base_R_world
    assert_close(rq(xfb[:, :4]), np.swapaxes(st.world_H_base.rotation, -1, -2), 1e-14)
    assert_close(xfb[:, 4:7], st.world_H_base.translation, 1e-15)
    v_in = st.base_velocity_in("inertial")
    assert_close(xfb[:, 7:10], v_in[:, 3:], 1e-14)  # angular velocity in world
    assert_close(xfb[:, 10:], v_in[:, :3], 1e-14)  # velocity of the world-origin point
    np.testing.assert_array_equal(q, st.s[:, fm.dof_perm])
    back = from_featherstone_state(fm, xfb, q, qd, rep)
    assert back.representation.value == rep
    assert_close(back.world_H_base.matrix, st.world_H_base.matrix, 1e-14)
    assert_close(back.base_velocity, st.base_velocity, 1e-13)
    np.testing.assert_array_equal(back.s, st.s)
    np.testing.assert_array_equal(back.s_dot, st.s_dot)


def test_fixed_base_state() -> None:
    model = small_model(np.random.default_rng(7), floating=False)
    st = random_state(model, np.random.default_rng(8), "mixed")
    xfb, q, qd = to_featherstone_state(model, st)
    assert xfb is None
    back = from_featherstone_state(model, None, q, qd, "body", world_H_base=st.world_H_base)
    np.testing.assert_array_equal(back.s, st.s)
    np.testing.assert_array_equal(back.base_velocity, np.zeros(6))
    with pytest.raises(bridge.StateError, match="fixed base"):
        from_featherstone_state(model, np.zeros(13), q, qd)
    with pytest.raises(bridge.StateError, match="xfb"):
        from_featherstone_state(small_model(np.random.default_rng(7)), None, q, qd)


@pytest.mark.parametrize("rep", REPS)
def test_acceleration_and_force_maps_match_the_floating_base_functions(rep: str) -> None:
    """FDfb / IDfree on the converted state give the facade's FD / ID after conversion back."""
    model = small_model(np.random.default_rng(9))
    fm = to_featherstone(model)
    rng = np.random.default_rng(10)
    st = random_state(model, rng, rep)
    kd = bridge.KinDyn(model, "pinocchio", rep)
    kd.set_robot_state(st)
    xfb, q, qd = to_featherstone_state(model, st)
    tau_j = rng.normal(size=model.n_dofs)
    nu_dot = kd.forward_dynamics(tau_j)
    xdfb, qdd = FDfb(fm, xfb, q, qd, tau_j[fm.dof_perm])
    a_fb, qdd2 = to_featherstone_acceleration(model, st, nu_dot)
    assert_close(a_fb, xdfb[7:], 1e-10, "a_fb")
    assert_close(qdd2, qdd, 1e-10, "qdd")
    assert_close(from_featherstone_acceleration(model, st, xdfb[7:], qdd), nu_dot, 1e-10, "nu_dot")
    # inverse dynamics: the base wrench in world coordinates and the joint torques
    nd = rng.normal(size=model.nv)
    tau = kd.inverse_dynamics(nd[:6], nd[6:])
    a, qa = to_featherstone_acceleration(model, st, nd)
    f_fb, tq = IDfree(fm, xfb, q, qd, a, qa)
    f2, t2 = to_featherstone_force(model, st, tau)
    assert_close(f2, f_fb, 1e-10, "f_fb")
    assert_close(t2, tq, 1e-10, "tau")
    assert_close(from_featherstone_force(model, st, f_fb, tq), tau, 1e-10, "tau back")
    # the transform object: velocities and matrices
    ft = featherstone_velocity_transform(model, st)
    assert_close(ft.velocity(st.nu), np.concatenate([xfb[7:], qd]), 1e-13, "nu_F")
    M = kd.mass_matrix()
    H = ft.matrix()  # P T
    assert_close(ft.matrix_back(np.linalg.inv(H).T @ M @ np.linalg.inv(H)), M, 1e-10, "matrix_back")


# --------------------------------------------------------------------------- scale
def test_long_chain_is_compiled_in_linear_time_and_agrees_with_idyntree() -> None:
    """A 2,000-link serial chain: the engine is built in under a second (the compiled tree and its
    level schedule are linear in the links; the CRBA's plan waits for the first mass matrix) and
    its bias forces, inverse dynamics, tip Jacobian and forward dynamics agree with iDynTree's."""
    model = bridge.random_model(2000, seed=0, joint_kinds=("revolute",), branching=0.0)
    kd = bridge.KinDyn(model, "featherstone", "mixed")
    lv = kd._engine.tree.lv
    assert len(lv.levels) == 2000 and lv._crba is None  # the plan is made on first use only
    ref = bridge.KinDyn(model, "idyntree", "mixed")
    rng = np.random.default_rng(0)
    n = model.n_dofs
    s, sd = rng.uniform(-0.3, 0.3, n), 0.1 * rng.normal(size=n)
    st = bridge.State(np.eye(4), s, rng.normal(size=6), sd, "mixed")
    kd.set_robot_state(st)
    ref.set_robot_state(st)
    tip = model.links[-1].name
    h = ref.bias_forces()
    assert_close(kd.bias_forces(), h, 1e-10, "h")
    assert_close(kd.frame_jacobian(tip), ref.frame_jacobian(tip), 1e-10, "J tip")
    a = rng.normal(size=6 + n)
    assert_close(kd.inverse_dynamics(a[:6], a[6:]), ref.inverse_dynamics(a[:6], a[6:]), 1e-10, "ID")
    # iDynTree has no forward dynamics, and M of this chain is far too ill-conditioned to compare
    # accelerations: the backward error, iDynTree's ID of our acceleration against the torques,
    # relative to the size of the terms that cancel in it (M nu_dot = [0; tau] - h, here ~|h|)
    tau = rng.normal(size=n)
    nd = kd.forward_dynamics(tau)
    residual = ref.inverse_dynamics(nd[:6], nd[6:]) - np.concatenate([np.zeros(6), tau])
    assert np.linalg.norm(residual) <= 1e-10 * np.linalg.norm(h)
