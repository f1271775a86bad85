"""The Drake engine's kernels (bridge/backends/drake/kernels.py): a compiled state's frame Jacobian
read in Drake's order by one kernel, INERTIAL ones from Drake's F[A] Jacobian without the frame's
pose; every frame of solo12 (example-robot-data) and of a random tree whose DOF order is not
Drake's equals the numpy path's (1e-12)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import bridge
from bridge.robots import robot_path
from tests.helpers import assert_close, compiled_and_numpy, random_state

pytestmark = pytest.mark.skipif(importlib.util.find_spec("pydrake") is None, reason="drake is not installed")

REPS = ("body", "inertial", "mixed")


@pytest.fixture(scope="module")
def models() -> dict[str, bridge.Model]:
    revolute = bridge.random_model(7, seed=12, joint_kinds=("revolute", "prismatic", "fixed"))
    return {"solo12": bridge.load_urdf(robot_path("solo12")), "random": revolute}


@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("name", ["solo12", "random"])
def test_every_frame_jacobian_equals_the_numpy_path(models, rep, name, monkeypatch) -> None:
    model = models[name]
    rng = np.random.default_rng(len(name) + 3 * len(rep))
    compiled, numpy_path = compiled_and_numpy(model, "drake", rep, monkeypatch)
    for _ in range(2):
        st = random_state(model, rng, rep)
        arrays = [np.array(x) for x in (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)]
        for kd in (compiled, numpy_path):
            kd.set_state(*arrays)
        engine = compiled._engine
        assert engine._state1 is not None and engine._k_jacobian is not None
        assert numpy_path._engine._state1 is None
        for frame in model.frame_names:
            J = compiled.frame_jacobian(frame)
            assert J.flags.c_contiguous
            assert_close(J, numpy_path.frame_jacobian(frame), 1e-12, f"{name} {rep} {frame}")


@pytest.mark.parametrize("name", ["solo12", "random"])
def test_an_inertial_jacobian_has_the_identity_as_its_base_block(models, name, monkeypatch) -> None:
    """What the INERTIAL kernel relies on: a frame moving with the base has the base's spatial twist
    (both at the world origin, in world axes), on the numpy path (CalcRelativeTransform) too."""
    model = models[name]
    rng = np.random.default_rng(17)
    for kd in compiled_and_numpy(model, "drake", "inertial", monkeypatch):
        st = random_state(model, rng, "inertial")
        kd.set_state(*(np.array(x) for x in (st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)))
        for frame in model.frame_names:
            assert_close(kd.frame_jacobian(frame)[:, :6], np.eye(6), 1e-12, frame, atol=1e-12)
