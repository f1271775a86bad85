"""Every engine answers every facade question identically (1e-10 relative), in every representation.

Robots from example-robot-data / icub-models and random models; the full sweeps are marked slow.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.validation.check import cross_validate
from tests.helpers import random_state, small_model

ENGINES = ("pinocchio", "idyntree", "featherstone")


def _assert_report_ok(report) -> None:
    assert report.results, "cross-validation compared nothing"
    assert report.ok, "\n" + str(report)


@pytest.mark.parametrize("floating", [True, False])
def test_small_model_all_quantities(floating: bool) -> None:
    model = small_model(np.random.default_rng(0), floating)
    _assert_report_ok(cross_validate(model, engines=ENGINES, samples=20, seed=1))


def test_gravity_forces_first_call_on_fresh_state() -> None:
    """iDynTree 15.1 converts generalizedGravityForces' base wrench with stale link poses unless
    kinematics were refreshed; the engine must be right even when gravity is the first query."""
    rng = np.random.default_rng(4)
    model = small_model(rng)
    for rep in ("inertial", "mixed"):
        st = random_state(model, rng, rep)
        results = {}
        for engine in ENGINES:
            kd = bridge.KinDyn(model, engine, rep)
            kd.set_robot_state(st)
            results[engine] = kd.gravity_forces()
        for engine in ENGINES[1:]:
            np.testing.assert_allclose(results[engine], results["pinocchio"], rtol=1e-10, atol=1e-10)


def test_fixed_base_pose_is_honoured() -> None:
    """A fixed base welded at world_H_base: gravity is in world, frames are reported in world."""
    rng = np.random.default_rng(5)
    model = small_model(rng, floating=False)
    st = random_state(model, rng, "mixed")
    for engine in ENGINES:
        kd = bridge.KinDyn(model, engine, "mixed")
        kd.set_robot_state(st)
        np.testing.assert_allclose(kd.frame_transform(model.base), st.world_H_base.matrix, atol=1e-14)
        # gravity along the base z axis of an upright base equals gravity rotated
        kd_up = bridge.KinDyn(model, engine, "mixed")
        R = st.world_H_base.rotation
        kd_up.set_state(np.eye(4), st.s, np.zeros(6), st.s_dot, gravity=R.T @ np.array([0, 0, -9.81]))
        np.testing.assert_allclose(kd.gravity_forces(), kd_up.gravity_forces(), rtol=1e-12, atol=1e-12)


def _random_model_case(seed: int) -> None:
    model = bridge.random_model(6 + seed % 12, seed, floating=seed % 3 != 0)
    _assert_report_ok(cross_validate(model, engines=ENGINES, samples=5, seed=seed))


@pytest.mark.parametrize("seed", range(10))
def test_random_models(seed: int) -> None:
    _random_model_case(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 110))
def test_random_models_sweep(seed: int) -> None:
    _random_model_case(seed)


@pytest.mark.parametrize("seed", range(4))
def test_rerooted_random_models(seed: int) -> None:
    model = bridge.random_model(10, 1000 + seed)
    leaf = model.links[-1].name
    _assert_report_ok(cross_validate(model.with_base(leaf), engines=ENGINES, samples=5, seed=seed))


# a representative set of real robots by default; every robot that loads in the slow sweep
ROBOTS = [
    "iCubGazeboV2_5",
    "solo12",
    "ur5_robot",
    "anymal_b_simple_description/anymal",
    "double_pendulum_continuous",
]


def _robot_case(name: str, base: str | None = None, floating: bool = True, samples: int = 10) -> None:
    from bridge.robots import robot_path

    model = bridge.load_urdf(
        robot_path(name), base=base, floating=floating, check_inertia=False, mimic="independent"
    )
    _assert_report_ok(cross_validate(model, engines=ENGINES, samples=samples, seed=0))


@pytest.mark.parametrize("name", ROBOTS)
def test_robots(name: str) -> None:
    _robot_case(name)


def test_robot_fixed_base_and_rerooted() -> None:
    _robot_case("ur5_robot", floating=False)
    _robot_case("iCubGazeboV2_5", base="l_sole", samples=5)
    _robot_case("solo12", base="FL_FOOT", samples=5)


def _all_robots() -> list[str]:
    from bridge.robots import robot_names

    return robot_names()


@pytest.mark.slow
@pytest.mark.parametrize("name", _all_robots())
def test_all_robots_sweep(name: str) -> None:
    """Every robot loads as Pinocchio's and iDynTree's own loaders load it (non-physical inertias and
    mimic joints with a warning) and the engines agree; ``strict=True`` refuses the robots of
    NOT_LOADING, naming the offending element; a file without links fails to load either way."""
    import warnings

    from bridge.robots import robot_path

    path = robot_path(name)
    if name in NOT_LOADING:
        with pytest.raises((bridge.InertiaError, bridge.URDFError)) as info:
            bridge.load_urdf(path, mimic="independent", strict=True)
        assert NOT_LOADING[name] in str(info.value)
    if name in NO_LINKS:
        with pytest.raises(bridge.URDFError, match="no <link>"):
            bridge.load_urdf(path, mimic="independent")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)
        model = bridge.load_urdf(path, mimic="independent")
    _assert_report_ok(cross_validate(model, engines=ENGINES, samples=20, seed=0))


#: files with no link at all: no loader makes a model of them
NO_LINKS = ("ur3",)

#: robots that strict=True refuses (non-physical inertias, or no links), with the offending element
NOT_LOADING = {
    "alex_psyonic_hands": "link 'LeftPsyonicAbilityBaseLink'",
    "allegro_left_hand": "link 'link_11.0'",
    "allegro_right_hand": "link 'link_3.0'",
    "anymal-kinova": "link 'base'",
    "anymal_b_simple_description/anymal": "link 'base'",
    "anymal_c_simple_description/anymal": "link 'depth_camera_front_camera'",
    "b1": "link 'base'",
    "b1-z1": "link 'base'",
    "bolt": "link 'FL_FOOT'",
    "go1": "link 'base'",
    "hyq_no_sensors": "link 'base_link'",
    "iCubGenova03": "link 'torso_1'",
    "iCubLisboa01": "link 'torso_1'",
    "iCubNancy01": "link 'l_ankle_1'",
    "pr2": "link 'sensor_mount_link'",
    "romeo_laas_small": "link 'LShoulderYaw_link'",
    "romeo_small": "link 'RShoulderYawLink'",
    "tiago": "link 'base_antenna_left_link'",
    "tiago_dual": "link 'base_antenna_left_link'",
    "tiago_no_hand": "link 'base_antenna_left_link'",
    "ur3": "the robot has no <link>",
}
