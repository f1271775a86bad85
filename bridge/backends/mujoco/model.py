"""Neutral models to and from MuJoCo (``mujoco.MjModel``), and MJCF loading through MuJoCo's compiler.

:func:`to_mujoco` builds an ``MjSpec`` and compiles it: one body per rigid group of links (links
joined by fixed joints are one rigid body for MuJoCo too; the group's root link names the body, and
every link of the group and every extra frame becomes a site, so no frame is lost), a hinge or slide
joint per movable joint with bridge's axis-with-origin semantics (MuJoCo's joint ``pos`` is the axis
origin in the child body's frame), a ball joint per ball joint (``pos`` its centre), a free joint on
the base body for a floating base, and the group's inertia as mass, centre of mass and principal
moments with their axes, and each joint's armature as its ``armature`` (``dof_armature``). A free
joint is MuJoCo's free joint when its parent is the fixed base and its rest pose the identity (a
scene's free bodies: then every body on the base hangs from MuJoCo's world body, at the same pose),
else three slides along the joint frame's axes and a ball; a planar joint is two slides and a hinge
(:func:`~bridge.backends.mujoco.bodies.mujoco_joints`: MuJoCo's velocity of both is MuJoCo's
free-joint convention relative to the joint frame). An armature on a free or planar joint is refused
(:class:`bridge.UnsupportedError` naming the joints): MuJoCo adds it in its own coordinates (the
linear velocity in the joint frame's axes), bridge's model in the child's (as Pinocchio), which
changes the bias forces by ``armature * (omega x v)``. The model is rigid-body dynamics (plus armature)
only: no geoms (so no contacts), no limits, springs, dampers or friction loss, and the
constraint, contact, limit, equality, passive and actuation stages disabled.
A fixed base is a body welded to the world at the identity (engines move it to ``world_H_base``).

A chain of massless links joined by movable joints (a URDF's multi-axis joint, or an MJCF body
with several joints read back) becomes one MuJoCo body with several joints, exactly
(:mod:`bridge.backends.mujoco.bodies`); the links inside the chain and their frames have no MuJoCo
object (they move with the joints after them, a site does not), which a
:class:`bridge.BridgeWarning` says unless they are the model's ``synthetic_links`` (the mujoco
engine reads them from its kinematic twin, :mod:`bridge.backends.mujoco.twin`).
MuJoCo refuses other moving bodies whose mass or rotational inertia is zero (below ``mjMINVAL``) and
inertias that violate the triangle inequality: :func:`to_mujoco` raises
:class:`bridge.UnsupportedError` naming the link (``balance_inertia=True`` replaces the latter's
moments by their mean, like MuJoCo's ``balanceinertia``, with a warning). URDF files have such links
(massless leaves, point masses with zero moments); ``to_mujoco(model, bound_mass=..., bound_inertia=...)``
raises their mass and principal moments to the given floors, as MuJoCo's own compiler options
``boundmass`` and ``boundinertia`` do, with a :class:`bridge.BridgeWarning` naming them: the
dynamics then differ from the model's by terms of that size.

:func:`from_mujoco` reads a compiled ``MjModel`` back: bodies are links (inertia from ``body_mass``,
``body_ipos``, ``body_iquat``, ``body_inertia``), hinge/slide joints keep their ``pos``/``axis``,
several joints in one body become a chain of massless links (named ``"<body>__<joint>"``, listed in
the model's ``synthetic_links``) in MuJoCo's joint order, ball joints are BALL joints turning about
their ``pos``. One free joint on a child of the world, with every joint in its body's subtree, makes
the model floating (other static bodies of the world are dropped); any other model with free joints
(several free bodies, free objects beside a robot) is a scene: the world body is the fixed base and
each free joint a FREE joint from it at the identity rest pose (its ``qpos`` is the body's pose in
the world; the body's ``pos`` and ``quat`` give only ``qpos0``). Sites are frames (a site named like
a body gets a ``"__site"`` suffix: :func:`site_frame_name`); joint positions are MuJoCo's ``qpos`` (a
joint ``ref`` is folded into the rest transform) and ``dof_armature`` is each joint's armature
(a ball's, on each of its DOFs), ``opt.gravity`` (zero when the gravity flag is disabled) the
model's gravity. MuJoCo's compiler refuses free joints below the root itself
(:func:`load_mjcf` raises :class:`bridge.UnsupportedError` naming the joint). Damping, springs, friction,
limits-as-constraints, tendons, equality constraints (the model is the kinematic tree: closed loops
are cut, as in MuJoCo's own mass matrix and bias forces), gravity compensation, fluid forces and an
armature on a free joint (in MuJoCo's coordinates: see above) are not part of the neutral model:
they are reported by a :class:`bridge.BridgeWarning` (a ``UserWarning``).
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bridge._array import as_bool, as_float_array, as_name
from bridge._files import check_model_file, file_status, library_path
from bridge.backends.limits import too_large_error
from bridge.backends.mujoco.bodies import (
    BodyPlan,
    Inertias,
    Plan,
    body_inertia,
    depth_problem,
    floor_value,
    mujoco_joints,
    plan_bodies,
)
from bridge.backends.mujoco.messages import captured_warnings, nonfinite_value, object_name
from bridge.backends.mujoco.refusals import (
    refuse_problems,
    refuse_wide_armature,
    unmerged_reasons,
    warn_changed,
    warn_unsited_frames,
)
from bridge.backends.mujoco.scene import floating_joint, free_joints, kept_bodies
from bridge.backends.mujoco.values import check_values
from bridge.errors import (
    BackendError,
    BridgeWarning,
    InvalidValueError,
    ModelError,
    ModelFileNotFoundError,
    ShapeError,
    UnsupportedError,
)
from bridge.model.building import movable_joint, require_finite_numbers, unique_name
from bridge.model.gravity import gravity_or
from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model
from bridge.spatial import SpatialInertia, Transform

__all__ = [
    "FREE_JOINT",
    "from_mujoco",
    "is_mjcf",
    "load_mjcf",
    "mujoco_body_name",
    "require_mujoco",
    "rigid_body_flags",
    "site_frame_name",
    "to_mujoco",
]

#: name of the free joint :func:`to_mujoco` gives a floating base
FREE_JOINT = "floating_base"


def require_mujoco() -> Any:
    """``import mujoco``, or a :class:`bridge.BackendError` naming the extra to install."""
    try:
        import mujoco
    except ModuleNotFoundError:
        raise BackendError(
            "MuJoCo is not installed: pip install 'bridge-dynamics[mujoco]' (the [mujoco] extra)"
        ) from None
    return mujoco


#: the stages a rigid-body comparison switches off (those a MuJoCo version has)
_DISABLED = (
    "mjDSBL_CONSTRAINT",
    "mjDSBL_CONTACT",
    "mjDSBL_LIMIT",
    "mjDSBL_EQUALITY",
    "mjDSBL_FRICTIONLOSS",
    "mjDSBL_SPRING",
    "mjDSBL_DAMPER",
    "mjDSBL_PASSIVE",
    "mjDSBL_ACTUATION",
    "mjDSBL_EULERDAMP",
)


def rigid_body_flags(mujoco: Any) -> int:
    """``opt.disableflags`` leaving rigid-body dynamics only: no constraints, contacts, limits,
    equalities, friction loss, springs, dampers (passive forces) or actuators."""
    flags = 0
    for name in _DISABLED:
        bit = getattr(mujoco.mjtDisableBit, name, None)
        if bit is not None:
            flags |= int(bit)
    return flags


def mujoco_body_name(link: str, links: Collection[str] = ()) -> str:
    """The MuJoCo body name :func:`to_mujoco` gives a link of a model whose links are ``links``:
    its own, but ``"world"`` (MuJoCo's world body) becomes ``"world_"``, with as many more ``"_"``
    as it takes to differ from every link name (a link ``"world_"`` keeps its name)."""
    return unique_name("world_", set(links), "_") if link == "world" else link


def _empty_spec(mujoco: Any, name: str, gravity: object) -> Any:
    """An ``MjSpec`` with the compiler and options of a rigid-body comparison (no inertia fusing,
    balancing or bounds, Euler integrator, the stages of :func:`rigid_body_flags` disabled) and
    ``gravity`` (3,) in world coordinates."""
    spec = mujoco.MjSpec()
    spec.modelname = name
    spec.compiler.fusestatic = False
    spec.compiler.balanceinertia = False
    spec.compiler.boundmass = 0.0
    spec.compiler.boundinertia = 0.0
    spec.compiler.autolimits = False
    opt = spec.option
    opt.gravity = np.asarray(gravity, dtype=float)
    opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    opt.disableflags = rigid_body_flags(mujoco)
    return spec


def _add_body(
    mujoco: Any, parent: Any, plan: BodyPlan, moving: bool, acc: Inertias, links: Collection[str]
) -> Any:
    """Add the body of ``plan`` below the MuJoCo body ``parent``, with its inertia and its joints
    (:func:`~bridge.backends.mujoco.bodies.mujoco_joints`: axes and points in the body frame),
    named by :func:`mujoco_body_name` among ``links``; returns it."""
    body = parent.add_body(
        name=mujoco_body_name(plan.link.name, links),
        pos=np.array(plan.rest.translation),
        quat=plan.rest.as_quaternion_wxyz(),
    )
    body.mass, body.ipos, body.iquat, body.inertia = body_inertia(plan.link, moving, acc)
    body.explicitinertial = True
    types = {
        "hinge": mujoco.mjtJoint.mjJNT_HINGE,
        "slide": mujoco.mjtJoint.mjJNT_SLIDE,
        "ball": mujoco.mjtJoint.mjJNT_BALL,
        "free": mujoco.mjtJoint.mjJNT_FREE,
    }
    for bj in plan.joints:
        for mj in mujoco_joints(bj):
            body.add_joint(name=mj.name, type=types[mj.type], axis=mj.axis, pos=mj.pos, armature=mj.armature)
    return body


def _add_tree(mujoco: Any, spec: Any, model: Model, plan: Plan, acc: Inertias) -> None:
    """Add the bodies of ``plan`` (MuJoCo numbers bodies depth first, children in the order they
    are added, so its DOF order is mujoco_dof_permutation's), the free joint and the sites."""
    bodies: dict[str, Any] = {}
    links = set(model.link_names)
    for b in plan.bodies:
        up = plan.mujoco_parent(b)
        parent = spec.worldbody if up is None else bodies[up]
        moving = b.parent is not None or model.floating
        bodies[b.link.name] = _add_body(mujoco, parent, b, moving, acc, links)
    if model.floating:
        bodies[plan.bodies[0].link.name].add_freejoint(
            name=unique_name(FREE_JOINT, set(model.joint_names), "_")
        )
    for f in plan.sites:
        H = f.link_H_frame
        bodies[f.link].add_site(name=f.name, pos=np.array(H.translation), quat=H.as_quaternion_wxyz())


def build_spec(model: Model, plan: Plan, acc: Inertias, gravity: object = None) -> Any:
    """The ``MjSpec`` of ``model``'s bodies as ``plan`` lays them out, inertias through ``acc``
    (:func:`bridge.backends.mujoco.bodies.body_inertia`), not checked or compiled; ``gravity``
    None: the model's (:func:`bridge.model.gravity.model_gravity`)."""
    mujoco = require_mujoco()
    spec = _empty_spec(mujoco, model.name, gravity_or(gravity, model))
    _add_tree(mujoco, spec, model, plan, acc)
    return spec


def _checked_arguments(model: object, gravity: object, what: str) -> np.ndarray:
    """``gravity`` as a finite (3,) array (None: the model's, its file's, else ``(0, 0, -9.81)``),
    ``model`` a bridge Model; else a BridgeError naming ``what``."""
    if not isinstance(model, Model):
        raise BackendError(f"{what} expects a bridge Model, got {type(model).__name__}")
    require_finite_numbers(model, "MJCF")  # (joint limits become ranges)
    gravity = as_float_array(gravity_or(gravity, model), f"{what}: gravity", (3,))
    if gravity.shape != (3,):
        raise ShapeError(f"{what}: gravity: expected shape (3,), got {gravity.shape}")
    return gravity


def mujoco_spec(
    model: Model,
    gravity: object = None,
    *,
    bound_mass: float = 0.0,
    bound_inertia: float = 0.0,
    balance_inertia: bool = False,
    stacklevel: int = 1,
    warn_unsited: bool = True,
    native_free: bool = True,
    what: str = "to_mujoco",
) -> tuple[Any, Plan, Inertias]:
    """The ``MjSpec`` :func:`to_mujoco` compiles, the plan of its bodies
    (:func:`bridge.backends.mujoco.bodies.plan_bodies`) and the inertia options it applied; raises
    and warns as :func:`to_mujoco` (``warn_unsited=False``: not about frames without a site;
    ``native_free=False``: every free joint as three slides and a ball, for the mujoco engine);
    ``what`` names the function called in errors. ``gravity`` (3,) in world coordinates, finite;
    None: the model's (its file's, else ``(0, 0, -9.81)``)."""
    gravity = _checked_arguments(model, gravity, what)
    acc = Inertias(
        floor_value("bound_mass", bound_mass),
        floor_value("bound_inertia", bound_inertia),
        as_bool(balance_inertia, "balance_inertia"),
    )
    refuse_wide_armature(model)
    plan = plan_bodies(model, native_free=native_free)
    too_deep = depth_problem(model, plan)
    if too_deep is not None:
        raise too_large_error("mujoco", model, too_deep)
    spec = build_spec(model, plan, acc, gravity)
    problems = list(acc.problems)
    if any("moves but has mass" in p for p in acc.problems):
        problems += unmerged_reasons(model, plan)
    refuse_problems(model, problems)
    warn_changed(model, acc, stacklevel=stacklevel + 1)
    if warn_unsited:
        warn_unsited_frames(model, plan, stacklevel=stacklevel + 1)
    return spec, plan, acc


def to_mujoco(
    model: Model,
    gravity: object = None,
    *,
    bound_mass: float = 0.0,
    bound_inertia: float = 0.0,
    balance_inertia: bool = False,
) -> Any:
    """The ``mujoco.MjModel`` of ``model`` (rigid-body dynamics only; see the module docstring).

    ``gravity`` (3,) in world coordinates: its ``opt.gravity``; None (the default) the model's
    (:attr:`bridge.Model.gravity`, its file's), else ``(0, 0, -9.81)``.

    Bodies are named after the root link of each rigid group (``mujoco_body_name``), or after the
    last link of a chain of massless links merged into one body with several joints
    (:mod:`bridge.backends.mujoco.bodies`); joints after the model's joints, sites after the other
    links and the extra frames; the free joint of a floating base is :data:`FREE_JOINT`. MuJoCo's
    DOF order is body order (depth first):
    :func:`bridge.backends.mujoco.state.mujoco_dof_permutation`.

    ``bound_mass`` (kg) and ``bound_inertia`` (kg m^2): floors for the mass and the principal
    moments of every moving body (MuJoCo's ``boundmass`` / ``boundinertia``). 0 (the default) keeps
    the model exact and refuses a moving body below MuJoCo's ``mjMINVAL`` (1e-15) with
    :class:`bridge.UnsupportedError` naming its link; a positive floor (at least 1e-15) raises such
    bodies to it with a :class:`bridge.BridgeWarning` naming the links (a massless body gets its mass
    at its link's origin): M, bias forces and inverse dynamics then differ from the model's by terms
    of the floor's size, forward dynamics by up to that over the smallest eigenvalue of M (a joint
    that moves only floored bodies gets an acceleration the model does not define).

    ``balance_inertia``: principal moments violating ``A + B >= C`` (refused by default) become
    their mean, as MuJoCo's ``balanceinertia`` does, with a :class:`bridge.BridgeWarning` naming the
    links and the size of the change.

    Frames on a massless link inside a merged chain (the link itself, links welded to it, extra
    frames) have no MuJoCo object: they move with the joints after the link, a site does not
    (:mod:`bridge.backends.mujoco.bodies`). A :class:`bridge.BridgeWarning` names them and those
    joints, except the model's :attr:`~bridge.Model.synthetic_links` (an MJCF body's own chain).
    """
    options = {"bound_mass": bound_mass, "bound_inertia": bound_inertia, "balance_inertia": balance_inertia}
    return compile_model(model, gravity, stacklevel=2, **options)


def compile_model(model: Model, gravity: object = None, *, stacklevel: int = 1, **options: Any) -> Any:
    """:func:`to_mujoco`, its warnings ``stacklevel`` frames above the caller; ``options`` are
    :func:`mujoco_spec`'s (``warn_unsited=False``, for the mujoco engine, which reads those frames
    from its kinematic twin, leaves out the warning on frames without a site)."""
    spec, _, _ = mujoco_spec(model, gravity, stacklevel=stacklevel + 1, **options)
    try:
        return spec.compile()
    except ValueError as exc:  # MuJoCo's compiler errors
        raise UnsupportedError(f"MuJoCo refused model {model.name!r}: {exc}") from None


# --------------------------------------------------------------------------- from MuJoCo
def _name(mujoco: Any, m: Any, objtype: Any, i: int, default: str) -> str:
    """:func:`bridge.backends.mujoco.messages.object_name` (a ModelError for a name not in UTF-8)."""
    return object_name(mujoco, m, objtype, i, default)


def _quat_to_R(q: np.ndarray) -> np.ndarray:
    return Transform.from_quaternion_wxyz(q / np.linalg.norm(q)).rotation


@dataclass(frozen=True)
class _Mj:
    """A compiled ``MjModel`` ``m`` with the ``mujoco`` module and its body and joint names (unnamed
    ones ``"body<id>"`` / ``"joint<id>"``, body 0 ``"world"`` unless named)."""

    mujoco: Any
    m: Any
    bname: list[str]
    jname: list[str]

    @classmethod
    def of(cls, mujoco: Any, m: Any) -> _Mj:
        OBJ = mujoco.mjtObj
        bname = [_name(mujoco, m, OBJ.mjOBJ_BODY, b, f"body{b}") for b in range(m.nbody)]
        bname[0] = _name(mujoco, m, OBJ.mjOBJ_BODY, 0, "world")
        jname = [_name(mujoco, m, OBJ.mjOBJ_JOINT, j, f"joint{j}") for j in range(m.njnt)]
        return cls(mujoco, m, bname, jname)

    def on_body(self, j: int) -> str:
        """``"'joint' on body 'body'"`` for joint ``j``."""
        return f"{self.jname[j]!r} on body {self.bname[self.m.jnt_bodyid[j]]!r}"


def _mj_inertia(m: Any, b: int) -> SpatialInertia:
    """Body ``b``'s inertia in its body frame, from ``body_mass``, ``body_ipos`` (3,) and the
    principal moments ``body_inertia`` (3,) along the axes of ``body_iquat`` (w, x, y, z); zero for
    the world body."""
    if b == 0:
        return SpatialInertia(0.0, np.zeros(3), np.zeros((3, 3)))
    R = _quat_to_R(np.asarray(m.body_iquat[b]))
    I_com = R @ np.diag(m.body_inertia[b]) @ R.T
    return SpatialInertia(float(m.body_mass[b]), np.array(m.body_ipos[b]), (I_com + I_com.T) / 2)


def _mj_joint(mj: _Mj, j: int, parent: str, child: str, rest: Transform) -> Joint:
    """The neutral joint of MuJoCo's joint ``j`` from link ``parent`` to ``child``: ``rest`` (4x4) the
    child's pose in the parent at ``qpos = 0`` before a hinge's or slide's ``ref`` is folded in, axis
    and axis origin (3,) in child coordinates, limits when ``jnt_limited`` (hinge, slide). A ball
    turns about its ``pos``; a free joint sets the body's pose in the world (the body's ``pos`` and
    ``quat`` are only its ``qpos0``): its rest pose is the identity, its armature is not read."""
    m, JNT = mj.m, mj.mujoco.mjtJoint
    jtype = m.jnt_type[j]
    armature = float(m.dof_armature[m.jnt_dofadr[j]])
    if jtype == JNT.mjJNT_BALL:
        return Joint(mj.jname[j], JointKind.BALL, parent, child, rest, axis_origin=np.array(m.jnt_pos[j]),
                     armature=armature)  # fmt: skip
    if jtype == JNT.mjJNT_FREE:
        return Joint(mj.jname[j], JointKind.FREE, parent, child, Transform.identity())
    limited = bool(m.jnt_limited[j])
    lo, hi = (float(m.jnt_range[j][0]), float(m.jnt_range[j][1])) if limited else (None, None)
    joint = movable_joint(
        mj.jname[j],
        parent,
        child,
        rest,
        prismatic=bool(jtype == JNT.mjJNT_SLIDE),
        axis=np.array(m.jnt_axis[j]),
        axis_origin=np.array(m.jnt_pos[j]),
        limits=JointLimits(lo, hi),
        armature=armature,
    )
    ref = float(m.qpos0[m.jnt_qposadr[j]])
    if ref != 0.0:  # MuJoCo moves by qpos - ref: fold -ref into the rest transform
        joint = dataclasses.replace(joint, parent_H_child=Transform._wrap(rest.matrix @ joint.motion(-ref)))
    return joint


def _body_joints(mj: _Mj, b: int) -> tuple[list[Link], list[Joint], list[str]]:
    """The joints from body ``b``'s parent to ``b``: a weld for a body without joints, else one
    joint per MuJoCo joint in MuJoCo's order, chained through massless links ``"<body>__<joint>"``
    (returned with the joints, and the DOF names)."""
    m, bname = mj.m, mj.bname
    rest = Transform.from_quaternion_wxyz(
        np.asarray(m.body_quat[b]) / np.linalg.norm(m.body_quat[b]), np.array(m.body_pos[b])
    )
    body_joints = list(range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]))
    prev = bname[m.body_parentid[b]]
    if not body_joints:
        return [], [Joint(f"{bname[b]}__weld", JointKind.FIXED, prev, bname[b], rest)], []
    links: list[Link] = []
    joints: list[Joint] = []
    for k, j in enumerate(body_joints):
        child = bname[b] if k == len(body_joints) - 1 else f"{bname[b]}__{mj.jname[j]}"
        if child != bname[b]:
            links.append(Link(child, SpatialInertia(0.0, np.zeros(3), np.zeros((3, 3)))))
        joints.append(_mj_joint(mj, j, prev, child, rest))
        prev, rest = child, Transform.identity()
    return links, joints, [mj.jname[j] for j in body_joints]


