"""Transform: group axioms, exp/log, quaternions, RPY, 6x6 matrices and broadcasting (property tests)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.spatial import Force, Motion, Transform
from bridge.spatial.so3 import matrix_to_rpy, rpy_to_matrix, so3_exp, so3_log
from tests.helpers import assert_close
from tests.spatial.strategies import (
    BATCH_SHAPES,
    BROADCAST_PAIRS,
    PROPERTY,
    SPECIAL_ANGLES,
    TOL,
    arrays,
    forces,
    motions,
    mv,
    rotation_vectors,
    transforms,
    translations,
    unit_quaternions,
)

batch_shapes = st.sampled_from(BATCH_SHAPES)
broadcast_pairs = st.sampled_from(BROADCAST_PAIRS)


def _expm_longdouble(xi: np.ndarray) -> np.ndarray:
    """Reference SE(3) exponential: Taylor series of the 4x4 twist matrix in extended precision."""
    X = np.zeros((4, 4), dtype=np.longdouble)
    v = np.asarray(xi[:3], dtype=np.longdouble)
    w = np.asarray(xi[3:], dtype=np.longdouble)
    X[0, 1], X[0, 2], X[1, 2] = -w[2], w[1], -w[0]
    X[1, 0], X[2, 0], X[2, 1] = w[2], -w[1], w[0]
    X[:3, 3] = v
    out = np.eye(4, dtype=np.longdouble)
    term = np.eye(4, dtype=np.longdouble)
    for k in range(1, 80):
        term = term @ X / k
        out = out + term
    return out.astype(np.float64)


# ----------------------------------------------------------------------------- group axioms
@PROPERTY
@given(st.data(), batch_shapes)
def test_associativity_identity_inverse(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A, B, C = (data.draw(transforms(batch)) for _ in range(3))
    assert_close(((A @ B) @ C).matrix, (A @ (B @ C)).matrix, what="associativity", rtol=TOL, norm="max")
    eye = Transform.identity(batch)
    assert_close((A @ eye).matrix, A.matrix, what="right identity", rtol=TOL, norm="max")
    assert_close((Transform.identity() @ A).matrix, A.matrix, what="left identity", rtol=TOL, norm="max")
    ident = np.broadcast_to(np.eye(4), (*batch, 4, 4))
    assert_close((A @ A.inverse()).matrix, ident, what="A A^-1", rtol=TOL, norm="max")
    assert_close((A.inverse() @ A).matrix, ident, what="A^-1 A", rtol=TOL, norm="max")
    assert_close(
        (A @ B).inverse().matrix, (B.inverse() @ A.inverse()).matrix, what="(AB)^-1", rtol=TOL, norm="max"
    )
    assert_close(A.inverse().matrix, np.linalg.inv(A.matrix), what="inverse vs numpy", rtol=TOL, norm="max")
    assert (A @ B).batch_shape == batch


@PROPERTY
@given(st.data(), broadcast_pairs)
def test_broadcasting_transforms_and_vectors(data: st.DataObject, pair) -> None:
    left, right, out = pair
    A = data.draw(transforms(left))
    B = data.draw(transforms(right))
    v = data.draw(motions(right))
    f = data.draw(forces(right))
    AB = A @ B
    assert AB.batch_shape == out
    assert_close(AB.matrix, A.matrix @ B.matrix, what="broadcast compose", rtol=TOL, norm="max")
    Av = A @ v
    assert isinstance(Av, Motion)
    assert Av.batch_shape == out
    assert_close(Av.vector, mv(A.motion_matrix(), v.vector), what="broadcast motion", rtol=TOL, norm="max")
    Af = A @ f
    assert isinstance(Af, Force)
    assert Af.batch_shape == out
    assert_close(Af.vector, mv(A.force_matrix(), f.vector), what="broadcast force", rtol=TOL, norm="max")
    p = data.draw(translations(right))
    assert_close(
        A.apply(p), mv(A.matrix, np.concatenate([p, np.ones((*right, 1))], -1))[..., :3], rtol=TOL, norm="max"
    )


# ----------------------------------------------------------------------------- exp / log
@PROPERTY
@given(st.data(), batch_shapes)
def test_exp_log_exp(data: st.DataObject, batch: tuple[int, ...]) -> None:
    """exp(log(T)) == T for every rotation angle in [0, pi], including 0 and pi themselves."""
    w = data.draw(rotation_vectors(batch, max_angle=np.pi))
    T = Transform.from_rotation_translation(so3_exp(w), data.draw(translations(batch)))
    xi = T.log()
    assert xi.shape == (*batch, 6)
    assert np.all(np.linalg.norm(xi[..., 3:], axis=-1) <= np.pi + 1e-12)
    assert_close(Transform.exp(xi).matrix, T.matrix, what="exp(log(T))", rtol=TOL, norm="max")
    assert_close(
        Transform.exp_so3(T.log_so3()).rotation, T.rotation, what="exp3(log3(R))", rtol=TOL, norm="max"
    )


@PROPERTY
@given(st.data(), batch_shapes)
def test_log_exp(data: st.DataObject, batch: tuple[int, ...]) -> None:
    """log(exp(xi)) == xi for |omega| < pi (angles up to pi - 1e-6, including tiny ones)."""
    w = data.draw(rotation_vectors(batch, max_angle=np.pi - 1e-6))
    v = data.draw(translations(batch))
    xi = np.concatenate([v, w], axis=-1)
    assert_close(Transform.exp(xi).log(), xi, what="log(exp(xi))", rtol=TOL, norm="max")
    assert_close(so3_log(so3_exp(w)), w, what="log3(exp3(w))", rtol=TOL, norm="max")


@pytest.mark.parametrize("angle", SPECIAL_ANGLES)
def test_exp_matches_extended_precision_series(angle: float) -> None:
    """The closed forms stay accurate across the small-angle switch (errors of 1e-11 were seen there)."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        axis = rng.normal(size=3)
        xi = np.concatenate([rng.uniform(-2, 2, 3), angle * axis / np.linalg.norm(axis)])
        T = Transform.exp(xi)
        assert_close(T.matrix, _expm_longdouble(xi), rtol=2e-15, what=f"exp at angle {angle}", norm="max")
        if angle < np.pi - 1e-9:
            assert_close(T.log(), xi, rtol=1e-14, what=f"log at angle {angle}", norm="max")


