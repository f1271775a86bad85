"""The formulas of docs/theory.md, checked on iCub with the libraries' own URDF loaders.

Pinocchio (``buildModelFromUrdf``) and iDynTree (``ModelLoader``) load the same file in different
DOF orders, so the permutation P of T is not the identity here. Every formula of the page is
evaluated with plain numpy on the libraries' raw outputs and compared with what iDynTree computes
in the representation itself. Formulas marked on the page with ``<!-- check: NAME -->`` are
checked by the test function ``NAME`` of this module (``test_every_formula_id_is_a_test``).
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import idyntree.bindings as idyn
import numpy as np
import pinocchio as pin
import pytest

import bridge
from tests.docs._math import expm, matrix_to_quat_xyzw, random_rotation, skew
from tests.helpers import assert_close, assert_not_close

PAGE = Path(__file__).resolve().parents[2] / "docs" / "theory.md"
REPS = {
    "body": idyn.BODY_FIXED_REPRESENTATION,
    "inertial": idyn.INERTIAL_FIXED_REPRESENTATION,
    "mixed": idyn.MIXED_REPRESENTATION,
}
PIN_RF = {"body": pin.LOCAL, "inertial": pin.WORLD, "mixed": pin.LOCAL_WORLD_ALIGNED}
GRAVITY = np.array([0.0, 0.0, -9.81])
FRAME = "r_sole"


def crm(v: np.ndarray) -> np.ndarray:
    """Linear-first motion cross product matrix [[w^, v^], [0, w^]]."""
    return np.block([[skew(v[3:]), skew(v[:3])], [np.zeros((3, 3)), skew(v[3:])]])


def motion_matrix(H: np.ndarray) -> np.ndarray:
    R, o = H[:3, :3], H[:3, 3]
    return np.block([[R, skew(o) @ R], [np.zeros((3, 3)), R]])


def blk(R: np.ndarray) -> np.ndarray:
    return np.block([[R, np.zeros((3, 3))], [np.zeros((3, 3)), R]])


@pytest.fixture(scope="module")
def robot():
    import icub_models

    path = str(icub_models.get_model_file("iCubGazeboV2_5"))
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    loader = idyn.ModelLoader()
    assert loader.loadModelFromFile(path)
    im = loader.model()
    kd = idyn.KinDynComputations()
    assert kd.loadRobotModel(im)
    pin_names = [pm.names[i] for i in range(2, pm.njoints)]
    idyn_names = sorted(
        (im.getJointName(i) for i in range(im.getNrOfJoints()) if im.getJoint(i).getNrOfDOFs() == 1),
        key=lambda name: im.getJoint(im.getJointIndex(name)).getDOFsOffset(),
    )
    n = len(pin_names)
    P = np.zeros((n, n))  # s_dot^pin = P s_dot^idyn
    for i, name in enumerate(pin_names):
        P[i, idyn_names.index(name)] = 1.0
    assert not np.array_equal(P, np.eye(n))
    rng = np.random.default_rng(11)
    H = np.eye(4)
    H[:3, :3] = random_rotation(rng)
    H[:3, 3] = rng.normal(size=3)
    return SimpleNamespace(
        path=path, pm=pm, loader=loader, im=im, kd=kd, P=P, n=n, H=H,
        s=rng.uniform(-0.6, 0.6, n), sd=rng.normal(size=n), sdd=rng.normal(size=n),
        vB=rng.normal(size=6), tau=rng.normal(size=n), rng=rng,
        idyn_names=idyn_names,
    )  # fmt: skip


def B_X_W(H: np.ndarray, rep: str) -> np.ndarray:
    """The recap table of the page: B_X_W."""
    R = H[:3, :3]
    if rep == "body":
        return np.eye(6)
    if rep == "mixed":
        return blk(R.T)
    return np.linalg.inv(motion_matrix(H))


def B_X_W_dot(H: np.ndarray, vB: np.ndarray, rep: str) -> np.ndarray:
    """The recap table of the page: d/dt B_X_W, with vB the body velocity of the base."""
    R = H[:3, :3]
    if rep == "body":
        return np.zeros((6, 6))
    if rep == "mixed":
        w_world = R @ vB[3:]
        return blk(R.T) @ crm(np.concatenate([np.zeros(3), -w_world]))
    return -crm(vB) @ np.linalg.inv(motion_matrix(H))


def T_of(c, rep: str, vB: np.ndarray | None = None):
    """(T, T_dot) with nu^pin = T nu^W, for the fixture's pose and body velocity."""
    vB = c.vB if vB is None else vB
    n = c.n
    T = np.zeros((6 + n, 6 + n))
    T[:6, :6] = B_X_W(c.H, rep)
    T[6:, 6:] = c.P
    Td = np.zeros_like(T)
    Td[:6, :6] = B_X_W_dot(c.H, vB, rep)
    return T, Td


