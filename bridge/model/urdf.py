"""URDF to and from the neutral model.

Reading (:func:`load_urdf`) happens in two passes over the same document:

1. A structural and numeric pass with :mod:`xml.etree` that turns every problem into a clear
   :class:`bridge.BridgeError` naming the file and the element: malformed XML (with the parser's
   line and column), no ``<robot>``, missing names, unsupported or unknown joint types, mimic
   joints, unknown links, a link with two parents, loops, several roots, zero axes, duplicate
   names, and numbers that do not parse (e.g. ``rpy="${pi/2} 0 0"`` left over by xacro). It also
   rejects what ``yourdfpy`` would silently change: an ``<inertia>`` missing one of its six
   attributes (yourdfpy would put 1.0 on the diagonal), an ``<inertial>`` without ``<mass>``
   (yourdfpy would drop the inertia) or without ``<inertia>``; urdfdom rejects all three too.
2. ``yourdfpy`` reads the values (origins, axes with the URDF default ``1 0 0``, inertias,
   limits). Meshes are never loaded, so a URDF whose meshes are missing (or use ``package://``
   URIs) loads. Anything yourdfpy raises or logs as an error becomes a :class:`bridge.URDFError`.

Semantics of the result: every URDF link is a :class:`~bridge.model.model.Link` whose spatial
inertia is expressed in the link frame (the ``<inertial><origin>`` is the centre-of-mass frame:
``com = xyz`` and ``I_link = R I R^T`` with ``R`` from its ``rpy``); a link without ``<inertial>`` is
massless. Joints keep the URDF semantics (``parent_H_child`` = ``<origin>`` at zero position, unit
``axis`` in child coordinates, zero axis origin). A ``floating`` joint is a neutral free joint whose
rest pose is its ``<origin>`` (Pinocchio's ``JointModelFreeFlyer``); a ``planar`` joint a neutral
planar joint moving in its joint frame's xy plane (normal z), as Pinocchio's ``buildModelFromUrdf``
reads it (``JointModelPlanar``, the URDF ``<axis>`` ignored): an axis other than z (URDF's default
``1 0 0`` without one) gives a :class:`bridge.URDFWarning`, since the specification (and Drake's
parser) take it as the plane's normal. URDF defines no extra frames. The default DOF
order is the document order of the movable joints.

A load that succeeded is stored in the on-disk model cache (:mod:`bridge.model.cache`), keyed by
the document's bytes, the options and bridge's code: the next process loading it skips both passes
(and the import of yourdfpy), with the same model and the same warnings.

Writing (:func:`model_to_urdf`, in :mod:`bridge.model.urdf_writer`) produces a URDF that this
module, Pinocchio and iDynTree load to a model with the same dynamics; see its docstring for what it
has to add.
"""

from __future__ import annotations

import io
import logging
import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from bridge._files import file_status, read_model_file
from bridge.errors import (
    BridgeError,
    ModelError,
    ModelFileNotFoundError,
    UnknownNameError,
    UnsupportedError,
    URDFError,
    URDFWarning,
)
from bridge.model import cache
from bridge.model.loading import (
    Issues,
    check_arguments,
    inertial_link,
    inline_xml,
    mimic_relations,
    rooted_and_selected,
)
from bridge.model.mimic import Mimic
from bridge.model.model import Joint, JointKind, JointLimits, Link, Model
from bridge.model.urdf_writer import INERTIA_ATTRIBUTES, model_to_urdf
from bridge.spatial import SpatialInertia, Transform

__all__ = ["load_urdf", "model_to_urdf"]

_SUPPORTED = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_KNOWN_UNSUPPORTED = {"spherical", "ball", "universal", "screw", "gearbox"}
#: URDF joint types whose neutral kind has another name
_KINDS = {"floating": JointKind.FREE}
_Z = np.array([0.0, 0.0, 1.0])
_BOGUS_VERSION = re.compile(rb"^(\xef\xbb\xbf)?\s*<\?xml\s+version\s*=\s*([\"'])(.*?)\2")
#: largest magnitude of a length, mass or inertia bridge reads: beyond it the engines' products
#: (m c^2, inertias moved along a chain) overflow or lose the symmetry they check (1e308 -> inf);
#: 1e100 leaves room for squares and is far beyond any physical robot
MAX_MAGNITUDE = 1e100


