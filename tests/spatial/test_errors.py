"""Bad inputs raise bridge errors (ValueError subclasses) whose messages say what was wrong."""

from __future__ import annotations

import re

import numpy as np
import pytest

import bridge
from bridge.spatial import (
    Force,
    Motion,
    SpatialInertia,
    Transform,
    plux,
    reorder_matrix,
    to_angular_first,
    transform_from_featherstone,
    transform_from_plux,
    transform_from_tds,
)

REFLECTION = np.diag([1.0, 1.0, -1.0])
SHEAR = np.array([[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def _raises(exc: type[Exception], match: str):
    """pytest.raises that also checks the exception family of the project."""
    assert issubclass(exc, bridge.BridgeError)
    assert issubclass(exc, ValueError)
    return pytest.raises(exc, match=match)


def test_exception_hierarchy() -> None:
    for exc in (bridge.ShapeError, bridge.InvalidValueError, bridge.InertiaError):
        assert issubclass(exc, bridge.BridgeError)
        assert issubclass(exc, ValueError)
    assert issubclass(bridge.InertiaError, bridge.InvalidValueError)


# ----------------------------------------------------------------------------- shapes
@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: Transform(np.eye(3)), r"homogeneous matrix: expected shape \(\.\.\., 4, 4\), got \(3, 3\)"),
        (lambda: Transform(np.zeros(16)), r"expected shape \(\.\.\., 4, 4\), got \(16,\)"),
        (
            lambda: Transform.from_rotation_translation(np.eye(4)),
            r"rotation: expected shape \(\.\.\., 3, 3\)",
        ),
        (
            lambda: Transform.from_rotation_translation(None, [1.0, 2.0]),
            r"translation: expected shape \(\.\.\., 3\)",
        ),
        (
            lambda: Transform.from_quaternion_xyzw([0.0, 0.0, 1.0]),
            r"quaternion_xyzw: expected shape \(\.\.\., 4\)",
        ),
        (lambda: Transform.from_quaternion_wxyz(np.ones((2, 5))), r"quaternion_wxyz: expected shape"),
        (lambda: Transform.from_rpy([0.1, 0.2]), r"rpy: expected shape \(\.\.\., 3\), got \(2,\)"),
        (lambda: Transform.exp(np.zeros(3)), r"twist: expected shape \(\.\.\., 6\), got \(3,\)"),
        (lambda: Transform.identity().apply(np.zeros(4)), r"points: expected shape \(\.\.\., 3\)"),
        (lambda: Motion(np.zeros(3)), r"motion: expected shape \(\.\.\., 6\), got \(3,\)"),
        (lambda: Force(np.zeros((6, 2))), r"force: expected shape \(\.\.\., 6\), got \(6, 2\)"),
        (lambda: Motion.from_linear_angular(np.zeros(3), np.zeros(2)), r"angular part: expected shape"),
        (lambda: SpatialInertia(1.0, [0.0, 0.0], np.eye(3)), r"centre of mass: expected shape \(\.\.\., 3\)"),
        (lambda: SpatialInertia(1.0, np.zeros(3), np.eye(2)), r"rotational inertia: expected shape"),
        (
            lambda: SpatialInertia.from_matrix(np.eye(5)),
            r"spatial inertia matrix: expected shape \(\.\.\., 6, 6\)",
        ),
        (
            lambda: SpatialInertia.from_pinocchio_parameters(np.ones(9)),
            r"pinocchio inertial parameters: expected",
        ),
        (
            lambda: SpatialInertia.from_idyntree_parameters(np.ones(11)),
            r"idyntree inertial parameters: expected",
        ),
        (lambda: to_angular_first(np.zeros(5)), r"6D vector: expected shape \(\.\.\., 6\)"),
        (lambda: reorder_matrix(np.zeros((5, 6))), r"reorder_matrix: expected 6 rows, got shape \(5, 6\)"),
        (lambda: reorder_matrix(np.zeros((6, 5))), r"reorder_matrix: expected 6 columns, got shape \(6, 5\)"),
        (lambda: reorder_matrix(np.zeros(6)), r"reorder_matrix: expected 6 rows"),
        (lambda: plux(np.eye(3), np.zeros(2)), r"r: expected shape \(\.\.\., 3\)"),
        (lambda: transform_from_plux(np.eye(3)), r"Plücker transform: expected shape \(\.\.\., 6, 6\)"),
    ],
)
def test_wrong_shapes(build, match: str) -> None:
    with _raises(bridge.ShapeError, match):
        build()


