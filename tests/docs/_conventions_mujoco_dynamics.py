"""The MuJoCo cells of docs/conventions.md about dynamics (frame and bias accelerations, momentum,
quantities after the mass matrix), checked against the installed MuJoCo.

Imported by tests/docs/test_conventions.py like tests/docs/_conventions_mujoco.py, whose fixtures
(``mj_case``) and helpers it uses: ``to_mujoco`` of the small test model at a random state, finite
differences along motions made with ``mj_integratePos``.
"""

from __future__ import annotations

import numpy as np

import bridge
from bridge.spatial import Transform
from tests.docs._conventions_mujoco import (
    FD_RTOL,
    LINKS,
    SITE,
    _case,
    _data,
    _definition,
    _fd,
    _full_m,
    _kd,
    _obj,
    _object_acceleration,
    _object_velocity,
    _pose,
)
from tests.helpers import assert_close, assert_not_close

__all__ = [
    "test_acc_body_mujoco",
    "test_acc_inertial_mujoco",
    "test_acc_mixed_mujoco",
    "test_after_m_cmm_mujoco",
    "test_after_m_coriolis_forces_mujoco",
    "test_after_m_coriolis_mujoco",
    "test_after_m_jacobian_derivative_mujoco",
    "test_after_m_momentum_jacobian_mujoco",
    "test_after_m_relative_jacobian_mujoco",
    "test_after_m_relative_transform_mujoco",
    "test_bias_mixed_mujoco",
    "test_bias_world_only_mujoco",
    "test_momentum_mujoco",
]


def _jac(c, d, frame: str) -> np.ndarray:
    """``[jacp; jacr]`` (6, nv) of ``mj_jac`` at the frame's origin."""
    _, _, bid = _obj(c, frame)
    jacp, jacr = np.zeros((3, c.mm.nv)), np.zeros((3, c.mm.nv))
    c.mj.mj_jac(c.mm, d, jacp, jacr, _pose(c, d, frame)[:3, 3].copy(), bid)
    return np.vstack([jacp, jacr])


def _jac_dot(c, d, frame: str) -> np.ndarray:
    """``[jacp; jacr]`` (6, nv) of ``mj_jacDot`` at the frame's origin."""
    _, _, bid = _obj(c, frame)
    jacp, jacr = np.zeros((3, c.mm.nv)), np.zeros((3, c.mm.nv))
    c.mj.mj_jacDot(c.mm, d, jacp, jacr, _pose(c, d, frame)[:3, 3].copy(), bid)
    return np.vstack([jacp, jacr])


# ------------------------------------------------------------------ frame accelerations
def _fd_acceleration(c, frame: str, local: int) -> np.ndarray:
    """d/dt of mj_objectVelocity (angular first) along the motion of constant qacc."""
    return _fd(lambda t: _object_velocity(c, _data(c, t, c.qacc), frame, local))


def test_acc_mixed_mujoco(mj_case):
    """flg_local = 0: (omega_dot, p_ddot - g), the derivative of the MIXED velocity minus gravity;
    equal to bridge's MIXED frame_acceleration with g added back."""
    c = mj_case
    d = _data(c, 0.0, c.qacc)
    minus_g = np.concatenate([np.zeros(3), c.g])
    for frame in (*LINKS, SITE):
        res = _object_acceleration(c, d, frame, 0)
        assert_close(res, _fd_acceleration(c, frame, 0) - minus_g, FD_RTOL)
    kd = _kd(c, "mixed")
    st = c.st.to("mixed")
    a = np.random.default_rng(13).normal(size=c.model.nv)
    qacc = bridge.convert_acceleration(c.model, st, a, "mixed", "mujoco")
    res = _object_acceleration(c, _data(c, 0.0, qacc), "f", 0)
    acc = kd.frame_acceleration("f", a[:6], a[6:])  # MIXED: (p_ddot, omega_dot)
    assert_close(res[:3], acc[3:])
    assert_close(res[3:], acc[:3] - c.g)


