"""The neutral spatial core: group properties (hypothesis, over batch shapes), agreement with
Pinocchio and iDynTree to 1e-12, foreign conventions, and errors."""

from __future__ import annotations

import idyntree.bindings as idyn
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bridge
from bridge.spatial import (
    Force,
    Motion,
    SpatialInertia,
    Transform,
    crf,
    crm,
    plux,
    plxb,
    reorder_matrix,
    to_angular_first,
    to_linear_first,
    transform_from_featherstone,
    transform_from_plux,
    transform_from_plxb,
    transform_from_tds,
    transform_to_featherstone,
    transform_to_plux,
    transform_to_plxb,
    transform_to_tds,
)
from bridge.spatial.so3 import matrix_to_rpy, rpy_to_matrix

SHAPES = [(), (1,), (3, 1, 2)]
PAIRS = [((), (4,)), ((3, 1, 2), (2,)), ((4, 1), (1, 5)), ((2, 3), (2, 3))]
ATOL = 1e-12
CFG = settings(max_examples=40, deadline=None)

seeds = st.integers(0, 2**32 - 1)


def rand_T(rng, shape=()):
    q = rng.normal(size=(*shape, 4))
    return Transform.from_quaternion_xyzw(
        q / np.linalg.norm(q, axis=-1, keepdims=True), rng.uniform(-2, 2, (*shape, 3))
    )


def rand_I(rng, shape=()):
    m = rng.uniform(0.1, 10, shape)
    sides = rng.uniform(0.05, 0.5, (*shape, 3)) ** 2
    moments = (
        m[..., None]
        / 12
        * np.stack(
            [sides[..., 1] + sides[..., 2], sides[..., 0] + sides[..., 2], sides[..., 0] + sides[..., 1]], -1
        )
    )
    R = rand_T(rng, shape).rotation
    Ic = R @ (moments[..., :, None] * np.swapaxes(R, -1, -2))
    return SpatialInertia(m, rng.uniform(-0.3, 0.3, (*shape, 3)), Ic)


# ------------------------------------------------------------------------------------ properties
@CFG
@given(seeds, st.sampled_from(SHAPES))
def test_group_axioms(seed, shape):
    rng = np.random.default_rng(seed)
    A, B, C = rand_T(rng, shape), rand_T(rng, shape), rand_T(rng, shape)
    np.testing.assert_allclose(((A @ B) @ C).matrix, (A @ (B @ C)).matrix, atol=ATOL)
    np.testing.assert_allclose((A @ Transform.identity()).matrix, A.matrix, atol=0)
    np.testing.assert_allclose(
        (A @ A.inverse()).matrix, np.broadcast_to(np.eye(4), A.matrix.shape), atol=ATOL
    )
    np.testing.assert_allclose(
        (A.inverse() @ A).matrix, np.broadcast_to(np.eye(4), A.matrix.shape), atol=ATOL
    )
    p = rng.normal(size=(*shape, 3))
    np.testing.assert_allclose((A @ B).apply(p), A.apply(B.apply(p)), atol=ATOL)


@CFG
@given(seeds, st.sampled_from(SHAPES), st.sampled_from([0.0, 1e-9, 1e-3, 1.0, np.pi - 1e-7, np.pi]))
def test_exp_log(seed, shape, angle):
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=(*shape, 3))
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    xi = np.concatenate([rng.normal(size=(*shape, 3)), angle * axis], axis=-1)
    T = Transform.exp(xi)
    np.testing.assert_allclose(Transform.exp(T.log()).matrix, T.matrix, atol=1e-10)
    if angle < np.pi - 1e-6:
        np.testing.assert_allclose(T.log(), xi, atol=1e-9)
    A = rand_T(rng, shape)
    np.testing.assert_allclose(Transform.exp(A.log()).matrix, A.matrix, atol=1e-10)


