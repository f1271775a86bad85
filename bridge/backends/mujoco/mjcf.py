"""Write a neutral model as an MJCF file: the model :func:`~bridge.backends.mujoco.model.to_mujoco`
compiles, with every number exact.

``MjSpec.to_xml()`` prints numbers with too few digits (MuJoCo on such a file differs from the model
by 1e-8 to 8e-7 relative in M), so :func:`to_mjcf` writes the XML itself from the same body plan
(:mod:`bridge.backends.mujoco.bodies`), every float as Python's shortest repr, which parses back to
the same double: bodies (a chain of massless links as one body with several joints), explicit
inertials (mass, centre of mass, principal moments and their axes), hinge and slide joints with
``pos``, ``axis``, ``armature`` and their limits as ``range``, ball joints (``pos`` the centre), free
joints and a planar joint's slides and hinge as :func:`~bridge.backends.mujoco.bodies.mujoco_joints`
gives them, every other link and extra frame as a site, a floating base as a free joint. No geoms
(so no meshes and no contacts): the file is the rigid-body model. The compiler options keep it
exact (no inertia from geoms, fusing, balancing or bounds).
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from bridge.backends.mujoco.bodies import BodyPlan, Inertias, body_inertia, mujoco_joints
from bridge.backends.mujoco.model import FREE_JOINT, mujoco_body_name, mujoco_spec
from bridge.model.building import unique_name
from bridge.model.gravity import gravity_or
from bridge.model.model import Model
from bridge.spatial import Transform

__all__ = ["to_mjcf"]

_COMPILER = (
    '<compiler angle="radian" autolimits="false" inertiafromgeom="false" fusestatic="false" '
    'balanceinertia="false" boundmass="0" boundinertia="0"/>'
)


def _num(values: Any) -> str:
    """Floats separated by spaces, each as its shortest exact repr."""
    return " ".join(repr(float(x)) for x in np.ravel(values))


def _pose(H: Transform) -> str:
    return f'pos="{_num(H.translation)}" quat="{_num(H.as_quaternion_wxyz())}"'


def _joint_lines(b: BodyPlan) -> list[str]:
    lines = []
    for bj in b.joints:
        for mj in mujoco_joints(bj):
            attrs = f'name={quoteattr(mj.name)} type="{mj.type}"'
            if mj.type in ("hinge", "slide"):
                attrs += f' axis="{_num(mj.axis)}"'
            if mj.type != "free":
                attrs += f' pos="{_num(mj.pos)}"'
            if mj.armature:
                attrs += f' armature="{_num(mj.armature)}"'
            if mj.limits is not None:
                attrs += f' limited="true" range="{_num(mj.limits)}"'
            lines.append(f"<joint {attrs}/>")
    return lines


def _body_lines(b: BodyPlan, moving: bool, acc: Inertias, extra: list[str]) -> list[str]:
    """The elements inside body ``b``: ``extra`` (a free joint), its inertial, joints and sites."""
    mass, com, iquat, lam = body_inertia(b.link, moving, acc)
    inertial = (
        f'<inertial pos="{_num(com)}" quat="{_num(iquat)}" mass="{_num(mass)}" diaginertia="{_num(lam)}"/>'
    )
    return [*extra, inertial, *_joint_lines(b)]


def to_mjcf(
    model: Model,
    gravity: object = None,
    *,
    bound_mass: float = 0.0,
    bound_inertia: float = 0.0,
    balance_inertia: bool = False,
) -> str:
    """MJCF text of ``model``: the model :func:`to_mujoco` builds with the same arguments (which it
    refuses and warns about likewise), every number written exactly (see the module docstring).

    ``gravity`` (3,) is written as ``<option gravity>``; None (the default): the model's
    (:attr:`bridge.Model.gravity`, its file's), else ``(0, 0, -9.81)``. Arguments of the wrong type
    (``bound_mass=True``), non-finite gravity and non-finite joint limits raise
    :class:`bridge.InvalidValueError` (nothing is written); every argument is checked as
    :func:`to_mujoco` checks it (a BridgeError naming it)."""
    _, plan, acc = mujoco_spec(  # (checks the model and every argument)
        model,
        gravity,
        bound_mass=bound_mass,
        bound_inertia=bound_inertia,
        balance_inertia=balance_inertia,
        stacklevel=2,
        what="to_mjcf",
    )
    gravity = np.asarray(gravity_or(gravity, model), dtype=float)
    links = set(model.link_names)
    children: dict[str | None, list[BodyPlan]] = {}
    for b in plan.bodies:
        children.setdefault(plan.mujoco_parent(b), []).append(b)
    sites: dict[str, list[str]] = {}
    for f in plan.sites:
        sites.setdefault(f.link, []).append(f"<site name={quoteattr(f.name)} {_pose(f.link_H_frame)}/>")
    free = [f"<freejoint name={quoteattr(unique_name(FREE_JOINT, set(model.joint_names), '_'))}/>"]

    def write(b: BodyPlan, depth: int) -> list[str]:
        pad = "  " * depth
        root = b.parent is None
        head = f"{pad}<body name={quoteattr(mujoco_body_name(b.link.name, links))} {_pose(b.rest)}>"
        inner = _body_lines(b, not root or model.floating, acc, free if root and model.floating else [])
        inner += sites.get(b.link.name, [])
        lines = [head] + [f"{pad}  {x}" for x in inner]
        for c in children.get(b.link.name, []):
            lines += write(c, depth + 1)
        return [*lines, f"{pad}</body>"]

    body = [line for b in children[None] for line in write(b, 2)]  # (a scene's free bodies hoisted)
    return "\n".join(
        [
            f"<mujoco model={quoteattr(model.name)}>",
            f"  {_COMPILER}",
            f'  <option gravity="{_num(gravity)}"/>',
            "  <worldbody>",
            *body,
            "  </worldbody>",
            "</mujoco>",
            "",
        ]
    )
