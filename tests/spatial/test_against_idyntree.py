"""The neutral spatial core agrees with iDynTree (Transform, Rotation, twists, wrenches, SpatialInertia).

What the bindings do, as checked here:

* ``Transform(Rotation(A_R_B), Position(A_o_B))`` is ``A_H_B``; ``asAdjointTransform()`` is the
  linear-first motion matrix ``A_X_B`` and ``asAdjointTransformWrench()`` the force matrix.
  ``Transform * Twist`` / ``* SpatialMotionVector`` is the motion action, ``* Wrench`` /
  ``* SpatialForceVector`` the force action, ``* SpatialInertia`` the inertia change of frame.
* ``Rotation.asQuaternion()`` and ``RotationFromQuaternion`` use (w, x, y, z): real part first.
* ``SpatialInertia(m, Position(c), RotationalInertia(I))`` takes the rotational inertia about the
  frame origin (not about the COM); ``asVector()`` is ``[m, m c, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]``
  about the origin (bridge's ``as_idyntree_parameters``); ``SpatialInertia * Twist`` is the momentum.
* ``Rotation.RPY(r, p, y)`` / ``asRPY()`` are URDF's fixed-axis roll-pitch-yaw.

iDynTree getters may return temporaries whose ``toNumPy()`` is a view: ``_np`` copies while the
object is held by its argument.
"""

from __future__ import annotations

import idyntree.bindings as idyn
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from bridge.spatial import SpatialInertia, Transform, crf, crm
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


def _np(obj) -> np.ndarray:
    """Copy an iDynTree vector/matrix to numpy while ``obj`` is alive."""
    return np.array(obj.toNumPy(), dtype=np.float64, copy=True)


def _each(batch: tuple[int, ...]):
    return list(np.ndindex(*batch))


def _transform(T: Transform, i) -> idyn.Transform:
    return idyn.Transform(idyn.Rotation(np.array(T.rotation[i])), idyn.Position(np.array(T.translation[i])))


def _H(T: idyn.Transform) -> np.ndarray:
    return _np(T.asHomogeneousTransform())


def _twist(v: np.ndarray) -> idyn.Twist:
    return idyn.Twist.FromPython(np.array(v))


def _wrench(f: np.ndarray) -> idyn.Wrench:
    return idyn.Wrench.FromPython(np.array(f))


def _inertia(inertia: SpatialInertia, i) -> idyn.SpatialInertia:
    return idyn.SpatialInertia(
        float(inertia.mass[i]),
        idyn.Position(np.array(inertia.com[i])),
        idyn.RotationalInertia(np.array(inertia.inertia_origin[i])),
    )


@PROPERTY
@given(st.data(), batches)
def test_transform(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A, B = data.draw(transforms(batch)), data.draw(transforms(batch))
    points = data.draw(translations(batch))
    AB, Ainv = A @ B, A.inverse()
    X, Xs, pts = A.motion_matrix(), A.force_matrix(), A.apply(points)
    for i in _each(batch):
        a, b = _transform(A, i), _transform(B, i)
        assert_close(A.matrix[i], _H(a), what="asHomogeneousTransform", rtol=TOL, norm="max")
        assert_close(Ainv.matrix[i], _H(a.inverse()), what="inverse", rtol=TOL, norm="max")
        assert_close(AB.matrix[i], _H(a * b), what="Transform *", rtol=TOL, norm="max")
        assert_close(X[i], _np(a.asAdjointTransform()), what="asAdjointTransform", rtol=TOL, norm="max")
        assert_close(
            Xs[i], _np(a.asAdjointTransformWrench()), what="asAdjointTransformWrench", rtol=TOL, norm="max"
        )
        assert_close(
            pts[i],
            _np(a * idyn.Position(np.array(points[i]))),
            what="Transform * Position",
            rtol=TOL,
            norm="max",
        )
        rot = a.getRotation()
        pos = a.getPosition()
        assert_close(A.rotation[i], _np(rot), rtol=TOL, norm="max")
        assert_close(A.translation[i], _np(pos), rtol=TOL, norm="max")
        rebuilt = idyn.Transform()
        rebuilt.fromHomogeneousTransform(idyn.Matrix4x4(np.array(A.matrix[i])))
        assert_close(A.matrix[i], _H(rebuilt), what="fromHomogeneousTransform", rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), batches)