def test_log_at_pi_is_a_valid_logarithm() -> None:
    """At exactly pi the axis sign is a choice; both choices must exponentiate back."""
    for axis in np.eye(3):
        T = Transform.from_rotation_translation(so3_exp(np.pi * axis), [0.3, -0.2, 0.1])
        xi = T.log()
        assert np.isclose(np.linalg.norm(xi[3:]), np.pi, rtol=0, atol=1e-12)
        assert_close(Transform.exp(xi).matrix, T.matrix, what="exp(log) at pi", rtol=TOL, norm="max")


def test_exp_known_values() -> None:
    # quarter turn about z with a linear velocity along x: a circular arc
    T = Transform.exp([1.0, 0.0, 0.0, 0.0, 0.0, np.pi / 2])
    assert_close(T.rotation, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], rtol=TOL, norm="max")
    assert_close(T.translation, [2 / np.pi, 2 / np.pi, 0.0], rtol=TOL, norm="max")
    assert_close(Transform.exp(np.zeros(6)).matrix, np.eye(4), rtol=TOL, norm="max")
    assert_close(Transform.exp([1.0, 2.0, 3.0, 0, 0, 0]).translation, [1.0, 2.0, 3.0], rtol=TOL, norm="max")


# ----------------------------------------------------------------------------- 6x6 matrices
@PROPERTY
@given(st.data(), batch_shapes)
def test_motion_force_matrices(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A = data.draw(transforms(batch))
    B = data.draw(transforms(batch))
    XA, XB = A.motion_matrix(), B.motion_matrix()
    assert XA.shape == (*batch, 6, 6)
    assert_close((A @ B).motion_matrix(), XA @ XB, what="X(AB) = X(A) X(B)", rtol=TOL, norm="max")
    assert_close(
        (A @ B).force_matrix(), A.force_matrix() @ B.force_matrix(), what="X*(AB)", rtol=TOL, norm="max"
    )
    assert_close(
        A.force_matrix(), np.swapaxes(np.linalg.inv(XA), -1, -2), what="X* = X^-T", rtol=TOL, norm="max"
    )
    assert_close(
        A.inverse().motion_matrix(), np.linalg.inv(XA), what="X(A^-1) = X(A)^-1", rtol=TOL, norm="max"
    )
    v = data.draw(motions(batch))
    f = data.draw(forces(batch))
    assert_close((A @ v).vector, mv(XA, v.vector), what="T @ motion", rtol=TOL, norm="max")
    assert_close((A @ f).vector, mv(A.force_matrix(), f.vector), what="T @ force", rtol=TOL, norm="max")
    assert_close(A.apply_motion(v).vector, (A @ v).vector, rtol=TOL, norm="max")
    assert_close(A.apply_force(f).vector, (A @ f).vector, rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), batch_shapes, batch_shapes)
