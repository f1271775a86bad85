"""Writing a neutral model as SDFormat (:func:`model_to_sdf`).

Reading SDFormat is :mod:`bridge.model.sdf`'s job; this module only writes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from bridge.errors import UnsupportedError
from bridge.model.building import require_finite_numbers
from bridge.model.mimic import require_uncoupled
from bridge.model.model import Joint, JointKind, Model
from bridge.model.sdf_document import BRIDGE_NAMESPACE, DRAKE_NAMESPACE, WORLD, valid_sdf_name
from bridge.model.urdf_writer import INERTIA_ATTRIBUTES, _fmt, _unique
from bridge.spatial import SpatialInertia, Transform

__all__ = ["SDF_VERSION", "WORLD_JOINT", "model_to_sdf", "sdf_names"]

#: the SDFormat version written (``relative_to`` and ``<frame attached_to>`` need 1.7 or later)
SDF_VERSION = "1.9"
#: the name of the fixed joint welding a fixed base to the world
WORLD_JOINT = "world_joint"
#: bridge's attribute giving an element's own name where its SDF name differs
NAME_ATTRIBUTE = f"{{{BRIDGE_NAMESPACE}}}name"
#: ``bridge:armature`` on a ball joint: its armature (Drake's rotor inertia moves one coordinate)
ARMATURE_ATTRIBUTE = f"{{{BRIDGE_NAMESPACE}}}armature"
#: ``bridge:free_joint`` on a free body's link: the name of the free joint it hangs from
FREE_JOINT_ATTRIBUTE = f"{{{BRIDGE_NAMESPACE}}}free_joint"
#: ``<bridge:dofs>`` of ``<bridge:dof name=...>``: the DOF order, where the joints' document order
#: cannot give it (free bodies have no joint element)
DOFS_TAG, DOF_TAG = f"{{{BRIDGE_NAMESPACE}}}dofs", f"{{{BRIDGE_NAMESPACE}}}dof"
#: bridge's attribute marking a link of :attr:`bridge.Model.synthetic_links`
SYNTHETIC_ATTRIBUTE = f"{{{BRIDGE_NAMESPACE}}}synthetic"


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


def _named(parent: ET.Element, tag: str, name: str, own: str, **attrs: str) -> ET.Element:
    """``<tag name=name>`` with ``bridge:name=own`` when the element's own name differs."""
    el = ET.SubElement(parent, tag, name=name, **attrs)
    if own != name:
        el.set(NAME_ATTRIBUTE, own)
    return el


def _write_link(
    model_el: ET.Element, names: _Names, name: str, inertia: SpatialInertia, joint: Joint | None
) -> None:
    """A link; below a joint its pose is relative to the joint frame (the joint's axis origin in
    the link's axes, so the link sits at ``-axis_origin`` from it); a free body (a free joint: no
    SDFormat joint) at the joint's rest pose relative to its parent link."""
    el = _named(model_el, "link", names.link(name), name)
    if name in names.synthetic:  # a link bridge made when it read the model (e.g. an MJCF body's chain)
        el.set(SYNTHETIC_ATTRIBUTE, "true")
    if joint is not None and joint.kind is JointKind.FREE:
        _pose(el, joint.parent_H_child, names.link(joint.parent))
        el.set(FREE_JOINT_ATTRIBUTE, joint.name)
    elif joint is not None:
        _pose(el, Transform.from_translation(-_centre(joint)), names.joint(joint.name))
    _write_inertial(el, inertia)


def _centre(j: Joint) -> np.ndarray:
    """Where the joint frame sits in the child: a revolute joint's axis origin, a ball's centre."""
    return j.axis_origin if j.kind.rotational or j.kind is JointKind.BALL else np.zeros(3)


def _write_joint(model_el: ET.Element, names: _Names, j: Joint) -> None:
    """A joint whose frame is the child link's frame moved to the axis origin (child axes), posed
    relative to the parent link; the axis is expressed in the joint frame (a ball joint has none)."""
    kind = j.kind.value if j.movable else "fixed"
    el = _named(model_el, "joint", names.joint(j.name), j.name, type=kind)
    _pose(el, j.parent_H_child @ Transform.from_translation(_centre(j)), names.link(j.parent))
    _text(el, "parent", names.link(j.parent))
    _text(el, "child", names.link(j.child))
    if j.kind is JointKind.BALL and j.armature != 0.0:  # (no SDFormat or Drake element: bridge's)
        el.set(ARMATURE_ATTRIBUTE, repr(float(j.armature)))
    if not j.movable or j.kind is JointKind.BALL:
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


