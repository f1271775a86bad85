"""The small array functions of bridge.spatial: cross, skew/vee, quaternion orders, rotation_between
and DEFAULT_GRAVITY (properties on batches, and known values)."""

from __future__ import annotations

import numpy as np
import pytest

import bridge.spatial as spatial
from bridge.errors import InvalidValueError, ShapeError
from bridge.spatial import (
    DEFAULT_GRAVITY,
    cross,
    matrix_to_quaternion_wxyz,
    matrix_to_quaternion_xyzw,
    quaternion_wxyz_to_matrix,
    quaternion_wxyz_to_xyzw,
    quaternion_xyzw_to_matrix,
    quaternion_xyzw_to_wxyz,
    rotation_between,
    skew,
    vee,
)
from bridge.spatial.so3 import so3_log
from tests.helpers import assert_close

RNG = np.random.default_rng(11)
E = np.eye(3)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _rotations(n: int) -> np.ndarray:
    return quaternion_xyzw_to_matrix(_unit(RNG.normal(size=(n, 4))))


def _mv(M: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", M, x)


# --------------------------------------------------------------------------- cross, skew, vee
@pytest.mark.parametrize(
    "sa, sb",
    [
        ((3,), (3,)),
        ((5, 3), (5, 3)),
        ((4, 1, 3), (2, 3)),
        ((3,), (2, 4, 3)),
        ((50, 3), (3,)),
        ((7, 1, 3), (9, 3)),
    ],
)
def test_cross_is_numpy_cross_bit_for_bit(sa, sb) -> None:
    a, b = RNG.normal(size=sa), RNG.normal(size=sb)
    out = cross(a, b)
    assert out.shape == np.broadcast_shapes(sa, sb)
    assert np.array_equal(out, np.cross(a, b))


def test_cross_properties_and_values() -> None:
    a, b = RNG.normal(size=(2, 7, 3))
    c = cross(a, b)
    assert_close(cross(b, a), -c, 1e-15, "anticommutative")
    assert_close(np.sum(a * c, axis=-1), np.zeros(7), 1e-14, "a . (a x b) = 0")
    assert_close(_mv(skew(a), b), c, 1e-15, "skew(a) b = a x b")
    assert np.array_equal(cross(E[0], E[1]), E[2])
    assert np.array_equal(cross(E[1], E[2]), E[0])
    assert np.array_equal(cross([0, 0, 1], [1, 0, 0]), [0.0, 1.0, 0.0])


def test_cross_on_other_axes_and_into_out() -> None:
    a, b = RNG.normal(size=(2, 4, 6, 3))
    ref = np.cross(a, b)  # (4, 6, 3)
    first = cross(np.moveaxis(a, -1, 0), np.moveaxis(b, -1, 0), axis=0)  # vectors on axis 0: (3, 4, 6)
    assert np.array_equal(first, np.moveaxis(ref, -1, 0))
    middle = cross(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), axis=-2)  # (4, 3, 6): batch last
    assert np.array_equal(middle, np.swapaxes(ref, -1, -2))
    out = np.empty((3, 4, 6))
    assert cross(np.moveaxis(a, -1, 0), np.moveaxis(b, -1, 0), axis=0, out=out) is out
    assert np.array_equal(out, np.moveaxis(ref, -1, 0))
    out = np.empty((4, 3, 6))
    cross(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), axis=-2, out=out)
    assert np.array_equal(out, np.swapaxes(ref, -1, -2))
    # with a scratch component the product allocates nothing
    out, scratch = np.empty((3, 4, 6)), np.empty((4, 6))
    cross(np.moveaxis(a, -1, 0), np.moveaxis(b, -1, 0), axis=0, out=out, scratch=scratch)
    assert np.array_equal(out, np.moveaxis(ref, -1, 0))


