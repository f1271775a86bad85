"""Motion and Force: spatial cross products (crm/crf), power pairing, arithmetic, broadcasting."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.spatial import Force, Motion, crf, crm, skew
from tests.helpers import assert_close
from tests.spatial.strategies import (
    BATCH_SHAPES,
    BROADCAST_PAIRS,
    PROPERTY,
    TOL,
    forces,
    motions,
    mv,
    six_vectors,
    transforms,
)

batch_shapes = st.sampled_from(BATCH_SHAPES)


@PROPERTY
@given(st.data(), batch_shapes)
def test_crm_crf_identities(data: st.DataObject, batch: tuple[int, ...]) -> None:
    v = data.draw(motions(batch))
    m = data.draw(motions(batch))
    f = data.draw(forces(batch))
    T = data.draw(transforms(batch))
    Cm, Cf = crm(v.vector), crf(v.vector)
    assert Cm.shape == (*batch, 6, 6)
    assert_close(Cf, -np.swapaxes(Cm, -1, -2), what="crf = -crm^T", rtol=TOL, norm="max")
    X = T.motion_matrix()
    assert_close(
        X @ Cm @ np.linalg.inv(X), crm((T @ v).vector), what="X crm(v) X^-1 = crm(Xv)", rtol=TOL, norm="max"
    )
    Xs = T.force_matrix()
    assert_close(
        Xs @ Cf @ np.linalg.inv(Xs),
        crf((T @ v).vector),
        what="X* crf(v) X*^-1 = crf(Xv)",
        rtol=TOL,
        norm="max",
    )
    # the cross methods are the matrices
    vm = v.cross(m)
    vf = v.cross(f)
    assert isinstance(vm, Motion)
    assert isinstance(vf, Force)
    assert_close(vm.vector, mv(Cm, m.vector), what="v x m = crm(v) m", rtol=TOL, norm="max")
    assert_close(vf.vector, mv(Cf, f.vector), what="v x* f = crf(v) f", rtol=TOL, norm="max")
    # antisymmetry, v x v = 0, duality of the two products
    assert_close(m.cross(v).vector, -vm.vector, what="m x v = -(v x m)", rtol=TOL, norm="max")
    assert_close(v.cross(v).vector, np.zeros((*batch, 6)), what="v x v = 0", rtol=TOL, norm="max")
    assert_close(vf.dot(m), -f.dot(vm), what="(v x* f).m = -f.(v x m)", rtol=TOL, norm="max")
    # the transform is a Lie-algebra homomorphism: T(v x m) = (Tv) x (Tm), same for forces
    assert_close((T @ vm).vector, (T @ v).cross(T @ m).vector, what="T(v x m)", rtol=TOL, norm="max")
    assert_close((T @ vf).vector, (T @ v).cross(T @ f).vector, what="T(v x* f)", rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), batch_shapes)
def test_jacobi_identity_and_commutator(data: st.DataObject, batch: tuple[int, ...]) -> None:
    a, b, c = (data.draw(motions(batch)) for _ in range(3))
    jac = a.cross(b.cross(c)) + b.cross(c.cross(a)) + c.cross(a.cross(b))
    assert_close(jac.vector, np.zeros((*batch, 6)), rtol=1e-11, what="Jacobi identity", norm="max")
    A, B = crm(a.vector), crm(b.vector)
    assert_close(
        crm(a.cross(b).vector), A @ B - B @ A, rtol=1e-11, what="crm(a x b) = [crm a, crm b]", norm="max"
    )
    Fa, Fb = crf(a.vector), crf(b.vector)
    assert_close(crf(a.cross(b).vector), Fa @ Fb - Fb @ Fa, rtol=1e-11, what="crf(a x b)", norm="max")


def test_crm_blocks_linear_first() -> None:
    v = np.array([1.0, 2.0, 3.0, 0.4, -0.5, 0.6])
    lin, ang = v[:3], v[3:]
    zero = np.zeros((3, 3))
    assert_close(crm(v), np.block([[skew(ang), skew(lin)], [zero, skew(ang)]]), rtol=TOL, norm="max")
    assert_close(crf(v), np.block([[skew(ang), zero], [skew(lin), skew(ang)]]), rtol=TOL, norm="max")
    m = Motion(v)
    assert_close(m.linear, lin, rtol=TOL, norm="max")
    assert_close(m.angular, ang, rtol=TOL, norm="max")
    # a body spinning about z at the origin: the velocity of a point r is w x r (shift of reference point)
    spin = Motion([0, 0, 0, 0, 0, 2.0])
    translation = Motion([1.0, 0, 0, 0, 0, 0])
    assert_close(spin.cross(translation).vector, [0, 2.0, 0, 0, 0, 0], rtol=TOL, norm="max")


@PROPERTY
@given(st.data(), st.sampled_from(BROADCAST_PAIRS))
def test_broadcasting_products(data: st.DataObject, pair) -> None:
    left, right, out = pair
    v = data.draw(motions(left))
    m = data.draw(motions(right))
    f = data.draw(forces(right))
    assert v.cross(m).batch_shape == out
    assert v.cross(f).batch_shape == out
    assert v.dot(f).shape == out
    assert_close(v.cross(m).vector, mv(crm(v.vector), m.vector), rtol=TOL, norm="max")
    assert_close(v.cross(f).vector, mv(crf(v.vector), f.vector), rtol=TOL, norm="max")
    assert_close(f.dot(v), np.sum(f.vector * v.vector, axis=-1), rtol=TOL, norm="max")
    assert (v + m).batch_shape == out


@PROPERTY
@given(six_vectors((3, 1, 2)), six_vectors((2,)), st.floats(-3, 3))
def test_arithmetic(a: np.ndarray, b: np.ndarray, s: float) -> None:
    for cls in (Motion, Force):
        x, y = cls(a), cls(b)
        assert isinstance(x + y, cls)
        assert_close((x + y).vector, a + b, rtol=TOL, norm="max")
        assert_close((x - y).vector, a - b, rtol=TOL, norm="max")
        assert_close((-x).vector, -a, rtol=TOL, norm="max")
        assert_close((s * x).vector, s * a, rtol=TOL, norm="max")
        assert_close((x * s).vector, s * a, rtol=TOL, norm="max")
        assert_close(cls.from_linear_angular(a[..., :3], a[..., 3:]).vector, a, rtol=TOL, norm="max")
        assert_close(x[1, 0].vector, a[1, 0], rtol=TOL, norm="max")
        assert_close(np.asarray(x), a, rtol=TOL, norm="max")
    # per-sample scalars broadcast over the batch
    scale = np.arange(6.0).reshape(3, 1, 2)
    assert_close((Motion(a) * scale).vector, a * scale[..., None], rtol=TOL, norm="max")


def test_motion_and_force_do_not_mix() -> None:
    m, f = Motion(np.ones(6)), Force(np.ones(6))
    with pytest.raises(TypeError):
        m + f
    with pytest.raises(TypeError):
        f - m
    with pytest.raises(TypeError, match="Force"):
        m.dot(m)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Motion"):
        f.dot(f)  # type: ignore[arg-type]
    assert Motion.zero((2, 3)).batch_shape == (2, 3)
    assert_close(Force.zero().vector, np.zeros(6), rtol=TOL, norm="max")
    assert "Motion" in repr(m)
    assert "Force" in repr(f)
    with pytest.raises(TypeError, match="Motion or a Force"):
        m.cross(np.ones(6))  # type: ignore[arg-type]