@CFG
@given(seeds, st.sampled_from(SHAPES))
def test_adjoint_homomorphism_and_duality(seed, shape):
    rng = np.random.default_rng(seed)
    A, B = rand_T(rng, shape), rand_T(rng, shape)
    np.testing.assert_allclose((A @ B).motion_matrix(), A.motion_matrix() @ B.motion_matrix(), atol=1e-11)
    np.testing.assert_allclose((A @ B).force_matrix(), A.force_matrix() @ B.force_matrix(), atol=1e-11)
    np.testing.assert_allclose(
        A.force_matrix(), np.swapaxes(np.linalg.inv(A.motion_matrix()), -1, -2), atol=1e-11
    )
    v, f = Motion(rng.normal(size=(*shape, 6))), Force(rng.normal(size=(*shape, 6)))
    np.testing.assert_allclose(
        (A @ v).vector, np.einsum("...ij,...j->...i", A.motion_matrix(), v.vector), atol=ATOL
    )
    np.testing.assert_allclose(
        (A @ f).vector, np.einsum("...ij,...j->...i", A.force_matrix(), f.vector), atol=ATOL
    )
    np.testing.assert_allclose((A @ f).dot(A @ v), f.dot(v), atol=1e-10)  # power is frame independent


@CFG
@given(seeds, st.sampled_from(PAIRS))
def test_broadcasting(seed, pair):
    rng = np.random.default_rng(seed)
    sa, sb = pair
    A = rand_T(rng, sa)
    v = Motion(rng.normal(size=(*sb, 6)))
    out = A @ v
    shape = np.broadcast_shapes(sa, sb)
    assert out.batch_shape == shape
    Ab = np.broadcast_to(A.matrix, (*shape, 4, 4))
    vb = np.broadcast_to(v.vector, (*shape, 6))
    for idx in np.ndindex(*shape):
        np.testing.assert_allclose(out.vector[idx], (Transform(Ab[idx]) @ Motion(vb[idx])).vector, atol=ATOL)
    B = rand_T(rng, sb)
    assert (A @ B).batch_shape == shape


@CFG
@given(seeds, st.sampled_from(SHAPES))
def test_cross_products(seed, shape):
    rng = np.random.default_rng(seed)
    v, m, f = (
        Motion(rng.normal(size=(*shape, 6))),
        Motion(rng.normal(size=(*shape, 6))),
        Force(rng.normal(size=(*shape, 6))),
    )
    np.testing.assert_allclose(
        v.cross(m).vector, np.einsum("...ij,...j->...i", crm(v.vector), m.vector), atol=ATOL
    )
    np.testing.assert_allclose(
        v.cross(f).vector, np.einsum("...ij,...j->...i", crf(v.vector), f.vector), atol=ATOL
    )
    np.testing.assert_allclose(crf(v.vector), -np.swapaxes(crm(v.vector), -1, -2), atol=0)
    A = rand_T(rng, shape)
    X = A.motion_matrix()
    np.testing.assert_allclose(X @ crm(v.vector) @ np.linalg.inv(X), crm((A @ v).vector), atol=1e-10)
    # (v x* f) . m = -f . (v x m)
    np.testing.assert_allclose(v.cross(f).dot(m), -f.dot(v.cross(m)), atol=1e-10)


@CFG
@given(seeds, st.sampled_from(SHAPES))
def test_inertia_properties(seed, shape):
    rng = np.random.default_rng(seed)
    inertia, A = rand_I(rng, shape), rand_T(rng, shape)
    v = Motion(rng.normal(size=(*shape, 6)))
    np.testing.assert_allclose(((A @ inertia) @ (A @ v)).vector, (A @ (inertia @ v)).vector, atol=1e-10)
    np.testing.assert_allclose(
        (inertia @ v).vector, np.einsum("...ij,...j->...i", inertia.as_matrix(), v.vector), atol=1e-12
    )
    X = A.motion_matrix()
    np.testing.assert_allclose(
        (A @ inertia).as_matrix(),
        np.swapaxes(np.linalg.inv(X), -1, -2) @ inertia.as_matrix() @ np.linalg.inv(X),
        atol=1e-10,
    )
    np.testing.assert_allclose(
        SpatialInertia.from_matrix(inertia.as_matrix()).parameters, inertia.parameters, atol=1e-12
    )
    for to, frm in (
        (inertia.as_pinocchio_parameters, SpatialInertia.from_pinocchio_parameters),
        (inertia.as_idyntree_parameters, SpatialInertia.from_idyntree_parameters),
    ):
        np.testing.assert_allclose(frm(to()).parameters, inertia.parameters, atol=1e-12)
    other = rand_I(rng, shape)
    total = inertia + other
    np.testing.assert_allclose((total @ v).vector, (inertia @ v).vector + (other @ v).vector, atol=1e-11)
    inertia.check_physical()


