"""SDFormat in: :func:`load_sdf`, the one model of an SDF file as a neutral model.

The document is read by :mod:`bridge.model.sdf_document` (every malformed file a
:class:`bridge.SDFError` naming the file and element); this module gives the records their SDFormat
meaning (http://sdformat.org/tutorials?tut=pose_frame_semantics):

* **Poses.** Every link, joint and ``<frame>`` is a frame of the model's frame graph, placed by its
  ``<pose relative_to=...>`` (any link, joint, frame, ``__model__``, or ``world``). The default
  ``relative_to`` is the model frame ``__model__`` for a link, the child link (or frame) for a
  joint, and the ``attached_to`` frame for a ``<frame>`` (``attached_to`` defaults to ``__model__``,
  itself attached to the canonical link: the ``canonical_link`` attribute, else the first link).
  Cycles of ``relative_to`` or ``attached_to`` are errors naming the frames.
* **Joints.** A joint from parent link P to child link C at zero position places C at its pose
  (``parent_H_child = M_H_P^-1 M_H_C``); its axis ``<xyz expressed_in=F>`` (default: the joint
  frame, or the model frame for SDFormat < 1.7 with ``use_parent_model_frame``) turns about the
  line through the joint frame's origin: the neutral joint's axis is in C's coordinates and its
  axis origin is the joint frame's origin in C. A ``universal`` joint ``J`` is two joints through a
  massless link ``"<child>__<J>"`` (as MJCF bodies with several joints are read): ``J`` about
  ``<axis>`` (fixed in the parent) and ``"J__axis2"`` about ``<axis2>`` (fixed in the child), the
  order of Drake's ``UniversalJoint``. Revolute joints without ``<lower>``/``<upper>`` (SDFormat's
  ±1e16) have no position limits; effort and velocity limits of -1 are none. A ``ball`` joint is a
  neutral ball joint turning about the joint frame's origin (its centre, in C); its rotation is
  measured in C's axes, whatever the joint frame's orientation (Drake's ``BallRpyJoint`` of the same
  file measures it in the joint frame's axes: the same motion, other coordinates).
* **Inertia.** ``<inertial><pose>`` is the centre-of-mass frame in the link frame; the moments are
  about the centre of mass in its axes (``I_link = R I R^T``). SDFormat defaults apply: a link
  without ``<inertial>`` has mass 1 and unit moments (libsdformat's and Drake's reading).
* **Base.** A ``fixed`` joint from ``world`` welds its child there: that link is the base, fixed
  (the joint disappears). A movable joint (or several joints) from ``world`` makes ``world`` a
  massless link, the fixed base. Otherwise the base is the root of the joint tree, floating.
  ``floating=True/False`` overrides what the file says.
* **Free bodies.** A link without a parent joint (other than the base) is a free body (Drake's
  parser gives it a floating joint named after it): a ``free`` joint of that name (``_`` appended on
  a clash) from the fixed base, at the link's pose. Several such links and no joint to the world
  make a scene: ``world`` is the massless fixed base and each root link a free body on it.
* **Frames.** The model's ``<frame>``\\ s are the model's extra frames, on the link their
  ``attached_to`` chain ends at. Joint frames are not.

Unsupported (an error naming the element): ``<include>``, several or nested models, screw,
gearbox and revolute2 joints; closed loops (a link with two parents), as for URDF.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from bridge.errors import BridgeError, ModelError, SDFError, SDFWarning, UnknownNameError
from bridge.model.building import unique_name
from bridge.model.loading import Issues, check_arguments, inertial_link, mimic_relations, rooted_and_selected
from bridge.model.mimic import Mimic
from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model
from bridge.model.sdf_document import SdfAxis, SdfDocument, SdfJoint, read_document, read_source
from bridge.spatial import SpatialInertia, Transform

__all__ = ["AXIS2_SUFFIX", "load_sdf", "sdf_named"]

#: the second DOF of a universal joint ``J`` is named ``J + AXIS2_SUFFIX``
AXIS2_SUFFIX = "__axis2"
_MODEL = "__model__"
_WORLD = "world"


class _Frames:
    """The model's frame graph: every frame's pose in the model frame (``M_H_frame``) and the link
    it is attached to."""

    def __init__(self, doc: SdfDocument) -> None:
        self.doc = doc
        self.where = doc.where
        canonical = doc.canonical_link or doc.links[0].name
        # name -> (kind, relative_to, relative_to_H_frame, attached_to)
        self.nodes: dict[str, tuple[str, str, Transform, str]] = {}
        for link in doc.links:
            self._add(link.name, "link", link.pose.relative_to or _MODEL, link.pose.H, link.name)
        for joint in doc.joints:
            self._add(joint.name, "joint", joint.pose.relative_to or joint.child, joint.pose.H, joint.child)
        for frame in doc.frames:
            attached = frame.attached_to or _MODEL
            self._add(frame.name, "frame", frame.pose.relative_to or attached, frame.pose.H, attached)
        if canonical not in {link.name for link in doc.links}:
            raise SDFError(f"{self.where}: model {doc.name!r}: canonical_link {canonical!r} is not a link")
        self.canonical = canonical
        self._poses: dict[str, Transform] = {_MODEL: Transform.identity(), _WORLD: doc.pose.H.inverse()}
        self._bodies: dict[str, str] = {}  # frame -> the link it is attached to (resolved ones)

    def _add(self, name: str, kind: str, relative_to: str, H: Transform, attached_to: str) -> None:
        if name in (_MODEL, _WORLD) or (name.startswith("__") and name.endswith("__")):
            raise SDFError(f"{self.where}: the {kind} name {name!r} is reserved by SDFormat")
        if name in self.nodes:
            other = self.nodes[name][0]
            raise SDFError(f"{self.where}: duplicate name {name!r} (a {other} and a {kind})")
        self.nodes[name] = (kind, relative_to, H, attached_to)

    def _check(self, name: str, owner: str, attribute: str) -> None:
        if name not in self.nodes and name not in (_MODEL, _WORLD):
            raise UnknownNameError(
                "frame", name, sorted(self.nodes), where=f"{self.where}: {owner} {attribute}"
            )

    def pose(self, name: str, owner: str = "", attribute: str = "relative_to") -> Transform:
        """``M_H_name``: the pose of frame ``name`` in the model frame."""
        self._check(name, owner or f"frame {name!r}", attribute)
        path: list[str] = []
        on_path: set[str] = set()
        cur = name
        while cur not in self._poses:
            if cur in on_path:
                loop = " -> ".join(map(repr, [*path[path.index(cur) :], cur]))
                raise SDFError(f"{self.where}: the poses' relative_to form a cycle {loop}")
            path.append(cur)
            on_path.add(cur)
            kind, relative_to, _, _ = self.nodes[cur]
            self._check(relative_to, f"{kind} {cur!r}", "<pose relative_to>")
            cur = relative_to
        for node in reversed(path):
            _, relative_to, H, _ = self.nodes[node]
            self._poses[node] = self._poses[relative_to] @ H
        return self._poses[name]

    def body(self, name: str, owner: str, attribute: str) -> str:
        """The link the frame ``name`` is attached to (``world`` for the world frame); each frame's
        answer is kept, so resolving every frame of a chain takes time linear in its length."""
        self._check(name, owner, attribute)
        seen: list[str] = []
        on_path: set[str] = set()
        cur = name
        while cur not in self._bodies:
            if cur == _WORLD:
                self._bodies[cur] = _WORLD
                break
            if cur == _MODEL:
                self._bodies[cur] = self.canonical
                break
            kind, _, _, attached = self.nodes[cur]
            if kind == "link":
                self._bodies[cur] = cur
                break
            if cur in on_path:
                loop = " -> ".join(map(repr, [*seen[seen.index(cur) :], cur]))
                raise SDFError(f"{self.where}: the frames' attached_to form a cycle {loop}")
            seen.append(cur)
            on_path.add(cur)
            self._check(attached, f"{kind} {cur!r}", "attached_to")
            cur = attached
        link = self._bodies[cur]
        for node in seen:
            self._bodies[node] = link
        return link


# --------------------------------------------------------------------------- links and joints
def _links(doc: SdfDocument, frames: _Frames, check_inertia: bool, issues: Issues) -> list[Link]:
    out = []
    for link in doc.links:
        M_H_L = frames.pose(link.name)
        rel = link.inertial_pose.relative_to
        L_H_I = link.inertial_pose.H
        if rel and rel != link.name:
            L_H_I = M_H_L.inverse() @ frames.pose(rel, f"link {link.name!r} <inertial>") @ L_H_I
        out.append(
            inertial_link(link.name, link.mass, L_H_I.matrix, link.inertia, doc.where, check_inertia, issues)
        )
    return out


def _axis_in(frames: _Frames, axis: SdfAxis, joint: SdfJoint, C_H_M: Transform) -> np.ndarray:
    """The unit axis (3,) in the coordinates of the frame ``C`` (``C_H_M``: C from the model frame)."""
    expressed = axis.expressed_in or joint.name
    M_R_E = frames.pose(expressed, f"joint {joint.name!r}", "<xyz expressed_in>").rotation
    a = C_H_M.rotation @ M_R_E @ axis.xyz
    return a / np.linalg.norm(a)


def _limits(joint: SdfJoint, axis: SdfAxis) -> JointLimits:
    continuous = joint.type == "continuous"
    return JointLimits(
        lower=None if continuous else axis.lower,
        upper=None if continuous else axis.upper,
        effort=axis.effort,
        velocity=axis.velocity,
    )


def _kind(joint: SdfJoint) -> JointKind:
    if joint.type == "prismatic":
        return JointKind.PRISMATIC
    if joint.type == "continuous":
        return JointKind.CONTINUOUS
    return JointKind.REVOLUTE


def _joints(
    doc: SdfDocument, frames: _Frames, ends: dict[str, tuple[str, str]], taken: set[str]
) -> tuple[list[Joint], list[Link]]:
    """The neutral joints (two for a universal joint) and the massless links they add."""
    joints: list[Joint] = []
    extra: list[Link] = []
    for j in doc.joints:
        parent, child = ends[j.name]
        M_H_P, M_H_C = frames.pose(parent), frames.pose(child)
        M_H_J = frames.pose(j.name)
        P_H_C = M_H_P.inverse() @ M_H_C
        if j.type == "fixed":
            joints.append(Joint(j.name, JointKind.FIXED, parent, child, P_H_C))
            continue
        C_H_M = M_H_C.inverse()
        C_p_J = (C_H_M @ M_H_J).translation
        if j.type == "ball":  # about the joint frame's origin (its orientation changes no motion)
            joints.append(
                Joint(j.name, JointKind.BALL, parent, child, P_H_C, axis_origin=C_p_J, armature=j.armature)
            )
            continue
        if j.type != "universal":
            axis = _axis_in(frames, j.axes[0], j, C_H_M)
            joints.append(
                Joint(
                    j.name,
                    _kind(j),
                    parent,
                    child,
                    P_H_C,
                    axis=axis,
                    axis_origin=C_p_J,
                    limits=_limits(j, j.axes[0]),
                    armature=j.armature,
                )
            )
            continue
        middle = unique_name(f"{child}__{j.name}", taken, "_")
        taken.add(middle)
        extra.append(Link(middle, SpatialInertia.zero()))
        J_H_M = M_H_J.inverse()
        first = Joint(
            j.name,
            JointKind.REVOLUTE,
            parent,
            middle,
            M_H_P.inverse() @ M_H_J,
            axis=_axis_in(frames, j.axes[0], j, J_H_M),
            limits=_limits(j, j.axes[0]),
        )
        second_name = unique_name(j.name + AXIS2_SUFFIX, taken, "_")  # a joint may have the name
        taken.add(second_name)
        second = Joint(
            second_name,
            JointKind.REVOLUTE,
            middle,
            child,
            J_H_M @ M_H_C,
            axis=_axis_in(frames, j.axes[1], j, C_H_M),
            axis_origin=C_p_J,
            limits=_limits(j, j.axes[1]),
        )
        joints += [first, second]
    return joints, extra


def _ends(doc: SdfDocument, frames: _Frames) -> dict[str, tuple[str, str]]:
    """Each joint's (parent link, child link), the ``<parent>``/``<child>`` frames resolved to the
    links they are attached to; errors for a joint to itself, from the world's child, two parents."""
    out: dict[str, tuple[str, str]] = {}
    parent_of: dict[str, str] = {}
    for j in doc.joints:
        owner = f"joint {j.name!r}"
        parent = frames.body(j.parent, owner, "<parent>")
        child = frames.body(j.child, owner, "<child>")
        if child == _WORLD:
            raise SDFError(f"{doc.where}: {owner} has the world as its <child>")
        if parent == child:
            raise SDFError(f"{doc.where}: {owner} connects link {child!r} to itself")
        if child in parent_of:
            raise SDFError(
                f"{doc.where}: link {child!r} has two parents (joints {parent_of[child]!r} and {j.name!r}): "
                "a closed kinematic loop, which bridge's trees cannot hold"
            )
        parent_of[child] = j.name
        out[j.name] = (parent, child)
    return out


