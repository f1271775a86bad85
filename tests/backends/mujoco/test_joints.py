"""MuJoCo's ball, free and planar joints: to_mujoco / to_mjcf write them, MuJoCo's convention lays
them out, the mujoco engine computes with them.

Random trees with every joint kind (several free bodies on a fixed base, free joints below the root,
a floating base with ball and planar joints below it, armature on one-coordinate and ball joints)
go to MuJoCo through :func:`bridge.to_mujoco` and through the text of :func:`bridge.to_mjcf`;
MuJoCo's own mass matrix (``mj_fullM``), bias forces (``qfrc_bias``), inverse dynamics
(``mj_inverse``) and forward dynamics (``qacc`` of ``mj_forward`` under ``qfrc_applied``), taken to
bridge's representations through the change of variables to MuJoCo's convention, equal bridge's
general Featherstone engine and Pinocchio to 1e-10 relative in every representation, and MuJoCo's
body poses (``mj_kinematics``) and velocities (``mj_objectVelocity``) at ``to_mujoco_state``'s
``qpos`` and ``qvel`` equal bridge's. Forward dynamics is compared by its backward error (MuJoCo's
accelerations in the engines' equations of motion), as ``cross_validate`` does: the forward error is
that times the mass matrix's condition number (1.8e-10 at a condition number of 2.8e6 among these
models). Measured worst over 200 models (seeds 0-99, fixed and floating), through to_mujoco and
through to_mjcf's text, both engines, every representation: M 7.0e-15, h 7.9e-15, ID 7.4e-15, FD
1.2e-15 (backward error; forward error 1.8e-10).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge
from bridge.conventions.convert import velocity_change
from bridge.model.joints import JointKind, plane_axes
from bridge.model.model import Frame, Joint, Link, Model
from bridge.model.random import random_inertia, random_transform
from bridge.spatial import SpatialInertia, Transform
from tests.helpers import random_state

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")

from bridge.backends.mujoco import from_mujoco_state, to_mujoco, to_mujoco_state  # noqa: E402
from bridge.backends.mujoco.model import rigid_body_flags  # noqa: E402
from tests.backends.mujoco_reference import (  # noqa: E402
    assert_engines_equal_mujoco,
    random_qpos,
    relative_error,
    without_free_armature,
)

REPRESENTATIONS = ("body", "inertial", "mixed")
KINDS = ("revolute", "continuous", "prismatic", "fixed", "planar", "ball", "free")
TOL = 1e-10


def scene_model(seed: int, floating: bool) -> Model:
    """A random tree with every joint kind (``bridge.random_model``), plus: two free bodies on the base
    at the identity (MuJoCo free joints of a scene on a fixed base), one on the base at a rotated
    rest pose and one below the root (three slides and a ball), a ball and a planar joint further
    down; armature on some one-coordinate and ball joints (none on free and planar joints: MuJoCo's
    is in its own coordinates); the DOFs shuffled; frames on the added bodies."""
    rng = np.random.default_rng(seed)
    base = bridge.random_model(7, seed=rng, joint_kinds=KINDS, floating=floating, armature_probability=0.4)
    joints = [
        dataclasses.replace(j, armature=0.0) if j.kind in (JointKind.FREE, JointKind.PLANAR) else j
        for j in base.joints
    ]
    # (on links with mass: a massless link branching would be a massless MuJoCo body)
    others = [link.name for link in base.links if link.name != base.base and link.mass > 0.0]
    added = [
        ("box_a", base.base, JointKind.FREE, Transform.identity()),
        ("box_b", base.base, JointKind.FREE, Transform.identity()),
        ("box_c", base.base, JointKind.FREE, random_transform(rng)),
        ("hang", others[int(rng.integers(len(others)))], JointKind.FREE, random_transform(rng)),
        ("swing", others[int(rng.integers(len(others)))], JointKind.BALL, random_transform(rng)),
        ("slide", others[int(rng.integers(len(others)))], JointKind.PLANAR, random_transform(rng)),
    ]
    links = list(base.links)
    frames = list(base.frames)
    for name, parent, kind, rest in added:
        links.append(Link(name, random_inertia(rng)))
        axis = rng.normal(size=3) if kind is JointKind.PLANAR else np.zeros(3)
        origin = rng.normal(size=3) * 0.3 if kind is JointKind.BALL else np.zeros(3)
        armature = float(rng.uniform(0.01, 0.5)) if kind is JointKind.BALL else 0.0
        joints.append(Joint(f"{name}_joint", kind, parent, name, rest, axis, origin, armature=armature))
        frames.append(Frame(f"{name}_tip", name, random_transform(rng)))
    dofs = [j.name for j in joints if j.movable]
    dofs = [dofs[k] for k in rng.permutation(len(dofs))]
    return Model(f"scene{seed}", links, joints, frames, base.base, tuple(dofs), floating)


def _numbers(mm, qpos, qvel, qacc, qfrc) -> dict[str, np.ndarray]:
    """MuJoCo's M, h, ID (at ``qacc``) and FD (under ``qfrc_applied = qfrc``), rigid-body flags."""
    mm.opt.disableflags = rigid_body_flags(mujoco)
    d = mujoco.MjData(mm)
    d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
    mujoco.mj_inverse(mm, d)
    M = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, d, M)
    out = {"M": M, "h": d.qfrc_bias.copy(), "ID": d.qfrc_inverse.copy()}
    d.qfrc_applied[:] = qfrc
    mujoco.mj_forward(mm, d)
    out["FD"] = d.qacc.copy()
    return out


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)  # (frames on merged links: none here)
        return fn(*args)


