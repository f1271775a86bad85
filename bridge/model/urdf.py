"""URDF to and from the neutral model.

Reading uses ``yourdfpy`` for the values (meshes are never loaded, so a URDF whose meshes are
missing loads) after a structural pass with ``xml.etree`` that turns every problem into a clear
:class:`bridge.URDFError` naming the file and element (malformed XML, no ``<robot>``, unsupported or
unknown joint types, mimic joints, missing or unknown links, zero axes, duplicate names, several
roots, two parents, loops, non-physical inertias).
"""

from __future__ import annotations

import io
import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from bridge.errors import (
    BridgeError,
    InertiaError,
    ModelError,
    ModelFileNotFoundError,
    UnsupportedError,
    URDFError,
)
from bridge.model.model import Joint, JointKind, JointLimits, Link, Model
from bridge.spatial import SpatialInertia, Transform

__all__ = ["load_urdf", "model_to_urdf"]

_SUPPORTED = {"revolute", "continuous", "prismatic", "fixed"}
_KNOWN_UNSUPPORTED = {"floating", "planar", "spherical", "ball", "universal", "screw", "gearbox"}


def _read_source(path_or_xml: str | os.PathLike) -> tuple[str, str]:
    """(xml text, description of where it came from)."""
    if isinstance(path_or_xml, os.PathLike) or (
        isinstance(path_or_xml, str) and "<" not in path_or_xml.lstrip()[:1]
    ):
        path = Path(path_or_xml)
        if not path.is_file():
            raise ModelFileNotFoundError(f"URDF file not found: {str(path)!r}")
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise URDFError(f"{path}: cannot read the file ({exc})") from None
    if isinstance(path_or_xml, str):
        return path_or_xml, "<URDF string>"
    raise URDFError(f"load_urdf expects a file path or URDF XML text, got {type(path_or_xml).__name__}")


def _check_structure(root: ET.Element, where: str, mimic: str = "error") -> None:
    """Validate what yourdfpy would accept silently or reject obscurely."""
    if root.tag != "robot":
        raise URDFError(f"{where}: no <robot> element (the root element is <{root.tag}>)")
    links: list[str] = []
    for el in root.findall("link"):
        name = el.get("name")
        if not name:
            raise URDFError(f"{where}: a <link> element has no name")
        if name in links:
            raise URDFError(f"{where}: duplicate link name {name!r}")
        links.append(name)
    if not links:
        raise URDFError(f"{where}: the robot has no <link>")
    link_set = set(links)
    joints: set[str] = set()
    parent_of: dict[str, str] = {}
    for el in root.findall("joint"):
        name = el.get("name")
        if not name:
            raise URDFError(f"{where}: a <joint> element has no name")
        if name in joints:
            raise URDFError(f"{where}: duplicate joint name {name!r}")
        joints.add(name)
        jtype = el.get("type")
        if jtype in _KNOWN_UNSUPPORTED:
            raise UnsupportedError(
                f"{where}: joint {name!r} has type {jtype!r}, which bridge does not support "
                "(supported: revolute, continuous, prismatic, fixed)"
            )
        if jtype not in _SUPPORTED:
            raise UnsupportedError(f"{where}: joint {name!r} has unknown type {jtype!r}")
        if el.find("mimic") is not None and mimic != "independent":
            raise UnsupportedError(
                f"{where}: joint {name!r} is a mimic joint, which bridge does not support; "
                "pass mimic='independent' to load mimic joints as independent DOFs "
                "(what Pinocchio's and iDynTree's URDF loaders do by default)"
            )
        for end in ("parent", "child"):
            sub = el.find(end)
            if sub is None or not sub.get("link"):
                raise URDFError(f"{where}: joint {name!r} has no <{end} link=...>")
            if sub.get("link") not in link_set:
                raise URDFError(f"{where}: joint {name!r} refers to unknown {end} link {sub.get('link')!r}")
        child = el.find("child").get("link")
        if child in parent_of:
            raise URDFError(
                f"{where}: link {child!r} has two parents (joints {parent_of[child]!r} and {name!r})"
            )
        parent_of[child] = name
        axis = el.find("axis")
        if jtype != "fixed" and axis is not None and axis.get("xyz") is not None:
            try:
                values = [float(v) for v in axis.get("xyz").split()]
            except ValueError:
                raise URDFError(f"{where}: joint {name!r} has a malformed axis {axis.get('xyz')!r}") from None
            if len(values) != 3 or not all(math.isfinite(v) for v in values):
                raise URDFError(f"{where}: joint {name!r} has a malformed axis {axis.get('xyz')!r}")
            if math.hypot(*values) < 1e-12:
                raise URDFError(f"{where}: joint {name!r} has a zero axis")
    roots = [link for link in links if link not in parent_of]
    if len(roots) > 1:
        raise URDFError(f"{where}: several root links {roots}: a URDF must be one tree")
    if not roots:
        raise URDFError(f"{where}: no root link: the joints form a kinematic loop")


