"""Every cell of docs/conventions.md, checked.

Each table cell of the page carries an HTML comment ``<!-- test: NAME -->``; NAME is a test function
of this module (``test_every_cell_has_a_test`` enforces it). Library cells are checked against the
installed library itself (Pinocchio, iDynTree) on a real robot (iCub) or on small URDFs written
here; velocity and acceleration cells are checked against central finite differences of frame
poses along a trajectory built by hand (closed-form, independent of every library). Cells of
conventions whose library is not installed (spatial_v2, RBDL, TDS/brax) are checked against the
formulas of the convention through bridge's converters and the featherstone backend. The Drake,
jaxsim and MuJoCo cells have their tests in modules of their own (tests/docs/_conventions_drake.py,
_conventions_jaxsim.py, _conventions_mujoco.py, _conventions_mujoco_dynamics.py), imported at the
end of this one.
"""

from __future__ import annotations

import re
from pathlib import Path

import idyntree.bindings as idyn
import numpy as np
import pinocchio as pin
import pytest

import bridge
from bridge.backends.idyntree.kindyn import kindyn as kindyn_of
from bridge.spatial import Force, Motion, Transform
from bridge.spatial.conventions import (
    plux,
    plxb,
    reorder_matrix,
    to_angular_first,
    transform_from_featherstone,
    transform_from_rbdl,
    transform_from_tds,
    transform_to_featherstone,
    transform_to_plux,
    transform_to_plxb,
    transform_to_rbdl,
    transform_to_tds,
)
from tests.docs._math import DT, fd, matrix_to_quat_xyzw, quat_xyzw_to_matrix, rot_z, skew, traj
from tests.helpers import assert_close, assert_not_close

PAGE = Path(__file__).resolve().parents[2] / "docs" / "conventions.md"
FRAME = "l_sole"  # a frame of iCub that is not a Pinocchio joint body (a fixed-joint child)
FD_RTOL = 1e-7
GRAVITY = np.array([0.0, 0.0, -9.81])
REPS = {
    "body": (idyn.BODY_FIXED_REPRESENTATION, pin.LOCAL),
    "inertial": (idyn.INERTIAL_FIXED_REPRESENTATION, pin.WORLD),
    "mixed": (idyn.MIXED_REPRESENTATION, pin.LOCAL_WORLD_ALIGNED),
}


def vee3(W: np.ndarray) -> np.ndarray:
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def vee6(M: np.ndarray) -> np.ndarray:
    """(linear, angular) of a 4x4 twist matrix [[w^, v], [0, 0]]."""
    return np.concatenate([M[:3, 3], vee3(M[:3, :3])])


def hat6(v: np.ndarray) -> np.ndarray:
    out = np.zeros((4, 4))
    out[:3, :3] = skew(v[3:])
    out[:3, 3] = v[:3]
    return out


def base_velocity(H: np.ndarray, v_mixed: np.ndarray, rep: str) -> np.ndarray:
    """The base velocity in ``rep`` from the mixed one (definitions of the page)."""
    R, o = H[:3, :3], H[:3, 3]
    lin, ang = v_mixed[:3], v_mixed[3:]
    if rep == "mixed":
        return v_mixed.copy()
    if rep == "body":
        return np.concatenate([R.T @ lin, R.T @ ang])
    return np.concatenate([lin - np.cross(ang, o), ang])


def base_acceleration(c, rep: str) -> np.ndarray:
    """Time derivative at t = 0 of :func:`base_velocity` along the trajectory."""
    H, _, _, _ = traj(c, 0.0)
    R, o = H[:3, :3], H[:3, 3]
    if rep == "mixed":
        return np.concatenate([c.odd, c.al])
    if rep == "body":  # d/dt R^T x = R^T (x_dot - w x x)
        return np.concatenate([R.T @ (c.odd - np.cross(c.w, c.od)), R.T @ c.al])
    return np.concatenate([c.odd - np.cross(c.al, o) - np.cross(c.w, c.od), c.al])


# --- Pinocchio on the iCub fixture
def pin_qv(c, t: float, accelerate: bool = True):
    H, s, vm, sd = traj(c, t, accelerate)
    quat = matrix_to_quat_xyzw(H[:3, :3])  # (x, y, z, w)
    q = np.concatenate([H[:3, 3], quat, s])
    v = np.concatenate([base_velocity(H, vm, "body"), sd])
    return q, v


def pin_a(c) -> np.ndarray:
    return np.concatenate([base_acceleration(c, "body"), c.sdd])


def pin_frame_pose(c, frame: str, t: float, accelerate: bool = True) -> np.ndarray:
    q, _ = pin_qv(c, t, accelerate)
    pin.framesForwardKinematics(c.pm, c.pd, q)
    return c.pd.oMf[c.pm.getFrameId(frame)].homogeneous.copy()


def pin_frame_velocity(c, frame: str, rf, t: float, accelerate: bool = True) -> np.ndarray:
    q, v = pin_qv(c, t, accelerate)
    pin.forwardKinematics(c.pm, c.pd, q, v)
    pin.updateFramePlacements(c.pm, c.pd)
    return pin.getFrameVelocity(c.pm, c.pd, c.pm.getFrameId(frame), rf).vector.copy()


def pin_frame_acc(c, frame: str, rf, classical: bool, a: np.ndarray | None = None) -> np.ndarray:
    q, v = pin_qv(c, 0.0)
    pin.forwardKinematics(c.pm, c.pd, q, v, pin_a(c) if a is None else a)
    pin.updateFramePlacements(c.pm, c.pd)
    get = pin.getFrameClassicalAcceleration if classical else pin.getFrameAcceleration
    return get(c.pm, c.pd, c.pm.getFrameId(frame), rf).vector.copy()


# --- iDynTree on the iCub fixture (reduced model: same DOF order as Pinocchio)
def idyn_set(c, rep: str, t: float, accelerate: bool = True) -> None:
    H, s, vm, sd = traj(c, t, accelerate)
    assert c.kd.setFrameVelocityRepresentation(REPS[rep][0])
    assert c.kd.setRobotState(H, s, base_velocity(H, vm, rep), sd, GRAVITY)


def idyn_frame_velocity(c, frame: str, rep: str, t: float) -> np.ndarray:
    idyn_set(c, rep, t)
    return np.array(c.kd.getFrameVel(frame).toNumPy())


def idyn_frame_acc(c, frame: str, rep: str) -> np.ndarray:
    idyn_set(c, rep, 0.0)
    return np.array(c.kd.getFrameAcc(frame, base_acceleration(c, rep), c.sdd).toNumPy())


# --- bridge on the iCub fixture (pinocchio engine, DOF order = Pinocchio's)
def bridge_kd(c, rep: str, t: float, engine: str = "pinocchio") -> bridge.KinDyn:
    H, s, vm, sd = traj(c, t)
    kd = bridge.KinDyn(c.model, engine=engine, representation=rep)
    kd.set_state(H, s, base_velocity(H, vm, rep), sd)
    return kd


def definition_velocity(H: np.ndarray, Hd: np.ndarray, rep: str) -> np.ndarray:
    """The page's definitions of the three representations, from a pose and its derivative."""
    R, o, Rd, od = H[:3, :3], H[:3, 3], Hd[:3, :3], Hd[:3, 3]
    w_world = vee3(Rd @ R.T)
    if rep == "body":
        return np.concatenate([R.T @ od, vee3(R.T @ Rd)])
    if rep == "inertial":
        return np.concatenate([od - (Rd @ R.T) @ o, w_world])
    return np.concatenate([od, w_world])


def fd_frame_velocity(c, frame: str, rep: str, pose=pin_frame_pose) -> np.ndarray:
    """Velocity of ``frame`` in ``rep`` from finite differences of its pose (definitions)."""
    H = pose(c, frame, 0.0)
    Hd = fd(lambda t: pose(c, frame, t))
    return definition_velocity(H, Hd, rep)


def idyn_frame_pose(c, frame: str, t: float) -> np.ndarray:
    idyn_set(c, "mixed", t)
    return np.array(c.kd.getWorldTransform(frame).asHomogeneousTransform().toNumPy())


# ------------------------------------------------------------------------------------------ the page
CELL = re.compile(r"<!--\s*test:\s*([A-Za-z_][A-Za-z0-9_]*)\s*-->")


def _table_cells(text: str) -> list[tuple[int, str]]:
    """(line number, cell text) of every body cell of every table (first column = row label)."""
    cells = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if (
            lines[i].lstrip().startswith("|")
            and i + 1 < len(lines)
            and re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i + 1])
        ):
            i += 2  # header and separator
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                parts = [p.strip() for p in lines[i].strip().strip("|").split("|")]
                cells += [(i + 1, p) for p in parts[1:]]
                i += 1
            continue
        i += 1
    return cells


def test_every_cell_has_a_test():
    """Every body cell of every table of the page names a test of this module, and every test
    named anywhere on the page exists (a cell without a test fails here)."""
    text = PAGE.read_text(encoding="utf-8")
    cells = _table_cells(text)
    assert len(cells) > 60, "the conventions tables were not found"
    missing = [f"line {n}: {cell[:60]!r}" for n, cell in cells if not CELL.search(cell)]
    assert not missing, "cells without a <!-- test: NAME --> id:\n" + "\n".join(missing)
    names = set(CELL.findall(text))
    unknown = sorted(n for n in names if not callable(globals().get(n)) or not n.startswith("test_"))
    assert not unknown, f"cell ids that are not test functions of {__name__}: {unknown}"


def test_every_cell_test_is_on_the_page():
    """The reverse: every cell test of this module is used by the page (no stale tests)."""
    names = set(CELL.findall(PAGE.read_text(encoding="utf-8")))
    own = {
        n
        for n, f in globals().items()
        if n.startswith("test_")
        and callable(f)
        and n not in ("test_every_cell_has_a_test", "test_every_cell_test_is_on_the_page")
    }
    assert own <= names, f"tests not referenced by any cell: {sorted(own - names)}"


# ========================================================================== table 1: spatial algebra
# ---- 6D order
def test_order_bridge(poses):
    m = Motion.from_linear_angular([1, 2, 3], [4, 5, 6])
    assert np.array_equal(m.vector, [1, 2, 3, 4, 5, 6])
    assert np.array_equal(Force.from_linear_angular([1, 2, 3], [4, 5, 6]).vector, [1, 2, 3, 4, 5, 6])
    # the angular part of a transformed twist is R @ (last three components)
    out = poses.A_H_B @ Motion(poses.m)
    assert_close(out.angular, poses.A_H_B.rotation @ poses.m[3:])


def test_order_idyntree(poses):
    H = poses.A_H_B
    T = idyn.Transform(idyn.Rotation(H.rotation), idyn.Position(H.translation))
    tw = T * idyn.Twist.FromPython(poses.m)
    # the angular velocity is the last half: it is only rotated
    assert_close(tw.toNumPy()[3:], H.rotation @ poses.m[3:])
    wr = T * idyn.Wrench.FromPython(poses.f)
    # the force is the first half: it is only rotated
    assert_close(wr.toNumPy()[:3], H.rotation @ poses.f[:3])


