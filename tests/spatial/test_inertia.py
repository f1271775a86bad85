"""SpatialInertia: momentum, change of frame, sums, matrix form and the 10 inertial parameters."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from bridge.spatial import Force, SpatialInertia, Transform, skew
from tests.helpers import assert_close
from tests.spatial.strategies import (
    BATCH_SHAPES,
    BROADCAST_PAIRS,
    PROPERTY,
    TOL,
    inertia_arrays,
    inertias,
    motions,
    mv,
    transforms,
)

batch_shapes = st.sampled_from(BATCH_SHAPES)


@PROPERTY
@given(st.data(), batch_shapes)
def test_storage_and_matrix_form(data: st.DataObject, batch: tuple[int, ...]) -> None:
    m, c, Ic = data.draw(inertia_arrays(batch))
    inertia = SpatialInertia(m, c, Ic)
    assert inertia.batch_shape == batch
    assert_close(inertia.mass, m, rtol=TOL, norm="max")
    assert_close(inertia.com, c, rtol=TOL, norm="max")
    assert_close(inertia.inertia_com, Ic, rtol=TOL, norm="max")
    C = skew(c)
    Io = Ic - m[..., None, None] * (C @ C)
    assert_close(inertia.inertia_origin, Io, what="parallel axis", rtol=TOL, norm="max")
    M = inertia.as_matrix()
    assert M.shape == (*batch, 6, 6)
    eye = np.broadcast_to(np.eye(3), (*batch, 3, 3))
    assert_close(M[..., :3, :3], m[..., None, None] * eye, rtol=TOL, norm="max")
    assert_close(M[..., :3, 3:], -m[..., None, None] * C, rtol=TOL, norm="max")
    assert_close(M[..., 3:, :3], m[..., None, None] * C, rtol=TOL, norm="max")
    assert_close(M[..., 3:, 3:], Io, rtol=TOL, norm="max")
    assert_close(M, np.swapaxes(M, -1, -2), what="symmetric", rtol=TOL, norm="max")
    assert np.all(np.linalg.eigvalsh(M) > 0), "a physical inertia is positive definite"
    inertia.check_physical()
    same = SpatialInertia.from_mass_com_inertia_origin(m, c, Io)
    assert_close(
        same.parameters, inertia.parameters, what="from inertia about the origin", rtol=TOL, norm="max"
    )
    assert_close(
        SpatialInertia.from_mass_com_inertia(m, c, Ic).parameters, inertia.parameters, rtol=TOL, norm="max"
    )


@PROPERTY
@given(st.data(), batch_shapes)
def test_momentum_matches_matrix(data: st.DataObject, batch: tuple[int, ...]) -> None:
    inertia = data.draw(inertias(batch))
    v = data.draw(motions(batch))
    h = inertia @ v
    assert isinstance(h, Force)
    assert_close(h.vector, mv(inertia.as_matrix(), v.vector), what="I @ v = M v", rtol=TOL, norm="max")
    # kinetic energy is positive and equals 1/2 v.M v
    assert np.all(h.dot(v) >= 0)


@PROPERTY
@given(st.data(), batch_shapes, batch_shapes)
def test_change_of_frame_is_consistent_with_momentum(data: st.DataObject, batch, ibatch) -> None:
    A_H_B = data.draw(transforms(batch))
    I_B = data.draw(inertias(ibatch))
    v_B = data.draw(motions(ibatch))
    I_A = A_H_B @ I_B
    assert isinstance(I_A, SpatialInertia)
    assert I_A.batch_shape == np.broadcast_shapes(batch, ibatch)
    # momentum is a force: (T I) (T v) = T (I v)
    assert_close(
        (I_A @ (A_H_B @ v_B)).vector,
        (A_H_B @ (I_B @ v_B)).vector,
        what="(TI)(Tv) = T(Iv)",
        rtol=TOL,
        norm="max",
    )
    # matrix form: A_I = A_Xs_B B_I B_X_A
    expected = A_H_B.force_matrix() @ I_B.as_matrix() @ A_H_B.inverse().motion_matrix()
    assert_close(I_A.as_matrix(), expected, what="X* M X^-1", rtol=TOL, norm="max")
    assert_close(
        I_A.transformed(A_H_B.inverse()).parameters,
        np.broadcast_to(I_B.parameters, I_A.parameters.shape),
        rtol=TOL,
        norm="max",
    )
    # kinetic energy does not depend on the frame
    assert_close(
        (I_A @ (A_H_B @ v_B)).dot(A_H_B @ v_B),
        np.broadcast_to((I_B @ v_B).dot(v_B), I_A.batch_shape),
        rtol=TOL,
        norm="max",
    )
    I_A.check_physical()


@PROPERTY
@given(st.data(), batch_shapes)
def test_transform_composition_on_inertia(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A, B = data.draw(transforms(batch)), data.draw(transforms(batch))
    inertia = data.draw(inertias(batch))
    assert_close(
        ((A @ B) @ inertia).as_matrix(),
        (A @ (B @ inertia)).as_matrix(),
        what="(AB)I = A(BI)",
        rtol=TOL,
        norm="max",
    )
    assert_close((Transform.identity() @ inertia).parameters, inertia.parameters, rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), st.sampled_from(BROADCAST_PAIRS))
def test_sum_is_consistent_with_momentum(data: st.DataObject, pair) -> None:
    left, right, out = pair
    I1 = data.draw(inertias(left))
    I2 = data.draw(inertias(right))
    v = data.draw(motions(out))
    total = I1 + I2
    assert total.batch_shape == out
    assert_close(
        (total @ v).vector, (I1 @ v).vector + (I2 @ v).vector, what="(I1 + I2) v", rtol=TOL, norm="max"
    )
    assert_close(
        total.as_matrix(), I1.as_matrix() + I2.as_matrix(), what="matrix of the sum", rtol=TOL, norm="max"
    )
    assert_close(total.mass, I1.mass + I2.mass, rtol=TOL, norm="max")
    total.check_physical()
    # the sum commutes with a change of frame
    T = data.draw(transforms(out))
    assert_close(
        (T @ total).as_matrix(), ((T @ I1) + (T @ I2)).as_matrix(), what="T(I1 + I2)", rtol=TOL, norm="max"
    )
    zero = SpatialInertia.zero(out)
    assert_close((total + zero).parameters, total.parameters, what="zero is neutral", rtol=TOL, norm="max")


def test_sum_of_point_masses() -> None:
    a = SpatialInertia(1.0, [1.0, 0, 0], np.zeros((3, 3)))
    b = SpatialInertia(3.0, [-1.0, 0, 0], np.zeros((3, 3)))
    s = a + b
    assert_close(s.mass, 4.0, rtol=TOL, norm="max")
    assert_close(s.com, [-0.5, 0, 0], rtol=TOL, norm="max")
    # about the centre of mass: 1 * 1.5^2 + 3 * 0.5^2 = 3 about y and z
    assert_close(s.inertia_com, np.diag([0.0, 3.0, 3.0]), rtol=TOL, norm="max")
    massless = SpatialInertia.zero() + SpatialInertia.zero()
    assert_close(massless.parameters, np.zeros(10), rtol=TOL, norm="max")
    massless.check_physical(allow_massless=True)


@PROPERTY
@given(st.data(), batch_shapes)
def test_matrix_and_parameter_round_trips(data: st.DataObject, batch: tuple[int, ...]) -> None:
    inertia = data.draw(inertias(batch))
    back = SpatialInertia.from_matrix(inertia.as_matrix())
    assert_close(back.parameters, inertia.parameters, what="from_matrix(as_matrix)", rtol=TOL, norm="max")
    m, c, Io = inertia.mass, inertia.com, inertia.inertia_origin
    pin = inertia.as_pinocchio_parameters()
    idy = inertia.as_idyntree_parameters()
    assert pin.shape == idy.shape == (*batch, 10)
    # explicit orderings, rotational inertia about the frame origin
    assert_close(pin[..., 0], m, rtol=TOL, norm="max")
    assert_close(pin[..., 1:4], m[..., None] * c, rtol=TOL, norm="max")
    assert_close(idy[..., :4], pin[..., :4], rtol=TOL, norm="max")
    pin_pairs = [(0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2)]
    idy_pairs = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
    for k, (i, j) in enumerate(pin_pairs):
        assert_close(pin[..., 4 + k], Io[..., i, j], what=f"pinocchio I{i}{j}", rtol=TOL, norm="max")
    for k, (i, j) in enumerate(idy_pairs):
        assert_close(idy[..., 4 + k], Io[..., i, j], what=f"idyntree I{i}{j}", rtol=TOL, norm="max")
    assert_close(
        SpatialInertia.from_pinocchio_parameters(pin).parameters,
        inertia.parameters,
        what="pin round trip",
        rtol=TOL,
        norm="max",
    )
    assert_close(
        SpatialInertia.from_idyntree_parameters(idy).parameters,
        inertia.parameters,
        what="idyn round trip",
        rtol=TOL,
        norm="max",
    )


def test_parameters_are_linear_in_the_body() -> None:
    """The 10 parameters of a sum are the sum of the parameters (what makes them identifiable)."""
    rng = np.random.default_rng(2)
    a = SpatialInertia(1.5, rng.uniform(-1, 1, 3), np.diag([0.1, 0.2, 0.25]))
    b = SpatialInertia(0.5, rng.uniform(-1, 1, 3), np.diag([0.3, 0.2, 0.4]))
    for name in ("as_pinocchio_parameters", "as_idyntree_parameters"):
        assert_close(getattr(a + b, name)(), getattr(a, name)() + getattr(b, name)(), rtol=TOL, norm="max")


def test_indexing_repr_allclose() -> None:
    rng = np.random.default_rng(5)
    inertia = SpatialInertia(rng.uniform(1, 2, (3, 2)), rng.uniform(-1, 1, (3, 2, 3)), np.eye(3))
    assert inertia[1].batch_shape == (2,)
    assert_close(inertia[2, 1].parameters, inertia.parameters[2, 1], rtol=TOL, norm="max")
    assert "batch_shape=(3, 2)" in repr(inertia)
    assert "mass=" in repr(inertia[0, 0])
    assert inertia.allclose(SpatialInertia.from_matrix(inertia.as_matrix()))
    assert not inertia[0, 0].allclose(inertia[0, 1])