def _parse(text: str, where: str, mimic: str = "error"):
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"{where}: malformed XML ({exc})") from None
    _check_structure(root, where, mimic)
    import yourdfpy

    try:
        urdf = yourdfpy.URDF.load(
            io.BytesIO(text.encode("utf-8")),
            load_meshes=False,
            build_scene_graph=False,
            load_collision_meshes=False,
            build_collision_scene_graph=False,
        )
    except BridgeError:
        raise
    except Exception as exc:  # yourdfpy raises a variety of errors
        raise URDFError(f"{where}: cannot parse the URDF ({type(exc).__name__}: {exc})") from None
    return urdf.robot


def _link(link, where: str, check_inertia: bool = True) -> Link:
    inertial = link.inertial
    if inertial is None or inertial.mass is None:
        return Link(link.name, SpatialInertia.zero())
    mass = float(inertial.mass)
    origin = np.eye(4) if inertial.origin is None else np.asarray(inertial.origin, dtype=float)
    I3 = np.zeros((3, 3)) if inertial.inertia is None else np.asarray(inertial.inertia, dtype=float)
    R = origin[:3, :3]
    if not np.all(np.isfinite(I3)) or not math.isfinite(mass):
        raise InertiaError(f"{where}: link {link.name!r} has a non-finite inertia")
    try:
        inertia = SpatialInertia(mass, origin[:3, 3], R @ I3 @ R.T)
        if check_inertia:
            inertia.check_physical(f"{where}: link {link.name!r}", allow_massless=True)
    except InertiaError:
        raise
    except BridgeError as exc:
        raise InertiaError(f"{where}: link {link.name!r}: {exc}") from None
    return Link(link.name, inertia)


def _joint(joint, where: str) -> Joint:
    kind = JointKind(joint.type)
    origin = np.eye(4) if joint.origin is None else np.asarray(joint.origin, dtype=float)
    try:
        rest = Transform(origin)
    except BridgeError as exc:
        raise URDFError(f"{where}: joint {joint.name!r} has an invalid origin ({exc})") from None
    limits = JointLimits()
    if joint.limit is not None:
        lim = joint.limit

        def f(x):
            return None if x is None else float(x)

        lower, upper = f(lim.lower), f(lim.upper)
        if kind is JointKind.CONTINUOUS:
            lower = upper = None
        limits = JointLimits(lower=lower, upper=upper, effort=f(lim.effort), velocity=f(lim.velocity))
    axis = np.array([1.0, 0.0, 0.0]) if joint.axis is None else np.asarray(joint.axis, dtype=float)
    if not kind.movable:
        axis = np.zeros(3)
    return Joint(joint.name, kind, joint.parent, joint.child, rest, axis=axis, limits=limits)


def load_urdf(
    path_or_xml: str | os.PathLike,
    base: str | None = None,
    joints: Sequence[str] | None = None,
    floating: bool = True,
    locked: Mapping[str, float] | None = None,
    check_inertia: bool = True,
    mimic: str = "error",
) -> Model:
    """Load a URDF file (or XML text) into a neutral :class:`Model`.

    Args:
        path_or_xml: a file path, or the URDF XML itself.
        base: the base link (default: the URDF root); the tree is re-rooted there.
        joints: the DOF serialization (default: the movable joints in document order); movable
            joints left out are locked at ``locked.get(name, 0.0)``.
        floating: floating base (True) or base fixed to the world (False).
        locked: positions of the locked joints.
        check_inertia: raise :class:`bridge.InertiaError` for a link whose inertia no rigid body can
            have (see :meth:`SpatialInertia.check_physical`). Several published URDFs fail this
            (e.g. rod-like dummy links); pass False to load them anyway.
        mimic: "error" (default) rejects mimic joints; "independent" loads them as ordinary,
            independent DOFs, ignoring the mimic relation (as Pinocchio's and iDynTree's loaders do).
    """
    if mimic not in ("error", "independent"):
        raise URDFError(f"mimic must be 'error' or 'independent', got {mimic!r}")
    text, where = _read_source(path_or_xml)
    robot = _parse(text, where, mimic)
    links = [_link(link, where, check_inertia) for link in robot.links]
    joint_list = [_joint(j, where) for j in robot.joints]
    dofs = tuple(j.name for j in joint_list if j.movable)
    parents = {j.child for j in joint_list}
    root = next(link.name for link in links if link.name not in parents)
    try:
        model = Model(robot.name or Path(where).stem, links, joint_list, (), root, dofs, bool(floating))
        if base is not None:
            model = model.with_base(base)
        if joints is not None or locked:
            model = model.with_dofs(tuple(joints) if joints is not None else model.dof_names, locked)
    except ModelError as exc:
        raise type(exc)(f"{where}: {exc}") from None
    return model


