"""Which neutral model a compiled ``MjModel`` is: a floating base, or a scene rooted at the world body.

MuJoCo puts free joints on children of the world body only (its compiler refuses any other). A model
whose only free joint is on a child of the world, with every joint in that body's subtree, is a
floating-base model (``floating=True``, the base that body; static bodies outside its subtree are left
out: no joint moves them). Any other model (no free joint, several free bodies, a robot fixed to the
world beside free objects) is a scene: the world body is the fixed base, every body is kept, and each
free joint is a FREE joint from the world (:func:`bridge.from_mujoco`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["floating_joint", "free_joints", "kept_bodies"]


def free_joints(mujoco: Any, m: Any) -> list[int]:
    """The ids of the model's free joints, in MuJoCo's order."""
    jtype = np.asarray(m.jnt_type)
    return [j for j in range(m.njnt) if jtype[j] == mujoco.mjtJoint.mjJNT_FREE]


def floating_joint(m: Any, free: list[int]) -> int | None:
    """The free joint of a floating base: the model's only free joint (``free``), on a child of the
    world, whose body's subtree holds every other joint; None for a scene (no free joint, several, or
    joints outside the free body's subtree): then the world body is the fixed base."""
    if len(free) != 1:
        return None
    parent, jbody = np.asarray(m.body_parentid), np.asarray(m.jnt_bodyid)
    root = int(jbody[free[0]])
    if parent[root] != 0:  # (MuJoCo refuses a free joint below the world's children)
        return None
    subtree_of: list[int] = list(range(m.nbody))  # the child of the world each body hangs from
    for b in range(1, m.nbody):
        subtree_of[b] = b if parent[b] == 0 else subtree_of[parent[b]]
    if any(subtree_of[jbody[j]] != root for j in range(m.njnt)):
        return None
    return free[0]


def kept_bodies(m: Any, floating: int | None) -> tuple[int, list[int]]:
    """The root body and the bodies of the neutral model, in MuJoCo's body order: the free joint's
    body and its subtree for a floating base, else every body with the world (body 0) as root."""
    if floating is None:
        return 0, list(range(m.nbody))
    parent = np.asarray(m.body_parentid)
    root = int(m.jnt_bodyid[floating])
    inside = {root}
    for b in range(root + 1, m.nbody):  # (bodies are numbered depth first: a subtree is contiguous)
        if parent[b] in inside:
            inside.add(b)
    return root, sorted(inside)