@pytest.mark.parametrize(
    "a, b, kwargs",
    [
        (np.zeros(4), np.zeros(4), {}),
        (np.zeros((3, 2)), np.zeros((3, 2)), {}),
        (np.zeros((3, 2)), np.zeros(3), {"axis": 0}),
        (np.zeros(3), np.zeros(3), {"axis": 1}),
        (1.0, np.zeros(3), {}),
    ],
)
def test_cross_rejects_wrong_shapes(a, b, kwargs) -> None:
    with pytest.raises(ShapeError, match="cross"):
        cross(a, b, **kwargs)


def test_skew_and_vee() -> None:
    w = RNG.normal(size=(2, 5, 3))
    W = skew(w)
    assert W.shape == (2, 5, 3, 3)
    assert np.array_equal(np.swapaxes(W, -1, -2), -W)
    assert np.array_equal(vee(W), w)
    assert np.array_equal(skew([1.0, 2.0, 3.0]), [[0, -3, 2], [3, 0, -1], [-2, 1, 0]])
    # vee reads the antisymmetric part only
    S = RNG.normal(size=(5, 3, 3))
    assert_close(vee(S + np.swapaxes(S, -1, -2)), np.zeros((5, 3)), 1e-15, "vee(symmetric) = 0")
    assert_close(vee(S), vee(0.5 * (S - np.swapaxes(S, -1, -2))), 1e-15, "vee of the antisymmetric part")


# --------------------------------------------------------------------------- quaternions
def test_quaternion_orders() -> None:
    q = _unit(RNG.normal(size=(3, 2, 4)))
    wxyz = quaternion_xyzw_to_wxyz(q)
    assert np.array_equal(wxyz[..., 0], q[..., 3])
    assert np.array_equal(wxyz[..., 1:], q[..., :3])
    assert np.array_equal(quaternion_wxyz_to_xyzw(wxyz), q)
    assert np.array_equal(quaternion_wxyz_to_matrix(wxyz), quaternion_xyzw_to_matrix(q))
    R = quaternion_xyzw_to_matrix(q)
    assert_close(R @ np.swapaxes(R, -1, -2), np.broadcast_to(E, R.shape), 1e-14, "orthonormal")
    # back to the quaternion with w >= 0, in both orders
    sign = np.where(q[..., 3:] < 0, -1.0, 1.0)
    assert_close(matrix_to_quaternion_xyzw(R), sign * q, 1e-14, "matrix -> xyzw")
    assert_close(matrix_to_quaternion_wxyz(R), quaternion_xyzw_to_wxyz(sign * q), 1e-14, "matrix -> wxyz")
    assert np.all(matrix_to_quaternion_wxyz(R)[..., 0] >= 0)


def test_single_matrix_path_equals_batched() -> None:
    """One (3, 3) matrix takes a scalar path: the same branch (every one of the four, and ties)
    and the same quaternion as the batched path, to the last bits."""
    q = _unit(RNG.normal(size=(200, 4)))
    Rs = list(quaternion_xyzw_to_matrix(q))
    # each diagonal term the largest (the four branches), half turns (w = 0), ties, the identity
    Rs += [np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0]), E]
    Rs += [quaternion_xyzw_to_matrix(_unit(np.array([1.0, 1.0, 0.0, 0.0])))]
    for R in Rs:
        single = matrix_to_quaternion_xyzw(R)
        batched = matrix_to_quaternion_xyzw(R[None])[0]
        assert single.shape == (4,) and single[3] >= 0
        assert_close(single, batched, 1e-15, "single vs batched")
        assert_close(quaternion_xyzw_to_matrix(single), R, 1e-14, "round trip")


def test_quaternion_known_values() -> None:
    th = 0.7
    c, s = np.cos(th / 2), np.sin(th / 2)
    Rz = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]])
    assert_close(quaternion_wxyz_to_matrix([c, 0, 0, s]), Rz, 1e-15, "wxyz about z")
    assert_close(quaternion_xyzw_to_matrix([0, 0, s, c]), Rz, 1e-15, "xyzw about z")
    assert_close(matrix_to_quaternion_wxyz(Rz), [c, 0, 0, s], 1e-15, "Rz -> wxyz")
    # a half turn about x: w = 0
    assert_close(quaternion_wxyz_to_matrix([0.0, 1.0, 0.0, 0.0]), np.diag([1.0, -1.0, -1.0]), 1e-15)


