"""The MuJoCo cells of docs/conventions.md, checked against the installed MuJoCo.

Imported by tests/docs/test_conventions.py (whose page check looks up cell tests among its own
names), so that the MuJoCo column keeps its tests in modules of its own: this one, and
tests/docs/_conventions_mujoco_dynamics.py for the dynamics tables (frame and bias accelerations,
momentum, quantities after the mass matrix), which uses this module's fixtures and helpers. Most
cells use
``to_mujoco`` of the small test model (every joint kind, non-zero axis origins, a site ``tool``)
at a random state; the model-structure cells use MuJoCo's own URDF compiler on
``iCubGazeboV2_5``. Velocity and acceleration cells are checked against central finite
differences of MuJoCo's own poses and velocities along motions made with ``mj_integratePos``
(no bridge involved); bridge's numbers are compared as well where the cell names them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from types import SimpleNamespace

import numpy as np
import pytest

import bridge
from bridge.spatial import Transform
from tests.docs._math import quat_xyzw_to_matrix, rot_z
from tests.helpers import assert_close, assert_not_close, random_state, small_model

__all__ = [
    "icub_mujoco",
    "mj_case",
    "test_axis_mujoco",
    "test_base_pose_mujoco",
    "test_base_vel_mujoco",
    "test_bias_forces_mujoco",
    "test_change_mujoco",
    "test_compose_mujoco",
    "test_count_mujoco",
    "test_default_mujoco",
    "test_dof_order_mujoco",
    "test_fixed_mujoco",
    "test_gen_acc_mujoco",
    "test_gen_force_mujoco",
    "test_joint_pos_mujoco",
    "test_mass_mujoco",
    "test_order_mujoco",
    "test_pose_mujoco",
    "test_quat_mujoco",
    "test_rep_body_mujoco",
    "test_rep_inertial_mujoco",
    "test_rep_mixed_mujoco",
    "test_xmat_mujoco",
]

SWAP = np.array([3, 4, 5, 0, 1, 2])  # angular first <-> linear first
H = 1e-5  # central differences: truncation ~ H^2, rounding ~ 1e-16 / H
FD_RTOL = 1e-8
LINKS = ("c", "f")  # links that are MuJoCo bodies (to_mujoco names the body after the link)
SITE = "tool"  # an extra frame: a MuJoCo site on body "d"


def _skip_without_mujoco():
    return pytest.importorskip("mujoco", reason="MuJoCo is not installed (pip install '.[mujoco]')")


def _case(seed: int = 21) -> SimpleNamespace:
    mujoco = _skip_without_mujoco()
    from bridge.backends.mujoco import to_mujoco, to_mujoco_state

    rng = np.random.default_rng(seed)
    model = small_model(rng)
    mm = to_mujoco(model)
    st = random_state(model, rng, "body")
    qpos, qvel = to_mujoco_state(model, st)
    d = mujoco.MjData(mm)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(mm, d)
    return SimpleNamespace(
        mj=mujoco,
        model=model,
        mm=mm,
        d=d,
        st=st,
        qpos=qpos,
        qvel=qvel,
        qacc=rng.normal(size=mm.nv),
        rng=rng,
        g=np.array(mm.opt.gravity),
    )


@pytest.fixture(scope="module")
def mj_case():
    """The small test model in MuJoCo through ``to_mujoco`` at a random state given as BODY
    (``st``), its ``(qpos, qvel)``, an ``MjData`` after ``mj_forward`` (do not modify it: use
    :func:`_data`) and a random ``qacc``."""
    return _case()


def _data(c, t: float = 0.0, qacc: np.ndarray | None = None):
    """A fresh MjData at time t of the motion from (qpos, qvel) with constant ``qacc`` (zero if
    None): ``qvel(t) = qvel + t qacc`` and ``qpos(t) = mj_integratePos(qpos, qvel + t/2 qacc, t)``,
    exact for ``qacc = 0`` and O(t^3) otherwise; positions and velocities computed, and the
    accelerations (``cacc``) of ``qacc`` by ``mj_rnePostConstraint``."""
    mj, m = c.mj, c.mm
    a = np.zeros(m.nv) if qacc is None else qacc
    d = mj.MjData(m)
    q = c.qpos.copy()
    mj.mj_integratePos(m, q, c.qvel + 0.5 * t * a, t)
    d.qpos[:] = q
    d.qvel[:] = c.qvel + t * a
    mj.mj_forward(m, d)
    d.qacc[:] = a
    mj.mj_rnePostConstraint(m, d)
    return d


def _fd(f):
    return (np.asarray(f(H)) - np.asarray(f(-H))) / (2 * H)


def _obj(c, frame: str) -> tuple[int, int, int]:
    """(object type, object id, body id) of a link (a body) or of the site."""
    OBJ = c.mj.mjtObj
    if frame == SITE:
        sid = c.mj.mj_name2id(c.mm, OBJ.mjOBJ_SITE, frame)
        return OBJ.mjOBJ_SITE, sid, int(c.mm.site_bodyid[sid])
    bid = c.mj.mj_name2id(c.mm, OBJ.mjOBJ_BODY, frame)
    return OBJ.mjOBJ_XBODY, bid, bid


def _pose(c, d, frame: str) -> np.ndarray:
    """world_H_frame (4, 4) from MuJoCo's ``xpos``/``xmat`` (or ``site_xpos``/``site_xmat``)."""
    objtype, oid, _ = _obj(c, frame)
    out = np.eye(4)
    if objtype == c.mj.mjtObj.mjOBJ_SITE:
        out[:3, :3], out[:3, 3] = d.site_xmat[oid].reshape(3, 3), d.site_xpos[oid]
    else:
        out[:3, :3], out[:3, 3] = d.xmat[oid].reshape(3, 3), d.xpos[oid]
    return out


