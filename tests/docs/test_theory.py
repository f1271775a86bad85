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


def test_frame_jacobian_derivative_through_T(robot):
    """J_dot^W = J_dot^pin T + J^pin T_dot: the time derivative of J^W = J^pin T along the motion."""
    c = robot
    q, v = pin_qv(c)
    fid = c.pm.getFrameId(FRAME)
    d = c.pm.createData()
    pin.computeJointJacobiansTimeVariation(c.pm, d, q, v)
    pin.updateFramePlacements(c.pm, d)

    def J_W(rep: str, t: float) -> np.ndarray:  # J^W at the pose reached after time t
        nu = nu_W(c, rep)
        Ht = _moved(c.H, t * nu[:6], rep)
        qt = np.concatenate([Ht[:3, 3], matrix_to_quat_xyzw(Ht[:3, :3]), c.P @ (c.s + t * c.sd)])
        dt = c.pm.createData()
        pin.computeJointJacobians(c.pm, dt, qt)
        pin.updateFramePlacements(c.pm, dt)
        T = np.zeros((6 + c.n, 6 + c.n))
        T[:6, :6], T[6:, 6:] = B_X_W(Ht, rep), c.P
        return pin.getFrameJacobian(c.pm, dt, fid, PIN_RF[rep]) @ T

    model = bridge.load_urdf(c.path, joints=c.idyn_names)
    for rep in REPS:
        nu = idyn_set(c, rep)
        T, Td = T_of(c, rep)
        Jd_pin = pin.getFrameJacobianTimeVariation(c.pm, d, fid, PIN_RF[rep])
        J_pin = pin.getFrameJacobian(c.pm, d, fid, PIN_RF[rep])
        Jd = Jd_pin @ T + J_pin @ Td
        h = 1e-6
        assert_close(Jd, (J_W(rep, h) - J_W(rep, -h)) / (2 * h), 1e-7, rep)
        assert_close(Jd @ nu, c.kd.getFrameBiasAcc(FRAME).toNumPy(), 1e-10, rep)
        if rep == "mixed":  # the T_dot term matters
            assert_not_close(Jd_pin @ T @ nu, c.kd.getFrameBiasAcc(FRAME).toNumPy(), 1e-6)
        for engine in ("pinocchio", "featherstone"):  # Pinocchio's function; the generic world form
            kd = bridge.KinDyn(model, engine, rep)
            kd.set_state(c.H, c.s, nu[:6], c.sd)
            assert_close(kd.frame_jacobian_derivative(FRAME), Jd, 1e-10, f"{rep} {engine}")


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


# ------------------------------------------------------------------------------------------ derivatives
def _moved(H: np.ndarray, d: np.ndarray, rep: str) -> np.ndarray:
    """The base pose after moving with base velocity d (in rep) for unit time (the tangent)."""
    hat = np.zeros((4, 4))
    hat[:3, :3], hat[:3, 3] = skew(d[3:]), d[:3]
    if rep == "body":
        return H @ expm(hat)
    if rep == "inertial":
        return expm(hat) @ H
    out = H.copy()
    out[:3, :3] = expm(skew(d[3:])) @ H[:3, :3]
    out[:3, 3] += d[:3]
    return out


def _K(f: np.ndarray) -> np.ndarray:
    """K(f) a = a x* f = -crm(a)^T f."""
    return np.block([[np.zeros((3, 3)), -skew(f[:3])], [-skew(f[:3]), -skew(f[3:])]])


def _blocks(H: np.ndarray, rep: str, nu_b: np.ndarray, y: np.ndarray, f: np.ndarray):
    """The page's Y(y), Z(f), B_q, B_nu (6x6 each) in rep."""
    z = np.zeros((6, 6))
    if rep == "body":
        return z, z, z, z
    X = B_X_W(H, rep)
    if rep == "inertial":
        return crm(X @ y) @ X, X.T @ _K(f) @ X, z, z
    R = H[:3, :3]
    v, w = nu_b[:3], nu_b[3:]
    Y = np.block([[np.zeros((3, 3)), R.T @ skew(y[:3])], [np.zeros((3, 3)), R.T @ skew(y[3:])]])
    Z = np.block([[np.zeros((3, 3)), -skew(R @ f[:3])], [np.zeros((3, 3)), -skew(R @ f[3:])]])
    Bq = z.copy()
    Bq[:3, 3:] = -R.T @ skew(np.cross(w, v))
    Bnu = z.copy()
    Bnu[:3, :3], Bnu[:3, 3:] = -R.T @ skew(w), R.T @ skew(v)
    return Y, Z, Bq, Bnu