# --------------------------------------------------------------------------- writing
def _fmt(values) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(values, dtype=float).reshape(-1))


def _origin(parent: ET.Element, T: Transform) -> None:
    ET.SubElement(parent, "origin", xyz=_fmt(T.translation), rpy=_fmt(T.as_rpy()))


def _write_link(robot: ET.Element, name: str, inertia: SpatialInertia | None) -> None:
    el = ET.SubElement(robot, "link", name=name)
    if inertia is None or float(inertia.mass) == 0.0:
        return
    inertial = ET.SubElement(el, "inertial")
    ET.SubElement(inertial, "origin", xyz=_fmt(inertia.com), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=repr(float(inertia.mass)))
    I3 = inertia.inertia_com
    ET.SubElement(
        inertial,
        "inertia",
        ixx=repr(float(I3[0, 0])),
        ixy=repr(float(I3[0, 1])),
        ixz=repr(float(I3[0, 2])),
        iyy=repr(float(I3[1, 1])),
        iyz=repr(float(I3[1, 2])),
        izz=repr(float(I3[2, 2])),
    )


def _write_joint(robot, name, kind, parent, child, T, axis=None, limits: JointLimits | None = None) -> None:
    el = ET.SubElement(robot, "joint", name=name, type=kind)
    _origin(el, T)
    ET.SubElement(el, "parent", link=parent)
    ET.SubElement(el, "child", link=child)
    if axis is not None:
        ET.SubElement(el, "axis", xyz=_fmt(axis))
    if limits is not None and kind in ("revolute", "prismatic"):
        lim = {
            "lower": limits.lower if limits.lower is not None else -1e9,
            "upper": limits.upper if limits.upper is not None else 1e9,
            "effort": limits.effort if limits.effort is not None else 0.0,
            "velocity": limits.velocity if limits.velocity is not None else 0.0,
        }
        ET.SubElement(el, "limit", **{k: repr(float(v)) for k, v in lim.items()})
    elif (
        limits is not None
        and kind == "continuous"
        and (limits.effort is not None or limits.velocity is not None)
    ):
        ET.SubElement(
            el,
            "limit",
            effort=repr(float(limits.effort or 0.0)),
            velocity=repr(float(limits.velocity or 0.0)),
        )


def model_to_urdf(model: Model) -> str:
    """URDF text for ``model``; loading it back gives a model with the same dynamics.

    * The base link is the URDF root (joints are already oriented away from it).
    * Movable joints are written first, in ``model.dof_names`` order, so the default DOF order of
      the reloaded model equals ``model.dof_names``.
    * URDF cannot express a joint axis that does not pass through the child frame origin: such a
      joint ``J`` becomes ``J`` (from the parent to a massless helper link ``J__axis`` placed at the
      axis origin with the child's orientation) followed by a fixed joint ``J__axis_fixed`` from
      the helper link back to the child link frame. The helper link adds no dynamics.
    * Locked joints are written as fixed joints at their locked position.
    * Extra frames become massless links attached by fixed joints named ``<frame>__fixed``.
    * Links without mass get no ``<inertial>``.
    """
    robot = ET.Element("robot", name=model.name)
    for link in model.links:
        _write_link(robot, link.name, link.inertia)
    for j in model.movable_joints:
        o = j.axis_origin
        if np.linalg.norm(o) > 0.0:
            helper = f"{j.name}__axis"
            _write_link(robot, helper, None)
            _write_joint(
                robot,
                j.name,
                j.kind.value,
                j.parent,
                helper,
                j.parent_H_child @ Transform.from_translation(o),
                j.axis,
                j.limits,
            )
            _write_joint(
                robot, f"{j.name}__axis_fixed", "fixed", helper, j.child, Transform.from_translation(-o)
            )
        else:
            _write_joint(robot, j.name, j.kind.value, j.parent, j.child, j.parent_H_child, j.axis, j.limits)
    for j in model.joints:
        if not j.movable:
            _write_joint(robot, j.name, "fixed", j.parent, j.child, j.parent_H_child)
    for f in model.frames:
        _write_link(robot, f.name, None)
        _write_joint(robot, f"{f.name}__fixed", "fixed", f.link, f.name, f.link_H_frame)
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
