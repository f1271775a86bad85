"""Drake's ball, free and planar joints: their coordinates measured on raw Drake calls (the frames,
``CalcSpatialVelocity``, ``MapVelocityToQDot``), the change of variables to Drake's convention
against finite differences, ``to_drake``/``from_drake`` and the "drake" engine against the
Featherstone and Pinocchio engines on random models with joints of several coordinates (floating and
fixed bases, several free bodies), every quantity, every representation (1e-10 relative)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pydrake", reason="Drake is not installed (pip install 'bridge-dynamics[drake]')")

import bridge
from bridge.backends.drake import (
    DRAKE,
    drake_layout,
    from_drake,
    from_drake_state,
    set_world_H_base,
    to_drake,
    to_drake_state,
)
from bridge.conventions.convert import velocity_transform
from bridge.derivatives.chain import retract
from bridge.model.joints import JointKind
from bridge.spatial import Transform
from tests.backends.drake.models import chain, wide_state
from tests.helpers import assert_close

REPS = ("body", "inertial", "mixed")
WIDE = ("revolute", "prismatic", "ball", "free", "planar")


def away_from_rpy_singularity(model: bridge.Model, state: bridge.State, margin: float = 0.3) -> bool:
    """Every ball joint's pitch at least ``margin`` from +-pi/2 (Drake's roll-pitch-yaw singularity)."""
    q, _ = to_drake_state(model, state)
    lay = drake_layout(model)
    for k, kind in enumerate(model.coordinates.kinds):
        if kind is JointKind.BALL:
            pitch = q[..., lay.idx_q[k] + 1]
            if np.any(np.abs(np.abs(pitch) - np.pi / 2) < margin):
                return False
    return True


def _context(model: bridge.Model, state: bridge.State):
    plant = to_drake(model)
    q, v = to_drake_state(model, state)
    context = plant.CreateDefaultContext()
    if not model.floating:
        set_world_H_base(plant, context, state.world_H_base)
    plant.SetPositions(context, q)
    plant.SetVelocities(context, v)
    return plant, context, q, v


def _frames(plant, model: bridge.Model, name: str):
    """Drake's joint ``name`` and its frames F (parent) and M (child)."""
    j = plant.GetJointByName(name)
    return j, j.frame_on_parent(), j.frame_on_child()


# ------------------------------------------------------------------ Drake's joints, measured
@pytest.fixture(scope="module")
def measured():
    """A chain ball -> free -> planar at a random state, the plant and a context there."""
    model = chain(("ball", "free", "planar", "revolute"), seed=3)
    rng = np.random.default_rng(11)
    st = wide_state(model, rng, "mixed")
    assert away_from_rpy_singularity(model, st)
    plant, context, q, v = _context(model, st)
    return model, st, plant, context, q, v


def _relative(plant, context, F, M) -> tuple[np.ndarray, np.ndarray]:
    """``X_FM`` (4, 4) and M's spatial velocity in F, expressed in F, (omega, v) angular first."""
    X = plant.CalcRelativeTransform(context, F, M).GetAsMatrix4()
    V = M.CalcSpatialVelocity(context, F, F)
    return X, np.concatenate([V.rotational(), V.translational()])


def _mixed_joint_velocity(model: bridge.Model, st: bridge.State, name: str) -> np.ndarray:
    c = model.coordinates
    return st.to("mixed").s_dot[c.v_slice(c.index[name])]


def _positions(model: bridge.Model, st: bridge.State, name: str) -> np.ndarray:
    c = model.coordinates
    return st.s[c.q_slice(c.index[name])]


