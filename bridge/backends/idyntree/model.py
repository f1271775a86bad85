"""Neutral models to and from ``iDynTree.Model``.

Models are built through iDynTree's own API (links, ``RevoluteJoint`` / ``PrismaticJoint`` /
``FixedJoint``, additional frames), never by writing URDF text, so a model iDynTree built in code or
read from SDF converts as well as one read from URDF. ``idyntree`` is imported inside the
functions, never when bridge is imported.

Joint semantics (checked against iDynTree's sources and numerically in the tests): an iDynTree joint
is undirected; for the two links it connects, ``getRestTransform(parent, child)`` is the rest pose
``parent_H_child`` and ``getAxis(child, parent)`` is the axis **in child coordinates**, signed so that
``parent_H_child(s) = parent_H_child_rest @ H(axis, s)``. That is exactly the neutral :class:`Joint`
(axis and axis origin in child coordinates), so both directions copy the numbers:
``setAxis(axis, child, parent)`` stores it (iDynTree keeps it internally in its first attached link's
coordinates, after the rest transform has been set).

DOF serialization: iDynTree gives each joint its DOF offset in the order joints are added to the
model, so :func:`to_idyntree` adds the movable joints first, in ``model.dof_names`` order, and the
fixed (and locked) joints after them; :func:`from_idyntree` names the DOFs in iDynTree's
serialization (``getDOFsOffset``).

Fixed-base models: iDynTree has no fixed base. ``KinDynComputations`` always works with a floating
base (6 base coordinates first); the fixed-base quantities of a model with ``floating=False`` are
its joint blocks (``M[6:, 6:]``, ``h[6:]``, ...) computed with the base velocity (and base
acceleration) set to zero, while the base pose stays the ``world_H_base`` that was set (it fixes
where gravity points in the base frame). With a zero base velocity these joint blocks do not depend
on the velocity representation. :func:`to_idyntree` produces the same ``iDynTree.Model`` for
both; the ``floating`` flag lives only in the neutral model (:func:`from_idyntree` takes it as an
argument).

Not carried over: visual/collision shapes, sensors, joint damping/friction. A revolute joint
without position limits becomes a continuous joint when read back (iDynTree has no separate
continuous type).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bridge._array import as_bool, as_name
from bridge.errors import BackendError, ModelError, UnknownNameError, UnsupportedError
from bridge.model.building import finite_limit, movable_joint
from bridge.model.joints import require_single_coordinate
from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model
from bridge.spatial import SpatialInertia, Transform

if TYPE_CHECKING:  # pragma: no cover
    import idyntree.bindings as idyn_t

__all__ = ["from_idyntree", "to_idyntree"]

_INVALID_INDEX = -1  # iDynTree's LINK_INVALID_INDEX / JOINT_INVALID_INDEX / FRAME_INVALID_INDEX
_DBL_MAX = float(np.finfo(np.float64).max)  # iDynTree's "no limit" value


def _idyn():
    import idyntree.bindings as idyn

    return idyn


# ---------------------------------------------------------------------------------- conversions
def _idyn_transform(T: Transform):
    idyn = _idyn()
    return idyn.Transform(idyn.Rotation(np.array(T.rotation)), idyn.Position(np.array(T.translation)))


def _transform(T) -> Transform:
    """A bridge Transform from an ``iDynTree.Transform``."""
    H = T.asHomogeneousTransform()  # named: the copy below must not read a freed temporary
    return Transform(np.array(H.toNumPy(), dtype=np.float64), check=False)


def _idyn_inertia(inertia: SpatialInertia):
    """``iDynTree.SpatialInertia`` (its constructor takes the rotational inertia about the origin)."""
    idyn = _idyn()
    return idyn.SpatialInertia(
        float(inertia.mass),
        idyn.Position(np.array(inertia.com)),
        idyn.RotationalInertia(np.array(inertia.inertia_origin)),
    )


def _inertia(inertia) -> SpatialInertia:
    """A bridge SpatialInertia from an ``iDynTree.SpatialInertia`` (massless links allowed)."""
    return SpatialInertia.from_idyntree_parameters(np.array(inertia.asVector().toNumPy(), dtype=np.float64))


def _limit(value: float | None, default: float) -> float:
    return default if value is None else float(value)


def _read_limit(value: float) -> float | None:
    return finite_limit(value, _DBL_MAX)


def _idyn_joint(joint: Joint, parent: int, child: int):
    """An iDynTree joint attached to link indices ``(parent, child)`` for a neutral joint."""
    idyn = _idyn()
    if not joint.movable:
        J = idyn.FixedJoint()
        J.setAttachedLinks(parent, child)
        J.setRestTransform(_idyn_transform(joint.parent_H_child))
        return J
    J = idyn.RevoluteJoint() if joint.kind.rotational else idyn.PrismaticJoint()
    J.setAttachedLinks(parent, child)
    # the rest transform first: setAxis(axis, child, parent) converts with it
    J.setRestTransform(_idyn_transform(joint.parent_H_child))
    J.setAxis(
        idyn.Axis(idyn.Direction(np.array(joint.axis)), idyn.Position(np.array(joint.axis_origin))),
        child,
        parent,
    )
    lim = joint.limits
    has_pos_limits = lim.lower is not None or lim.upper is not None
    if (
        joint.kind is not JointKind.CONTINUOUS
        and has_pos_limits
        and not (
            J.setPosLimits(0, _limit(lim.lower, -_DBL_MAX), _limit(lim.upper, _DBL_MAX))
            and J.enablePosLimits(True)
        )
    ):
        raise BackendError(f"iDynTree rejected the position limits of joint {joint.name!r}")
    if lim.effort is not None and not (J.setEffortLimit(0, float(lim.effort)) and J.enableEffortLimits(True)):
        raise BackendError(f"iDynTree rejected the effort limit of joint {joint.name!r}")
    if lim.velocity is not None and not (
        J.setVelocityLimit(0, float(lim.velocity)) and J.enableVelocityLimits(True)
    ):
        raise BackendError(f"iDynTree rejected the velocity limit of joint {joint.name!r}")
    return J


def to_idyntree(model: Model) -> idyn_t.Model:
    """Build the ``iDynTree.Model`` of a neutral model.

    Every link with its spatial inertia (in the link frame), every joint (revolute and continuous ->
    ``RevoluteJoint``, prismatic -> ``PrismaticJoint``, fixed and locked -> ``FixedJoint`` at the
    locked pose) with its rest transform, axis direction and axis origin, position limits for
    revolute and prismatic joints that have them, effort and velocity limits where given; every
    extra frame as an additional frame of its link. The DOF serialization equals
    ``model.dof_names`` and the default base link is ``model.base``. iDynTree has no mimic joints: a
    coupled model (``load_urdf(..., mimic="coupled")``) converts as its full model ``model.full``
    (every mimic joint a DOF), whose states are ``model.full_positions(s)`` etc.

    Raises:
        BackendError: iDynTree rejected a link, joint or frame (the message names it).
    """
    idyn = _idyn()
    if not isinstance(model, Model):
        raise BackendError(f"to_idyntree expects a bridge Model, got {type(model).__name__}")
    model = getattr(model, "full", None) or model  # a coupled model: its full model
    require_single_coordinate(model, "iDynTree's KinDynComputations")
    im = idyn.Model()
    index: dict[str, int] = {}
    for link in model.links:
        L = idyn.Link()
        L.setInertia(_idyn_inertia(link.inertia))
        k = im.addLink(link.name, L)
        if k == _INVALID_INDEX:
            raise BackendError(f"iDynTree rejected link {link.name!r} of model {model.name!r}")
        index[link.name] = k
    # DOF offsets are assigned in the order joints are added: movable joints first, in DOF order
    for j in (*model.movable_joints, *(j for j in model.joints if not j.movable)):
        k = im.addJoint(j.name, _idyn_joint(j, index[j.parent], index[j.child]))
        if k == _INVALID_INDEX:
            raise BackendError(
                f"iDynTree rejected joint {j.name!r} ({j.parent!r} -> {j.child!r}) of model {model.name!r}"
            )
    for d, name in enumerate(model.dof_names):
        offset = im.getJoint(im.getJointIndex(name)).getDOFsOffset()
        if offset != d:  # pragma: no cover - guards against a change in iDynTree's numbering
            raise BackendError(f"iDynTree put DOF {name!r} at offset {offset}, expected {d}")
    if not im.setDefaultBaseLink(index[model.base]):
        raise BackendError(f"iDynTree rejected base link {model.base!r} of model {model.name!r}")
    for f in model.frames:
        if not im.addAdditionalFrameToLink(f.link, f.name, _idyn_transform(f.link_H_frame)):
            raise BackendError(
                f"iDynTree rejected frame {f.name!r} (on link {f.link!r}) of model {model.name!r}"
            )
    return im


def _as_idyn_model(obj: Any):
    idyn = _idyn()
    if isinstance(obj, idyn.Model):
        return obj
    if isinstance(obj, idyn.ModelLoader | idyn.KinDynComputations):
        return obj.model()
    raise BackendError(
        f"from_idyntree expects an iDynTree Model (or a ModelLoader / KinDynComputations), "
        f"got {type(obj).__name__}"
    )


def _check_tree(im) -> None:
    """Raise unless links and joints form one tree (iDynTree's traversal would loop on a cycle)."""
    n = im.getNrOfLinks()
    root = list(range(n))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for ji in range(im.getNrOfJoints()):
        J = im.getJoint(ji)
        a, b = find(J.getFirstAttachedLink()), find(J.getSecondAttachedLink())
        if a == b:
            raise ModelError(f"iDynTree model: joint {im.getJointName(ji)!r} closes a kinematic loop")
        root[a] = b
    groups: dict[int, list[str]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(im.getLinkName(i))
    if len(groups) > 1:
        parts = sorted(groups.values(), key=len)
        raise ModelError(
            f"iDynTree model: links not connected by joints to the rest of the tree: "
            f"{sorted(name for part in parts[:-1] for name in part)}"
        )


def _joint_limits(J) -> tuple[float | None, float | None, float | None, float | None]:
    lower = upper = effort = velocity = None
    if J.hasPosLimits():
        lower, upper = _read_limit(J.getMinPosLimit(0)), _read_limit(J.getMaxPosLimit(0))
    if J.hasEffortLimits():
        effort = float(J.getEffortLimit(0))
    if J.hasVelocityLimits():
        velocity = float(J.getVelocityLimit(0))
    return lower, upper, effort, velocity


def _base_index(im, link_names: list[str], base: str | None) -> int:
    """The index of the base link: ``base``'s, or the model's default base link."""
    if base is None:
        base_index = im.getDefaultBaseLink()
        if base_index == _INVALID_INDEX or not 0 <= base_index < len(link_names):
            raise ModelError("iDynTree model has no default base link; pass base=...")
        return base_index
    if base not in link_names:
        raise UnknownNameError("base link", base, link_names, where="iDynTree model")
    return link_names.index(base)


def _traversal(im, base_index: int, link_names: list[str]):
    """iDynTree's full-tree traversal from ``base_index`` (reaching every link)."""
    trav = _idyn().Traversal()
    if not im.computeFullTreeTraversal(trav, base_index):
        raise BackendError(f"iDynTree could not compute the traversal from base {link_names[base_index]!r}")
    if trav.getNrOfVisitedLinks() != len(link_names):  # pragma: no cover - excluded by _check_tree
        raise ModelError("iDynTree model: the traversal does not reach every link")
    return trav


def _one_dof_joint(J, jname: str):
    """A 1-DOF iDynTree joint as its revolute or prismatic type (else UnsupportedError)."""
    if J.isRevoluteJoint():
        return J.asRevoluteJoint()
    if J.isPrismaticJoint():
        return J.asPrismaticJoint()
    kind = "spherical" if J.isSphericalJoint() else f"{J.getNrOfDOFs()}-DOF"
    raise UnsupportedError(
        f"iDynTree joint {jname!r} is a {kind} joint; bridge supports revolute, prismatic and fixed"
    )


def _idyn_to_joint(im, ji: int, parent: int, child: int, link_names: list[str]) -> Joint:
    """The neutral joint of iDynTree joint ``ji`` read from link ``parent`` to link ``child``: rest
    transform ``parent_H_child`` (4x4), axis and axis origin (3,) in child coordinates, limits."""
    J = im.getJoint(ji)
    jname = im.getJointName(ji)
    rest = _transform(J.getRestTransform(parent, child))
    if J.isFixedJoint():
        return Joint(jname, JointKind.FIXED, link_names[parent], link_names[child], rest)
    J = _one_dof_joint(J, jname)
    axis = J.getAxis(child, parent)
    return movable_joint(
        jname,
        link_names[parent],
        link_names[child],
        rest,
        prismatic=not J.isRevoluteJoint(),
        axis=np.array(axis.getDirection().toNumPy(), dtype=np.float64),
        axis_origin=np.array(axis.getOrigin().toNumPy(), dtype=np.float64),
        limits=JointLimits(*_joint_limits(J)),
    )


def _idyn_joints(im, trav, link_names: list[str]) -> list[Joint]:
    """The joints in iDynTree's joint order, oriented by the traversal (away from its base)."""
    joints: dict[int, Joint] = {}
    for t in range(1, trav.getNrOfVisitedLinks()):
        ji = trav.getParentJoint(t).getIndex()
        joints[ji] = _idyn_to_joint(
            im, ji, trav.getParentLink(t).getIndex(), trav.getLink(t).getIndex(), link_names
        )
    return [joints[ji] for ji in sorted(joints)]


def from_idyntree(
    idyn_model: Any, base: str | None = None, floating: bool = True, name: str = "idyntree_model"
) -> Model:
    """The neutral model of an ``iDynTree.Model``.

    Args:
        idyn_model: an ``iDynTree.Model`` (a ``ModelLoader`` or ``KinDynComputations`` gives its
            ``model()``).
        base: base link name; default: the model's default base link.
        floating: floating base (default) or fixed to the world at ``base``.
        name: the neutral model's name (iDynTree models have none).

    Links and inertias in iDynTree's link order; joints in iDynTree's joint order, oriented away
    from ``base`` (rest transform ``parent_H_child`` and axis/origin in child coordinates, read with
    the traversal's parent/child); DOF names in iDynTree's DOF serialization; additional frames as
    frames.

    Raises:
        UnknownNameError: ``base`` is not a link of the model.
        ModelError: the links do not form one tree.
        UnsupportedError: a joint type bridge does not support (e.g. spherical).
    """
    im = _as_idyn_model(idyn_model)
    base = None if base is None else as_name(base, "from_idyntree: base")
    floating, name = as_bool(floating, "from_idyntree: floating"), as_name(name, "from_idyntree: name")
    n_links = im.getNrOfLinks()
    if n_links == 0:
        raise ModelError("iDynTree model has no links")
    link_names = [im.getLinkName(i) for i in range(n_links)]
    base_index = _base_index(im, link_names, base)
    _check_tree(im)
    ordered = _idyn_joints(im, _traversal(im, base_index, link_names), link_names)
    dof_names = tuple(
        j.name
        for j in sorted(
            (j for j in ordered if j.movable),
            key=lambda j: im.getJoint(im.getJointIndex(j.name)).getDOFsOffset(),
        )
    )
    links = [Link(link_names[i], _inertia(im.getLink(i).getInertia())) for i in range(n_links)]
    frames = [
        Frame(im.getFrameName(f), link_names[im.getFrameLink(f)], _transform(im.getFrameTransform(f)))
        for f in range(n_links, im.getNrOfFrames())
    ]
    return Model(name, links, ordered, frames, link_names[base_index], dof_names, bool(floating))
