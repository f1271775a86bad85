"""Small helpers the model converters share to build a neutral :class:`~bridge.model.model.Model`.

Each library's converter (``bridge.backends.<lib>.model``) reads its own data structures; what it
then does with the numbers is often the same job: pick the neutral kind of a 1-DOF joint from
its position limits, read a "no limit" sentinel as None, find a free name. Those jobs live here,
in the neutral model layer, so the converters share one definition.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from bridge.model.model import Joint, JointKind, JointLimits, Model
from bridge.spatial import Transform

__all__ = ["finite_limit", "joints_named_apart", "movable_joint", "unique_name"]


def finite_limit(value: float, infinite: float) -> float | None:
    """``value`` as a limit: None when it is not finite or its magnitude reaches ``infinite`` (the
    library's "no limit" sentinel, e.g. ``DBL_MAX`` or ``1e300``)."""
    return float(value) if np.isfinite(value) and abs(value) < infinite else None


def movable_joint(
    name: str,
    parent: str,
    child: str,
    parent_H_child: Transform,
    *,
    prismatic: bool,
    axis: np.ndarray,
    axis_origin: np.ndarray,
    limits: JointLimits,
    armature: float = 0.0,
) -> Joint:
    """A 1-DOF neutral joint read from a library that has one revolute type for both neutral kinds.

    The kind is PRISMATIC for a ``prismatic`` joint, else REVOLUTE when ``limits`` has a lower or
    an upper position limit and CONTINUOUS when it has neither. ``parent_H_child`` (4x4) is the rest
    pose; ``axis`` (3,) and ``axis_origin`` (3,) are in child coordinates.
    """
    if prismatic:
        kind = JointKind.PRISMATIC
    elif limits.lower is not None or limits.upper is not None:
        kind = JointKind.REVOLUTE
    else:
        kind = JointKind.CONTINUOUS
    return Joint(
        name,
        kind,
        parent,
        child,
        parent_H_child,
        axis=axis,
        axis_origin=axis_origin,
        limits=limits,
        armature=armature,
    )


def unique_name(name: str, taken: set[str] | frozenset[str], suffix: str) -> str:
    """``name``, with ``suffix`` appended as many times as needed for it not to be in ``taken``
    (``taken`` is not changed)."""
    while name in taken:
        name += suffix
    return name


#: the suffix :func:`joints_named_apart` gives a joint named like a link or frame
JOINT_SUFFIX = "__joint"


def joints_named_apart(model: Model) -> tuple[Model, dict[str, str]]:
    """``(model with each joint named like a link or frame renamed, {old name: new name})``: what a
    format with one namespace for links, joints and frames needs (SDFormat, jaxsim; URDF and MJCF
    keep them apart). A renamed joint is ``<name>__joint`` (with ``__joint`` repeated until free);
    the DOF order keeps the renamed joints in place. ``(model, {})`` when every name differs."""
    taken = set(model.frame_names) | set(model.link_names)
    clashing = [j.name for j in model.joints if j.name in taken]
    if not clashing:
        return model, {}
    used = taken | set(model.joint_names)
    renamed: dict[str, str] = {}
    for name in clashing:
        renamed[name] = unique_name(name + JOINT_SUFFIX, used, JOINT_SUFFIX)
        used.add(renamed[name])
    joints = tuple(dataclasses.replace(j, name=renamed.get(j.name, j.name)) for j in model.joints)
    dofs = tuple(renamed.get(d, d) for d in model.dof_names)
    return model.replace(joints=joints, dof_names=dofs), renamed
