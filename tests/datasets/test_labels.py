"""``bridge.compute``: batched labels equal KinDyn's answers state by state (1e-10), from a State or from
``(q, v)`` in a library's layout, in every representation; bad requests are named."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.conventions.convert import convert_acceleration, convert_generalized_force
from bridge.conventions.native_state import from_native_state
from bridge.conventions.registry import convention
from bridge.errors import BridgeError, DatasetError, UnknownNameError
from bridge.validation.sampling import random_states
from tests.datasets.helpers import native_states
from tests.helpers import assert_close

_LABELS = [
    "inverse_dynamics",
    "forward_dynamics",
    "mass_matrix",
    "bias_forces",
    "gravity_forces",
    "frame_transform:l_sole",
    "frame_jacobian:r_hand",
    "frame_velocity:l_sole",
    "frame_bias_acc:l_sole",
    "frame_acceleration:r_sole",
    "com_position",
    "centroidal_momentum",
    "centroidal_momentum_matrix",
]


def _single(kd: bridge.KinDyn, name: str, nu_dot: np.ndarray, tau: np.ndarray) -> np.ndarray:
    quantity, _, frame = name.partition(":")
    if quantity == "inverse_dynamics":
        return kd.inverse_dynamics(nu_dot[:6], nu_dot[6:])
    if quantity == "forward_dynamics":
        return kd.forward_dynamics(tau)
    if quantity == "frame_acceleration":
        return kd.frame_acceleration(frame, nu_dot[:6], nu_dot[6:])
    return getattr(kd, quantity)(*((frame,) if frame else ()))


@pytest.mark.parametrize("rep", ["mixed", "body", "inertial"])
@pytest.mark.parametrize("engine", ["featherstone", "pinocchio"])
def test_labels_equal_kindyn_state_by_state(engine: str, rep: str) -> None:
    model = bridge.load_urdf("iCubGazeboV2_5")
    q, v, a, tau = native_states(model, 24, "mujoco", 11)
    labels = bridge.compute(
        model,
        (q, v),
        _LABELS,
        convention="mujoco",
        acceleration=a,
        force=tau,
        engine=engine,
        representation=rep,
    )
    kd = bridge.KinDyn(model, engine="pinocchio", representation=rep)
    for i in range(0, 24, 5):
        state = from_native_state(model, q[i], v[i], convention("mujoco"), rep)
        kd.set_robot_state(state)
        nu_dot = convert_acceleration(model, state, a[i], "mujoco", rep)
        force = convert_generalized_force(model, state, tau[i], "mujoco", rep)
        for name in _LABELS:
            key = name.replace(":", "[") + ("]" if ":" in name else "")
            assert_close(
                labels[key][i], _single(kd, name, nu_dot, force), 1e-10, f"{engine} {rep} {key} state {i}"
            )


def test_labels_of_a_state_and_of_a_quadruped_with_leading_axes() -> None:
    model = bridge.load_urdf("solo12")
    state = random_states(model, 12, np.random.default_rng(0))
    nu_dot = np.random.default_rng(1).normal(size=(12, model.nv))
    flat = bridge.compute(model, state, ["inverse_dynamics", "mass_matrix"], acceleration=nu_dot)
    kd = bridge.KinDyn(model, engine="featherstone", representation="mixed")
    kd.set_robot_state(state)
    assert_close(flat["inverse_dynamics"], kd.inverse_dynamics(nu_dot[:, :6], nu_dot[:, 6:]), 1e-12, "ID")
    assert_close(flat["mass_matrix"], kd.mass_matrix(), 1e-12, "M")
    q, v, _, _ = native_states(model, 12, "pinocchio", 2)
    shaped = bridge.compute(
        model, (q.reshape(3, 4, -1), v.reshape(3, 4, -1)), ["bias_forces"], convention="pinocchio"
    )
    plain = bridge.compute(model, (q, v), ["bias_forces"], convention="pinocchio")
    assert shaped["bias_forces"].shape == (3, 4, model.nv)
    assert np.array_equal(shaped["bias_forces"].reshape(12, -1), plain["bias_forces"])


def test_configuration_only_labels_without_velocities() -> None:
    model = bridge.load_urdf("solo12")
    q, v, _, _ = native_states(model, 5, "mujoco", 3)
    with_v = bridge.compute(model, (q, v), ["mass_matrix", "frame_transform:FL_FOOT"], convention="mujoco")
    without = bridge.compute(
        model, (q, None), ["mass_matrix", "frame_transform:FL_FOOT"], convention="mujoco"
    )
    for key in with_v:
        assert_close(without[key], with_v[key], 1e-13, key)
    with pytest.raises(DatasetError, match="bias_forces needs the velocities"):
        bridge.compute(model, (q, None), ["bias_forces"], convention="mujoco")


@pytest.mark.parametrize(
    ("quantities", "kwargs", "error", "message"),
    [
        (
            ["inverse_dynamic"],
            {},
            DatasetError,
            r"unknown quantity 'inverse_dynamic' \(did you mean inverse_dynamics",
        ),
        (["frame_jacobian"], {}, DatasetError, r"'frame_jacobian' needs a frame: 'frame_jacobian:FRAME'"),
        (["mass_matrix:l_sole"], {}, DatasetError, "takes no frame"),
        (["frame_jacobian:l_sol"], {}, UnknownNameError, "l_sol"),
        (["inverse_dynamics"], {}, DatasetError, r"inverse_dynamics needs the accelerations \(a columns\)"),
        (["forward_dynamics"], {}, DatasetError, r"needs the generalized forces \(tau columns\)"),
        (["mass_matrix", "mass_matrix"], {}, DatasetError, "asked for twice"),
        (["mass_matrix"], {"engine": "bullet"}, BridgeError, "unknown engine 'bullet'"),
        (["mass_matrix"], {"convention": None}, DatasetError, "need convention="),
    ],
)
def test_bad_requests_are_named(quantities, kwargs, error, message) -> None:
    model = bridge.load_urdf("iCubGazeboV2_5")
    q, v, _, _ = native_states(model, 3, "mujoco", 1)
    with pytest.raises(error, match=message):
        bridge.compute(model, (q, v), quantities, **{"convention": "mujoco", **kwargs})


def test_a_bad_state_is_named_by_row_and_column() -> None:
    model = bridge.load_urdf("solo12")
    q, v, _, _ = native_states(model, 5, "mujoco", 1)
    q[2, 10] = np.nan
    with pytest.raises(DatasetError, match=r"q, state 2, column '[^']+/q0': nan is not a finite number"):
        bridge.compute(model, (q, v), ["mass_matrix"], convention="mujoco")