def mujoco_errors(model: Model, mm, seed: int, engines=("featherstone", "pinocchio")) -> dict[str, float]:
    """``{"<rep> <engine> <quantity>": relative error}``: MuJoCo's M, h and ID on ``mm`` at a random
    state, taken to each representation, against each engine; "FD": the backward error of MuJoCo's
    forward dynamics in the engine's equations of motion (``|M a + h - tau|`` over its terms)."""
    rng = np.random.default_rng(seed)
    qpos, qvel = to_mujoco_state(model, random_state(model, rng))
    qacc, qfrc = rng.normal(size=(2, mm.nv))
    mj = _numbers(mm, qpos, qvel, qacc, qfrc)
    n_base = mm.nv - model.n_dofs
    errors = {}
    for rep in REPRESENTATIONS:
        st = from_mujoco_state(model, qpos, qvel, rep)
        cov = velocity_change(model, st, rep, "mujoco")
        nu_dot = cov.acceleration_back(qacc)
        want = {
            "M": cov.matrix_back(mj["M"]),
            "h": cov.bias_back(mj["h"], mj["M"]),
            "ID": cov.force_back(mj["ID"]),
            "FD": cov.acceleration_back(mj["FD"]),
        }
        for engine in engines:
            kd = bridge.KinDyn(model, engine, rep)
            kd.set_robot_state(st)
            got = {
                "M": kd.mass_matrix(),
                "h": kd.bias_forces(),
                "ID": kd.inverse_dynamics(nu_dot[:n_base] if n_base else None, nu_dot[n_base:]),
            }
            errors |= {f"{rep} {engine} {q}": relative_error(got[q], want[q]) for q in got}
            # FD: MuJoCo's accelerations satisfy the engine's equations of motion (the backward error:
            # the forward error is that times M's condition number, up to 3e6 among these models)
            M, h, tau, a = got["M"], got["h"], cov.force_back(qfrc), want["FD"]
            terms = np.abs(M) @ np.abs(a) + np.abs(h) + np.abs(tau)
            errors[f"{rep} {engine} FD"] = float(np.abs(M @ a + h - tau).max() / terms.max())
    return errors


