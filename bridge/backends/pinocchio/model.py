"""Neutral models to and from Pinocchio.

Model layout (``to_pinocchio``; docs/conventions.md, "Model structure from one URDF", compares it
with the other libraries):

* a floating base is a ``JointModelFreeFlyer`` named ``root_joint`` whose body is the base link; a
  fixed base attaches the base link to ``universe``;
* every movable joint becomes a Pinocchio joint whose frame J sits at the axis origin with the
  child link's orientation (``J = (axis origin, [child])``), so Pinocchio's axis (through J's
  origin) equals the neutral axis: ``parent_H_J = rest @ trans(o)`` and ``J_H_child = trans(-o)``.
  Axes equal to +x/+y/+z use the aligned joint types (RX, RY, RZ, PX, ... , RUBX, ...), others the
  unaligned ones; continuous joints use the unbounded types (q = (cos, sin)). Pinocchio's Python
  bindings cannot set the axis of ``JointModelRevoluteUnboundedUnaligned``, so an unaligned
  continuous joint is a ``JointModelRUBZ`` in a joint frame rotated to put the axis along z;
* fixed (and locked) joints are merged like Pinocchio's URDF parser does: the child's inertia is
  appended to the parent's Pinocchio joint and a ``FIXED_JOINT`` frame is added;
* every link is a ``BODY`` frame and every extra frame an ``OP_FRAME``, with the same names;
* joint armature goes to ``model.armature`` (Pinocchio's velocity order), which Pinocchio's CRBA,
  RNEA and ABA add to the joint's diagonal of M (the centroidal map does not use it).

Pinocchio orders the joint velocities depth first (:mod:`.state` has the layout and the states).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bridge.errors import BackendError
from bridge.model.gravity import model_gravity
from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model
from bridge.spatial import SpatialInertia, Transform, rotation_between

from .mimic import apply_mimics, pinocchio_joint_order

if TYPE_CHECKING:  # pragma: no cover
    import pinocchio

__all__ = ["ROOT_JOINT", "from_pinocchio", "to_pinocchio"]

ROOT_JOINT = "root_joint"
_AXIS_TOL = 1e-12


def _pin():
    import pinocchio

    return pinocchio


def _se3(T: Transform):
    pin = _pin()
    return pin.SE3(np.array(T.rotation), np.array(T.translation))


def _transform(M) -> Transform:
    return Transform.from_rotation_translation(np.array(M.rotation), np.array(M.translation), check=False)


def _pin_inertia(inertia: SpatialInertia):
    # field by field: pin.Inertia's constructor refuses non-physical inertias and its dynamic
    # parameters cannot carry a zero mass with a rotational inertia, both of which
    # load_urdf(check_inertia=False) lets through on purpose
    pin = _pin()
    out = pin.Inertia.Zero()
    out.mass = float(inertia.mass)
    out.lever = np.array(inertia.com, dtype=float)
    out.inertia = np.array(inertia.inertia_com, dtype=float)
    return out


def _joint_model(joint: Joint):
    """The Pinocchio joint model for a movable joint (axis in the joint frame = child axes)."""
    pin = _pin()
    d = joint.axis
    aligned = None
    for i, letter in enumerate("XYZ"):
        e = np.zeros(3)
        e[i] = 1.0
        if np.max(np.abs(d - e)) < _AXIS_TOL:
            aligned = letter
    if joint.kind is JointKind.REVOLUTE:
        return getattr(pin, f"JointModelR{aligned}")() if aligned else pin.JointModelRevoluteUnaligned(d)
    if joint.kind is JointKind.CONTINUOUS:
        if aligned:
            return getattr(pin, f"JointModelRUB{aligned}")()
        # pin's Python bindings cannot set the axis of JointModelRevoluteUnboundedUnaligned: the
        # joint frame is rotated instead so that the axis is its z axis (see _joint_frame)
        return pin.JointModelRUBZ()
    if joint.kind is JointKind.PRISMATIC:
        return getattr(pin, f"JointModelP{aligned}")() if aligned else pin.JointModelPrismaticUnaligned(d)
    if joint.kind is JointKind.BALL:  # q quaternion (x, y, z, w), v the angular velocity in J (= child axes)
        return pin.JointModelSpherical()
    if joint.kind is JointKind.FREE:  # q [position; quaternion (x, y, z, w)], v the twist in J (= child)
        return pin.JointModelFreeFlyer()
    if joint.kind is JointKind.PLANAR:  # q [x, y, cos, sin] in J's xy plane, v (vx, vy, w) in J
        return pin.JointModelPlanar()
    raise BackendError(f"joint {joint.name!r}: no Pinocchio joint model for kind {joint.kind.value!r}")


def _joint_frame(joint: Joint, jm) -> Transform:
    """``child_H_J``: the Pinocchio joint frame J at the axis origin (a ball joint's centre), with
    the child's orientation unless the joint model needs the axis along z (unaligned continuous
    joints; a planar joint, whose plane is J's xy plane: J's axes are the plane axes e1, e2 and the
    normal of :func:`bridge.model.joints.plane_axes`)."""
    o = joint.axis_origin
    if joint.kind is JointKind.PLANAR:
        plane = rotation_between((0.0, 0.0, 1.0), joint.axis)
        return Transform.from_rotation_translation(plane, o, check=False)
    if (
        jm.shortname() == "JointModelRUBZ"
        and np.max(np.abs(joint.axis - np.array([0.0, 0.0, 1.0]))) >= _AXIS_TOL
    ):
        z_to_axis = rotation_between((0.0, 0.0, 1.0), joint.axis)
        return Transform.from_rotation_translation(z_to_axis, o, check=False)
    return Transform.from_translation(o)


def _limit(value: float | None, default: float) -> float:
    return default if value is None else float(value)


def _bound(value: float | None) -> float:
    """An effort or velocity limit for Pinocchio: none, or a negative one (meaningless; the URDF
    loader warns about it), is no limit (Pinocchio refuses a negative one)."""
    return np.inf if value is None or not value >= 0.0 else float(value)


def _add_base(pm: pinocchio.Model, model: Model) -> tuple[int, Transform, int]:
    """The base link's body: on a ``JointModelFreeFlyer`` :data:`ROOT_JOINT` (no position limits) for
    a floating base, else on ``universe``; returns its place ``(joint id, joint_H_link, BODY frame id)``."""
    pin = _pin()
    if model.floating:
        jid = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), ROOT_JOINT)
        pm.lowerPositionLimit[:7] = -np.inf  # a free flyer has no position limits
        pm.upperPositionLimit[:7] = np.inf
        parent_frame = pm.addJointFrame(jid, 0)
    else:
        jid, parent_frame = 0, 0
    pm.appendBodyToJoint(jid, _pin_inertia(model.link(model.base).inertia), pin.SE3.Identity())
    fid = pm.addBodyFrame(model.base, jid, pin.SE3.Identity(), parent_frame)
    return jid, Transform.identity(), fid


def _add_movable(
    pm: pinocchio.Model, joint: Joint, child: Link, place: tuple[int, Transform, int]
) -> tuple[int, Transform, int]:
    """A Pinocchio joint for a movable ``joint`` below the parent's ``place`` (its frame J at the
    axis origin, see :func:`_joint_frame`), with its limits, joint frame, the child's inertia and
    BODY frame; returns the child's place ``(joint id, J_H_child, BODY frame id)``."""
    pin = _pin()
    pj, pj_H_parent, parent_fid = place
    jm = _joint_model(joint)
    child_H_J = _joint_frame(joint, jm)
    parent_H_J = joint.parent_H_child @ child_H_J
    J_H_child = child_H_J.inverse()
    lim = joint.limits
    bounded = joint.kind is not JointKind.CONTINUOUS
    lower = np.full(jm.nq, _limit(lim.lower, -np.inf) if bounded else -1.01)
    upper = np.full(jm.nq, _limit(lim.upper, np.inf) if bounded else 1.01)
    if joint.kind.wide:  # no position limits; Pinocchio's bounds of a quaternion or a (cos, sin) pair
        lower, upper = np.full(jm.nq, -np.inf), np.full(jm.nq, np.inf)
        if joint.kind is JointKind.PLANAR:
            lower[2:], upper[2:] = -1.01, 1.01
    effort = np.full(jm.nv, _bound(lim.effort))
    velocity = np.full(jm.nv, _bound(lim.velocity))
    jid = pm.addJoint(pj, jm, _se3(pj_H_parent @ parent_H_J), joint.name, effort, velocity, lower, upper)
    jfid = pm.addJointFrame(jid, parent_fid)
    pm.appendBodyToJoint(jid, _pin_inertia(child.inertia.transformed(J_H_child)), pin.SE3.Identity())
    fid = pm.addBodyFrame(child.name, jid, _se3(J_H_child), jfid)
    return jid, J_H_child, fid