def _check_writable(model: Model) -> None:
    """UnsupportedError naming the joints SDFormat has no way to write: planar joints, free joints
    but on a fixed base (a free body is a link without a joint, free in the world)."""
    planar = [j.name for j in model.joints if j.kind is JointKind.PLANAR]
    if planar:
        raise UnsupportedError(
            f"model {model.name!r}: SDFormat has no planar joint type (joints {planar}; Drake's "
            "<drake:joint type='planar'> takes no pose: it would move the links)"
        )
    below = model.floating
    free = [j.name for j in model.joints if j.kind is JointKind.FREE and (below or j.parent != model.base)]
    if free:
        where = "on a floating base" if model.floating else "below the fixed base"
        raise UnsupportedError(
            f"model {model.name!r}: SDFormat has no free joint type; a free body is a link without a joint, "
            f"free in the world, which free joints {where} are not (joints {free}; only free joints "
            "from a fixed base are written, as such links)"
        )


class _Names:
    """The SDF name of every link, joint and frame (:func:`sdf_names`)."""

    def __init__(self, model: Model) -> None:
        self.links, self.joints, self.frames = sdf_names(model)
        self.synthetic = model.synthetic_links

    def link(self, name: str) -> str:
        return self.links[name]

    def joint(self, name: str) -> str:
        return self.joints[name]

    def frame(self, name: str) -> str:
        return self.frames[name]


def _sdf_form(name: str) -> str:
    """``name`` made a valid SDF name: blanks around it dropped, ``::`` (SDFormat's scope
    separator) as ``__``, a reserved name (``world``, ``__*__``) or an empty one changed."""
    out = name.strip().replace("::", "__")
    if not out:
        return "unnamed"
    if out.startswith("__") and out.endswith("__"):
        out = "n" + out
    return out + "_" if out == WORLD else out


def sdf_names(model: Model) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """``(links, joints, frames)``: the SDF name of each link, joint and extra frame of ``model``.

    SDFormat gives links, joints and frames one namespace per model and reserves ``world``,
    ``__*__`` and ``::``; URDF and MJCF allow a link and a joint of the same name (robosuite's GR1,
    pybullet's minitaur), and a fixed-base MJCF model's base is its world body ``world``. Every
    name that is a valid SDF name and not yet taken is kept (links first, then joints, then
    frames); the others get a valid unique name (:func:`_sdf_form`, then ``_`` appended)."""
    links: dict[str, str] = {}
    joints: dict[str, str] = {}
    frames: dict[str, str] = {}
    order = [
        *((links, n) for n in model.link_names),
        *((joints, n) for n in model.joint_names),
        *((frames, f.name) for f in model.frames),
    ]
    taken: set[str] = {WORLD, WORLD_JOINT}
    rest = []
    for table, name in order:
        if valid_sdf_name(name) and name not in taken:
            table[name] = name
            taken.add(name)
        else:
            rest.append((table, name))
    for table, name in rest:
        table[name] = _unique(_sdf_form(name), taken)
    return links, joints, frames


