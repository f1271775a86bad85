"""SDFormat ball joints: ``load_sdf`` equals Drake's own parse (``BallRpyJoint``) in Drake's
convention, in every representation, away from the roll-pitch-yaw singularity.

Drake's parse of ``models/sdf/ball_arm.sdf`` (a shoulder whose joint frame is rotated against its
link, a wrist) and ``ball_scene.sdf`` (a ball joint to the world, free bodies) is read in its own
coordinates: roll-pitch-yaw angles and the angular velocity in the joint frame F. ``v_D = T nu``
with T from bridge's ball velocity (BODY: child axes; INERTIAL, MIXED: F's) to Drake's, and
``T_dot`` its time derivative; both are checked against central differences along the motion
(``retract``), with Drake's own ``qdot = N(q) v``. Then M, h, forward dynamics and frame Jacobians of
the "drake", "featherstone" and "pinocchio" engines equal Drake's parsed plant's through T (1e-10).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")

import bridge
from bridge.backends.drake.model import quiet_drake
from bridge.backends.drake.native import load_drake_urdf
from bridge.backends.drake.parsed import ParsedLayout
from bridge.conventions.change_of_variables import NEUTRAL, change_of_variables
from bridge.conventions.frames import frame_jacobian
from bridge.derivatives.chain import retract
from bridge.model.joints import JointKind
from bridge.spatial import Transform
from tests.helpers import assert_close

ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "models" / "sdf" / "ball_arm.sdf", ROOT / "models" / "sdf" / "ball_scene.sdf"]
REPS = ("body", "inertial", "mixed")
ENGINES = ("drake", "featherstone", "pinocchio")
RTOL = 1e-10
_SWAP = np.array([3, 4, 5, 0, 1, 2])


class Parsed:
    """Drake's parse of ``path``, bridge's model of it, and the parse's coordinates at a state."""

    def __init__(self, path: Path) -> None:
        self.model = bridge.load_sdf(path)
        with quiet_drake():
            self.plant = load_drake_urdf(path)
        context = self.plant.CreateDefaultContext()
        X = self.plant.CalcRelativeTransform(
            context, self.plant.world_frame(), self.plant.GetFrameByName(self.model.base)
        )
        self.base_pose = X.GetAsMatrix4()  # where Drake welds the fixed base
        self.layout = ParsedLayout(self.plant, self.model, self.base_pose)

    def T(self, state: bridge.State) -> tuple[np.ndarray, np.ndarray]:
        """``(T, T_dot)`` (nv_drake, nv): Drake's v of ``state.nu`` and its time derivative."""
        lay = self.layout
        cov = change_of_variables(self.model, state, NEUTRAL[state.representation], lay.convention)
        T = np.zeros((self.plant.num_velocities(), self.model.nv))
        T_dot = np.zeros_like(T)
        C = np.eye(len(lay.index)) if lay.C is None else lay.C
        T[lay.index], T_dot[lay.index] = C @ cov.matrix(), C @ cov.derivative()
        return T, T_dot

    def context(self, state: bridge.State):
        q, v = self.layout.state(state)
        context = self.plant.CreateDefaultContext()
        self.plant.SetPositions(context, q)
        self.plant.SetVelocities(context, v)
        return context, q, v


@pytest.fixture(scope="module", params=FILES, ids=lambda p: p.stem)
def parsed(request) -> Parsed:
    return Parsed(request.param)


def _states(parsed: Parsed, rep: str, n: int = 3, seed: int = 5) -> list[bridge.State]:
    """Random states (a fixed base where Drake welds it), every ball joint's pitch in Drake's frames
    at least 0.2 from +-pi/2 (the roll-pitch-yaw singularity)."""
    model, rng = parsed.model, np.random.default_rng(seed)
    out = []
    while len(out) < n:
        c = model.coordinates
        s = np.concatenate([k.spec.random(rng) for k in c.kinds])
        st = bridge.State(
            Transform(parsed.base_pose), s, np.zeros(6), rng.normal(size=c.nv), "mixed", layout=model
        )
        q, _ = parsed.layout.state(st)
        pitches = [
            q[parsed.layout.slots[k][0].position_start() + 1]
            for k, kind in enumerate(c.kinds)
            if kind is JointKind.BALL
        ]
        if all(abs(abs(p) - np.pi / 2) > 0.2 for p in pitches):
            out.append(st.to(rep))
    return out