def test_transform_on_motion_and_force(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A = data.draw(transforms(batch))
    v, f = data.draw(motions(batch)), data.draw(forces(batch))
    Av, Af = A @ v, A @ f
    for i in _each(batch):
        a = _transform(A, i)
        tw, wr = _twist(v.vector[i]), _wrench(f.vector[i])
        assert_close(Av.vector[i], _np(a * tw), what="Transform * Twist", rtol=TOL, norm="max")
        assert_close(Af.vector[i], _np(a * wr), what="Transform * Wrench", rtol=TOL, norm="max")
        smv, sfv = idyn.SpatialMotionVector(tw), idyn.SpatialForceVector(wr)
        assert_close(Av.vector[i], _np(a * smv), what="Transform * SpatialMotionVector", rtol=TOL, norm="max")
        assert_close(Af.vector[i], _np(a * sfv), what="Transform * SpatialForceVector", rtol=TOL, norm="max")
        assert_close(f.dot(v)[i], smv.dot(sfv), what="SpatialMotionVector.dot", rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), batches)
def test_cross_products(data: st.DataObject, batch: tuple[int, ...]) -> None:
    v, m, f = data.draw(motions(batch)), data.draw(motions(batch)), data.draw(forces(batch))
    vm, vf = v.cross(m), v.cross(f)
    Cm, Cf = crm(v.vector), crf(v.vector)
    for i in _each(batch):
        tv = idyn.SpatialMotionVector(_twist(v.vector[i]))
        tm = idyn.SpatialMotionVector(_twist(m.vector[i]))
        wf = idyn.SpatialForceVector(_wrench(f.vector[i]))
        assert_close(vm.vector[i], _np(tv.cross(tm)), what="cross(SpatialMotionVector)", rtol=TOL, norm="max")
        assert_close(vf.vector[i], _np(tv.cross(wf)), what="cross(SpatialForceVector)", rtol=TOL, norm="max")
        assert_close(Cm[i], _np(tv.asCrossProductMatrix()), what="asCrossProductMatrix", rtol=TOL, norm="max")
        assert_close(
            Cf[i],
            _np(tv.asCrossProductMatrixWrench()),
            what="asCrossProductMatrixWrench",
            rtol=TOL,
            norm="max",
        )


@PROPERTY
@given(st.data(), batches)
def test_spatial_inertia(data: st.DataObject, batch: tuple[int, ...]) -> None:
    inertia = data.draw(inertias(batch))
    other = data.draw(inertias(batch))
    A = data.draw(transforms(batch))
    v = data.draw(motions(batch))
    M, h, params, IA = inertia.as_matrix(), inertia @ v, inertia.as_idyntree_parameters(), A @ inertia
    total = (inertia + other).as_matrix()
    for i in _each(batch):
        body = _inertia(inertia, i)
        assert_close(M[i], _np(body.asMatrix()), what="asMatrix", rtol=TOL, norm="max")
        assert_close(params[i], _np(body.asVector()), what="asVector ordering", rtol=TOL, norm="max")
        assert_close(
            SpatialInertia.from_idyntree_parameters(_np(body.asVector())).parameters,
            inertia.parameters[i],
            what="from_idyntree_parameters",
            rtol=TOL,
            norm="max",
        )
        assert_close(
            h.vector[i], _np(body * _twist(v.vector[i])), what="SpatialInertia * Twist", rtol=TOL, norm="max"
        )
        assert_close(
            h.vector[i],
            _np(body.multiply(_twist(v.vector[i]))),
            what="SpatialInertia.multiply",
            rtol=TOL,
            norm="max",
        )
        assert_close(
            IA.as_matrix()[i],
            _np((_transform(A, i) * body).asMatrix()),
            what="Transform * SpatialInertia",
            rtol=TOL,
            norm="max",
        )
        assert_close(
            total[i],
            _np((body + _inertia(other, i)).asMatrix()),
            what="SpatialInertia +",
            rtol=TOL,
            norm="max",
        )
        assert_close(inertia.mass[i], body.getMass(), rtol=TOL, norm="max")
        assert_close(inertia.com[i], _np(body.getCenterOfMass()), rtol=TOL, norm="max")
        assert_close(
            inertia.inertia_com[i],
            _np(body.getRotationalInertiaWrtCenterOfMass()),
            what="I_c",
            rtol=TOL,
            norm="max",
        )
        assert_close(
            inertia.inertia_origin[i],
            _np(body.getRotationalInertiaWrtFrameOrigin()),
            what="I_o",
            rtol=TOL,
            norm="max",
        )
        from_vec = idyn.SpatialInertia()
        from_vec.fromVector(idyn.Vector10(np.array(params[i])))
        assert_close(M[i], _np(from_vec.asMatrix()), what="fromVector", rtol=TOL, norm="max")
        assert body.isPhysicallyConsistent()