def test_order_pinocchio(poses):
    m = pin.Motion(poses.m)
    assert np.array_equal(m.linear, poses.m[:3]) and np.array_equal(m.angular, poses.m[3:])
    f = pin.Force(poses.f)
    assert np.array_equal(f.linear, poses.f[:3]) and np.array_equal(f.angular, poses.f[3:])
    M = pin.SE3(poses.A_H_B.rotation, poses.A_H_B.translation)
    assert_close(M.act(m).angular, poses.A_H_B.rotation @ poses.m[3:])


def _check_angular_first(E, r, m_lin_first, B_H_A, X6):
    """X6 (angular first) applied to an angular-first motion gives the motion in B, angular first."""
    expected = to_angular_first((B_H_A @ Motion(m_lin_first)).vector)
    assert_close(X6 @ to_angular_first(m_lin_first), expected)
    # the first half of the result is the angular velocity: only rotated by E
    assert_close((X6 @ to_angular_first(m_lin_first))[:3], E @ m_lin_first[3:])


def test_order_spatial_v2(poses):
    E, r = transform_to_featherstone(poses.A_H_B)
    _check_angular_first(E, r, poses.m, poses.A_H_B.inverse(), plux(E, r))


def test_order_rbdl(poses):
    E, r = transform_to_rbdl(poses.A_H_B)
    # RBDL's SpatialTransform::apply on (w, v): (E w, E (v - r x w))
    w, v = poses.m[3:], poses.m[:3]
    applied = np.concatenate([E @ w, E @ (v - np.cross(r, w))])
    assert_close(applied, to_angular_first((poses.A_H_B.inverse() @ Motion(poses.m)).vector))


def test_order_tds(poses):
    E, r = transform_to_tds(poses.A_H_B)
    # TDS/brax apply a transform to (w, v) as (E^T w, E^T (v - r x w))
    w, v = poses.m[3:], poses.m[:3]
    applied = np.concatenate([E.T @ w, E.T @ (v - np.cross(r, w))])
    assert_close(applied, to_angular_first((poses.A_H_B.inverse() @ Motion(poses.m)).vector))
    _check_angular_first(E.T, r, poses.m, poses.A_H_B.inverse(), plxb(E, r))


# ---- what the stored transform means
def test_pose_bridge(poses):
    H = poses.A_H_B
    assert_close(H.apply(poses.p), H.rotation @ poses.p + H.translation)  # p_A = A_H_B p_B
    assert_close(H.apply(np.zeros(3)), H.translation)  # translation = origin of B in A
    assert_close((H @ H.inverse()).matrix, np.eye(4))


def test_pose_idyntree(icub, poses):
    H = poses.A_H_B
    T = idyn.Transform(idyn.Rotation(H.rotation), idyn.Position(H.translation))
    assert_close((T * idyn.Position(poses.p)).toNumPy(), H.rotation @ poses.p + H.translation)
    c = icub
    Hb, _, _, _ = traj(c, 0.0)
    idyn_set(c, "mixed", 0.0)
    base = c.reduced.getLinkName(c.reduced.getDefaultBaseLink())
    assert_close(c.kd.getWorldTransform(base).asHomogeneousTransform().toNumPy(), Hb)  # world_H_base


def test_pose_pinocchio(icub, poses):
    H = poses.A_H_B
    M = pin.SE3(H.rotation, H.translation)
    assert_close(M.act(poses.p), H.rotation @ poses.p + H.translation)
    assert_close(M.homogeneous, H.matrix)
    c = icub
    Hb, _, _, _ = traj(c, 0.0)
    assert_close(pin_frame_pose(c, "root_link", 0.0), Hb)  # data.oMf = world_H_frame


def test_pose_spatial_v2(poses):
    H = poses.A_H_B
    E, r = transform_to_featherstone(H)
    assert_close(E, H.rotation.T)
    assert_close(r, H.translation)  # E = B_R_A, r = A_o_B
    # plux(E, r) maps A coordinates to B coordinates (B_X_A)
    assert_close(plux(E, r), reorder_matrix(H.inverse().motion_matrix()))
    assert transform_from_featherstone(E, r).allclose(H)


def test_pose_rbdl(poses):
    H = poses.A_H_B
    E, r = transform_to_rbdl(H)
    E2, r2 = transform_to_featherstone(H)
    assert np.array_equal(E, E2) and np.array_equal(r, r2)  # same (E, r) meaning as spatial_v2
    assert transform_from_rbdl(E, r).allclose(H)


def test_pose_tds(poses):
    H = poses.A_H_B
    E, r = transform_to_tds(H)
    assert_close(E, H.rotation)
    assert_close(r, H.translation)  # E = A_R_B, r = A_o_B
    assert_close(plxb(E, r), reorder_matrix(H.inverse().motion_matrix()))  # numerically B_X_A
    assert transform_from_tds(E, r).allclose(H)


# ---- 6x6 motion transform
def _linear_first_blocks(H: Transform) -> tuple[np.ndarray, np.ndarray]:
    R, p = H.rotation, H.translation
    X = np.block([[R, skew(p) @ R], [np.zeros((3, 3)), R]])
    return X, np.linalg.inv(X).T


def test_xmat_bridge(poses):
    X, Xf = _linear_first_blocks(poses.A_H_B)
    assert_close(poses.A_H_B.motion_matrix(), X)
    assert_close(poses.A_H_B.force_matrix(), Xf)
    assert_close(
        poses.A_H_B.force_matrix(),
        np.block(
            [
                [poses.A_H_B.rotation, np.zeros((3, 3))],
                [skew(poses.A_H_B.translation) @ poses.A_H_B.rotation, poses.A_H_B.rotation],
            ]
        ),
    )


def test_xmat_idyntree(poses):
    H = poses.A_H_B
    T = idyn.Transform(idyn.Rotation(H.rotation), idyn.Position(H.translation))
    X, Xf = _linear_first_blocks(H)
    assert_close(T.asAdjointTransform().toNumPy(), X)
    assert_close(T.asAdjointTransformWrench().toNumPy(), Xf)


def test_xmat_pinocchio(poses):
    H = poses.A_H_B
    M = pin.SE3(H.rotation, H.translation)
    X, Xf = _linear_first_blocks(H)
    assert_close(M.action, X)
    assert_close(M.dualAction, Xf)


def _angular_first_plux(E, r):
    return np.block([[E, np.zeros((3, 3))], [-E @ skew(r), E]])


def test_xmat_spatial_v2(poses):
    E, r = transform_to_featherstone(poses.A_H_B)
    X = plux(E, r)
    assert_close(X, _angular_first_plux(E, r))
    assert_close(np.linalg.inv(X).T, reorder_matrix(poses.A_H_B.inverse().force_matrix()))  # forces: X^-T


def test_xmat_rbdl(poses):
    E, r = transform_to_rbdl(poses.A_H_B)
    assert_close(transform_to_plux(poses.A_H_B), _angular_first_plux(E, r))


def test_xmat_tds(poses):
    E, r = transform_to_tds(poses.A_H_B)
    Y = transform_to_plxb(poses.A_H_B)
    assert_close(Y, np.block([[E.T, np.zeros((3, 3))], [-E.T @ skew(r), E.T]]))


# ---- composition
def test_compose_bridge(poses):
    A_H_C = poses.A_H_B @ poses.B_H_C
    assert_close(A_H_C.apply(poses.p), poses.A_H_B.apply(poses.B_H_C.apply(poses.p)))
    assert_close(A_H_C.motion_matrix(), poses.A_H_B.motion_matrix() @ poses.B_H_C.motion_matrix())


def _idyn_T(H: Transform):
    return idyn.Transform(idyn.Rotation(H.rotation), idyn.Position(H.translation))


def test_compose_idyntree(poses):
    T = _idyn_T(poses.A_H_B) * _idyn_T(poses.B_H_C)
    assert_close(T.asHomogeneousTransform().toNumPy(), (poses.A_H_B @ poses.B_H_C).matrix)


def test_compose_pinocchio(poses):
    M1 = pin.SE3(poses.A_H_B.rotation, poses.A_H_B.translation)
    M2 = pin.SE3(poses.B_H_C.rotation, poses.B_H_C.translation)
    assert_close((M1 * M2).homogeneous, (poses.A_H_B @ poses.B_H_C).matrix)
    assert_close((M1 * M2).action, M1.action @ M2.action)


def test_compose_spatial_v2(poses):
    E2, r2 = transform_to_featherstone(poses.A_H_B)  # B_X_A
    E1, r1 = transform_to_featherstone(poses.B_H_C)  # C_X_B
    C_X_A = plux(E1, r1) @ plux(E2, r2)  # left-associative: the first applied is on the right
    assert_close(C_X_A, plux(E1 @ E2, r2 + E2.T @ r1))
    assert_close(C_X_A, transform_to_plux(poses.A_H_B @ poses.B_H_C))


def test_compose_rbdl(poses):
    E2, r2 = transform_to_rbdl(poses.A_H_B)
    E1, r1 = transform_to_rbdl(poses.B_H_C)
    # RBDL: X1 * X2 = SpatialTransform(E1 E2, r2 + E2^T r1)
    E, r = E1 @ E2, r2 + E2.T @ r1
    assert transform_from_rbdl(E, r).allclose(poses.A_H_B @ poses.B_H_C)


def test_compose_tds(poses):
    E1, r1 = transform_to_tds(poses.A_H_B)  # parent first
    E2, r2 = transform_to_tds(poses.B_H_C)
    # right-associative: Y1 * Y2 = plxb(E1 E2, r1 + E1 r2), applied Y1 first
    E, r = E1 @ E2, r1 + E1 @ r2
    assert transform_from_tds(E, r).allclose(poses.A_H_B @ poses.B_H_C)
    assert_close(plxb(E, r), plxb(E2, r2) @ plxb(E1, r1))  # as 6x6 matrices the order is reversed


# ---- quaternions
def test_quat_bridge():
    th = 0.7
    Rz = rot_z(th)
    c, s = np.cos(th / 2), np.sin(th / 2)
    assert_close(Transform.from_quaternion_xyzw([0, 0, s, c]).rotation, Rz)
    assert_close(Transform.from_quaternion_wxyz([c, 0, 0, s]).rotation, Rz)
    assert_close(Transform.from_rotation_translation(Rz).as_quaternion_xyzw(), [0, 0, s, c])
    # a State stores the base pose as a 4x4 matrix, not as a quaternion
    st = bridge.State(np.eye(4), np.zeros(1), np.zeros(6), np.zeros(1))
    assert st.world_H_base.matrix.shape == (4, 4)


def test_quat_idyntree():
    th = 0.7
    c, s = np.cos(th / 2), np.sin(th / 2)
    assert_close(idyn.Rotation.RotZ(th).asQuaternion().toNumPy(), [c, 0, 0, s])  # (w, x, y, z)
    R = idyn.Rotation.RotationFromQuaternion(idyn.Vector4.FromPython([c, 0, 0, s]))
    assert_close(R.toNumPy(), rot_z(th))