def nu_W(c, rep: str, vB: np.ndarray | None = None) -> np.ndarray:
    vB = c.vB if vB is None else vB
    return np.concatenate([np.linalg.solve(B_X_W(c.H, rep), vB), c.sd])


def pin_qv(c, vB: np.ndarray | None = None):
    vB = c.vB if vB is None else vB
    q = np.concatenate([c.H[:3, 3], matrix_to_quat_xyzw(c.H[:3, :3]), c.P @ c.s])
    return q, np.concatenate([vB, c.P @ c.sd])


def idyn_set(c, rep: str, vB: np.ndarray | None = None) -> np.ndarray:
    nu = nu_W(c, rep, vB)
    assert c.kd.setFrameVelocityRepresentation(REPS[rep])
    assert c.kd.setRobotState(c.H, c.s, nu[:6], c.sd, GRAVITY)
    return nu


def idyn_generalized(tau) -> np.ndarray:
    return np.concatenate([tau.baseWrench().toNumPy(), tau.jointTorques().toNumPy()])


def rnea(c, a: np.ndarray, vB: np.ndarray | None = None) -> np.ndarray:
    q, v = pin_qv(c, vB)
    return pin.rnea(c.pm, c.pm.createData(), q, v, a)


# ------------------------------------------------------------------------------------------ the page
def test_every_formula_id_is_a_test():
    names = set(
        re.findall(r"<!--\s*check:\s*([A-Za-z_][A-Za-z0-9_]*)\s*-->", PAGE.read_text(encoding="utf-8"))
    )
    assert len(names) >= 8
    missing = sorted(n for n in names if not callable(globals().get(n)))
    assert not missing, f"formula ids without a test in {__name__}: {missing}"
    own = {n for n in globals() if n.startswith("test_") and n != "test_every_formula_id_is_a_test"}
    assert own <= names, f"tests not referenced by the page: {sorted(own - names)}"


# ------------------------------------------------------------------------------------------ formulas
def test_velocity_definitions(robot):
    """The three representations from a pose trajectory, and the maps between them."""
    c = robot
    xi = c.vB

    def H_at(t):
        return c.H @ expm(np.block([[skew(xi[3:]), xi[:3, None]], [np.zeros((1, 4))]]) * t)

    dt = 1e-6
    Hd = (H_at(dt) - H_at(-dt)) / (2 * dt)
    R, o, Rd, od = c.H[:3, :3], c.H[:3, 3], Hd[:3, :3], Hd[:3, 3]
    W = Rd @ R.T
    w = np.array([W[2, 1], W[0, 2], W[1, 0]])
    body = np.concatenate([R.T @ od, R.T @ w])
    inertial = np.concatenate([od - W @ o, w])
    mixed = np.concatenate([od, w])
    assert_close(body, xi, 1e-8)
    assert_close(inertial, motion_matrix(c.H) @ body, 1e-8)  # A_v = A_X_B B_v
    assert_close(mixed, blk(R) @ body, 1e-8)  # B[A]_v = B[A]_X_B B_v


