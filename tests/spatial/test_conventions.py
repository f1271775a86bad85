"""Orderings and foreign transform encodings: Featherstone plux, RBDL, TDS/brax plxb."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.spatial import (
    Ordering,
    Transform,
    crm,
    force_transform_matrix,
    motion_transform_matrix,
    plux,
    plxb,
    reorder_matrix,
    skew,
    to_angular_first,
    to_linear_first,
    transform_from_featherstone,
    transform_from_plux,
    transform_from_plxb,
    transform_from_rbdl,
    transform_from_tds,
    transform_to_featherstone,
    transform_to_plux,
    transform_to_plxb,
    transform_to_rbdl,
    transform_to_tds,
)
from tests.helpers import assert_close
from tests.spatial.strategies import (
    BATCH_SHAPES,
    PROPERTY,
    TOL,
    arrays,
    motions,
    mv,
    rotations,
    six_vectors,
    transforms,
    translations,
)

batch_shapes = st.sampled_from(BATCH_SHAPES)


# ----------------------------------------------------------------------------- orderings
@PROPERTY
@given(st.data(), batch_shapes)
def test_orderings_are_exact_inverses(data: st.DataObject, batch: tuple[int, ...]) -> None:
    x = data.draw(six_vectors(batch))
    a = to_angular_first(x)
    assert np.array_equal(a[..., :3], x[..., 3:])
    assert np.array_equal(a[..., 3:], x[..., :3])
    assert np.array_equal(to_linear_first(a), x)
    assert np.array_equal(to_angular_first(to_linear_first(x)), x)
    M = data.draw(arrays((*batch, 6, 6), -3, 3))
    assert np.array_equal(reorder_matrix(reorder_matrix(M)), M)
    assert np.array_equal(reorder_matrix(reorder_matrix(M, cols=False), cols=False), M)
    # reordering a linear map: (P M P^T) (P x) = P (M x)
    assert_close(mv(reorder_matrix(M), to_angular_first(x)), to_angular_first(mv(M, x)), rtol=TOL, norm="max")
    # rows only / columns only, for (6, n) Jacobians and (n, 6) maps
    J = data.draw(arrays((*batch, 6, 4), -3, 3))
    assert np.array_equal(reorder_matrix(J, cols=False), J[..., [3, 4, 5, 0, 1, 2], :])
    assert np.array_equal(
        reorder_matrix(np.swapaxes(J, -1, -2), rows=False), np.swapaxes(J, -1, -2)[..., [3, 4, 5, 0, 1, 2]]
    )


@PROPERTY
@given(st.data(), batch_shapes)
def test_ordering_of_6x6_transforms(data: st.DataObject, batch: tuple[int, ...]) -> None:
    T = data.draw(transforms(batch))
    v = data.draw(motions(batch))
    Xa = motion_transform_matrix(T, Ordering.ANGULAR_FIRST)
    assert_close(mv(Xa, to_angular_first(v.vector)), to_angular_first((T @ v).vector), rtol=TOL, norm="max")
    assert_close(motion_transform_matrix(T, "linear_first"), T.motion_matrix(), rtol=TOL, norm="max")
    Fa = force_transform_matrix(T, Ordering.ANGULAR_FIRST)
    assert_close(
        Fa, np.swapaxes(np.linalg.inv(Xa), -1, -2), what="angular-first X* = X^-T", rtol=TOL, norm="max"
    )
    assert_close(force_transform_matrix(T, Ordering.LINEAR_FIRST), T.force_matrix(), rtol=TOL, norm="max")


# ----------------------------------------------------------------------------- Featherstone / RBDL
@PROPERTY
@given(st.data(), batch_shapes)
def test_plux_meaning(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A_H_B = data.draw(transforms(batch))
    X = transform_to_plux(A_H_B)
    assert X.shape == (*batch, 6, 6)
    # plux gives B_X_A: reordered to linear first it is the motion matrix of B_H_A
    assert_close(
        reorder_matrix(X), A_H_B.inverse().motion_matrix(), what="plux = B_X_A", rtol=TOL, norm="max"
    )
    E, r = transform_to_featherstone(A_H_B)
    assert_close(E, np.swapaxes(A_H_B.rotation, -1, -2), what="E = A_R_B^T", rtol=TOL, norm="max")
    assert_close(r, A_H_B.translation, what="r = A_o_B", rtol=TOL, norm="max")
    assert_close(plux(E, r), X, rtol=TOL, norm="max")
    zero = np.zeros((*batch, 3, 3))
    assert_close(
        X,
        np.concatenate([np.concatenate([E, zero], -1), np.concatenate([-E @ skew(r), E], -1)], -2),
        rtol=TOL,
        norm="max",
    )
    # round trips
    assert_close(
        transform_from_featherstone(E, r).matrix, A_H_B.matrix, what="(E, r) round trip", rtol=TOL, norm="max"
    )
    assert_close(transform_from_plux(X).matrix, A_H_B.matrix, what="plux round trip", rtol=TOL, norm="max")
    assert_close(
        transform_from_rbdl(*transform_to_rbdl(A_H_B)).matrix, A_H_B.matrix, what="RBDL", rtol=TOL, norm="max"
    )
    # Featherstone's rule for motion: X (w, v) = (E w, E (v - r x w))
    v = data.draw(motions(batch))
    w, lin = v.angular, v.linear
    expected = np.concatenate([mv(E, w), mv(E, lin - np.cross(r, w))], -1)
    assert_close(mv(X, to_angular_first(v.vector)), expected, what="plux motion rule", rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), batch_shapes)
def test_plux_composition_left_associative(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A_H_B, B_H_C = data.draw(transforms(batch)), data.draw(transforms(batch))
    # C_X_A = C_X_B B_X_A
    assert_close(
        transform_to_plux(A_H_B @ B_H_C),
        transform_to_plux(B_H_C) @ transform_to_plux(A_H_B),
        what="plux(AB) = plux(B) plux(A)",
        rtol=TOL,
        norm="max",
    )
    E1, r1 = data.draw(rotations(batch)), data.draw(translations(batch))
    E2, r2 = data.draw(rotations(batch)), data.draw(translations(batch))
    # RBDL's SpatialTransform product: X1 X2 = plux(E1 E2, E2^T r1 + r2)
    assert_close(
        plux(E1, r1) @ plux(E2, r2), plux(E1 @ E2, mv(np.swapaxes(E2, -1, -2), r1) + r2), rtol=TOL, norm="max"
    )
    # force transform in angular-first coordinates is plux^-T
    X = plux(E1, r1)
    Xf = np.swapaxes(np.linalg.inv(X), -1, -2)
    assert_close(
        reorder_matrix(Xf),
        transform_from_plux(X).inverse().force_matrix(),
        what="plux^-T",
        rtol=TOL,
        norm="max",
    )


# ----------------------------------------------------------------------------- TDS / brax
@PROPERTY
@given(st.data(), batch_shapes)
def test_plxb_meaning_and_right_associative_rule(data: st.DataObject, batch: tuple[int, ...]) -> None:
    A_H_B = data.draw(transforms(batch))
    E, r = transform_to_tds(A_H_B)
    assert_close(E, A_H_B.rotation, what="E = A_R_B", rtol=TOL, norm="max")
    assert_close(r, A_H_B.translation, rtol=TOL, norm="max")
    Y = transform_to_plxb(A_H_B)
    assert_close(Y, plxb(E, r), rtol=TOL, norm="max")
    assert_close(Y, transform_to_plux(A_H_B), what="plxb(E, r) is numerically B_X_A", rtol=TOL, norm="max")
    Et = np.swapaxes(E, -1, -2)
    zero = np.zeros((*batch, 3, 3))
    assert_close(
        Y,
        np.concatenate([np.concatenate([Et, zero], -1), np.concatenate([-Et @ skew(r), Et], -1)], -2),
        rtol=TOL,
        norm="max",
    )
    assert_close(transform_from_tds(E, r).matrix, A_H_B.matrix, what="TDS round trip", rtol=TOL, norm="max")
    assert_close(transform_from_plxb(Y).matrix, A_H_B.matrix, what="plxb round trip", rtol=TOL, norm="max")
    # right-associative: Y1 * Y2 applies Y1 first, i.e. the matrix product Y2 @ Y1, and
    # plxb(E1, r1) * plxb(E2, r2) = plxb(E1 E2, r1 + E1 r2): the pose composition A_H_B @ B_H_C
    E1, r1 = data.draw(rotations(batch)), data.draw(translations(batch))
    E2, r2 = data.draw(rotations(batch)), data.draw(translations(batch))
    assert_close(
        plxb(E2, r2) @ plxb(E1, r1), plxb(E1 @ E2, r1 + mv(E1, r2)), what="plxb rule", rtol=TOL, norm="max"
    )
    H1, H2 = transform_from_tds(E1, r1), transform_from_tds(E2, r2)
    E12, r12 = transform_to_tds(H1 @ H2)
    assert_close(E12, E1 @ E2, rtol=TOL, norm="max")
    assert_close(r12, r1 + mv(E1, r2), rtol=TOL, norm="max")


def test_plux_textbook_example() -> None:
    """rotx-style coordinate rotation: E = B_R_A for B rotated by +90 deg about z, shifted by (1, 0, 0)."""
    A_H_B = Transform.from_rotation_translation([[0, -1, 0], [1, 0, 0], [0, 0, 1]], [1.0, 0, 0])
    E, r = transform_to_featherstone(A_H_B)
    assert_close(E, [[0, 1, 0], [-1, 0, 0], [0, 0, 1]], rtol=TOL, norm="max")
    assert_close(r, [1.0, 0, 0], rtol=TOL, norm="max")
    # a pure rotation about A's z axis through A's origin, seen from B (angular first):
    # omega_B = E z = z; the velocity of B's origin is omega x r = (0, 1, 0) in A, (1, 0, 0) in B
    X = plux(E, r)
    assert_close(X @ [0, 0, 1.0, 0, 0, 0], [0, 0, 1.0, 1.0, 0, 0], rtol=TOL, norm="max")
    # Featherstone's angular-first crm((w, v)) = [[w^, 0], [v^, w^]] is the reordered linear-first crm
    v = np.array([0.3, -0.1, 0.2, 1.0, 2.0, 3.0])  # linear first
    W, V = skew(v[3:]), skew(v[:3])
    assert_close(reorder_matrix(crm(v)), np.block([[W, np.zeros((3, 3))], [V, W]]), rtol=TOL, norm="max")


@pytest.mark.parametrize("ordering", list(Ordering))
def test_ordering_enum_values(ordering: Ordering) -> None:
    assert Ordering(ordering.value) is ordering
    assert ordering.value in ("linear_first", "angular_first")