def _big(B: np.ndarray, nv: int) -> np.ndarray:
    out = np.zeros((nv, nv))
    out[:6, :6] = B
    return out


def test_derivative_of_T_is_T_dot(robot):
    """Along the tangent delta, T changes by T_dot evaluated at the velocity delta."""
    c = robot
    h = 1e-6
    for rep in REPS:
        d = c.rng.normal(size=6)
        num = (B_X_W(_moved(c.H, h * d, rep), rep) - B_X_W(_moved(c.H, -h * d, rep), rep)) / (2 * h)
        assert_close(num, B_X_W_dot(c.H, B_X_W(c.H, rep) @ d, rep), 1e-8)


def test_chain_rule_blocks(robot):
    """Y(y) delta = dX[delta] y, Z(f) delta = dX[delta]^T f, B_q and B_nu: the derivatives of
    T_dot nu = X_dot(nu) nu in the pose and in nu, against central differences."""
    c = robot
    h = 1e-6
    for rep in REPS:
        nu_b, y, f = c.rng.normal(size=6), c.rng.normal(size=6), c.rng.normal(size=6)
        Y, Z, Bq, Bnu = _blocks(c.H, rep, nu_b, y, f)

        def b(H, nu, rep=rep):  # the base part of T_dot nu at pose H, base velocity nu in rep
            return B_X_W_dot(H, B_X_W(H, rep) @ nu, rep) @ nu

        for k in range(6):
            e = np.zeros(6)
            e[k] = h
            Hp, Hm = _moved(c.H, e, rep), _moved(c.H, -e, rep)
            dX = (B_X_W(Hp, rep) - B_X_W(Hm, rep)) / (2 * h)
            assert_close(dX @ y, Y[:, k], 1e-8)
            assert_close(dX.T @ f, Z[:, k], 1e-8)
            assert_close((b(Hp, nu_b) - b(Hm, nu_b)) / (2 * h), Bq[:, k], 1e-8)
            assert_close((b(c.H, nu_b + e) - b(c.H, nu_b - e)) / (2 * h), Bnu[:, k], 1e-8)


def _idyn_at(c, rep: str, H: np.ndarray, s: np.ndarray, nu: np.ndarray) -> None:
    assert c.kd.setFrameVelocityRepresentation(REPS[rep])
    assert c.kd.setRobotState(H, s, nu[:6], nu[6:], GRAVITY)


def _pin_at(c, rep: str, nu: np.ndarray):
    """Pinocchio's (q, v), T and T_dot at the fixture's pose with velocity nu in rep."""
    vB = B_X_W(c.H, rep) @ nu[:6]
    T, Td = T_of(c, rep, vB)
    q, v = pin_qv(c, vB)
    return q, v, T, Td


def _numeric(c, rep: str, nu: np.ndarray, fn, h: float = 1e-6):
    """Central differences of fn() (after setting iDynTree's state) along the tangent and in nu."""
    nv = 6 + c.n
    dq, dnu = np.zeros((nv, nv)), np.zeros((nv, nv))
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = h
        vals = []
        for sign in (1, -1):
            _idyn_at(c, rep, _moved(c.H, sign * e[:6], rep), c.s + sign * e[6:], nu)
            vals.append(fn())
        dq[:, k] = (vals[0] - vals[1]) / (2 * h)
        vals = []
        for sign in (1, -1):
            _idyn_at(c, rep, c.H, c.s, nu + sign * e)
            vals.append(fn())
        dnu[:, k] = (vals[0] - vals[1]) / (2 * h)
    _idyn_at(c, rep, c.H, c.s, nu)
    return dq, dnu