def test_ball_is_rpy_and_the_angular_velocity_in_F(measured) -> None:
    """BallRpyJoint: ``X_FM = (Rz(y) Ry(p) Rx(r), 0)`` at the centre, ``v = w_FM`` in F (bridge's
    MIXED ball velocity), and ``qdot = N(q) v != v``."""
    from pydrake.math import RollPitchYaw

    model, st, plant, context, q, v = measured
    j, F, M = _frames(plant, model, "j1")
    assert j.type_name() == "ball_rpy" and (j.num_positions(), j.num_velocities()) == (3, 3)
    rpy = q[j.position_start() : j.position_start() + 3]
    X, V = _relative(plant, context, F, M)
    assert_close(X[:3, :3], RollPitchYaw(rpy).ToRotationMatrix().matrix(), 1e-14, "R(rpy)")
    assert_close(X[:3, 3], np.zeros(3), 1e-14, "the centre stays put")
    # the neutral ball: R(quaternion) in the child's rest axes, which F has (M at the centre)
    R = bridge.model.joints.quaternion_wxyz_to_rotation(_positions(model, st, "j1"))
    assert_close(X[:3, :3], R, 1e-13, "Drake's rotation is the neutral one")
    w = v[j.velocity_start() : j.velocity_start() + 3]
    assert_close(V[:3], w, 1e-13, "v = w_FM in F")
    assert_close(w, _mixed_joint_velocity(model, st, "j1"), 1e-13, "bridge's MIXED ball velocity")
    qdot = plant.MapVelocityToQDot(context, v)[j.position_start() : j.position_start() + 3]
    assert np.abs(qdot - w).max() > 1e-3, "roll-pitch-yaw rates are not the angular velocity"


def test_free_joint_is_quaternion_then_position_relative_to_F(measured) -> None:
    """QuaternionFloatingJoint anywhere: ``q = [wxyz; p_FM]``, ``v = [w_FM; v_FM]`` in F: the
    floating base's layout relative to F (bridge's MIXED free-joint velocity, halves swapped)."""
    model, st, plant, context, q, v = measured
    j, F, M = _frames(plant, model, "j2")
    assert j.type_name() == "quaternion_floating" and M.is_body_frame()
    qj = q[j.position_start() : j.position_start() + 7]
    X, V = _relative(plant, context, F, M)
    assert_close(Transform.from_quaternion_wxyz(qj[:4], qj[4:]).matrix, X, 1e-13, "X_FM")
    neutral = _positions(model, st, "j2")
    assert_close(qj, np.concatenate([neutral[3:], neutral[:3]]), 1e-14, "[quaternion; position]")
    vj = v[j.velocity_start() : j.velocity_start() + 6]
    assert_close(V, vj, 1e-13, "v = [w_FM; v_FM] in F")
    assert_close(
        vj, _mixed_joint_velocity(model, st, "j2")[[3, 4, 5, 0, 1, 2]], 1e-13, "MIXED, angular first"
    )


def test_planar_joint_moves_in_F_xy_plane(measured) -> None:
    """PlanarJoint: ``X_FM = (Rz(theta), (x, y, 0))``, ``v = qdot = (vx, vy, w)`` in F, whose x, y,
    z are the neutral joint's plane axes e1, e2 and normal."""
    model, st, plant, context, q, v = measured
    j, F, M = _frames(plant, model, "j3")
    joint = model.joint("j3")
    x, y, th = q[j.position_start() : j.position_start() + 3]
    X, V = _relative(plant, context, F, M)
    c, s = np.cos(th), np.sin(th)
    assert_close(X[:3, :3], np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]), 1e-13, "Rz(theta)")
    assert_close(X[:3, 3], [x, y, 0.0], 1e-13, "(x, y, 0)")
    e1, e2 = bridge.model.joints.plane_axes(joint.axis)
    C_R_M = M.GetFixedPoseInBodyFrame().rotation().matrix()
    assert_close(C_R_M, np.column_stack([e1, e2, joint.axis]), 1e-14, "M's axes: e1, e2, normal")
    assert_close([x, y, th], _positions(model, st, "j3"), 1e-14, "the neutral (x, y, theta)")
    vj = v[j.velocity_start() : j.velocity_start() + 3]
    assert_close(V[[3, 4, 2]], vj, 1e-13, "v = (vx, vy, w) in F")
    assert_close(vj, _mixed_joint_velocity(model, st, "j3"), 1e-13, "bridge's MIXED planar velocity")
    qdot = plant.MapVelocityToQDot(context, v)[j.position_start() : j.position_start() + 3]
    assert_close(qdot, vj, 1e-14, "qdot = v")


