"""Test helpers shared by several test modules (small hand-built models, random states)."""

from __future__ import annotations

import numpy as np

from bridge.model.model import Frame, Joint, Link, Model
from bridge.spatial import SpatialInertia, Transform
from bridge.state import State


def random_transform(rng: np.random.Generator, batch: tuple[int, ...] = ()) -> Transform:
    q = rng.normal(size=(*batch, 4))
    return Transform.from_quaternion_xyzw(
        q / np.linalg.norm(q, axis=-1, keepdims=True), rng.normal(size=(*batch, 3))
    )


def small_model(rng: np.random.Generator, floating: bool = True) -> Model:
    """A tree with every joint kind, non-zero axis origins and a non-depth-first DOF order."""
    inertia = SpatialInertia(1.3, [0.05, -0.02, 0.1], np.diag([0.1, 0.12, 0.15]))
    links = [Link(n, inertia) for n in ("a", "b", "c", "d", "e", "f")]
    joints = [
        Joint(
            "j1",
            "revolute",
            "a",
            "b",
            random_transform(rng),
            axis=rng.normal(size=3),
            axis_origin=rng.normal(size=3),
        ),
        Joint("j2", "prismatic", "b", "c", random_transform(rng), axis=[1, 0, 0]),
        Joint(
            "j3", "continuous", "a", "d", random_transform(rng), axis=[0, 0, 1], axis_origin=[0.1, 0.2, 0.3]
        ),
        Joint("jf", "fixed", "d", "e", random_transform(rng)),
        Joint("j4", "revolute", "e", "f", random_transform(rng), axis=[0, -1, 0]),
    ]
    frames = [Frame("tool", "e", random_transform(rng))]
    return Model("small", links, joints, frames, "a", ("j4", "j2", "j3", "j1"), floating)


def random_state(
    model: Model, rng: np.random.Generator, rep: str = "mixed", batch: tuple[int, ...] = ()
) -> State:
    n = model.n_dofs
    return State(
        random_transform(rng, batch),
        rng.uniform(-2, 2, (*batch, n)),
        rng.normal(size=(*batch, 6)),
        rng.normal(size=(*batch, n)),
        rep,
    )


def assert_close(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-10, what: str = "") -> None:
    """Norm-wise relative comparison: ||a - e|| <= rtol * max(1, ||e||)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    err = np.linalg.norm(actual - expected)
    scale = max(1.0, float(np.linalg.norm(expected)))
    assert err <= rtol * scale, f"{what}: |diff| = {err:.3e} > {rtol:.1e} * {scale:.3e}"
