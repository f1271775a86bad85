"""The SDFormat document read into plain records: the one ``<model>``, its links, joints and frames.

:func:`read_document` parses the XML with :mod:`xml.etree` and turns every problem into a
:class:`bridge.SDFError` (or :class:`bridge.UnsupportedError`) naming the file and the element:
malformed XML, no ``<sdf>`` root or version, no model, several models, ``<include>``\\ s, nested
models, static models, missing names or parents, unknown or unsupported joint types (screw,
gearbox, revolute2), numbers that do not parse. Numbers are read with SDFormat's defaults (a
``<pose>`` is identity, an axis ``0 0 1``, a ``<mass>`` 1, the moments ``ixx = iyy = izz = 1``, a link
without ``<inertial>`` has mass 1 and unit moments, as libsdformat and Drake read it).

What the records mean (pose resolution, the tree) is :mod:`bridge.model.sdf`'s job.

(``rod``, the pure-Python SDF library jaxsim uses, is not used to read: its 0.5 schema has no
``<axis2>`` (universal joints), no ``<mimic>``, no quaternion poses, refuses SDFormat before 1.7 and
raises bare ``AssertionError``\\ s on malformed numbers.)
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bridge._files import file_status, read_model_file
from bridge.errors import ModelFileNotFoundError, SDFError, UnsupportedError
from bridge.model.loading import inline_xml
from bridge.spatial import Transform

__all__ = [
    "SUPPORTED",
    "SdfAxis",
    "SdfDocument",
    "SdfFrame",
    "SdfJoint",
    "SdfLink",
    "read_document",
    "read_source",
]

SUPPORTED = ("revolute", "continuous", "prismatic", "fixed", "universal", "ball")
_UNSUPPORTED = ("screw", "gearbox", "revolute2")
#: largest magnitude of a length, mass or inertia read (as for URDF: beyond it products overflow)
MAX_MAGNITUDE = 1e100
#: an SDFormat limit at or beyond this magnitude means "no limit" (SDFormat's default is 1e16)
NO_LIMIT = 1e16
#: Drake's XML namespace (``<drake:rotor_inertia>``, ``<drake:gear_ratio>``: joint armature)
DRAKE_NAMESPACE = "http://drake.mit.edu"
#: bridge's XML namespace: ``bridge:name``, an element's own name where its SDF name differs
#: (written by ``to_sdf``)
BRIDGE_NAMESPACE = "urn:bridge-dynamics:sdf"
#: SDFormat's world frame
WORLD = "world"


_OWN_NAME = f"{{{BRIDGE_NAMESPACE}}}name"


def valid_sdf_name(name: str) -> bool:
    """Whether ``name`` is a valid SDFormat name of a link, joint or frame: not empty, no blanks
    around it, no ``::`` (the scope separator), not ``world`` nor reserved (``__*__``)."""
    return (
        bool(name)
        and name == name.strip()
        and "::" not in name
        and name != WORLD
        and not (name.startswith("__") and name.endswith("__"))
    )


@dataclass(frozen=True)
class Pose:
    """A ``<pose>``: ``relative_to_H_frame`` and the frame it is relative to ("" = the default)."""

    H: Transform
    relative_to: str = ""


@dataclass(frozen=True)
class SdfAxis:
    """An ``<axis>`` or ``<axis2>``: direction (3,) in the frame ``expressed_in`` ("" = the joint
    frame), position limits (None: none), and the ``<mimic>`` it carries (leader, multiplier, offset)."""

    xyz: np.ndarray
    expressed_in: str = ""
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None
    mimic: tuple[str, float, float] | None = None


@dataclass(frozen=True)
class SdfLink:
    name: str
    pose: Pose
    mass: float
    inertial_pose: Pose
    inertia: np.ndarray  # (3, 3) about the centre of mass, in the inertial frame's axes
    own_name: str = ""  # ``bridge:name``: the name in the model bridge wrote ("" = ``name``)
    synthetic: bool = False  # ``bridge:synthetic``: a link bridge made when it read the model
    free_joint: str = ""  # ``bridge:free_joint``: a free body's free joint ("" = named after the link)


@dataclass(frozen=True)
class SdfJoint:
    name: str
    type: str
    parent: str
    child: str
    pose: Pose
    axes: tuple[SdfAxis, ...] = ()
    #: Drake's reflected rotor inertia ``<drake:rotor_inertia> * <drake:gear_ratio>**2`` (0: none)
    armature: float = 0.0
    own_name: str = ""  # ``bridge:name``


@dataclass(frozen=True)
class SdfFrame:
    name: str
    attached_to: str
    pose: Pose
    own_name: str = ""  # ``bridge:name``


@dataclass
class SdfDocument:
    """The model of an SDFormat document: its records in document order."""

    where: str
    version: tuple[int, int]
    name: str
    pose: Pose
    canonical_link: str | None
    links: list[SdfLink] = field(default_factory=list)
    joints: list[SdfJoint] = field(default_factory=list)
    frames: list[SdfFrame] = field(default_factory=list)
    #: what a ``<world>`` around the model held besides it and its ``<gravity>`` (element tags), left out
    world_rest: list[str] = field(default_factory=list)
    #: the ``<gravity>`` (3,) of a ``<world>`` around the model; None when not stated
    gravity: np.ndarray | None = None
    #: ``bridge:name`` of the model (its own name where the SDF name differs; "" = ``name``)
    own_name: str = ""
    #: ``<bridge:dofs>``: the DOF order bridge wrote (own names; () = the joints' document order)
    dof_order: tuple[str, ...] = ()

    @property
    def own_names(self) -> dict[str, str]:
        """SDF name -> the element's own name (``bridge:name``), for the elements that have one."""
        return {x.name: x.own_name for x in (*self.links, *self.joints, *self.frames) if x.own_name}