def test_quat_pinocchio(icub):
    q = pin.Quaternion(1.0, 2.0, 3.0, 4.0)  # constructor (w, x, y, z)
    assert q.w == 1.0 and np.array_equal(q.coeffs(), [2.0, 3.0, 4.0, 1.0])  # storage (x, y, z, w)
    assert np.array_equal(pin.neutral(icub.pm)[3:7], [0.0, 0.0, 0.0, 1.0])
    th = 0.7
    qz = pin.neutral(icub.pm)
    qz[3:7] = [0, 0, np.sin(th / 2), np.cos(th / 2)]
    pin.framesForwardKinematics(icub.pm, icub.pd, qz)
    assert_close(icub.pd.oMi[1].rotation, rot_z(th))


def test_rbdl_tds_transforms_only():
    """bridge converts RBDL's and TDS/brax's transforms only: no state, velocity or engine for them."""
    for name in ("rbdl", "tds", "brax"):
        with pytest.raises(bridge.InvalidValueError):
            bridge.KinDyn(bridge.random_model(2, seed=0), engine=name)
        with pytest.raises(bridge.InvalidValueError):
            bridge.Representation.parse(name)
    from bridge.conventions.convert import convention_names

    CONVENTIONS = convention_names()

    # the velocity conventions bridge knows: the neutral ones and one per library with an engine
    assert {"body", "inertial", "mixed", "pinocchio", "featherstone", "mujoco", "drake"} <= set(CONVENTIONS)
    assert not {"rbdl", "tds", "brax"} & set(CONVENTIONS)
    assert callable(transform_to_rbdl) and callable(transform_to_tds)


# =================================================================== table 2: velocity representations
def test_rep_body_def(icub, fd_pose):
    H, Hd = fd_pose
    v = definition_velocity(H, Hd, "body")
    assert_close(v, vee6(np.linalg.inv(H) @ Hd), FD_RTOL)  # (H^-1 H_dot)^v
    assert_close(v, base_velocity(H, traj(icub, 0.0)[2], "body"), FD_RTOL)


def test_rep_inertial_def(icub, fd_pose):
    H, Hd = fd_pose
    v = definition_velocity(H, Hd, "inertial")
    assert_close(v, vee6(Hd @ np.linalg.inv(H)), FD_RTOL)  # (H_dot H^-1)^v
    assert_close(v, base_velocity(H, traj(icub, 0.0)[2], "inertial"), FD_RTOL)
    # the erratum: the linear part uses the position o, not its derivative
    wrong = Hd[:3, 3] - (Hd[:3, :3] @ H[:3, :3].T) @ Hd[:3, 3]
    assert_not_close(v[:3], wrong, 1e-3)


def test_rep_mixed_def(icub, fd_pose):
    H, Hd = fd_pose
    v = definition_velocity(H, Hd, "mixed")
    assert_close(v[:3], Hd[:3, 3], FD_RTOL)
    assert_close(v, traj(icub, 0.0)[2], FD_RTOL)


def _bridge_rep(icub, rep: str, names: tuple[str, ...]):
    for name in names:
        assert bridge.Representation.parse(name) is bridge.Representation(rep)
    H, s, vm, sd = traj(icub, 0.0)
    st = bridge.State(H, s, vm, sd, "mixed")
    assert_close(st.base_velocity_in(rep), base_velocity(H, vm, rep))
    kd = bridge_kd(icub, rep, 0.0)
    assert_close(kd.frame_velocity(FRAME), fd_frame_velocity(icub, FRAME, rep), FD_RTOL)


def test_rep_body_bridge(icub):
    _bridge_rep(icub, "body", ("body", "BODY_FIXED_REPRESENTATION", "LOCAL"))


def test_rep_inertial_bridge(icub):
    _bridge_rep(icub, "inertial", ("inertial", "INERTIAL_FIXED_REPRESENTATION", "WORLD"))


def test_rep_mixed_bridge(icub):
    _bridge_rep(icub, "mixed", ("mixed", "MIXED_REPRESENTATION", "LOCAL_WORLD_ALIGNED"))


def _idyn_rep(icub, rep: str):
    expected = fd_frame_velocity(icub, FRAME, rep, pose=idyn_frame_pose)
    assert_close(idyn_frame_velocity(icub, FRAME, rep, 0.0), expected, FD_RTOL)


def test_rep_body_idyntree(icub):
    _idyn_rep(icub, "body")


def test_rep_inertial_idyntree(icub):
    _idyn_rep(icub, "inertial")


def test_rep_mixed_idyntree(icub):
    _idyn_rep(icub, "mixed")


def _pin_rep(icub, rep: str):
    expected = fd_frame_velocity(icub, FRAME, rep)
    assert_close(pin_frame_velocity(icub, FRAME, REPS[rep][1], 0.0), expected, FD_RTOL)


def test_rep_body_pinocchio(icub):
    _pin_rep(icub, "body")


def test_rep_inertial_pinocchio(icub):
    _pin_rep(icub, "inertial")


def test_rep_mixed_pinocchio(icub):
    _pin_rep(icub, "mixed")


def test_default_bridge(icub):
    H, s, vm, sd = traj(icub, 0.0)
    assert bridge.State(H, s, vm, sd).representation is bridge.Representation.MIXED
    assert bridge.KinDyn(icub.model).representation is bridge.Representation.MIXED


def test_default_idyntree():
    assert idyn.KinDynComputations().getFrameVelocityRepresentation() == idyn.MIXED_REPRESENTATION


def test_default_pinocchio(icub):
    c = icub
    q, v = pin_qv(c, 0.0)
    fid = c.pm.getFrameId(FRAME)
    pin.forwardKinematics(c.pm, c.pd, q, v, pin_a(c))
    pin.updateFramePlacements(c.pm, c.pd)
    assert np.array_equal(
        pin.getFrameVelocity(c.pm, c.pd, fid).vector, pin.getFrameVelocity(c.pm, c.pd, fid, pin.LOCAL).vector
    )
    assert np.array_equal(
        pin.getFrameAcceleration(c.pm, c.pd, fid).vector,
        pin.getFrameAcceleration(c.pm, c.pd, fid, pin.LOCAL).vector,
    )


# ========================================================================== table 3: state layout
def test_base_pose_bridge(icub):
    H, s, vm, sd = traj(icub, 0.0)
    st = bridge.State(H, s, vm, sd)
    assert isinstance(st.world_H_base, Transform)
    assert_close(st.world_H_base.matrix, H)
    assert st.s.shape == (icub.n,)  # the base is not part of s


def test_base_pose_idyntree(icub):
    c = icub
    assert c.full.getNrOfPosCoords() == c.full.getNrOfDOFs() == c.n  # no base coordinates in s
    H, _, _, _ = traj(c, 0.0)
    idyn_set(c, "mixed", 0.0)  # setRobotState(world_H_base (4x4), s, base velocity, s_dot, gravity)
    assert_close(c.kd.getWorldTransform("root_link").asHomogeneousTransform().toNumPy(), H)


def test_base_pose_pinocchio(icub):
    c = icub
    assert c.pm.nq == 7 + c.n and c.pm.nv == 6 + c.n
    q, _ = pin_qv(c, 0.0)
    H, s, _, _ = traj(c, 0.0)
    assert_close(q[:3], H[:3, 3])  # A_o_B first
    pin.framesForwardKinematics(c.pm, c.pd, q)
    assert_close(c.pd.oMi[1].homogeneous, H)  # q[3:7] = quaternion (x, y, z, w) of A_R_B
    assert np.array_equal(q[7:], s)


def urdf(name: str, links: list[str], joints: list[tuple[str, str, str, str]]) -> str:
    """A URDF with unit-mass links and (name, type, parent, child) joints about z."""
    inertia = '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
    body = [f'<link name="{n}"><inertial><mass value="1"/>{inertia}</inertial></link>' for n in links]
    body += [
        f'<joint name="{j}" type="{t}"><parent link="{p}"/><child link="{c}"/><axis xyz="0 0 1"/></joint>'
        for j, t, p, c in joints
    ]
    return f'<robot name="{name}">' + "".join(body) + "</robot>"


CONTINUOUS_URDF = urdf("wheel", ["base", "wheel"], [("spin", "continuous", "base", "wheel")])


def test_joint_pos_bridge():
    model = bridge.load_urdf(CONTINUOUS_URDF)
    assert model.joint("spin").kind is bridge.JointKind.CONTINUOUS and model.n_dofs == 1
    q, _ = bridge.to_pinocchio_state(model, bridge.State(np.eye(4), [0.3], np.zeros(6), [0.0]))
    assert_close(q[7:], [np.cos(0.3), np.sin(0.3)])  # one angle in bridge, (cos, sin) in Pinocchio


def test_joint_pos_idyntree():
    loader = idyn.ModelLoader()
    assert loader.loadModelFromString(CONTINUOUS_URDF)
    assert loader.model().getNrOfPosCoords() == loader.model().getNrOfDOFs() == 1


def test_joint_pos_pinocchio():
    pm = pin.buildModelFromXML(CONTINUOUS_URDF, pin.JointModelFreeFlyer())
    assert pm.nq == 7 + 2 and pm.nv == 6 + 1
    q = pin.neutral(pm)
    assert np.array_equal(q[7:], [1.0, 0.0])  # (cos, sin) of the angle
    q[7:] = [np.cos(0.3), np.sin(0.3)]
    pd = pm.createData()
    pin.framesForwardKinematics(pm, pd, q)
    assert_close(pd.oMi[2].rotation, rot_z(0.3))


def test_base_vel_bridge(icub):
    H, s, vm, sd = traj(icub, 0.0)
    for rep in REPS:
        st = bridge.State(H, s, base_velocity(H, vm, rep), sd, rep)
        assert_close(st.nu, np.concatenate([base_velocity(H, vm, rep), sd]))  # nu = [base; s_dot]
        assert_close(st.to("mixed").base_velocity, vm)


def test_base_vel_idyntree(icub):
    c = icub
    H, _, vm, _ = traj(c, 0.0)
    for rep in REPS:
        idyn_set(c, rep, 0.0)
        # the base velocity passed to setRobotState is the base link's velocity in the representation
        assert_close(c.kd.getBaseTwist().toNumPy(), base_velocity(H, vm, rep))
        assert_close(c.kd.getFrameVel("root_link").toNumPy(), base_velocity(H, vm, rep))
    assert_close(
        idyn_frame_velocity(c, "root_link", "mixed", 0.0), fd_frame_velocity(c, "root_link", "mixed"), FD_RTOL
    )


def test_base_vel_pinocchio(icub):
    c = icub
    _, v = pin_qv(c, 0.0)
    # v[:6] is the LOCAL (body) velocity of the base, whatever frame velocities are asked in
    assert_close(v[:6], fd_frame_velocity(c, "root_link", "body"), FD_RTOL)
    assert_close(pin_frame_velocity(c, "root_link", pin.LOCAL, 0.0), v[:6])