def _add_fixed(
    pm: pinocchio.Model, joint: Joint, child: Link, place: tuple[int, Transform, int]
) -> tuple[int, Transform, int]:
    """A fixed ``joint`` merged into the parent's Pinocchio joint (``place``): a FIXED_JOINT frame,
    the child's inertia appended (if any) and its BODY frame; returns the child's place."""
    pin = _pin()
    pj, pj_H_parent, parent_fid = place
    pj_H_child = pj_H_parent @ joint.parent_H_child
    ffid = pm.addFrame(pin.Frame(joint.name, pj, parent_fid, _se3(pj_H_child), pin.FrameType.FIXED_JOINT))
    if np.any(child.inertia.parameters != 0.0):
        pm.appendBodyToJoint(pj, _pin_inertia(child.inertia), _se3(pj_H_child))
    fid = pm.addBodyFrame(child.name, pj, _se3(pj_H_child), ffid)
    return pj, pj_H_child, fid


def _set_armature(pm: pinocchio.Model, armature: dict[int, float]) -> None:
    """``pm.armature`` (nv,) from ``armature`` (Pinocchio velocity index -> armature; left as is
    when empty)."""
    if armature:
        arm = np.zeros(pm.nv)
        for k, a in armature.items():
            arm[k] = a
        pm.armature = arm