def test_child_poses_are_bridges(measured) -> None:
    """Every link's pose from Drake at ``to_drake_state`` is bridge's forward kinematics."""
    model, st, plant, context, _, _ = measured
    kd = bridge.KinDyn(model, engine="featherstone")
    kd.set_robot_state(st)
    for link in model.link_names:
        X = plant.CalcRelativeTransform(context, plant.world_frame(), plant.GetFrameByName(link))
        assert_close(X.GetAsMatrix4(), kd.frame_transform(link), 1e-12, link)


# ------------------------------------------------------------------ T and T_dot to Drake's ball velocity
@pytest.mark.parametrize("rep", REPS)
def test_ball_T_and_T_dot_against_finite_differences(rep: str) -> None:
    """``v_drake = T nu`` from bridge's ball velocity (BODY: in the child's axes; INERTIAL, MIXED: in
    F's) to Drake's (``w_FM`` in F, q roll-pitch-yaw): T a rotation at the joint, ``T_dot`` the
    central difference of T along the motion (``retract``), and Drake's own ``qdot = N(q) v`` the
    central difference of its roll-pitch-yaw coordinates."""
    model = chain(("ball", "revolute", "ball"), floating=True, seed=5)
    rng = np.random.default_rng(21)
    st = wide_state(model, rng, rep)
    assert away_from_rpy_singularity(model, st)
    T, T_dot = velocity_transform(model, st, rep, "drake")
    _, v = to_drake_state(model, st)
    assert_close(T @ st.nu, v, 1e-13, "T nu = Drake's v")
    lay, c = drake_layout(model), model.coordinates
    for name in ("j1", "j3"):
        k = c.index[name]
        rows = slice(lay.idx_v[k], lay.idx_v[k] + 3)
        cols = slice(6 + c.v_start[k], 6 + c.v_start[k] + 3)
        block = T[rows, cols]
        assert_close(block @ block.T, np.eye(3), 1e-14, "the ball's block is a rotation")
        if rep == "body":
            R = bridge.model.joints.quaternion_wxyz_to_rotation(_positions(model, st, name))
            assert_close(block, R, 1e-14, "BODY -> F's axes: R")
            assert np.abs(T_dot[rows, cols]).max() > 1e-3
        else:
            assert_close(block, np.eye(3), 1e-15, "F's axes already")
    h = 1e-6

    def moved(dt: float) -> bridge.State:
        H, s = retract(st.world_H_base.matrix, st.s, dt * st.nu, rep, layout=model)
        return bridge.State(Transform(H), s, st.base_velocity, st.s_dot, rep, layout=model)

    plus, minus = moved(h), moved(-h)
    fd = (
        velocity_transform(model, plus, rep, "drake")[0] - velocity_transform(model, minus, rep, "drake")[0]
    ) / (2 * h)
    assert_close(T_dot, fd, 1e-7, "T_dot = dT/dt", norm="max")
    # Drake's own kinematic map: d/dt q_drake = N(q) v_drake
    plant, context, _, v = _context(model, st)
    qd = (to_drake_state(model, plus)[0] - to_drake_state(model, minus)[0]) / (2 * h)
    assert_close(plant.MapVelocityToQDot(context, v), qd, 1e-7, "qdot = N(q) v", norm="max")


# ------------------------------------------------------------------ states
@pytest.mark.parametrize("floating", [True, False])
@pytest.mark.parametrize("rep", REPS)
def test_state_round_trip_wide(rep: str, floating: bool) -> None:
    model = bridge.random_model(9, seed=4, joint_kinds=WIDE, floating=floating)
    st = wide_state(model, np.random.default_rng(8), rep, batch=(2, 3))
    q, v = to_drake_state(model, st)
    lay = drake_layout(model)
    assert q.shape == (2, 3, lay.nq) and v.shape == (2, 3, model.nv)
    back = from_drake_state(model, q, v, rep)
    if floating:  # (a fixed base's pose is not part of Drake's q)
        assert_close(back.world_H_base.matrix, st.world_H_base.matrix, 1e-13)
    for k, kind in enumerate(model.coordinates.kinds):  # the same rotations (a quaternion's sign aside)
        sl = model.coordinates.q_slice(k)
        a, b = back.s[..., sl], st.s[..., sl]
        if kind.spec.quaternion_slice is not None:
            qs = kind.spec.quaternion_slice
            sign = np.sign(np.sum(a[..., qs] * b[..., qs], axis=-1, keepdims=True))
            a = np.concatenate([a[..., : qs.start], sign * a[..., qs], a[..., qs.stop :]], -1)
        assert_close(a, b, 1e-12, model.coordinates.names[k])
    assert_close(back.s_dot, st.s_dot, 1e-12)
    assert_close(back.base_velocity, st.base_velocity, 1e-12)