def _vee(W: np.ndarray) -> np.ndarray:
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def _definition(Hm: np.ndarray, Hd: np.ndarray, rep: str) -> np.ndarray:
    """The page's definitions (linear first) from a pose and its derivative."""
    R, o, Rd, od = Hm[:3, :3], Hm[:3, 3], Hd[:3, :3], Hd[:3, 3]
    if rep == "body":
        return np.concatenate([R.T @ od, _vee(R.T @ Rd)])
    if rep == "inertial":
        return np.concatenate([od - (Rd @ R.T) @ o, _vee(Rd @ R.T)])
    return np.concatenate([od, _vee(Rd @ R.T)])


def _fd_velocity(c, frame: str, rep: str) -> np.ndarray:
    """The velocity of ``frame`` in ``rep`` (linear first) from central differences of MuJoCo's
    poses along the motion of constant ``qvel``."""
    return _definition(_pose(c, c.d, frame), _fd(lambda t: _pose(c, _data(c, t), frame)), rep)


def _object_velocity(c, d, frame: str, local: int) -> np.ndarray:
    objtype, oid, _ = _obj(c, frame)
    res = np.zeros(6)
    c.mj.mj_objectVelocity(c.mm, d, objtype, oid, res, local)
    return res


def _object_acceleration(c, d, frame: str, local: int) -> np.ndarray:
    objtype, oid, _ = _obj(c, frame)
    res = np.zeros(6)
    c.mj.mj_objectAcceleration(c.mm, d, objtype, oid, res, local)
    return res


def _kd(c, rep: str, model=None, st=None) -> bridge.KinDyn:
    kd = bridge.KinDyn(c.model if model is None else model, "pinocchio", rep)
    kd.set_robot_state((c.st if st is None else st).to(rep))
    return kd


def _full_m(c, d) -> np.ndarray:
    M = np.zeros((c.mm.nv, c.mm.nv))
    c.mj.mj_fullM(c.mm, d, M)
    return M