def test_batch_shapes_that_do_not_broadcast() -> None:
    T2 = Transform.from_rotation_translation(np.broadcast_to(np.eye(3), (2, 3, 3)))
    T3 = Transform.from_translation(np.zeros((3, 3)))
    m2, m3 = Motion(np.zeros((2, 6))), Motion(np.zeros((3, 6)))
    f2, f3 = Force(np.zeros((2, 6))), Force(np.zeros((3, 6)))
    I2 = SpatialInertia(np.ones(2), np.zeros(3), np.eye(3))
    I3 = SpatialInertia(np.ones(3), np.zeros(3), np.eye(3))
    cases = [
        (
            "rotation and translation",
            lambda: Transform.from_rotation_translation(T2.rotation, np.zeros((3, 3))),
        ),
        ("Transform @ Transform", lambda: T2 @ T3),
        ("Transform @ Motion", lambda: T2 @ m3),
        ("Transform @ Force", lambda: T2 @ f3),
        ("Transform @ SpatialInertia", lambda: T2 @ I3),
        ("Transform.apply", lambda: T2.apply(np.zeros((3, 3)))),
        ("Motion + Motion", lambda: m2 + m3),
        ("Force - Force", lambda: f2 - f3),
        ("Motion * scalar", lambda: m2 * np.ones(3)),
        ("Motion.cross", lambda: m2.cross(m3)),
        ("Motion.cross", lambda: m2.cross(f3)),
        ("Motion.dot", lambda: m2.dot(f3)),
        ("Force.dot", lambda: f2.dot(m3)),
        ("SpatialInertia @ Motion", lambda: I2 @ m3),
        ("SpatialInertia + SpatialInertia", lambda: I2 + I3),
        (
            "mass, centre of mass and rotational inertia",
            lambda: SpatialInertia(np.ones(2), np.zeros((3, 3)), np.eye(3)),
        ),
        (
            "mass, centre of mass and rotational inertia",
            lambda: SpatialInertia.from_mass_com_inertia_origin(np.ones(2), np.zeros((3, 3)), np.eye(3)),
        ),
        ("plux(E, r)", lambda: plux(T2.rotation, np.zeros((3, 3)))),
    ]
    for what, build in cases:
        with _raises(bridge.ShapeError, re.escape(what) + ": batch shapes .* do not broadcast"):
            build()
    with _raises(bridge.ShapeError, r"batch shapes \(2,\) and \(3,\) do not broadcast"):
        T2 @ T3


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values(bad: float) -> None:
    H = np.eye(4)
    H[0, 3] = bad
    with _raises(bridge.InvalidValueError, "homogeneous matrix: contains NaN or infinite values"):
        Transform(H)
    v = np.zeros(6)
    v[4] = bad
    with _raises(bridge.InvalidValueError, "motion: contains NaN or infinite"):
        Motion(v)
    with _raises(bridge.InvalidValueError, "force: contains NaN or infinite"):
        Force(v)
    with _raises(bridge.InvalidValueError, "twist: contains NaN"):
        Transform.exp(v)
    with _raises(bridge.InvalidValueError, "mass: contains NaN"):
        SpatialInertia(bad, np.zeros(3), np.eye(3))
    with _raises(bridge.InvalidValueError, "quaternion_xyzw: contains NaN"):
        Transform.from_quaternion_xyzw([0.0, 0.0, bad, 1.0])
    with _raises(bridge.InvalidValueError, "rpy: contains NaN"):
        Transform.from_rpy([bad, 0.0, 0.0])
    with _raises(bridge.InvalidValueError, "translation: contains NaN"):
        Transform.from_rotation_translation(np.eye(3), [0.0, bad, 0.0])