# --------------------------------------------------------------------------- reading: source
def _read_source(path_or_xml: str | bytes | os.PathLike) -> tuple[bytes, str]:
    """(XML bytes, description of where they came from: the file path or ``<URDF string>``).

    A ``str`` is XML text when it starts with ``<`` (after white space), a file path otherwise.
    Files are read as bytes so that the XML declaration's encoding is honoured.
    """
    inline = inline_xml(path_or_xml, "URDF")
    if inline is not None:
        return inline
    if isinstance(path_or_xml, (str, os.PathLike)):
        if not os.fspath(path_or_xml).strip():
            raise ModelFileNotFoundError("URDF file name is empty (give a path, URDF text or a robot name)")
        path = Path(path_or_xml)
        status = file_status(path, "URDF file")
        if status == "other":
            raise URDFError(f"{str(path)!r} is not a regular file (a URDF file is needed)")
        if status != "file":
            hint = ""
            if isinstance(path_or_xml, str) and status != "directory":
                robot, hint = _robot_file(path_or_xml)
                if robot is not None:
                    return read_model_file(robot, "URDF file"), str(robot)
            what = "is a directory, not a URDF file" if status == "directory" else "not found"
            raise ModelFileNotFoundError(f"URDF file {what}: {str(path)!r}{hint}")
        return read_model_file(path, "URDF file"), str(path)
    raise URDFError(f"load_urdf expects a file path or URDF XML text, got {type(path_or_xml).__name__}")


def _robot_file(name: str) -> tuple[Path | None, str]:
    """(the URDF of the shipped robot called ``name``, or None and a hint naming close matches)."""
    from bridge.robots import robot_entry, robots_hint

    try:
        return robot_entry(name).path, ""
    except UnknownNameError as exc:
        looks_like_path = Path(name).suffix or os.sep in name or "/" in name
        if looks_like_path:
            return None, ""
        if exc.close_matches:
            return None, " (nor a robot name; did you mean " + ", ".join(map(repr, exc.close_matches)) + "?)"
        hint = robots_hint()
        return None, f" (nor a robot name: {hint})" if hint else ""


# --------------------------------------------------------------------------- reading: checks
def _numbers(
    el: ET.Element,
    attr: str,
    n: int,
    where: str,
    owner: str,
    *,
    required: bool = False,
    bounded: bool = True,
) -> tuple[float, ...] | None:
    """The ``n`` finite numbers of attribute ``attr`` of ``el`` (None if absent and not required);
    with ``bounded``, each at most :data:`MAX_MAGNITUDE` in magnitude."""
    text = el.get(attr)
    if text is None:
        if required:
            raise URDFError(f"{where}: {owner}: <{el.tag}> has no {attr!r} attribute")
        return None
    try:
        values = tuple(float(p) for p in text.split())
    except ValueError:
        values = ()
    if len(values) != n or not all(math.isfinite(v) for v in values):
        what = f"{n} finite numbers" if n > 1 else "a finite number"
        raise URDFError(f"{where}: {owner}: <{el.tag} {attr}={text!r}> is not {what}")
    if bounded and any(abs(v) > MAX_MAGNITUDE for v in values):
        raise URDFError(
            f"{where}: {owner}: <{el.tag} {attr}={text!r}> is beyond {MAX_MAGNITUDE:g} in magnitude "
            "(no engine computes with it: its products overflow)"
        )
    return values


def _check_origin(parent: ET.Element, where: str, owner: str) -> None:
    origin = parent.find("origin")
    if origin is not None:
        _numbers(origin, "xyz", 3, where, owner)
        _numbers(origin, "rpy", 3, where, owner)


def _check_link(el: ET.Element, where: str) -> str:
    name = el.get("name")
    if not name:
        raise URDFError(f"{where}: a <link> element has no name")
    owner = f"link {name!r}"
    inertials = el.findall("inertial")
    if len(inertials) > 1:
        raise URDFError(f"{where}: {owner} has {len(inertials)} <inertial> elements")
    if inertials:
        inertial = inertials[0]
        _check_origin(inertial, where, owner)
        mass = inertial.find("mass")
        if mass is None:
            raise URDFError(
                f"{where}: {owner}: <inertial> has no <mass> (a link without mass has no <inertial>)"
            )
        _numbers(mass, "value", 1, where, owner, required=True)
        inertia = inertial.find("inertia")
        if inertia is None:
            raise URDFError(f"{where}: {owner}: <inertial> has no <inertia> (URDF requires all six moments)")
        for attr in INERTIA_ATTRIBUTES:
            _numbers(inertia, attr, 1, where, owner, required=True)
    return name