# ------------------------------------------------------------------ spatial algebra
def test_order_mujoco(mj_case):
    c = mj_case
    mj, R = c.mj, c.st.world_H_base.rotation
    res = np.zeros(6)
    mj.mj_objectVelocity(c.mm, c.d, mj.mjtObj.mjOBJ_XBODY, 1, res, 1)
    assert_close(res[:3], c.qvel[3:6])
    assert_close(res[3:], c.st.base_velocity[:3])  # angular first
    assert_close(c.d.cvel[1][:3], R @ c.qvel[3:6])  # cvel too: angular first
    jacp, jacr = np.zeros((3, c.mm.nv)), np.zeros((3, c.mm.nv))
    mj.mj_jac(c.mm, c.d, jacp, jacr, c.d.xpos[1].copy(), 1)
    assert_close(jacr @ c.qvel, R @ c.qvel[3:6])
    assert_close(jacp @ c.qvel, c.qvel[:3])


def test_pose_mujoco(mj_case, poses):
    c = mj_case
    mj = c.mj
    kd = _kd(c, "body")
    for link in LINKS:
        bid = mj.mj_name2id(c.mm, mj.mjtObj.mjOBJ_BODY, link)
        assert_close(_pose(c, c.d, link), kd.frame_transform(link))  # xpos, xmat: world_H_link
        M = np.zeros(9)
        mj.mju_quat2Mat(M, c.d.xquat[bid])
        assert_close(M.reshape(3, 3), c.d.xmat[bid].reshape(3, 3))
    assert_close(_pose(c, c.d, SITE), kd.frame_transform(SITE))  # site_xpos, site_xmat
    H, p = poses.A_H_B, poses.p
    res = np.zeros(3)
    mj.mju_trnVecPose(res, H.translation, H.as_quaternion_wxyz(), p)
    assert_close(res, H.apply(p))  # B coordinates to A coordinates


def test_xmat_mujoco(poses):
    """mju_transformSpatial(res, x, flg_force, A_o_B, A_o_P, A_R_B): x at P in A's axes, moved
    to B's origin and axes; with P = A's origin, B_X_A x (motion) and B_X_A^-T x (force)."""
    mj = _skip_without_mujoco()
    A_H_B = poses.A_H_B
    B_H_A = A_H_B.inverse()
    o, R = A_H_B.translation, A_H_B.rotation.ravel()
    res = np.zeros(6)
    m, f = poses.m[SWAP], poses.f[SWAP]  # angular first
    mj.mju_transformSpatial(res, m, 0, o, np.zeros(3), R)
    assert_close(res, (B_H_A.motion_matrix() @ poses.m)[SWAP])
    mj.mju_transformSpatial(res, f, 1, o, np.zeros(3), R)
    assert_close(res, (B_H_A.force_matrix() @ poses.f)[SWAP])
    assert_close(B_H_A.force_matrix(), np.linalg.inv(B_H_A.motion_matrix()).T)
    # a motion given at a point P (A's axes): the same as first moving it to A's origin
    P = poses.p
    mj.mju_transformSpatial(res, m, 0, o, P, R)
    at_origin = np.concatenate([poses.m[:3] - np.cross(poses.m[3:], P), poses.m[3:]])  # v_P - w x P
    assert_close(res, (B_H_A.motion_matrix() @ at_origin)[SWAP])


def test_compose_mujoco(poses):
    mj = _skip_without_mujoco()
    A, B = poses.A_H_B, poses.B_H_C
    pos, quat = np.zeros(3), np.zeros(4)
    mj.mju_mulPose(pos, quat, A.translation, A.as_quaternion_wxyz(), B.translation, B.as_quaternion_wxyz())
    assert_close(Transform.from_quaternion_wxyz(quat, pos).matrix, (A @ B).matrix)
    mj.mju_negPose(pos, quat, A.translation, A.as_quaternion_wxyz())
    assert_close(Transform.from_quaternion_wxyz(quat, pos).matrix, A.inverse().matrix)