def _add_joints(
    pm: pinocchio.Model, model: Model, place: dict[str, tuple[int, Transform, int]]
) -> dict[int, float]:
    """Every joint of ``model`` in Pinocchio's order, each child's place recorded in ``place`` (link
    -> ``(joint id, joint_H_link, BODY frame id)``); returns the armature by velocity index."""
    armature: dict[int, float] = {}
    for joint in pinocchio_joint_order(model):
        child = model.link(joint.child)
        if joint.movable:
            place[child.name] = _add_movable(pm, joint, child, place[joint.parent])
            if joint.armature:
                start = pm.idx_vs[place[child.name][0]]
                for k in range(joint.nv):
                    armature[start + k] = joint.armature
        else:
            place[child.name] = _add_fixed(pm, joint, child, place[joint.parent])
    return armature


def to_pinocchio(model: Model) -> pinocchio.Model:
    """Build a ``pinocchio.Model`` for ``model`` directly through Pinocchio's API.

    The result has nq = (7 if floating) + sum(1 or 2 per joint) and nv = model.nv; joint order is
    depth first from the base (see :func:`pinocchio_dof_permutation`). A coupled model
    (``load_urdf(..., mimic="coupled")``) has its mimic joints as Pinocchio ``JointModelMimic`` joints
    of their masters (nq, nv count the independent DOFs only; :mod:`.mimic`), or raises a
    BackendError saying why Pinocchio cannot take them. Frame names equal the
    neutral link and frame names (links as BODY frames, extra frames as OP_FRAME frames); joint
    names equal the neutral joint names (movable ones as Pinocchio joints, fixed ones as
    FIXED_JOINT frames). ``pm.gravity`` is the model's gravity (its file's, else ``(0, 0, -9.81)``);
    :func:`from_pinocchio` reads it back.
    """
    if not isinstance(model, Model):
        raise BackendError(f"to_pinocchio expects a bridge Model, got {type(model).__name__}")
    pin = _pin()
    pm = pin.Model()
    pm.name = model.name
    place = {model.base: _add_base(pm, model)}
    armature = _add_joints(pm, model, place)
    for frame in model.frames:
        pj, pj_H_link, link_fid = place[frame.link]
        pm.addFrame(
            pin.Frame(frame.name, pj, link_fid, _se3(pj_H_link @ frame.link_H_frame), pin.FrameType.OP_FRAME)
        )
    if getattr(model, "mimics", ()):  # coupled mimic joints: Pinocchio's JointModelMimic
        pm = apply_mimics(pm, model)
    if pm.nv != model.nv:  # pragma: no cover - internal consistency
        raise BackendError(f"Pinocchio model has nv={pm.nv}, expected {model.nv}")
    _set_armature(pm, armature)
    pm.gravity = pin.Motion(np.array(model_gravity(model)), np.zeros(3))  # the file's, else the default
    return pm


