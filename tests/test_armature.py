"""Joint armature: the neutral model carries it, every engine adds it the same way.

Armature adds ``diag(armature)`` to the joint block of M and ``armature * s_ddot`` to inverse
dynamics; forward dynamics inverts that; bias and gravity forces, momentum, the centroidal
momentum matrix and the Coriolis matrix do not change (docs/theory.md, "Armature").
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import bridge
from bridge.validation.check import available_engines, cross_validate
from tests.helpers import assert_close, float64_engines, random_state

REPS = ("body", "inertial", "mixed")


def _model(seed: int, floating: bool = True) -> bridge.Model:
    return bridge.random_model(
        7, seed=seed, floating=floating, massless_probability=0.0, armature_probability=0.8
    )


def _without_armature(model: bridge.Model) -> bridge.Model:
    return model.replace(joints=tuple(dataclasses.replace(j, armature=0.0) for j in model.joints))


# --------------------------------------------------------------------------- the neutral model
def test_joint_armature_validation() -> None:
    model = _model(0)
    j = model.movable_joints[0]
    with pytest.raises(bridge.ModelError, match="armature"):
        dataclasses.replace(j, armature=-1.0)
    with pytest.raises(bridge.ModelError, match="armature"):
        dataclasses.replace(j, armature=float("nan"))
    with pytest.raises(bridge.ModelError, match="fixed joint has no armature"):
        dataclasses.replace(j, kind="fixed", axis=np.zeros(3), armature=0.1)


def test_armature_survives_derived_models() -> None:
    model = _model(1)
    arm = {j.name: j.armature for j in model.joints if j.movable}
    assert any(arm.values())
    assert model.armature.shape == (model.n_dofs,) and model.has_armature
    for derived in (model.with_base(model.links[-1].name), model.lumped(), model.with_fixed_base()):
        assert {j.name: j.armature for j in derived.joints if j.movable} == arm
    names = list(reversed(model.dof_names))
    assert_close(model.with_dofs(names).armature, [arm[n] for n in names])
    # locking keeps the armature with the original joint; releasing gives it back
    locked = model.with_dofs(names[1:], locked={names[0]: 0.3})
    assert (
        locked.joint(names[0]).armature == 0.0 and locked.joint(names[0]).original.armature == arm[names[0]]
    )
    assert locked.with_dofs(names).joint(names[0]).armature == arm[names[0]]


def test_random_model_armature_is_drawn_last() -> None:
    a, b = _model(2), bridge.random_model(7, seed=2, massless_probability=0.0)
    assert not b.has_armature and a.has_armature
    assert a.dof_names == b.dof_names
    for ja, jb in zip(a.joints, b.joints, strict=True):
        assert np.array_equal(ja.parent_H_child.matrix, jb.parent_H_child.matrix)
    assert all(0.01 <= x <= 0.5 for x in a.armature if x)


def test_urdf_leaves_armature_out_with_a_warning() -> None:
    model = _model(3)
    with pytest.warns(bridge.BridgeWarning, match="armature"):
        text = model.to_urdf()
    import re

    comments = re.findall(r"<!--(.*?)-->", text, flags=re.S)
    assert "armature" not in re.sub(r"<!--.*?-->", "", text, flags=re.S)  # no element, no attribute
    named = [j for j in model.joints if j.armature]
    assert any(all(f"{j.name}={j.armature!r}" in c for j in named) for c in comments)  # the comment
    assert not bridge.load_urdf(text).has_armature
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _without_armature(model).to_urdf()


# --------------------------------------------------------------------------- conversions
def test_pinocchio_armature_round_trip_in_pinocchio_velocity_order() -> None:
    pin = pytest.importorskip("pinocchio")
    del pin
    model = _model(4)
    pm = bridge.to_pinocchio(model)
    for j in model.movable_joints:
        jid = pm.getJointId(j.name)
        assert pm.armature[pm.idx_vs[jid]] == j.armature
    assert not np.any(np.asarray(pm.armature)[:6])
    back = bridge.from_pinocchio(pm)
    assert {j.name: j.armature for j in back.movable_joints} == {
        j.name: j.armature for j in model.movable_joints
    }


def test_drake_armature_round_trip() -> None:
    if "drake" not in available_engines():
        pytest.skip("Drake is not installed (pip install '.[drake]')")
    model = _model(5)
    back = bridge.from_drake(bridge.to_drake(model))
    assert {j.name: j.armature for j in back.movable_joints} == pytest.approx(
        {j.name: j.armature for j in model.movable_joints}, rel=1e-15
    )


def test_mujoco_armature_round_trip() -> None:
    if "mujoco" not in available_engines():
        pytest.skip("MuJoCo is not installed (pip install '.[mujoco]')")
    model = _model(6)
    back = bridge.from_mujoco(bridge.to_mujoco(model))
    assert {j.name: j.armature for j in back.movable_joints} == {
        j.name: j.armature for j in model.movable_joints
    }


# --------------------------------------------------------------------------- engines
@pytest.mark.parametrize("floating", [True, False])
def test_every_engine_agrees_with_armature(floating: bool) -> None:
    model = _model(7, floating)
    report = cross_validate(model, engines=available_engines(), samples=3, seed=0, fd_samples=1)
    assert report.results and report.ok, "\n" + str(report)


@pytest.mark.parametrize("engine", float64_engines())
@pytest.mark.parametrize("rep", REPS)
def test_armature_adds_only_to_the_joint_diagonal(engine: str, rep: str) -> None:
    """Against the same engine without armature: M gains diag(armature) in its joint block, ID gains
    armature * s_ddot, FD inverts the new M; h, g, momentum, CMM and C are unchanged (batched)."""
    model = _model(8)
    bare = _without_armature(model)
    rng = np.random.default_rng(0)
    st = random_state(model, rng, batch=(3,)).to(rep)
    nu_dot = rng.normal(size=(3, model.nv))
    out = []
    for m in (model, bare):
        kd = bridge.KinDyn(m, engine, rep)
        kd.set_robot_state(st)
        tau = kd.inverse_dynamics(nu_dot[:, :6], nu_dot[:, 6:])
        out.append(
            {
                "M": kd.mass_matrix(),
                "tau": tau,
                "fd": kd.forward_dynamics(tau),
                "h": kd.bias_forces(),
                "g": kd.gravity_forces(),
                "cmm": kd.centroidal_momentum_matrix(),
                "C": kd.coriolis_matrix(),
                "momentum": kd.centroidal_momentum(),
            }
        )
    arm, plain = out
    A = np.zeros((model.nv, model.nv))
    A[6:, 6:] = np.diag(model.armature)
    assert_close(arm["M"] - plain["M"], np.broadcast_to(A, arm["M"].shape), atol=1e-12, what="M")
    extra = np.concatenate([np.zeros((3, 6)), model.armature * nu_dot[:, 6:]], axis=-1)
    assert_close(arm["tau"] - plain["tau"], extra, atol=1e-11, what="ID")
    assert_close(arm["fd"], nu_dot, what="FD(ID)")
    for key in ("h", "g", "cmm", "C", "momentum"):
        assert_close(arm[key], plain[key], what=key)


def test_featherstone_large_batch_with_armature() -> None:
    """The CRBA's view path (large batches) and the ABA add the armature too."""
    model = _model(9)
    rng = np.random.default_rng(1)
    st = random_state(model, rng, batch=(400,))
    nu_dot = rng.normal(size=(400, model.nv))
    ref = bridge.KinDyn(model, "pinocchio", "mixed")
    ref.set_robot_state(st)
    kd = bridge.KinDyn(model, "featherstone", "mixed")
    kd.set_robot_state(st)
    assert_close(kd.mass_matrix(), ref.mass_matrix())
    tau = ref.inverse_dynamics(nu_dot[:, :6], nu_dot[:, 6:])
    assert_close(kd.inverse_dynamics(nu_dot[:, :6], nu_dot[:, 6:]), tau)
    assert_close(kd.forward_dynamics(tau), nu_dot)