def test_quat_mujoco(mj_case):
    c = mj_case
    mj, R = c.mj, c.st.world_H_base.rotation
    assert_close(quat_xyzw_to_matrix(np.r_[c.qpos[4:7], c.qpos[3]]), R)  # qpos[3:7] = (w, x, y, z)
    assert_close(c.d.xmat[1].reshape(3, 3), R)
    q = c.d.xquat[1] * np.sign(c.d.xquat[1] @ c.qpos[3:7])
    assert_close(q, c.qpos[3:7])
    M = np.zeros(9)
    mj.mju_quat2Mat(M, c.qpos[3:7])
    assert_close(M.reshape(3, 3), R)
    back = np.zeros(4)
    mj.mju_mat2Quat(back, R.ravel())
    assert_close(back * np.sign(back @ c.qpos[3:7]), c.qpos[3:7])


# ------------------------------------------------------------------ velocities
def test_rep_body_mujoco(mj_case):
    c = mj_case
    kd = _kd(c, "body")
    for frame in (*LINKS, SITE):
        res = _object_velocity(c, c.d, frame, 1)
        assert_close(res[SWAP], _fd_velocity(c, frame, "body"), FD_RTOL)
        assert_close(res[SWAP], kd.frame_velocity(frame))
    for link in LINKS:  # mjOBJ_BODY is the body's inertial frame, not the link frame
        res = np.zeros(6)
        c.mj.mj_objectVelocity(c.mm, c.d, c.mj.mjtObj.mjOBJ_BODY, _obj(c, link)[1], res, 1)
        assert_not_close(res[SWAP], kd.frame_velocity(link), 1e-3)


def test_rep_mixed_mujoco(mj_case):
    c = mj_case
    kd = _kd(c, "mixed")
    for frame in (*LINKS, SITE):
        res = _object_velocity(c, c.d, frame, 0)
        assert_close(res[SWAP], _fd_velocity(c, frame, "mixed"), FD_RTOL)
        assert_close(res[SWAP], kd.frame_velocity(frame))
    for link in LINKS:
        res = np.zeros(6)
        c.mj.mj_objectVelocity(c.mm, c.d, c.mj.mjtObj.mjOBJ_BODY, _obj(c, link)[1], res, 0)
        assert_not_close(res[SWAP], kd.frame_velocity(link), 1e-3)


def test_rep_inertial_mujoco(mj_case):
    """cvel[b] is the velocity of b's point at subtree_com[rootid] (world axes, angular first);
    moved to the world origin it is the INERTIAL velocity."""
    c = mj_case
    kd = _kd(c, "inertial")
    for link in LINKS:
        bid = _obj(c, link)[1]
        root = c.mm.body_rootid[bid]
        com = c.d.subtree_com[root]
        inertial = _fd_velocity(c, link, "inertial")
        lin, ang = inertial[:3], inertial[3:]
        assert_close(c.d.cvel[bid], np.concatenate([ang, lin + np.cross(ang, com)]), FD_RTOL)
        res = np.zeros(6)
        c.mj.mju_transformSpatial(res, c.d.cvel[bid], 0, np.zeros(3), com, np.eye(3).ravel())
        assert_close(res[SWAP], inertial, FD_RTOL)
        assert_close(res[SWAP], kd.frame_velocity(link))
    assert root == 1 and not c.d.cvel[0].any()  # the floating base's tree; the world does not move


def test_default_mujoco(mj_case):
    c = mj_case
    objtype, oid, _ = _obj(c, "f")
    res = np.zeros(6)
    with pytest.raises(TypeError):
        c.mj.mj_objectVelocity(c.mm, c.d, objtype, oid, res)  # flg_local is required
    with pytest.raises(TypeError):
        c.mj.mj_objectAcceleration(c.mm, c.d, objtype, oid, res)
    assert_not_close(_object_velocity(c, c.d, "f", 0), _object_velocity(c, c.d, "f", 1), 1e-3)


