"""Writing a neutral model as URDF (:func:`model_to_urdf`); reading is :mod:`bridge.model.urdf`."""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np

from bridge.errors import BridgeWarning
from bridge.model.building import require_finite_numbers
from bridge.model.model import Joint, JointLimits, Model
from bridge.spatial import DEFAULT_GRAVITY, SpatialInertia, Transform

__all__ = ["model_to_urdf"]

#: the six attributes of a URDF <inertia>
INERTIA_ATTRIBUTES = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _fmt(values: object) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(values, dtype=float).reshape(-1))


def _write_origin(parent: ET.Element, T: Transform) -> None:
    ET.SubElement(parent, "origin", xyz=_fmt(T.translation), rpy=_fmt(T.as_rpy()))


def _write_link(robot: ET.Element, name: str, inertia: SpatialInertia | None) -> None:
    el = ET.SubElement(robot, "link", name=name)
    if inertia is None or not np.any(inertia.parameters != 0.0):
        return  # massless: no <inertial>
    inertial = ET.SubElement(el, "inertial")
    # the centre-of-mass frame is parallel to the link frame: the rotational inertia is written as is
    ET.SubElement(inertial, "origin", xyz=_fmt(inertia.com), rpy="0.0 0.0 0.0")
    ET.SubElement(inertial, "mass", value=repr(float(inertia.mass)))
    I3 = inertia.inertia_com
    moments = {a: repr(float(I3["xyz".index(a[1]), "xyz".index(a[2])])) for a in INERTIA_ATTRIBUTES}
    ET.SubElement(inertial, "inertia", **moments)


def _write_joint(
    robot: ET.Element,
    name: str,
    kind: str,
    parent: str,
    child: str,
    T: Transform,
    axis: np.ndarray | None = None,
    limits: JointLimits | None = None,
) -> None:
    el = ET.SubElement(robot, "joint", name=name, type=kind)
    _write_origin(el, T)
    ET.SubElement(el, "parent", link=parent)
    ET.SubElement(el, "child", link=child)
    if axis is not None:
        ET.SubElement(el, "axis", xyz=_fmt(axis))
    limits = limits or JointLimits()
    if kind == "fixed" or (kind == "continuous" and limits.effort is None and limits.velocity is None):
        return
    attrs: dict[str, float] = {}
    if kind != "continuous":  # URDF has no position limits for continuous joints
        attrs = {k: getattr(limits, k) for k in ("lower", "upper") if getattr(limits, k) is not None}
    # urdfdom (Pinocchio) requires effort and velocity on revolute and prismatic joints
    attrs["effort"] = limits.effort if limits.effort is not None else 0.0
    attrs["velocity"] = limits.velocity if limits.velocity is not None else 0.0
    ET.SubElement(el, "limit", **{k: repr(float(v)) for k, v in attrs.items()})


def _unique(name: str, used: set[str]) -> str:
    out, k = name, 1
    while out in used:
        k += 1
        out = f"{name}{k}"
    used.add(out)
    return out


def _warn_armature(model: Model, stacklevel: int) -> ET.Comment | None:
    """The BridgeWarning naming the joints whose armature URDF cannot carry, if any (``stacklevel``
    as ``warnings.warn`` counts it from this function), and the file's comment saying the same
    with each joint's armature (None: no joint has one)."""
    with_armature = [j for j in model.joints if j.armature != 0.0]
    if not with_armature:
        return None
    names = [j.name for j in with_armature]
    warnings.warn(
        f"model {model.name!r}: URDF has no joint armature; left out for joints {names}",
        BridgeWarning,
        stacklevel=stacklevel,
    )
    values = ", ".join(f"{j.name}={j.armature!r}" for j in with_armature)
    text = f" URDF has no joint armature: left out for joints (name=armature) {values} "
    return ET.Comment(text.replace("--", "- -"))


def _write_movable(robot: ET.Element, j: Joint, link_names: set[str], joint_names: set[str]) -> None:
    """A movable joint; a rotational one whose axis misses the child origin (a non-zero axis
    origin) goes through a massless helper link ``<joint>__axis`` at the axis origin (child
    orientation) and a fixed joint ``<joint>__axis_fixed`` back to the child link frame."""
    o = j.axis_origin
    if j.kind.rotational and np.any(o != 0.0):
        helper = _unique(f"{j.name}__axis", link_names)
        _write_link(robot, helper, None)
        rest = j.parent_H_child @ Transform.from_translation(o)
        _write_joint(robot, j.name, j.kind.value, j.parent, helper, rest, j.axis, j.limits)
        back = Transform.from_translation(-o)
        _write_joint(robot, _unique(f"{j.name}__axis_fixed", joint_names), "fixed", helper, j.child, back)
    else:
        _write_joint(robot, j.name, j.kind.value, j.parent, j.child, j.parent_H_child, j.axis, j.limits)