def test_acc_body_mujoco(mj_case):
    """flg_local = 1: (F_R_A omega_dot, F_R_A (p_ddot - g)), the classical acceleration in F's
    axes; not the derivative of the BODY velocity."""
    c = mj_case
    d = _data(c, 0.0, c.qacc)
    for frame in (*LINKS, SITE):
        R = _pose(c, d, frame)[:3, :3]
        res = _object_acceleration(c, d, frame, 1)
        mixed = _fd_acceleration(c, frame, 0)  # (omega_dot, p_ddot)
        assert_close(res, np.concatenate([R.T @ mixed[:3], R.T @ (mixed[3:] - c.g)]), FD_RTOL)
        body_dot = _fd_acceleration(c, frame, 1)
        assert_not_close(res + np.concatenate([np.zeros(3), R.T @ c.g]), body_dot, 1e-3)


def test_acc_inertial_mujoco(mj_case):
    """cacc[b] (after mj_rnePostConstraint) at subtree_com of the root, world axes, moved to the
    world origin: the derivative of the INERTIAL velocity, -g added to the linear part."""
    c = mj_case
    d = _data(c, 0.0, c.qacc)
    assert_close(d.cacc[0], np.concatenate([np.zeros(3), -c.g]))

    def inertial(dd, link: str) -> np.ndarray:  # (omega, o_dot - omega x o) from flg_local = 0
        v = _object_velocity(c, dd, link, 0)
        return np.concatenate([v[:3], v[3:] - np.cross(v[:3], _pose(c, dd, link)[:3, 3])])

    for link in LINKS:
        bid = _obj(c, link)[1]
        res = np.zeros(6)
        com = d.subtree_com[c.mm.body_rootid[bid]]
        c.mj.mju_transformSpatial(res, d.cacc[bid], 0, np.zeros(3), com, np.eye(3).ravel())
        expected = _fd(lambda t, link=link: inertial(_data(c, t, c.qacc), link))
        assert_close(res, expected - np.concatenate([np.zeros(3), c.g]), FD_RTOL)


# ------------------------------------------------------------------ bias accelerations
def test_bias_mixed_mujoco(mj_case):
    """mj_jacDot [jacp; jacr] times qvel at qacc = 0 (mixed nu_dot = 0: T_dot nu = 0): the
    classical acceleration (p_ddot, omega_dot), equal to bridge's MIXED frame_bias_acc."""
    c = mj_case
    kd = _kd(c, "mixed")
    d0 = _data(c)  # qacc = 0
    for frame in (*LINKS, SITE):
        b = _jac_dot(c, c.d, frame) @ c.qvel
        acc = _object_acceleration(c, d0, frame, 0)  # (omega_dot, p_ddot - g)
        assert_close(b, np.concatenate([acc[3:] + c.g, acc[:3]]))
        assert_close(b, kd.frame_bias_acc(frame))
    _, T_dot = bridge.velocity_transform(c.model, c.st.to("mixed"), "mixed", "mujoco")
    assert_close(T_dot @ c.st.to("mixed").nu, np.zeros(c.model.nv), atol=1e-14)


def test_bias_world_only_mujoco(mj_case):
    """No body or inertial bias acceleration: mj_jacDot is the only Jacobian derivative, in world
    axes; rotating its product to F's axes is not bridge's BODY frame_bias_acc."""
    c = mj_case
    assert [n for n in dir(c.mj) if n.lower().startswith("mj_jac") and "dot" in n.lower()] == ["mj_jacDot"]
    kd = _kd(c, "body")
    R = _pose(c, c.d, "f")[:3, :3]
    b = _jac_dot(c, c.d, "f") @ c.qvel
    assert_not_close(np.concatenate([R.T @ b[:3], R.T @ b[3:]]), kd.frame_bias_acc("f"), 1e-3)