def _mimics(doc: SdfDocument, joints: Sequence[Joint], mode: str | None, issues: Issues) -> list[Mimic]:
    tags = []
    for j in doc.joints:
        for k, axis in enumerate(j.axes):
            if axis.mimic is not None:
                name = j.name + (AXIS2_SUFFIX if k else "")
                tags.append(Mimic(name, axis.mimic[0], axis.mimic[1], axis.mimic[2]))
    return mimic_relations(tags, joints, doc.where, mode, issues)


def _base(
    doc: SdfDocument, frames: _Frames, joints: list[Joint], links: list[Link]
) -> tuple[str, bool, list[Joint], list[Link]]:
    """(base link, fixed to the world, joints, links) (module docstring, "Base"): a link welded to
    the world is the fixed base (the weld removed), else a model with joints to the world or several
    root links has a massless ``world`` link as its fixed base, else its root link is the floating
    base; the other root links (SDFormat's free bodies) get free joints from the fixed base."""
    from_world = [j for j in joints if j.parent == _WORLD]
    children = {j.child for j in joints}
    roots = [link.name for link in links if link.name not in children]
    if len(from_world) == 1 and from_world[0].kind is JointKind.FIXED:
        weld = from_world[0]
        rest = [j for j in joints if j is not weld]
        return weld.child, True, rest + _free(frames, weld.child, roots, joints), links
    if from_world or len(roots) > 1:
        world = [Link(_WORLD, SpatialInertia.zero()), *links]
        return _WORLD, True, joints + _free(frames, _WORLD, roots, joints), world
    if not roots:
        raise SDFError(f"{doc.where}: no root link: the joints form a closed kinematic loop")
    return roots[0], False, joints, links


