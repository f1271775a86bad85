"""Pinocchio backend: model structure, round trips, the libraries' own URDF models, states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import bridge
from bridge.backends.pinocchio import from_pinocchio, pinocchio_layout, to_pinocchio
from bridge.conventions.state import State
from bridge.robots import robot_path
from tests.helpers import assert_close, random_state, small_model

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_structure_of_converted_model() -> None:
    model = bridge.load_urdf(MODELS / "offsets.urdf")
    pm = to_pinocchio(model)
    assert pm.nq == 7 + 3 + 2 and pm.nv == 6 + 4  # spin is continuous: (cos, sin)
    kinds = {pm.names[j]: pm.joints[j].shortname() for j in range(1, pm.njoints)}
    assert kinds["root_joint"] == "JointModelFreeFlyer"
    assert kinds["shoulder"] == "JointModelRevoluteUnaligned"
    assert kinds["slide"] == "JointModelPrismaticUnaligned"  # axis (0, -1, 0) is not an aligned type
    assert kinds["spin"] == "JointModelRUBZ"  # (0, 0, -1): unbounded, rotated joint frame
    for link in model.link_names:
        assert pm.getFrameId(link, pin.FrameType.BODY) < pm.nframes
    jid = pm.getJointId("shoulder")
    assert pm.lowerPositionLimit[pm.idx_qs[jid]] == -2.0 and pm.upperPositionLimit[pm.idx_qs[jid]] == 1.5
    assert pm.effortLimit[pm.idx_vs[jid]] == 50.0
    fixed = to_pinocchio(bridge.load_urdf(MODELS / "fixed_branches.urdf"))
    assert fixed.getFrameId("plate2_fixed", pin.FrameType.FIXED_JOINT) < fixed.nframes
    assert pin.computeTotalMass(fixed) == pytest.approx(7.1)


def _dynamics(model: bridge.Model, state: State, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """M and h (mixed) with the joints ordered as ``names``."""
    reordered = model.with_dofs(names)
    idx = [model.dof_index(n) for n in names]
    kd = bridge.KinDyn(reordered, "pinocchio", "mixed")
    kd.set_state(state.world_H_base, state.s[..., idx], state.base_velocity, state.s_dot[..., idx])
    return kd.mass_matrix(), kd.bias_forces()


@pytest.mark.parametrize("seed", range(5))
def test_round_trip_keeps_dynamics(seed: int) -> None:
    model = bridge.random_model(10, seed, floating=seed % 2 == 0)
    back = from_pinocchio(to_pinocchio(model))
    assert back.floating == model.floating and back.total_mass == pytest.approx(model.total_mass)
    assert set(back.dof_names) == set(model.dof_names)
    rng = np.random.default_rng(seed)
    st = random_state(model, rng)
    if not model.floating:
        st = State(np.eye(4), st.s, np.zeros(6), st.s_dot, "mixed")
    M1, h1 = _dynamics(model, st, model.dof_names)
    idx = [model.dof_index(n) for n in back.dof_names]
    kd = bridge.KinDyn(back, "pinocchio", "mixed")
    kd.set_state(st.world_H_base, st.s[idx], st.base_velocity, st.s_dot[idx])
    order = np.concatenate([np.arange(6), 6 + np.array(idx)]) if model.floating else np.array(idx)
    assert_close(kd.mass_matrix(), M1[np.ix_(order, order)], 1e-12, "M")
    assert_close(kd.bias_forces(), h1[order], 1e-12, "h")
    for frame in model.frame_names:  # every link and frame survives, same placement
        assert_close(kd.frame_transform(frame), _frame(model, st, frame), 1e-12, frame)


def _frame(model, st, frame):
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    kd.set_robot_state(st)
    return kd.frame_transform(frame)


@pytest.mark.parametrize("name", ["iCubGazeboV2_5", "solo12", "double_pendulum_continuous"])
def test_pinocchio_loaded_model_to_idyntree(name: str) -> None:
    """pin.buildModelFromUrdf -> neutral -> iDynTree gives Pinocchio's own dynamics (converted)."""
    path = str(robot_path(name))
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    model = from_pinocchio(pm)
    assert model.n_dofs == pm.nv - 6
    rng = np.random.default_rng(0)
    st = random_state(model, rng, "mixed")
    q, v = bridge.to_pinocchio_state(model, st)
    # our q/v layout for the neutral model equals the original Pinocchio model's (same joint order)
    pd = pm.createData()
    M_pin = pin.crba(pm, pd, q)
    h_pin = pin.nonLinearEffects(pm, pd, q, v)
    M = bridge.convert_mass_matrix(model, st, M_pin, "pinocchio", "mixed")
    h = bridge.convert_bias_forces(model, st, h_pin, M_pin, "pinocchio", "mixed")
    kd = bridge.KinDyn(model, "idyntree", "mixed")
    kd.set_robot_state(st)
    assert_close(kd.mass_matrix(), M, 1e-10, "M")
    assert_close(kd.bias_forces(), h, 1e-10, "h")