def _mj_tree(mj: _Mj, root: int, kept: list[int]) -> tuple[list[Link], list[Joint], list[str]]:
    """Links, joints and DOF names of the kept bodies (body order; the root has no joint)."""
    links: list[Link] = []
    joints: list[Joint] = []
    dofs: list[str] = []
    for b in kept:
        links.append(Link(mj.bname[b], _mj_inertia(mj.m, b)))
        if b == root:
            continue
        extra, body_joints, body_dofs = _body_joints(mj, b)
        links += extra
        joints += body_joints
        dofs += body_dofs
    return links, joints, dofs


def _mj_sites(mj: _Mj, keep: set[int], taken: set[str]) -> tuple[list[Frame], list[str]]:
    """The sites on kept bodies as frames (pose in the body frame), named by
    :func:`site_frame_name` against ``taken`` (the link names), and ``"'site' -> 'frame'"`` for
    each renamed one."""
    m = mj.m
    frames, renamed = [], []
    taken = set(taken)
    for i in range(m.nsite):
        b = int(m.site_bodyid[i])
        if b not in keep:
            continue
        H = Transform.from_quaternion_wxyz(
            np.asarray(m.site_quat[i]) / np.linalg.norm(m.site_quat[i]), np.array(m.site_pos[i])
        )
        site = _name(mj.mujoco, m, mj.mujoco.mjtObj.mjOBJ_SITE, i, f"site{i}")
        frame = site_frame_name(site, taken)
        if frame != site:
            renamed.append(f"{site!r} -> {frame!r}")
        taken.add(frame)
        frames.append(Frame(frame, mj.bname[b], H))
    return frames, renamed