# ------------------------------------------------------------------ state layout
def test_base_pose_mujoco(mj_case):
    c = mj_case
    n = c.model.n_dofs
    assert (c.mm.nq, c.mm.nv) == (7 + n, 6 + n)
    assert c.mm.jnt_type[0] == c.mj.mjtJoint.mjJNT_FREE
    assert_close(c.qpos[:3], c.st.world_H_base.translation)
    assert_close(c.d.xpos[1], c.qpos[:3])
    # a fixed base: no free joint, the root body welded at body_pos, body_quat (model constants)
    from bridge.backends.mujoco import to_mujoco, to_mujoco_state

    rng = np.random.default_rng(5)
    fixed = small_model(rng, floating=False)
    st = random_state(fixed, rng, "mixed")
    mm = to_mujoco(fixed)
    assert (mm.nq, mm.nv) == (n, n) and all(t != c.mj.mjtJoint.mjJNT_FREE for t in mm.jnt_type)
    mm.body_pos[1] = st.world_H_base.translation
    mm.body_quat[1] = st.world_H_base.as_quaternion_wxyz()
    d = c.mj.MjData(mm)
    d.qpos[:] = to_mujoco_state(fixed, st)[0]
    c.mj.mj_kinematics(mm, d)
    kd = _kd(c, "mixed", fixed, st)
    f = c.mj.mj_name2id(mm, c.mj.mjtObj.mjOBJ_BODY, "f")
    assert_close(d.xpos[1], st.world_H_base.translation)
    assert_close(d.xpos[f], kd.frame_transform("f")[:3, 3])
    assert_close(d.xmat[f].reshape(3, 3), kd.frame_transform("f")[:3, :3])


CONTINUOUS_URDF = (
    '<robot name="wheel"><link name="base"><inertial><mass value="1"/>'
    '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    '<link name="wheel"><inertial><mass value="1"/>'
    '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    '<joint name="spin" type="continuous"><parent link="base"/><child link="wheel"/>'
    '<axis xyz="0 0 1"/></joint></robot>'
)


def test_joint_pos_mujoco():
    mj = _skip_without_mujoco()
    from bridge.backends.mujoco import to_mujoco, to_mujoco_state

    native = mj.MjModel.from_xml_string(CONTINUOUS_URDF)  # MuJoCo's URDF compiler
    assert (native.njnt, native.nq, native.nv) == (1, 1, 1)
    assert native.jnt_type[0] == mj.mjtJoint.mjJNT_HINGE and not native.jnt_limited[0]
    model = bridge.load_urdf(CONTINUOUS_URDF)
    mm = to_mujoco(model)
    j = mj.mj_name2id(mm, mj.mjtObj.mjOBJ_JOINT, "spin")
    assert mm.jnt_type[j] == mj.mjtJoint.mjJNT_HINGE and not mm.jnt_limited[j]
    assert (mm.nq, mm.nv) == (7 + 1, 6 + 1)
    qpos, _ = to_mujoco_state(model, bridge.State(np.eye(4), [0.3], np.zeros(6), [0.0]))
    assert qpos[mm.jnt_qposadr[j]] == 0.3  # the angle itself
    d = mj.MjData(mm)
    d.qpos[:] = qpos
    mj.mj_kinematics(mm, d)
    assert_close(d.xmat[mm.jnt_bodyid[j]].reshape(3, 3), rot_z(0.3))


def _mj_base_velocity(c) -> tuple[np.ndarray, np.ndarray]:
    """(p_dot in world, omega in body) by central differences of mj_integratePos."""
    h = 1e-6
    poses = []
    for dt in (h, -h):
        q = c.qpos.copy()
        c.mj.mj_integratePos(c.mm, q, c.qvel, dt)
        poses.append(Transform.from_quaternion_wxyz(q[3:7], q[:3]))
    R = c.st.world_H_base.rotation
    W = R.T @ (poses[0].rotation - poses[1].rotation) / (2 * h)
    return (poses[0].translation - poses[1].translation) / (2 * h), _vee(W)


def test_base_vel_mujoco(mj_case):
    c = mj_case
    p_dot, omega_B = _mj_base_velocity(c)
    R = c.st.world_H_base.rotation
    assert_close(c.qvel[:3], p_dot, 1e-8)
    assert_close(c.qvel[3:6], omega_B, 1e-8)
    assert_not_close(c.qvel[:3], R.T @ p_dot, 1e-3)
    assert_not_close(c.qvel[3:6], R @ omega_B, 1e-3)
    assert_close(bridge.convert_velocity(c.model, c.st, c.st.nu, "body", "mujoco"), c.qvel)