def _check_joint(el: ET.Element, where: str, link_set: set[str]) -> tuple[str, str, str]:
    """Check one ``<joint>``; return (name, parent link, child link)."""
    name = el.get("name")
    if not name:
        raise URDFError(f"{where}: a <joint> element has no name")
    owner = f"joint {name!r}"
    jtype = el.get("type")
    if jtype is None:
        raise URDFError(f"{where}: {owner} has no type attribute")
    if jtype in _KNOWN_UNSUPPORTED:
        raise UnsupportedError(
            f"{where}: {owner} has type {jtype!r}, which bridge does not support "
            f"(supported: {', '.join(_SUPPORTED)})"
        )
    if jtype not in _SUPPORTED:
        raise UnsupportedError(
            f"{where}: {owner} has unknown type {jtype!r} (URDF joint types: {', '.join(_SUPPORTED)})"
        )
    mimic_el = el.find("mimic")
    if mimic_el is not None:
        if not mimic_el.get("joint"):
            raise URDFError(f"{where}: {owner}: <mimic> has no joint attribute")
        _numbers(mimic_el, "multiplier", 1, where, owner)
        _numbers(mimic_el, "offset", 1, where, owner)
    ends = []
    for end in ("parent", "child"):
        sub = el.find(end)
        if sub is None or not sub.get("link"):
            raise URDFError(f"{where}: {owner} has no <{end} link=...>")
        if sub.get("link") not in link_set:
            raise URDFError(f"{where}: {owner} refers to unknown {end} link {sub.get('link')!r}")
        ends.append(sub.get("link"))
    if ends[0] == ends[1]:
        raise URDFError(f"{where}: {owner} connects link {ends[0]!r} to itself")
    _check_origin(el, where, owner)
    axis = el.find("axis")
    if axis is not None:
        values = _numbers(axis, "xyz", 3, where, owner)
        if jtype not in ("fixed", "floating") and values is not None and math.hypot(*values) < 1e-12:
            raise URDFError(f"{where}: {owner} has a zero axis (<axis xyz={axis.get('xyz')!r}>)")
    limit = el.find("limit")
    if limit is not None:
        for attr in ("lower", "upper", "effort", "velocity"):
            _numbers(limit, attr, 1, where, owner, bounded=False)
    return name, ends[0], ends[1]


def _check_structure(root: ET.Element, where: str) -> None:
    """Validate what yourdfpy would accept silently, change, or reject obscurely."""
    if root.tag != "robot":
        raise URDFError(f"{where}: no <robot> element (the root element is <{root.tag}>)")
    links: list[str] = []
    for el in root.findall("link"):
        name = _check_link(el, where)
        if name in links:
            raise URDFError(f"{where}: duplicate link name {name!r}")
        links.append(name)
    if not links:
        raise URDFError(f"{where}: the robot has no <link>")
    if not root.get("name"):
        raise URDFError(f"{where}: the <robot> element has no name")
    link_set = set(links)
    joints: set[str] = set()
    parent_joint: dict[str, str] = {}  # child link -> joint
    parent_link: dict[str, str] = {}  # child link -> parent link
    for el in root.findall("joint"):
        name, parent, child = _check_joint(el, where, link_set)
        if name in joints:
            raise URDFError(f"{where}: duplicate joint name {name!r}")
        joints.add(name)
        if child in parent_joint:
            raise URDFError(
                f"{where}: link {child!r} has two parents (joints {parent_joint[child]!r} and {name!r})"
            )
        parent_joint[child] = name
        parent_link[child] = parent
    # kinematic loops: follow the parents from every link (each link is walked once)
    reaches_root: set[str] = set()
    for start in links:
        path: list[str] = []
        on_path: set[str] = set()
        cur = start
        while cur in parent_link and cur not in reaches_root:
            if cur in on_path:
                loop = path[path.index(cur) :][::-1]  # parent -> child order
                roots_note = "no root link: " if len(parent_joint) == len(links) else ""
                chain = " -> ".join(repr(x) for x in [*loop, loop[0]])
                through = ", ".join(repr(parent_joint[x]) for x in [*loop[1:], loop[0]])
                raise URDFError(
                    f"{where}: {roots_note}the joints form a kinematic loop {chain} (joints {through})"
                )
            on_path.add(cur)
            path.append(cur)
            cur = parent_link[cur]
        reaches_root.update(path)
    roots = [link for link in links if link not in parent_joint]
    if len(roots) > 1:
        raise URDFError(f"{where}: several root links {roots}: a URDF must be one tree")