def _free(frames: _Frames, parent: str, roots: list[str], joints: list[Joint]) -> list[Joint]:
    """A free joint from ``parent`` (the welded base or the world) to each link of ``roots`` (links
    without a parent joint: SDFormat's free bodies), named after the link (as Drake names the
    floating joint it gives such a link), at the link's pose."""
    taken = {j.name for j in joints}
    named = {link.name: link.free_joint for link in frames.doc.links if link.free_joint}
    out = []
    for root in roots:
        name = named.get(root) or unique_name(root, taken, "_")
        taken.add(name)
        rest = frames.pose(parent).inverse() @ frames.pose(root)
        out.append(Joint(name, JointKind.FREE, parent, root, rest))
    return out


def _frames(doc: SdfDocument, frames: _Frames, link_names: set[str]) -> list[Frame]:
    out = []
    for f in doc.frames:
        link = frames.body(f.name, f"frame {f.name!r}", "attached_to")
        if link == _WORLD and _WORLD in link_names:  # the world is the model's base link
            out.append(Frame(f.name, _WORLD, frames.pose(_WORLD).inverse() @ frames.pose(f.name)))
            continue
        if link not in link_names:
            raise SDFError(
                f"{doc.where}: frame {f.name!r} is attached to the world, not to a link of the model"
            )
        out.append(Frame(f.name, link, frames.pose(link).inverse() @ frames.pose(f.name)))
    return out


