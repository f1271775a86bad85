"""mimic="coupled": one DOF per master, the projected dynamics in every engine, equal to Pinocchio's
own mimic model (``buildModelFromUrdf(..., mimic=True)``, mapped by joint names) to 1e-10."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.backends.pinocchio.native import dynamics, load_urdf_model, native_layout, native_state
from bridge.model.mimic import CoupledModel, Mimic, couple
from bridge.validation.check import random_states

MODELS = Path(__file__).resolve().parents[1] / "models"
ENGINES = ("pinocchio", "idyntree", "featherstone")
REPS = ("body", "inertial", "mixed")
#: (robot, how many movable mimic joints it has): the shipped robots whose mimic joints Pinocchio's
#: own loader takes (with mimic=True it refuses talos_full_v2 and romeo: "The parent joint of the
#: mimic joint is not in the kinematic tree"; those are checked across bridge's engines below)
ROBOTS = [(str(MODELS / "mimic_offsets.urdf"), 5), ("panda", 1), ("pr2", 10), ("tiago_pro", 10)]


def _load(path: str) -> CoupledModel:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing but inertias to warn about with mimic="coupled"
        warnings.simplefilter("ignore", bridge.NonPhysicalInertiaWarning)
        return bridge.load_urdf(path, mimic="coupled")


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(1.0, np.linalg.norm(b)))


@pytest.mark.parametrize(("name", "n_mimic"), ROBOTS)
def test_coupled_model_structure(name: str, n_mimic: int) -> None:
    model = _load(name)
    assert isinstance(model, CoupledModel) and isinstance(model, bridge.Model)
    assert len(model.mimics) == n_mimic and model.n_dofs == model.full.n_dofs - n_mimic
    pm = load_urdf_model(str(bridge.robots.resolve_model_path(name)), mimic=True)
    assert model.nv == pm.nv  # one DOF per master, as Pinocchio's mimic model
    assert set(native_layout(pm).dof_names) == set(model.dof_names)
    assert set(native_layout(pm).mimic_joints) == {m.joint for m in model.mimics}


def test_multiplier_offset_and_chains() -> None:
    model = _load(str(MODELS / "mimic_offsets.urdf"))
    rel = model.mimic_joints
    assert rel["elbow"] == Mimic("elbow", "shoulder", 0.7, 0.2)
    assert rel["finger_b_joint"] == Mimic("finger_b_joint", "finger_a_joint", 0.5, -0.01)
    s = np.array([0.3, 0.02])  # shoulder, finger_a_joint
    full = dict(zip(model.full.dof_names, model.full_positions(s), strict=True))
    assert full["elbow"] == pytest.approx(0.7 * 0.3 + 0.2) and full["wrist"] == pytest.approx(
        -1.4 * 0.3 + 0.1
    )
    assert full["shoulder_twin"] == pytest.approx(-1.5 * 0.3 + 0.3)
    assert full["finger_b_joint"] == pytest.approx(0.5 * 0.02 - 0.01)
    # a chain resolves to the root master: wrist = -2 elbow + 0.1 = -2 (0.7 shoulder + 0.2) + 0.1
    base = model.full
    chained = couple(base, [Mimic("elbow", "shoulder", 0.7, 0.2), Mimic("wrist", "elbow", -2.0, 0.1)])
    assert chained.mimic_joints["wrist"] == Mimic("wrist", "shoulder", -1.4, -0.30000000000000004)
    with pytest.raises(bridge.ModelError, match="cycle"):
        couple(base, [Mimic("elbow", "wrist"), Mimic("wrist", "elbow")])
    # poses follow the masters
    fk = model.forward_kinematics(s)
    ref = model.full.forward_kinematics(model.full_positions(s))
    for link in model.link_names:
        np.testing.assert_allclose(fk[link].matrix, ref[link].matrix)


def test_derived_models_keep_the_coupling() -> None:
    model = _load(str(MODELS / "mimic_offsets.urdf"))
    rerooted = model.with_base("hand")
    assert isinstance(rerooted, CoupledModel) and rerooted.base == "hand" and rerooted.mimics == model.mimics
    reduced = model.with_dofs(["finger_a_joint"], locked={"shoulder": 0.5})
    assert reduced.dof_names == ("finger_a_joint",) and [m.joint for m in reduced.mimics] == [
        "finger_b_joint"
    ]
    assert reduced.locked_joints["elbow"] == pytest.approx(0.7 * 0.5 + 0.2)
    with pytest.raises(bridge.ModelError, match="joint 'elbow' mimics 'shoulder': name its master"):
        model.with_dofs(["elbow"])
    fixed = model.with_fixed_base()
    assert isinstance(fixed, CoupledModel) and not fixed.floating and fixed.nv == 2
    loaded = bridge.load_urdf(
        MODELS / "mimic_offsets.urdf", mimic="coupled", base="hand", joints=["shoulder"]
    )
    assert loaded.base == "hand" and loaded.dof_names == ("shoulder",) and len(loaded.mimics) == 4


@pytest.mark.parametrize(("name", "n_mimic"), ROBOTS)
def test_coupled_dynamics_equal_pinocchio_mimic_model(name: str, n_mimic: int) -> None:
    """M, h, g, ID and FD of every engine (BODY: Pinocchio's free-flyer velocity) against Pinocchio's
    own mimic model, mapped by joint names, at random states."""
    model = _load(name)
    pm = load_urdf_model(str(bridge.robots.resolve_model_path(name)), mimic=True)
    layout = native_layout(pm)
    rng = np.random.default_rng(4)
    states = random_states(model, 3, rng).to("body")
    perm = np.array([model.dof_index(n) for n in layout.dof_names])  # native v[6 + k] = ours[6 + perm[k]]
    full = np.concatenate([np.arange(6), 6 + perm])
    nu_dot = rng.normal(size=(3, model.nv))
    tau = rng.normal(size=(3, model.n_dofs)) * 5.0
    for engine in ENGINES:
        kd = bridge.KinDyn(model, engine=engine, representation="body")
        kd.set_robot_state(states)
        ours = {
            "mass_matrix": kd.mass_matrix(),
            "bias_forces": kd.bias_forces(),
            "gravity_forces": kd.gravity_forces(),
            "inverse_dynamics": kd.inverse_dynamics(nu_dot[:, :6], nu_dot[:, 6:]),
            "forward_dynamics": kd.forward_dynamics(tau),
        }
        for k in range(3):
            H = states.world_H_base.matrix[k]
            pos = dict(zip(model.dof_names, states.s[k], strict=True))
            vel = dict(zip(model.dof_names, states.s_dot[k], strict=True))
            q, v = native_state(pm, layout, H, states.base_velocity[k], pos, vel)
            tau_full = np.concatenate([np.zeros(6), tau[k]])
            ref = dynamics(pm, q, v, a=nu_dot[k][full], tau=tau_full[full])
            for quantity, value in ours.items():
                mine = value[k][np.ix_(full, full)] if quantity == "mass_matrix" else value[k][full]
                assert _rel(mine, ref[quantity]) < 1e-10, (name, engine, quantity, _rel(mine, ref[quantity]))


@pytest.mark.parametrize(("name", "n_mimic"), [*ROBOTS[:2], ("talos_full_v2", 12)])
def test_energy_and_power_are_those_of_the_full_model(name: str, n_mimic: int) -> None:
    """0.5 nu^T M nu and tau . nu equal the full model's at the expanded state, in every engine and
    representation; every engine agrees on the coupled model (cross-validation)."""
    model = _load(name)
    rng = np.random.default_rng(5)
    states = random_states(model, 4, rng)
    nu_dot = rng.normal(size=(4, model.nv))
    for rep in REPS:
        st = states.to(rep)
        full_state = bridge.State(
            st.world_H_base,
            model.full_positions(st.s),
            st.base_velocity,
            model.full_velocities(st.s_dot),
            rep,
        )
        nu_full = np.concatenate([full_state.base_velocity, full_state.s_dot], axis=-1)
        kf = bridge.KinDyn(model.full, engine="pinocchio", representation=rep)
        kf.set_robot_state(full_state)
        energy_full = 0.5 * np.einsum("ki,kij,kj->k", nu_full, kf.mass_matrix(), nu_full)
        a_full = np.einsum("ij,kj->ki", model.G_nu, nu_dot)
        power_full = np.einsum("ki,ki->k", kf.inverse_dynamics(a_full[:, :6], a_full[:, 6:]), nu_full)
        for engine in ENGINES:
            kd = bridge.KinDyn(model, engine=engine, representation=rep)
            kd.set_robot_state(st)
            nu = kd.nu
            energy = 0.5 * np.einsum("ki,kij,kj->k", nu, kd.mass_matrix(), nu)
            power = np.einsum("ki,ki->k", kd.inverse_dynamics(nu_dot[:, :6], nu_dot[:, 6:]), nu)
            np.testing.assert_allclose(energy, energy_full, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(power, power_full, rtol=1e-10, atol=1e-10)
    report = bridge.cross_validate(model, samples=3)
    assert report.ok, str(report)


def test_coupled_model_round_trips_through_urdf() -> None:
    model = _load(str(MODELS / "mimic_offsets.urdf"))
    again = bridge.load_urdf(model.to_urdf(), mimic="coupled")
    assert again.dof_names == model.dof_names and again.mimics == model.mimics
    np.testing.assert_array_equal(again.G, model.G)
    np.testing.assert_array_equal(again.offset, model.offset)