def _ignored(mj: _Mj, free: list[int], kept: list[int]) -> list[str]:
    """What the model has that the rigid-body neutral model leaves out (free-joint armature,
    damping, friction loss, stiffness, gravity compensation, fluid forces, equalities, tendons)."""
    m = mj.m
    ignored = []
    free_dofs = [int(m.jnt_dofadr[j]) + k for j in free for k in range(6)]
    arm = np.asarray(m.dof_armature)
    armed = [mj.jname[j] for j in free if np.any(arm[m.jnt_dofadr[j] : m.jnt_dofadr[j] + 6])]
    for what, arr in (
        (f"free-joint armature ({', '.join(map(repr, armed))})", np.asarray(m.dof_armature)[free_dofs]),
        ("damping", m.dof_damping),
        ("friction loss", m.dof_frictionloss),
        ("stiffness", m.jnt_stiffness),
    ):
        if np.any(np.asarray(arr) != 0.0):
            ignored.append(what)
    if np.any(np.asarray(m.body_gravcomp)[kept] != 0.0):
        ignored.append("gravity compensation (gravcomp)")
    if m.opt.density > 0.0 or m.opt.viscosity > 0.0:
        ignored.append("fluid forces (option density/viscosity)")
    if m.neq:
        ignored.append(_equality_text(mj.mujoco, m))
    if m.ntendon:
        ignored.append(f"{m.ntendon} tendons")
    return ignored