def _own_names(model: Model, mimics: list[Mimic], doc: SdfDocument) -> tuple[Model, list[Mimic]]:
    """The model and mimic relations with each element's own name (``bridge:name``, written by
    :func:`bridge.model.sdf_writer.model_to_sdf` where the SDF name had to differ)."""
    names = doc.own_names
    if not names and not doc.own_name:
        return model, mimics

    def own(name: str) -> str:
        return names.get(name, name)

    renamed = _renamed(model, own, own, own).replace(name=doc.own_name or model.name)
    return renamed, [dataclasses.replace(m, joint=own(m.joint), master=own(m.master)) for m in mimics]


def _renamed(model: Model, link: Callable, joint: Callable, frame: Callable) -> Model:
    """``model`` with its links, joints and frames renamed by the three functions."""
    links = tuple(Link(link(x.name), x.inertia) for x in model.links)
    joints = tuple(
        dataclasses.replace(j, name=joint(j.name), parent=link(j.parent), child=link(j.child))
        for j in model.joints
    )
    frames = tuple(Frame(frame(f.name), link(f.link), f.link_H_frame) for f in model.frames)
    return model.replace(
        links=links,
        joints=joints,
        frames=frames,
        base=link(model.base),
        dof_names=tuple(joint(d) for d in model.dof_names),
        synthetic_links=frozenset(link(n) for n in model.synthetic_links),
    )


