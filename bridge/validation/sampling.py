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
    (rotational) or [-1, 1] m (prismatic), planar, ball and free joints at random configurations of
    their kinds; base pose, velocities uniformly/normally random."""
    lo = np.full(model.n_dofs, -np.pi)
    hi = np.full(model.n_dofs, np.pi)
    columns = model.coordinates.v_start
    for i, joint in enumerate(model.movable_joints):
        if joint.kind.wide:
            continue  # (drawn on its manifold below)
        k = int(columns[i])
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
    if not model.single_coordinate:  # planar, ball and free joints at random configurations
        coords = model.coordinates
        parts = [
            s[:, coords.v_slice(k)] if not kind.wide else kind.spec.random(rng, (n,))
            for k, kind in enumerate(coords.kinds)
        ]
        return State(H, np.concatenate(parts, axis=-1), v, s_dot, "mixed", layout=model)
    return State(H, s, v, s_dot, "mixed")
