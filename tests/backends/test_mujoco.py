"""The MuJoCo backend: convention, states, model conversion, MJCF loading and the engine.

Every test needs MuJoCo (the ``[mujoco]`` extra, part of the test extra); without it they skip
with the reason printed. Engine agreement: 1e-10 relative with the other engines on hand-built,
random and real robots (the full robot and random sweeps are marked slow).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.conventions.convert import velocity_change, velocity_transform
from bridge.spatial import Transform
from bridge.validation.check import available_engines, cross_validate
from tests.helpers import assert_close, assert_single_state_path_equals_batched, random_state, small_model

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")

from bridge.backends.mujoco import (  # noqa: E402
    from_mujoco,
    from_mujoco_state,
    load_mjcf,
    mujoco_dof_permutation,
    to_mujoco,
    to_mujoco_state,
)
from bridge.backends.mujoco.model import mujoco_body_name, rigid_body_flags  # noqa: E402
from tests.backends.mujoco_reference import assert_engines_equal_mujoco, engines_for  # noqa: E402

MJCF = Path(__file__).resolve().parents[2] / "models" / "mjcf"
ALL = ("pinocchio", "idyntree", "featherstone", "mujoco")


def _data(mm, qpos, qvel):
    d = mujoco.MjData(mm)
    d.qpos[:] = qpos
    d.qvel[:] = qvel
    mujoco.mj_forward(mm, d)
    return d


def _full_m(mm, d) -> np.ndarray:
    M = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, d, M)
    return M


def _assert_ok(report) -> None:
    assert report.results, "cross-validation compared nothing"
    assert report.ok, "\n" + str(report)


# --------------------------------------------------------------------------- convention
def test_free_joint_qvel_by_finite_differences_of_mj_integratePos() -> None:
    """qvel = [p_dot in world axes; omega in body axes]; qpos = [p; qw qx qy qz]."""
    rng = np.random.default_rng(0)
    model = small_model(rng)
    mm = to_mujoco(model)
    st = random_state(model, rng, "body")
    qpos, qvel = to_mujoco_state(model, st)
    H = st.world_H_base
    np.testing.assert_allclose(qpos[:3], H.translation, atol=1e-15)
    np.testing.assert_allclose(qpos[3:7], H.as_quaternion_wxyz(), atol=1e-15)
    h = 1e-6
    moved = []
    for dt in (h, -h):
        q = qpos.copy()
        mujoco.mj_integratePos(mm, q, qvel, dt)
        moved.append(Transform.from_quaternion_wxyz(q[3:7], q[:3]))
    p_dot = (moved[0].translation - moved[1].translation) / (2 * h)
    R_dot = (moved[0].rotation - moved[1].rotation) / (2 * h)
    R = H.rotation
    W = R.T @ R_dot
    np.testing.assert_allclose(qvel[:3], p_dot, rtol=1e-8, atol=1e-8)  # world axes
    np.testing.assert_allclose(qvel[3:6], [W[2, 1], W[0, 2], W[1, 0]], rtol=1e-8, atol=1e-8)  # body axes
    # and it is neither BODY nor MIXED
    v_body = st.base_velocity
    assert not np.allclose(qvel[:6], v_body)
    assert not np.allclose(qvel[:6], st.base_velocity_in("mixed"))


def test_transforms_to_mixed_and_body() -> None:
    """To MIXED: T = blkdiag(1, R), T_dot nu = 0; to BODY: T = blkdiag(R^T, 1),
    T_dot nu = (-omega x R^T p_dot, 0); T_dot is the derivative of T along the motion."""
    rng = np.random.default_rng(1)
    model = small_model(rng)
    st = random_state(model, rng, "mixed")
    R = st.world_H_base.rotation
    _, qvel = to_mujoco_state(model, st)
    p_dot, omega = qvel[:3], qvel[3:6]
    T, _ = velocity_transform(model, st, "mujoco", "mixed")
    np.testing.assert_allclose(T[:3, :3], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(T[3:6, 3:6], R, atol=1e-15)
    cov = velocity_change(model, st, "mujoco", "mixed")
    np.testing.assert_allclose(cov.bias_acceleration, 0.0, atol=1e-14)
    cov = velocity_change(model, st, "mujoco", "body")
    T = cov.matrix()
    np.testing.assert_allclose(T[:3, :3], R.T, atol=1e-15)
    np.testing.assert_allclose(T[3:6, 3:6], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(cov.bias_acceleration[:3], -np.cross(omega, R.T @ p_dot), atol=1e-13)
    np.testing.assert_allclose(cov.bias_acceleration[3:], 0.0, atol=1e-15)
    # T_dot by central differences along the state's motion, for every pair
    h = 1e-6
    nu_dot = rng.normal(size=model.nv)
    for a, b in (("mujoco", "body"), ("inertial", "mujoco"), ("mujoco", "mixed"), ("pinocchio", "mujoco")):
        _, Td = velocity_transform(model, st, a, b)
        Ts = [
            velocity_transform(model, bridge.integrate(st, nu_dot[:6], nu_dot[6:], dt), a, b)[0]
            for dt in (h, -h)
        ]
        assert_close(Td, (Ts[0] - Ts[1]) / (2 * h), rtol=1e-7, what=f"T_dot {a} -> {b}")


def test_velocity_converts_and_qacc_is_the_derivative_of_qvel() -> None:
    rng = np.random.default_rng(2)
    model = small_model(rng)
    st = random_state(model, rng, "inertial")
    nu_dot = rng.normal(size=model.nv)
    cov = velocity_change(model, st, "inertial", "mujoco")
    _, qvel = to_mujoco_state(model, st)
    np.testing.assert_allclose(cov.velocity(st.nu), qvel, atol=1e-13)
    qacc = cov.acceleration(nu_dot)
    h = 1e-5
    qv = [to_mujoco_state(model, bridge.integrate(st, nu_dot[:6], nu_dot[6:], dt))[1] for dt in (h, -h)]
    assert_close(qacc, (qv[0] - qv[1]) / (2 * h), rtol=1e-7, what="qacc")


def test_state_round_trip_is_exact() -> None:
    rng = np.random.default_rng(3)
    for floating in (True, False):
        model = small_model(rng, floating)
        mm = to_mujoco(model)
        qpos = rng.normal(size=(4, 3, mm.nq))
        if floating:
            qpos[..., 3:7] /= np.linalg.norm(qpos[..., 3:7], axis=-1, keepdims=True)
            qpos[..., 3] = np.abs(qpos[..., 3])  # one of the two quaternions of a rotation
        qvel = rng.normal(size=(4, 3, mm.nv))
        for rep in ("body", "inertial", "mixed"):
            st = from_mujoco_state(model, qpos, qvel, rep)
            q2, v2 = to_mujoco_state(model, st)
            np.testing.assert_allclose(q2, qpos, rtol=0, atol=1e-14)
            np.testing.assert_allclose(v2, qvel, rtol=0, atol=1e-13)


def test_dof_order_is_body_order_matched_by_name() -> None:
    model = small_model(np.random.default_rng(4))
    mm = to_mujoco(model)
    names = [mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mm.njnt)]
    dofs = [model.dof_names[i] for i in mujoco_dof_permutation(model)]
    assert names[1:] == dofs
    assert dofs != list(model.dof_names)  # the model's own order differs
    adr = [int(mm.jnt_dofadr[mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, n)]) for n in dofs]
    assert adr == list(range(6, 6 + len(dofs)))


# --------------------------------------------------------------------------- model conversion
def test_to_mujoco_keeps_every_frame_and_is_rigid_body_only() -> None:
    model = small_model(np.random.default_rng(5))
    mm = to_mujoco(model)
    assert mm.ngeom == 0 and mm.neq == 0 and mm.nu == 0
    assert not np.any(mm.dof_armature) and not np.any(mm.dof_damping) and not np.any(mm.jnt_stiffness)
    assert mm.opt.disableflags & rigid_body_flags(mujoco) == rigid_body_flags(mujoco)
    names = {mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(mm.nbody)}
    names |= {mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_SITE, s) for s in range(mm.nsite)}
    assert set(model.frame_names) <= names
    assert mm.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE


def test_from_mujoco_round_trip_dynamics() -> None:
    """to_mujoco -> from_mujoco: the same dynamics (every engine agrees on the model read back)."""
    model = small_model(np.random.default_rng(6))
    back = from_mujoco(to_mujoco(model))
    assert back.floating and back.n_dofs == model.n_dofs
    rng = np.random.default_rng(7)
    st = random_state(model, rng, "body")
    st_back = bridge.State(
        st.world_H_base,
        st.s[[model.dof_names.index(d) for d in back.dof_names]],
        st.base_velocity,
        st.s_dot[[model.dof_names.index(d) for d in back.dof_names]],
        "body",
    )
    kd = bridge.KinDyn(model, "pinocchio", "body")
    kd.set_robot_state(st)
    kb = bridge.KinDyn(back, "pinocchio", "body")
    kb.set_robot_state(st_back)
    perm = np.r_[np.arange(6), 6 + np.array([model.dof_names.index(d) for d in back.dof_names])]
    assert_close(kb.mass_matrix(), kd.mass_matrix()[np.ix_(perm, perm)], what="M")
    assert_close(kb.bias_forces(), kd.bias_forces()[perm], what="h")
    assert_close(kb.frame_transform("tool"), kd.frame_transform("tool"), what="tool")


def test_massless_moving_link_is_refused_with_its_name() -> None:
    model = bridge.random_model(4, seed=0, massless_probability=0.0, joint_kinds=("revolute",))
    link = model.links[-1]
    massless = model.replace(
        links=(
            *model.links[:-1],
            bridge.Link(link.name, bridge.SpatialInertia(0.0, [0, 0, 0], np.zeros((3, 3)))),
        )
    )
    with pytest.raises(bridge.UnsupportedError, match=link.name):
        to_mujoco(massless)


def _zero_mass_links(floating: bool) -> bridge.Model:
    """A random chain whose second-to-last link is massless (between two joints) and whose last
    link is a point mass (mass, no rotational inertia): what URDF files have and MuJoCo refuses."""
    model = bridge.random_model(
        5, seed=3, massless_probability=0.0, joint_kinds=("revolute",), floating=floating, branching=0.0
    )
    *keep, mid, last = model.links
    return model.replace(
        links=(
            *keep,
            bridge.Link(mid.name, bridge.SpatialInertia(0.0, [0, 0, 0], np.zeros((3, 3)))),
            bridge.Link(last.name, bridge.SpatialInertia(1.5, [0.1, -0.2, 0.05], np.zeros((3, 3)))),
        )
    )


@pytest.mark.parametrize("floating", [True, False])
def test_bound_mass_and_inertia_floor_zero_masses_like_mujocos_compiler(floating: bool) -> None:
    """to_mujoco refuses zero moments naming the link and the option; with floors of 1e-12 it
    warns, naming it, and MuJoCo's M, inverse and forward dynamics equal bridge's to the floor's size
    (1e-9 relative). The massless link between two joints needs no floor: it is merged into the
    next body (several joints in one body), exactly, so neither message names it."""
    model = _zero_mass_links(floating)
    mid, last = model.links[-2].name, model.links[-1].name
    with pytest.raises(bridge.UnsupportedError, match="bound_mass") as info:
        to_mujoco(model)
    assert last in str(info.value) and f"{mid!r}" not in str(info.value)
    with pytest.warns(bridge.BridgeWarning, match="bound_mass=1e-12") as rec:
        mm = to_mujoco(model, bound_mass=1e-12, bound_inertia=1e-12)
    assert last in str(rec[0].message) and f"{mid!r}" not in str(rec[0].message)
    rng = np.random.default_rng(4)
    kd = bridge.KinDyn(model, "pinocchio", "mixed")
    for _ in range(3):
        st = random_state(model, rng, "mixed")
        kd.set_robot_state(st)
        cov = velocity_change(model, st, "mixed", "mujoco")
        qpos, qvel = to_mujoco_state(model, st)
        if not floating:  # a fixed base is welded at the identity: move it to the state's pose
            b = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_BODY, mujoco_body_name(model.base))
            H = st.world_H_base
            mm.body_pos[b], mm.body_quat[b] = H.translation, H.as_quaternion_wxyz()
        d = _data(mm, qpos, qvel)
        T_inv = np.linalg.inv(cov.matrix())
        assert_close(_full_m(mm, d), T_inv.T @ kd.mass_matrix() @ T_inv, rtol=1e-9, what="M")
        base_acc = rng.normal(size=6) if floating else None
        s_ddot = rng.normal(size=model.n_dofs)
        nu_dot = s_ddot if base_acc is None else np.r_[base_acc, s_ddot]
        d.qacc[:] = cov.acceleration(nu_dot)
        mujoco.mj_inverse(mm, d)
        tau_id = kd.inverse_dynamics(base_acc, s_ddot)
        assert_close(cov.force_back(d.qfrc_inverse.copy()), tau_id, rtol=1e-9, what="ID")
        tau = rng.normal(size=model.n_dofs)
        d = _data(mm, qpos, qvel)
        d.qfrc_applied[:] = cov.force(np.r_[np.zeros(model.nv - model.n_dofs), tau])
        mujoco.mj_forward(mm, d)
        assert_close(cov.acceleration_back(d.qacc.copy()), kd.forward_dynamics(tau), rtol=1e-9, what="FD")


def test_bound_mass_and_inertia_are_checked() -> None:
    model = _zero_mass_links(True)
    for bad in (-1.0, 1e-20, float("nan"), float("inf"), "x"):
        with pytest.raises(bridge.InvalidValueError, match="bound_mass"):
            to_mujoco(model, bound_mass=bad, bound_inertia=1e-12)
    with pytest.raises(bridge.UnsupportedError, match="1e-15"):  # the moments stay zero
        to_mujoco(model, bound_mass=1e-12)


def test_missing_mujoco_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(bridge.BridgeError, match=r"\[mujoco\]"):
        bridge.KinDyn(small_model(np.random.default_rng(0)), engine="mujoco")


def test_import_bridge_does_not_import_mujoco() -> None:
    code = "import sys, bridge; bridge.KinDyn; bridge.to_mujoco; print('mujoco' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_mujoco_joins_cross_validation_when_installed() -> None:
    assert "mujoco" in available_engines()


# --------------------------------------------------------------------------- engine agreement
@pytest.mark.parametrize("floating", [True, False])
def test_small_model_every_quantity_every_representation(floating: bool) -> None:
    model = small_model(np.random.default_rng(0), floating)
    _assert_ok(cross_validate(model, engines=ALL, samples=8, seed=2))


def test_batched_states_and_fixed_base_pose() -> None:
    rng = np.random.default_rng(8)
    model = small_model(rng, floating=False)
    st = random_state(model, rng, "inertial", batch=(2, 3))
    g = rng.normal(size=(2, 1, 3))
    out = {}
    for engine in ("pinocchio", "mujoco"):
        kd = bridge.KinDyn(model, engine, "inertial")
        kd.set_robot_state(st, g)
        out[engine] = (
            kd.mass_matrix(),
            kd.bias_forces(),
            kd.gravity_forces(),
            kd.frame_transform("tool"),
            kd.frame_bias_acc("tool"),
            kd.com_position(),
            kd.centroidal_momentum(),
        )
        assert kd.mass_matrix().shape == (2, 3, model.nv, model.nv)
    for a, b in zip(out["pinocchio"], out["mujoco"], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("rep", ["body", "inertial", "mixed"])
@pytest.mark.parametrize("floating", [True, False])
def test_single_state_path_equals_the_batched_path(rep: str, floating: bool) -> None:
    assert_single_state_path_equals_batched("mujoco", small_model(np.random.default_rng(5), floating), rep)


@pytest.mark.parametrize("seed", [0, 1])
def test_random_models(seed: int) -> None:
    model = bridge.random_model(8, seed=seed, massless_probability=0.0)
    _assert_ok(cross_validate(model, engines=("pinocchio", "mujoco"), samples=5, seed=seed))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 12))
@pytest.mark.parametrize("floating", [True, False])
def test_random_models_sweep(seed: int, floating: bool) -> None:
    model = bridge.random_model(12, seed=seed, massless_probability=0.0, floating=floating)
    _assert_ok(cross_validate(model, engines=ALL, samples=5, seed=seed))


@pytest.mark.parametrize("robot", ["iCubGazeboV2_5", "solo12"])
def test_real_robots(robot: str) -> None:
    from bridge.robots import robot_path

    model = bridge.load_urdf(robot_path(robot))
    _assert_ok(cross_validate(model, engines=("pinocchio", "mujoco"), samples=3, seed=0, fd_samples=1))


@pytest.mark.slow
def test_every_robot_mujoco_accepts() -> None:
    from bridge.robots import robot_names, robot_path

    checked = 0
    for name in robot_names():
        try:
            model = bridge.load_urdf(robot_path(name))
            to_mujoco(model)
        except bridge.BridgeError:
            continue  # not loadable by bridge's defaults, or refused by MuJoCo (massless moving links)
        _assert_ok(cross_validate(model, engines=ALL, samples=3, seed=0, fd_samples=1))
        checked += 1
    assert checked >= 20


# --------------------------------------------------------------------------- MJCF
@pytest.mark.parametrize("name", ["arm", "quadruped"])
def test_mjcf_other_engines_equal_mujoco(name: str) -> None:
    """bridge's engines on load_mjcf(file) equal MuJoCo's own numbers on the compiled file (compiled
    inertias from geoms, defaults, includes, joint ref, several joints in one body, armature:
    MuJoCo's diag(dof_armature) in M and armature * qacc in mj_inverse)."""
    path = MJCF / f"{name}.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # damping (arm.xml) is not part of the model
        model = load_mjcf(path)
    mm = mujoco.MjModel.from_xml_path(str(path))
    assert np.any(mm.dof_armature)
    assert_close(model.armature, np.array(mm.dof_armature)[mm.nv - model.n_dofs :])  # MuJoCo's DOF order
    # every installed engine, and the mujoco engine too when MuJoCo accepts bridge's rebuild (no
    # massless moving links); M, h, ID, FD, Jacobians and site poses to 1e-10 relative
    assert_engines_equal_mujoco(model, mm, np.random.default_rng(9), engines_for(model))


def test_mjcf_armature_is_read_and_damping_warned() -> None:
    with pytest.warns(UserWarning, match="damping") as record:
        arm = load_mjcf(MJCF / "arm.xml")
    assert not any("armature" in str(w.message) for w in record)
    assert arm.joint("wrist_roll").armature == arm.joint("wrist_pitch").armature == 0.05
    assert arm.joint("elbow").armature == 0.0
    assert_close(arm.armature, [0, 0, 0, 0, 0.05, 0.05])
    # the armature goes back to MuJoCo in its DOF order, and a free joint's armature is warned
    # about and dropped
    model = bridge.random_model(6, seed=2, massless_probability=0.0, armature_probability=0.7)
    assert np.any(model.armature)
    mm = to_mujoco(model)
    assert_close(np.array(mm.dof_armature)[6:], model.armature[mujoco_dof_permutation(model)])
    assert not np.any(mm.dof_armature[:6])
    spec = mujoco.MjSpec.from_file(str(MJCF / "quadruped.xml"))
    spec.joints[0].armature = 0.3  # the free joint
    with pytest.warns(UserWarning, match="free-joint armature"):
        quad = from_mujoco(spec.compile())
    assert quad.joint("fl_knee").armature == 0.02


def test_mjcf_model_structure() -> None:
    with pytest.warns(UserWarning):
        arm = load_mjcf(MJCF / "arm.xml")
    assert not arm.floating and arm.base == "world"
    assert arm.dof_names == ("shoulder_yaw", "shoulder_pitch", "elbow", "extend", "wrist_roll", "wrist_pitch")
    assert arm.link("wrist__wrist_roll").mass == 0.0  # two joints in one body: a massless link between
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # its only extra is armature, which the model carries
        quad = load_mjcf(MJCF / "quadruped.xml")
    assert quad.floating and quad.base == "torso" and "knee" in quad.dof_names  # from the <include>


def test_free_joint_below_the_root_is_refused_by_name() -> None:
    """MuJoCo's compiler refuses a free joint below the world's children (its message names the body
    only): the error names the file and the joint."""
    with pytest.raises(bridge.UnsupportedError, match="not at the root") as info:
        load_mjcf(MJCF / "nested_free.xml")
    assert "nested_free.xml" in str(info.value) and "'loose_free'" in str(info.value)
    assert "children of the world body" in str(info.value)


def test_ball_joints_and_several_free_bodies_load() -> None:
    """A ball below a floating base stays a floating model with a BALL joint turning about the joint's
    pos; two free bodies are a scene: the world body as the fixed base, a FREE joint at the identity
    to each free body (MuJoCo's free-joint qpos is the body's pose in the world), the DOFs in
    MuJoCo's order; both equal MuJoCo to 1e-10 in every engine that takes them."""
    ball = load_mjcf(MJCF / "ball_joint.xml")
    assert ball.floating and ball.base == "base" and ball.joint("socket").kind is bridge.JointKind.BALL
    np.testing.assert_array_equal(ball.joint("socket").axis_origin, [0.0, 0.0, 0.0])
    two = load_mjcf(MJCF / "two_free.xml")
    assert not two.floating and two.base == "world"
    assert two.dof_names == ("robot_free", "arm_hinge", "box_free")
    for name in ("robot_free", "box_free"):
        joint = two.joint(name)
        assert joint.kind is bridge.JointKind.FREE and joint.parent == "world"
        np.testing.assert_array_equal(joint.parent_H_child.matrix, np.eye(4))
    for model, name in ((ball, "ball_joint"), (two, "two_free")):
        for k, rep in enumerate(("body", "inertial", "mixed")):
            mm = mujoco.MjModel.from_xml_path(str(MJCF / f"{name}.xml"))
            errors = assert_engines_equal_mujoco(model, mm, np.random.default_rng(k), representation=rep)
            assert {"pinocchio FD", "featherstone FD", "mujoco FD"} <= set(errors)


def test_mjcf_site_named_like_a_body() -> None:
    """MuJoCo names bodies and sites apart: a site named like a body becomes frame "<name>__site"
    (with a BridgeWarning; it used to raise a ModelError for the duplicate name) at MuJoCo's site
    pose; a site on a static body left out of a floating model is left out too."""
    path = MJCF / "site_names.xml"
    with pytest.warns(bridge.BridgeWarning, match="'tool' -> 'tool__site'"):
        model = load_mjcf(path)
    assert "tool__site" in model.frame_names and "tool" in model.link_names
    assert "post_top" not in model.frame_names and model.base == "base"
    mm = mujoco.MjModel.from_xml_path(str(path))
    errors = assert_engines_equal_mujoco(model, mm, np.random.default_rng(13))
    assert {"pinocchio sites", "pinocchio J"} <= set(errors)
    st = random_state(model, np.random.default_rng(14))
    qpos, qvel = to_mujoco_state(model, st)
    d = _data(mm, qpos, qvel)
    kd = bridge.KinDyn(model, "pinocchio")
    kd.set_robot_state(st)
    site = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_SITE, "tool")
    H = kd.frame_transform("tool__site")
    np.testing.assert_allclose(H[:3, 3], d.site_xpos[site], atol=1e-12)
    np.testing.assert_allclose(H[:3, :3], d.site_xmat[site].reshape(3, 3), atol=1e-12)