# --------------------------------------------------------------------------- source
def read_source(path_or_xml: str | bytes | os.PathLike) -> tuple[bytes, str]:
    """(XML bytes, where they came from: the file path or ``<SDF string>``). A ``str`` starting with
    ``<`` (after white space) is the XML itself, any other ``str`` a path."""
    inline = inline_xml(path_or_xml, "SDF")
    if inline is not None:
        return inline
    if not isinstance(path_or_xml, (str, os.PathLike)):
        raise SDFError(f"load_sdf expects a file path or SDF XML text, got {type(path_or_xml).__name__}")
    if not os.fspath(path_or_xml).strip():
        raise ModelFileNotFoundError("SDF file name is empty (give a path or SDF text)")
    path = Path(path_or_xml)
    status = file_status(path, "SDF file")
    if status == "other":
        raise SDFError(f"{str(path)!r} is not a regular file (an SDF file is needed)")
    if status != "file":
        what = "is a directory, not an SDF file" if status == "directory" else "not found"
        raise ModelFileNotFoundError(f"SDF file {what}: {str(path)!r}")
    return read_model_file(path, "SDF file"), str(path)


# --------------------------------------------------------------------------- numbers
class _Reader:
    """Reads the numbers of one document; every error names ``where`` and the owner element."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, owner: str, message: str) -> SDFError:
        return SDFError(f"{self.where}: {owner}: {message}")

    def numbers(
        self, el: ET.Element, n: tuple[int, ...], owner: str, bounded: bool = True
    ) -> tuple[float, ...]:
        text = (el.text or "").strip()
        try:
            values = tuple(float(p) for p in text.split())
        except ValueError:
            values = ()
        if len(values) not in n or not all(math.isfinite(v) for v in values):
            count = " or ".join(map(str, n))
            raise self.fail(owner, f"<{el.tag}>{text}</{el.tag}> is not {count} finite numbers")
        if bounded and any(abs(v) > MAX_MAGNITUDE for v in values):
            raise self.fail(owner, f"<{el.tag}>{text}</{el.tag}> is beyond {MAX_MAGNITUDE:g} in magnitude")
        return values

    def number(self, parent: ET.Element, tag: str, default: float | None, owner: str, bounded: bool = True):
        el = parent.find(tag)
        if el is None:
            return default
        return self.numbers(el, (1,), owner, bounded)[0]

    def pose(self, parent: ET.Element, owner: str) -> Pose:
        poses = parent.findall("pose")
        if len(poses) > 1:
            raise self.fail(owner, f"{len(poses)} <pose> elements")
        if not poses:
            return Pose(Transform.identity())
        el = poses[0]
        fmt = el.get("rotation_format", "euler_rpy")
        if fmt not in ("euler_rpy", "quat_xyzw"):
            raise self.fail(owner, f"<pose rotation_format={fmt!r}> (SDFormat: euler_rpy or quat_xyzw)")
        if not (el.text or "").strip():
            return Pose(Transform.identity(), el.get("relative_to", ""))
        values = self.numbers(el, (7,) if fmt == "quat_xyzw" else (6,), owner)
        xyz = np.array(values[:3])
        if fmt == "quat_xyzw":
            q = np.array(values[3:])
            if np.linalg.norm(q) < 1e-12:
                raise self.fail(owner, f"<pose> has a zero quaternion {values[3:]}")
            H = Transform.from_quaternion_xyzw(q / np.linalg.norm(q), xyz)
        else:
            rpy = np.array(values[3:])
            if _flag(el.get("degrees", "false"), reader=self, owner=owner, what="<pose degrees>"):
                rpy = np.deg2rad(rpy)
            H = Transform.from_rpy(rpy, xyz)
        return Pose(H, el.get("relative_to", ""))


def _flag(text: str, *, reader: _Reader, owner: str, what: str) -> bool:
    """An SDFormat boolean as libsdformat reads it: ``true``/``1`` or ``false``/``0`` (any case,
    blanks around); anything else (``yes``, ``on``, ...) is an SDFError naming ``owner`` and
    ``what`` (libsdformat and Drake refuse it), never a silent False."""
    value = text.strip().lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise reader.fail(owner, f"{what} is {text!r}, not an SDFormat boolean (true, false, 1 or 0)")


# --------------------------------------------------------------------------- elements
def _name(el: ET.Element, reader: _Reader, what: str) -> str:
    name = el.get("name")
    if not name:
        raise SDFError(f"{reader.where}: a <{what}> element has no name")
    return name


def _link(el: ET.Element, reader: _Reader) -> SdfLink:
    name = _name(el, reader, "link")
    owner = f"link {name!r}"
    inertials = el.findall("inertial")
    if len(inertials) > 1:
        raise reader.fail(owner, f"{len(inertials)} <inertial> elements")
    inertial = inertials[0] if inertials else ET.Element("inertial")
    moments = {"ixx": 1.0, "iyy": 1.0, "izz": 1.0, "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}
    inertia_el = inertial.find("inertia")
    if inertia_el is not None:
        for key, default in moments.items():
            moments[key] = reader.number(inertia_el, key, default, owner)
    inertia = np.array(
        [
            [moments["ixx"], moments["ixy"], moments["ixz"]],
            [moments["ixy"], moments["iyy"], moments["iyz"]],
            [moments["ixz"], moments["iyz"], moments["izz"]],
        ]
    )
    mass = reader.number(inertial, "mass", 1.0, owner)
    return SdfLink(
        name,
        reader.pose(el, owner),
        mass,
        reader.pose(inertial, owner + " <inertial>"),
        inertia,
        el.get(_OWN_NAME, ""),
        _flag(
            el.get(f"{{{BRIDGE_NAMESPACE}}}synthetic", "false"), reader=reader, owner=owner, what="synthetic"
        ),
        el.get(f"{{{BRIDGE_NAMESPACE}}}free_joint", ""),
    )


def _axis(el: ET.Element | None, reader: _Reader, owner: str, version: tuple[int, int]) -> SdfAxis:
    """An ``<axis>`` (``el`` None: SDFormat's default, ``0 0 1`` in the joint frame)."""
    if el is None:
        return SdfAxis(np.array([0.0, 0.0, 1.0]))
    owner = f"{owner} <{el.tag}>"
    xyz_el = el.find("xyz")
    xyz, expressed_in = np.array([0.0, 0.0, 1.0]), ""
    if xyz_el is not None:
        xyz = np.array(reader.numbers(xyz_el, (3,), owner))
        expressed_in = xyz_el.get("expressed_in", "")
    if np.linalg.norm(xyz) < 1e-12:
        raise reader.fail(owner, f"a zero axis <xyz>{(xyz_el.text or '').strip()}</xyz>")
    if version < (1, 7) and _flag(
        el.findtext("use_parent_model_frame", "false"),
        reader=reader,
        owner=owner,
        what="<use_parent_model_frame>",
    ):
        expressed_in = "__model__"
    limit = el.find("limit")
    bounds = [None, None, None, None]
    if limit is not None:
        for k, tag in enumerate(("lower", "upper", "effort", "velocity")):
            bounds[k] = reader.number(limit, tag, None, owner, bounded=False)
    lower, upper, effort, velocity = bounds
    mimic = None
    mimic_el = el.find("mimic")
    if mimic_el is not None:
        leader = mimic_el.get("joint")
        if not leader:
            raise reader.fail(owner, "<mimic> has no joint attribute")
        multiplier = reader.number(mimic_el, "multiplier", 1.0, owner)
        offset = reader.number(mimic_el, "offset", 0.0, owner)
        reference = reader.number(mimic_el, "reference", 0.0, owner)
        mimic = (leader, multiplier, offset - multiplier * reference)
    return SdfAxis(
        xyz,
        expressed_in,
        lower=lower if lower is not None and abs(lower) < NO_LIMIT else None,
        upper=upper if upper is not None and abs(upper) < NO_LIMIT else None,
        effort=effort if effort is not None and effort >= 0 else None,  # SDFormat: -1 is no limit
        velocity=velocity if velocity is not None and velocity >= 0 else None,
        mimic=mimic,
    )


def _joint(el: ET.Element, reader: _Reader, version: tuple[int, int]) -> SdfJoint:
    name = _name(el, reader, "joint")
    owner = f"joint {name!r}"
    jtype = el.get("type")
    if not jtype:
        raise reader.fail(owner, "no type attribute")
    if jtype in _UNSUPPORTED:
        raise UnsupportedError(
            f"{reader.where}: {owner} has type {jtype!r}, which bridge does not support "
            f"(supported: {', '.join(SUPPORTED)})"
        )
    if jtype not in SUPPORTED:
        raise UnsupportedError(
            f"{reader.where}: {owner} has unknown type {jtype!r} (SDFormat joint types: "
            f"{', '.join(SUPPORTED + _UNSUPPORTED)})"
        )
    ends = []
    for tag in ("parent", "child"):
        text = (el.findtext(tag) or "").strip()
        if not text:
            raise reader.fail(owner, f"no <{tag}>")
        if "::" in text:
            raise UnsupportedError(
                f"{reader.where}: {owner}: <{tag}>{text}</{tag}> names an element of a nested model "
                "(bridge reads one model without nested models)"
            )
        ends.append(text)
    axes: tuple[SdfAxis, ...] = ()
    if jtype not in ("fixed", "ball"):  # (a ball joint turns about its frame's origin: no axis)
        axes = (_axis(el.find("axis"), reader, owner, version),)
        if jtype == "universal":
            axes += (_axis(el.find("axis2"), reader, owner, version),)
    pose = reader.pose(el, owner)
    return SdfJoint(
        name, jtype, ends[0], ends[1], pose, axes, _armature(el, reader, owner), el.get(_OWN_NAME, "")
    )


def _armature(el: ET.Element, reader: _Reader, owner: str) -> float:
    """A joint's armature from Drake's ``<drake:rotor_inertia>`` and ``<drake:gear_ratio>`` (default
    1): ``rotor_inertia * gear_ratio**2``, what Drake adds to the joint's diagonal entry of M (and
    what :func:`bridge.model.sdf_writer.model_to_sdf` writes, gear ratio 1); a ball joint's from
    ``bridge:armature``."""
    own = el.get(f"{{{BRIDGE_NAMESPACE}}}armature")
    if own is not None:  # a ball joint's (bridge's own attribute: no SDFormat or Drake element)
        try:
            value = float(own)
        except ValueError:
            raise reader.fail(owner, f"bridge:armature is {own!r}, not a number") from None
        if not (np.isfinite(value) and value >= 0.0):
            raise reader.fail(owner, f"bridge:armature is {own!r}, not a finite number >= 0")
        return value
    rotor = reader.number(el, f"{{{DRAKE_NAMESPACE}}}rotor_inertia", 0.0, owner)
    ratio = reader.number(el, f"{{{DRAKE_NAMESPACE}}}gear_ratio", 1.0, owner)
    if rotor < 0.0:
        raise reader.fail(owner, f"<drake:rotor_inertia> is {rotor!r}, negative")
    return rotor * ratio * ratio


def _frame(el: ET.Element, reader: _Reader) -> SdfFrame:
    name = _name(el, reader, "frame")
    return SdfFrame(
        name, el.get("attached_to", ""), reader.pose(el, f"frame {name!r}"), el.get(_OWN_NAME, "")
    )


# --------------------------------------------------------------------------- document
def _version(root: ET.Element, where: str) -> tuple[int, int]:
    text = root.get("version")
    if not text:
        raise SDFError(f"{where}: the <sdf> element has no version attribute")
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text)
    if match is None:
        raise SDFError(f"{where}: <sdf version={text!r}> is not an SDFormat version (e.g. 1.7)")
    return int(match.group(1)), int(match.group(2))