# ------------------------------------------------------------------ momentum
def test_momentum_mujoco(mj_case):
    """mj_subtreeVel: subtree_linvel[b] the velocity of the subtree's centre of mass and
    subtree_angmom[b] its angular momentum about subtree_com[b], world axes; for body 0 (the whole
    model) (mass * subtree_linvel, subtree_angmom) is bridge's centroidal momentum in G[A]."""
    c = mj_case
    mj, m = c.mj, c.mm
    d = _data(c)
    mj.mj_subtreeVel(m, d)
    h = np.concatenate([m.body_subtreemass[0] * d.subtree_linvel[0], d.subtree_angmom[0]])
    for rep in ("mixed", "inertial"):
        kd = _kd(c, rep)
        assert_close(h, kd.centroidal_momentum())
        assert_close(d.subtree_com[0], kd.com_position())
    assert_not_close(h, _kd(c, "body").centroidal_momentum(), 1e-3)  # G[B] there
    # every subtree, from the bodies' inertias and velocities (mjOBJ_BODY: at the centre of mass)
    parents = m.body_parentid
    for b in range(1, m.nbody):
        members = [k for k in range(1, m.nbody) if k == b or b in _ancestors(parents, k)]
        G = d.subtree_com[b]
        p, k_G = np.zeros(3), np.zeros(3)
        for k in members:
            v = np.zeros(6)
            mj.mj_objectVelocity(m, d, mj.mjtObj.mjOBJ_BODY, k, v, 0)
            Rk = d.ximat[k].reshape(3, 3)
            I_k = Rk @ np.diag(m.body_inertia[k]) @ Rk.T  # about the body's centre of mass, world axes
            k_G += I_k @ v[:3] + m.body_mass[k] * np.cross(d.xipos[k] - G, v[3:])
            p += m.body_mass[k] * v[3:]
        assert_close(d.subtree_angmom[b], k_G)
        assert_close(d.subtree_linvel[b], p / m.body_subtreemass[b])


def _ancestors(parents, k: int) -> list[int]:
    out = []
    while k:
        k = int(parents[k])
        out.append(k)
    return out


# ------------------------------------------------------------------ quantities after M
def test_after_m_cmm_mujoco(mj_case):
    c = mj_case
    mj, m = c.mj, c.mm
    d = _data(c)
    jacp, angmom = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    mj.mj_jacSubtreeCom(m, d, jacp, 0)
    mj.mj_angmomMat(m, d, angmom, 0)
    mass = m.body_subtreemass[0]
    A = np.vstack([mass * jacp, angmom])  # G[A], columns for qvel
    mj.mj_subtreeVel(m, d)
    assert_close(A @ c.qvel, np.concatenate([mass * d.subtree_linvel[0], d.subtree_angmom[0]]))
    for rep in ("mixed", "inertial"):
        T, _ = bridge.velocity_transform(c.model, c.st.to(rep), rep, "mujoco")
        assert_close(A @ T, _kd(c, rep).centroidal_momentum_matrix())


def test_after_m_momentum_jacobian_mujoco(mj_case):
    """The first six rows of mj_fullM: linear momentum in world axes and angular momentum about
    the base origin in base axes (dual to qvel), columns for qvel."""
    c = mj_case
    M = _full_m(c, c.d)
    R = c.st.world_H_base.rotation
    mixed, body = _kd(c, "mixed"), _kd(c, "body")
    h = M[:6] @ c.qvel
    assert_close(h[:3], mixed.total_momentum()[:3])  # linear momentum, world axes
    assert_close(h[3:], body.total_momentum()[3:])  # angular momentum about the base origin, base axes
    assert_close(h[3:], R.T @ mixed.total_momentum()[3:])
    T, _ = bridge.velocity_transform(c.model, c.st.to("mixed"), "mixed", "mujoco")
    J = mixed.total_momentum_jacobian()
    assert_close(M[:6] @ T, np.vstack([J[:3], R.T @ J[3:]]))


def test_after_m_coriolis_mujoco(mj_case):
    """No Coriolis matrix: qfrc_bias is the vector C qvel + g (quadratic in qvel but for g)."""
    c = mj_case
    mj = c.mj
    assert not [n for n in dir(mj) if "coriolis" in n.lower()]
    assert not [n for n in dir(c.d) if "coriolis" in n.lower()]
    d0, d2 = mj.MjData(c.mm), mj.MjData(c.mm)
    d0.qpos[:] = d2.qpos[:] = c.qpos
    d2.qvel[:] = 2 * c.qvel
    mj.mj_forward(c.mm, d0)
    mj.mj_forward(c.mm, d2)
    g = d0.qfrc_bias
    assert_close(d2.qfrc_bias - g, 4 * (c.d.qfrc_bias - g))


