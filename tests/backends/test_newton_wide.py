"""Newton (float32) on models with ball joints: every quantity equals bridge's own algorithms to its
float32 floor (1e-4 relative) in every representation, floating and fixed bases; ``from_newton`` reads
ball joints back; planar joints and free joints other than the floating base's are refused by name
(Newton gives a free joint's forces in world axes while its velocity is in the joint frame's)."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from tests.helpers import assert_close, random_state

pytest.importorskip("newton")

RTOL = 1e-4  # Newton's float32 floor (the registry's rtol)
KINDS = ("revolute", "prismatic", "ball", "fixed", "continuous")


def _quantities(kd: bridge.KinDyn, model: bridge.Model) -> dict[str, np.ndarray]:
    nb = 6 if model.floating else 0
    a = np.random.default_rng(1).normal(size=(*kd.batch_shape, model.nv))
    frame = model.frame_names[-1]
    return {
        "M": kd.mass_matrix(),
        "h": kd.bias_forces(),
        "g": kd.gravity_forces(),
        "ID": kd.inverse_dynamics(a[..., :6] if nb else None, a[..., nb:]),
        "FD": kd.forward_dynamics(a[..., nb:]),
        "pose": kd.frame_transform(frame),
        "velocity": kd.frame_velocity(frame),
        "J": kd.frame_jacobian(frame),
        "J_dot nu": kd.frame_bias_acc(frame),
        "com": kd.com_position(),
        "momentum": kd.centroidal_momentum(),
    }


@pytest.mark.parametrize("floating", [True, False])
@pytest.mark.parametrize("seed", [1, 4])
def test_ball_joints_equal_bridges_algorithms(seed: int, floating: bool) -> None:
    model = bridge.random_model(7, seed=seed, joint_kinds=KINDS, floating=floating, massless_probability=0.0)
    assert any(k.value == "ball" for k in model.coordinates.kinds)
    state = random_state(model, np.random.default_rng(seed), "mixed", batch=(3,))
    for rep in ("body", "inertial", "mixed"):
        out = {}
        for engine in ("featherstone", "newton"):
            kd = bridge.KinDyn(model, engine=engine, representation=rep)
            kd.set_robot_state(state.to(rep))
            out[engine] = _quantities(kd, model)
        for name, value in out["newton"].items():
            if name == "FD":  # compared by its backward error below (M's conditioning times float32)
                continue
            assert_close(value, out["featherstone"][name], RTOL, f"{name} {rep}")
        M, h = out["featherstone"]["M"], out["featherstone"]["h"]
        nb = 6 if floating else 0
        applied = np.zeros((3, model.nv))
        applied[:, nb:] = np.random.default_rng(1).normal(size=(3, model.nv))[:, nb:]
        residual = np.einsum("kij,kj->ki", M, out["newton"]["FD"]) + h - applied
        assert_close(residual, np.zeros_like(residual), RTOL * max(1.0, float(np.abs(h).max())), f"FD {rep}")


def test_from_newton_reads_ball_joints() -> None:
    model = bridge.random_model(
        7, seed=3, joint_kinds=("revolute", "ball", "prismatic"), massless_probability=0.0
    )
    back = bridge.from_newton(bridge.to_newton(model)).with_dofs(model.dof_names)
    assert [j.kind for j in back.joints] == [j.kind for j in model.depth_first_joints]
    state = random_state(model, np.random.default_rng(0), "mixed")
    a, b = bridge.KinDyn(model, "featherstone"), bridge.KinDyn(back, "featherstone")
    a.set_robot_state(state)
    b.set_robot_state(state.with_layout(back))
    assert_close(b.mass_matrix(), a.mass_matrix(), 1e-6, "M (float32 inertias)")


def test_planar_and_free_joints_are_refused_by_name() -> None:
    planar = bridge.random_model(4, seed=1, joint_kinds=("planar", "revolute"))
    with pytest.raises(bridge.UnsupportedError, match=r"no planar joint type \(joints \['joint"):
        bridge.KinDyn(planar, "newton")
    scene = bridge.random_model(4, seed=1, joint_kinds=("free",), floating=False)
    with pytest.raises(bridge.UnsupportedError, match=r"forces in world axes.*joints \['joint1'"):
        bridge.to_newton(scene)
    report = bridge.cross_validate(scene, samples=1, representations=("mixed",), identities=False)
    assert any("newton" in note and "free joint" in note for note in report.notes)