# --------------------------------------------------------------------------- back to neutral
#: Pinocchio's 1-DOF joint models: the neutral kind and the axis (index of x, y, z; None: the
#: joint model's own axis)
_JOINT_KINDS: dict[str, tuple[str, int | None]] = {
    "JointModelRX": ("revolute", 0),
    "JointModelRY": ("revolute", 1),
    "JointModelRZ": ("revolute", 2),
    "JointModelRUBX": ("continuous", 0),
    "JointModelRUBY": ("continuous", 1),
    "JointModelRUBZ": ("continuous", 2),
    "JointModelPX": ("prismatic", 0),
    "JointModelPY": ("prismatic", 1),
    "JointModelPZ": ("prismatic", 2),
    "JointModelRevoluteUnaligned": ("revolute", None),
    "JointModelRevoluteUnboundedUnaligned": ("continuous", None),
    "JointModelPrismaticUnaligned": ("prismatic", None),
    "JointModelSpherical": ("ball", None),
    "JointModelFreeFlyer": ("free", None),
    "JointModelPlanar": ("planar", None),
}


def _floating_argument(floating: object) -> bool | None:
    """``from_pinocchio``'s ``floating``: None (from the model) or a bool (else a BackendError)."""
    if floating is None:
        return None
    from bridge._array import as_bool
    from bridge.errors import BridgeError

    try:
        return as_bool(floating, "floating")
    except BridgeError as exc:
        raise BackendError(f"from_pinocchio: {exc}") from None


def _link_frames(pin_model: pinocchio.Model) -> dict[int, tuple[str, Transform]]:
    """The link frame of each joint body: the first BODY frame on that joint (in frame order),
    whatever its placement in the joint frame: joint id -> (link name, joint_H_link)."""
    pin = _pin()
    link_of_joint: dict[int, tuple[str, Transform]] = {}
    for f in pin_model.frames:
        if f.type == pin.FrameType.BODY and f.parentJoint not in link_of_joint:
            link_of_joint[f.parentJoint] = (f.name, _transform(f.placement))
    return link_of_joint


def _pin_armature(pin_model: pinocchio.Model, has_ff: bool) -> np.ndarray:
    """``model.armature`` (nv,); an armature on the free flyer's six DOFs is a BackendError."""
    arm = np.asarray(pin_model.armature, dtype=float).reshape(-1)
    if has_ff and arm.size and np.any(arm[:6] != 0.0):
        raise BackendError(
            f"Pinocchio model {pin_model.name!r}: armature on the free flyer {arm[:6].tolist()} has no "
            "neutral equivalent (the neutral model carries joint armature only)"
        )
    return arm