@CFG
@given(seeds, st.sampled_from(SHAPES))
def test_rotations_quaternions_rpy(seed, shape):
    rng = np.random.default_rng(seed)
    A = rand_T(rng, shape)
    q = A.as_quaternion_xyzw()
    assert np.all(q[..., 3] >= 0)
    np.testing.assert_allclose(Transform.from_quaternion_xyzw(q, A.translation).matrix, A.matrix, atol=ATOL)
    np.testing.assert_allclose(
        Transform.from_quaternion_wxyz(A.as_quaternion_wxyz(), A.translation).matrix, A.matrix, atol=ATOL
    )
    np.testing.assert_allclose(np.roll(A.as_quaternion_wxyz(), -1, axis=-1), q, atol=0)
    rpy = A.as_rpy()
    np.testing.assert_allclose(Transform.from_rpy(rpy, A.translation).matrix, A.matrix, atol=1e-12)
    for pitch in (np.pi / 2, -np.pi / 2, np.pi / 2 - 1e-7):
        R = rpy_to_matrix(np.array([0.3, pitch, -1.0]))
        np.testing.assert_allclose(rpy_to_matrix(matrix_to_rpy(R)), R, atol=1e-13)


@CFG
@given(seeds, st.sampled_from(SHAPES))
def test_orderings_and_foreign_transforms(seed, shape):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(*shape, 6))
    np.testing.assert_array_equal(to_linear_first(to_angular_first(v)), v)
    np.testing.assert_array_equal(to_angular_first(v)[..., :3], v[..., 3:])
    M = rng.normal(size=(*shape, 6, 6))
    np.testing.assert_array_equal(reorder_matrix(reorder_matrix(M)), M)
    A, B = rand_T(rng, shape), rand_T(rng, shape)
    # plux(E, r) of A_H_B is B_X_A, angular first
    np.testing.assert_allclose(reorder_matrix(transform_to_plux(A)), A.inverse().motion_matrix(), atol=1e-12)
    np.testing.assert_allclose(transform_from_plux(transform_to_plux(A)).matrix, A.matrix, atol=1e-12)
    np.testing.assert_allclose(
        transform_from_featherstone(*transform_to_featherstone(A)).matrix, A.matrix, atol=1e-12
    )
    # left-associative: C_X_A = C_X_B B_X_A
    np.testing.assert_allclose(
        transform_to_plux(A @ B), transform_to_plux(B) @ transform_to_plux(A), atol=1e-11
    )
    # right-associative TDS/brax: plxb(E1, r1) plxb(E2, r2) = plxb(E1 E2, r1 + E1 r2) ...
    E1, r1 = transform_to_tds(A)
    E2, r2 = transform_to_tds(B)
    composed = plxb(E1 @ E2, r1 + np.einsum("...ij,...j->...i", E1, r2))
    np.testing.assert_allclose(composed, plxb(E2, r2) @ plxb(E1, r1), atol=1e-11)
    # ... which is the pose composition A @ B
    np.testing.assert_allclose(
        transform_from_tds(E1 @ E2, r1 + np.einsum("...ij,...j->...i", E1, r2)).matrix,
        (A @ B).matrix,
        atol=1e-12,
    )
    np.testing.assert_allclose(transform_from_plxb(transform_to_plxb(A)).matrix, A.matrix, atol=1e-12)
    E, r = transform_to_featherstone(A)
    np.testing.assert_allclose(plux(E, r), transform_to_plux(A), atol=0)


