"""The closed-form helpers of tests/docs/_math.py are right (they are the reference of other tests)."""

from __future__ import annotations

import numpy as np

from tests.docs._math import expm, matrix_to_quat_xyzw, quat_xyzw_to_matrix, random_rotation, rot_z, skew


def test_helpers_are_right():
    """The helpers themselves: exp of a skew matrix is Rodrigues' rotation, quaternions round-trip."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=3)
    th = np.linalg.norm(w)
    K = skew(w / th)
    rodrigues = np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K
    assert np.allclose(expm(skew(w)), rodrigues, atol=1e-13)
    assert np.allclose(expm(skew([0.0, 0.0, 0.4])), rot_z(0.4), atol=1e-15)
    for _ in range(20):
        R = random_rotation(rng)
        assert np.allclose(R.T @ R, np.eye(3), atol=1e-14) and np.linalg.det(R) > 0
        assert np.allclose(quat_xyzw_to_matrix(matrix_to_quat_xyzw(R)), R, atol=1e-14)
    assert np.allclose(quat_xyzw_to_matrix([0, 0, np.sin(0.35), np.cos(0.35)]), rot_z(0.7), atol=1e-15)
