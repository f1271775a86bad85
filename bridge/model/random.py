"""Random multibody trees for testing: every joint kind, odd axes, non-zero axis origins."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bridge.errors import InvalidValueError
from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model
from bridge.spatial import SpatialInertia, Transform

__all__ = ["random_inertia", "random_model", "random_transform"]

_AXES = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1]], dtype=float)


def random_transform(rng: np.random.Generator, scale: float = 1.0) -> Transform:
    """A random rotation (uniform) and a translation with components in [-scale, scale]."""
    q = rng.normal(size=4)
    return Transform.from_quaternion_xyzw(q / np.linalg.norm(q), rng.uniform(-scale, scale, 3))


def random_inertia(rng: np.random.Generator, mass_range: tuple[float, float] = (0.1, 10.0)) -> SpatialInertia:
    """A physically consistent inertia: random mass, COM offset, principal moments satisfying the
    triangle inequality strictly, random principal axes."""
    mass = rng.uniform(*mass_range)
    # principal moments of a box with random side lengths: always strictly consistent
    sides = rng.uniform(0.05, 0.5, 3) ** 2
    moments = mass / 12.0 * np.array([sides[1] + sides[2], sides[0] + sides[2], sides[0] + sides[1]])
    R = random_transform(rng).rotation
    return SpatialInertia(mass, rng.uniform(-0.2, 0.2, 3), R @ np.diag(moments) @ R.T)


def random_model(
    n_links: int,
    seed: int | np.random.Generator | None = None,
    *,
    joint_kinds: Sequence[str] = ("revolute", "continuous", "prismatic", "fixed"),
    floating: bool = True,
    n_frames: int | None = None,
    massless_probability: float = 0.1,
    axis_origin: bool = True,
    shuffle_dofs: bool = True,
) -> Model:
    """A random tree of ``n_links`` links.

    Each new link hangs from a random earlier link (so chains and branches both occur) through a
    joint of a random kind among ``joint_kinds``, with a random rest transform, a random unit axis
    (one in three is exactly ±x, ±y or ±z, so aligned-joint code paths are used), a random non-zero
    axis origin (if ``axis_origin``), and a random physically consistent inertia. A link may be
    massless (exactly zero inertia) with ``massless_probability``, but never a leaf: a movable joint
    whose whole subtree were massless would make the mass matrix singular. Extra frames
    (``n_frames``, default about a third of the links) are placed on random links. The DOF order is
    a random permutation of the movable joints when ``shuffle_dofs``.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if int(n_links) < 1:
        raise InvalidValueError(f"random_model: n_links must be >= 1, got {n_links}")
    valid = [k.value for k in JointKind]
    unknown = [k for k in joint_kinds if str(getattr(k, "value", k)) not in valid]
    if unknown:
        raise InvalidValueError(f"random_model: unknown joint kinds {unknown}; use some of {valid}")
    kinds = [JointKind(k) for k in joint_kinds]
    if not kinds:
        raise InvalidValueError("random_model: joint_kinds is empty")
    n = int(n_links)
    parents = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
    has_child = {p for p in parents if p >= 0}
    links = []
    for i in range(n):
        massless = i > 0 and i in has_child and rng.uniform() < massless_probability
        inertia = SpatialInertia.zero() if massless else random_inertia(rng)
        links.append(Link(f"link{i}", inertia))
    joints = []
    for i in range(1, n):
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind.movable:
            axis = _AXES[int(rng.integers(6))] if rng.uniform() < 1 / 3 else rng.normal(size=3)
            origin = rng.uniform(-0.3, 0.3, 3) if axis_origin else np.zeros(3)
        else:
            axis, origin = np.zeros(3), np.zeros(3)
        limits = JointLimits()
        if kind in (JointKind.REVOLUTE, JointKind.PRISMATIC):
            lower = -rng.uniform(0.5, 2.5)
            limits = JointLimits(
                lower=lower, upper=lower + rng.uniform(1.0, 4.0), effort=100.0, velocity=10.0
            )
        joints.append(
            Joint(
                f"joint{i}",
                kind,
                f"link{parents[i]}",
                f"link{i}",
                random_transform(rng, 0.6),
                axis=axis,
                axis_origin=origin,
                limits=limits,
            )
        )
    movable = [j.name for j in joints if j.movable]
    dof_names = [movable[k] for k in rng.permutation(len(movable))] if shuffle_dofs else movable
    if n_frames is None:
        n_frames = max(1, n // 3)
    frames = [
        Frame(f"frame{k}", f"link{int(rng.integers(n))}", random_transform(rng, 0.5)) for k in range(n_frames)
    ]
    return Model(f"random{n}", links, joints, frames, "link0", tuple(dof_names), floating)