def test_fixed_base_pinocchio_model() -> None:
    pm = pin.buildModelFromUrdf(str(robot_path("ur5_robot")))
    model = from_pinocchio(pm)
    assert not model.floating and model.n_dofs == 6
    q = pin.randomConfiguration(pm)
    st = bridge.from_pinocchio_state(model, q, np.zeros(6), "mixed")
    kd = bridge.KinDyn(model, "idyntree", "mixed")
    kd.set_robot_state(st)
    assert_close(kd.mass_matrix(), pin.crba(pm, pm.createData(), q), 1e-10, "M")


def test_state_round_trip_and_layout() -> None:
    rng = np.random.default_rng(1)
    model = small_model(rng)
    st = random_state(model, rng, "inertial", batch=(3,))
    q, v = bridge.to_pinocchio_state(model, st)
    assert q.shape == (3, model.n_dofs + 7 + 1) and v.shape == (3, model.nv)
    np.testing.assert_allclose(np.linalg.norm(q[:, 3:7], axis=1), 1.0, atol=1e-15)
    back = bridge.from_pinocchio_state(model, q, v, "inertial")
    np.testing.assert_allclose(back.world_H_base.matrix, st.world_H_base.matrix, atol=1e-14)
    np.testing.assert_allclose(back.base_velocity, st.base_velocity, atol=1e-13)
    np.testing.assert_allclose(back.s_dot, st.s_dot, atol=0)
    s = np.array(st.s)
    j3 = model.dof_index("j3")  # continuous: the angle comes back wrapped to (-pi, pi]
    np.testing.assert_allclose(np.angle(np.exp(1j * (back.s[:, j3] - s[:, j3]))), 0.0, atol=1e-14)
    lay = pinocchio_layout(model)
    assert sorted(lay.perm.tolist()) == list(range(model.n_dofs))


def test_bad_pinocchio_states() -> None:
    model = small_model(np.random.default_rng(2))
    lay = pinocchio_layout(model)
    with pytest.raises(bridge.StateError, match="q"):
        bridge.from_pinocchio_state(model, np.zeros(lay.nq - 1), np.zeros(lay.nv))
    q = np.zeros(lay.nq)
    q[6] = 1.0  # unit quaternion, but the continuous joint's (cos, sin) pair is (0, 0)
    with pytest.raises(bridge.StateError, match=r"\(cos, sin\) pair is not unit norm"):
        bridge.from_pinocchio_state(model, q, np.zeros(lay.nv))
    q[lay.idx_q[model.dof_index("j3")]] = 1.0
    q[3:7] = [0, 0, 0, 2.0]
    with pytest.raises(bridge.StateError, match="quaternion"):
        bridge.from_pinocchio_state(model, q, np.zeros(lay.nv))


# --------------------------------------------------------------------------- models too large
def test_model_too_large_for_pinocchio_data_is_refused_clearly(monkeypatch) -> None:
    """createData grows as 64 nv^3 bytes: a model whose data would not fit raises ModelTooLargeError
    (a BackendError and a MemoryError) naming the model, its DOFs and the engines to use instead,
    predicted before allocating, and also when Pinocchio itself runs out of memory."""
    from bridge.backends.pinocchio import data

    assert 2.8e9 < data.data_bytes(357) < 3.0e9  # the 3 GB measured at 357 DOFs
    avail = data.available_memory()
    assert avail is None or avail > 0
    model = small_model(np.random.default_rng(0))
    monkeypatch.setattr(data, "available_memory", lambda: data.data_bytes(model.nv) - 1)
    with pytest.raises(bridge.ModelTooLargeError) as err:
        bridge.KinDyn(model, "pinocchio")
    text = str(err.value)
    assert f"{model.name!r} has {model.nv} DOFs" in text and "engine='featherstone'" in text
    assert "'idyntree'" in text and "GB" in text
    assert isinstance(err.value, bridge.BackendError) and isinstance(err.value, MemoryError)

    def out_of_memory(pm: object) -> None:
        raise MemoryError

    monkeypatch.setattr(data, "available_memory", lambda: None)
    monkeypatch.setattr(data, "_allocate", out_of_memory)
    with pytest.raises(bridge.ModelTooLargeError, match=f"has {model.nv} DOFs"):
        bridge.KinDyn(model, "pinocchio")
    monkeypatch.undo()
    bridge.KinDyn(model, "pinocchio")  # fits