@contextmanager
def _yourdfpy_errors(where: str) -> Iterator[None]:
    """Turn yourdfpy's exceptions and logged errors/warnings into :class:`URDFError`."""
    records: list[logging.LogRecord] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("yourdfpy")
    handler = _Collect(level=logging.WARNING)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    except BridgeError:
        raise
    except Exception as exc:  # the reader raises a variety of errors (KeyError, ValueError, ...)
        raise URDFError(f"{where}: cannot parse the URDF ({type(exc).__name__}: {exc})") from None
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    if records:
        messages = "; ".join(r.getMessage() for r in records)
        raise URDFError(f"{where}: problems reading the URDF values: {messages}")


def _fix_declaration(data: bytes, where: str, issues: Issues) -> bytes:
    """Read an XML declaration with a version other than 1.0/1.1 (``<?xml version="0.0"?>``, seen in
    published URDFs; Pinocchio and iDynTree read them) as XML 1.0, with a :class:`URDFWarning`."""
    match = _BOGUS_VERSION.match(data)
    if match is None or match.group(3) in (b"1.0", b"1.1"):
        return data
    version = match.group(3).decode("utf-8", "replace")
    issues.report(
        URDFError(
            f"{where}: the XML declaration says version {version!r}, which is not an XML version "
            "(read as XML 1.0)"
        ),
        URDFWarning,
    )
    return data[: match.start(3)] + b"1.0" + data[match.end(3) :]


def _parse(data: bytes, where: str, issues: Issues):
    """Check the document and read its values; return (the values' robot, the XML root element)."""
    data = _fix_declaration(data, where, issues)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise URDFError(f"{where}: malformed XML ({exc})") from None
    _check_structure(root, where)
    import yourdfpy

    with _yourdfpy_errors(where):
        urdf = yourdfpy.URDF.load(
            io.BytesIO(data),
            load_meshes=False,
            build_scene_graph=False,
            load_collision_meshes=False,
            build_collision_scene_graph=False,
        )
    robot = urdf.robot
    # yourdfpy reads the same elements as the checks above (direct children of <robot>)
    xml_joints = [el.get("name") for el in root.findall("joint")]
    if [j.name for j in robot.joints] != xml_joints or len(robot.links) != len(root.findall("link")):
        raise URDFError(f"{where}: the URDF values read differ from the links and joints of the document")
    return robot, root


# --------------------------------------------------------------------------- reading: values
def _link(link, where: str, check_inertia: bool, issues: Issues) -> Link:
    inertial = link.inertial
    if inertial is None:
        return Link(link.name, SpatialInertia.zero())
    origin = np.eye(4) if inertial.origin is None else np.asarray(inertial.origin, dtype=float)
    return inertial_link(
        link.name,
        float(inertial.mass),
        origin,
        np.asarray(inertial.inertia, dtype=float),
        where,
        check_inertia,
        issues,
    )


def _joint(joint, where: str, issues: Issues, with_axis: set[str]) -> Joint:
    """The neutral joint of yourdfpy's ``joint`` (``with_axis``: the joints with an ``<axis>``)."""
    kind = _KINDS.get(joint.type) or JointKind(joint.type)
    origin = np.eye(4) if joint.origin is None else np.asarray(joint.origin, dtype=float)
    try:
        rest = Transform(origin)
    except BridgeError as exc:
        raise URDFError(f"{where}: joint {joint.name!r} has an invalid origin ({exc})") from None
    limits = JointLimits()
    if joint.limit is not None:
        lim = joint.limit

        def f(x: object) -> float | None:
            return None if x is None else float(x)

        lower, upper = f(lim.lower), f(lim.upper)
        if kind is JointKind.CONTINUOUS or kind.wide:  # no position limits (continuous, floating, planar)
            lower = upper = None
        limits = JointLimits(lower=lower, upper=upper, effort=f(lim.effort), velocity=f(lim.velocity))
    if kind is JointKind.PLANAR:
        axis = _planar_axis(joint, where, issues, joint.name in with_axis)
    elif kind.movable and kind is not JointKind.FREE:
        # yourdfpy gives the URDF default (1, 0, 0) when <axis> or its xyz is missing
        axis = np.array([1.0, 0.0, 0.0]) if joint.axis is None else np.asarray(joint.axis, dtype=float)
    else:
        axis = np.zeros(3)
    return Joint(joint.name, kind, joint.parent, joint.child, rest, axis=axis, limits=limits)


