"""Neutral models to and from Drake's ``MultibodyPlant``.

Plant layout (``to_drake``; docs/conventions.md, Drake column):

* every link is a ``RigidBody`` of the same name (spatial inertia about the link origin, in link
  axes), in a model instance named after the robot; every extra frame is a ``FixedOffsetFrame`` of
  the same name on its link's body frame;
* a movable joint is a ``RevoluteJoint`` (revolute and continuous: continuous ones without position
  limits) or a ``PrismaticJoint`` of the same name whose frames sit at the axis origin with the
  child link's orientation: on the parent at ``rest @ trans(o)``, on the child at ``trans(o)``, so
  that Drake's axis through the joint frames' common origin is the neutral axis through ``o``
  (``X_PC(s) = rest trans(o) Rot(axis, s) trans(-o)``). Joint frames are named
  ``<joint>__parent`` / ``<joint>__child`` (``__bridge`` appended on a clash); one-coordinate
  joints get a ``JointActuator`` of the same name carrying the effort limit (none for a limit of 0,
  which Drake refuses) and the joint's armature as its reflected inertia (rotor inertia = armature,
  gear ratio 1: Drake adds ``rotor_inertia * gear_ratio^2`` to M's diagonal, to inverse dynamics
  and to forward dynamics);
* a ball joint is a ``BallRpyJoint`` on the same frames (at its centre, so ``X_PC(q) = rest
  trans(c) R(q) trans(-c)``), a free joint a ``QuaternionFloatingJoint`` from the frame F at its rest
  pose on the parent to the child's body frame, a planar joint a ``PlanarJoint`` whose frames (at
  the rest pose on the parent, at the child origin) have the plane axes ``e1, e2`` and the normal
  as x, y, z (:func:`bridge.model.joints.plane_axes`); their q and v are the neutral joint's in
  Drake's convention (:mod:`.state`). Drake has actuators (and so armature) for single-DOF joints
  only: such a joint with an armature raises UnsupportedError. A scene (several free bodies: a
  fixed ``world`` link with free joints) is a body welded to the world with a
  ``QuaternionFloatingJoint`` per free body;
* a fixed (or locked) joint is a ``WeldJoint`` of the same name;
* a floating base is a ``QuaternionFloatingJoint`` named :data:`FLOATING_JOINT` from the world to
  the base link (Drake's ``q = [qw qx qy qz; p_WB]``, ``v = [omega_WB; p_dot_WB]``, both in world);
* a fixed base is a ``WeldJoint`` named :data:`BASE_WELD` (``__bridge`` appended on a clash) from
  the ``FixedOffsetFrame`` :data:`WORLD_H_BASE` on the world body to the base link. That frame's
  pose is a parameter of each Context (:func:`set_world_H_base`), so one finalized plant serves
  every base pose (the KinDyn engine sets it per sample); it is the identity in a default Context;
* gravity is the plant's uniform gravity field: the model's :attr:`~bridge.Model.gravity` (its
  file's), else ``(0, 0, -9.81)``; :func:`from_drake` reads it back as the model's gravity.

The plant is finalized (continuous time) and returned alone: everything else is found by name
in the model instance :func:`instance_name` (``plant.GetBodyByName(link, instance)``,
``plant.GetFrameByName(frame, instance)``, ``plant.GetJointByName(joint, instance)``), the fixed
base's frame in the world's instance.
Drake orders the generalized velocities by its own forest (:func:`drake_layout` in :mod:`.state`).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from bridge.errors import BackendError, ModelError, UnsupportedError
from bridge.model.building import finite_limit, movable_joint, unique_name
from bridge.model.gravity import model_gravity
from bridge.model.joints import plane_axes
from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model
from bridge.spatial import SpatialInertia, Transform

if TYPE_CHECKING:  # pragma: no cover
    from pydrake.multibody.plant import MultibodyPlant

__all__ = [
    "BASE_WELD",
    "FLOATING_JOINT",
    "WORLD_H_BASE",
    "from_drake",
    "instance_name",
    "joint_frames",
    "require_drake",
    "set_world_H_base",
    "to_drake",
]

#: name of the QuaternionFloatingJoint of a floating base
FLOATING_JOINT = "floating_base"
#: name of the world frame a fixed base is welded to (its pose is a Context parameter)
WORLD_H_BASE = "world_H_base"
#: name of the WeldJoint of a fixed base
BASE_WELD = "base_weld"
_SUFFIX = "__bridge"
_INFINITE = 1e300


def require_drake():
    """``pydrake`` (imported), or a BackendError naming the extra to install."""
    try:
        import pydrake
        from pydrake.multibody import plant, tree  # noqa: F401
    except ModuleNotFoundError as exc:  # pragma: no cover - drake is installed in the test environment
        raise BackendError(
            f"Drake is not installed ({exc}); install bridge's extra: pip install 'bridge-dynamics[drake]'"
        ) from None
    except ImportError as exc:  # installed but broken (pydrake under an ASCII locale: it reads UTF-8)
        cause = exc.__cause__ or exc.__context__
        why = f"{exc}: {type(cause).__name__}: {cause}" if cause is not None else str(exc)
        raise BackendError(f"Drake is installed but cannot be imported ({' '.join(why.split())})") from None
    import pydrake

    return pydrake


@contextmanager
def quiet_drake() -> Iterator[None]:
    """Drake's own log lines below ERROR (``WARNING:drake:...`` from its parser) silenced while bridge
    runs Drake: bridge reports what matters as findings or warnings of its own. pydrake is imported
    first (importing it sets the ``drake`` logger's level, which would undo the silencing)."""
    require_drake()
    logger = logging.getLogger("drake")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _rigid_transform(T: Transform):
    from pydrake.math import RigidTransform, RotationMatrix

    return RigidTransform(RotationMatrix(np.array(T.rotation)), np.array(T.translation))


def _transform(X) -> Transform:
    return Transform(np.array(X.GetAsMatrix4()), check=False)


def _spatial_inertia(link: Link):
    """Drake's ``SpatialInertia`` of a link about its origin, in link axes."""
    from pydrake.multibody.tree import SpatialInertia as DrakeInertia
    from pydrake.multibody.tree import UnitInertia

    inertia = link.inertia
    m = float(inertia.mass)
    I_o = np.array(inertia.inertia_origin, dtype=float)
    if m == 0.0:
        if np.any(I_o != 0.0):
            raise UnsupportedError(
                f"link {link.name!r}: Drake cannot represent a massless body with a rotational inertia "
                f"(its SpatialInertia stores inertia per unit mass)"
            )
        return DrakeInertia.Zero()
    G = I_o / m
    unit = UnitInertia(G[0, 0], G[1, 1], G[2, 2], G[0, 1], G[0, 2], G[1, 2])
    # bridge checks physical validity when loading (check_inertia); Drake's own check is stricter
    # than needed for the dynamics (e.g. on rounding of the triangle inequality)
    return DrakeInertia(m, np.array(inertia.com, dtype=float), unit, True)


def instance_name(model: Model) -> str:
    """The name of the model instance that holds ``to_drake(model)``'s bodies, joints and frames
    (the robot's name; look elements up with it: names may repeat across instances, e.g. "world")."""
    return model.name if model.name not in ("WorldModelInstance", "DefaultModelInstance", "") else "robot"


def set_world_H_base(plant: MultibodyPlant, context, world_H_base: object) -> None:
    """Place a fixed base: set the pose of the :data:`WORLD_H_BASE` frame in ``context``.

    ``world_H_base`` is a (4, 4) array or a Transform; a floating-base plant has no such frame
    (its base pose is part of q) and raises a BackendError.
    """
    from pydrake.math import RigidTransform

    world = plant.world_body().model_instance()
    if not plant.HasFrameNamed(WORLD_H_BASE, world):
        raise BackendError(f"plant has no frame {WORLD_H_BASE!r}: only fixed-base plants of to_drake do")
    H = np.asarray(getattr(world_H_base, "matrix", world_H_base), dtype=float)
    plant.GetFrameByName(WORLD_H_BASE, world).SetPoseInParentFrame(context, RigidTransform(H))


def _unique(name: str, taken: set[str]) -> str:
    name = unique_name(name, taken, _SUFFIX)
    taken.add(name)
    return name


def _add_bodies(plant: MultibodyPlant, instance, model: Model) -> dict:
    """A ``RigidBody`` per link in the model instance ``instance`` (spatial inertia about the link
    origin, in link axes), by link name."""
    return {
        link.name: plant.AddRigidBody(link.name, instance, _spatial_inertia(link)) for link in model.links
    }


def _position_bounds(lim: JointLimits) -> tuple[float, float]:
    """``(lower, upper)`` position limits for Drake: +-inf where unset, none at all when lower >
    upper (how some exporters write "no limits", and how the URDF loader reads it)."""
    lo = -np.inf if lim.lower is None else float(lim.lower)
    hi = np.inf if lim.upper is None else float(lim.upper)
    if not lo <= hi:
        lo, hi = -np.inf, np.inf
    return lo, hi


def _add_actuator(plant: MultibodyPlant, joint: Joint, dj) -> None:
    """The ``JointActuator`` of a movable joint: its effort limit (none for a limit of 0, which Drake
    refuses) and its armature as the reflected inertia (rotor inertia, gear ratio 1)."""
    lim = joint.limits
    # Drake wants a positive effort limit: 0 (a common URDF placeholder) means none
    effort = np.inf if lim.effort is None or lim.effort <= 0.0 else float(lim.effort)
    actuator = plant.AddJointActuator(joint.name, dj, effort)
    if joint.armature:
        actuator.set_default_rotor_inertia(float(joint.armature))
        actuator.set_default_gear_ratio(1.0)


def joint_frames(joint: Joint) -> tuple[Transform, Transform]:
    """``(parent_H_F, child_H_M)``: where a movable joint's Drake frames sit on its parent and child
    bodies (coincident at the neutral position).

    Revolute, prismatic and ball joints: at the axis origin (the ball's centre) with the child's
    orientation; free joints: F at the rest pose, M the child frame; planar joints: at the child
    origin with the plane axes ``(e1, e2, normal)`` of :func:`bridge.model.joints.plane_axes` as
    F's and M's ``(x, y, z)`` (Drake's planar joint moves in F's xy plane).
    """
    if joint.kind is JointKind.PLANAR:
        e1, e2 = plane_axes(joint.axis)
        C_H_M = Transform.from_rotation_translation(np.column_stack([e1, e2, joint.axis]), np.zeros(3))
    elif joint.kind is JointKind.FREE:
        C_H_M = Transform.identity()
    else:
        C_H_M = Transform.from_translation(joint.axis_origin)
    return joint.parent_H_child @ C_H_M, C_H_M


def _drake_joint_of(joint: Joint, jp, jc):
    """The Drake joint of a movable neutral ``joint`` between the frames ``jp`` and ``jc``
    (:func:`joint_frames`): revolute, prismatic (with position limits), ball (``BallRpyJoint``),
    free (``QuaternionFloatingJoint``) or planar (``PlanarJoint``)."""
    from pydrake.multibody.tree import (
        BallRpyJoint,
        PlanarJoint,
        PrismaticJoint,
        QuaternionFloatingJoint,
        RevoluteJoint,
    )

    kind = joint.kind
    if kind is JointKind.BALL:
        return BallRpyJoint(joint.name, jp, jc, 0.0)
    if kind is JointKind.FREE:
        return QuaternionFloatingJoint(joint.name, jp, jc)
    if kind is JointKind.PLANAR:
        return PlanarJoint(joint.name, jp, jc, np.zeros(3))
    lo, hi = _position_bounds(joint.limits)
    if kind is JointKind.PRISMATIC:
        return PrismaticJoint(joint.name, jp, jc, np.array(joint.axis), lo, hi, 0.0)
    return RevoluteJoint(joint.name, jp, jc, np.array(joint.axis), 0.0)


def _add_movable(plant: MultibodyPlant, joint: Joint, parent, child, frame_names: set[str]) -> None:
    """The Drake joint of a movable neutral joint between the bodies ``parent`` and ``child``, on
    frames ``<joint>__parent`` / ``<joint>__child`` (:func:`joint_frames`; a free joint's M is the
    child's body frame), with its limits and, for a one-coordinate joint, its actuator. Drake's
    actuators take single-DOF joints only: a ball, free or planar joint with an armature raises
    UnsupportedError."""
    from pydrake.multibody.tree import FixedOffsetFrame

    def offset(frame_name: str, body, T: Transform):
        return plant.AddFrame(FixedOffsetFrame(frame_name, body.body_frame(), _rigid_transform(T)))

    if joint.kind.wide and joint.armature:
        raise UnsupportedError(
            f"joint {joint.name!r}: Drake has no armature for a {joint.kind.value} joint (its reflected "
            f"rotor inertia belongs to actuators of single-DOF joints), armature {joint.armature!r}"
        )
    P_H_F, C_H_M = joint_frames(joint)
    jp = offset(_unique(f"{joint.name}__parent", frame_names), parent, P_H_F)
    if joint.kind is JointKind.FREE:
        jc = child.body_frame()
    else:
        jc = offset(_unique(f"{joint.name}__child", frame_names), child, C_H_M)
    dj = plant.AddJoint(_drake_joint_of(joint, jp, jc))
    lim = joint.limits
    lo, hi = _position_bounds(lim)
    if joint.kind is JointKind.REVOLUTE and (lo > -np.inf or hi < np.inf):
        dj.set_position_limits([lo], [hi])
    if lim.velocity is not None and lim.velocity >= 0.0:
        dj.set_velocity_limits([-float(lim.velocity)] * joint.nv, [float(lim.velocity)] * joint.nv)
    if not joint.kind.wide:
        _add_actuator(plant, joint, dj)


def _attach_base(plant: MultibodyPlant, model: Model, base) -> None:
    """The joint from the world to the base body: a ``QuaternionFloatingJoint`` for a floating base,
    else a weld to the :data:`WORLD_H_BASE` frame (its pose a Context parameter)."""
    from pydrake.multibody.tree import FixedOffsetFrame, QuaternionFloatingJoint, WeldJoint

    joint_names = set(model.joint_names)
    if model.floating:
        plant.AddJoint(
            QuaternionFloatingJoint(
                _unique(FLOATING_JOINT, joint_names), plant.world_frame(), base.body_frame()
            )
        )
        return
    world_frame = plant.AddFrame(
        FixedOffsetFrame(WORLD_H_BASE, plant.world_frame(), _rigid_transform(Transform.identity()))
    )
    plant.AddJoint(
        WeldJoint(
            _unique(BASE_WELD, joint_names),
            world_frame,
            base.body_frame(),
            _rigid_transform(Transform.identity()),
        )
    )


def _add_joints(plant: MultibodyPlant, model: Model, bodies: dict) -> None:
    """Every joint of ``model``, depth first: welds for fixed ones, see :func:`_add_movable`."""
    from pydrake.multibody.tree import WeldJoint

    frame_names = set(model.frame_names)
    for joint in model.depth_first_joints:
        parent, child = bodies[joint.parent], bodies[joint.child]
        if joint.movable:
            _add_movable(plant, joint, parent, child, frame_names)
            continue
        plant.AddJoint(
            WeldJoint(
                joint.name, parent.body_frame(), child.body_frame(), _rigid_transform(joint.parent_H_child)
            )
        )


def to_drake(model: Model) -> MultibodyPlant:
    """Build a finalized continuous-time ``MultibodyPlant`` for ``model`` through Drake's API.

    See the module docstring for the layout; ``plant.num_velocities() == model.nv`` and
    ``plant.CreateDefaultContext()`` gives contexts (a fixed base at the identity pose there: see
    :func:`set_world_H_base`). A coupled model (``load_urdf(..., mimic="coupled")``) converts as its
    full model ``model.full`` (every mimic joint a joint with its own q and v; the plant has no
    coupler constraints), whose states are ``model.full_positions(s)`` etc.
    """
    require_drake()
    if not isinstance(model, Model):
        raise BackendError(f"to_drake expects a bridge Model, got {type(model).__name__}")
    model = getattr(model, "full", None) or model  # a coupled model: its full model
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import FixedOffsetFrame

    plant = MultibodyPlant(0.0)
    bodies = _add_bodies(plant, plant.AddModelInstance(instance_name(model)), model)
    _add_joints(plant, model, bodies)
    _attach_base(plant, model, bodies[model.base])
    for frame in model.frames:
        plant.AddFrame(
            FixedOffsetFrame(
                frame.name, bodies[frame.link].body_frame(), _rigid_transform(frame.link_H_frame)
            )
        )
    plant.mutable_gravity_field().set_gravity_vector(model_gravity(model))
    plant.Finalize()
    if plant.num_velocities() != model.nv:  # pragma: no cover - internal consistency
        raise BackendError(f"Drake plant has nv={plant.num_velocities()}, expected {model.nv}")
    return plant


# --------------------------------------------------------------------------- back to neutral
def _limit(values) -> float | None:
    return finite_limit(float(np.asarray(values).reshape(-1)[0]), _INFINITE)


def _neutral_inertia(body, context) -> SpatialInertia:
    M = body.CalcSpatialInertiaInBodyFrame(context)
    m = float(M.get_mass())
    if m == 0.0:
        return SpatialInertia.zero()
    I_o = np.array(M.CalcRotationalInertia().CopyToFullMatrix3())
    return SpatialInertia.from_mass_com_inertia_origin(m, np.array(M.get_com()), I_o)


def _drake_links(plant: MultibodyPlant, context) -> list[Link]:
    """A link per body but the world, in Drake's body order (inertia about the body origin)."""
    from pydrake.multibody.tree import BodyIndex

    world = plant.world_body()
    links = []
    for i in range(plant.num_bodies()):
        body = plant.get_body(BodyIndex(i))
        if body.index() == world.index():
            continue
        links.append(Link(body.name(), _neutral_inertia(body, context)))
    if not links:
        raise ModelError("from_drake: the plant has no body besides the world")
    return links


#: Drake's joint types with six velocities that are a neutral free joint
_FLOATING_TYPES = ("quaternion_floating", "rpy_floating")
#: the name of the massless link standing for Drake's world body in a scene (several trees)
SCENE_WORLD = "world"


def _is_floating(dj) -> bool:
    return dj.num_velocities() == 6 and dj.type_name() in _FLOATING_TYPES


def _drake_root(plant: MultibodyPlant, djoints: list) -> tuple:
    """``(root joint, base body, floating)``: the one joint to the world and the body it connects to
    the world, when that joint is a floating joint from the world (a floating base) or a weld (a
    fixed base); ``(None, None, False)`` for a scene: several joints to the world (several trees,
    Drake's free bodies among them) or one of another kind."""
    from pydrake.multibody.tree import WeldJoint

    world = plant.world_body()
    roots = [
        j
        for j in djoints
        if j.parent_body().index() == world.index() or j.child_body().index() == world.index()
    ]
    if len(roots) == 1:
        root = roots[0]
        from_world = root.parent_body().index() == world.index()
        base_body = root.child_body() if from_world else root.parent_body()
        if _is_floating(root) and from_world:
            return root, base_body, True
        if isinstance(root, WeldJoint):
            return root, base_body, False
    return None, None, False


def _drake_limits(plant: MultibodyPlant, dj) -> tuple[JointLimits, float]:
    """The limits of a revolute or prismatic joint ``dj`` (infinite ones: None) and its armature,
    the default reflected inertia of the actuator named after it (0 without one)."""
    lo, hi = _limit(dj.position_lower_limits()), _limit(dj.position_upper_limits())
    vel = _limit(dj.velocity_upper_limits())
    effort = None
    armature = 0.0
    if plant.HasJointActuatorNamed(dj.name(), dj.model_instance()):
        actuator = plant.GetJointActuatorByName(dj.name(), dj.model_instance())
        effort = _limit([actuator.effort_limit()])
        armature = float(actuator.default_reflected_inertia())  # rotor inertia * gear ratio^2
    return JointLimits(lower=lo, upper=hi, effort=effort, velocity=vel), armature


def _wide_joint(dj, pname: str, cname: str, P_H_Jp: Transform, C_H_Jc: Transform) -> Joint | None:
    """The neutral ball, free or planar joint of a ``BallRpyJoint``, a floating joint or a
    ``PlanarJoint`` ``dj`` (None for another type): rest pose ``P_H_Jp @ C_H_Jc^-1`` (its frames
    coincide at the neutral position); a ball's centre and a planar joint's normal (F's z) in the
    child; the velocity limit when Drake's is the same for every velocity."""
    kind = {"ball_rpy": JointKind.BALL, "planar": JointKind.PLANAR}.get(dj.type_name())
    if kind is None and _is_floating(dj):
        kind = JointKind.FREE
    if kind is None:
        return None
    upper = np.asarray(dj.velocity_upper_limits(), dtype=float)
    velocity = _limit(upper[:1]) if upper.size and np.all(upper == upper[0]) else None
    return Joint(
        dj.name(),
        kind,
        pname,
        cname,
        P_H_Jp @ C_H_Jc.inverse(),
        axis=C_H_Jc.rotation[:, 2] if kind is JointKind.PLANAR else np.zeros(3),
        axis_origin=C_H_Jc.translation if kind is JointKind.BALL else np.zeros(3),
        limits=JointLimits(velocity=velocity),
    )


def _drake_joint(plant: MultibodyPlant, dj, names: dict) -> Joint:
    """The neutral joint of a weld, revolute, prismatic, ball (``BallRpyJoint``), floating or planar
    joint ``dj`` between its bodies as Drake has them (``names``: body index -> link name): rest pose
    ``P_H_Jp @ C_H_Jc^-1`` (4x4, times the weld's ``X_FM``), axis in child coordinates and, for a
    revolute joint, the child joint frame's origin as axis origin (a ball's centre)."""
    from pydrake.multibody.tree import PrismaticJoint, RevoluteJoint, WeldJoint

    P_H_Jp = _transform(dj.frame_on_parent().GetFixedPoseInBodyFrame())
    C_H_Jc = _transform(dj.frame_on_child().GetFixedPoseInBodyFrame())
    pname, cname = names[dj.parent_body().index()], names[dj.child_body().index()]
    if isinstance(dj, WeldJoint):
        rest = P_H_Jp @ _transform(dj.X_FM()) @ C_H_Jc.inverse()
        return Joint(dj.name(), JointKind.FIXED, pname, cname, rest)
    wide = _wide_joint(dj, pname, cname, P_H_Jp, C_H_Jc)
    if wide is not None:
        return wide
    if not isinstance(dj, RevoluteJoint | PrismaticJoint):
        raise UnsupportedError(
            f"from_drake: joint {dj.name()!r} of type {dj.type_name()} has no neutral equivalent"
        )
    limits, armature = _drake_limits(plant, dj)
    rotational = isinstance(dj, RevoluteJoint)
    return movable_joint(
        dj.name(),
        pname,
        cname,
        P_H_Jp @ C_H_Jc.inverse(),
        prismatic=not rotational,
        axis=C_H_Jc.rotation @ np.array(dj.revolute_axis() if rotational else dj.translation_axis()),
        axis_origin=C_H_Jc.translation if rotational else np.zeros(3),
        limits=limits,
        armature=armature,
    )


def _drake_frames(plant: MultibodyPlant, used: set, body_names: set[str]) -> list[Frame]:
    """The ``FixedOffsetFrame``s on bodies as extra frames (pose in the body frame), leaving out
    body frames, Drake's ephemeral frames, the joint frames ``used`` (frame indices), frames
    on the world and frames named like a body."""
    from pydrake.multibody.tree import FrameIndex

    world = plant.world_body()
    frames = []
    for i in range(plant.num_frames()):
        f = plant.get_frame(FrameIndex(i))
        if (
            f.is_body_frame()
            or getattr(f, "is_ephemeral", lambda: False)()  # frames Drake adds for its mobilizers
            or f.index() in used
            or f.body().index() == world.index()
            or f.name() in body_names
        ):
            continue
        frames.append(Frame(f.name(), f.body().name(), _transform(f.GetFixedPoseInBodyFrame())))
    return frames


def from_drake(plant: MultibodyPlant) -> Model:
    """Neutral model from a finalized ``MultibodyPlant`` (e.g. :func:`to_drake`'s, or Drake's
    ``Parser`` on a URDF or SDFormat file).

    Bodies become links (the world body excluded), revolute / prismatic / weld joints become
    neutral joints (a revolute joint without position limits is continuous; the axis origin is the
    child joint frame's origin in child coordinates), ``BallRpyJoint``\\ s ball joints (centred at
    the child joint frame's origin), ``QuaternionFloatingJoint``\\ s and ``RpyFloatingJoint``\\ s
    free joints and ``PlanarJoint``\\ s planar joints (the normal: the child joint frame's z), each
    with its rest pose where Drake's two joint frames coincide; ``FixedOffsetFrame``\\ s on bodies
    that are not joint frames become extra frames. The motion is Drake's; the coordinates of a ball,
    free or planar joint whose child frame is not where :func:`to_drake` puts it (ball: rotated;
    free: away from the child frame; planar: away from the child origin or with other in-plane axes)
    are the neutral joint's, not Drake's.

    The body jointed to the world is the base: floating when that joint is a floating joint, fixed
    when it is a weld (the weld's pose is not part of the neutral model). A plant with several
    trees (several joints to the world, e.g. bodies Drake left floating: ``Finalize`` gives each a
    floating joint named after it) or one tree on another joint to the world is a scene: a massless
    link :data:`SCENE_WORLD` (``__bridge`` appended on a clash) at the world's pose is the fixed base,
    and each joint to the world a joint from it (a free joint for a floating body). DOF order:
    Drake's velocity order. The default reflected inertia of the actuator named after a joint
    (``rotor_inertia * gear_ratio^2``) is the joint's armature. Joint damping and geometry are not
    represented. Raises UnsupportedError for other joint types (e.g. ``UniversalJoint``).
    """
    require_drake()
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import BodyIndex, JointIndex

    if not isinstance(plant, MultibodyPlant):
        raise BackendError(f"from_drake expects a pydrake MultibodyPlant, got {type(plant).__name__}")

    if not plant.is_finalized():
        raise BackendError("from_drake needs a finalized MultibodyPlant (call plant.Finalize())")
    djoints = [plant.get_joint(JointIndex(i)) for i in range(plant.num_joints())]
    links = _drake_links(plant, plant.CreateDefaultContext())
    root, base_body, floating = _drake_root(plant, djoints)
    world = plant.world_body().index()
    names = {
        plant.get_body(BodyIndex(i)).index(): plant.get_body(BodyIndex(i)).name()
        for i in range(plant.num_bodies())
    }
    if root is None:  # a scene: a massless link stands for the world
        base = names[world] = unique_name(SCENE_WORLD, {link.name for link in links}, _SUFFIX)
        links = [Link(base, SpatialInertia.zero()), *links]
        instance = next(
            plant.get_body(BodyIndex(i)) for i in range(plant.num_bodies()) if BodyIndex(i) != world
        )
    else:
        base, instance = base_body.name(), base_body
    joints = []
    used = set()
    for dj in djoints:
        if dj is not root:
            used.update((dj.frame_on_parent().index(), dj.frame_on_child().index()))
            joints.append(_drake_joint(plant, dj, names))
    joints = _oriented(joints, base)
    frames = _drake_frames(plant, used, {link.name for link in links})
    order = sorted(
        (j for j in djoints if j is not root and j.num_velocities() > 0), key=lambda j: j.velocity_start()
    )
    return Model(
        plant.GetModelInstanceName(instance.model_instance()),
        tuple(links),
        tuple(joints),
        tuple(frames),
        base,
        tuple(j.name() for j in order),
        floating,
        gravity=np.array(plant.gravity_field().gravity_vector()),
    )


def _oriented(joints: list[Joint], base: str) -> list[Joint]:
    """Joints reversed where needed so that each points away from ``base`` (Drake allows joints
    whose child is the body nearer the world), in their original order."""
    adjacent: dict[str, list[int]] = {}
    for k, j in enumerate(joints):
        adjacent.setdefault(j.parent, []).append(k)
        adjacent.setdefault(j.child, []).append(k)
    out = list(joints)
    seen = {base}
    queue = deque([base])
    while queue:
        link = queue.popleft()
        for k in adjacent.get(link, []):
            j = joints[k]
            other = j.child if j.parent == link else j.parent
            if other in seen:
                continue
            if j.child != other:  # (Drake reverses revolute, prismatic and weld joints only)
                out[k] = j.reversed()
            seen.add(other)
            queue.append(other)
    return out