def _joint_types(mm) -> list[str]:
    return [mujoco.mjtJoint(t).name.removeprefix("mjJNT_").lower() for t in mm.jnt_type]


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**16), floating=st.booleans())
def test_mujoco_equals_featherstone_and_pinocchio_on_models_with_every_joint(
    seed: int, floating: bool
) -> None:
    """MuJoCo's M, h, ID and FD on to_mujoco(model) and on the text of to_mjcf(model) equal the
    general Featherstone engine and Pinocchio in every representation; MuJoCo's free joints are the
    scene's free bodies at the identity (and only those), the others three slides and a ball."""
    model = scene_model(seed, floating)
    mm = _quiet(to_mujoco, model)
    types = _joint_types(mm)
    assert types.count("free") == (0 if floating else 2) + (1 if floating else 0)
    assert types.count("ball") == sum(j.kind in (JointKind.BALL, JointKind.FREE) for j in model.joints) - (
        0 if floating else 2
    )
    text = _quiet(bridge.to_mjcf, model)
    from_text = mujoco.MjModel.from_xml_string(text)
    assert _joint_types(from_text) == types
    for compiled in (mm, from_text):
        errors = mujoco_errors(model, compiled, seed)
        bad = {k: v for k, v in errors.items() if not v <= TOL}
        assert not bad, f"seed {seed}: " + ", ".join(f"{k} {v:.1e}" for k, v in bad.items())


@pytest.mark.parametrize("floating", [False, True])
def test_mujoco_state_is_mujoco_pose_and_velocity_of_every_body(floating: bool) -> None:
    """At to_mujoco_state's qpos and qvel, MuJoCo's body poses (mj_kinematics) and body velocities
    (mj_objectVelocity, world axes at the body origin) equal bridge's frame poses and MIXED
    velocities; from_mujoco_state takes them back to the same state in every representation."""
    model = scene_model(3, floating)
    mm = _quiet(to_mujoco, model)
    d = mujoco.MjData(mm)
    rng = np.random.default_rng(4)
    for _ in range(3):
        state = random_state(model, rng)
        if not floating:  # (to_mujoco's fixed base is at the identity)
            state = bridge.State(np.eye(4), state.s, np.zeros(6), state.s_dot, "mixed", layout=model)
        qpos, qvel = to_mujoco_state(model, state)
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(mm, d)
        kd = bridge.KinDyn(model, "featherstone", "mixed")
        kd.set_robot_state(state)
        for b in range(1, mm.nbody):
            name = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b)
            H = kd.frame_transform(name)
            np.testing.assert_allclose(H[:3, 3], d.xpos[b], atol=1e-12)
            np.testing.assert_allclose(H[:3, :3], d.xmat[b].reshape(3, 3), atol=1e-12)
            v = np.zeros(6)
            mujoco.mj_objectVelocity(mm, d, mujoco.mjtObj.mjOBJ_XBODY, b, v, 0)
            np.testing.assert_allclose(kd.frame_velocity(name), np.concatenate([v[3:], v[:3]]), atol=1e-11)
        for rep in REPRESENTATIONS:
            back = from_mujoco_state(model, qpos, qvel, rep)
            want = state.to(rep)
            np.testing.assert_allclose(back.s, want.s, atol=1e-12)
            np.testing.assert_allclose(back.s_dot, want.s_dot, atol=1e-12)
            if floating:
                np.testing.assert_allclose(back.base_velocity, want.base_velocity, atol=1e-12)


def _one_joint(kind: JointKind, rest: Transform, axis=(0.0, 0.0, 0.0)) -> Model:
    """A fixed base carrying a body through a hinge, then ``kind`` from that body to a box."""
    rng = np.random.default_rng(8)
    links = [
        Link("base", random_inertia(rng)),
        Link("arm", random_inertia(rng)),
        Link("box", random_inertia(rng)),
    ]
    joints = [
        Joint("hinge", "revolute", "base", "arm", random_transform(rng), axis=[0.0, 0.0, 1.0]),
        Joint("j", kind, "arm", "box", rest, axis=axis),
    ]
    return Model("one", links, joints, (), "base", ("hinge", "j"), floating=False)