def test_not_numbers() -> None:
    with _raises(bridge.InvalidValueError, "motion: cannot convert to a float array"):
        Motion(["a", "b", "c", "d", "e", "f"])
    with _raises(bridge.InvalidValueError, "homogeneous matrix: cannot convert"):
        Transform([[1, 2], [3]])


@pytest.mark.parametrize(
    ("rotation", "match"),
    [
        (SHEAR, r"rotation: rotation is not orthonormal \(max \|R\^T R - I\| = "),
        (2.0 * np.eye(3), "not orthonormal"),
        (REFLECTION, r"rotation: rotation has determinant -1 \(a reflection\)"),
        (-np.eye(3), "reflection"),
    ],
)
def test_bad_rotations(rotation: np.ndarray, match: str) -> None:
    with _raises(bridge.InvalidValueError, match):
        Transform.from_rotation_translation(rotation, np.zeros(3))
    H = np.eye(4)
    H[:3, :3] = rotation
    with _raises(bridge.InvalidValueError, "homogeneous matrix: rotation"):
        Transform(H)
    with _raises(bridge.InvalidValueError, "E: rotation"):
        transform_from_featherstone(rotation, np.zeros(3))
    with _raises(bridge.InvalidValueError, "rotation"):
        transform_from_tds(rotation, np.zeros(3))
    with _raises(bridge.InvalidValueError, "Plücker transform: rotation"):
        transform_from_plux(plux(rotation, np.zeros(3)))


def test_bad_rotation_in_a_batch_is_found() -> None:
    R = np.broadcast_to(np.eye(3), (4, 3, 3)).copy()
    R[2] = REFLECTION
    with _raises(bridge.InvalidValueError, "reflection"):
        Transform.from_rotation_translation(R)
    R[2] = SHEAR
    with _raises(bridge.InvalidValueError, "not orthonormal"):
        Transform.from_rotation_translation(R)


def test_unchecked_construction_is_allowed() -> None:
    T = Transform.from_rotation_translation(SHEAR, check=False)
    assert np.array_equal(T.rotation, SHEAR)


@pytest.mark.parametrize("row", [[0.0, 0.0, 0.0, 2.0], [0.0, 1e-6, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0]])
def test_bad_bottom_row(row: list[float]) -> None:
    H = np.eye(4)
    H[3] = row
    with _raises(bridge.InvalidValueError, r"homogeneous matrix: last row must be \[0, 0, 0, 1\]"):
        Transform(H)
    with _raises(bridge.InvalidValueError, r"last row must be"):
        Transform.from_matrix(np.stack([np.eye(4), H]))


@pytest.mark.parametrize("scale", [0.5, 1.0 + 1e-4, 2.0, 0.0])
def test_non_unit_quaternions(scale: float) -> None:
    q = scale * np.array([0.0, 0.6, 0.0, 0.8])
    with _raises(bridge.InvalidValueError, r"quaternion_xyzw: quaternion is not unit norm \(norm "):
        Transform.from_quaternion_xyzw(q)
    with _raises(bridge.InvalidValueError, r"quaternion_wxyz: quaternion is not unit norm"):
        Transform.from_quaternion_wxyz(q)


def test_nearly_unit_quaternions_are_normalised() -> None:
    q = np.array([0.0, 0.6, 0.0, 0.8]) * (1 + 1e-9)
    R = Transform.from_quaternion_xyzw(q).rotation
    assert np.allclose(R.T @ R, np.eye(3), rtol=0, atol=1e-15)


