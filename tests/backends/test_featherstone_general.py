"""bridge's own algorithms for joints of any width (the general Featherstone engine) against Pinocchio.

Random trees with planar, ball and free joints anywhere (a floating base, and a fixed base carrying
several free bodies and a free joint below the root), armature on some joints: every quantity of the
engine protocol and the derived ones, in every representation, against Pinocchio's own algorithms
on ``to_pinocchio(model)`` (its spherical, free-flyer and planar joints) through bridge's change of
variables, 1e-10 relative. On one-coordinate models the general algorithms equal the compiled
Featherstone engine, and a batch equals its samples.
"""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.backends.featherstone import general
from bridge.backends.featherstone.general_engine import GeneralEngine
from tests.helpers import assert_close, random_state, wide_model

REPS = ("body", "inertial", "mixed")
RTOL = 1e-10


def _queries(kd: bridge.KinDyn, model: bridge.Model, rng: np.random.Generator) -> dict[str, np.ndarray]:
    nb = 6 if model.floating else 0
    batch = kd.batch_shape
    a = rng.normal(size=(*batch, model.nv))
    tau = rng.normal(size=(*batch, model.n_dofs))
    frame, other = model.frame_names[-1], model.link_names[2]
    w = {frame: rng.normal(size=(*batch, 6)), other: rng.normal(size=(*batch, 6))}
    base_acc = a[..., :6] if nb else None
    return {
        "M": kd.mass_matrix(),
        "h": kd.bias_forces(),
        "g": kd.gravity_forces(),
        "ID": kd.inverse_dynamics(base_acc, a[..., nb:]),
        "ID wrenches": kd.inverse_dynamics(base_acc, a[..., nb:], external_wrenches=w),
        "FD": kd.forward_dynamics(tau),
        "FD wrenches": kd.forward_dynamics(tau, external_wrenches=w),
        "pose": kd.frame_transform(frame),
        "velocity": kd.frame_velocity(frame),
        "J": kd.frame_jacobian(frame),
        "J_dot nu": kd.frame_bias_acc(frame),
        "acceleration": kd.frame_acceleration(frame, base_acc, a[..., nb:]),
        "com": kd.com_position(),
        "com velocity": kd.com_velocity(),
        "com J": kd.com_jacobian(),
        "momentum": kd.centroidal_momentum(),
        "CMM": kd.centroidal_momentum_matrix(),
        "C": kd.coriolis_matrix(),
        "J_dot": kd.frame_jacobian_derivative(frame),
        "relative J": kd.relative_jacobian(frame, other),
        "total momentum J": kd.total_momentum_jacobian(),
    }


@pytest.mark.parametrize("floating", [True, False], ids=["floating", "scene"])
@pytest.mark.parametrize("seed", [0, 4, 9])
def test_general_engine_equals_pinocchio(seed: int, floating: bool) -> None:
    model = wide_model(seed, floating=floating)
    assert not model.single_coordinate
    state = random_state(model, np.random.default_rng(seed), "mixed", batch=(2,))
    for rep in REPS:
        results = {}
        for engine in ("featherstone", "pinocchio"):
            kd = bridge.KinDyn(model, engine=engine, representation=rep)
            kd.set_robot_state(state.to(rep))
            results[engine] = _queries(kd, model, np.random.default_rng(seed + 1))
        assert isinstance(bridge.KinDyn(model, "featherstone", rep)._engine, GeneralEngine)
        for name, ours in results["featherstone"].items():
            assert_close(ours, results["pinocchio"][name], RTOL, f"{name} ({rep}, seed {seed})")