def test_gen_acc_mujoco(mj_case):
    """qacc = d/dt qvel: (p_ddot in world, d/dt of the body-axes omega), by finite differences of
    bridge's integration (through to_mujoco_state) and by MuJoCo's own base acceleration."""
    c = mj_case
    from bridge.backends.mujoco import to_mujoco_state

    rng = np.random.default_rng(11)
    nu_dot = rng.normal(size=c.model.nv)
    qacc = bridge.convert_acceleration(c.model, c.st, nu_dot, "body", "mujoco")
    qv = [to_mujoco_state(c.model, bridge.integrate(c.st, nu_dot[:6], nu_dot[6:], dt))[1] for dt in (H, -H)]
    assert_close(qacc, (qv[0] - qv[1]) / (2 * H), 1e-7)
    # MuJoCo's classical acceleration of the base under qacc: (omega_dot, p_ddot - g) in world
    acc = _object_acceleration(c, _data(c, 0.0, qacc), "a", 0)
    R = c.st.world_H_base.rotation
    assert_close(qacc[:3], acc[3:] + c.g)
    assert_close(qacc[3:6], R.T @ acc[:3])  # d/dt (R^T omega) = R^T omega_dot


def test_gen_force_mujoco(mj_case):
    c = mj_case
    kd = _kd(c, "mixed")
    st = c.st.to("mixed")
    a = np.random.default_rng(12).normal(size=c.model.nv)
    tau_mixed = kd.inverse_dynamics(a[:6], a[6:])  # base wrench in B[A]: force and moment in world axes
    d = _data(c)
    d.qacc[:] = bridge.convert_acceleration(c.model, st, a, "mixed", "mujoco")
    c.mj.mj_inverse(c.mm, d)
    R = st.world_H_base.rotation
    assert_close(d.qfrc_inverse[:3], tau_mixed[:3])
    assert_close(d.qfrc_inverse[3:6], R.T @ tau_mixed[3:6])
    T, _ = bridge.velocity_transform(c.model, st, "mixed", "mujoco")
    assert_close(T.T @ d.qfrc_inverse, tau_mixed)


# ------------------------------------------------------------------ MuJoCo-only rows
def test_change_mujoco(mj_case):
    c = mj_case
    R = c.st.world_H_base.rotation
    cov = bridge.velocity_change(c.model, c.st, "mujoco", "mixed")
    assert_close(cov.X, np.block([[np.eye(3), np.zeros((3, 3))], [np.zeros((3, 3)), R]]))
    assert_close(cov.bias_acceleration, np.zeros(c.model.nv))
    cov = bridge.velocity_change(c.model, c.st, "mujoco", "body")
    assert_close(cov.X, np.block([[R.T, np.zeros((3, 3))], [np.zeros((3, 3)), np.eye(3)]]))
    expected = np.zeros(c.model.nv)
    expected[:3] = -np.cross(c.qvel[3:6], R.T @ c.qvel[:3])
    assert_close(cov.bias_acceleration, expected)


def test_mass_mujoco(icub_mujoco):
    c = _case()  # its own model: the armature is changed
    M = _full_m(c, c.d)
    kd = _kd(c, "body")
    cov = bridge.velocity_change(c.model, c.st, "body", "mujoco")
    assert_close(cov.matrix_back(M), kd.mass_matrix())
    arm = np.random.default_rng(14).uniform(0.01, 0.1, c.mm.nv)
    c.mm.dof_armature[:] = arm
    c.mj.mj_setConst(c.mm, c.mj.MjData(c.mm))  # (MuJoCo 4's "simple" DOFs take M from dof_M0)
    c.mj.mj_forward(c.mm, c.d)
    assert_close(_full_m(c, c.d), M + np.diag(arm))
    fused, _ = icub_mujoco
    assert not np.any(fused.dof_armature)  # MuJoCo's URDF compiler sets none


