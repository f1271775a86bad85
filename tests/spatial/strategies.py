"""Hypothesis strategies and comparison helpers shared by the spatial-core tests.

Values are well conditioned on purpose: rotations come from random unit quaternions, translations
lie in [-2, 2]^3, motions/forces in [-3, 3]^6, and inertias have masses in [0.1, 10] with positive
principal moments that satisfy the triangle inequality by construction. The tests then compare at
~1e-12 relative to the size of the numbers involved.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bridge.spatial import Force, Motion, SpatialInertia, Transform
from bridge.spatial.so3 import quaternion_xyzw_to_matrix

# default settings of every property test in tests/spatial
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)

BATCH_SHAPES = [(), (1,), (3, 1, 2)]
# (left batch, right batch, broadcast result)
BROADCAST_PAIRS = [
    ((3, 1, 2), (2,), (3, 1, 2)),
    ((4, 1), (1, 5), (4, 5)),
    ((), (3,), (3,)),
    ((2, 1), (), (2, 1)),
]

TOL = 1e-12

# rotation angles that stress exp/log: exactly 0, tiny, the old Taylor-switch region, near pi
SPECIAL_ANGLES = [
    0.0,
    1e-15,
    1e-12,
    1e-9,
    9.9e-7,
    1.01e-6,
    2e-6,
    1e-5,
    1e-4,
    1e-3,
    0.1,
    1.0,
    np.pi / 2,
    np.pi - 1e-3,
    np.pi - 1e-6,
    np.pi - 1e-9,
    np.pi - 1e-12,
]


def _floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=64)


def arrays(shape: tuple[int, ...], lo: float, hi: float) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, shape, elements=_floats(lo, hi))


def unit_quaternions(batch: tuple[int, ...] = ()) -> st.SearchStrategy[np.ndarray]:
    """Unit quaternions (x, y, z, w), shape (*batch, 4), any sign of w."""
    raw = arrays((*batch, 4), -1.0, 1.0).filter(lambda q: bool(np.all(np.linalg.norm(q, axis=-1) > 0.2)))
    return raw.map(lambda q: q / np.linalg.norm(q, axis=-1, keepdims=True))


def rotations(batch: tuple[int, ...] = ()) -> st.SearchStrategy[np.ndarray]:
    return unit_quaternions(batch).map(quaternion_xyzw_to_matrix)


def translations(batch: tuple[int, ...] = ()) -> st.SearchStrategy[np.ndarray]:
    return arrays((*batch, 3), -2.0, 2.0)


@st.composite
def transforms(draw: st.DrawFn, batch: tuple[int, ...] = ()) -> Transform:
    return Transform.from_rotation_translation(draw(rotations(batch)), draw(translations(batch)))


def six_vectors(batch: tuple[int, ...] = ()) -> st.SearchStrategy[np.ndarray]:
    return arrays((*batch, 6), -3.0, 3.0)


def motions(batch: tuple[int, ...] = ()) -> st.SearchStrategy[Motion]:
    return six_vectors(batch).map(Motion)


def forces(batch: tuple[int, ...] = ()) -> st.SearchStrategy[Force]:
    return six_vectors(batch).map(Force)


@st.composite
def inertia_arrays(draw: st.DrawFn, batch: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mass (*batch,), com (*batch, 3), I_c (*batch, 3, 3)) of a physically consistent body.

    Principal moments J = (s2 + s3, s1 + s3, s1 + s2) with s_i > 0 (second moments of the mass
    distribution along the principal axes) satisfy the triangle inequality strictly.
    """
    m = draw(arrays(batch, 0.1, 10.0))
    c = draw(arrays((*batch, 3), -0.5, 0.5))
    s = draw(arrays((*batch, 3), 0.01, 1.0)) * m[..., None]
    J = np.stack([s[..., 1] + s[..., 2], s[..., 0] + s[..., 2], s[..., 0] + s[..., 1]], axis=-1)
    R = draw(rotations(batch))
    Ic = np.einsum("...ij,...j,...kj->...ik", R, J, R)
    return m, c, 0.5 * (Ic + np.swapaxes(Ic, -1, -2))


def inertias(batch: tuple[int, ...] = ()) -> st.SearchStrategy[SpatialInertia]:
    return inertia_arrays(batch).map(lambda a: SpatialInertia(*a))


@st.composite
def rotation_vectors(
    draw: st.DrawFn, batch: tuple[int, ...] = (), max_angle: float = np.pi, min_angle: float = 0.0
) -> np.ndarray:
    """Rotation vectors whose angles mix random values in [min_angle, max_angle] with SPECIAL_ANGLES."""
    axis = draw(unit_quaternions(batch))[..., :3]
    n = np.linalg.norm(axis, axis=-1, keepdims=True)
    axis = np.where(n > 1e-3, axis / np.where(n > 1e-3, n, 1.0), np.array([0.0, 0.0, 1.0]))
    size = int(np.prod(batch, dtype=int))
    special = [a for a in SPECIAL_ANGLES if min_angle <= a <= max_angle]
    one = st.one_of(st.sampled_from(special), _floats(min_angle, max_angle))
    angle = np.array(draw(st.lists(one, min_size=size, max_size=size))).reshape(batch)
    return axis * angle[..., None]


def mv(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Batched matrix-vector product (..., n, k) x (..., k) -> (..., n) with broadcasting."""
    return np.einsum("...ij,...j->...i", matrix, vector)