def test_identities_on_a_scene() -> None:
    """FD undoes ID, ``C nu = h - g``, ``J_dot nu`` the bias acceleration, the kinetic energy the
    same in every representation."""
    model = wide_model(23, floating=False)
    state = random_state(model, np.random.default_rng(3), "inertial")
    energy = []
    for rep in REPS:
        kd = bridge.KinDyn(model, "featherstone", rep)
        kd.set_robot_state(state.to(rep))
        nu, M = kd.nu, kd.mass_matrix()
        acc = np.random.default_rng(1).normal(size=model.nv)
        tau = kd.inverse_dynamics(None, acc)
        assert_close(kd.forward_dynamics(tau), acc, 1e-10, f"FD(ID) {rep}")
        assert_close(kd.coriolis_matrix() @ nu, kd.bias_forces() - kd.gravity_forces(), 1e-10, f"C nu {rep}")
        frame = model.frame_names[-1]
        assert_close(
            kd.frame_jacobian_derivative(frame) @ nu, kd.frame_bias_acc(frame), 1e-10, f"J_dot {rep}"
        )
        energy.append(0.5 * nu @ M @ nu)
    assert_close(np.array(energy), np.full(3, energy[0]), 1e-12, "kinetic energy")


@pytest.mark.parametrize("floating", [True, False])
def test_general_algorithms_equal_the_compiled_engine_on_one_coordinate_models(floating: bool) -> None:
    model = bridge.random_model(9, seed=5, floating=floating, armature_probability=0.5)
    state = random_state(model, np.random.default_rng(1), "body", batch=(3,))
    kd = bridge.KinDyn(model, engine="featherstone", representation="body")
    kd.set_robot_state(state)
    tree = general.GeneralTree(model)
    kin = general.kinematics(tree, state.world_H_base.matrix, state.s)
    nu = state.nu if floating else state.s_dot
    g = np.broadcast_to(np.array([0.0, 0.0, -9.81]), (3, 3))
    assert_close(general.crba(tree, kin), kd.mass_matrix(), 1e-12, "M")
    assert_close(general.rnea(tree, kin, nu, None, g), kd.bias_forces(), 1e-12, "h")
    tau = np.random.default_rng(2).normal(size=(3, model.nv))
    nu_dot = general.aba(tree, kin, nu, tau, g)
    assert_close(np.einsum("nij,nj->ni", kd.mass_matrix(), nu_dot) + kd.bias_forces(), tau, 1e-12, "ABA")


def test_a_batch_equals_its_samples() -> None:
    model = wide_model(0, floating=True)
    state = random_state(model, np.random.default_rng(5), "mixed", batch=(2, 2))
    kd = bridge.KinDyn(model, "featherstone", "mixed")
    kd.set_robot_state(state)
    M, h = kd.mass_matrix(), kd.bias_forces()
    for i in range(2):
        for j in range(2):
            one = bridge.KinDyn(model, "featherstone", "mixed")
            one.set_state(
                state.world_H_base[i, j], state.s[i, j], state.base_velocity[i, j], state.s_dot[i, j]
            )
            np.testing.assert_allclose(one.mass_matrix(), M[i, j], rtol=0, atol=1e-13)
            np.testing.assert_allclose(one.bias_forces(), h[i, j], rtol=0, atol=1e-12)


def test_states_of_such_models_need_their_layout() -> None:
    model = wide_model(0, floating=True)
    state = random_state(model, np.random.default_rng(5), "mixed")
    with pytest.raises(bridge.StateError, match="layout=model"):  # s and s_dot of different lengths
        bridge.State(state.world_H_base, state.s, state.base_velocity, state.s_dot, "mixed")
    planar = bridge.random_model(5, seed=1, joint_kinds=("planar", "revolute"))
    assert planar.n_positions == planar.n_dofs and not planar.single_coordinate
    state = random_state(planar, np.random.default_rng(5), "mixed")
    bare = bridge.State(state.world_H_base, state.s, state.base_velocity, state.s_dot, "mixed")
    with pytest.raises(bridge.StateError, match="layout=model"):
        bridge.velocity_transform(planar, bare, "mixed", "body")
    kd = bridge.KinDyn(planar, "featherstone", "mixed")
    kd.set_robot_state(bare)  # KinDyn attaches it
    assert kd.state.layout == planar.coordinates
