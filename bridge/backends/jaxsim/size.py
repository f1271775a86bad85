"""How deep a tree jaxsim's engine takes: jaxsim's model builder recurses once per level of the tree.

Measured with jaxsim 0.9 under Python's default recursion limit (1,000 frames): a chain of 125
revolute joints builds (in about 10 s on a loaded 2-core machine), one of 140 fails with Python's
``RecursionError`` inside jaxsim's parser. ``size_problem`` (the registry's size check of jaxsim)
refuses a tree whose deepest path has more movable joints than :func:`max_depth`, before anything
is built; the limit follows ``sys.getrecursionlimit()``, so a user who raises it raises the limit.
"""

from __future__ import annotations

import sys

__all__ = ["FRAMES_PER_LEVEL", "max_depth", "size_problem"]

#: Python frames jaxsim's builder needs per level of the tree, with a margin (1,000 frames: a
#: 125-joint chain builds, a 140-joint one does not)
FRAMES_PER_LEVEL = 8


def max_depth() -> int:
    """The most movable joints on one path from the base that jaxsim's builder takes now."""
    return sys.getrecursionlimit() // FRAMES_PER_LEVEL


def size_problem(model: object) -> str | None:
    """Why jaxsim's engine refuses ``model`` (None: it takes it): a path from the base with more
    movable joints than :func:`max_depth` (fixed joints are merged before jaxsim sees the tree)."""
    model = getattr(model, "full", None) or model
    depth = {model.base: 0}
    for joint in model.depth_first_joints:
        depth[joint.child] = depth[joint.parent] + (1 if joint.movable else 0)
    deepest = max(depth, key=depth.__getitem__)
    limit = max_depth()
    if depth[deepest] <= limit:
        return None
    return (
        f"jaxsim's model builder recurses once per level of the tree and takes at most {limit} movable "
        f"joints on one path under Python's recursion limit ({sys.getrecursionlimit()}); model "
        f"{model.name!r} has {depth[deepest]} on the path to link {deepest!r}"
    )