def test_mjcf_passive_forces_outside_rigid_body_dynamics_are_warned() -> None:
    """Gravity compensation and fluid forces are MuJoCo passive forces, not rigid-body dynamics:
    load_mjcf names them in a BridgeWarning (it used to drop them silently); under the rigid-body
    flags MuJoCo applies no passive force, and every engine equals MuJoCo to 1e-10."""
    path = MJCF / "passive_extras.xml"
    with pytest.warns(bridge.BridgeWarning, match="gravity compensation") as record:
        model = load_mjcf(path)
    assert any("fluid forces" in str(w.message) for w in record)
    assert record[0].filename == __file__  # the warning points at the caller of load_mjcf
    mm = mujoco.MjModel.from_xml_path(str(path))
    assert_engines_equal_mujoco(model, mm, np.random.default_rng(12))
    mm.opt.disableflags = rigid_body_flags(mujoco)
    d = mujoco.MjData(mm)
    d.qvel[:] = 1.0
    mujoco.mj_forward(mm, d)
    assert not np.any(d.qfrc_passive)


def test_load_model_dispatches_on_content(tmp_path) -> None:
    with pytest.warns(UserWarning):
        assert bridge.load_model(MJCF / "arm.xml").name == "mjcf_arm"
    urdf = Path(__file__).resolve().parents[2] / "models" / "offsets.urdf"
    assert bridge.load_model(urdf).name == bridge.load_urdf(urdf).name
    renamed = tmp_path / "robot.model"
    renamed.write_text((MJCF / "nested_free.xml").read_text())
    with pytest.raises(bridge.UnsupportedError):
        bridge.load_model(renamed)
    with pytest.raises(bridge.ModelFileNotFoundError):
        bridge.load_model(tmp_path / "missing.xml")


