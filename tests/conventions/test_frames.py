"""The frame a representation expresses a frame F's quantities in, and its velocity
(:func:`bridge.conventions.frames.expressed_frame_velocity`), against finite differences of the
declared map along the motion."""

from __future__ import annotations

import numpy as np
import pytest

from bridge.conventions.declaration import Axes, BaseVelocity, Point
from bridge.conventions.frames import expressed_frame_velocity, frame_map, frame_motion
from bridge.errors import InvalidValueError
from bridge.spatial import Transform
from bridge.spatial.vectors import crm
from tests.helpers import assert_close

#: the neutral representations, and a frame at the world origin turning with F
DECLARATIONS = ("body", "inertial", "mixed", BaseVelocity(Point.WORLD_ORIGIN, Axes.BODY, Axes.BODY))


@pytest.mark.parametrize("declared", DECLARATIONS, ids=str)
def test_expressed_frame_velocity_is_the_rate_of_its_map(declared: object) -> None:
    """``d/dt A_X_W = crm(u_W) A_X_W`` along F's motion (A_X_W the map from the declaration to the
    world's coordinates at F's pose)."""
    rng = np.random.default_rng(4)
    H = Transform.exp(rng.normal(size=6))
    v_body = rng.normal(size=6)
    dt = 1e-6
    X = [frame_map(H @ Transform.exp(t * v_body), declared, "inertial") for t in (dt, -dt, 0.0)]
    X = [np.eye(6) if x is None else x for x in X]
    u = expressed_frame_velocity(H, frame_motion(H, v_body, "body", "inertial"), declared)
    rate = np.zeros((6, 6)) if u is None else crm(u) @ X[2]
    assert_close((X[0] - X[1]) / (2 * dt), rate, 1e-8, str(declared))


def test_expressed_frame_velocity_needs_one_frame() -> None:
    """A declaration with world-axes linear and body-axes angular halves names no single frame."""
    split = BaseVelocity(Point.BASE_ORIGIN, Axes.WORLD, Axes.BODY)
    with pytest.raises(InvalidValueError, match="no single frame"):
        expressed_frame_velocity(np.eye(4), np.zeros(6), split)
