"""Small models with ball, free and planar joints for the Drake tests (and the Drake cells of
docs/conventions.md): a serial chain of given joint kinds and random states of any model."""

from __future__ import annotations

import numpy as np

import bridge
from bridge.spatial import Transform

__all__ = ["chain", "wide_state"]


def wide_state(
    model: bridge.Model, rng: np.random.Generator, rep: str = "mixed", batch: tuple = ()
) -> bridge.State:
    """A random state of a model with joints of several coordinates (unit quaternions, planar angles
    in [-pi, pi]; rotations kept away from roll-pitch-yaw's singularity by the caller's seed)."""
    c = model.coordinates
    s = np.concatenate([k.spec.random(rng, batch) for k in c.kinds], -1)
    quat = rng.normal(size=(*batch, 4))
    H = Transform.from_quaternion_xyzw(
        quat / np.linalg.norm(quat, axis=-1, keepdims=True), rng.normal(size=(*batch, 3))
    )
    vb = rng.normal(size=(*batch, 6)) if model.floating else np.zeros((*batch, 6))
    st = bridge.State(H, s, vb, rng.normal(size=(*batch, c.nv)), "mixed", layout=model)
    return st.to(rep)


def chain(kinds: tuple[str, ...], floating: bool = False, seed: int = 0) -> bridge.Model:
    """A serial chain with one joint of each kind in ``kinds`` (in order)."""
    rng = np.random.default_rng(seed)
    links, joints = [bridge.Link("l0", bridge.random_model(1, seed=seed).links[0].inertia)], []
    for i, kind in enumerate(kinds, start=1):
        m = bridge.random_model(2, seed=seed + i, joint_kinds=(kind,))
        j = m.joints[0]
        links.append(bridge.Link(f"l{i}", m.links[1].inertia))
        joints.append(
            bridge.Joint(
                f"j{i}",
                j.kind,
                f"l{i - 1}",
                f"l{i}",
                j.parent_H_child,
                axis=j.axis,
                axis_origin=j.axis_origin,
                limits=j.limits,
            )
        )
    frames = [
        bridge.Frame("tool", f"l{len(kinds)}", Transform.from_rpy(rng.normal(size=3), rng.normal(size=3)))
    ]
    return bridge.Model("chain", links, joints, frames, "l0", tuple(j.name for j in joints), floating)