def test_bias_forces_mujoco(mj_case):
    c = mj_case
    h_mj = c.d.qfrc_bias.copy()
    d = _data(c)
    d.qacc[:] = 0.0
    c.mj.mj_inverse(c.mm, d)
    assert_close(d.qfrc_inverse, h_mj)
    M = _full_m(c, c.d)
    kd = _kd(c, "body")
    assert_close(bridge.velocity_change(c.model, c.st, "body", "mujoco").bias_back(h_mj, M), kd.bias_forces())


def test_axis_mujoco(mj_case):
    c = mj_case
    mj = c.mj
    j = c.model.joint("j1")  # revolute with a non-zero axis origin
    jid = mj.mj_name2id(c.mm, mj.mjtObj.mjOBJ_JOINT, "j1")
    assert_close(c.mm.jnt_axis[jid], j.axis)
    assert_close(c.mm.jnt_pos[jid], j.axis_origin)
    kd = _kd(c, "body")
    bid = c.mm.jnt_bodyid[jid]
    assert_close(c.d.xpos[bid], kd.frame_transform(j.child)[:3, 3])
    assert_close(c.d.xmat[bid].reshape(3, 3), kd.frame_transform(j.child)[:3, :3])


# ------------------------------------------------------------------ MuJoCo's URDF compiler on iCub
@pytest.fixture(scope="module")
def icub_mujoco():
    """iCub compiled by MuJoCo from its URDF (mesh geoms removed: package:// paths do not
    resolve), as is (``fusestatic`` true) and with ``fusestatic`` false."""
    _skip_without_mujoco()
    from bridge.backends.mujoco.native import load_urdf_spec
    from bridge.robots import robot_path

    spec, _ = load_urdf_spec(robot_path("iCubGazeboV2_5"))
    kept = spec.copy()  # compile() fuses the spec itself: compile copies
    kept.compiler.fusestatic = False
    return spec.copy().compile(), kept.compile()


def _names(mj, m, objtype, count: int) -> list[str]:
    return [mj.mj_id2name(m, objtype, i) for i in range(count)]


def _urdf_movable(root) -> list[str]:
    return [j.get("name") for j in root.findall("joint") if j.get("type") != "fixed"]


def _three_links(mujoco_tag: str = "") -> str:
    inertial = (
        '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>'
        "</inertial>"
    )
    return (
        f'<robot name="r">{mujoco_tag}<link name="base">{inertial}</link><link name="arm">{inertial}</link>'
        f'<link name="tool">{inertial}</link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        '<joint name="t" type="fixed"><parent link="arm"/><child link="tool"/><origin xyz="0 0 0.1"/>'
        "</joint></robot>"
    )


NO_FUSE = '<mujoco><compiler fusestatic="false"/></mujoco>'


def test_dof_order_mujoco(icub, icub_mujoco, mj_case):
    """MuJoCo's DOF order is its body order: depth first from the root, siblings in document
    order (not by name, not the document order of the joints); to_mujoco builds the bodies in
    model.depth_first_joints order."""
    mj = mj_case.mj
    fused, kept = icub_mujoco
    J = mj.mjtObj.mjOBJ_JOINT
    assert _names(mj, fused, J, fused.njnt) == _names(mj, kept, J, kept.njnt) == _urdf_movable(icub.root)
    assert [int(fused.jnt_dofadr[j]) for j in range(fused.njnt)] == list(range(fused.nv))
    doc = ET.fromstring(SIBLINGS_DOC_URDF)
    m = mj.MjModel.from_xml_string(SIBLINGS_DOC_URDF)
    assert _urdf_movable(doc) == ["b_joint", "a_joint", "c_joint"]
    assert _names(mj, m, J, m.njnt) == ["b_joint", "c_joint", "a_joint"]  # depth first, b before a
    # to_mujoco
    from bridge.backends.mujoco import mujoco_dof_permutation

    c = mj_case
    names = _names(mj, c.mm, J, c.mm.njnt)[1:]  # after the free joint
    assert names == [c.model.dof_names[i] for i in mujoco_dof_permutation(c.model)]
    assert names == [j.name for j in c.model.depth_first_joints if j.movable]
    assert names != list(c.model.dof_names)


