"""SDFormat files: bridge's engines on ``load_sdf``'s model against Drake's own MultibodyPlant parsed
from the same file (its SDFormat parser), every quantity, to 1e-10 relative.

M, h and g in the three representations go through the native comparison (``bridge check --native``,
:func:`bridge.validation.native.compare_native`); the other quantities (frame poses, velocities,
Jacobians, J_dot nu, inverse and forward dynamics, centre of mass, centroidal momentum) are read
from Drake's parsed plant here, in MIXED (Drake's own velocities: angular first, world axes), at
the states bridge's native comparison uses (:func:`bridge.backends.drake.native.native_state`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")

import bridge
from bridge.backends.drake.model import quiet_drake
from bridge.backends.drake.native import load_drake_urdf, native_state
from bridge.validation.native import compare_native
from bridge.validation.sampling import random_states
from tests.helpers import float64_engines

ROOT = Path(__file__).resolve().parents[2]
HAND_WRITTEN = sorted((ROOT / "models" / "sdf").glob("*.sdf"))


def _drake_examples() -> list[Path]:
    import pydrake

    share = Path(pydrake.__file__).parent / "share" / "drake" / "examples"
    names = (
        "acrobot/Acrobot.sdf",
        "multibody/cart_pole/cart_pole.sdf",
        "planar_gripper/planar_brick.sdf",
        "planar_gripper/planar_gripper.sdf",  # three fingers welded in code: free bodies in the file
        "kuka_iiwa_arm/models/desk/transcendesk55inch.sdf",
        "kuka_iiwa_arm/models/table/extra_heavy_duty_table_surface_only_collision.sdf",
    )
    return [share / n for n in names if (share / n).is_file()]


FILES = [*HAND_WRITTEN, *_drake_examples()]
RTOL = 1e-10
#: frames ``attached_to`` a joint: Drake (1.51) places them wrongly (test_drake_misplaces_frames_on_joints)
ON_JOINTS = {"wrist_axis"}


def _load(path: Path) -> bridge.Model:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.SDFWarning)  # world_slider.sdf: the world left out
        return bridge.load_sdf(path)


def test_the_files_are_there() -> None:
    assert len(HAND_WRITTEN) >= 4 and len(FILES) >= 9, FILES


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_native_comparison_agrees(path: Path) -> None:
    """``bridge check FILE.sdf --native``: Drake's SDFormat parser and bridge's model, M, h, g in
    BODY, INERTIAL and MIXED, agree to 1e-10 (findings only explain, none unexplained)."""
    report = compare_native(path, ["drake"], samples=3)
    assert report.ok, str(report)
    assert report.engines == ["drake SDFormat parser"]
    assert len(report.results) == 9 and max(r.max_rel for r in report.results) < RTOL
    causes = {f.cause for f in report.findings}
    assert "drake_unexplained" not in causes and "drake_bodies" not in causes
    model = _load(path)
    free = any(j.kind.value == "free" for j in model.joints)  # SDFormat's free bodies
    assert ("drake_floating_joint" in causes) == (model.floating or free)
    assert ("drake_universal_joints" in causes) == any(d.endswith("__axis2") for d in model.dof_names)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, np.abs(b).max()))


def _T(plant, model: bridge.Model, state: bridge.State) -> np.ndarray:
    """(nv_drake, nv): Drake's v of bridge's MIXED nu (the base: angular first; DOFs by slot; a ball
    or free joint's block rotated into Drake's joint frames: a constant in MIXED, T_dot = 0)."""
    from bridge.backends.drake.parsed import ParsedLayout
    from bridge.conventions.change_of_variables import MIXED, change_of_variables

    layout = ParsedLayout(plant, model, np.eye(4))
    T_conv = change_of_variables(model, state, MIXED, layout.convention).matrix()
    T = np.zeros((plant.num_velocities(), model.nv))
    T[layout.index] = T_conv if layout.C is None else layout.C @ T_conv
    return T


def _swap(x: np.ndarray) -> np.ndarray:
    """Drake's angular-first 6-rows as bridge's linear-first."""
    return np.concatenate([x[3:6], x[0:3]])


def _engines(model: bridge.Model) -> list[str]:
    return list(float64_engines())  # (1e-10: a float32 engine is compared at its floor elsewhere)


def _state(batch: bridge.State, k: int, world_H_base: np.ndarray | None = None) -> bridge.State:
    """Sample ``k`` of ``batch`` (MIXED), at ``world_H_base`` when given (a fixed base's pose)."""
    H = batch.world_H_base[k] if world_H_base is None else world_H_base
    return bridge.State(H, batch.s[k], batch.base_velocity[k], batch.s_dot[k], "mixed", layout=batch.layout)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_quantity_equals_drakes_plant(path: Path) -> None:
    from pydrake.multibody.tree import JacobianWrtVariable, MultibodyForces

    model = _load(path)
    with quiet_drake():
        plant = load_drake_urdf(path)
    context = plant.CreateDefaultContext()
    world = plant.world_frame()
    frames = [f for f in model.frame_names if plant.HasFrameNamed(f) and f not in ON_JOINTS]
    assert set(model.frame_names) - set(frames) <= {"world", *ON_JOINTS} | {
        link.name for link in model.links if link.name.split("__")[-1] in model.joint_names
    }
    rng = np.random.default_rng(7)
    states = random_states(model, 3, rng).to("mixed")
    compared, refused = 0, []
    for engine in _engines(model):
        try:
            kd = bridge.KinDyn(model, engine, "mixed")
        except bridge.BridgeError as exc:  # MuJoCo refuses point masses (cart_pole): said so
            if isinstance(exc, bridge.UnsupportedError) and not model.single_coordinate:
                refused.append(engine)  # an engine without ball or free joints (yet), by name
                continue
            assert engine == "mujoco" and "principal moments" in str(exc), (engine, exc)
            continue
        compared += 1
        for k in range(3):
            welded = None
            if not model.floating:  # a fixed base where Drake's weld puts it
                welded = plant.CalcRelativeTransform(context, world, plant.GetFrameByName(model.base))
                welded = welded.GetAsMatrix4()
            st = _state(states, k, welded)
            kd.set_robot_state(st)
            T = _T(plant, model, st)
            q, v = native_state(plant, model, st)
            plant.SetPositions(context, q)
            plant.SetVelocities(context, v)
            nu = np.concatenate([st.base_velocity, st.s_dot]) if model.floating else st.s_dot
            assert _rel(T @ nu, v) < 1e-15
            where = f"{path.stem}, {engine}, sample {k}"
            # dynamics: M, h, g, inverse and forward dynamics
            M_D = plant.CalcMassMatrix(context)
            g_D = plant.CalcGravityGeneralizedForces(context)
            h_D = plant.CalcBiasTerm(context) - g_D
            assert _rel(kd.mass_matrix(), T.T @ M_D @ T) < RTOL, where
            assert _rel(kd.bias_forces(), T.T @ h_D) < RTOL, where
            assert _rel(kd.gravity_forces(), -T.T @ g_D) < RTOL, where
            nu_dot = rng.standard_normal(model.nv)
            tau_D = plant.CalcInverseDynamics(context, T @ nu_dot, MultibodyForces(plant)) - g_D
            base_acc = nu_dot[:6] if model.floating else None
            assert (
                _rel(kd.inverse_dynamics(base_acc, nu_dot[6:] if model.floating else nu_dot), T.T @ tau_D)
                < RTOL
            )
            if not model.massless_dofs:
                tau = rng.standard_normal(model.nv)
                v_dot_D = np.linalg.solve(M_D, np.linalg.solve(T.T, tau) - h_D)  # T: a permutation
                assert _rel(kd.forward_dynamics(tau), np.linalg.solve(T, v_dot_D)) < RTOL, where
            # frames: poses, velocities, Jacobians, J_dot nu
            for name in frames:
                F = plant.GetFrameByName(name)
                X = plant.CalcRelativeTransform(context, world, F).GetAsMatrix4()
                assert _rel(kd.frame_transform(name), X) < RTOL, (where, name)
                J_D = plant.CalcJacobianSpatialVelocity(
                    context, JacobianWrtVariable.kV, F, np.zeros(3), world, world
                )
                J = kd.frame_jacobian(name)
                assert _rel(J, np.concatenate([J_D[3:], J_D[:3]]) @ T) < RTOL, (where, name)
                assert _rel(kd.frame_velocity(name), _swap(J_D @ v)) < RTOL, (where, name)
                A = plant.CalcBiasSpatialAcceleration(
                    context, JacobianWrtVariable.kV, F, np.zeros(3), world, world
                )
                assert _rel(kd.frame_bias_acc(name), _swap(A.get_coeffs())) < RTOL, (where, name)
            # centre of mass and centroidal momentum
            c = plant.CalcCenterOfMassPositionInWorld(context)
            assert _rel(kd.com_position(), c) < RTOL, where
            L = plant.CalcSpatialMomentumInWorldAboutPoint(context, c).get_coeffs()
            assert _rel(kd.centroidal_momentum(), _swap(L)) < RTOL, where
    assert compared >= len(_engines(model)) - 1 - len(refused)
    assert not {"pinocchio", "featherstone", "drake"} & set(refused), refused


def test_floating_override_agrees_with_drake_free_body(tmp_path) -> None:
    """``floating=True`` on a welded model gives the model Drake parses from the same file without
    the weld (a free body), and floating=False on a free one Drake's model with a weld added."""
    text = (ROOT / "models" / "sdf" / "universal.sdf").read_text()
    start, end = (
        text.index('<joint name="world_weld"'),
        text.index("</joint>", text.index('<joint name="world_weld"')),
    )
    free = tmp_path / "free.sdf"
    free.write_text(text[:start] + text[end + len("</joint>") :])
    report = compare_native(free, ["drake"], samples=2)
    assert report.ok, str(report)
    a, b = bridge.load_sdf(ROOT / "models" / "sdf" / "universal.sdf", floating=True), bridge.load_sdf(free)
    assert a.floating and b.floating and a.base == b.base == "base"
    kd_a, kd_b = bridge.KinDyn(a, "pinocchio"), bridge.KinDyn(b, "pinocchio")
    st = _state(random_states(a, 1, np.random.default_rng(1)), 0)
    kd_a.set_robot_state(st)
    kd_b.set_robot_state(st)
    assert _rel(kd_a.mass_matrix(), kd_b.mass_matrix()) < 1e-14
    fixed = bridge.load_sdf(free, floating=False)
    assert not fixed.floating and fixed.nv == b.nv - 6


def test_drake_misplaces_frames_on_joints() -> None:
    """A ``<frame attached_to="JOINT">`` moves with the joint's child link, at its pose (SDFormat:
    ``relative_to`` only says how the numbers are written). Drake's parser (measured with 1.51)
    puts it at its pose *relative to the joint frame* taken as its pose in the child link: off by
    the joint frame's offset from the child link. bridge follows the specification; Drake's other
    frames (attached to links and to frames, in chains) and all of M, h, g agree."""
    path = ROOT / "models" / "sdf" / "frames.sdf"
    model, plant = bridge.load_sdf(path), load_drake_urdf(path)
    frame = model.frame("wrist_axis")
    drake = plant.GetFrameByName("wrist_axis")
    assert frame.link == drake.body().name() == "forearm"
    forearm_H_elbow = bridge.Transform.from_translation([0.0, -0.02, 0.01])  # the elbow's <pose>
    expected = (forearm_H_elbow.inverse() @ frame.link_H_frame).matrix
    assert _rel(drake.GetFixedPoseInBodyFrame().GetAsMatrix4(), expected) < 1e-15
    assert _rel(frame.link_H_frame.matrix, expected) > 1e-2  # bridge: the specification's pose
    report = compare_native(path, ["drake"], samples=2)  # bridge check --native names it
    assert report.ok and [f.subjects for f in report.findings if f.cause == "drake_frames_moved"] == [
        ("wrist_axis",)
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("quadrotor/warehouse.sdf", "is static"),
        ("kuka_iiwa_arm/models/table/extra_heavy_duty_table.sdf", "is static"),
    ],
)
def test_drakes_other_examples_are_refused_by_name(name: str, message: str) -> None:
    import pydrake

    path = Path(pydrake.__file__).parent / "share" / "drake" / "examples" / name
    if not path.is_file():
        pytest.skip(f"{path} is not shipped")
    with pytest.raises(bridge.ModelError, match=message):
        bridge.load_sdf(path)