def test_after_m_coriolis_forces_mujoco(mj_case):
    c = mj_case
    mj = c.mj
    m = _case().mm  # its own copy: gravity is changed
    m.opt.gravity[:] = 0.0
    d = mj.MjData(m)
    d.qpos[:], d.qvel[:] = c.qpos, c.qvel
    mj.mj_forward(m, d)
    Cq = d.qfrc_bias.copy()
    res = np.zeros(m.nv)
    mj.mj_rne(m, d, 0, res)  # flg_acc = 0: the same
    assert_close(res, Cq)
    d0 = mj.MjData(c.mm)  # with gravity: h(qvel) - h(0)
    d0.qpos[:] = c.qpos
    mj.mj_forward(c.mm, d0)
    assert_close(c.d.qfrc_bias - d0.qfrc_bias, Cq)
    T, T_dot = bridge.velocity_transform(c.model, c.st, "body", "mujoco")
    M = _full_m(c, c.d)
    assert_close(T.T @ (Cq + M @ T_dot @ c.st.nu), _kd(c, "body").coriolis_forces())
    assert_not_close(T_dot @ c.st.nu, np.zeros(c.model.nv), 1e-3)  # the M T_dot nu term matters in body


def test_after_m_jacobian_derivative_mujoco(mj_case):
    """mj_jacDot is the time derivative of mj_jac (point fixed on the body) along the motion for
    qvel (finite differences along mj_integratePos); bridge's MIXED one is J_dot T + J T_dot."""
    c = mj_case
    kd = _kd(c, "mixed")
    T, T_dot = bridge.velocity_transform(c.model, c.st.to("mixed"), "mixed", "mujoco")
    assert_not_close(T_dot, np.zeros_like(T_dot), 1e-3)
    for frame in (*LINKS, SITE):
        J_dot = _jac_dot(c, c.d, frame)
        assert_close(J_dot, _fd(lambda t, frame=frame: _jac(c, _data(c, t), frame)), FD_RTOL)
        assert_close(kd.frame_jacobian_derivative(frame), J_dot @ T + _jac(c, c.d, frame) @ T_dot)


def test_after_m_relative_transform_mujoco(mj_case):
    c = mj_case
    mj, d = c.mj, c.d
    F, R = _obj(c, "f")[1], _obj(c, "c")[1]
    pos, quat, inv_pos, inv_quat = np.zeros(3), np.zeros(4), np.zeros(3), np.zeros(4)
    mj.mju_negPose(inv_pos, inv_quat, d.xpos[R], d.xquat[R])
    mj.mju_mulPose(pos, quat, inv_pos, inv_quat, d.xpos[F], d.xquat[F])
    R_H_F = Transform.from_quaternion_wxyz(quat, pos).matrix
    assert_close(R_H_F, np.linalg.inv(_pose(c, d, "c")) @ _pose(c, d, "f"))
    assert_close(R_H_F, _kd(c, "mixed").relative_transform("f", "c"))


def test_after_m_relative_jacobian_mujoco(mj_case):
    """mj_jac of F's body minus mj_jac of R's body, both at F's origin, each half rotated to R's
    axes: the velocity of F relative to R in F[R] (bridge's MIXED relative_jacobian)."""
    c = mj_case
    from bridge.backends.mujoco import mujoco_dof_permutation

    def rel(d) -> np.ndarray:
        F, R = _obj(c, "f")[1], _obj(c, "c")[1]
        o_F = d.xpos[F].copy()
        J = []
        for b in (F, R):
            jacp, jacr = np.zeros((3, c.mm.nv)), np.zeros((3, c.mm.nv))
            c.mj.mj_jac(c.mm, d, jacp, jacr, o_F, b)
            J.append(np.vstack([jacp, jacr]))
        return np.kron(np.eye(2), d.xmat[R].reshape(3, 3).T) @ (J[0] - J[1])

    J = rel(c.d)
    assert_close(J[:, :6], np.zeros((6, 6)), atol=1e-14)  # the base moves both alike
    R_H_F = lambda t: np.linalg.inv(_pose(c, _data(c, t), "c")) @ _pose(c, _data(c, t), "f")  # noqa: E731
    Hm, Hd = R_H_F(0.0), _fd(R_H_F)
    assert_close(J @ c.qvel, _definition(Hm, Hd, "mixed"), FD_RTOL)  # F's origin and axes in R
    joints = np.zeros((6, c.model.n_dofs))
    joints[:, mujoco_dof_permutation(c.model)] = J[:, 6:]
    assert_close(joints, _kd(c, "mixed").relative_jacobian("f", "c"))