@pytest.mark.parametrize("kind", [JointKind.FREE, JointKind.PLANAR])
def test_emulated_joints_have_mujocos_free_joint_velocity_relative_to_their_frame(kind: JointKind) -> None:
    """A free joint below the root is three slides and a ball in one MuJoCo body, a planar joint two
    slides and a hinge: measured on MuJoCo's own kinematics (the hinge before them at rest), their
    six (three) qvel entries are the child's d/dt p in the joint frame F's axes and its angular
    velocity in its own axes (about the plane normal), MuJoCo's free-joint convention relative to F
    (the neutral MIXED planar velocity)."""
    rng = np.random.default_rng(5)
    model = _one_joint(kind, random_transform(rng), axis=rng.normal(size=3))
    mm = to_mujoco(model)
    parts = ["slide", "slide", "slide", "ball"] if kind is JointKind.FREE else ["slide", "slide", "hinge"]
    assert _joint_types(mm) == ["hinge", *parts]
    d = mujoco.MjData(mm)
    d.qpos[:] = to_mujoco_state(model, random_state(model, rng))[0]
    d.qvel[:] = rng.normal(size=mm.nv)
    d.qvel[0] = 0.0  # the hinge before: F is at rest
    mujoco.mj_forward(mm, d)
    arm, box = (mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_BODY, n) for n in ("arm", "box"))
    R_F = d.xmat[arm].reshape(3, 3) @ model.joint("j").parent_H_child.rotation  # F's axes in world
    v = np.zeros(6)
    mujoco.mj_objectVelocity(mm, d, mujoco.mjtObj.mjOBJ_XBODY, box, v, 0)  # [omega; p_dot], world
    if kind is JointKind.FREE:
        np.testing.assert_allclose(d.qvel[1:4], R_F.T @ v[3:], atol=1e-12)
        np.testing.assert_allclose(d.qvel[4:7], d.xmat[box].reshape(3, 3).T @ v[:3], atol=1e-12)
    else:
        e1, e2 = plane_axes(model.joint("j").axis)
        p_dot_F = R_F.T @ v[3:]
        np.testing.assert_allclose(d.qvel[1:3], [e1 @ p_dot_F, e2 @ p_dot_F], atol=1e-12)
        np.testing.assert_allclose(d.qvel[3], model.joint("j").axis @ (R_F.T @ v[:3]), atol=1e-12)


@pytest.mark.parametrize("floating", [False, True])
def test_mujoco_engine_agrees_on_every_quantity(floating: bool) -> None:
    """KinDyn(engine="mujoco") (its free joints written as slides and a ball in the base's body,
    which it moves to each sample's base pose) equals the general Featherstone engine and Pinocchio
    on every quantity cross_validate compares, in every representation, and passes the identities
    (finite differences along the motion included)."""
    model = scene_model(11, floating)
    report = bridge.cross_validate(model, engines=["featherstone", "pinocchio", "mujoco"], samples=4, seed=2)
    assert report.results and report.ok, "\n" + str(report)
    assert {r.quantity for r in report.results} >= {
        "mass_matrix", "forward_dynamics", "frame_jacobian", "frame_acceleration", "centroidal_momentum",
    }  # fmt: skip