def test_power_is_frame_invariant(data: st.DataObject, batch: tuple[int, ...], vbatch) -> None:
    T = data.draw(transforms(batch))
    v = data.draw(motions(vbatch))
    f = data.draw(forces(vbatch))
    expected = np.broadcast_to(f.dot(v), np.broadcast_shapes(batch, vbatch))
    assert_close((T @ f).dot(T @ v), expected, what="(Tf).(Tv) = f.v", rtol=TOL, norm="max")
    assert_close((T @ v).dot(T @ f), expected, rtol=TOL, norm="max")


def test_motion_matrix_known_blocks() -> None:
    R = so3_exp([0.1, -0.4, 0.7])
    p = np.array([0.5, -1.0, 2.0])
    T = Transform.from_rotation_translation(R, p)
    P = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    X = np.block([[R, P @ R], [np.zeros((3, 3)), R]])
    assert_close(T.motion_matrix(), X, rtol=TOL, norm="max")
    assert_close(T.force_matrix(), np.block([[R, np.zeros((3, 3))], [P @ R, R]]), rtol=TOL, norm="max")
    # a pure rotation about the origin of B seen from A: v_A = p x w_A for a body at rest in B's origin
    w = np.array([0.0, 0.0, 1.0])
    assert_close(
        (T @ Motion.from_linear_angular(np.zeros(3), w)).linear, np.cross(p, R @ w), rtol=TOL, norm="max"
    )


# ----------------------------------------------------------------------------- quaternions
@PROPERTY
@given(st.data(), batch_shapes)
def test_quaternion_round_trips(data: st.DataObject, batch: tuple[int, ...]) -> None:
    q = data.draw(unit_quaternions(batch))
    p = data.draw(translations(batch))
    T = Transform.from_quaternion_xyzw(q, p)
    q_out = T.as_quaternion_xyzw()
    assert np.all(q_out[..., 3] >= 0.0), "w must be non-negative"
    canonical = np.where(q[..., 3:4] < 0, -q, q)
    # w == 0 (a half turn) leaves the sign free: compare up to sign only there
    free = np.abs(q[..., 3:4]) < 1e-9
    sign = np.where(free & (np.sum(q_out * canonical, axis=-1, keepdims=True) < 0), -1.0, 1.0)
    assert_close(sign * q_out, canonical, what="xyzw round trip", rtol=TOL, norm="max")
    assert_close(T.translation, p, rtol=TOL, norm="max")
    assert_close(
        Transform.from_quaternion_xyzw(-q, p).matrix, T.matrix, what="q and -q", rtol=TOL, norm="max"
    )
    wxyz = np.roll(q, 1, axis=-1)
    assert_close(Transform.from_quaternion_wxyz(wxyz, p).matrix, T.matrix, what="wxyz", rtol=TOL, norm="max")
    assert_close(T.as_quaternion_wxyz(), np.roll(q_out, 1, axis=-1), what="as wxyz", rtol=TOL, norm="max")
    assert_close(np.linalg.norm(q_out, axis=-1), np.ones(batch), rtol=TOL, norm="max")
    # the quaternion rotates vectors as R does: q (0, x) q* = R x
    x = data.draw(translations(batch))
    qv, qw = q[..., :3], q[..., 3:]
    rotated = x + 2 * qw * np.cross(qv, x) + 2 * np.cross(qv, np.cross(qv, x))
    assert_close(T.apply(x) - p, rotated, what="quaternion rotation", rtol=TOL, norm="max")