def _link(name: str) -> str:
    return (
        f'<link name="{name}"><inertial><mass value="1"/>'
        '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    )


def _continuous(name: str, parent: str, child: str) -> str:
    return (
        f'<joint name="{name}" type="continuous"><parent link="{parent}"/><child link="{child}"/>'
        '<axis xyz="0 0 1"/></joint>'
    )


SIBLINGS_DOC_URDF = (
    '<robot name="siblings">'
    + "".join(_link(n) for n in ("base", "y_link", "z_link", "tip"))
    + _continuous("b_joint", "base", "y_link")
    + _continuous("a_joint", "base", "z_link")
    + _continuous("c_joint", "y_link", "tip")
    + "</robot>"
)


def test_count_mujoco(icub, icub_mujoco):
    mj = _skip_without_mujoco()
    fused, kept = icub_mujoco
    n_links, n_joints = len(icub.root.findall("link")), len(icub.root.findall("joint"))
    n_dofs = len(_urdf_movable(icub.root))
    assert (n_links, n_joints, n_dofs) == (213, 212, 32)
    assert (fused.nbody, fused.njnt, fused.nv) == (1 + n_dofs, n_dofs, n_dofs) == (33, 32, 32)
    assert (kept.nbody, kept.njnt, kept.nv) == (1 + n_links, n_dofs, n_dofs) == (214, 32, 32)
    for m in (fused, kept):  # no free joint: hinges only, the root welded to the world
        assert all(t == mj.mjtJoint.mjJNT_HINGE for t in m.jnt_type)
    one = '<robot name="one">' + _link("body") + "</robot>"
    assert (mj.MjModel.from_xml_string(one).nbody, mj.MjModel.from_xml_string(one).njnt) == (1, 0)
    one_kept = mj.MjModel.from_xml_string(one.replace("</robot>", NO_FUSE + "</robot>"))
    assert (one_kept.nbody, one_kept.njnt) == (2, 0)
    small = mj.MjModel.from_xml_string(_three_links())
    assert small.njnt == 1 and small.jnt_type[0] == mj.mjtJoint.mjJNT_HINGE  # no free joint
    assert small.nbody == 2 and mj.MjModel.from_xml_string(_three_links(NO_FUSE)).nbody == 4


def test_fixed_mujoco(icub, icub_mujoco):
    """fusestatic: a fixed-joint child is fused into its parent's body (the masses add up), the
    root's group into the world (whose mass stays 0); without it every link is a body and a
    fixed-joint child a body without joint."""
    mj = _skip_without_mujoco()
    fused, kept = icub_mujoco
    root = icub.root
    mass = {}
    for link in root.findall("link"):
        m = link.find("inertial/mass")
        mass[link.get("name")] = float(m.get("value")) if m is not None else 0.0
    fixed_children: dict[str, list[str]] = {}
    for j in root.findall("joint"):
        if j.get("type") == "fixed":
            fixed_children.setdefault(j.find("parent").get("link"), []).append(j.find("child").get("link"))

    def group(link: str) -> list[str]:
        return [link] + [x for child in fixed_children.get(link, []) for x in group(child)]

    B = mj.mjtObj.mjOBJ_BODY
    for b in range(1, fused.nbody):
        assert abs(fused.body_mass[b] - sum(mass[x] for x in group(mj.mj_id2name(fused, B, b)))) < 1e-12
    assert fused.body_mass[0] == 0.0 and sum(mass[x] for x in group("root_link")) > 5.0
    assert abs(kept.body_subtreemass[0] - sum(mass.values())) < 1e-9
    for b in range(1, kept.nbody):
        assert kept.body_mass[b] == mass[mj.mj_id2name(kept, B, b)]
    n_fixed = sum(j.get("type") == "fixed" for j in root.findall("joint"))
    assert int(np.sum(kept.body_jntnum[1:] == 0)) == n_fixed + 1 == 181  # and the root link