def _pin_links(
    pin_model: pinocchio.Model, base_joint: int, link_of_joint: dict[int, tuple[str, Transform]]
) -> list[Link]:
    """A link per joint body from ``base_joint`` on, inertia in the link frame; a body without a
    BODY frame gets a link ``"<joint>_link"`` (``"universe"``) at the joint frame, added to
    ``link_of_joint``."""
    links: list[Link] = []
    for jid in range(base_joint, pin_model.njoints):
        name, jH = link_of_joint.get(jid, (None, None))
        if name is None:
            name, jH = (
                (pin_model.names[jid] + "_link", Transform.identity())
                if jid
                else ("universe", Transform.identity())
            )
            link_of_joint[jid] = (name, jH)
        inertia = SpatialInertia.from_pinocchio_parameters(pin_model.inertias[jid].toDynamicParameters())
        links.append(Link(name, inertia.transformed(jH.inverse())))
    return links


def _kind_and_axis(pin_model: pinocchio.Model, jid: int) -> tuple[str, np.ndarray]:
    """The neutral kind of Pinocchio joint ``jid`` and its axis (3,) in the joint frame; a
    BackendError for a mimic joint or a joint model with no neutral equivalent."""
    jmodel = pin_model.joints[jid]
    short = jmodel.shortname()
    if short == "JointModelMimic":
        raise BackendError(
            f"Pinocchio joint {pin_model.names[jid]!r} is a mimic joint (JointModelMimic): "
            "from_pinocchio takes models without them; load the URDF with "
            "bridge.load_urdf(path, mimic='coupled') (bridge.to_pinocchio of that model has them)"
        )
    if short not in _JOINT_KINDS:
        raise BackendError(
            f"Pinocchio joint {pin_model.names[jid]!r} of type {short} has no neutral equivalent"
        )
    kind, axis_index = _JOINT_KINDS[short]
    if kind == "planar":
        return kind, np.array([0.0, 0.0, 1.0])  # J's xy plane
    if kind in ("ball", "free"):
        return kind, np.zeros(3)
    if axis_index is None:
        return kind, np.array(jmodel.extract().axis, dtype=float).reshape(3)
    return kind, np.eye(3)[axis_index]


def _pin_limits(pin_model: pinocchio.Model, jid: int, kind: str) -> JointLimits:
    """The limits of joint ``jid`` (position limits beyond +-1e300 are none; a continuous joint has
    none at all)."""
    if kind in ("continuous", "ball", "free", "planar"):
        return JointLimits()
    idx_q, idx_v = pin_model.idx_qs[jid], pin_model.idx_vs[jid]
    lo, hi = pin_model.lowerPositionLimit[idx_q], pin_model.upperPositionLimit[idx_q]
    return JointLimits(
        lower=float(lo) if np.isfinite(lo) and lo > -1e300 else None,
        upper=float(hi) if np.isfinite(hi) and hi < 1e300 else None,
        effort=float(pin_model.effortLimit[idx_v]),
        velocity=float(pin_model.velocityLimit[idx_v]),
    )


def _check_wide_frame(name: str, kind: str, J_H_link: Transform) -> None:
    """A BackendError unless the link frame of a ball, free or planar joint's body is placed as
    the neutral joint needs it: a free joint's at the joint frame J, a ball's with J's axes (its
    origin is the centre), a planar joint's with J's xy plane and x axis as its plane axes."""
    from bridge.model.joints import plane_axes

    R = J_H_link.rotation
    if kind == "planar":
        n = R.T @ np.array([0.0, 0.0, 1.0])
        ok = np.allclose(plane_axes(n)[0], R.T @ np.array([1.0, 0.0, 0.0]), atol=1e-9)
    else:
        at_J = kind == "ball" or np.allclose(J_H_link.translation, 0.0)
        ok = np.allclose(R, np.eye(3), atol=1e-9) and at_J
    if not ok:
        raise BackendError(
            f"Pinocchio {kind} joint {name!r}: its body's link frame is not placed at the joint frame the "
            "neutral joint needs (free: at the joint frame; ball: with its axes; planar: with its plane axes)"
        )