def test_physical_consistency_agrees() -> None:
    """bridge's check_physical and iDynTree's isPhysicallyConsistent agree on the triangle inequality."""
    good = SpatialInertia(2.0, [0.1, 0.0, -0.2], np.diag([0.2, 0.3, 0.45]))
    bad = SpatialInertia(2.0, [0.1, 0.0, -0.2], np.diag([0.1, 0.1, 0.5]))
    good.check_physical()
    assert _inertia(good, ()).isPhysicallyConsistent()
    assert not _inertia(bad, ()).isPhysicallyConsistent()
    try:
        bad.check_physical()
    except ValueError as exc:
        assert "triangle" in str(exc)
    else:
        raise AssertionError("check_physical accepted a body violating the triangle inequality")


@PROPERTY
@given(st.data(), batches)
def test_exp_log(data: st.DataObject, batch: tuple[int, ...]) -> None:
    """iDynTree's SE(3) exp loses accuracy for rotation angles between ~1e-12 and ~1e-5 (errors up to
    2e-9 against an extended-precision series, where bridge stays at 1e-16; see
    test_transform.test_exp_matches_extended_precision_series), so the comparison starts at 1e-4."""
    w = data.draw(rotation_vectors(batch, max_angle=np.pi - 1e-6, min_angle=1e-4))
    xi = np.concatenate([data.draw(translations(batch)), w], -1)
    T = Transform.exp(xi)
    log = T.log()
    for i in _each(batch):
        assert_close(
            T.matrix[i],
            _H(idyn.SpatialMotionVector(_twist(xi[i])).exp()),
            what="SpatialMotionVector.exp",
            rtol=TOL,
            norm="max",
        )
        assert_close(log[i], _np(_transform(T, i).log()), what="Transform.log", rtol=TOL, norm="max")
        assert_close(
            T.log_so3()[i],
            _np(idyn.Rotation(np.array(T.rotation[i])).log()),
            what="Rotation.log",
            rtol=TOL,
            norm="max",
        )


@PROPERTY
@given(st.data(), batches)
def test_quaternion_is_w_first(data: st.DataObject, batch: tuple[int, ...]) -> None:
    q = data.draw(unit_quaternions(batch))
    T = Transform.from_quaternion_xyzw(q)
    wxyz = T.as_quaternion_wxyz()
    for i in _each(batch):
        R = idyn.Rotation(np.array(T.rotation[i]))
        theirs = _np(R.asQuaternion())
        sign = 1.0 if np.dot(theirs, wxyz[i]) >= 0 else -1.0  # q and -q: bridge fixes w >= 0
        assert_close(wxyz[i], sign * theirs, what="asQuaternion is (w, x, y, z)", rtol=TOL, norm="max")
        from_q = idyn.Rotation.RotationFromQuaternion(idyn.Vector4(np.roll(q[i], 1)))
        assert_close(
            T.rotation[i], _np(from_q), what="RotationFromQuaternion(w, x, y, z)", rtol=TOL, norm="max"
        )


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
        R = idyn.Rotation.RPY(*(float(x) for x in rpy[i]))
        assert_close(T.rotation[i], _np(R), what="Rotation.RPY", rtol=TOL, norm="max")
        assert_close(
            out[i], _np(idyn.Rotation(np.array(T.rotation[i])).asRPY()), rtol=1e-11, what="asRPY", norm="max"
        )