def sdf_named(model: Model, path_or_xml: str | bytes | os.PathLike) -> Model:
    """``model`` (read from the SDF file ``path_or_xml`` by :func:`load_sdf`) with the SDF names of
    its links, joints and frames where the file gives an element its own name (``bridge:name``), and
    its free bodies' joints named after their links (``bridge:free_joint``): the names other
    SDFormat readers (Drake) know them by."""
    doc = read_document(*read_source(path_or_xml))
    maps = [
        {x.own_name: x.name for x in items if x.own_name} for items in (doc.links, doc.joints, doc.frames)
    ]
    # a free body's free joint (bridge:free_joint): other readers name it after its link
    maps[1].update({x.free_joint: x.name for x in doc.links if x.free_joint})
    if not any(maps):
        return model
    link, joint, frame = (lambda n, m=m: m.get(n, n) for m in maps)
    return _renamed(model, link, joint, frame)


def _warn_world(doc: SdfDocument, issues: Issues) -> None:
    if doc.world_rest:
        tags = ", ".join(dict.fromkeys(f"<{t}>" for t in doc.world_rest))
        issues.report(
            SDFError(f"{doc.where}: the world's {tags} are not part of model {doc.name!r}: left out"),
            SDFWarning,
        )


def load_sdf(
    path_or_xml: str | bytes | os.PathLike,
    base: str | None = None,
    joints: Sequence[str] | None = None,
    floating: bool | None = None,
    locked: Mapping[str, float] | None = None,
    check_inertia: bool = True,
    mimic: str | None = None,
    strict: bool = False,
) -> Model:
    """Load the model of an SDFormat file (or XML text) into a neutral model.

    Semantics: the module docstring. The options are :func:`bridge.load_urdf`'s, except
    ``floating``, which defaults to what the file says.

    Args:
        path_or_xml: a file path (``str`` or path-like) or the SDF XML (a ``str`` starting with ``<``,
            or ``bytes``): an ``<sdf>`` with one ``<model>``, at the top or in one ``<world>`` (the
            rest of the world is left out with a :class:`bridge.SDFWarning`).
        base: the base link (default: the link welded to the world, else the root of the tree).
        joints: the DOF serialization (default: the movable joints in document order, a universal
            joint ``J`` as ``J``, ``J__axis2``); others are locked at ``locked.get(name, 0.0)``.
        floating: floating base (True) or fixed to the world (False); default (None): fixed when
            a joint attaches the model to ``world``, floating otherwise.
        locked: positions of locked joints (as for ``load_urdf``).
        check_inertia: check every link inertia (a warning, or an error with ``strict``).
        mimic: what to do with ``<axis><mimic>`` (SDFormat 1.9+): as for ``load_urdf``.
        strict: raise instead of warning.

    Raises:
        ModelFileNotFoundError: the file does not exist.
        SDFError: malformed XML or an invalid model (the message names the file and element).
        UnsupportedError: includes, several or nested models, screw/gearbox/revolute2 joints.
        InertiaError: a non-physical link inertia (with ``strict``).
        UnknownNameError: ``base``, ``joints``, ``locked`` or a pose's ``relative_to`` names nothing.
    """
    fixed_given = floating is not None
    floating, check_inertia, strict, joints = check_arguments(
        base, joints, True if floating is None else floating, locked, check_inertia, mimic, strict
    )
    issues = Issues(strict)
    data, where = read_source(path_or_xml)
    doc = read_document(data, where)
    _warn_world(doc, issues)
    frames = _Frames(doc)
    links = _links(doc, frames, check_inertia, issues)
    ends = _ends(doc, frames)
    joint_list, extra = _joints(doc, frames, ends, {*frames.nodes, _WORLD})
    root, welded, joint_list, links = _base(doc, frames, joint_list, links + extra)
    link_names = {link.name for link in links}
    mimics = _mimics(doc, joint_list, mimic, issues)
    if not fixed_given:
        floating = not welded
    dofs = tuple(j.name for j in joint_list if j.movable)
    try:
        model = Model(
            doc.name,
            links,
            joint_list,
            _frames(doc, frames, link_names),
            root,
            dofs,
            floating,
            synthetic_links=frozenset(link.name for link in doc.links if link.synthetic),
            gravity=doc.gravity,
        )
        model, mimics = _own_names(model, mimics, doc)
        if doc.dof_order and sorted(doc.dof_order) == sorted(model.dof_names):  # (bridge:dofs)
            model = model.with_dofs(doc.dof_order)
        model = rooted_and_selected(model, where, base, joints, locked, mimics if mimic == "coupled" else [])
    except UnknownNameError:
        raise
    except ModelError as exc:
        raise type(exc)(f"{where}: {exc}") from None
    except BridgeError as exc:  # pragma: no cover - a pose the model refuses
        raise SDFError(f"{where}: {exc}") from None
    issues.emit(stacklevel=2)
    return model