def test_convention_declares_rpy_balls() -> None:
    assert DRAKE.configuration.ball.value == "rpy"
    assert DRAKE.configuration.quaternion.value == "wxyz" and DRAKE.configuration.quaternion_first


# ------------------------------------------------------------------ engines
QUANTITIES = (
    "mass_matrix", "bias_forces", "gravity_forces", "inverse_dynamics", "forward_dynamics", "frame_transform",
    "frame_velocity", "frame_jacobian", "frame_bias_acc", "frame_acceleration", "frame_jacobian_derivative",
    "com_position", "com_velocity", "com_jacobian", "centroidal_momentum", "total_momentum",
    "centroidal_momentum_matrix", "total_momentum_jacobian", "coriolis_matrix", "coriolis_forces",
    "relative_transform", "relative_jacobian", "inverse_dynamics_wrenches", "forward_dynamics_wrenches",
)  # fmt: skip


def _answers(kd: bridge.KinDyn, model: bridge.Model, rng: np.random.Generator, batch: tuple) -> dict:
    nud = rng.normal(size=(*batch, model.nv))
    tau = rng.normal(size=(*batch, model.n_dofs)) * 10.0
    ba, sdd = (nud[..., :6], nud[..., 6:]) if model.floating else (None, nud)
    frames = [model.link_names[-1], model.frame_names[0]] if model.frames else model.link_names[-2:]
    f, g = frames[0], frames[-1]
    wrenches = {g: rng.normal(size=(*batch, 6)) * 10.0}
    out = {
        "mass_matrix": kd.mass_matrix(), "bias_forces": kd.bias_forces(),
        "gravity_forces": kd.gravity_forces(),
        "inverse_dynamics": kd.inverse_dynamics(ba, sdd), "forward_dynamics": kd.forward_dynamics(tau),
        "inverse_dynamics_wrenches": kd.inverse_dynamics(ba, sdd, external_wrenches=wrenches),
        "forward_dynamics_wrenches": kd.forward_dynamics(tau, external_wrenches=wrenches),
        "frame_transform": kd.frame_transform(f), "frame_velocity": kd.frame_velocity(f),
        "frame_jacobian": kd.frame_jacobian(f), "frame_bias_acc": kd.frame_bias_acc(f),
        "frame_acceleration": kd.frame_acceleration(f, ba, sdd),
        "frame_jacobian_derivative": kd.frame_jacobian_derivative(g), "com_position": kd.com_position(),
        "com_velocity": kd.com_velocity(), "com_jacobian": kd.com_jacobian(),
        "centroidal_momentum": kd.centroidal_momentum(), "total_momentum": kd.total_momentum(),
        "centroidal_momentum_matrix": kd.centroidal_momentum_matrix(),
        "total_momentum_jacobian": kd.total_momentum_jacobian(), "coriolis_matrix": kd.coriolis_matrix(),
        "coriolis_forces": kd.coriolis_forces(), "relative_transform": kd.relative_transform(f, g),
        "relative_jacobian": kd.relative_jacobian(f, g),
    }  # fmt: skip
    assert set(out) == set(QUANTITIES)
    return out