def test_inverse_dynamics_derivatives_through_T(robot):
    """dtau_dq = T^T [D_q T + D_v Y(nu) + M (Y(nu_dot) + B_q)] + Z(tau^pin), dtau_dnu = T^T [D_v T + M B_nu],
    dtau_dnudot = T^T M T (Pinocchio's computeRNEADerivatives), against iDynTree's ID differenced."""
    c = robot
    nv = 6 + c.n
    for rep in REPS:
        nu = nu_W(c, rep)
        nu_dot = np.concatenate([c.rng.normal(size=6), c.sdd])
        q, v, T, Td = _pin_at(c, rep, nu)
        a = T @ nu_dot + Td @ nu
        data = c.pm.createData()  # the returned matrices live in data
        Dq, Dv, M = (x.copy() for x in pin.computeRNEADerivatives(c.pm, data, q, v, a))
        tau_pin = pin.rnea(c.pm, c.pm.createData(), q, v, a)
        Y_nu, _, Bq, Bnu = _blocks(c.H, rep, nu[:6], nu[:6], tau_pin[:6])
        Y_nd, Z, _, _ = _blocks(c.H, rep, nu[:6], nu_dot[:6], tau_pin[:6])
        dq = T.T @ (Dq @ T + Dv @ _big(Y_nu, nv) + M @ _big(Y_nd + Bq, nv)) + _big(Z, nv)
        dnu = T.T @ (Dv @ T + M @ _big(Bnu, nv))
        num_q, num_nu = _numeric(c, rep, nu, lambda nu_dot=nu_dot, rep=rep: _idyn_id(c, rep, nu_dot))
        assert_close(dq, num_q, 1e-7, str(rep))
        assert_close(dnu, num_nu, 1e-7, str(rep))
        M_id = idyn.FreeFloatingMassMatrix(c.im)
        assert c.kd.getFreeFloatingMassMatrix(M_id)
        assert_close(T.T @ M @ T, M_id.toNumPy(), 1e-10)
        if rep == "mixed":  # the naive conversion is far off
            assert_not_close(T.T @ Dq @ T, num_q, 1e-2)
            assert_not_close(T.T @ Dv @ T, num_nu, 1e-2)


def test_forward_dynamics_derivatives_through_T(robot):
    """dnudot_dq = T^-1 [A_q T + A_v Y(nu) - M^-1 X^-T Z(tau^pin) - Y(nu_dot) - B_q], dnudot_dnu =
    T^-1 [A_v T - B_nu], dnudot_dtau = T^-1 M^-1 T^-T (Pinocchio's computeABADerivatives), against
    iDynTree's M^-1 (tau - h) differenced."""
    c = robot
    nv = 6 + c.n
    M_id = idyn.FreeFloatingMassMatrix(c.im)
    bias = idyn.FreeFloatingGeneralizedTorques(c.im)
    tau = np.concatenate([np.zeros(6), c.tau])

    def fd():
        assert c.kd.getFreeFloatingMassMatrix(M_id) and c.kd.generalizedBiasForces(bias)
        return np.linalg.solve(M_id.toNumPy(), tau - idyn_generalized(bias))

    for rep in REPS:
        nu = nu_W(c, rep)
        q, v, T, Td = _pin_at(c, rep, nu)
        tau_pin = np.linalg.solve(T.T, tau)
        data = c.pm.createData()  # the returned matrices live in data
        Aq, Av, Minv = (x.copy() for x in pin.computeABADerivatives(c.pm, data, q, v, tau_pin))
        nu_dot = np.linalg.solve(T, pin.aba(c.pm, c.pm.createData(), q, v, tau_pin) - Td @ nu)
        Y_nu, _, Bq, Bnu = _blocks(c.H, rep, nu[:6], nu[:6], tau_pin[:6])
        Y_nd, Z, _, _ = _blocks(c.H, rep, nu[:6], nu_dot[:6], tau_pin[:6])
        XiT = np.linalg.inv(B_X_W(c.H, rep)).T
        inner = Aq @ T + Av @ _big(Y_nu, nv) - Minv @ _big(XiT @ Z, nv) - _big(Y_nd + Bq, nv)
        dq = np.linalg.solve(T, inner)
        dnu = np.linalg.solve(T, Av @ T - _big(Bnu, nv))
        num_q, num_nu = _numeric(c, rep, nu, fd)
        assert_close(dq, num_q, 1e-7, str(rep))
        assert_close(dnu, num_nu, 1e-7, str(rep))
        assert_close(np.linalg.solve(T, Minv) @ np.linalg.inv(T.T), np.linalg.inv(M_id.toNumPy()), 1e-9)