def test_gen_acc_bridge(icub):
    for rep in REPS:
        kd = bridge_kd(icub, rep, 0.0)
        a = base_acceleration(icub, rep)
        # the base acceleration is the derivative of the base velocity in the representation
        assert_close(kd.frame_acceleration("root_link", a, icub.sdd), a)


def test_gen_acc_idyntree(icub):
    c = icub
    for rep in REPS:
        a = base_acceleration(c, rep)
        idyn_set(c, rep, 0.0)
        assert_close(c.kd.getFrameAcc("root_link", a, c.sdd).toNumPy(), a)
        assert_close(a, fd(lambda t, rep=rep: base_velocity(traj(c, t)[0], traj(c, t)[2], rep)), FD_RTOL)


def test_gen_acc_pinocchio(icub):
    c = icub
    a = pin_a(c)
    # a = dv/dt: the base part is the derivative of the LOCAL base velocity ...
    assert_close(a[:6], fd(lambda t: pin_qv(c, t)[1][:6]), FD_RTOL)
    # ... which is the spatial acceleration of the base in base coordinates
    assert_close(pin_frame_acc(c, "root_link", pin.LOCAL, classical=False), a[:6])


def _power_check(icub, rep: str):
    """Generalized forces of iDynTree in ``rep`` and of Pinocchio for the same motion."""
    c = icub
    q, v = pin_qv(c, 0.0)
    tau_pin = pin.rnea(c.pm, c.pm.createData(), q, v, pin_a(c))
    idyn_set(c, rep, 0.0)
    tau = idyn.FreeFloatingGeneralizedTorques(c.reduced)
    lw = idyn.LinkWrenches(c.reduced)
    lw.zero()
    acc = base_acceleration(c, rep)
    assert c.kd.inverseDynamics(acc, c.sdd, lw, tau)
    tau_idyn = np.concatenate([tau.baseWrench().toNumPy(), tau.jointTorques().toNumPy()])
    H, _, vm, sd = traj(c, 0.0)
    nu = np.concatenate([base_velocity(H, vm, rep), sd])
    return tau_pin, tau_idyn, v, nu


def test_gen_force_bridge(icub):
    c = icub
    q, v = pin_qv(c, 0.0)
    tau_pin = pin.rnea(c.pm, c.pm.createData(), q, v, pin_a(c))
    for rep in REPS:
        kd = bridge_kd(c, rep, 0.0)
        tau = kd.inverse_dynamics(base_acceleration(c, rep), c.sdd)
        assert_close(tau @ kd.nu, tau_pin @ v)  # dual to nu: the same power
        assert_close(tau[6:], tau_pin[6:])


def test_gen_force_idyntree(icub):
    for rep in REPS:
        tau_pin, tau_idyn, v, nu = _power_check(icub, rep)
        assert_close(tau_idyn @ nu, tau_pin @ v)
        H = traj(icub, 0.0)[0]
        # tau^idyn = T^T tau^pin with T = blkdiag(B_X_W, I): the base wrench is in the frame W
        e = np.eye(6)
        vm_cols = [base_velocity(H, base_velocity_inverse(H, e[k], rep), "body") for k in range(6)]
        B_X_W = np.column_stack(vm_cols)
        assert_close(tau_idyn[:6], B_X_W.T @ tau_pin[:6])
        assert_close(tau_idyn[6:], tau_pin[6:])


def base_velocity_inverse(H: np.ndarray, v: np.ndarray, rep: str) -> np.ndarray:
    """The mixed base velocity whose ``rep`` form is ``v`` (inverse of :func:`base_velocity`)."""
    R, o = H[:3, :3], H[:3, 3]
    if rep == "mixed":
        return v.copy()
    if rep == "body":
        return np.concatenate([R @ v[:3], R @ v[3:]])
    return np.concatenate([v[:3] + np.cross(v[3:], o), v[3:]])


def test_gen_force_pinocchio(icub):
    # rnea's base part is the wrench on the base in base (LOCAL) coordinates: iDynTree's BODY one
    tau_pin, tau_idyn, v, nu = _power_check(icub, "body")
    assert_close(tau_pin, tau_idyn)
    assert_close(v, nu)


# ==================================================================== table 4: frame accelerations
def test_acc_body_idyntree(icub):
    expected = fd(lambda t: idyn_frame_velocity(icub, FRAME, "body", t))
    assert_close(idyn_frame_acc(icub, FRAME, "body"), expected, FD_RTOL)


def test_acc_inertial_idyntree(icub):
    expected = fd(lambda t: idyn_frame_velocity(icub, FRAME, "inertial", t))
    assert_close(idyn_frame_acc(icub, FRAME, "inertial"), expected, FD_RTOL)


def test_acc_mixed_idyntree(icub):
    expected = fd(lambda t: idyn_frame_velocity(icub, FRAME, "mixed", t))
    assert_close(idyn_frame_acc(icub, FRAME, "mixed"), expected, FD_RTOL)
    # the classical acceleration: (p_ddot, w_dot) of the frame origin
    p_ddot = (
        pin_frame_pose(icub, FRAME, DT)[:3, 3]
        - 2 * pin_frame_pose(icub, FRAME, 0.0)[:3, 3]
        + pin_frame_pose(icub, FRAME, -DT)[:3, 3]
    ) / DT**2
    assert_close(idyn_frame_acc(icub, FRAME, "mixed")[:3], p_ddot, 1e-4)


def test_acc_body_pin_spatial(icub):
    expected = fd(lambda t: pin_frame_velocity(icub, FRAME, pin.LOCAL, t))
    assert_close(pin_frame_acc(icub, FRAME, pin.LOCAL, classical=False), expected, FD_RTOL)


def test_acc_inertial_pin_spatial(icub):
    expected = fd(lambda t: pin_frame_velocity(icub, FRAME, pin.WORLD, t))
    assert_close(pin_frame_acc(icub, FRAME, pin.WORLD, classical=False), expected, FD_RTOL)


def _frame_motion(c):
    """(F_R, p_dot, w) of the frame at t = 0 (w in world coordinates)."""
    vm = pin_frame_velocity(c, FRAME, pin.LOCAL_WORLD_ALIGNED, 0.0)
    return pin_frame_pose(c, FRAME, 0.0)[:3, :3], vm[:3], vm[3:]


def test_acc_mixed_pin_spatial(icub):
    c = icub
    a = pin_frame_acc(c, FRAME, pin.LOCAL_WORLD_ALIGNED, classical=False)
    derivative = fd(lambda t: pin_frame_velocity(c, FRAME, pin.LOCAL_WORLD_ALIGNED, t))
    R, pd, w = _frame_motion(c)
    # not the derivative of the LWA velocity: the spatial acceleration (p_ddot - w x p_dot, w_dot)
    assert_close(a, derivative - np.concatenate([np.cross(w, pd), np.zeros(3)]), FD_RTOL)
    assert_not_close(a, derivative, 1e-3)
    # = the LOCAL spatial acceleration rotated to world axes
    aL = pin_frame_acc(c, FRAME, pin.LOCAL, classical=False)
    assert_close(a, np.concatenate([R @ aL[:3], R @ aL[3:]]))


def test_acc_body_pin_classical(icub):
    c = icub
    a = pin_frame_acc(c, FRAME, pin.LOCAL, classical=True)
    R = _frame_motion(c)[0]
    classical = fd(lambda t: pin_frame_velocity(c, FRAME, pin.LOCAL_WORLD_ALIGNED, t))
    # the classical acceleration (p_ddot, w_dot) in frame coordinates ...
    assert_close(a, np.concatenate([R.T @ classical[:3], R.T @ classical[3:]]), FD_RTOL)
    # ... which is not the derivative of the LOCAL velocity
    assert_not_close(a, fd(lambda t: pin_frame_velocity(c, FRAME, pin.LOCAL, t)), 1e-3)


def test_acc_inertial_pin_classical(icub):
    c = icub
    a = pin_frame_acc(c, FRAME, pin.WORLD, classical=True)
    vw = pin_frame_velocity(c, FRAME, pin.WORLD, 0.0)
    spatial = fd(lambda t: pin_frame_velocity(c, FRAME, pin.WORLD, t))
    # the classical acceleration of the body point passing through the world origin:
    # the spatial (world) acceleration plus w x v, with v the linear part of the WORLD velocity
    assert_close(a, spatial + np.concatenate([np.cross(vw[3:], vw[:3]), np.zeros(3)]), FD_RTOL)
    assert_not_close(a, spatial, 1e-3)


def test_acc_mixed_pin_classical(icub):
    expected = fd(lambda t: pin_frame_velocity(icub, FRAME, pin.LOCAL_WORLD_ALIGNED, t))
    a = pin_frame_acc(icub, FRAME, pin.LOCAL_WORLD_ALIGNED, classical=True)
    assert_close(a, expected, FD_RTOL)
    assert_close(a, idyn_frame_acc(icub, FRAME, "mixed"))  # = iDynTree's MIXED getFrameAcc


def _bridge_acc(icub, rep: str):
    kd = bridge_kd(icub, rep, 0.0)
    a = kd.frame_acceleration(FRAME, base_acceleration(icub, rep), icub.sdd)
    expected = fd(lambda t: bridge_kd(icub, rep, t).frame_velocity(FRAME))
    assert_close(a, expected, FD_RTOL)
    assert_close(a, idyn_frame_acc(icub, FRAME, rep))


def test_acc_body_bridge(icub):
    _bridge_acc(icub, "body")


def test_acc_inertial_bridge(icub):
    _bridge_acc(icub, "inertial")


def test_acc_mixed_bridge(icub):
    _bridge_acc(icub, "mixed")


def _idyn_bias(icub, rep: str):
    c = icub
    idyn_set(c, rep, 0.0)
    bias = np.array(c.kd.getFrameBiasAcc(FRAME).toNumPy())
    zero = np.array(c.kd.getFrameAcc(FRAME, np.zeros(6), np.zeros(c.n)).toNumPy())
    assert_close(bias, zero)  # J_dot nu: the frame acceleration at zero nu_dot in the representation
    J = idyn.MatrixDynSize(6, 6 + c.n)
    assert c.kd.getFrameFreeFloatingJacobian(FRAME, J)
    a = np.concatenate([base_acceleration(c, rep), c.sdd])
    assert_close(J.toNumPy() @ a + bias, idyn_frame_acc(c, FRAME, rep))


def _pin_bias(icub, rep: str):
    """getFrameJacobianTimeVariation(rf) is the time derivative of getFrameJacobian(rf)."""
    c = icub
    rf = REPS[rep][1]
    fid = c.pm.getFrameId(FRAME)

    def jac(t):
        q, _ = pin_qv(c, t, accelerate=False)
        d = c.pm.createData()
        pin.computeJointJacobians(c.pm, d, q)
        pin.updateFramePlacements(c.pm, d)
        return pin.getFrameJacobian(c.pm, d, fid, rf)

    q, v = pin_qv(c, 0.0, accelerate=False)  # constant LOCAL velocity: v(t) = v
    d = c.pm.createData()
    pin.computeJointJacobiansTimeVariation(c.pm, d, q, v)
    pin.updateFramePlacements(c.pm, d)
    Jd = pin.getFrameJacobianTimeVariation(c.pm, d, fid, rf)
    assert_close(Jd, fd(jac), 1e-6)
    d2 = c.pm.createData()
    pin.forwardKinematics(c.pm, d2, q, v, np.zeros(c.pm.nv))
    pin.updateFramePlacements(c.pm, d2)
    get = pin.getFrameClassicalAcceleration if rep == "mixed" else pin.getFrameAcceleration
    assert_close(Jd @ v, get(c.pm, d2, fid, rf).vector)