def _the_model(root: ET.Element, where: str) -> tuple[ET.Element, ET.Element | None, list[str]]:
    """The one ``<model>`` of the document (top level or in its one ``<world>``), the world (None:
    none) and the tags of what the world holds besides the model and its gravity."""
    scope, rest, world = root, [], None
    worlds = root.findall("world")
    if worlds:
        if len(worlds) > 1 or root.findall("model"):
            raise UnsupportedError(f"{where}: several worlds or models; bridge reads one model")
        scope = world = worlds[0]
        rest = [child.tag for child in scope if child.tag not in ("model", "include", "gravity")]
    includes = scope.findall("include")
    if includes:
        uri = (includes[0].findtext("uri") or "").strip()
        raise UnsupportedError(
            f"{where}: <include> of {uri!r}: bridge does not resolve includes (load the included "
            "model's file itself)"
        )
    models = scope.findall("model")
    if not models:
        raise SDFError(f"{where}: no <model> element")
    if len(models) > 1:
        names = ", ".join(repr(m.get("name")) for m in models)
        raise UnsupportedError(f"{where}: {len(models)} models ({names}); bridge reads a file with one model")
    return models[0], world, rest


def read_document(data: bytes, where: str) -> SdfDocument:
    """The one model of the SDFormat document ``data`` (see the module docstring)."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise SDFError(f"{where}: malformed XML ({exc})") from None
    if root.tag != "sdf":
        raise SDFError(f"{where}: no <sdf> element (the root element is <{root.tag}>)")
    version = _version(root, where)
    model_el, world, rest = _the_model(root, where)
    reader = _Reader(where)
    gravity = None
    if world is not None:
        els = world.findall("gravity")
        if len(els) > 1:
            raise reader.fail(f"world {world.get('name', '')!r}", f"{len(els)} <gravity> elements")
        if els:
            gravity = np.array(reader.numbers(els[0], (3,), f"world {world.get('name', '')!r}"))
    name = _name(model_el, reader, "model")
    owner = f"model {name!r}"
    for tag in ("model", "include"):
        nested = model_el.find(tag)
        if nested is not None:
            what = nested.get("name") or (nested.findtext("uri") or "").strip()
            raise UnsupportedError(
                f"{where}: {owner} has a nested <{tag}> {what!r}; bridge reads one model without nested "
                "models"
            )
    if _flag(model_el.findtext("static", "false"), reader=reader, owner=owner, what="<static>"):
        raise UnsupportedError(f"{where}: {owner} is static (fixed in the world: no dynamics to compute)")
    if model_el.get("placement_frame"):
        raise UnsupportedError(f"{where}: {owner} has a placement_frame, which bridge does not read")
    doc = SdfDocument(
        where,
        version,
        name,
        reader.pose(model_el, owner),
        model_el.get("canonical_link"),
        world_rest=rest,
        gravity=gravity,
        own_name=model_el.get(_OWN_NAME, ""),
    )
    doc.links = [_link(el, reader) for el in model_el.findall("link")]
    dofs = model_el.find(f"{{{BRIDGE_NAMESPACE}}}dofs")
    if dofs is not None:
        doc.dof_order = tuple(d.get("name", "") for d in dofs.findall(f"{{{BRIDGE_NAMESPACE}}}dof"))
    doc.joints = [_joint(el, reader, version) for el in model_el.findall("joint")]
    doc.frames = [_frame(el, reader) for el in model_el.findall("frame")]
    if not doc.links:
        raise SDFError(f"{where}: {owner} has no <link>")
    return doc