# --------------------------------------------------------------------------- MJCF in
SLIDES_AND_BALL = """
<mujoco model="slides_and_ball">
  <default><joint armature="0.05"/></default>
  <worldbody>
    <body name="cart" pos="0.3 -0.2 1" quat="0.9 0.1 -0.3 0.2">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="y" type="slide" axis="0 1 0"/>
      <joint name="socket" type="ball" pos="0.1 0.2 0"/>
      <geom type="box" size="0.1 0.2 0.3"/>
      <site name="tip" pos="0 0 0.3"/>
      <body name="pole" pos="0 0 0.5">
        <joint name="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.05"/>
      </body>
    </body>
    <body name="ball" pos="1 0 0.5" quat="0 1 0 0">
      <joint name="ball_free" type="free"/>
      <geom type="sphere" size="0.1"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_body_with_slides_and_a_ball_and_a_free_object(tmp_path) -> None:
    """A body with two slides and a ball (its centre off the body origin) and a free object: a scene
    rooted at the world body; the body's joints chain through massless synthetic links (the ball
    turning about its pos), the free joint has the identity rest (the body's pos and quat are only
    MuJoCo's qpos0) and no armature (ignored with a warning: MuJoCo's is in its own coordinates), the
    ball keeps its armature. Every engine equals MuJoCo in every representation, and to_mujoco puts
    the body's joints back into one body and the free joint back on the world body: MuJoCo's numbers
    of the rebuilt model equal the file's at the same qpos and qvel."""
    path = tmp_path / "slides_and_ball.xml"
    path.write_text(SLIDES_AND_BALL)
    with pytest.warns(bridge.BridgeWarning, match=r"free-joint armature \('ball_free'\)"):
        model = bridge.load_mjcf(path)
    assert not model.floating and model.base == "world"
    assert model.dof_names == ("x", "y", "socket", "hinge", "ball_free")
    socket, free = model.joint("socket"), model.joint("ball_free")
    assert socket.kind is JointKind.BALL and socket.armature == 0.05
    np.testing.assert_allclose(socket.axis_origin, [0.1, 0.2, 0.0])
    assert free.kind is JointKind.FREE and free.armature == 0.0 and free.parent == "world"
    np.testing.assert_array_equal(free.parent_H_child.matrix, np.eye(4))
    assert {"cart__x", "cart__y"} <= model.synthetic_links
    for k, rep in enumerate(REPRESENTATIONS):
        mm = mujoco.MjModel.from_xml_path(str(path))
        without_free_armature(mm)  # (as the model: left out)
        errors = assert_engines_equal_mujoco(model, mm, np.random.default_rng(k), representation=rep)
        assert {"pinocchio FD", "featherstone FD", "mujoco FD"} <= set(errors)
    original = without_free_armature(mujoco.MjModel.from_xml_path(str(path)))
    back = to_mujoco(model)
    assert _joint_types(back) == _joint_types(original) == ["slide", "slide", "ball", "hinge", "free"]
    assert back.nbody == original.nbody + 1  # (the fixed base's own body, "world_", without joints)
    rng = np.random.default_rng(6)
    qpos = random_qpos(original, rng)
    qvel, qacc, qfrc = rng.normal(size=(3, original.nv))
    want, got = _numbers(original, qpos, qvel, qacc, qfrc), _numbers(back, qpos, qvel, qacc, qfrc)
    for q in ("M", "h", "ID", "FD"):
        assert relative_error(got[q], want[q]) <= 1e-13, q