def _warn_left_out(model_name: str, renamed: list[str], ignored: list[str], stacklevel: int) -> None:
    """The BridgeWarnings on renamed sites and on what the neutral model ignores, if any."""
    if renamed:  # MuJoCo names bodies and sites apart; a bridge model has one namespace of frames
        warnings.warn(
            f"MuJoCo model {model_name!r}: sites named like a body are frames with a '__site' suffix: "
            + ", ".join(renamed),
            BridgeWarning,
            stacklevel=stacklevel + 1,
        )
    if ignored:
        warnings.warn(
            f"MuJoCo model {model_name!r}: not part of the rigid-body model, ignored: {'; '.join(ignored)}",
            BridgeWarning,
            stacklevel=stacklevel + 1,
        )


def from_mujoco(mj_model: Any, name: str | None = None) -> Model:
    """A neutral :class:`Model` of a compiled ``mujoco.MjModel`` (see the module docstring).

    DOF names are MuJoCo's joint names in MuJoCo's DOF order (unnamed joints: ``"joint<id>"``,
    unnamed bodies ``"body<id>"``, unnamed sites ``"site<id>"``). A floating base comes from the
    only free joint, on a child of the world, when every joint is in its body's subtree; otherwise
    the model is fixed, its base is the world body, and each free joint is a FREE joint (a scene).
    """
    return _from_mujoco(mj_model, name, stacklevel=3)