def _planar_axis(joint, where: str, issues: Issues, given_axis: bool) -> np.ndarray:
    """A planar joint's normal: z of the joint frame, as Pinocchio's ``buildModelFromUrdf`` reads it
    (``JointModelPlanar`` in the joint frame's xy plane, the URDF axis ignored); a URDFWarning (an
    error with ``strict``) when the file's axis (URDF's default 1 0 0 without one) says another plane,
    as the URDF specification and Drake's parser read it."""
    given = np.array([1.0, 0.0, 0.0]) if joint.axis is None else np.asarray(joint.axis, dtype=float)
    given = given / np.linalg.norm(given)
    if np.abs(given - _Z).max() > 1e-12:
        text = f"<axis xyz={_fmt_axis(given)}>" if given_axis else "no <axis> (URDF's default 1 0 0)"
        issues.report(
            URDFError(
                f"{where}: planar joint {joint.name!r} has {text}: read as motion in the joint frame's xy "
                "plane (normal z), as Pinocchio reads it; the URDF specification and Drake's parser take "
                "the axis as the plane's normal"
            ),
            URDFWarning,
        )
    return _Z.copy()


def _fmt_axis(axis: np.ndarray) -> str:
    return repr(" ".join(f"{x:g}" for x in axis))


def load_urdf(
    path_or_xml: str | bytes | os.PathLike,
    base: str | None = None,
    joints: Sequence[str] | None = None,
    floating: bool = True,
    locked: Mapping[str, float] | None = None,
    check_inertia: bool = True,
    mimic: str | None = None,
    strict: bool = False,
) -> Model:
    """Load a URDF file (or XML text, or a shipped robot by name) into a neutral model.

    By default bridge loads what Pinocchio's and iDynTree's own URDF loaders load: input that they
    accept but that is questionable loads with a :class:`bridge.BridgeWarning` naming the link or
    joint and the rule (a :class:`bridge.NonPhysicalInertiaWarning` for a link inertia no rigid body
    can have, a :class:`bridge.MimicJointWarning` for a mimic joint loaded as an independent DOF, a
    :class:`bridge.URDFWarning` for an XML declaration with a bogus version). ``strict=True`` raises
    the corresponding error instead. What is malformed (or would be silently changed) is always an
    error.

    A successful load is kept in bridge's model cache (:mod:`bridge.model.cache`: the user's cache
    folder, ``BRIDGE_CACHE_DIR`` to move it, ``BRIDGE_CACHE=0`` to turn it off): a later process
    loading the same bytes from the same place with the same options gets the same model, and the
    same warnings, without parsing.

    Args:
        path_or_xml: a file path (``str`` or path-like), the URDF XML itself (a ``str`` starting
            with ``<``, or ``bytes``), or the name of a robot shipped by icub-models /
            example-robot-data (:mod:`bridge.robots`, e.g. ``"iCubGazeboV2_5"``, ``"panda"``),
            used when no file of that name exists.
        base: the base link (default: the URDF root); the tree is re-rooted there
            (:meth:`Model.with_base`).
        joints: the DOF serialization (default: the movable joints in document order); movable
            joints left out are locked at ``locked.get(name, 0.0)`` (:meth:`Model.with_dofs`).
            With ``mimic="coupled"`` these are the independent DOFs (mimic joints follow).
        floating: floating base (True) or base fixed to the world (False).
        locked: positions of locked joints. Without ``joints``, the DOFs are the movable joints in
            document order minus the ones named here.
        check_inertia: check every link inertia (see :meth:`SpatialInertia.check_physical`;
            massless links are fine): a non-physical one is a warning, or an
            :class:`bridge.InertiaError` with ``strict``. False skips the check (no warning).
        mimic: what to do with ``<mimic>`` joints (``q = multiplier * q_master + offset``):
            ``"independent"`` loads them as ordinary, independent DOFs, ignoring the relation
            (what Pinocchio's and iDynTree's loaders do by default); ``"coupled"`` keeps the
            relation: one DOF per master, the dynamics projected on the independent DOFs (a
            :class:`bridge.model.mimic.CoupledModel`); ``"error"`` raises. The default (None) is
            ``"independent"`` with a :class:`bridge.MimicJointWarning` per mimic joint, or an
            error with ``strict``.
        strict: raise instead of warning (what bridge did before it loaded what the libraries load).

    Returns:
        The model, named after the ``<robot name>``; every URDF link is a link, no extra frames.

    Raises:
        ModelFileNotFoundError: the file does not exist (and is not a robot name).
        URDFError: malformed XML or an invalid URDF (the message names the file and element).
        UnsupportedError: spherical, universal or unknown joint types; mimic joints (``mimic="error"``,
            or ``strict`` without ``mimic``).
        InertiaError: a non-physical link inertia (with ``strict``).
        UnknownNameError: ``base``, ``joints`` or ``locked`` name something the URDF does not have.
        ModelError: other invalid arguments (e.g. a fixed joint listed as a DOF).
    """
    floating, check_inertia, strict, joints = check_arguments(
        base, joints, floating, locked, check_inertia, mimic, strict
    )
    data, where = _read_source(path_or_xml)
    options = {"base": base, "joints": joints, "floating": floating, "locked": locked}
    options.update(check_inertia=check_inertia, mimic=mimic, strict=strict)
    entry = cache.key("urdf", data, where, options)
    hit = cache.load(entry)
    if hit is not None:  # (the model of an earlier parse, its warnings issued again)
        model, issues = hit[0], Issues(strict)
        issues.items = hit[1]
        issues.emit(stacklevel=2)
        return model
    issues = Issues(strict)
    robot, root = _parse(data, where, issues)
    with_axis = {el.get("name") for el in root.findall("joint") if el.find("axis") is not None}
    joint_list = [_joint(j, where, issues, with_axis) for j in robot.joints]
    _check_limits(joint_list, where, issues)
    mimics = _mimics(root, joint_list, where, mimic, issues)
    links = [_link(link, where, check_inertia, issues) for link in robot.links]
    dofs = tuple(j.name for j in joint_list if j.movable)
    children = {j.child for j in joint_list}
    root_link = next(link.name for link in links if link.name not in children)
    try:
        model = Model(robot.name, links, joint_list, (), root_link, dofs, floating)
        model = rooted_and_selected(model, where, base, joints, locked, mimics if mimic == "coupled" else [])
    except UnknownNameError:
        raise
    except ModelError as exc:
        raise type(exc)(f"{where}: {exc}") from None
    cache.store(entry, model, issues.items)
    issues.emit(stacklevel=2)
    return model