# --------------------------------------------------------------------------- rotation_between
def _check_rotation_between(a: np.ndarray, b: np.ndarray, R: np.ndarray) -> None:
    assert_close(R @ np.swapaxes(R, -1, -2), np.broadcast_to(E, R.shape), 1e-14, "orthonormal")
    assert np.all(np.linalg.det(R) > 0)
    assert_close(_mv(R, _unit(a)), np.broadcast_to(_unit(b), R.shape[:-1]), 1e-14, "R a = b", norm="max")


def test_rotation_between_is_the_minimal_rotation() -> None:
    a, b = RNG.normal(size=(2, 50, 3))
    R = rotation_between(a, b)
    assert R.shape == (50, 3, 3)
    _check_rotation_between(a, b, R)
    # minimal: about a x b by the angle between a and b
    angle = np.arccos(np.clip(np.sum(_unit(a) * _unit(b), axis=-1), -1, 1))
    assert_close(so3_log(R), _unit(np.cross(a, b)) * angle[:, None], 1e-12, "log R = angle * axis")


def test_rotation_between_matches_the_closed_form_for_acute_angles() -> None:
    a = _unit(RNG.normal(size=(40, 3)))
    b = _unit(a + 0.8 * _unit(RNG.normal(size=(40, 3))))
    keep = np.sum(a * b, axis=-1) > 0
    a, b = a[keep], b[keep]
    V = skew(np.cross(a, b))
    expected = E + V + V @ V / (1.0 + np.sum(a * b, axis=-1))[:, None, None]
    assert_close(rotation_between(a, b), expected, 1e-14, "I + V + V^2 / (1 + c)")


def test_rotation_between_parallel_antiparallel_and_nearly_antiparallel() -> None:
    assert np.array_equal(rotation_between([0, 0, 1], [0, 0, 2]), E)
    # exactly antiparallel: the half turn about the axis of a's smallest component (first one)
    assert_close(rotation_between([0, 0, 1], [0, 0, -1]), np.diag([1.0, -1.0, -1.0]), 0.0, "z -> -z: about x")
    assert_close(rotation_between([0, 0, -1], [0, 0, 1]), np.diag([1.0, -1.0, -1.0]), 0.0, "-z -> z: about x")
    assert_close(rotation_between([1, 0, 0], [-1, 0, 0]), np.diag([-1.0, 1.0, -1.0]), 0.0, "x -> -x: about y")
    a = _unit(RNG.normal(size=(30, 3)))
    _check_rotation_between(a, -a, rotation_between(a, -a))
    # nearly antiparallel: still orthonormal and exact to rounding
    for eps in (1e-3, 1e-8, 1e-13, 1e-16):
        b = _unit(-a + eps * np.cross(a, RNG.normal(size=(30, 3))))
        _check_rotation_between(a, b, rotation_between(a, b))


def test_rotation_between_broadcasts_normalises_and_rejects_zero() -> None:
    b = RNG.normal(size=(4, 1, 3)) * 5.0
    a = np.array([0.0, 0.0, 3.0])
    R = rotation_between(a, b)
    assert R.shape == (4, 1, 3, 3)
    _check_rotation_between(a, b, R)
    with pytest.raises(InvalidValueError, match="zero vector"):
        rotation_between([0.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    with pytest.raises(ShapeError):
        rotation_between([1.0, 0.0], [0.0, 1.0])


# --------------------------------------------------------------------------- constants, exports
def test_default_gravity() -> None:
    assert DEFAULT_GRAVITY == (0.0, 0.0, -9.81)
    assert isinstance(DEFAULT_GRAVITY, tuple)
    assert spatial.constants.DEFAULT_GRAVITY is DEFAULT_GRAVITY


def test_exports() -> None:
    for name in spatial.__all__:
        assert hasattr(spatial, name), name