def test_featherstone_textbook_values():
    """plux(E, r) applied to (omega, v) gives (E omega, E (v - r x omega))."""
    rng = np.random.default_rng(1)
    E = rand_T(rng).rotation
    r, w, v = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    out = plux(E, r) @ np.concatenate([w, v])
    np.testing.assert_allclose(out, np.concatenate([E @ w, E @ (v - np.cross(r, w))]), atol=1e-14)


# ------------------------------------------------------------------------------------ Pinocchio
def _pin_se3(T: Transform):
    return pin.SE3(T.rotation.copy(), T.translation.copy())


@pytest.mark.parametrize("seed", range(10))
def test_agrees_with_pinocchio(seed):
    rng = np.random.default_rng(seed)
    A, B = rand_T(rng), rand_T(rng)
    pA, pB = _pin_se3(A), _pin_se3(B)
    np.testing.assert_allclose((A @ B).matrix, (pA * pB).homogeneous, atol=ATOL)
    np.testing.assert_allclose(A.inverse().matrix, pA.inverse().homogeneous, atol=ATOL)
    np.testing.assert_allclose(A.motion_matrix(), pA.action, atol=ATOL)
    np.testing.assert_allclose(A.force_matrix(), pA.dualAction, atol=ATOL)
    p = rng.normal(size=3)
    np.testing.assert_allclose(A.apply(p), pA.act(p), atol=ATOL)
    np.testing.assert_allclose(A.inverse().apply(p), pA.actInv(p), atol=ATOL)
    v, f = rng.normal(size=6), rng.normal(size=6)
    np.testing.assert_allclose((A @ Motion(v)).vector, pA.act(pin.Motion(v)).vector, atol=ATOL)
    np.testing.assert_allclose((A.inverse() @ Motion(v)).vector, pA.actInv(pin.Motion(v)).vector, atol=ATOL)
    np.testing.assert_allclose((A @ Force(f)).vector, pA.act(pin.Force(f)).vector, atol=ATOL)
    m = rng.normal(size=6)
    np.testing.assert_allclose(
        Motion(v).cross(Motion(m)).vector, pin.Motion(v).cross(pin.Motion(m)).vector, atol=ATOL
    )
    np.testing.assert_allclose(
        Motion(v).cross(Force(f)).vector, pin.Motion(v).cross(pin.Force(f)).vector, atol=ATOL
    )
    inertia = rand_I(rng)
    pI = pin.Inertia(float(inertia.mass), inertia.com.copy(), inertia.inertia_com.copy())
    np.testing.assert_allclose(inertia.as_matrix(), pI.matrix(), atol=ATOL)
    np.testing.assert_allclose((inertia @ Motion(v)).vector, (pI * pin.Motion(v)).vector, atol=ATOL)
    np.testing.assert_allclose((A @ inertia).as_matrix(), pA.act(pI).matrix(), atol=1e-11)
    np.testing.assert_allclose(inertia.as_pinocchio_parameters(), pI.toDynamicParameters(), atol=ATOL)
    back = pin.Inertia.FromDynamicParameters(inertia.as_pinocchio_parameters())
    np.testing.assert_allclose(back.matrix(), inertia.as_matrix(), atol=ATOL)
    np.testing.assert_allclose(
        Transform.exp(np.concatenate([v[:3], v[3:]])).matrix, pin.exp6(pin.Motion(v)).homogeneous, atol=1e-11
    )
    np.testing.assert_allclose(A.log(), pin.log6(pA).vector, atol=1e-10)
    np.testing.assert_allclose(A.log_so3(), pin.log3(pA.rotation), atol=1e-10)
    np.testing.assert_allclose(Transform.exp_so3(v[3:]).rotation, pin.exp3(v[3:]), atol=1e-12)
    q = pin.Quaternion(A.rotation)
    xyzw = q.coeffs()  # Pinocchio's coefficient order is x, y, z, w
    ours = A.as_quaternion_xyzw()
    np.testing.assert_allclose(ours, xyzw if xyzw[3] >= 0 else -xyzw, atol=1e-12)
    rpy = rng.uniform(-3, 3, 3)
    np.testing.assert_allclose(Transform.from_rpy(rpy).rotation, pin.rpy.rpyToMatrix(rpy), atol=1e-14)
    np.testing.assert_allclose(
        Transform.from_rpy(A.as_rpy()).rotation,
        pin.rpy.rpyToMatrix(pin.rpy.matrixToRpy(A.rotation)),
        atol=1e-12,
    )