def test_bad_plucker_block_structure() -> None:
    X = plux(np.eye(3), [1.0, 2.0, 3.0])
    X[0, 4] = 0.5  # upper-right block must be zero (angular first)
    with _raises(bridge.InvalidValueError, r"not a Plücker motion transform \(block structure\)"):
        transform_from_plux(X)


# ----------------------------------------------------------------------------- inertias
def test_non_symmetric_rotational_inertia() -> None:
    with _raises(bridge.InertiaError, "rotational inertia: matrix is not symmetric"):
        SpatialInertia(1.0, np.zeros(3), [[1.0, 0.2, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


@pytest.mark.parametrize(
    ("mass", "inertia", "kwargs", "match"),
    [
        (-1.0, np.eye(3), {}, r"link 'arm': negative mass -1\.0"),
        (0.0, np.zeros((3, 3)), {}, r"link 'arm': zero mass \(only allowed for massless links\)"),
        (0.0, np.eye(3), {"allow_massless": True}, "link 'arm': zero mass but non-zero rotational inertia"),
        (
            1.0,
            np.diag([1.0, 1.0, -0.5]),
            {},
            r"not positive semi-definite \(principal moments \[-0\.5, 1\.0, 1\.0\]\)",
        ),
        (
            1.0,
            np.diag([0.1, 0.1, 0.5]),
            {},
            r"principal moments \[0\.1, 0\.1, 0\.5\] violate the triangle inequality",
        ),
    ],
)
def test_non_physical_inertias(mass: float, inertia: np.ndarray, kwargs: dict, match: str) -> None:
    body = SpatialInertia(mass, [0.1, 0.2, 0.3], inertia)
    with _raises(bridge.InertiaError, match):
        body.check_physical("link 'arm'", **kwargs)


def test_physical_edge_cases_are_accepted() -> None:
    SpatialInertia(0.0, np.zeros(3), np.zeros((3, 3))).check_physical(allow_massless=True)
    SpatialInertia(2.0, [1.0, 2.0, 3.0], np.zeros((3, 3))).check_physical()  # point mass
    SpatialInertia(1.0, np.zeros(3), np.diag([0.0, 0.5, 0.5])).check_physical()  # thin rod: J1 + J2 = J3
    batch = SpatialInertia(np.array([1.0, 2.0]), np.zeros((2, 3)), np.diag([0.2, 0.3, 0.4]))
    batch.check_physical()


def test_non_physical_element_of_a_batch_is_found() -> None:
    Ic = np.broadcast_to(np.diag([0.2, 0.3, 0.4]), (3, 3, 3)).copy()
    Ic[1] = np.diag([0.1, 0.1, 0.5])
    with _raises(bridge.InertiaError, r"\[0\.1, 0\.1, 0\.5\] violate the triangle inequality"):
        SpatialInertia(np.ones(3), np.zeros((3, 3)), Ic).check_physical()
    with _raises(bridge.InertiaError, "negative mass -2"):
        SpatialInertia(np.array([1.0, -2.0]), np.zeros(3), np.eye(3)).check_physical()


def test_bad_spatial_inertia_matrices() -> None:
    M = SpatialInertia(2.0, [0.1, 0.2, 0.3], np.diag([0.2, 0.3, 0.4])).as_matrix()
    bad = M.copy()
    bad[0, 5] += 0.1
    with _raises(bridge.InertiaError, "spatial inertia matrix: not symmetric"):
        SpatialInertia.from_matrix(bad)
    bad = M.copy()
    bad[1, 1] = 3.0
    with _raises(bridge.InertiaError, r"top-left 3x3 block is not mass \* identity"):
        SpatialInertia.from_matrix(bad)
    bad = M.copy()
    bad[0, 3] = bad[3, 0] = 0.5
    with _raises(bridge.InertiaError, "top-right 3x3 block is not skew-symmetric"):
        SpatialInertia.from_matrix(bad)
