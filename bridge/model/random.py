"""Random multibody trees for testing: every joint kind, odd axes, non-zero axis origins.

:func:`random_model` builds a :class:`~bridge.model.model.Model` that exercises the code paths a
hand-written URDF rarely reaches: branches and chains, joint axes in arbitrary directions (and
sometimes exactly along ±x, ±y, ±z), non-zero axis origins, massless links, extra frames, and a DOF
order that is not the document order. The same seed always gives the same model.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Sequence

import numpy as np

from bridge._array import as_int, int_text
from bridge.errors import InvalidValueError
from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model
from bridge.spatial import SpatialInertia, Transform

__all__ = ["DEFAULT_JOINT_KINDS", "random_inertia", "random_model", "random_transform"]

#: the joint kinds of :func:`random_model` unless told otherwise: the one-coordinate ones and fixed
#: (a model of them keeps one position and one velocity per joint)
DEFAULT_JOINT_KINDS = ("revolute", "continuous", "prismatic", "fixed")

# the six signed coordinate axes: joints along them take the "aligned" code paths of the backends
_AXES = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1]], dtype=float)
_ALIGNED_PROBABILITY = 1.0 / 3.0
# a massless link between two movable joints must not let them cancel each other: the two joint
# screws (seen from the massless link) must be independent by at least this singular value
_MIN_SCREW_INDEPENDENCE = 1e-2


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise InvalidValueError(f"random_model: seed must be an int, a numpy Generator or None, got {seed!r}")
    if seed is not None and seed < 0:
        raise InvalidValueError("random_model: seed must be a non-negative int (numpy's seeds are)")
    return np.random.default_rng(seed)


def _unit(rng: np.random.Generator) -> np.ndarray:
    """A uniformly distributed unit vector (3,)."""
    while True:
        v = rng.normal(size=3)
        n = np.linalg.norm(v)
        if n > 1e-3:
            return v / n


def random_transform(
    rng: np.random.Generator, scale: float = 1.0, min_distance: float | None = None
) -> Transform:
    """A random pose: uniformly distributed rotation, random translation.

    The translation has components uniform in ``[-scale, scale]``, or, if ``min_distance`` is
    given, a uniformly random direction and a length uniform in ``[min_distance, scale]`` (metres).
    """
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    if min_distance is None:
        p = rng.uniform(-scale, scale, 3)
    else:
        p = _unit(rng) * rng.uniform(min_distance, scale)
    return Transform.from_quaternion_xyzw(q, p)


def random_inertia(rng: np.random.Generator, mass_range: tuple[float, float] = (0.1, 10.0)) -> SpatialInertia:
    """A physically consistent spatial inertia, expressed in the link frame.

    Mass uniform in ``mass_range`` (kg), centre of mass within 0.2 m of the origin on each axis,
    principal moments of a solid box with random sides 0.05..0.5 m (so every moment is positive
    and ``J1 + J2 > J3`` holds strictly), principal axes uniformly random.
    """
    mass = rng.uniform(*mass_range)
    sq = rng.uniform(0.05, 0.5, 3) ** 2
    moments = mass / 12.0 * np.array([sq[1] + sq[2], sq[0] + sq[2], sq[0] + sq[1]])
    R = random_transform(rng).rotation
    return SpatialInertia(mass, rng.uniform(-0.2, 0.2, 3), R @ np.diag(moments) @ R.T)


def _check_probability(name: str, value: float) -> float:
    try:
        p = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidValueError(f"random_model: {name} must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= p <= 1.0:
        raise InvalidValueError(f"random_model: {name} must be in [0, 1], got {value!r}")
    return p


def _joint_kinds(joint_kinds: Sequence[str | JointKind] | str) -> list[JointKind]:
    if isinstance(joint_kinds, str):  # one kind given as a plain string
        joint_kinds = (joint_kinds,)
    valid = [k.value for k in JointKind]
    kinds = list(joint_kinds)
    unknown = [k for k in kinds if str(getattr(k, "value", k)) not in valid]
    if unknown:
        raise InvalidValueError(f"random_model: unknown joint kinds {unknown}; use some of {valid}")
    if not kinds:
        raise InvalidValueError(f"random_model: joint_kinds is empty; use some of {valid}")
    return [JointKind(getattr(k, "value", k)) for k in kinds]


def _screws_independent(parent: Joint, child: Joint) -> bool:
    """Whether the motions of ``parent`` (into link L) and ``child`` (out of L) are independent.

    Both screws are expressed in L coordinates; they do not depend on the joint positions (a joint
    does not move its own axis), so one check covers every configuration.
    """
    s_parent = parent.motion_subspace  # in L (its child) coordinates
    s_child = child.parent_H_child.motion_matrix() @ child.motion_subspace  # child -> L coordinates
    return bool(
        np.linalg.svd(np.stack([s_parent, s_child], axis=1), compute_uv=False)[-1] > _MIN_SCREW_INDEPENDENCE
    )


#: the most links (and extra frames) ``random_model`` builds: robots have hundreds of links
MAX_RANDOM_SIZE = 100_000
_SLOW = " (100,000 links take about 35 s to build; robots have hundreds)"


def _n_links(n_links: object) -> int:
    """``random_model``'s ``n_links``: an integer from 1 to :data:`MAX_RANDOM_SIZE`."""
    if isinstance(n_links, bool) or not isinstance(n_links, numbers.Integral):
        raise InvalidValueError(f"random_model: n_links must be an integer >= 1, got {n_links!r}")
    if int(n_links) < 1:
        raise InvalidValueError(f"random_model: n_links must be >= 1, got {int_text(int(n_links))}")
    return as_int(n_links, "random_model: n_links", maximum=MAX_RANDOM_SIZE, why=_SLOW)