def model_to_sdf(model: Model) -> str:
    """SDFormat text (version :data:`SDF_VERSION`) of ``model``: one ``<model>`` with the same
    dynamics, which :func:`bridge.load_sdf` reads back as the same model (links, joints, inertias,
    frames, armature, gravity, names, base, DOF order; a prismatic joint's axis origin, which does
    not change its motion, is not kept).

    What is written:

    * Links come in ``model.links`` order; the base link is the model's canonical link (at the
      model frame). A fixed base is welded to the world by a fixed joint :data:`WORLD_JOINT`
      (``<parent>world</parent>``, the base as child, at the model frame), read back as a fixed
      base; a floating base has no joint to the world (SDFormat's free body). The world body of a
      fixed-base MJCF model (a massless base link ``world``) is such a base, under an SDF name
      (``world`` is reserved) with ``bridge:name="world"``.
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
      (Drake adds ``rotor_inertia * gear_ratio**2`` to the mass matrix of an actuated joint: one
      whose effort limit is not 0); :func:`bridge.load_sdf` reads it back, other readers ignore it.
    * Names: SDFormat gives links, joints and frames one namespace and reserves ``world``,
      ``__*__`` and ``::``; a name that is not a valid unique SDF name (a link and a joint of the
      same name, as URDF and MJCF allow; blanks around a name) gets one (:func:`sdf_names`) and
      keeps its own as the attribute ``bridge:name`` (namespace
      :data:`bridge.model.sdf_document.BRIDGE_NAMESPACE`), which :func:`bridge.load_sdf` reads
      back; other readers (Drake, libsdformat) ignore it and see valid SDF names. The model's
      :attr:`~bridge.Model.synthetic_links` carry ``bridge:synthetic="true"``.
    * A ball joint is ``<joint type="ball">`` whose frame sits at its centre (child axes), no axis;
      its armature, which SDFormat and Drake's rotor inertia (single-DOF joints) cannot hold, is the
      joint's ``bridge:armature`` (read back by :func:`bridge.load_sdf`, ignored by other readers).
    * SDFormat has no free joint: a free body is a link without a joint (Drake's parser gives it a
      floating joint named after the link, and so does :func:`bridge.load_sdf` for a file that does
      not say otherwise: bridge writes the joint's name as the link's ``bridge:free_joint``, and the
      DOF order, free joints' included, as ``<bridge:dofs>``). A free joint from
      the fixed base is written so, the link posed at the joint's rest pose relative to the base;
      the reloaded model's free joint is named after its link. Planar joints (no SDFormat type;
      Drake's ``<drake:joint type="planar">`` takes no pose) and free joints elsewhere are refused
      with a :class:`bridge.UnsupportedError` naming them.
    * Gravity: a model with a :attr:`~bridge.Model.gravity` is written inside a ``<world>`` with
      that ``<gravity>`` (SDFormat keeps gravity in the world; Drake's parser ignores it); without
      one, a bare ``<model>``.

    * A joint named like a link or a frame (URDF allows it, SDFormat does not) is written as
      ``<name>__joint``, with a :class:`bridge.SDFWarning` naming it.

    A coupled model (``mimic="coupled"``) raises :class:`bridge.UnsupportedError` (write
    ``model.full``), a non-finite joint limit :class:`bridge.InvalidValueError`. Numbers are
    written with ``repr`` (the shortest text that reads back as the same double); a pose's rotation
    is roll-pitch-yaw, exact to rounding.
    """
    require_uncoupled(model, "SDFormat files written by bridge")
    require_finite_numbers(model, "SDFormat")
    _check_writable(model)
    names = _Names(model)
    ET.register_namespace("drake", DRAKE_NAMESPACE)
    ET.register_namespace("bridge", BRIDGE_NAMESPACE)
    sdf = ET.Element("sdf", version=SDF_VERSION)
    scope = sdf
    if model.gravity is not None:
        scope = ET.SubElement(sdf, "world", name="default")
        _text(scope, "gravity", model.gravity)
    own_name = model.name or "model"
    model_el = _named(scope, "model", _sdf_form(own_name), own_name, canonical_link=names.link(model.base))
    model_el.append(
        ET.Comment(
            f" written by bridge: base link {model.base!r}, "
            f"{'floating' if model.floating else 'fixed'} base, DOFs in document order "
        )
    )
    if not model.floating:
        weld = ET.SubElement(model_el, "joint", name=WORLD_JOINT, type="fixed")
        _pose(weld, Transform.identity(), "__model__")
        _text(weld, "parent", WORLD)
        _text(weld, "child", names.link(model.base))
    parent_joint = {j.child: j for j in model.joints}
    for link in model.links:  # in the model's order (the base at the model frame, wherever it is)
        _write_link(model_el, names, link.name, link.inertia, parent_joint.get(link.name))
    for j in model.movable_joints:
        if j.kind is not JointKind.FREE:  # (a free body: its link without a joint)
            _write_joint(model_el, names, j)
    if any(j.kind is JointKind.FREE for j in model.joints):  # (the order of the DOFs, free bodies' too)
        dofs = ET.SubElement(model_el, DOFS_TAG)
        for d in model.dof_names:
            ET.SubElement(dofs, DOF_TAG, name=d)
    for j in model.joints:
        if not j.movable:
            _write_joint(model_el, names, j)
    for f in model.frames:
        frame = _named(model_el, "frame", names.frame(f.name), f.name, attached_to=names.link(f.link))
        _pose(frame, f.link_H_frame, names.link(f.link))
    ET.indent(sdf)
    return '<?xml version="1.0"?>\n' + ET.tostring(sdf, encoding="unicode") + "\n"