def _pin_joint(
    pin_model: pinocchio.Model, jid: int, link_of_joint: dict[int, tuple[str, Transform]], arm: np.ndarray
) -> Joint:
    """The neutral joint of Pinocchio joint ``jid`` between the links of its parent's body and its
    body: rest pose ``parent_link_H_child_link`` (4x4) at q = 0, axis and axis origin (J's origin)
    (3,) in child coordinates."""
    kind, axis_J = _kind_and_axis(pin_model, jid)
    pname, pjH = link_of_joint[pin_model.parents[jid]]
    cname, cjH = link_of_joint[jid]
    placement = _transform(pin_model.jointPlacements[jid])
    if kind in ("ball", "free", "planar"):
        _check_wide_frame(pin_model.names[jid], kind, cjH)
    return Joint(
        pin_model.names[jid],
        kind,
        pname,
        cname,
        pjH.inverse() @ placement @ cjH,
        axis=cjH.rotation.T @ axis_J,
        axis_origin=cjH.inverse().translation,
        limits=_pin_limits(pin_model, jid, kind),
        armature=float(arm[pin_model.idx_vs[jid]]) if arm.size else 0.0,
    )


def _pin_frames(
    pin_model: pinocchio.Model,
    link_names: set[str],
    base_joint: int,
    link_of_joint: dict[int, tuple[str, Transform]],
) -> list[Frame]:
    """The frames that are not links, joint frames, FIXED_JOINT frames or above the base, as extra
    frames of the link of their joint (pose in that link's frame)."""
    FT = _pin().FrameType
    frames: list[Frame] = []
    for f in pin_model.frames:
        if f.name in link_names or f.type == FT.JOINT or f.parentJoint < base_joint:
            continue
        if f.type == FT.FIXED_JOINT:
            continue  # fixed joints are merged into the body; their child BODY frame is kept
        lname, ljH = link_of_joint[f.parentJoint]
        frames.append(Frame(f.name, lname, ljH.inverse() @ _transform(f.placement)))
    return frames


def from_pinocchio(pin_model: pinocchio.Model, floating: bool | None = None) -> Model:
    """Neutral model from a ``pinocchio.Model`` (e.g. from ``pin.buildModelFromUrdf``).

    Every Pinocchio joint body becomes a link: the BODY frame attached directly at the joint
    (Pinocchio's URDF parser names it after the URDF link) when there is one, else a link named
    after the joint. Inertias merged from fixed-joint children stay merged into that link; other
    BODY frames, FIXED_JOINT frames and OP_FRAMEs become extra frames. A free-flyer first joint
    means a floating base (its child body is the base); no free flyer means a fixed base at the
    first body (universe's inertia, if any, is ignored). Joint axes become the neutral axis with a
    zero origin in the link frame chosen for the body. ``model.armature`` becomes the joints'
    armature (an armature on the free flyer's six DOFs has no neutral equivalent: BackendError).
    """
    pin = _pin()
    if not isinstance(pin_model, pin.Model):
        raise BackendError(f"from_pinocchio expects a pinocchio.Model, got {type(pin_model).__name__}")
    floating = _floating_argument(floating)
    jm0 = pin_model.joints[1] if pin_model.njoints > 1 else None
    has_ff = jm0 is not None and jm0.shortname() == "JointModelFreeFlyer"
    if floating is None:
        floating = has_ff
    link_of_joint = _link_frames(pin_model)
    base_joint = 1 if has_ff else 0
    arm = _pin_armature(pin_model, has_ff)
    links = _pin_links(pin_model, base_joint, link_of_joint)
    joints = [
        _pin_joint(pin_model, jid, link_of_joint, arm) for jid in range(base_joint + 1, pin_model.njoints)
    ]
    frames = _pin_frames(pin_model, {link.name for link in links}, base_joint, link_of_joint)
    base = link_of_joint[base_joint][0]
    dof_names = tuple(j.name for j in joints)
    return Model(
        pin_model.name or "robot",
        tuple(links),
        tuple(joints),
        tuple(frames),
        base,
        dof_names,
        floating,
        gravity=np.array(pin_model.gravity.linear),  # the library model's
    )