def _from_mujoco(mj_model: Any, name: str | None, stacklevel: int) -> Model:
    """:func:`from_mujoco`, its warnings ``stacklevel`` frames up (the public caller's caller)."""
    mujoco = require_mujoco()
    if not isinstance(mj_model, mujoco.MjModel):
        raise BackendError(f"from_mujoco expects a mujoco.MjModel, got {type(mj_model).__name__}")
    name = None if name is None else as_name(name, "from_mujoco: name")
    mj = _Mj.of(mujoco, mj_model)
    m = mj.m
    where = f"MuJoCo model {name or _model_name(m.names) or 'mujoco_model'!r}"
    check_values(mujoco, m, mj.bname, mj.jname, where)
    free = free_joints(mujoco, m)
    floating = floating_joint(m, free)
    root, kept = kept_bodies(m, floating)
    links, joints, dofs = _mj_tree(mj, root, kept)
    frames, renamed = _mj_sites(mj, set(kept), {link.name for link in links})
    ignored = _ignored(mj, free, kept)
    model_name = name or _model_name(m.names) or "mujoco_model"
    _warn_left_out(model_name, renamed, ignored, stacklevel)
    try:
        synthetic = frozenset(link.name for link in links) - set(mj.bname)
        root, gravity, floats = mj.bname[root], _gravity(mujoco, m), floating is not None
        return Model(model_name, links, joints, frames, root, tuple(dofs), floats, synthetic, gravity)
    except ModelError as exc:
        raise ModelError(f"MuJoCo model {model_name!r}: {exc}") from None