# ------------------------------------------------------------------------------------ iDynTree
def _idyn_T(T: Transform):
    return idyn.Transform(idyn.Rotation(T.rotation.copy()), idyn.Position(T.translation.copy()))


def _np(obj):
    return np.array(obj.toNumPy(), copy=True)


@pytest.mark.parametrize("seed", range(10))
def test_agrees_with_idyntree(seed):
    rng = np.random.default_rng(seed)
    A, B = rand_T(rng), rand_T(rng)
    iA, iB = _idyn_T(A), _idyn_T(B)
    np.testing.assert_allclose((A @ B).matrix, _np((iA * iB).asHomogeneousTransform()), atol=ATOL)
    np.testing.assert_allclose(A.inverse().matrix, _np(iA.inverse().asHomogeneousTransform()), atol=ATOL)
    np.testing.assert_allclose(A.motion_matrix(), _np(iA.asAdjointTransform()), atol=ATOL)
    np.testing.assert_allclose(A.force_matrix(), _np(iA.asAdjointTransformWrench()), atol=ATOL)
    v, f = rng.normal(size=6), rng.normal(size=6)
    tw = idyn.Twist.FromPython(v)
    np.testing.assert_allclose((A @ Motion(v)).vector, _np(iA * tw), atol=ATOL)
    wr = idyn.Wrench.FromPython(f)
    np.testing.assert_allclose((A @ Force(f)).vector, _np(iA * wr), atol=ATOL)
    inertia = rand_I(rng)
    iI = idyn.SpatialInertia(
        float(inertia.mass),
        idyn.Position(*inertia.com),
        idyn.RotationalInertia(inertia.inertia_origin.copy()),
    )
    np.testing.assert_allclose(inertia.as_matrix(), _np(iI.asMatrix()), atol=ATOL)
    np.testing.assert_allclose(inertia.as_idyntree_parameters(), _np(iI.asVector()), atol=ATOL)
    np.testing.assert_allclose((inertia @ Motion(v)).vector, _np(iI * tw), atol=ATOL)
    rpy = rng.uniform(-1.5, 1.5, 3)
    np.testing.assert_allclose(Transform.from_rpy(rpy).rotation, _np(idyn.Rotation.RPY(*rpy)), atol=1e-14)
    np.testing.assert_allclose(
        A.as_rpy(), _np(_idyn_T(Transform.from_rpy(A.as_rpy())).getRotation().asRPY()), atol=1e-10
    )
    # iDynTree's quaternion is w first
    q = _np(iA.getRotation().asQuaternion())
    ours = A.as_quaternion_wxyz()
    np.testing.assert_allclose(ours, q if q[0] >= 0 else -q, atol=1e-12)