def _n_frames(n_frames: object, n: int) -> int:
    """``random_model``'s ``n_frames``: an integer from 0 to :data:`MAX_RANDOM_SIZE`, ``max(1, n // 3)``
    for None."""
    if n_frames is None:
        return max(1, n // 3)
    if isinstance(n_frames, bool) or not isinstance(n_frames, numbers.Integral) or n_frames < 0:
        integer = isinstance(n_frames, numbers.Integral) and not isinstance(n_frames, bool)
        shown = int_text(int(n_frames)) if integer else repr(n_frames)
        raise InvalidValueError(f"random_model: n_frames must be an integer >= 0, got {shown}")
    return as_int(n_frames, "random_model: n_frames", maximum=MAX_RANDOM_SIZE, why=_SLOW)


def _random_limits(rng: np.random.Generator, kind: JointKind) -> JointLimits:
    """Limits of a movable joint: effort 10..200 and velocity 1..20, and for a revolute or prismatic
    joint position limits 0.2..2.5 each way around 0."""
    if kind is JointKind.CONTINUOUS or kind.wide:
        return JointLimits(effort=float(rng.uniform(10, 200)), velocity=float(rng.uniform(1, 20)))
    return JointLimits(
        lower=-float(rng.uniform(0.2, 2.5)),
        upper=float(rng.uniform(0.2, 2.5)),
        effort=float(rng.uniform(10, 200)),
        velocity=float(rng.uniform(1, 20)),
    )


def _random_joint(
    rng: np.random.Generator, i: int, parent: int, kinds: list[JointKind], axis_origin: bool
) -> Joint:
    """``"joint{i}"`` from ``"link{parent}"`` to ``"link{i}"``: a kind among ``kinds``, a random rest
    pose (translation 0.1..1 m), and for a movable joint a unit axis (3,) (±x, ±y, ±z one time in
    three), an axis origin (3,) 0.05..0.4 m from the child origin if ``axis_origin`` (both in child
    coordinates) and limits."""
    kind = kinds[int(rng.integers(len(kinds)))]
    rest = random_transform(rng, 1.0, min_distance=0.1)
    axis, origin, limits = np.zeros(3), np.zeros(3), JointLimits()
    if kind.movable:
        axis = _AXES[int(rng.integers(6))] if rng.uniform() < _ALIGNED_PROBABILITY else _unit(rng)
        if axis_origin:
            origin = _unit(rng) * rng.uniform(0.05, 0.4)
        limits = _random_limits(rng, kind)
    return Joint(
        f"joint{i}", kind, f"link{parent}", f"link{i}", rest, axis=axis, axis_origin=origin, limits=limits
    )


def _may_be_massless(i: int, parents: list[int], joints: list[Joint], massless: list[bool]) -> bool:
    """Whether link ``i`` (drawn massless) may be massless without making the mass matrix singular:
    its parent is not massless, and it is a leaf behind a fixed joint or carries joints whose screws
    are independent of its parent joint's (``joints[i - 1]`` is joint i)."""
    parent_joint = joints[i - 1]
    child_joints = [joints[c - 1] for c in range(i + 1, len(parents)) if parents[c] == i]
    if massless[parents[i]]:
        return False
    if parent_joint.kind.wide or any(c.kind.wide for c in child_joints):
        return False  # a massless link next to a joint of several coordinates: not worth the checks
    if not child_joints:  # a massless leaf is harmless only behind a fixed joint
        return not parent_joint.movable
    if parent_joint.movable:
        return all(_screws_independent(parent_joint, c) for c in child_joints if c.movable)
    return True


def _random_links(
    rng: np.random.Generator, parents: list[int], joints: list[Joint], p_massless: float, allow_singular: bool
) -> list[Link]:
    """``"link{i}"`` with a random inertia, or, with probability ``p_massless`` (and only where
    :func:`_may_be_massless` allows, unless ``allow_singular``), zero inertia; never the base."""
    n = len(parents)
    # inertias; parents come before children, so "is the parent massless" is already decided
    inertias = [random_inertia(rng) for _ in range(n)]
    massless = [False] * n
    for i in range(1, n):
        if not rng.uniform() < p_massless:
            continue
        massless[i] = True if allow_singular else _may_be_massless(i, parents, joints, massless)
    return [Link(f"link{i}", SpatialInertia.zero() if massless[i] else inertias[i]) for i in range(n)]


def _with_armature(rng: np.random.Generator, joints: list[Joint], p_armature: float) -> list[Joint]:
    """``joints`` with an armature 0.01..0.5 on each movable joint with probability ``p_armature``."""
    if p_armature <= 0.0:
        return joints
    return [
        dataclasses.replace(j, armature=float(rng.uniform(0.01, 0.5)))
        if j.movable and rng.uniform() < p_armature
        else j
        for j in joints
    ]


def random_model(
    n_links: int,
    seed: int | np.random.Generator | None = None,
    *,
    joint_kinds: Sequence[str | JointKind] | str = DEFAULT_JOINT_KINDS,
    floating: bool = True,
    n_frames: int | None = None,
    massless_probability: float = 0.15,
    axis_origin: bool = True,
    branching: float = 0.5,
    shuffle_dofs: bool = True,
    allow_singular: bool = False,
    armature_probability: float = 0.0,
) -> Model:
    """A random tree of ``n_links`` links, for tests.

    Topology: link ``i`` (``"link{i}"``, ``i >= 1``) hangs from an earlier link through
    ``"joint{i}"``: with probability ``branching`` from a uniformly random earlier link, otherwise
    from link ``i - 1``. ``branching=0`` gives a serial chain, ``branching=1`` a uniform random
    recursive tree; values in between give long chains with side branches. ``"link0"`` is the base.

    Joints: kind uniform among ``joint_kinds`` (any of :class:`JointKind`: ``"planar"``, ``"ball"``
    and ``"free"`` too); rest transform ``parent_H_child`` with a uniformly
    random rotation and a translation of random direction and length 0.1..1 m; a unit axis that is
    exactly ±x, ±y or ±z one time in three and uniformly random otherwise (a planar joint's plane
    normal; none for ball and free joints); a non-zero axis origin (child coordinates, 0.05..0.4 m
    from the child origin; a ball joint's centre) if ``axis_origin``, else zero. Revolute
    and prismatic joints get finite limits around 0 (0.2..2.5 each way), the others effort
    and velocity limits only. With ``floating=False`` and free joints among the kinds, free joints
    on the (fixed) base are several free bodies of one scene, and free joints further down are free
    joints below the root.

    Links: a random physically consistent inertia (:func:`random_inertia`: mass 0.1..10 kg, COM
    offset, strictly triangle-consistent principal moments, random principal axes), or, with
    ``massless_probability``, exactly zero inertia. Unless ``allow_singular``, massless links are
    placed so that the mass matrix is never singular: the base is never massless, a massless link's
    parent is never massless, and a massless link is a leaf only behind a fixed joint. So every
    movable joint moves some mass, and between two massive bodies there are at most two movable
    joints, whose screws are checked to be independent (a massless link that fails the check is
    given mass). With ``allow_singular`` any link but the base may be massless, which may leave
    movable joints that move no inertia (see :attr:`Model.massless_dofs`).

    Frames: ``n_frames`` extra frames ``"frame{k}"`` (default ``max(1, n_links // 3)``) at random
    poses on random links. Armature: with ``armature_probability``, a movable joint gets an
    armature uniform in 0.01..0.5 (drawn last, so the rest of the model does not depend on it).
    DOFs: all movable joints, in a random permutation of the document
    order when ``shuffle_dofs``.

    Args:
        n_links: number of links, >= 1.
        seed: an int, a ``numpy.random.Generator`` (advanced in place) or None (fresh entropy).
            The same int seed always gives the same model.

    Raises:
        InvalidValueError: ``n_links < 1``, an unknown or empty ``joint_kinds``, a probability
            outside [0, 1], a negative ``n_frames`` or a bad ``seed``.
    """
    n = _n_links(n_links)
    kinds = _joint_kinds(joint_kinds)
    p_massless = _check_probability("massless_probability", massless_probability)
    p_branch = _check_probability("branching", branching)
    p_armature = _check_probability("armature_probability", armature_probability)
    n_frames = _n_frames(n_frames, n)
    rng = _rng(seed)
    # topology: parents[i] < i; joint i connects parents[i] -> i (joints[i - 1] is joint i)
    parents = [-1] + [int(rng.integers(0, i)) if rng.uniform() < p_branch else i - 1 for i in range(1, n)]
    joints = [_random_joint(rng, i, parents[i], kinds, axis_origin) for i in range(1, n)]
    links = _random_links(rng, parents, joints, p_massless, allow_singular)
    movable = [j.name for j in joints if j.movable]
    dof_names = [movable[k] for k in rng.permutation(len(movable))] if shuffle_dofs else movable
    frames = [
        Frame(f"frame{k}", f"link{int(rng.integers(n))}", random_transform(rng, 0.5)) for k in range(n_frames)
    ]
    joints = _with_armature(rng, joints, p_armature)
    return Model(f"random{n}", links, joints, frames, "link0", tuple(dof_names), bool(floating))
