"""URDF floating and planar joints: bridge's model of the file equals Pinocchio's own
``buildModelFromUrdf`` (``JointModelFreeFlyer``, ``JointModelPlanar``) in every representation.

Pinocchio's parsed model is driven at bridge's states through the change of variables to
Pinocchio's convention with the parsed model's joint order
(:func:`bridge.backends.pinocchio.native.parsed_convention`): M, h, g, forward dynamics, frame poses
and Jacobians of the "pinocchio", "featherstone" and "drake" engines equal Pinocchio's own (1e-10
relative). ``bridge check --native`` on the files compares Pinocchio's loader with bridge's model
(iDynTree's loader, its usual reference, refuses these joints) and Drake's parser with bridge's model
as Drake reads the file (floating joints: free bodies in the world; planar joints: in the plane of
their axis), every difference explained.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import bridge
from bridge.backends.pinocchio.native import (
    dynamics,
    load_urdf_model,
    native_layout,
    parsed_convention,
    wide_state,
)
from bridge.conventions.change_of_variables import NEUTRAL, change_of_variables
from bridge.conventions.frames import frame_jacobian
from bridge.validation.native import compare_native
from bridge.validation.sampling import random_states
from tests.helpers import assert_close

MODELS = Path(__file__).resolve().parents[2] / "models" / "wide"
CASES = [("floating_planar.urdf", True), ("floating_planar.urdf", False), ("world_floating.urdf", False)]
REPS = ("body", "inertial", "mixed")
RTOL = 1e-10


def _load(name: str, floating: bool) -> bridge.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.URDFWarning)  # the planar axes Pinocchio ignores
        return bridge.load_urdf(MODELS / name, floating=floating)


@pytest.mark.parametrize(("name", "floating"), CASES)
@pytest.mark.parametrize("rep", REPS)
def test_engines_equal_pinocchios_own_parse(name: str, floating: bool, rep: str) -> None:
    model = _load(name, floating)
    pm = load_urdf_model(str(MODELS / name), floating=floating)
    layout = native_layout(pm)
    assert layout.floating == floating and not layout.single
    shorts = {pm.names[i]: pm.joints[i].shortname() for i in range(1, pm.njoints)}
    for j in model.movable_joints:  # the joint models Pinocchio chose
        expected = {"free": "JointModelFreeFlyer", "planar": "JointModelPlanar"}.get(j.kind.value)
        if expected:
            assert shorts[j.name] == expected, (j.name, shorts[j.name])
    conv = parsed_convention(layout, model)
    batch = random_states(model, 3, np.random.default_rng(3))
    data = pm.createData()
    for engine in ("pinocchio", "featherstone", "drake"):
        kd = bridge.KinDyn(model, engine=engine, representation=rep)
        for k in range(3):
            H = batch.world_H_base[k] if floating else bridge.Transform.identity()
            st = bridge.State(H, batch.s[k], batch.base_velocity[k], batch.s_dot[k], "mixed", layout=model)
            st = st.to(rep)
            kd.set_robot_state(st)
            where = f"{name} floating={floating} {engine} {rep} sample {k}"
            q, v = wide_state(model, st, conv)
            cov = change_of_variables(model, st, NEUTRAL[st.representation], conv)
            T, T_dot = cov.matrix(), cov.derivative()
            nu = st.nu if floating else st.s_dot
            assert_close(T @ nu, v, 1e-13, f"v = T nu {where}")
            d = dynamics(pm, q, v)
            M = d["mass_matrix"]
            assert_close(kd.mass_matrix(), T.T @ M @ T, RTOL, f"M {where}")
            assert_close(kd.bias_forces(), T.T @ (d["bias_forces"] + M @ T_dot @ nu), RTOL, f"h {where}")
            assert_close(kd.gravity_forces(), T.T @ d["gravity_forces"], RTOL, f"g {where}")
            tau = np.random.default_rng(k).normal(size=model.n_dofs)
            full = np.concatenate([np.zeros(6), tau]) if floating else tau
            vdot = np.linalg.solve(M, np.linalg.solve(T.T, full) - d["bias_forces"])
            assert_close(kd.forward_dynamics(tau), np.linalg.solve(T, vdot - T_dot @ nu), RTOL, f"FD {where}")
            pin.computeJointJacobians(pm, data, q)
            pin.updateFramePlacements(pm, data)
            for link in model.link_names:
                if not pm.existFrame(link):  # (bridge's massless 'world' is Pinocchio's universe)
                    assert link == "world" and not floating
                    continue
                fid = pm.getFrameId(link)
                X = data.oMf[fid].homogeneous
                assert_close(kd.frame_transform(link), X, RTOL, f"pose {link} {where}")
                J = pin.getFrameJacobian(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
                assert_close(
                    kd.frame_jacobian(link), frame_jacobian(X, J, "mixed", rep) @ T, RTOL, f"J {link}"
                )


@pytest.mark.parametrize("name", ["floating_planar.urdf", "world_floating.urdf"])
def test_native_comparison_explains_every_loader(name: str) -> None:
    """``bridge check --native``: Pinocchio's loader equals bridge's model (iDynTree's refuses the
    joints), Drake's parser equals bridge's model as Drake reads the file; all explained."""
    report = compare_native(MODELS / name, samples=2)
    assert report.ok, str(report)
    assert max(r.max_rel for r in report.results) < RTOL
    pairs = {r.engines for r in report.results}
    assert "pinocchio URDF loader vs bridge" in pairs and "drake URDF parser vs bridge" in pairs
    causes = {f.cause: f.subjects for f in report.findings}
    assert "unexplained" not in causes and "drake_unexplained" not in causes
    assert "idyntree_refuses" in causes
    assert "drake_floating_joints" in causes
    assert ("drake_planar_axis" in causes) == (name == "floating_planar.urdf")
    if name == "floating_planar.urdf":
        assert causes["drake_planar_axis"] == ("glide", "skate")  # 'slide': axis z, the same plane