def test_engine_reads_frames_on_a_ball_bodys_synthetic_links() -> None:
    """The links between a body's joints (a slide, then a ball) are frames of the mujoco engine, read
    from its kinematic twin: their poses, velocities and Jacobians equal the Featherstone engine's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bridge.BridgeWarning)
        model = bridge.from_mujoco(mujoco.MjModel.from_xml_string(SLIDES_AND_BALL))
    state = random_state(model, np.random.default_rng(2))
    for rep in REPRESENTATIONS:
        kds = [bridge.KinDyn(model, e, rep) for e in ("mujoco", "featherstone")]
        for kd in kds:
            kd.set_robot_state(state.to(rep))
        for frame in ("cart__x", "cart__y", "tip", "pole"):
            for q in ("frame_transform", "frame_velocity", "frame_jacobian", "frame_bias_acc"):
                a, b = (getattr(kd, q)(frame) for kd in kds)
                assert relative_error(a, b) <= 1e-12, (rep, frame, q)


# --------------------------------------------------------------------------- what MuJoCo cannot take
def test_armature_on_free_and_planar_joints_is_refused_by_name() -> None:
    """MuJoCo adds a joint's armature to M in its own coordinates: a free joint's linear velocity in
    the joint frame's axes, a planar joint's slides. bridge's model (and Pinocchio, and the general
    Featherstone engine) adds it in the child's axes: the same M, bias forces differing by
    armature * (omega x v). to_mujoco refuses such a model naming the joints; with the armature on a
    ball joint only (the child's axes for both) MuJoCo and the engines agree."""
    model = scene_model(2, floating=False)
    armed = [
        dataclasses.replace(j, armature=0.2) if j.name in ("hang_joint", "slide_joint") else j
        for j in model.joints
    ]
    with pytest.raises(bridge.UnsupportedError, match=r"\['hang_joint', 'slide_joint'\]") as info:
        to_mujoco(model.replace(joints=tuple(armed)))
    assert "armature" in str(info.value) and "omega x v" in str(info.value)
    with pytest.raises(bridge.UnsupportedError, match="hang_joint"):
        bridge.to_mjcf(model.replace(joints=tuple(armed)))
    assert model.joint("swing_joint").armature > 0.0
    errors = mujoco_errors(model, _quiet(to_mujoco, model), 0)
    assert max(errors.values()) <= TOL


def _chain(kinds: list[JointKind], rotated: bool) -> Model:
    """A fixed base, then ``kinds`` joined through massless links (one MuJoCo body if they merge),
    the last link with mass; each rest transform rotated or a pure translation."""
    rng = np.random.default_rng(3)
    names = ["base"] + [f"l{k}" for k in range(len(kinds))]
    links = [
        Link(n, random_inertia(rng) if n in ("base", names[-1]) else SpatialInertia.zero()) for n in names
    ]
    joints = []
    for k, kind in enumerate(kinds):
        rest = random_transform(rng) if rotated else Transform.from_translation(rng.normal(size=3))
        axis = rng.normal(size=3) if kind not in (JointKind.BALL, JointKind.FREE) else np.zeros(3)
        origin = rng.normal(size=3) * 0.2 if kind in (JointKind.REVOLUTE, JointKind.BALL) else np.zeros(3)
        joints.append(Joint(f"j{k}", kind, names[k], names[k + 1], rest, axis, origin))
    return Model("chain", links, joints, (), "base", tuple(j.name for j in joints), floating=False)


@pytest.mark.parametrize(
    ("kinds", "rotated", "why"),
    [
        ([JointKind.BALL, JointKind.PRISMATIC], True, "ball's coordinates are in its body's axes"),
        ([JointKind.BALL, JointKind.REVOLUTE], False, "ball followed by rotation"),
        ([JointKind.FREE, JointKind.PRISMATIC], False, "MuJoCo takes at most 6 in one body"),
        (
            [JointKind.PLANAR, JointKind.PLANAR, JointKind.PRISMATIC],
            False,
            "MuJoCo takes at most 6 in one body",
        ),
    ],
)
def test_chains_mujoco_cannot_merge_say_why(kinds: list[JointKind], rotated: bool, why: str) -> None:
    """A chain of massless links merges into one MuJoCo body only if MuJoCo's joints there are the
    neutral ones: not through a ball (or free joint) followed by a rotated joint frame (MuJoCo's ball
    coordinates are in the body's axes) nor to a rotation after a ball (MuJoCo refuses it), and with at
    most 6 DOFs (MuJoCo's limit per body). Else the
    massless link is a body of its own, which MuJoCo refuses: the error names the link and why."""
    model = _chain(kinds, rotated)
    with pytest.raises(bridge.UnsupportedError, match=r"massless link 'l\d' cannot be merged") as info:
        to_mujoco(model)
    assert why in str(info.value)


@pytest.mark.parametrize(
    "kinds",
    [
        [JointKind.REVOLUTE, JointKind.BALL, JointKind.PRISMATIC],
        [JointKind.PRISMATIC, JointKind.PRISMATIC, JointKind.BALL],
        [JointKind.PLANAR, JointKind.REVOLUTE],
        [JointKind.FREE],
    ],
)
def test_chains_with_wide_joints_merge_exactly(kinds: list[JointKind]) -> None:
    """Through translated joint frames a chain with a ball, planar or free joint is one MuJoCo body
    (the ball's centre moved into the body frame, a planar joint's axes rotated with the frames): its
    numbers equal the engines' on the neutral chain."""
    model = _chain(kinds, rotated=False)
    mm = _quiet(to_mujoco, model)
    assert mm.nbody == 3  # the world, the base and one body
    errors = mujoco_errors(model, mm, 1)
    assert max(errors.values()) <= TOL, errors
