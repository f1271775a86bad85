"""Spatial values are immutable: exposed arrays are read-only, inputs are copied, outputs are fresh."""

from __future__ import annotations

import numpy as np
import pytest

from bridge.spatial import Force, Motion, SpatialInertia, Transform


def _transform() -> Transform:
    return Transform.from_rpy(
        np.array([[0.1, 0.2, 0.3], [0.3, -0.2, 0.1]]), np.array([[1.0, 2, 3], [0, 1, 0]])
    )


def _inertia() -> SpatialInertia:
    return SpatialInertia(
        np.array([1.0, 2.0]), np.array([[0.1, 0.2, 0.3], [0, 0, 0]]), np.diag([0.2, 0.3, 0.4])
    )


@pytest.mark.parametrize(
    "get",
    [
        lambda: _transform().matrix,
        lambda: _transform().rotation,
        lambda: _transform().translation,
        lambda: _transform()[0].matrix,
        lambda: _transform().reshape(2).matrix,
        lambda: Transform.identity((2,)).matrix,
        lambda: Transform(np.eye(4)).matrix,
        lambda: (_transform() @ _transform()).matrix,
        lambda: _transform().inverse().matrix,
        lambda: Motion(np.ones(6)).vector,
        lambda: Motion(np.ones(6)).linear,
        lambda: Motion(np.ones(6)).angular,
        lambda: Force(np.ones((2, 6))).vector,
        lambda: Force(np.ones((2, 6)))[1].vector,
        lambda: (_transform() @ Motion(np.ones(6))).vector,
        lambda: (_transform() @ Force(np.ones(6))).vector,
        lambda: Motion(np.ones(6)).cross(Motion(np.ones(6))).vector,
        lambda: (Motion(np.ones(6)) + Motion(np.ones(6))).vector,
        lambda: Motion.from_linear_angular(np.ones(3), np.ones(3)).vector,
        lambda: _inertia().parameters,
        lambda: _inertia().mass,
        lambda: _inertia().com,
        lambda: (_transform() @ _inertia()).parameters,
        lambda: (_inertia() + _inertia()).parameters,
        lambda: (_inertia() @ Motion(np.ones(6))).vector,
        lambda: SpatialInertia.zero((2,)).parameters,
    ],
)
def test_exposed_arrays_are_read_only(get) -> None:
    arr = get()
    assert not arr.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        arr[...] = 0.0


def test_inputs_are_copied() -> None:
    H = np.eye(4)
    T = Transform(H)
    H[0, 3] = 5.0
    assert T.translation[0] == 0.0
    v = np.ones(6)
    m = Motion(v)
    v[0] = 7.0
    assert m.vector[0] == 1.0
    c = np.array([0.1, 0.2, 0.3])
    inertia = SpatialInertia(1.0, c, np.eye(3))
    c[0] = 9.0
    assert inertia.com[0] == 0.1
    # the user's array is left writable
    assert H.flags.writeable
    assert v.flags.writeable


def test_computed_outputs_are_fresh_copies() -> None:
    T = _transform()
    before = T.matrix.copy()
    for out in (T.as_matrix(), T.motion_matrix(), T.force_matrix(), np.asarray(T)):
        assert out.flags.writeable
        out[...] = 0.0
    assert np.array_equal(T.matrix, before)
    inertia = _inertia()
    params = inertia.parameters.copy()
    for out in (
        inertia.inertia_com,
        inertia.inertia_origin,
        inertia.as_matrix(),
        inertia.as_pinocchio_parameters(),
    ):
        out[...] = 0.0
    assert np.array_equal(inertia.parameters, params)
    m = Motion(np.ones(6))
    arr = np.asarray(m)
    arr[0] = 3.0
    assert m.vector[0] == 1.0


def test_no_attribute_assignment() -> None:
    T = Transform.identity()
    with pytest.raises(AttributeError):
        T.foo = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        Motion(np.ones(6)).bar = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        SpatialInertia.zero().baz = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("cls", [Transform, Motion, Force])
def test_unchecked_constructor_adopts_the_array(cls) -> None:
    """``check=False`` is the trusted fast path: no copy, no validation, the array becomes read-only."""
    arr = np.eye(4) if cls is Transform else np.arange(6.0)
    obj = cls(arr, check=False)
    data = obj.matrix if cls is Transform else obj.vector
    assert data is arr
    assert not arr.flags.writeable
    # nothing is validated (a shear is not a rotation): the caller vouches for the values
    shear = np.eye(4)
    shear[0, 1] = 1.0
    assert Transform(shear, check=False).matrix[0, 1] == 1.0
    # non-float64 input is converted (then owned by the object)
    ints = np.eye(4, dtype=int) if cls is Transform else np.arange(6)
    conv = cls(ints, check=False)
    assert (conv.matrix if cls is Transform else conv.vector).dtype == np.float64
    assert ints.flags.writeable


def test_from_matrix_passes_check() -> None:
    H = np.eye(4)
    assert Transform.from_matrix(H, check=False).matrix is H
    assert Transform.from_matrix(np.eye(4)).matrix is not H