def test_armature_adds_to_the_mass_matrix_diagonal() -> None:
    """MuJoCo's M = the rigid-body M + diag(dof_armature), in MuJoCo's qvel coordinates (also on the
    free joint's six DOFs); mj_inverse adds armature * qacc."""
    model = small_model(np.random.default_rng(10))
    mm = to_mujoco(model)
    rng = np.random.default_rng(11)
    qpos, qvel = to_mujoco_state(model, random_state(model, rng))
    d = _data(mm, qpos, qvel)
    M0 = _full_m(mm, d)
    arm = rng.uniform(0.01, 0.1, mm.nv)
    mm.dof_armature[:] = arm
    mujoco.mj_setConst(mm, mujoco.MjData(mm))  # (MuJoCo 4's "simple" DOFs take M from dof_M0)
    d = _data(mm, qpos, qvel)
    np.testing.assert_allclose(_full_m(mm, d), M0 + np.diag(arm), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("seed", range(20))
def test_dof_order_with_fixed_joints(seed: int) -> None:
    """Links joined by fixed joints are one MuJoCo body; the DOF order stays the model's depth-first
    order of movable joints."""
    model = bridge.random_model(10, seed=seed, massless_probability=0.0)
    mm = to_mujoco(model)
    names = [mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(1, mm.njnt)]
    assert names == [model.dof_names[i] for i in mujoco_dof_permutation(model)]


def test_default_engines_leave_out_mujoco_when_it_refuses_the_model() -> None:
    model = bridge.random_model(4, seed=0, massless_probability=0.0, joint_kinds=("revolute",))
    link = model.links[-1]
    zero = bridge.SpatialInertia(0.0, [0, 0, 0], np.zeros((3, 3)))
    massless = model.replace(links=(*model.links[:-1], bridge.Link(link.name, zero)))
    report = cross_validate(massless, samples=2, identities=False)
    assert "mujoco" not in report.engines and any("mujoco" in n for n in report.notes)
    assert "mujoco" in cross_validate(model, samples=2, identities=False).engines