def _check_limits(joints: Sequence[Joint], where: str, issues: Issues) -> None:
    """Limits Pinocchio's and iDynTree's loaders accept but that mean nothing: a lower position
    limit above the upper one (PyBullet writes ``lower="1" upper="-1"`` for "no limits"; bridge's
    random states then ignore them) and negative effort or velocity limits (passed to the engines
    as "no limit"). A :class:`bridge.URDFWarning` each; errors with ``strict``."""
    for j in joints:
        lim = j.limits
        if lim.lower is not None and lim.upper is not None and lim.lower > lim.upper:
            issues.report(
                URDFError(
                    f"{where}: joint {j.name!r}: <limit lower={lim.lower!r} upper={lim.upper!r}> has lower > "
                    "upper (read as no position limits, as PyBullet writes them)"
                ),
                URDFWarning,
            )
        for attr in ("effort", "velocity"):
            value = getattr(lim, attr)
            if value is not None and value < 0:
                issues.report(
                    URDFError(
                        f"{where}: joint {j.name!r}: <limit {attr}={value!r}> is negative (read as no "
                        f"{attr} limit)"
                    ),
                    URDFWarning,
                )


def _mimics(
    root: ET.Element, joints: Sequence[Joint], where: str, mode: str | None, issues: Issues
) -> list[Mimic]:
    """The mimic relations of the document (checked); warnings or errors as ``mode`` asks."""
    tags = []
    for el in root.findall("joint"):
        sub = el.find("mimic")
        if sub is not None:
            multiplier = float(sub.get("multiplier", "1") or 1.0)
            offset = float(sub.get("offset", "0") or 0.0)
            tags.append(Mimic(el.get("name"), sub.get("joint"), multiplier, offset))
    return mimic_relations(tags, joints, where, mode, issues)


# --------------------------------------------------------------------------- writing