def _gravity(mujoco: Any, m: Any) -> np.ndarray:
    """The model's gravity (3,): ``opt.gravity``, or zero when the gravity flag is disabled."""
    if m.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY):
        return np.zeros(3)
    return np.array(m.opt.gravity, dtype=np.float64)


def site_frame_name(site: str, taken: set[str]) -> str:
    """The frame name :func:`from_mujoco` gives a MuJoCo site: its name, or ``"<name>__site"`` (then
    ``"<name>__site_"``, ...) when a link (a body) or an earlier frame already has it."""
    if site not in taken:
        return site
    return unique_name(f"{site}__site", taken, "_")


def _equality_text(mujoco: Any, m: Any) -> str:
    """``"3 equality constraints (2 connect, 1 joint: ...)"``: what the rigid-body model leaves out."""
    kinds: dict[str, int] = {}
    for t in np.asarray(m.eq_type):
        kind = mujoco.mjtEq(int(t)).name.removeprefix("mjEQ_").lower()
        kinds[kind] = kinds.get(kind, 0) + 1
    counts = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
    return (
        f"{m.neq} equality constraints ({counts}: the model is the kinematic tree, its closed loops "
        "and joint couplings are not enforced, as in MuJoCo's own M and qfrc_bias)"
    )


def _nested_free_joints(mujoco: Any, path: Path) -> list[str]:
    """``"'joint' on body 'body'"`` for each free joint of an MJCF file that is not on a child of the
    world (MuJoCo's compiler refuses them naming the body only); empty if the file does not parse."""
    try:
        spec = mujoco.MjSpec.from_file(library_path(path))
    except ValueError:
        return []
    world = spec.worldbody
    return [
        f"{(j.name or '<unnamed>')!r} on body {b.name!r}"
        for b in spec.bodies
        if b.parent is not None and b.parent != world
        for j in b.joints
        if j.type == mujoco.mjtJoint.mjJNT_FREE
    ]