def _joint_order(model: Model) -> tuple[Joint, ...]:
    """The joints in the order they are written (see :func:`model_to_urdf`)."""
    if tuple(j.name for j in model.joints if j.movable) == model.dof_names:
        return model.joints
    return (*model.movable_joints, *(j for j in model.joints if not j.movable))


def model_to_urdf(model: Model) -> str:
    """URDF text for ``model``; loading it back gives a model with the same dynamics.

    What is written, and what URDF makes necessary:

    * The base link is the URDF root (joints are already oriented away from it). Whether the base
      is floating is not part of URDF (pass ``floating=`` when loading).
    * Joints come in ``model.joints`` order when its movable joints are in ``model.dof_names``
      order (so the reloaded model has the same DOF order and the same order of sibling joints,
      hence the same depth-first body order, e.g. in MuJoCo); otherwise movable joints come first,
      in ``model.dof_names`` order, then fixed and locked joints. Extra frames come last. Either
      way the default DOF order of the reloaded model equals ``model.dof_names``.
    * URDF cannot express a rotation axis that does not pass through the child frame origin (a
      non-zero ``axis_origin``, as re-rooting creates). Such a revolute/continuous joint ``J`` is
      written as ``J`` from the parent to a massless helper link ``J__axis`` (placed at the axis
      origin, with the child's orientation; the axis is the same vector there), followed by a
      fixed joint ``J__axis_fixed`` from the helper link back to the child link frame. The helper
      link adds no inertia; the motion is the same:
      ``rest @ H(s) = (rest @ Trans(o)) @ Rot(axis, s) @ Trans(-o)``. For a prismatic joint the
      axis origin does not matter and no helper is written.
    * Locked joints are written as fixed joints at their locked position (the release information
      in :attr:`Joint.original` is lost).
    * Extra frames become massless links attached by fixed joints named ``<frame>__fixed``.
    * Links carry ``<inertial>`` with the centre-of-mass origin and zero rpy (the inertia about the
      centre of mass in link axes); links whose inertia is zero get no ``<inertial>``.
    * Limits that are not set are not written, except effort and velocity of revolute and prismatic
      joints (0, as urdfdom requires them).
    * A coupled model (``mimic="coupled"``) is written as its full model with a ``<mimic>`` element
      (master, multiplier, offset; chains resolved) on each mimic joint.
    * Joint armature has no URDF element (and a made-up extension would be read by no other
      parser): it is left out, with a :class:`bridge.BridgeWarning` naming the joints and a
      comment in the file naming them with their armature, so the reloaded model's mass matrix
      lacks ``diag(armature)``.

    * URDF has no gravity: the model's :attr:`~bridge.Model.gravity` (its file's, e.g. MJCF's
      ``<option gravity>``) is not written, and the reloaded model has none (bridge's default
      ``(0, 0, -9.81)``; pass ``gravity=`` to the engines, or write SDF or MJCF, which keep it);
      a gravity other than the default is left out with a :class:`bridge.BridgeWarning`.

    Helper names get a numeric suffix if they would clash with an existing name. Numbers are
    written with ``repr`` (shortest round-trip form), so nothing is rounded; a non-finite joint
    limit raises :class:`bridge.InvalidValueError` naming the joint.
    """
    require_finite_numbers(model, "URDF")
    mimics = tuple(getattr(model, "mimics", ()))
    if mimics:  # a coupled model: its full model, with the (resolved) relations as <mimic> elements
        model = model.full
    armature = _warn_armature(model, stacklevel=4)
    if model.gravity is not None and not np.array_equal(model.gravity, DEFAULT_GRAVITY):
        warnings.warn(
            f"model {model.name!r}: URDF has no gravity; the model's {model.gravity.tolist()} is left out "
            f"(the reloaded model has bridge's default {list(DEFAULT_GRAVITY)})",
            BridgeWarning,
            stacklevel=3,
        )
    robot = ET.Element("robot", name=model.name or "robot")
    robot.append(
        ET.Comment(
            f" written by bridge: base link {model.base!r}, "
            f"{'floating' if model.floating else 'fixed'} base, DOFs in document order "
        )
    )
    if armature is not None:
        robot.append(armature)
    link_names = set(model.link_names) | {f.name for f in model.frames}
    joint_names = set(model.joint_names)
    for link in model.links:
        _write_link(robot, link.name, link.inertia)
    for f in model.frames:
        _write_link(robot, f.name, None)
    for j in _joint_order(model):
        if j.movable:
            _write_movable(robot, j, link_names, joint_names)
        else:
            _write_joint(robot, j.name, "fixed", j.parent, j.child, j.parent_H_child)
    for f in model.frames:
        _write_joint(robot, _unique(f"{f.name}__fixed", joint_names), "fixed", f.link, f.name, f.link_H_frame)
    elements = {el.get("name"): el for el in robot.findall("joint")}
    for m in mimics:
        ET.SubElement(
            elements[m.joint], "mimic", joint=m.master, multiplier=repr(m.multiplier), offset=repr(m.offset)
        )
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