MODELS = {
    "fixed chain": lambda: chain(("ball", "free", "planar", "revolute", "ball", "prismatic"), seed=1),
    "floating chain": lambda: chain(("planar", "ball", "free", "revolute"), floating=True, seed=2),
    "floating random": lambda: bridge.random_model(9, seed=2, joint_kinds=WIDE, floating=True),
    "scene": lambda: bridge.random_model(9, seed=29, joint_kinds=WIDE, floating=False, branching=1.0),
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def wide_model(request) -> bridge.Model:
    return MODELS[request.param]()


def test_scene_has_several_free_bodies() -> None:
    model = MODELS["scene"]()
    roots = [j for j in model.joints if j.parent == model.base and j.kind is JointKind.FREE]
    assert not model.floating and len(roots) >= 2, [(j.name, j.kind.value, j.parent) for j in model.joints]
    below = [j for j in MODELS["floating random"]().joints if j.kind is JointKind.FREE]
    assert below, "a free joint below the root"


@pytest.mark.parametrize("rep", REPS)
def test_drake_engine_equals_featherstone_and_pinocchio(wide_model: bridge.Model, rep: str) -> None:
    """Every quantity of the "drake" engine equals the Featherstone engine's and Pinocchio's (1e-10
    relative) on models with ball, free and planar joints."""
    st = wide_state(wide_model, np.random.default_rng(31), rep, batch=(2,))
    answers = {}
    for engine in ("featherstone", "pinocchio", "drake"):
        kd = bridge.KinDyn(wide_model, engine=engine, representation=rep)
        kd.set_robot_state(st)
        answers[engine] = _answers(kd, wide_model, np.random.default_rng(32), (2,))
    for other in ("featherstone", "pinocchio"):
        for q in QUANTITIES:
            assert_close(answers["drake"][q], answers[other][q], 1e-10, f"{q} drake vs {other} ({rep})")


def test_drake_engine_one_unbatched_state(wide_model: bridge.Model) -> None:
    """One unbatched state set from arrays (KinDyn.set_state: the general path for wide models)."""
    st = wide_state(wide_model, np.random.default_rng(41), "body")
    out = []
    for engine in ("featherstone", "drake"):
        kd = bridge.KinDyn(wide_model, engine=engine, representation="body")
        kd.set_state(st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot)
        tau = np.arange(wide_model.n_dofs, dtype=float)
        out.append(
            (kd.mass_matrix(), kd.bias_forces(), kd.forward_dynamics(tau), kd.frame_jacobian(wide_model.base))
        )
    for a, b in zip(*out, strict=True):
        assert_close(a, b, 1e-10)


# ------------------------------------------------------------------ models
def _reordered(state: bridge.State, model: bridge.Model, other: bridge.Model) -> bridge.State:
    """``state`` of ``model`` as a state of ``other`` (the same joints in another DOF order)."""
    c, d = model.coordinates, other.coordinates
    s = np.concatenate([state.s[..., c.q_slice(c.index[n])] for n in d.names], -1)
    sd = np.concatenate([state.s_dot[..., c.v_slice(c.index[n])] for n in d.names], -1)
    return bridge.State(state.world_H_base, s, state.base_velocity, sd, state.representation, layout=other)


def test_from_drake_round_trip(wide_model: bridge.Model) -> None:
    back = from_drake(to_drake(wide_model))
    assert back.floating == wide_model.floating
    assert {j.name: j.kind for j in back.joints} == {j.name: j.kind for j in wide_model.joints}
    st = wide_state(wide_model, np.random.default_rng(51), "mixed")
    a = bridge.KinDyn(wide_model, engine="featherstone")
    b = bridge.KinDyn(back, engine="featherstone")
    a.set_robot_state(st)
    b.set_robot_state(_reordered(st, wide_model, back))
    c = wide_model.coordinates
    nb = 6 if wide_model.floating else 0
    perm = np.concatenate(
        [np.arange(nb)]
        + [nb + np.arange(c.v_start[c.index[n]], c.v_start[c.index[n] + 1]) for n in back.dof_names]
    ).astype(int)
    assert_close(b.mass_matrix(), a.mass_matrix()[np.ix_(perm, perm)], 1e-12, "M")
    assert_close(b.bias_forces(), a.bias_forces()[perm], 1e-12, "h")
    for link in wide_model.link_names:
        assert_close(b.frame_transform(link), a.frame_transform(link), 1e-12, link)


def test_from_drake_free_bodies_make_a_scene() -> None:
    """Bodies Drake leaves floating (no inboard joint) and a tree on a revolute joint to the world:
    a scene, a massless ``world`` link with a free joint per floating body."""
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import RevoluteJoint, SpatialInertia, UnitInertia

    plant = MultibodyPlant(0.0)
    inst = plant.AddModelInstance("scene")
    inertia = SpatialInertia(1.0, np.array([0.1, 0.2, 0.3]), UnitInertia(1, 1, 1), True)
    a, _, _ = (plant.AddRigidBody(n, inst, inertia) for n in ("a", "box", "ball"))
    plant.AddJoint(RevoluteJoint("hinge", plant.world_frame(), a.body_frame(), np.array([0, 0, 1.0])))
    plant.Finalize()
    model = from_drake(plant)
    assert model.name == "scene" and model.base == "world" and not model.floating
    assert {j.name: (j.kind.value, j.parent) for j in model.joints} == {
        "hinge": ("continuous", "world"), "box": ("free", "world"), "ball": ("free", "world"),
    }  # fmt: skip
    assert model.link("world").mass == 0.0 and model.n_dofs == 13
    # Drake's numbers on its own plant equal those on to_drake(model) at the same state (joints by name)
    st = wide_state(model, np.random.default_rng(3), "mixed")
    st = bridge.State(Transform.identity(), st.s, st.base_velocity, st.s_dot, "mixed", layout=model)
    own, own_context, q, v = _context(model, st)
    lay, c = drake_layout(model), model.coordinates
    context = plant.CreateDefaultContext()
    q0, v0 = plant.GetPositions(context), np.zeros(plant.num_velocities())
    index = np.zeros(plant.num_velocities(), dtype=int)  # own plant's v entry -> Drake's plant's
    for k, name in enumerate(c.names):
        j = plant.GetJointByName(name)
        nq, nv = j.num_positions(), j.num_velocities()
        q0[j.position_start() : j.position_start() + nq] = q[lay.idx_q[k] : lay.idx_q[k] + nq]
        v0[j.velocity_start() : j.velocity_start() + nv] = v[lay.idx_v[k] : lay.idx_v[k] + nv]
        index[lay.idx_v[k] : lay.idx_v[k] + nv] = np.arange(j.velocity_start(), j.velocity_start() + nv)
    plant.SetPositions(context, q0)
    plant.SetVelocities(context, v0)
    assert_close(plant.CalcMassMatrix(context)[np.ix_(index, index)], own.CalcMassMatrix(own_context), 1e-12)
    assert_close(plant.CalcBiasTerm(context)[index], own.CalcBiasTerm(own_context), 1e-12)
    g = plant.CalcGravityGeneralizedForces(context)[index]
    assert_close(g, own.CalcGravityGeneralizedForces(own_context), 1e-12)


def test_wide_joint_armature_is_refused_by_name() -> None:
    import dataclasses

    model = chain(("ball", "revolute"), seed=4)
    joints = tuple(dataclasses.replace(j, armature=0.1) if j.name == "j1" else j for j in model.joints)
    with_armature = model.replace(joints=joints)
    with pytest.raises(bridge.UnsupportedError, match=r"'j1'.*ball"):
        to_drake(with_armature)
    with pytest.raises(bridge.UnsupportedError, match=r"'j1'.*ball"):
        bridge.KinDyn(with_armature, engine="drake")
    st = wide_state(with_armature, np.random.default_rng(0))  # the state maps need no armature
    q, v = to_drake_state(with_armature, st)
    assert_close(from_drake_state(with_armature, q, v).s_dot, st.s_dot, 1e-13)


@pytest.mark.parametrize("pitch_gap", [1e-3, 1e-9, 0.0])
def test_engine_at_the_rpy_singularity(pitch_gap: float) -> None:
    """Drake's roll-pitch-yaw coordinates of a ball are singular at pitch +-pi/2 (only its ``qdot =
    N(q) v`` is; the pose they give is exact): the engine, whose T is bridge's rotation, agrees
    there too."""
    from bridge.model.joints import rotation_to_quaternion_wxyz
    from bridge.spatial.so3 import rpy_to_matrix

    model = chain(("ball", "revolute"), seed=5)
    R = rpy_to_matrix(np.array([0.3, np.pi / 2 - pitch_gap, -0.7]))
    s = np.concatenate([rotation_to_quaternion_wxyz(R), [0.4]])
    st = bridge.State(np.eye(4), s, np.zeros(6), np.array([0.3, -0.2, 0.5, 1.0]), "body", layout=model)
    out = []
    for engine in ("featherstone", "drake"):
        kd = bridge.KinDyn(model, engine=engine, representation="body")
        kd.set_robot_state(st)
        out.append((kd.mass_matrix(), kd.bias_forces(), kd.frame_transform("l2"), kd.frame_jacobian("tool")))
    for a, b in zip(*out, strict=True):
        assert_close(a, b, 1e-12)


def test_derivatives_through_the_drake_engine() -> None:
    """ID and FD derivatives (by differences along the tangent for wide models) through the drake
    engine equal the featherstone engine's."""
    model = chain(("ball", "free", "planar", "revolute"), floating=True, seed=2)
    st = wide_state(model, np.random.default_rng(1), "body")
    a = np.random.default_rng(2).normal(size=model.nv)
    out = {}
    for engine in ("featherstone", "drake"):
        kd = bridge.KinDyn(model, engine=engine, representation="body")
        kd.set_robot_state(st)
        ids = kd.inverse_dynamics_derivatives(a[:6], a[6:])
        fds = kd.forward_dynamics_derivatives(np.arange(model.n_dofs, dtype=float))
        out[engine] = (*ids, *fds)
    for k, (x, y) in enumerate(zip(out["drake"], out["featherstone"], strict=True)):
        assert_close(x, y, 1e-8, f"derivative {k}")


def test_from_drake_of_joints_in_other_frames() -> None:
    """A plant built in Drake's own terms (an RpyFloatingJoint, a BallRpyJoint whose frames are
    rotated against the child, a PlanarJoint whose frames are rotated about their normal): from_drake
    gives the same dynamics, Drake's plant driven in its own coordinates (ParsedLayout)."""
    from pydrake.math import RigidTransform, RollPitchYaw
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import (
        BallRpyJoint,
        FixedOffsetFrame,
        PlanarJoint,
        RpyFloatingJoint,
        SpatialInertia,
        UnitInertia,
    )

    from bridge.backends.drake.native import DrakeNative

    plant = MultibodyPlant(0.0)
    inst = plant.AddModelInstance("drakes")
    rng = np.random.default_rng(4)

    def inertia():
        return SpatialInertia(
            rng.uniform(0.5, 2.0), rng.uniform(-0.1, 0.1, 3), UnitInertia(0.3, 0.4, 0.5), True
        )

    def frame(name, body, rpy, xyz):
        return plant.AddFrame(
            FixedOffsetFrame(name, body.body_frame(), RigidTransform(RollPitchYaw(rpy), xyz))
        )

    a, b, c, d = (plant.AddRigidBody(n, inst, inertia()) for n in "abcd")
    plant.AddJoint(RpyFloatingJoint("float", plant.world_frame(), a.body_frame()))
    plant.AddJoint(
        BallRpyJoint(
            "ball",
            frame("Fb", a, [0.3, -0.2, 0.5], [0.1, 0, 0.2]),
            frame("Mb", b, [0.4, 0.1, -0.6], [0, 0.05, 0.1]),
            0.0,
        )
    )
    plant.AddJoint(
        PlanarJoint(
            "planar",
            frame("Fp", b, [0.2, 0.1, 0.0], [0, 0.3, 0]),
            frame("Mp", c, [0, 0, 0.7], [0, 0, 0]),
            np.zeros(3),
        )
    )
    plant.AddJoint(RpyFloatingJoint("loose", frame("Fl", c, [0.1, 0.2, 0.3], [0.2, 0, 0]), d.body_frame()))
    plant.Finalize()
    model = from_drake(plant)
    assert model.floating and model.base == "a"
    assert {j.name: j.kind.value for j in model.joints} == {
        "ball": "ball",
        "planar": "planar",
        "loose": "free",
    }
    native = DrakeNative(plant, model)
    assert native.layout.C is not None  # the ball's and the planar joint's frames are rotated
    for rep in REPS:
        kd = bridge.KinDyn(model, engine="featherstone", representation=rep)
        st = wide_state(model, np.random.default_rng(5), rep)
        kd.set_robot_state(st)
        for name, value in native.dynamics(st).items():
            assert_close(value, getattr(kd, name)(), 1e-10, f"{name} {rep}")