def test_the_files_have_ball_joints_in_rotated_frames(parsed: Parsed) -> None:
    kinds = {j.kind for j in parsed.model.joints}
    assert JointKind.BALL in kinds
    types = {parsed.plant.GetJointByName(d).type_name() for d in parsed.model.dof_names}
    assert "ball_rpy" in types
    if parsed.model.name == "ball_arm":  # the shoulder's frame is rotated: Drake's coordinates differ
        assert parsed.layout.C is not None
        assert parsed.model.joint("shoulder").axis_origin.tolist() == pytest.approx([0.0, 0.0, 0.08])
    else:
        assert {"drone", "box"} <= {j.name for j in parsed.model.joints if j.kind is JointKind.FREE}


@pytest.mark.parametrize("rep", REPS)
def test_T_and_T_dot_to_drakes_parse_against_finite_differences(parsed: Parsed, rep: str) -> None:
    """``v_D = T nu``: Drake's velocity of its parsed plant at bridge's state; ``T_dot`` the central
    difference of T along the motion; Drake's ``N(q) v`` the central difference of its q."""
    h = 1e-6
    for st in _states(parsed, rep):
        T, T_dot = parsed.T(st)
        context, _, v = parsed.context(st)
        nu = st.nu if parsed.model.floating else st.s_dot
        assert_close(T @ nu, v, 1e-13, "v_D = T nu")
        moved = []
        for dt in (h, -h):
            delta = dt * nu
            H, s = retract(st.world_H_base.matrix, st.s, delta, rep, layout=parsed.model)
            moved.append(bridge.State(Transform(H), s, st.base_velocity, st.s_dot, rep, layout=parsed.model))
        fd = (parsed.T(moved[0])[0] - parsed.T(moved[1])[0]) / (2 * h)
        assert_close(T_dot, fd, 1e-7, f"T_dot ({rep})", norm="max")
        qd = (parsed.layout.state(moved[0])[0] - parsed.layout.state(moved[1])[0]) / (2 * h)
        assert_close(parsed.plant.MapVelocityToQDot(context, v), qd, 1e-6, "qdot = N(q) v", norm="max")
        if rep == "body":  # a ball's BODY velocity is in the child's axes: T is not constant
            assert np.abs(T_dot).max() > 1e-3


@pytest.mark.parametrize("rep", REPS)
def test_engines_equal_drakes_parse(parsed: Parsed, rep: str) -> None:
    """M, h, forward dynamics and frame Jacobians of each engine equal Drake's parsed plant's:
    ``M = T^T M_D T``, ``h = T^T (h_D + M_D T_dot nu)``, ``nu_dot = T^-1 (M_D^-1 (T^-T tau - h_D) -
    T_dot nu)``, ``J = J_D T`` (rows moved from F[A] to the representation's frame)."""
    model, plant = parsed.model, parsed.plant
    world = plant.world_frame()
    frames = [f for f in model.frame_names if plant.HasFrameNamed(f) and f != "world"]
    from pydrake.multibody.tree import JacobianWrtVariable

    for engine in ENGINES:
        kd = bridge.KinDyn(model, engine=engine, representation=rep)
        for k, st in enumerate(_states(parsed, rep)):
            where = f"{model.name}, {engine}, {rep}, sample {k}"
            kd.set_robot_state(st)
            T, T_dot = parsed.T(st)
            context, _, _ = parsed.context(st)
            nu = st.nu if model.floating else st.s_dot
            M_D = plant.CalcMassMatrix(context)
            g_D = plant.CalcGravityGeneralizedForces(context)
            h_D = plant.CalcBiasTerm(context) - g_D
            assert_close(kd.mass_matrix(), T.T @ M_D @ T, RTOL, f"M {where}")
            assert_close(kd.bias_forces(), T.T @ (h_D + M_D @ T_dot @ nu), RTOL, f"h {where}")
            assert_close(kd.gravity_forces(), -T.T @ g_D, RTOL, f"g {where}")
            tau = np.random.default_rng(k).normal(size=model.n_dofs)
            vdot = np.linalg.solve(M_D, np.linalg.solve(T.T, tau) - h_D)
            assert_close(kd.forward_dynamics(tau), np.linalg.solve(T, vdot - T_dot @ nu), RTOL, f"FD {where}")
            for name in frames:
                F = plant.GetFrameByName(name)
                H = plant.CalcRelativeTransform(context, world, F).GetAsMatrix4()
                J_D = plant.CalcJacobianSpatialVelocity(
                    context, JacobianWrtVariable.kV, F, np.zeros(3), world, world
                )
                J = frame_jacobian(H, J_D[_SWAP], "mixed", rep) @ T
                assert_close(kd.frame_jacobian(name), J, RTOL, f"J {name} {where}")
                assert_close(kd.frame_transform(name), H, RTOL, f"pose {name} {where}")