def test_transform_derivative(robot):
    """d/dt A_X_B = A_X_B crm(B_v_A,B) and d/dt B_X_A = -crm(B_v_A,B) B_X_A."""
    c = robot
    xi = c.vB

    def X_at(t):
        H = c.H @ expm(np.block([[skew(xi[3:]), xi[:3, None]], [np.zeros((1, 4))]]) * t)
        return motion_matrix(H)

    dt = 1e-6
    Xd = (X_at(dt) - X_at(-dt)) / (2 * dt)
    X = motion_matrix(c.H)
    assert_close(Xd, X @ crm(xi), 1e-8)
    Xinv_d = (np.linalg.inv(X_at(dt)) - np.linalg.inv(X_at(-dt))) / (2 * dt)
    assert_close(Xinv_d, -crm(xi) @ np.linalg.inv(X), 1e-8)


def test_recap_table(robot):
    """B_X_W and its derivative for the three representations, against finite differences and
    against bridge.velocity_transform; the opposite sign of the MIXED derivative is wrong."""
    c = robot
    xi = c.vB

    def H_at(t):
        return c.H @ expm(np.block([[skew(xi[3:]), xi[:3, None]], [np.zeros((1, 4))]]) * t)

    dt = 1e-6
    model = bridge.load_urdf(c.path, joints=c.idyn_names)
    for rep in REPS:
        fd = (B_X_W(H_at(dt), rep) - B_X_W(H_at(-dt), rep)) / (2 * dt)
        assert_close(B_X_W_dot(c.H, xi, rep), fd, 1e-8)
        st = bridge.State(c.H, c.s, np.linalg.solve(B_X_W(c.H, rep), xi), c.sd, rep)
        T, Td = bridge.velocity_transform(model, st, rep, "pinocchio")
        assert_close(T[:6, :6], B_X_W(c.H, rep))
        assert_close(Td[:6, :6], B_X_W_dot(c.H, xi, rep))
    R = c.H[:3, :3]
    wrong = blk(R.T) @ crm(np.concatenate([np.zeros(3), R @ xi[3:]]))
    assert_not_close(wrong, B_X_W_dot(c.H, xi, "mixed"), 1e-3)


def test_one_change_of_variables(robot):
    """The change of variables between any two conventions: composition, the derivative along the
    motion (finite differences), and every named map against its dense formula."""
    c = robot
    xi = c.vB
    model = bridge.load_urdf(c.path, joints=c.idyn_names)
    names = ("body", "inertial", "mixed", "pinocchio", "featherstone")

    def H_at(t):
        return c.H @ expm(np.block([[skew(xi[3:]), xi[:3, None]], [np.zeros((1, 4))]]) * t)

    def state_at(t):  # the base moves with the constant body velocity xi
        return bridge.State(H_at(t), c.s, xi, c.sd, "body")

    st = state_at(0.0)
    nv = 6 + c.n
    rng = np.random.default_rng(3)
    x, M, J = rng.normal(size=nv), rng.normal(size=(nv, nv)), rng.normal(size=(6, nv))
    dt = 1e-6
    for a in names:
        for b in names:
            cov = bridge.velocity_change(model, st, a, b)
            T, Td = cov.matrix(), cov.derivative()
            T_fd = (bridge.velocity_transform(model, state_at(dt), a, b)[0]
                    - bridge.velocity_transform(model, state_at(-dt), a, b)[0]) / (2 * dt)  # fmt: skip
            assert_close(Td, T_fd, 1e-7, f"T_dot {a}->{b}")
            for mid in ("mixed", "featherstone"):
                T1, Td1 = bridge.velocity_transform(model, st, a, mid)
                T2, Td2 = bridge.velocity_transform(model, st, mid, b)
                assert_close(T2 @ T1, T, 1e-12, f"T {a}->{mid}->{b}")
                assert_close(Td2 @ T1 + T2 @ Td1, Td, 1e-12, f"T_dot {a}->{mid}->{b}")
            nu = cov.nu
            assert_close(cov.velocity(x), T @ x, 1e-12)
            assert_close(cov.acceleration(x), T @ x + Td @ nu, 1e-12)
            assert_close(cov.acceleration_back(cov.acceleration(x)), x, 1e-12)
            assert_close(cov.force(x), np.linalg.solve(T.T, x), 1e-12)
            assert_close(cov.force_back(x), T.T @ x, 1e-12)
            assert_close(cov.matrix_back(M), T.T @ M @ T, 1e-12)
            assert_close(cov.jacobian_back(J), J @ T, 1e-12)
            assert_close(cov.bias_acceleration, Td @ nu, 1e-12)
            assert_close(cov.bias_back(x, M), T.T @ (x + M @ Td @ nu), 1e-12)


