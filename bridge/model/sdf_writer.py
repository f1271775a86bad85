"""Writing a neutral model as SDFormat (:func:`model_to_sdf`).

Reading SDFormat is :mod:`bridge.model.sdf`'s job; this module only writes.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np

from bridge.errors import SDFWarning, UnsupportedError
from bridge.model.building import joints_named_apart
from bridge.model.mimic import require_uncoupled
from bridge.model.model import Joint, JointKind, Model
from bridge.model.urdf_writer import INERTIA_ATTRIBUTES, _fmt, _unique
from bridge.spatial import SpatialInertia, Transform

__all__ = ["SDF_VERSION", "WORLD_JOINT", "model_to_sdf"]

#: the SDFormat version written (``relative_to`` and ``<frame attached_to>`` need 1.7 or later)
SDF_VERSION = "1.9"
#: the name of the fixed joint welding a fixed base to the world
WORLD_JOINT = "world_joint"
#: Drake's XML namespace, for ``<drake:rotor_inertia>`` (joint armature)
DRAKE_NAMESPACE = "http://drake.mit.edu"


def _pose(parent: ET.Element, T: Transform, relative_to: str | None) -> None:
    """``<pose relative_to=...>x y z roll pitch yaw</pose>`` of ``T`` (``relative_to`` None: the
    default frame of the element)."""
    el = (
        ET.SubElement(parent, "pose", relative_to=relative_to)
        if relative_to
        else ET.SubElement(parent, "pose")
    )
    el.text = _fmt(np.concatenate([T.translation, T.as_rpy()]))


def _text(parent: ET.Element, tag: str, value: object) -> ET.Element:
    el = ET.SubElement(parent, tag)
    el.text = value if isinstance(value, str) else _fmt(value)
    return el


def _write_inertial(link: ET.Element, inertia: SpatialInertia) -> None:
    """The link's ``<inertial>``: centre-of-mass pose (link axes), mass and the inertia about the
    centre of mass, written even when zero (SDFormat's default for a missing ``<inertial>`` is a
    unit mass)."""
    inertial = ET.SubElement(link, "inertial")
    _pose(inertial, Transform.from_translation(inertia.com), None)
    _text(inertial, "mass", float(inertia.mass))
    I3 = inertia.inertia_com
    moments = ET.SubElement(inertial, "inertia")
    for a in INERTIA_ATTRIBUTES:
        _text(moments, a, float(I3["xyz".index(a[1]), "xyz".index(a[2])]))


def _write_link(model_el: ET.Element, name: str, inertia: SpatialInertia, joint: Joint | None) -> None:
    """A link; below a joint its pose is relative to the joint frame (the joint's axis origin in
    the link's axes, so the link sits at ``-axis_origin`` from it)."""
    el = ET.SubElement(model_el, "link", name=name)
    if joint is not None:
        origin = joint.axis_origin if joint.kind.rotational else np.zeros(3)
        _pose(el, Transform.from_translation(-origin), joint.name)
    _write_inertial(el, inertia)


def _write_joint(model_el: ET.Element, j: Joint) -> None:
    """A joint whose frame is the child link's frame moved to the axis origin (child axes), posed
    relative to the parent link; the axis is expressed in the joint frame."""
    kind = j.kind.value if j.movable else "fixed"
    el = ET.SubElement(model_el, "joint", name=j.name, type=kind)
    origin = j.axis_origin if j.kind.rotational else np.zeros(3)
    _pose(el, j.parent_H_child @ Transform.from_translation(origin), j.parent)
    _text(el, "parent", j.parent)
    _text(el, "child", j.child)
    if not j.movable:
        return
    axis = ET.SubElement(el, "axis")
    _text(axis, "xyz", j.axis)
    limits = j.limits
    values = {"lower": limits.lower, "upper": limits.upper} if j.kind is not JointKind.CONTINUOUS else {}
    values |= {"effort": limits.effort, "velocity": limits.velocity}
    values = {k: v for k, v in values.items() if v is not None}
    if values:
        limit = ET.SubElement(axis, "limit")
        for k, v in values.items():
            _text(limit, k, float(v))
    if j.armature != 0.0:  # Drake's reflected rotor inertia: rotor_inertia * gear_ratio**2
        _text(el, f"{{{DRAKE_NAMESPACE}}}rotor_inertia", j.armature)
        _text(el, f"{{{DRAKE_NAMESPACE}}}gear_ratio", 1.0)


def model_to_sdf(model: Model) -> str:
    """SDFormat text (version :data:`SDF_VERSION`) of ``model``: one ``<model>`` with the same
    dynamics.

    What is written:

    * The base link is the model's canonical link (first, at the model frame). A fixed base is
      welded to the world by a fixed joint :data:`WORLD_JOINT` (``world`` to the base, at the model
      frame); a floating base has no joint to the world (SDFormat's free body).
    * Links carry ``<inertial>`` always (the centre-of-mass pose in link axes, the mass, the six
      moments about the centre of mass), zero for a massless link: SDFormat's default for a link
      without ``<inertial>`` is a unit mass.
    * Each joint's frame is the child link frame moved to the joint's axis origin (child axes): its
      pose is ``relative_to`` the parent link (``parent_H_child_rest @ Trans(axis_origin)``), the
      child link's pose is ``relative_to`` the joint (``Trans(-axis_origin)``) and the axis is
      expressed in the joint frame. At position ``s`` this gives bridge's
      ``rest @ Trans(o) @ Rot(axis, s) @ Trans(-o)`` (docs of :mod:`bridge.model.model`), with no
      helper link. These are the poses SDFormat calls the URDF convention, the one jaxsim needs.
    * Movable joints come first, in ``model.dof_names`` order, then fixed and locked joints (at the
      locked position), then extra frames as ``<frame attached_to=link>`` posed relative to the link.
    * Limits that are set are written (no position limits on a continuous joint).
    * Joint armature is written as Drake's ``<drake:rotor_inertia>`` with ``<drake:gear_ratio>`` 1
      (Drake adds ``rotor_inertia * gear_ratio**2`` to the mass matrix); other SDFormat readers
      ignore the element.

    * A joint named like a link or a frame (URDF allows it, SDFormat does not) is written as
      ``<name>__joint``, with a :class:`bridge.SDFWarning` naming it.

    A coupled model (``mimic="coupled"``) raises :class:`bridge.UnsupportedError` (write
    ``model.full``), and so does a link, frame or joint named ``world`` or ``__...`` (names SDFormat
    reserves). Numbers are written with ``repr`` (the shortest text that reads back as the same
    double); a pose's rotation is roll-pitch-yaw, exact to rounding.
    """
    require_uncoupled(model, "SDFormat files written by bridge")
    reserved = [n for n in (*model.frame_names, *model.joint_names) if n == "world" or n.startswith("__")]
    if reserved:
        raise UnsupportedError(
            f"model {model.name!r}: SDFormat reserves the names 'world' and '__*__' (e.g. '__model__'), "
            f"used here by {reserved}; a URDF root link 'world' is the world: reload with "
            "base=<its child> and floating=False, or rename it"
        )
    model, renamed = joints_named_apart(model)
    if renamed:  # (URDF keeps link and joint names apart, SDFormat does not: load_sdf would refuse)
        pairs = ", ".join(f"{old!r} as {new!r}" for old, new in renamed.items())
        warnings.warn(
            f"model {model.name!r}: SDFormat needs link, joint and frame names to differ: joints "
            f"named like a link or frame are written renamed: {pairs}",
            SDFWarning,
            stacklevel=3,
        )
    ET.register_namespace("drake", DRAKE_NAMESPACE)
    sdf = ET.Element("sdf", version=SDF_VERSION)
    model_el = ET.SubElement(sdf, "model", name=model.name or "model", canonical_link=model.base)
    model_el.append(
        ET.Comment(
            f" written by bridge: base link {model.base!r}, "
            f"{'floating' if model.floating else 'fixed'} base, DOFs in document order "
        )
    )
    links = {link.name: link for link in model.links}
    parent_joint = {j.child: j for j in model.joints}
    _write_link(model_el, model.base, links[model.base].inertia, None)
    if not model.floating:
        used = set(model.joint_names) | set(model.frame_names)
        weld = ET.SubElement(model_el, "joint", name=_unique(WORLD_JOINT, used), type="fixed")
        _pose(weld, Transform.identity(), "__model__")
        _text(weld, "parent", "world")
        _text(weld, "child", model.base)
    for link in model.links:
        if link.name != model.base:
            _write_link(model_el, link.name, link.inertia, parent_joint[link.name])
    for j in model.movable_joints:
        _write_joint(model_el, j)
    for j in model.joints:
        if not j.movable:
            _write_joint(model_el, j)
    for f in model.frames:
        frame = ET.SubElement(model_el, "frame", name=f.name, attached_to=f.link)
        _pose(frame, f.link_H_frame, f.link)
    ET.indent(sdf)
    return '<?xml version="1.0"?>\n' + ET.tostring(sdf, encoding="unicode") + "\n"