@PROPERTY
@given(rotation_vectors((5,), max_angle=np.pi))
def test_quaternion_from_matrix_all_angles(w: np.ndarray) -> None:
    """The matrix -> quaternion branch choice is accurate for every angle, including pi."""
    R = so3_exp(w)
    q = Transform.from_rotation_translation(R).as_quaternion_xyzw()
    assert_close(Transform.from_quaternion_xyzw(q).rotation, R, rtol=2e-15, what="R -> q -> R", norm="max")


def test_quaternion_known_values() -> None:
    s = np.sqrt(0.5)
    T = Transform.from_quaternion_xyzw([0.0, 0.0, s, s])  # +90 deg about z
    assert_close(T.rotation, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], rtol=TOL, norm="max")
    assert_close(Transform.from_quaternion_wxyz([s, 0.0, 0.0, s]).matrix, T.matrix, rtol=TOL, norm="max")
    assert_close(T.as_quaternion_wxyz(), [s, 0, 0, s], rtol=TOL, norm="max")
    # 180 deg about x: w = 0
    assert_close(
        Transform.from_quaternion_xyzw([1.0, 0, 0, 0]).rotation,
        np.diag([1.0, -1.0, -1.0]),
        rtol=TOL,
        norm="max",
    )


# ----------------------------------------------------------------------------- RPY
@PROPERTY
@given(
    arrays((3, 1, 2), -np.pi + 1e-9, np.pi - 1e-9),
    arrays((3, 1, 2), -np.pi / 2 + 1e-6, np.pi / 2 - 1e-6),
    arrays((3, 1, 2), -np.pi + 1e-9, np.pi - 1e-9),
)
def test_rpy_round_trip(roll: np.ndarray, pitch: np.ndarray, yaw: np.ndarray) -> None:
    rpy = np.stack([roll, pitch, yaw], axis=-1)
    T = Transform.from_rpy(rpy, [0.1, 0.2, 0.3])
    assert T.batch_shape == (3, 1, 2)
    assert_close(
        T.as_rpy(), rpy, rtol=1e-9, what="rpy -> R -> rpy", norm="max"
    )  # angles: conditioning 1/cos(pitch)
    assert_close(
        Transform.from_rpy(T.as_rpy()).rotation, T.rotation, rtol=2e-15, what="R -> rpy -> R", norm="max"
    )
    # URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll)
    ez, ey, ex = (np.zeros((*roll.shape, 3)) for _ in range(3))
    ez[..., 2], ey[..., 1], ex[..., 0] = yaw, pitch, roll
    assert_close(
        T.rotation, so3_exp(ez) @ so3_exp(ey) @ so3_exp(ex), what="fixed-axis xyz", rtol=TOL, norm="max"
    )