def _bridge_bias(icub, rep: str):
    kd = bridge_kd(icub, rep, 0.0)
    zero = kd.frame_acceleration(FRAME, np.zeros(6), np.zeros(icub.n))
    assert_close(kd.frame_bias_acc(FRAME), zero)
    idyn_set(icub, rep, 0.0)
    assert_close(kd.frame_bias_acc(FRAME), icub.kd.getFrameBiasAcc(FRAME).toNumPy())


def test_bias_body_idyntree(icub):
    _idyn_bias(icub, "body")


def test_bias_inertial_idyntree(icub):
    _idyn_bias(icub, "inertial")


def test_bias_mixed_idyntree(icub):
    _idyn_bias(icub, "mixed")


def test_bias_body_pinocchio(icub):
    _pin_bias(icub, "body")


def test_bias_inertial_pinocchio(icub):
    _pin_bias(icub, "inertial")


def test_bias_mixed_pinocchio(icub):
    _pin_bias(icub, "mixed")


def test_bias_body_bridge(icub):
    _bridge_bias(icub, "body")


def test_bias_inertial_bridge(icub):
    _bridge_bias(icub, "inertial")


def test_bias_mixed_bridge(icub):
    _bridge_bias(icub, "mixed")


# ======================================================================= momentum
def _momentum_world(c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Definition: ``(p, k about the world origin, com)`` summed body by body from Pinocchio's
    per-joint inertias and velocities at t = 0 (world axes)."""
    q, v = pin_qv(c, 0.0)
    d = c.pm.createData()
    pin.forwardKinematics(c.pm, d, q, v)
    h = np.zeros(6)
    for j in range(1, c.pm.njoints):
        h += d.oMi[j].act(c.pm.inertias[j] * d.v[j]).vector  # momentum of body j at the world origin
    com = pin.centerOfMass(c.pm, d, q)
    return h[:3], h[3:], com


def _momentum_expected(c, rep: str, kind: str) -> np.ndarray:
    p, k_A, com = _momentum_world(c)
    H, _, _, _ = traj(c, 0.0)
    R, o = H[:3, :3], H[:3, 3]
    if kind == "centroidal":
        h = np.concatenate([p, k_A - np.cross(com, p)])
    elif rep == "inertial":
        h = np.concatenate([p, k_A])
    else:
        h = np.concatenate([p, k_A - np.cross(o, p)])
    return np.concatenate([R.T @ h[:3], R.T @ h[3:]]) if rep == "body" else h


def _idyn_momentum(c, rep: str, kind: str) -> None:
    idyn_set(c, rep, 0.0)
    get = c.kd.getCentroidalTotalMomentum if kind == "centroidal" else c.kd.getLinearAngularMomentum
    assert_close(np.array(get().asVector().toNumPy()), _momentum_expected(c, rep, kind))


def _bridge_momentum(c, rep: str, kind: str) -> None:
    expected = _momentum_expected(c, rep, kind)
    for engine in ("pinocchio", "idyntree", "featherstone"):
        kd = bridge_kd(c, rep, 0.0, engine)
        h = kd.centroidal_momentum() if kind == "centroidal" else kd.total_momentum()
        assert_close(h, expected, what=engine)
        if kind == "total":
            assert_close(h, (kd.mass_matrix() @ kd.nu)[:6], what=engine)


def test_momentum_total_body_idyntree(icub):
    _idyn_momentum(icub, "body", "total")


def test_momentum_total_inertial_idyntree(icub):
    _idyn_momentum(icub, "inertial", "total")


def test_momentum_total_mixed_idyntree(icub):
    _idyn_momentum(icub, "mixed", "total")


def test_momentum_centroidal_body_idyntree(icub):
    _idyn_momentum(icub, "body", "centroidal")


def test_momentum_centroidal_inertial_idyntree(icub):
    _idyn_momentum(icub, "inertial", "centroidal")


def test_momentum_centroidal_mixed_idyntree(icub):
    _idyn_momentum(icub, "mixed", "centroidal")


def test_momentum_total_body_bridge(icub):
    _bridge_momentum(icub, "body", "total")


def test_momentum_total_inertial_bridge(icub):
    _bridge_momentum(icub, "inertial", "total")


def test_momentum_total_mixed_bridge(icub):
    _bridge_momentum(icub, "mixed", "total")


def test_momentum_centroidal_body_bridge(icub):
    _bridge_momentum(icub, "body", "centroidal")


def test_momentum_centroidal_inertial_bridge(icub):
    _bridge_momentum(icub, "inertial", "centroidal")


def test_momentum_centroidal_mixed_bridge(icub):
    _bridge_momentum(icub, "mixed", "centroidal")


def test_momentum_pinocchio(icub):
    c = icub
    q, v = pin_qv(c, 0.0)
    d = c.pm.createData()
    hg = pin.computeCentroidalMomentum(c.pm, d, q, v)
    expected = _momentum_expected(c, "mixed", "centroidal")  # G[A]
    assert_close(hg.vector, expected)
    assert_close(np.concatenate([hg.linear, hg.angular]), expected)
    assert_close(d.com[0], _momentum_world(c)[2], 1e-14)


# ======================================================================= quantities after M
REF = "r_hand"  # the reference frame of the relative quantities (FRAME is the other one)


def _after_state(c, rep: str) -> bridge.State:
    H, s, vm, sd = traj(c, 0.0)
    return bridge.State(H, s, base_velocity(H, vm, rep), sd, rep)


def _after_T(c, rep: str) -> tuple[np.ndarray, np.ndarray]:
    """``(T, T_dot)`` with Pinocchio's ``v = T nu`` in ``rep`` for the fixture's Pinocchio model:
    its DOF order is the bridge model's, so v is the BODY generalized velocity."""
    T, T_dot = bridge.velocity_transform(c.model, _after_state(c, rep), rep, "body")
    return np.asarray(T), np.asarray(T_dot)


def _pin_M(c, q) -> np.ndarray:
    M = pin.crba(c.pm, c.pd, q).copy()
    return np.triu(M) + np.triu(M, 1).T


def _idyn_matrix(c, rows: int, cols: int, getter: str, *args) -> np.ndarray:
    J = idyn.MatrixDynSize(rows, cols)
    assert getattr(c.kd, getter)(*args, J)
    return J.toNumPy().copy()


def _fd_along(c, rep: str, fn):
    """Central difference of ``fn(KinDyn)`` along the fixture's trajectory (pinocchio engine)."""
    return fd(lambda t: fn(bridge_kd(c, rep, t)))


def test_after_m_cmm_bridge(icub):
    c = icub
    for rep in REPS:
        for engine in ("pinocchio", "idyntree", "featherstone"):
            kd = bridge_kd(c, rep, 0.0, engine)
            A = kd.centroidal_momentum_matrix()
            assert_close(A @ kd.nu, kd.centroidal_momentum(), 1e-10, str((rep, engine)))
            assert_close(A @ kd.nu, _momentum_expected(c, rep, "centroidal"), 1e-10, str((rep, engine)))


def test_after_m_cmm_idyntree(icub):
    c = icub
    for rep in REPS:
        idyn_set(c, rep, 0.0)
        A = _idyn_matrix(c, 6, 6 + c.n, "getCentroidalTotalMomentumJacobian")
        nu = np.concatenate([base_velocity(*traj(c, 0.0)[0:1], traj(c, 0.0)[2], rep), c.sd])
        assert_close(
            A @ nu, np.array(c.kd.getCentroidalTotalMomentum().asVector().toNumPy()), 1e-10, str(rep)
        )
        assert_close(A @ nu, _momentum_expected(c, rep, "centroidal"), 1e-10, str(rep))
        assert_close(bridge_kd(c, rep, 0.0).centroidal_momentum_matrix(), A, 1e-10, str(rep))


def test_after_m_cmm_pinocchio(icub):
    c = icub
    q, v = pin_qv(c, 0.0)
    Ag = pin.computeCentroidalMap(c.pm, c.pd, q).copy()
    assert_close(Ag @ v, _momentum_expected(c, "mixed", "centroidal"), 1e-10)  # G[A]
    assert_close(c.pd.com[0], _momentum_world(c)[2], 1e-14)
    assert_close(pin.ccrba(c.pm, c.pd, q, v).copy(), Ag, 1e-10)
    H = traj(c, 0.0)[0]
    R = H[:3, :3]
    for rep in REPS:
        T, _ = _after_T(c, rep)
        A = bridge_kd(c, rep, 0.0).centroidal_momentum_matrix()
        if rep == "body":
            A = np.concatenate([R @ A[:3], R @ A[3:]])
        assert_close(A, Ag @ T, 1e-10, str(rep))


def test_after_m_momentum_jacobian_bridge(icub):
    c = icub
    for rep in REPS:
        kd = bridge_kd(c, rep, 0.0)
        J = kd.total_momentum_jacobian()
        assert_close(J @ kd.nu, kd.total_momentum(), 1e-10, str(rep))
        assert_close(J @ kd.nu, _momentum_expected(c, rep, "total"), 1e-10, str(rep))
        assert_close(J, kd.mass_matrix()[:6], 1e-10, str(rep))


def test_after_m_momentum_jacobian_idyntree(icub):
    c = icub
    for rep in REPS:
        idyn_set(c, rep, 0.0)
        J = _idyn_matrix(c, 6, 6 + c.n, "getLinearAngularMomentumJacobian")
        H, _, vm, _ = traj(c, 0.0)
        nu = np.concatenate([base_velocity(H, vm, rep), c.sd])
        assert_close(J @ nu, _momentum_expected(c, rep, "total"), 1e-10, str(rep))
        assert_close(bridge_kd(c, rep, 0.0).total_momentum_jacobian(), J, 1e-10, str(rep))


def test_after_m_momentum_jacobian_pinocchio(icub):
    c = icub
    q, v = pin_qv(c, 0.0)
    M = _pin_M(c, q)
    assert_close(M[:6] @ v, _momentum_expected(c, "body", "total"), 1e-10)  # B, base axes
    assert not any("momentumjacobian" in name.lower() for name in dir(pin))
    T, _ = _after_T(c, "body")
    assert_close(bridge_kd(c, "body", 0.0).total_momentum_jacobian(), M[:6] @ T, 1e-10)


def test_after_m_coriolis_bridge(icub):
    c = icub
    for rep in REPS:
        kd = bridge_kd(c, rep, 0.0)
        C = kd.coriolis_matrix()
        assert_close(C @ kd.nu + kd.gravity_forces(), kd.bias_forces(), 1e-10, str(rep))
        M_dot = _fd_along(c, rep, lambda k: k.mass_matrix())
        assert_close(C + C.T, M_dot, FD_RTOL, str(rep))


def _idyn_coriolis(kd, nv: int) -> tuple[np.ndarray, np.ndarray]:
    C, M, M_dot = (idyn.MatrixDynSize(nv, nv) for _ in range(3))
    assert kd.getCoriolisAndMassMatrices(C, M, M_dot)
    return C.toNumPy().copy(), M_dot.toNumPy().copy()


def test_after_m_coriolis_idyntree(icub):
    c = icub
    nv = 6 + c.n
    for rep in REPS:
        idyn_set(c, rep, 0.0)
        C, M_dot = _idyn_coriolis(c.kd, nv)
        kd = bridge_kd(c, rep, 0.0, "idyntree")
        assert_close(C @ kd.nu + kd.gravity_forces(), kd.bias_forces(), 1e-10, str(rep))  # C nu = h - g
        assert_close(M_dot, C + C.T, 1e-10, str(rep))  # its own M_dot ...
        true_M_dot = _fd_along(c, rep, lambda k: k.mass_matrix())
        assert_not_close(M_dot, true_M_dot, 1e-3, str(rep))  # ... is not the derivative of M
        assert_not_close(C[:, :6], kd.coriolis_matrix()[:, :6], 1e-3, str(rep))  # base columns differ
        assert_close(C[:, 6:], kd.coriolis_matrix()[:, 6:], 1e-10, str(rep))  # joint columns agree
    # a fixed base: the joint block is bridge's
    fixed = c.model.with_fixed_base()
    for rep in REPS:
        H, s, _, sd = traj(c, 0.0)
        kdi = kindyn_of(fixed, rep)
        assert kdi.setRobotState(H, s, np.zeros(6), sd, GRAVITY)
        C, _ = _idyn_coriolis(kdi, nv)
        kd = bridge.KinDyn(fixed, engine="featherstone", representation=rep)
        kd.set_state(H, s, np.zeros(6), sd)
        assert_close(C[6:, 6:], kd.coriolis_matrix(), 1e-10, str(rep))
    # ... and on ur5_robot it takes the process down (run apart)
    import subprocess
    import sys

    script = (
        "import numpy as np, idyntree.bindings as idyn, bridge\n"
        "from bridge.robots import robot_path\n"
        "from bridge.backends.idyntree.kindyn import kindyn\n"
        "m = bridge.load_urdf(robot_path('ur5_robot'), floating=False)\n"
        "k = kindyn(m, 'mixed'); n = m.n_dofs\n"
        "k.setRobotState(np.eye(4), np.zeros(n), np.zeros(6), np.zeros(n), np.array([0, 0, -9.81]))\n"
        "C, M, D = (idyn.MatrixDynSize(6 + n, 6 + n) for _ in range(3))\n"
        "k.getCoriolisAndMassMatrices(C, M, D)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert done.returncode < 0, done.stderr.decode()[-500:]  # killed by a signal (SIGSEGV)


def test_after_m_coriolis_pinocchio(icub):
    c = icub
    q, v = pin_qv(c, 0.0)
    C = pin.computeCoriolisMatrix(c.pm, c.pd, q, v).copy()
    M = _pin_M(c, q)
    g = pin.computeGeneralizedGravity(c.pm, c.pd, q).copy()
    assert_close(C @ v + g, pin.nonLinearEffects(c.pm, c.pd, q, v), 1e-10)

    def pin_M_at(t):
        return _pin_M(c, pin_qv(c, t)[0])

    assert_close(C + C.T, fd(pin_M_at), FD_RTOL)
    for rep in REPS:
        T, T_dot = _after_T(c, rep)
        for engine in ("pinocchio", "idyntree", "featherstone"):
            assert_close(
                bridge_kd(c, rep, 0.0, engine).coriolis_matrix(), T.T @ (C @ T + M @ T_dot), 1e-10, str(rep)
            )


def test_after_m_coriolis_forces_bridge(icub):
    c = icub
    for rep in REPS:
        for engine in ("pinocchio", "idyntree", "featherstone"):
            kd = bridge_kd(c, rep, 0.0, engine)
            assert_close(
                kd.coriolis_forces(), kd.bias_forces() - kd.gravity_forces(), 1e-10, str((rep, engine))
            )
            assert_close(kd.coriolis_forces(), kd.coriolis_matrix() @ kd.nu, 1e-10, str((rep, engine)))


def test_after_m_coriolis_forces_idyntree(icub):
    c = icub
    for rep in REPS:
        idyn_set(c, rep, 0.0)
        tau = idyn.FreeFloatingGeneralizedTorques(c.kd.model())
        assert c.kd.generalizedBiasForces(tau)
        h = np.concatenate([tau.baseWrench().toNumPy(), tau.jointTorques().toNumPy()])
        c.kd.getWorldTransform(c.kd.getFloatingBase())  # fresh kinematics (see the backend's note)
        assert c.kd.generalizedGravityForces(tau)
        g = np.concatenate([tau.baseWrench().toNumPy(), tau.jointTorques().toNumPy()])
        assert_close(bridge_kd(c, rep, 0.0).coriolis_forces(), h - g, 1e-10, str(rep))


def test_after_m_coriolis_forces_pinocchio(icub):
    c = icub
    q, v = pin_qv(c, 0.0)
    nle = pin.nonLinearEffects(c.pm, c.pd, q, v).copy()
    g = pin.computeGeneralizedGravity(c.pm, c.pd, q).copy()
    pm = c.pm.copy()
    pm.gravity = pin.Motion.Zero()
    c_pin = pin.rnea(pm, pm.createData(), q, v, np.zeros(pm.nv)).copy()
    assert_close(c_pin, nle - g, 1e-10)
    C = pin.computeCoriolisMatrix(c.pm, c.pd, q, v).copy()
    assert_close(C @ v, c_pin, 1e-10)
    M = _pin_M(c, q)
    for rep in REPS:
        T, T_dot = _after_T(c, rep)
        kd = bridge_kd(c, rep, 0.0)
        assert_close(kd.coriolis_forces(), T.T @ (c_pin + M @ T_dot @ kd.nu), 1e-10, str(rep))


def test_after_m_relative_transform_bridge(icub):
    c = icub
    for engine in ("pinocchio", "idyntree", "featherstone"):
        kd = bridge_kd(c, "mixed", 0.0, engine)
        expected = np.linalg.inv(kd.frame_transform(REF)) @ kd.frame_transform(FRAME)
        assert_close(kd.relative_transform(FRAME, REF), expected, 1e-10, str(engine))
        A_H_R, A_H_F = kd.frame_transform(REF), kd.frame_transform(FRAME)
        origin = A_H_R[:3, :3].T @ (A_H_F[:3, 3] - A_H_R[:3, 3])  # F's origin in R coordinates
        assert_close(kd.relative_transform(FRAME, REF)[:3, 3], origin, 1e-10, str(engine))


def test_after_m_relative_transform_idyntree(icub):
    c = icub
    idyn_set(c, "mixed", 0.0)
    X = c.kd.getRelativeTransform(REF, FRAME)
    H = np.array(X.asHomogeneousTransform().toNumPy())
    world = np.array(c.kd.getWorldTransform(REF).asHomogeneousTransform().toNumPy())
    assert_close(world @ H, np.array(c.kd.getWorldTransform(FRAME).asHomogeneousTransform().toNumPy()), 1e-10)
    assert_close(bridge_kd(c, "mixed", 0.0).relative_transform(FRAME, REF), H, 1e-10)


def test_after_m_relative_transform_pinocchio(icub):
    c = icub
    q, _ = pin_qv(c, 0.0)
    pin.framesForwardKinematics(c.pm, c.pd, q)
    H = (c.pd.oMf[c.pm.getFrameId(REF)].inverse() * c.pd.oMf[c.pm.getFrameId(FRAME)]).homogeneous
    assert_close(bridge_kd(c, "body", 0.0, "featherstone").relative_transform(FRAME, REF), H, 1e-10)


def _relative_definition(H: np.ndarray, H_dot: np.ndarray, rep: str) -> np.ndarray:
    """Velocity of F relative to R from ``R_H_F`` and its derivative: in F, R or F[R]."""
    return definition_velocity(H, H_dot, rep)  # the page's definitions with R in place of A


def test_after_m_relative_jacobian_bridge(icub):
    c = icub
    for rep in REPS:
        kd = bridge_kd(c, rep, 0.0)
        H = kd.relative_transform(FRAME, REF)
        H_dot = _fd_along(c, rep, lambda k: k.relative_transform(FRAME, REF))
        J = kd.relative_jacobian(FRAME, REF)
        assert J.shape == (6, c.n)
        assert_close(J @ c.sd, _relative_definition(H, H_dot, rep), FD_RTOL, str(rep))


def test_after_m_jacobian_derivative_bridge(icub):
    c = icub
    for rep in REPS:
        J_dot_fd = _fd_along(c, rep, lambda k: k.frame_jacobian(FRAME))
        for engine in ("pinocchio", "idyntree", "featherstone"):
            kd = bridge_kd(c, rep, 0.0, engine)
            J_dot = kd.frame_jacobian_derivative(FRAME)
            assert_close(J_dot @ kd.nu, kd.frame_bias_acc(FRAME), 1e-10, str((rep, engine)))
            assert_close(J_dot, J_dot_fd, FD_RTOL, str((rep, engine)))


def test_after_m_jacobian_derivative_idyntree(icub):
    c = icub
    assert not [m for m in dir(c.kd) if "JacobianDerivative" in m or "JacobianTimeVariation" in m]
    for rep in REPS:
        idyn_set(c, rep, 0.0)
        kd = bridge_kd(c, rep, 0.0, "idyntree")
        assert_close(
            kd.frame_jacobian_derivative(FRAME) @ kd.nu, c.kd.getFrameBiasAcc(FRAME).toNumPy(), 1e-10
        )


def test_after_m_jacobian_derivative_pinocchio(icub):
    c = icub
    q, v = pin_qv(c, 0.0)
    fid = c.pm.getFrameId(FRAME)
    d = c.pm.createData()
    pin.computeJointJacobiansTimeVariation(c.pm, d, q, v)
    pin.updateFramePlacements(c.pm, d)
    for rep in REPS:
        rf = REPS[rep][1]
        T, T_dot = _after_T(c, rep)
        expected = (
            pin.getFrameJacobianTimeVariation(c.pm, d, fid, rf) @ T
            + pin.getFrameJacobian(c.pm, d, fid, rf) @ T_dot
        )
        for engine in ("pinocchio", "idyntree", "featherstone"):
            assert_close(
                bridge_kd(c, rep, 0.0, engine).frame_jacobian_derivative(FRAME), expected, 1e-10, rep
            )


def test_after_m_relative_jacobian_idyntree(icub):
    c = icub
    im = c.kd.model()
    for rep in REPS:
        idyn_set(c, rep, 0.0)
        J = _idyn_matrix(c, 6, c.n, "getRelativeJacobian", im.getFrameIndex(REF), im.getFrameIndex(FRAME))
        H = bridge_kd(c, rep, 0.0).relative_transform(FRAME, REF)
        H_dot = _fd_along(c, rep, lambda k: k.relative_transform(FRAME, REF))
        assert_close(J @ c.sd, _relative_definition(H, H_dot, rep), FD_RTOL, str(rep))
        assert_close(bridge_kd(c, rep, 0.0, "featherstone").relative_jacobian(FRAME, REF), J, 1e-10, str(rep))


def test_after_m_relative_jacobian_pinocchio(icub):
    c = icub
    q, _ = pin_qv(c, 0.0)
    pin.computeJointJacobians(c.pm, c.pd, q)
    pin.framesForwardKinematics(c.pm, c.pd, q)
    fF, fR = c.pm.getFrameId(FRAME), c.pm.getFrameId(REF)
    J_F = pin.getFrameJacobian(c.pm, c.pd, fF, pin.WORLD)
    J_R = pin.getFrameJacobian(c.pm, c.pd, fR, pin.WORLD)
    D = (J_F - J_R)[:, 6:]
    A_H_F, A_H_R = c.pd.oMf[fF], c.pd.oMf[fR]
    E = {
        "body": A_H_F,
        "inertial": A_H_R,
        "mixed": pin.SE3(A_H_R.rotation, A_H_F.translation),
    }
    for rep in REPS:
        J = E[rep].inverse().action @ D
        assert_close(bridge_kd(c, rep, 0.0, "idyntree").relative_jacobian(FRAME, REF), J, 1e-10, str(rep))


# ======================================================================= table 5: model structure
def _doc_movable(root) -> list[str]:
    return [j.get("name") for j in root.findall("joint") if j.get("type") != "fixed"]


def _idyn_dof_order(im) -> list[str]:
    names = [im.getJointName(i) for i in range(im.getNrOfJoints()) if im.getJoint(i).getNrOfDOFs() == 1]
    return sorted(names, key=lambda n: im.getJoint(im.getJointIndex(n)).getDOFsOffset())


def _depth_first(root, base: str) -> list[str]:
    """Movable joints depth first from ``base``, siblings sorted by joint name."""
    children: dict[str, list] = {}
    for j in root.findall("joint"):
        children.setdefault(j.find("parent").get("link"), []).append(j)
    out: list[str] = []

    def visit(link):
        for j in sorted(children.get(link, []), key=lambda j: j.get("name")):
            if j.get("type") != "fixed":
                out.append(j.get("name"))
            visit(j.find("child").get("link"))

    visit(base)
    return out


SIBLINGS_URDF = urdf(
    "siblings",
    ["base", "y_link", "z_link", "tip"],
    [
        ("b_joint", "continuous", "base", "y_link"),
        ("c_joint", "continuous", "y_link", "tip"),
        ("a_joint", "continuous", "base", "z_link"),
    ],
)


def test_dof_order_bridge(icub):
    model = bridge.load_urdf(icub.path)
    assert list(model.dof_names) == _doc_movable(icub.root)  # URDF document order by default
    assert list(bridge.load_urdf(SIBLINGS_URDF).dof_names) == ["b_joint", "c_joint", "a_joint"]
    chosen = list(reversed(model.dof_names))
    assert list(bridge.load_urdf(icub.path, joints=chosen).dof_names) == chosen  # or any order given


def test_dof_order_idyntree(icub):
    order = _idyn_dof_order(icub.full)
    assert sorted(order) == sorted(_doc_movable(icub.root))
    assert order != _doc_movable(icub.root) and order != icub.pin_order  # its own order
    # bridge reads that order back from getDOFsOffset
    assert list(bridge.from_idyntree(icub.full).dof_names) == order
    # loadReducedModelFromFile(path, joints) serializes the DOFs in the given order
    assert _idyn_dof_order(icub.reduced) == icub.pin_order


def test_dof_order_pinocchio(icub):
    assert icub.pin_order == _depth_first(icub.root, "root_link")
    assert icub.pin_order != _doc_movable(icub.root)
    pm = pin.buildModelFromXML(SIBLINGS_URDF, pin.JointModelFreeFlyer())
    # siblings by joint name (a_joint before b_joint although b_joint comes first in the file)
    assert [pm.names[i] for i in range(2, pm.njoints)] == ["a_joint", "b_joint", "c_joint"]


SINGLE_URDF = """<robot name="one"><link name="body"><inertial><mass value="2"/>
<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"""


def _urdf_counts(root):
    links = root.findall("link")
    joints = root.findall("joint")
    return len(links), len(joints), len(_doc_movable(root))


def test_count_bridge(icub):
    n_links, n_joints, _ = _urdf_counts(icub.root)
    model = bridge.load_urdf(icub.path)
    assert (len(model.links), len(model.joints)) == (n_links, n_joints) == (213, 212)
    one = bridge.load_urdf(SINGLE_URDF)
    assert (len(one.links), len(one.joints), one.nv) == (1, 0, 6)  # no joint for the floating base


def test_count_idyntree(icub):
    n_dofs = _urdf_counts(icub.root)[2]
    im = icub.full
    assert (im.getNrOfLinks(), im.getNrOfJoints(), im.getNrOfDOFs()) == (39, 38, n_dofs)
    loader = idyn.ModelLoader()
    assert loader.loadModelFromString(SINGLE_URDF)
    assert (loader.model().getNrOfLinks(), loader.model().getNrOfJoints()) == (1, 0)


def test_count_pinocchio(icub):
    _, _, n_dofs = _urdf_counts(icub.root)
    pm = icub.pm
    assert (pm.nbodies, pm.njoints) == (n_dofs + 2, n_dofs + 2) == (34, 34)
    assert pm.names[0] == "universe" and pm.names[1] == "root_joint"
    one = pin.buildModelFromXML(SINGLE_URDF, pin.JointModelFreeFlyer())
    assert (one.nbodies, one.njoints) == (2, 2)


def _mass(link) -> float:
    m = link.find("inertial/mass")
    return float(m.get("value")) if m is not None else 0.0


def test_fixed_bridge(icub):
    model = bridge.load_urdf(icub.path)
    fixed = [j for j in icub.root.findall("joint") if j.get("type") == "fixed"]
    assert sum(not j.movable for j in model.joints) == len(fixed) == 180  # kept as FIXED joints
    lumped = model.lumped()  # merging is explicit
    assert len(lumped.links) == model.n_dofs + 1 and len(lumped.joints) == model.n_dofs
    assert abs(lumped.total_mass - model.total_mass) < 1e-12


def test_fixed_idyntree(icub):
    root, im = icub.root, icub.full
    links = {link.get("name"): link for link in root.findall("link")}
    parent_joint = {j.find("child").get("link"): j for j in root.findall("joint")}
    has_children = {j.find("parent").get("link") for j in root.findall("joint")}
    idyn_links = {im.getLinkName(i) for i in range(im.getNrOfLinks())}
    frames = {im.getFrameName(f) for f in range(im.getNrOfLinks(), im.getNrOfFrames())}
    became_frames = set(links) - idyn_links
    assert became_frames and became_frames <= frames
    for name in became_frames:  # exactly the massless leaf links on fixed joints
        assert _mass(links[name]) == 0.0 and name not in has_children
        assert parent_joint[name].get("type") == "fixed"
    for name in idyn_links:
        pj = parent_joint.get(name)
        if pj is not None and pj.get("type") == "fixed":
            assert _mass(links[name]) > 0.0 or name in has_children  # kept as a FixedJoint
    kept = [im.getJointName(i) for i in range(im.getNrOfJoints()) if im.getJoint(i).getNrOfDOFs() == 0]
    assert len(kept) == 6


def test_fixed_pinocchio(icub):
    root, pm = icub.root, icub.pm
    FT = pin.FrameType
    fixed = [j.get("name") for j in root.findall("joint") if j.get("type") == "fixed"]
    for name in fixed:  # every fixed joint is a FIXED_JOINT frame, not a joint
        assert pm.existFrame(name) and pm.frames[pm.getFrameId(name)].type == FT.FIXED_JOINT
        assert not pm.existJointName(name)
    for link in root.findall("link"):  # every link is a BODY frame
        assert pm.frames[pm.getFrameId(link.get("name"))].type == FT.BODY
    # fixed-joint children are merged into their parent joint's inertia: the masses add up
    urdf_mass = sum(_mass(link) for link in root.findall("link"))
    assert abs(sum(pm.inertias[i].mass for i in range(pm.njoints)) - urdf_mass) < 1e-9


# ---- Featherstone / spatial_v2 (bridge's featherstone backend)
def test_dof_order_spatial_v2(icub_fs):
    model, fm = icub_fs.model, icub_fs.fm
    assert all(0 <= p < i for i, p in enumerate(fm.parent, start=1))  # regular numbering
    real = list(fm.joint_names[6:])
    # bodies depth first from the base: the joint order of bridge.to_pinocchio
    assert real == [j.name for j in model.depth_first_joints if j.movable]
    pin_model = bridge.to_pinocchio(model)
    assert real == [pin_model.names[i] for i in range(2, pin_model.njoints)]
    assert real == [model.dof_names[k] for k in fm.dof_perm]  # q[k] = s[dof_perm[k]]


def test_count_spatial_v2(icub_fs):
    from bridge.backends.featherstone import to_featherstone

    fm = icub_fs.fm
    assert fm.NB == 6 + icub_fs.model.n_dofs == 38
    assert fm.jtype[:6] == ("Px", "Py", "Pz", "Rx", "Ry", "Rz")
    assert fm.parent[:6] == (0, 1, 2, 3, 4, 5)
    assert np.all(fm.I[:5] == 0.0) and np.any(fm.I[5] != 0.0)  # 5 placeholders, then the base
    assert all(np.array_equal(X, np.eye(6)) for X in fm.Xtree[:6])
    one = to_featherstone(bridge.load_urdf(SINGLE_URDF))
    assert one.NB == 6


def test_fixed_spatial_v2(icub_fs):
    model, fm = icub_fs.model, icub_fs.fm
    assert set(fm.jtype) <= {"Rx", "Ry", "Rz", "Px", "Py", "Pz"}  # no fixed joints
    assert sum(j.movable for j in model.joints) == fm.NB - 6
    assert abs(fm.total_mass - model.total_mass) < 1e-9  # merged, not dropped
    # every link of the URDF is still placed on some body (merged links too)
    assert set(model.link_names) <= set(fm.placements)
    body, _ = fm.placement("l_sole")
    assert fm.body_names[body - 1] != "l_sole"  # l_sole is merged into another body


def _fs_state(c, rep: str = "mixed"):
    """The iCub fixture's state at t = 0 in Featherstone form: (state, fm, xfb, q, qd)."""
    from bridge.backends.featherstone import to_featherstone, to_featherstone_state

    H, s, vm, sd = traj(c, 0.0)
    st = bridge.State(H, s, base_velocity(H, vm, rep), sd, rep)
    fm = to_featherstone(c.model)
    xfb, q, qd = to_featherstone_state(c.model, st)
    return st, fm, xfb, q, qd


def test_quat_spatial_v2(icub):
    from bridge.backends.featherstone import rq

    _, _, xfb, _, _ = _fs_state(icub)
    R = traj(icub, 0.0)[0][:3, :3]
    w, x, y, z = xfb[:4]
    assert_close(quat_xyzw_to_matrix([x, y, z, w]), R)  # (w, x, y, z) of the rotation A_R_B
    assert_close(rq(xfb[:4]), R.T)  # rq gives the coordinate transform E = A_R_B^T
    th = 0.7
    assert_close(rq([np.cos(th / 2), 0.0, 0.0, np.sin(th / 2)]), rot_z(th).T)


def test_base_pose_spatial_v2(icub):
    from bridge.backends.featherstone import body_pose

    _, fm, xfb, q, _ = _fs_state(icub)
    H = traj(icub, 0.0)[0]
    assert xfb.shape == (13,)
    assert_close(xfb[4:7], H[:3, 3])  # base origin in world coordinates
    E, r = body_pose(fm, 6, q, xfb)  # body 6 is the floating base
    assert_close(E, H[:3, :3].T)
    assert_close(r, H[:3, 3])


def test_joint_pos_spatial_v2():
    from bridge.backends.featherstone import body_pose, to_featherstone, to_featherstone_state

    model = bridge.load_urdf(CONTINUOUS_URDF)
    fm = to_featherstone(model)
    assert fm.jtype[6] == "Rz" and fm.n_real == 1
    xfb, q, _ = to_featherstone_state(model, bridge.State(np.eye(4), [0.3], np.zeros(6), [0.0]))
    assert q.shape == (1,) and q[0] == 0.3  # one angle
    E, _ = body_pose(fm, 7, q, xfb)
    assert_close(E, rot_z(0.3).T)


def test_base_vel_spatial_v2(icub):
    from bridge.backends.featherstone import body_velocity

    _, fm, xfb, q, qd = _fs_state(icub)
    inertial = fd_frame_velocity(icub, "root_link", "inertial")  # definition, by finite differences
    assert_close(xfb[7:13], np.concatenate([inertial[3:], inertial[:3]]), FD_RTOL)  # angular first
    assert_close(body_velocity(fm, 6, q, qd, xfb), xfb[7:13])
    body = base_velocity(*traj(icub, 0.0)[:1], traj(icub, 0.0)[2], "body")
    assert_close(body_velocity(fm, 6, q, qd, xfb, coordinates="local"), np.concatenate([body[3:], body[:3]]))


def test_gen_acc_spatial_v2(icub):
    from bridge.backends.featherstone import body_acceleration, to_featherstone_acceleration

    c = icub
    st, fm, xfb, q, qd = _fs_state(c)
    nu_dot = np.concatenate([base_acceleration(c, "mixed"), c.sdd])
    a_fb, qdd = to_featherstone_acceleration(c.model, st, nu_dot)
    # the derivative of xfb[7:13] (the inertial velocity, angular first) along the trajectory
    derivative = fd(lambda t: base_velocity(traj(c, t)[0], traj(c, t)[2], "inertial"))
    assert_close(a_fb, np.concatenate([derivative[3:], derivative[:3]]), FD_RTOL)
    assert_close(qdd, c.sdd[fm.dof_perm])
    # which is the base's spatial acceleration in world coordinates
    assert_close(body_acceleration(fm, 6, q, qd, qdd, xfb, a_fb), a_fb)


def test_gen_force_spatial_v2(icub):
    from bridge.backends.featherstone import to_featherstone_force

    c = icub
    st, fm, xfb, _, qd = _fs_state(c, "body")
    tau = np.random.default_rng(5).normal(size=6 + c.n)  # BODY: base wrench in base coordinates
    f_fb, tau_q = to_featherstone_force(c.model, st, tau)
    H = Transform(traj(c, 0.0)[0])
    world_wrench = H.force_matrix() @ tau[:6]  # the same wrench, moment about the world origin
    assert_close(f_fb, np.concatenate([world_wrench[3:], world_wrench[:3]]))
    assert_close(tau_q, tau[6:][fm.dof_perm])
    assert_close(f_fb @ xfb[7:13] + tau_q @ qd, tau @ st.nu)  # dual to [xfb[7:13]; qd]


# ========================================================================== floating-base exports
def _floatbase_export():
    """A fixed-base export whose body 1 is the only child of the world and whose first joint's
    frame is not its child link's, with its floatbase(): (fixed export, floatbase export)."""
    from bridge.backends.featherstone import floatbase, to_featherstone

    seed = 0
    while True:
        seed += 1
        fm = to_featherstone(bridge.random_model(4, seed=seed).with_fixed_base())
        if fm.parent.count(0) != 1:
            continue
        fb = floatbase(fm)
        if not np.allclose(fb.placements[fb.base][1].matrix, np.eye(4)) and fb.I[5, 5, 5] > 0.1:
            return fm, fb


def _random_xfb(rng):
    quat = rng.normal(size=4)
    return np.concatenate([quat / np.linalg.norm(quat), rng.normal(size=3), rng.normal(size=6)])


def test_fbexport_body6_to_featherstone(icub):
    from bridge.backends.featherstone import from_featherstone, to_featherstone
    from bridge.backends.featherstone.model import base_placement

    fm = to_featherstone(icub.model)
    body, pose = fm.placements[icub.model.base]
    assert body == 6
    assert_close(pose.matrix, np.eye(4))
    assert_close(base_placement(fm).matrix, np.eye(4))
    assert from_featherstone(fm).base == icub.model.base


def test_fbexport_body6_floatbase():
    from bridge.backends.featherstone import from_featherstone
    from bridge.backends.featherstone.model import base_placement

    fm, fb = _floatbase_export()
    child = fm.body_names[0]  # body 1's link: the first joint's child
    assert from_featherstone(fb).base == child == fb.base
    body, pose = fb.placements[child]
    assert body == 6
    assert_close(pose.matrix, fm.placements[child][1].matrix)  # where it sat on body 1
    assert_not_close(pose.matrix, np.eye(4))
    assert_close(base_placement(fb).matrix, pose.matrix)


def test_fbexport_xfb_to_featherstone(icub):
    from bridge.backends.featherstone import from_featherstone_state, rq

    rng = np.random.default_rng(21)
    xfb, q, qd = _random_xfb(rng), rng.normal(size=icub.n), rng.normal(size=icub.n)
    st = from_featherstone_state(icub.model, xfb, q, qd, "inertial")
    H = st.world_H_base.matrix
    assert_close(H[:3, :3], rq(xfb[:4]).T)
    assert_close(H[:3, 3], xfb[4:7])
    assert_close(st.base_velocity, np.concatenate([xfb[10:13], xfb[7:10]]))


def test_fbexport_xfb_floatbase():
    from bridge.backends.featherstone import (
        body_velocity,
        from_featherstone,
        from_featherstone_state,
        rq,
        to_featherstone_state,
    )
    from bridge.backends.featherstone.model import base_placement

    _, fb = _floatbase_export()
    rng = np.random.default_rng(22)
    xfb, q, qd = _random_xfb(rng), rng.normal(size=fb.n_real), rng.normal(size=fb.n_real)
    st = from_featherstone_state(fb, xfb, q, qd, "inertial")
    world_H_body6 = np.eye(4)
    world_H_body6[:3, :3], world_H_body6[:3, 3] = rq(xfb[:4]).T, xfb[4:7]
    assert_close(st.world_H_base.matrix, world_H_body6 @ base_placement(fb).matrix)
    assert_close(st.base_velocity, np.concatenate([xfb[10:13], xfb[7:10]]))  # INERTIAL, linear first
    # the same spatial velocity (world coordinates) as body 6's frame
    base = from_featherstone(fb).base
    assert_close(body_velocity(fb, base, q, qd, xfb), body_velocity(fb, 6, q, qd, xfb))
    back, _, _ = to_featherstone_state(fb, st)
    assert_close(rq(back[:4]), rq(xfb[:4]))
    assert_close(back[4:], xfb[4:])


def test_fbexport_xtree6_to_featherstone(icub):
    from bridge.backends.featherstone import to_featherstone

    fm = to_featherstone(icub.model)
    assert np.array_equal(fm.Xtree[5], np.eye(6))


def test_fbexport_xtree6_floatbase():
    from bridge.backends.featherstone import FDfb, FeatherstoneModel, body_pose
    from bridge.backends.featherstone.quaternions import rq

    fm, fb = _floatbase_export()
    assert not np.allclose(fm.Xtree[0], np.eye(6)) and np.array_equal(fb.Xtree[5], np.eye(6))
    rng = np.random.default_rng(23)
    pos, ang, q = rng.normal(size=3), rng.normal(size=3), rng.normal(size=fb.n_real)
    chain = np.concatenate([pos, ang, q])
    E6, r6 = body_pose(fb, 6, chain)
    c, s = np.cos(ang), np.sin(ang)
    E = (
        np.array([[c[2], s[2], 0], [-s[2], c[2], 0], [0, 0, 1]])
        @ np.array([[c[1], 0, -s[1]], [0, 1, 0], [s[1], 0, c[1]]])
        @ np.array([[1, 0, 0], [0, c[0], s[0]], [0, -s[0], c[0]]])
    )
    assert_close(E6, E)
    assert_close(r6, pos)  # position, then angles about x, y, z
    quat = Transform.from_rotation_translation(E.T, pos).as_quaternion_wxyz()
    xfb = np.concatenate([quat, pos, rng.normal(size=6)])
    assert_close(rq(quat), E)
    for a, b in zip(body_pose(fb, 6, q, xfb), (E6, r6), strict=True):
        assert_close(a, b)
    # spatial_v2's layout, Xtree{6} = Xtree{1}: the chain puts body 6 elsewhere; a fixed model in bridge
    sv2 = FeatherstoneModel(
        NB=fb.NB, parent=fb.parent, jtype=fb.jtype, Xtree=np.concatenate([fb.Xtree[:5], fm.Xtree]), I=fb.I
    )
    assert not sv2.floating
    E6b, r6b = body_pose(sv2, 6, chain)
    assert not (np.allclose(E6b, E6, rtol=1e-10, atol=1e-10) and np.allclose(r6b, r6, rtol=1e-10, atol=1e-10))
    # bridge's FDfb and IDfb need the floatbase layout; spatial_v2's is the six-joint chain of ID, HandC
    with pytest.raises(bridge.ModelError, match="no floating base"):
        FDfb(sv2, xfb, q, q, q)


# ========================================================== Drake, jaxsim and MuJoCo (their own modules)
from tests.docs._conventions_drake import *  # noqa: E402, F403
from tests.docs._conventions_jaxsim import *  # noqa: E402, F403
from tests.docs._conventions_joints import *  # noqa: E402, F403
from tests.docs._conventions_mujoco import *  # noqa: E402, F403
from tests.docs._conventions_mujoco_dynamics import *  # noqa: E402, F403
from tests.docs._conventions_newton import *  # noqa: E402, F403