def load_mjcf(path: str | os.PathLike) -> Model:
    """Load an MJCF file through MuJoCo's own compiler (defaults, includes, inertias from geoms, ...)
    and convert it with :func:`from_mujoco`. The model is named after ``<mujoco model=...>``."""
    mujoco = require_mujoco()
    p = _model_path(path, "load_mjcf")
    if file_status(p, "MJCF file") == "missing":
        raise ModelFileNotFoundError(f"{p}: no such MJCF file")
    check_model_file(p, "MJCF file")  # (a regular file, readable, not huge) before MuJoCo opens it
    with captured_warnings(mujoco) as said:  # MuJoCo prints "XML contains a 'NaN'" from C otherwise
        try:
            mj = mujoco.MjModel.from_xml_path(library_path(p))
        except ValueError as exc:
            if "free joint" in str(exc):  # MuJoCo refuses a free joint below the root itself
                nested = _nested_free_joints(mujoco, p)
                what = f"free joint {', '.join(nested)}" if nested else str(exc).splitlines()[0]
                raise UnsupportedError(
                    f"{p}: {what} is not at the root: MuJoCo's compiler takes free joints on children of "
                    f"the world body only (MuJoCo: {' '.join(str(exc).split())})"
                ) from None
            bad = nonfinite_value(mujoco, p) if said else None
            if bad is not None:  # what MuJoCo's compiler then says is about something else
                raise InvalidValueError(f"{p}: {bad} is not finite (MuJoCo: {' '.join(said)})") from None
            raise ModelError(f"{p}: MuJoCo could not compile it: {exc}") from None
    try:
        model = _from_mujoco(mj, _model_name(mj.names) or p.stem, stacklevel=3)
    except (ModelError, InvalidValueError) as exc:  # the file named first
        raise type(exc)(f"{p}: {exc}") from None
    for text in said:  # a NaN in a value bridge does not read, ...
        warnings.warn(f"{p}: MuJoCo: {text}", BridgeWarning, stacklevel=2)
    return model


def _model_name(names: bytes) -> str:
    """The model name: MuJoCo stores it first in ``names``."""
    return bytes(names).split(b"\0", 1)[0].decode("utf-8", errors="replace") if names else ""


def _model_path(path: object, what: str) -> Path:
    """``path`` as a Path, or a ModelFileNotFoundError naming ``what`` and the wrong type."""
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ModelFileNotFoundError(f"{what}: expected a file path, got {path!r}")
    return Path(path)


def is_mjcf(path: str | os.PathLike) -> bool:
    """Whether the file's root element (after an XML declaration, comments and a DOCTYPE, read
    incrementally) is ``<mujoco>``: an MJCF file, whatever its name ends with."""
    from bridge.backends.registry import file_kind

    return file_kind(path) == "mjcf"
