"""What a comparison is evaluated at: random states and a few informative frames."""

from __future__ import annotations

import numpy as np

from bridge.conventions.state import State
from bridge.model.model import Model
from bridge.spatial import Transform

__all__ = ["default_frames", "random_states"]


def default_frames(model: Model, limit: int = 6) -> list[str]:
    """A few informative frames: the leaf links (end effectors, feet) and the base."""
    parents = {j.parent for j in model.joints}
    leaves = [link.name for link in model.links if link.name not in parents and link.name != model.base]
    # prefer leaves far from the base (longest chains first)
    depth: dict[str, int] = {model.base: 0}
    for j in model.depth_first_joints:
        depth[j.child] = depth[j.parent] + 1
    leaves.sort(key=lambda name: -depth.get(name, 0))
    chosen = leaves[: max(0, limit - 1)]
    extra = [f.name for f in model.frames][: max(0, limit - 1 - len(chosen))]
    return [model.base, *chosen, *extra]


def random_states(model: Model, n: int, rng: np.random.Generator) -> State:
    """``n`` random states (MIXED): positions within the joint limits intersected with [-pi, pi]
    (rotational) or [-1, 1] m (prismatic); base pose, velocities uniformly/normally random. A model
    with planar, ball or free joints: each joint's positions from its kind's
    :meth:`~bridge.model.joints.JointSpec.random` (within the limits for one coordinate), the state
    laid out by the model."""
    if not model.single_coordinate:
        return _random_wide_states(model, n, rng)
    lo = np.full(model.n_dofs, -np.pi)
    hi = np.full(model.n_dofs, np.pi)
    for k, joint in enumerate(model.movable_joints):
        lim = joint.limits
        span = np.pi if joint.kind.rotational else 1.0
        lower = -np.inf if lim.lower is None else lim.lower
        upper = np.inf if lim.upper is None else lim.upper
        if lower > upper:  # PyBullet's "no limits" (the URDF loader warns)
            lower, upper = -np.inf, np.inf
        lo[k], hi[k] = max(lower, -span), min(upper, span)
        if not hi[k] > lo[k] and np.isfinite(lower) and np.isfinite(upper):
            lo[k], hi[k] = lower, upper  # a narrow range away from zero
    s = rng.uniform(lo, hi, size=(n, model.n_dofs))
    q = rng.normal(size=(n, 4))
    H = Transform.from_quaternion_xyzw(
        q / np.linalg.norm(q, axis=-1, keepdims=True), rng.uniform(-1, 1, (n, 3))
    )
    v = rng.normal(size=(n, 6)) if model.floating else np.zeros((n, 6))
    s_dot = rng.normal(size=(n, model.n_dofs))
    return State(H, s, v, s_dot, "mixed")


def _random_wide_states(model: Model, n: int, rng: np.random.Generator) -> State:
    """:func:`random_states` of a model with joints of several coordinates."""
    parts = []
    for joint in model.movable_joints:
        lim = joint.limits
        lower, upper = lim.lower, lim.upper
        if lower is not None and upper is not None and lower > upper:  # PyBullet's "no limits"
            lower = upper = None
        parts.append(joint.kind.spec.random(rng, (n,), lower, upper))
    s = np.concatenate(parts, axis=-1)
    q = rng.normal(size=(n, 4))
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    H = Transform.from_quaternion_xyzw(q, rng.uniform(-1, 1, (n, 3)))
    v = rng.normal(size=(n, 6)) if model.floating else np.zeros((n, 6))
    s_dot = rng.normal(size=(n, model.n_dofs))
    return State(H, s, v, s_dot, "mixed", layout=model)
