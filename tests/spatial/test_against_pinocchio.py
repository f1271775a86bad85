"""The neutral spatial core agrees with Pinocchio 4 (SE3, Motion, Force, Inertia, exp/log, quaternion, RPY).

Bridge works on whole batches; every batch element is compared with Pinocchio's result for it.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from hypothesis import given
from hypothesis import strategies as st

from bridge.spatial import Force, Motion, SpatialInertia, Transform
from bridge.spatial.so3 import so3_exp
from tests.helpers import assert_close
from tests.spatial.strategies import (
    PROPERTY,
    TOL,
    arrays,
    forces,
    inertias,
    motions,
    rotation_vectors,
    transforms,
    translations,
    unit_quaternions,
)

BATCH = (3, 1, 2)
batches = st.sampled_from([(), BATCH])


def _each(batch: tuple[int, ...]):
    return list(np.ndindex(*batch))


def _se3(T: Transform, i) -> pin.SE3:
    return pin.SE3(np.array(T.rotation[i]), np.array(T.translation[i]))


def _inertia(inertia: SpatialInertia, i) -> pin.Inertia:
    return pin.Inertia(float(inertia.mass[i]), np.array(inertia.com[i]), np.array(inertia.inertia_com[i]))


@PROPERTY
@given(st.data(), batches)
def test_se3(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A, B = data.draw(transforms(batch)), data.draw(transforms(batch))
    points = data.draw(translations(batch))
    AB, Ainv = A @ B, A.inverse()
    X, Xs, Xinv = A.motion_matrix(), A.force_matrix(), Ainv.motion_matrix()
    pA_fwd, pA_inv = A.apply(points), Ainv.apply(points)
    for i in _each(batch):
        a, b = _se3(A, i), _se3(B, i)
        assert_close(A.matrix[i], a.homogeneous, what="homogeneous", rtol=TOL, norm="max")
        assert_close(A.rotation[i], a.rotation, rtol=TOL, norm="max")
        assert_close(A.translation[i], a.translation, rtol=TOL, norm="max")
        assert_close(Ainv.matrix[i], a.inverse().homogeneous, what="inverse", rtol=TOL, norm="max")
        assert_close(AB.matrix[i], (a * b).homogeneous, what="SE3 *", rtol=TOL, norm="max")
        assert_close(pA_fwd[i], a.act(points[i]), what="act(point)", rtol=TOL, norm="max")
        assert_close(pA_inv[i], a.actInv(points[i]), what="actInv(point)", rtol=TOL, norm="max")
        assert_close(X[i], a.action, what=".action", rtol=TOL, norm="max")
        assert_close(Xs[i], a.dualAction, what=".dualAction", rtol=TOL, norm="max")
        assert_close(Xs[i], a.toDualActionMatrix(), what="toDualActionMatrix", rtol=TOL, norm="max")
        assert_close(Xinv[i], a.actionInverse, what=".actionInverse", rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), batches)
def test_se3_on_motion_and_force(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A = data.draw(transforms(batch))
    v, f = data.draw(motions(batch)), data.draw(forces(batch))
    Av, Af = A @ v, A @ f
    Aiv, Aif = A.inverse() @ v, A.inverse() @ f
    for i in _each(batch):
        a = _se3(A, i)
        pv, pf = pin.Motion(np.array(v.vector[i])), pin.Force(np.array(f.vector[i]))
        assert_close(Av.vector[i], a.act(pv).vector, what="act(Motion)", rtol=TOL, norm="max")
        assert_close(Af.vector[i], a.act(pf).vector, what="act(Force)", rtol=TOL, norm="max")
        assert_close(Aiv.vector[i], a.actInv(pv).vector, what="actInv(Motion)", rtol=TOL, norm="max")
        assert_close(Aif.vector[i], a.actInv(pf).vector, what="actInv(Force)", rtol=TOL, norm="max")
        assert_close(Af.dot(Av)[i], a.act(pf).dot(a.act(pv)), what="power", rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), batches)
def test_motion_cross(data: st.DataObject, batch: tuple[int, ...]) -> None:
    v, m, f = data.draw(motions(batch)), data.draw(motions(batch)), data.draw(forces(batch))
    vm, vf = v.cross(m), v.cross(f)
    for i in _each(batch):
        pv = pin.Motion(np.array(v.vector[i]))
        pm, pf = pin.Motion(np.array(m.vector[i])), pin.Force(np.array(f.vector[i]))
        assert_close(vm.vector[i], (pv ^ pm).vector, what="Motion ^ Motion", rtol=TOL, norm="max")
        assert_close(vm.vector[i], pv.cross(pm).vector, what="Motion.cross(Motion)", rtol=TOL, norm="max")
        assert_close(vf.vector[i], (pv ^ pf).vector, what="Motion ^ Force", rtol=TOL, norm="max")
        assert_close(vf.vector[i], pv.cross(pf).vector, what="Motion.cross(Force)", rtol=TOL, norm="max")
        assert_close(np.asarray(pv.linear), v.linear[i], what="linear part first", rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), batches)
def test_inertia(data: st.DataObject, batch: tuple[int, ...]) -> None:
    inertia = data.draw(inertias(batch))
    A = data.draw(transforms(batch))
    v = data.draw(motions(batch))
    M, h, IA = inertia.as_matrix(), inertia @ v, A @ inertia
    params = inertia.as_pinocchio_parameters()
    for i in _each(batch):
        pI = _inertia(inertia, i)
        assert_close(M[i], pI.matrix(), what="Inertia.matrix()", rtol=TOL, norm="max")
        assert_close(
            h.vector[i],
            (pI * pin.Motion(np.array(v.vector[i]))).vector,
            what="Inertia * Motion",
            rtol=TOL,
            norm="max",
        )
        a = _se3(A, i)
        assert_close(IA.as_matrix()[i], a.act(pI).matrix(), what="se3.act(Inertia)", rtol=TOL, norm="max")
        assert_close(
            IA.as_matrix()[i], pI.se3Action(a).matrix(), what="Inertia.se3Action", rtol=TOL, norm="max"
        )
        assert_close(params[i], pI.toDynamicParameters(), what="toDynamicParameters", rtol=TOL, norm="max")
        back = pin.Inertia.FromDynamicParameters(np.array(params[i]))
        assert_close(M[i], back.matrix(), what="FromDynamicParameters", rtol=TOL, norm="max")
        assert_close(
            SpatialInertia.from_pinocchio_parameters(pI.toDynamicParameters()).parameters,
            inertia.parameters[i],
            what="from_pinocchio_parameters",
            rtol=TOL,
            norm="max",
        )
        assert_close(inertia.com[i], pI.lever, rtol=TOL, norm="max")
        assert_close(
            inertia.inertia_com[i], pI.inertia, what="Inertia.inertia is about the COM", rtol=TOL, norm="max"
        )


@PROPERTY
@given(st.data(), batches)
def test_exp_log(data: st.DataObject, batch: tuple[int, ...]) -> None:
    # log is compared away from pi, where the sign of the axis is not a convention
    w = data.draw(rotation_vectors(batch, max_angle=np.pi - 1e-6))
    lin = data.draw(translations(batch))
    xi = np.concatenate([lin, w], -1)
    T = Transform.exp(xi)
    R = Transform.exp_so3(w).rotation
    log6, log3 = T.log(), T.log_so3()
    for i in _each(batch):
        assert_close(
            T.matrix[i], pin.exp6(pin.Motion(np.array(xi[i]))).homogeneous, what="exp6", rtol=TOL, norm="max"
        )
        assert_close(
            T.matrix[i], pin.exp6(np.array(xi[i])).homogeneous, what="exp6(array)", rtol=TOL, norm="max"
        )
        assert_close(log6[i], pin.log6(_se3(T, i)).vector, what="log6", rtol=TOL, norm="max")
        assert_close(log6[i], pin.log6(np.array(T.matrix[i])).vector, what="log6(4x4)", rtol=TOL, norm="max")
        assert_close(R[i], pin.exp3(np.array(w[i])), what="exp3", rtol=TOL, norm="max")
        assert_close(log3[i], pin.log3(np.array(T.rotation[i])), what="log3", rtol=TOL, norm="max")


@PROPERTY
@given(rotation_vectors((8,), max_angle=np.pi))
def test_exp_at_all_angles_including_pi(w: np.ndarray) -> None:
    lin = np.linspace(-2, 2, 24).reshape(8, 3)
    xi = np.concatenate([lin, w], -1)
    T = Transform.exp(xi)
    for i in range(8):
        assert_close(T.matrix[i], pin.exp6(np.array(xi[i])).homogeneous, what="exp6", rtol=TOL, norm="max")
        # at pi the two logs may differ by the axis sign, but both are logarithms of T
        assert_close(
            Transform.exp(pin.log6(_se3(T, i)).vector).matrix,
            T.matrix[i],
            what="exp(pin.log6)",
            rtol=TOL,
            norm="max",
        )


@PROPERTY
@given(st.data(), batches)
def test_quaternion_order(data: st.DataObject, batch: tuple[int, ...]) -> None:
    """pin.Quaternion(array) and .coeffs() are (x, y, z, w); the scalar constructor takes w first."""
    q = data.draw(unit_quaternions(batch))
    T = Transform.from_quaternion_xyzw(q)
    q_out = T.as_quaternion_xyzw()
    for i in _each(batch):
        pq = pin.Quaternion(np.array(q[i]))
        assert_close(T.rotation[i], pq.matrix(), what="Quaternion(xyzw).matrix()", rtol=TOL, norm="max")
        assert_close(np.asarray(pq.coeffs()), q[i], what="coeffs() is xyzw", rtol=TOL, norm="max")
        x, y, z, w = q[i]
        assert_close(
            pin.Quaternion(w, x, y, z).matrix(),
            T.rotation[i],
            what="Quaternion(w, x, y, z)",
            rtol=TOL,
            norm="max",
        )
        coeffs = np.asarray(pin.Quaternion(np.array(T.rotation[i])).coeffs())
        sign = 1.0 if np.dot(coeffs, q_out[i]) >= 0 else -1.0  # q and -q: bridge fixes w >= 0
        assert_close(q_out[i], sign * coeffs, what="Quaternion(R)", rtol=TOL, norm="max")
        assert_close(T.as_quaternion_wxyz()[i], np.roll(sign * coeffs, 1), what="wxyz", rtol=TOL, norm="max")


@PROPERTY
@given(
    arrays(BATCH, -np.pi + 1e-6, np.pi - 1e-6),
    arrays(BATCH, -np.pi / 2 + 1e-4, np.pi / 2 - 1e-4),
    arrays(BATCH, -np.pi + 1e-6, np.pi - 1e-6),
)
def test_rpy(roll: np.ndarray, pitch: np.ndarray, yaw: np.ndarray) -> None:
    rpy = np.stack([roll, pitch, yaw], -1)
    T = Transform.from_rpy(rpy)
    out = T.as_rpy()
    for i in _each(BATCH):
        assert_close(
            T.rotation[i], pin.rpy.rpyToMatrix(np.array(rpy[i])), what="rpyToMatrix", rtol=TOL, norm="max"
        )
        assert_close(
            T.rotation[i], pin.rpy.rpyToMatrix(*rpy[i]), what="rpyToMatrix(r, p, y)", rtol=TOL, norm="max"
        )
        assert_close(
            out[i], pin.rpy.matrixToRpy(np.array(T.rotation[i])), rtol=1e-11, what="matrixToRpy", norm="max"
        )


def test_rpy_near_gimbal_lock_both_reproduce_the_matrix() -> None:
    rng = np.random.default_rng(11)
    for d in (0.0, 1e-14, 1e-10, 1e-7):
        for s in (1.0, -1.0):
            R = so3_exp(rng.normal(size=3)) @ pin.rpy.rpyToMatrix(0.3, s * (np.pi / 2 - d), -1.2)
            ours, theirs = Transform.from_rotation_translation(R).as_rpy(), pin.rpy.matrixToRpy(R)
            assert_close(pin.rpy.rpyToMatrix(ours), R, rtol=4e-15, what="bridge rpy", norm="max")
            assert_close(Transform.from_rpy(theirs).rotation, R, rtol=4e-15, what="pinocchio rpy", norm="max")


def test_pinocchio_vectors_are_linear_first() -> None:
    v = pin.Motion(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert_close(np.asarray(v.linear), Motion(v.vector).linear, rtol=TOL, norm="max")
    f = pin.Force(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert_close(np.asarray(f.angular), Force(f.vector).angular, rtol=TOL, norm="max")