def test_jacobian_through_T(robot):
    """J^W = J^pin T (rows in the same representation)."""
    c = robot
    q, _ = pin_qv(c)
    d = c.pm.createData()
    pin.computeJointJacobians(c.pm, d, q)
    pin.updateFramePlacements(c.pm, d)
    fid = c.pm.getFrameId(FRAME)
    for rep in REPS:
        idyn_set(c, rep)
        J = idyn.MatrixDynSize(6, 6 + c.n)
        assert c.kd.getFrameFreeFloatingJacobian(FRAME, J)
        T, _ = T_of(c, rep)
        assert_close(J.toNumPy(), pin.getFrameJacobian(c.pm, d, fid, PIN_RF[rep]) @ T)


def test_mass_matrix_through_T(robot):
    """M^W = T^T M^pin T."""
    c = robot
    q, _ = pin_qv(c)
    M_pin = pin.crba(c.pm, c.pm.createData(), q)
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    M = idyn.FreeFloatingMassMatrix(c.im)
    for rep in REPS:
        idyn_set(c, rep)
        assert c.kd.getFreeFloatingMassMatrix(M)
        T, _ = T_of(c, rep)
        assert_close(M.toNumPy(), T.T @ M_pin @ T)


def _idyn_id(c, rep: str, nu_dot: np.ndarray) -> np.ndarray:
    tau = idyn.FreeFloatingGeneralizedTorques(c.im)
    lw = idyn.LinkWrenches(c.im)
    lw.zero()
    assert c.kd.inverseDynamics(nu_dot[:6], nu_dot[6:], lw, tau)
    return idyn_generalized(tau)


def test_generalized_force_through_T(robot):
    """tau^W = T^T tau^pin for the same motion, and the power tau^T nu is the same."""
    c = robot
    for rep in REPS:
        nu = idyn_set(c, rep)
        T, Td = T_of(c, rep)
        nu_dot = np.concatenate([c.rng.normal(size=6), c.sdd])
        tau_pin = rnea(c, T @ nu_dot + Td @ nu)
        tau = _idyn_id(c, rep, nu_dot)
        assert_close(tau, T.T @ tau_pin)
        assert_close(tau @ nu, tau_pin @ (T @ nu))


def test_inverse_dynamics_through_T(robot):
    """ID^W(nu_dot) = T^T ID^pin(T nu_dot + T_dot nu); T_dot nu vanishes in BODY and INERTIAL only."""
    c = robot
    for rep in REPS:
        nu = idyn_set(c, rep)
        T, Td = T_of(c, rep)
        nu_dot = np.concatenate([c.rng.normal(size=6), c.sdd])
        assert_close(_idyn_id(c, rep, nu_dot), T.T @ rnea(c, T @ nu_dot + Td @ nu))
        if rep == "mixed":
            assert_not_close(_idyn_id(c, rep, nu_dot), T.T @ rnea(c, T @ nu_dot), 1e-6)
            assert_close(Td @ nu, np.concatenate([-np.cross(c.vB[3:], c.vB[:3]), np.zeros(3 + c.n)]))
        else:  # crm(v) v = 0
            assert np.linalg.norm(Td @ nu) <= 1e-12 * max(1.0, np.linalg.norm(nu))


def test_bias_forces_through_T(robot):
    """h^W = T^T ID^pin(T_dot nu) = T^T (h^pin + M^pin T_dot nu), which is not T^T h^pin in MIXED."""
    c = robot
    tau = idyn.FreeFloatingGeneralizedTorques(c.im)
    q, v = pin_qv(c)
    h_pin = pin.rnea(c.pm, c.pm.createData(), q, v, np.zeros(c.pm.nv))
    M_pin = pin.crba(c.pm, c.pm.createData(), q)
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    for rep in REPS:
        nu = idyn_set(c, rep)
        assert c.kd.generalizedBiasForces(tau)
        T, Td = T_of(c, rep)
        h = idyn_generalized(tau)
        assert_close(h, T.T @ rnea(c, Td @ nu))
        assert_close(h, T.T @ (h_pin + M_pin @ Td @ nu))
        if rep == "mixed":
            assert_not_close(h, T.T @ h_pin, 1e-6)
        else:
            assert_close(h, T.T @ h_pin)