@PROPERTY
@given(rotation_vectors((4,), max_angle=np.pi))
def test_matrix_rpy_matrix_any_rotation(w: np.ndarray) -> None:
    R = so3_exp(w)
    rpy = matrix_to_rpy(R)
    assert np.all(np.abs(rpy[..., 1]) <= np.pi / 2)
    assert_close(rpy_to_matrix(rpy), R, rtol=2e-15, what="R -> rpy -> R", norm="max")


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("distance", [0.0, 1e-15, 1e-12, 1e-10, 1e-8, 1e-6, 1e-3])
def test_rpy_near_gimbal_lock(sign: float, distance: float) -> None:
    """Next to pitch = +-pi/2 the round trip of the matrix stays at rounding level."""
    rng = np.random.default_rng(3)
    roll, yaw = rng.uniform(-3, 3, (2, 50))
    rpy = np.stack([roll, np.full(50, sign * (np.pi / 2 - distance)), yaw], axis=-1)
    # build the matrix through a quaternion so its rounding is not that of rpy_to_matrix
    R = Transform.from_quaternion_xyzw(Transform.from_rpy(rpy).as_quaternion_xyzw()).rotation
    out = matrix_to_rpy(R)
    assert_close(rpy_to_matrix(out), R, rtol=4e-15, what="R -> rpy -> R near gimbal lock", norm="max")
    assert np.all(np.abs(out[..., 1]) <= np.pi / 2)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_rpy_at_gimbal_lock_puts_everything_in_yaw(sign: float) -> None:
    rpy = np.array([0.7, sign * np.pi / 2, -0.4])
    R = rpy_to_matrix(rpy)
    out = matrix_to_rpy(R)
    assert abs(out[0]) < 1e-12, "roll is 0 at gimbal lock"
    assert np.isclose(out[1], sign * np.pi / 2, rtol=0, atol=1e-15)
    assert_close(rpy_to_matrix(out), R, rtol=1e-15, norm="max")
    # only yaw - roll (pitch +pi/2) or yaw + roll (pitch -pi/2) is defined
    combined = rpy[2] - rpy[0] if sign > 0 else rpy[2] + rpy[0]
    assert np.isclose(np.angle(np.exp(1j * (out[2] - combined))), 0.0, atol=1e-12)


# ----------------------------------------------------------------------------- misc API
def test_constructors_agree() -> None:
    R = so3_exp([0.3, 0.2, -0.1])
    p = np.array([1.0, -2.0, 0.5])
    H = np.eye(4)
    H[:3, :3], H[:3, 3] = R, p
    T = Transform.from_matrix(H)
    assert_close(Transform(H).matrix, H, rtol=TOL, norm="max")
    assert_close(Transform.from_rotation_translation(R, p).matrix, H, rtol=TOL, norm="max")
    assert_close(Transform.from_translation(p).translation, p, rtol=TOL, norm="max")
    assert_close(Transform.from_translation(p).rotation, np.eye(3), rtol=TOL, norm="max")
    assert_close(T.rotation, R, rtol=TOL, norm="max")
    assert_close(T.translation, p, rtol=TOL, norm="max")
    assert_close(np.asarray(T), H, rtol=TOL, norm="max")
    assert_close(T.as_matrix(), H, rtol=TOL, norm="max")
    assert T.allclose(Transform(H))
    assert not T.allclose(Transform.identity())


def test_indexing_and_reshape() -> None:
    rng = np.random.default_rng(0)
    q = rng.normal(size=(3, 1, 2, 4))
    T = Transform.from_quaternion_xyzw(
        q / np.linalg.norm(q, axis=-1, keepdims=True), rng.normal(size=(3, 1, 2, 3))
    )
    assert T[0].batch_shape == (1, 2)
    assert_close(T[2, 0, 1].matrix, T.matrix[2, 0, 1], rtol=TOL, norm="max")
    assert T.reshape(6).batch_shape == (6,)
    assert T.reshape((2, 3)).batch_shape == (2, 3)
    assert_close(T.reshape(6).matrix[5], T.matrix[2, 0, 1], rtol=TOL, norm="max")
    assert "batch_shape=(3, 1, 2)" in repr(T)
    assert "translation" in repr(T[0, 0, 0])