def test_wrench_derivative_term(robot):
    """A wrench f held fixed in C (A or F[A]) adds J_C^T K J_C (K = K(f), its linear columns zeroed for
    F[A]) to the derivative of -J^T f at a wrench fixed in the frame F, all from iDynTree's Jacobians."""
    c = robot
    nv = 6 + c.n
    J = idyn.MatrixDynSize(6, nv)
    f = c.rng.normal(size=6)

    def C_X_F(rep: str) -> np.ndarray:
        C_H_F = c.kd.getWorldTransform(FRAME).asHomogeneousTransform().toNumPy()
        if rep == "mixed":  # C = F[A]: the pose of F in C is a pure rotation
            C_H_F[:3, 3] = 0.0
        return motion_matrix(C_H_F)

    def gen_force(rep: str, in_F: bool, wrench: np.ndarray) -> np.ndarray:
        """J^T wrench, the wrench in C, or in F (rows of the Jacobian moved to F; columns in rep)."""
        assert c.kd.getFrameFreeFloatingJacobian(FRAME, J)
        Jc = J.toNumPy()
        return (np.linalg.solve(C_X_F(rep), Jc) if in_F else Jc).T @ wrench

    for rep in ("inertial", "mixed"):
        nu = nu_W(c, rep)
        _idyn_at(c, rep, c.H, c.s, nu)
        f_F = C_X_F(rep).T @ f  # the same wrench in F at the fixture's state
        dq_C, _ = _numeric(c, rep, nu, lambda rep=rep: gen_force(rep, False, f))
        dq_F, _ = _numeric(c, rep, nu, lambda rep=rep, f_F=f_F: gen_force(rep, True, f_F))
        assert c.kd.getFrameFreeFloatingJacobian(FRAME, J)
        Jc = J.toNumPy()
        K = _K(f)
        if rep == "mixed":
            K[:, :3] = 0.0
        assert_close(dq_C - dq_F, -Jc.T @ K @ Jc, 1e-7, str(rep))


def test_ball_joint_velocity_maps():
    """A ball joint between BODY and MIXED: ``X_j = R``, ``X_j_dot = R w_C^`` (R = F_R_C), against
    finite differences of the joint's rotation along its motion, and the force map ``R^T``."""
    rng = np.random.default_rng(12)
    links = [bridge.Link(n, bridge.random_model(1, seed=k).links[0].inertia) for k, n in enumerate("PC")]
    rest = bridge.Transform.from_rpy([0.3, -0.2, 0.5], [0.1, 0.2, 0.3])
    joint = bridge.Joint("ball", "ball", "P", "C", rest, axis_origin=[0.05, 0.0, 0.1])
    model = bridge.Model("ball", links, (joint,), (), "P", ("ball",), floating=False)
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    w_C = rng.normal(size=3)
    state = bridge.State(np.eye(4), quat, np.zeros(6), w_C, "body", layout=model)
    T, T_dot = bridge.velocity_transform(model, state, "body", "mixed")
    R = bridge.Transform.from_quaternion_wxyz(quat).rotation
    assert_close(T, R, 1e-14, "X_j = R")
    assert_close(T_dot, R @ skew(w_C), 1e-14, "X_j_dot = R w^")
    h = 1e-6
    spec = joint.kind.spec
    Rp = bridge.Transform.from_quaternion_wxyz(spec.integrate(quat, h * w_C, "body")).rotation
    Rm = bridge.Transform.from_quaternion_wxyz(spec.integrate(quat, -h * w_C, "body")).rotation
    assert_close((Rp - Rm) / (2 * h), R @ skew(w_C), 1e-8, "d/dt R = R w^")
    tau_F = rng.normal(size=3)
    assert_close(
        bridge.convert_generalized_force(model, state, tau_F, "mixed", "body"), R.T @ tau_F, 1e-14, "R^T"
    )