def test_gravity_through_T(robot):
    """g^W = T^T g^pin (at zero velocity T_dot vanishes)."""
    c = robot
    tau = idyn.FreeFloatingGeneralizedTorques(c.im)
    q, _ = pin_qv(c)
    g_pin = pin.computeGeneralizedGravity(c.pm, c.pm.createData(), q)
    for rep in REPS:
        idyn_set(c, rep)
        # iDynTree 15.1 needs fresh link poses before generalizedGravityForces (see bridge's engine)
        c.kd.getWorldTransform(FRAME)
        assert c.kd.generalizedGravityForces(tau)
        T, _ = T_of(c, rep)
        assert_close(idyn_generalized(tau), T.T @ g_pin)


def test_forward_dynamics_through_T(robot):
    """FD^W(tau) = T^-1 (FD^pin(T^-T tau) - T_dot nu), which solves M^W nu_dot = tau - h^W."""
    c = robot
    q, v = pin_qv(c)
    M = idyn.FreeFloatingMassMatrix(c.im)
    bias = idyn.FreeFloatingGeneralizedTorques(c.im)
    for rep in REPS:
        nu = idyn_set(c, rep)
        T, Td = T_of(c, rep)
        tau = np.concatenate([np.zeros(6), c.tau])
        a_pin = pin.aba(c.pm, c.pm.createData(), q, v, np.linalg.solve(T.T, tau))
        nu_dot = np.linalg.solve(T, a_pin - Td @ nu)
        assert c.kd.getFreeFloatingMassMatrix(M) and c.kd.generalizedBiasForces(bias)
        residual = M.toNumPy() @ nu_dot - (tau - idyn_generalized(bias))
        assert np.linalg.norm(residual) <= 1e-9 * max(1.0, np.linalg.norm(tau))


def test_frame_bias_through_T(robot):
    """J_dot^W nu = the derivative of the frame velocity in W at Pinocchio's acceleration a = T_dot nu."""
    c = robot
    q, v = pin_qv(c)
    fid = c.pm.getFrameId(FRAME)
    for rep in REPS:
        nu = idyn_set(c, rep)
        _, Td = T_of(c, rep)
        d = c.pm.createData()
        pin.forwardKinematics(c.pm, d, q, v, Td @ nu)
        pin.updateFramePlacements(c.pm, d)
        get = pin.getFrameClassicalAcceleration if rep == "mixed" else pin.getFrameAcceleration
        assert_close(c.kd.getFrameBiasAcc(FRAME).toNumPy(), get(c.pm, d, fid, PIN_RF[rep]).vector)


def test_spatial_vs_classical(robot):
    """In world axes the spatial acceleration of a frame is (p_ddot - w x p_dot, w_dot)."""
    c = robot
    q, v = pin_qv(c)
    a = np.concatenate([c.rng.normal(size=6), c.P @ c.sdd])
    d = c.pm.createData()
    pin.forwardKinematics(c.pm, d, q, v, a)
    pin.updateFramePlacements(c.pm, d)
    fid = c.pm.getFrameId(FRAME)
    spatial = pin.getFrameAcceleration(c.pm, d, fid, pin.LOCAL_WORLD_ALIGNED).vector
    classical = pin.getFrameClassicalAcceleration(c.pm, d, fid, pin.LOCAL_WORLD_ALIGNED).vector
    vel = pin.getFrameVelocity(c.pm, d, fid, pin.LOCAL_WORLD_ALIGNED).vector
    assert_close(spatial[:3], classical[:3] - np.cross(vel[3:], vel[:3]))
    assert_close(spatial[3:], classical[3:])