# ------------------------------------------------------------------------------------ errors
def test_errors_are_clear():
    with pytest.raises(
        bridge.ShapeError, match=r"homogeneous matrix: expected shape \(\.\.\., 4, 4\), got \(3, 3\)"
    ):
        Transform(np.eye(3))
    bad = np.eye(4)
    bad[0, 0] = 1.1
    with pytest.raises(bridge.InvalidValueError, match="rotation is not orthonormal"):
        Transform(bad)
    with pytest.raises(bridge.InvalidValueError, match="reflection"):
        Transform(np.diag([1.0, 1.0, -1.0, 1.0]))
    bad = np.eye(4)
    bad[3, 2] = 0.5
    with pytest.raises(bridge.InvalidValueError, match=r"last row must be \[0, 0, 0, 1\]"):
        Transform(bad)
    with pytest.raises(bridge.InvalidValueError, match="NaN or infinite"):
        Transform(np.full((4, 4), np.nan))
    with pytest.raises(bridge.InvalidValueError, match=r"quaternion is not unit norm \(norm 2"):
        Transform.from_quaternion_xyzw([0, 0, 0, 2])
    with pytest.raises(bridge.ShapeError, match="quaternion_wxyz"):
        Transform.from_quaternion_wxyz([1, 0, 0])
    with pytest.raises(bridge.ShapeError, match="motion"):
        Motion(np.zeros(5))
    with pytest.raises(bridge.InvalidValueError, match="NaN"):
        Force([0, 0, np.nan, 0, 0, 0])
    with pytest.raises(bridge.InertiaError, match="negative mass"):
        SpatialInertia(-1.0, np.zeros(3), np.eye(3)).check_physical()
    with pytest.raises(bridge.InertiaError, match="zero mass"):
        SpatialInertia(0.0, np.zeros(3), np.eye(3)).check_physical()
    SpatialInertia.zero().check_physical(allow_massless=True)
    with pytest.raises(bridge.InertiaError, match="not positive semi-definite"):
        SpatialInertia(1.0, np.zeros(3), np.diag([1.0, 1.0, -0.5])).check_physical()
    with pytest.raises(bridge.InertiaError, match="triangle inequality"):
        SpatialInertia(1.0, np.zeros(3), np.diag([0.1, 0.1, 0.3])).check_physical()
    with pytest.raises(bridge.InertiaError, match="not symmetric"):
        SpatialInertia(1.0, np.zeros(3), np.array([[1, 0.5, 0], [0, 1, 0], [0, 0, 1.0]]))
    with pytest.raises(bridge.InvalidValueError, match="not a Plücker motion transform"):
        transform_from_plux(np.ones((6, 6)) * 0 + np.eye(6) + np.diag([0, 0, 0, 0, 0, 0]) + np.eye(6, k=3))
    for cls in (bridge.ShapeError, bridge.InvalidValueError, bridge.InertiaError):
        assert issubclass(cls, ValueError) and issubclass(cls, bridge.BridgeError)


def test_values_are_immutable():
    rng = np.random.default_rng(0)
    A = rand_T(rng)
    with pytest.raises(ValueError):
        A.matrix[0, 0] = 2.0
    with pytest.raises(ValueError):
        Motion(np.zeros(6)).vector[0] = 1.0
    with pytest.raises(ValueError):
        rand_I(rng).parameters[0] = 1.0


def test_batched_rotation_check_agrees_with_the_small_one(monkeypatch: pytest.MonkeyPatch):
    """From 64 rotations the check works entry by entry over the batch: the same rotations kept or
    replaced by the nearest ones, the same errors, as the batched products below that size."""
    import bridge.spatial.transform as tr
    from bridge.spatial.so3 import so3_exp

    rng = np.random.default_rng(7)
    n = tr._MANY // 9 + 5
    R = so3_exp(rng.normal(size=(n, 3)))
    off = R.copy()
    off[1] += 1e-12 * rng.normal(size=(3, 3))  # off by rounding: the batch is replaced
    bad = R.copy()
    bad[5, 0, 0] += 1e-6
    mirrored = R.copy()
    mirrored[7] = np.diag([1.0, 1.0, -1.0])

    def run(x: np.ndarray) -> np.ndarray | str:
        try:
            return tr._check_rotation(x, "R")
        except bridge.InvalidValueError as exc:
            return str(exc).split("(")[0]

    cases = [R, off, bad, mirrored]
    fast = [run(x) for x in cases]
    monkeypatch.setattr(tr, "_MANY", 1 << 62)
    for x, got in zip(cases, fast, strict=True):
        ref = run(x)
        if isinstance(ref, str):
            assert got == ref
        else:
            np.testing.assert_array_equal(got, ref)
    assert fast[0] is R and fast[1] is not off
    assert "not orthonormal" in fast[2] and "determinant -1" in fast[3]
