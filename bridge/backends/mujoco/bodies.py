"""The MuJoCo bodies of a neutral model: which links become bodies, with which joints and inertia.

MuJoCo makes one body per rigid group of links (links joined by fixed joints: the group's root link
names the body, the other links and the extra frames become sites) and puts several hinge or slide
joints in one body when the links between them are massless: the joints of a body compose in their
order, each with its ``pos`` (a point of its axis) and ``axis`` in the body frame,

    parent_H_body(q) = rest M_1(q_1) M_2(q_2) ... M_k(q_k),

while a neutral chain of massless links is ``R_1 M_1(q_1) R_2 M_2(q_2) ... R_k M_k(q_k)`` (``R_i``
the rest transform of joint ``i``, ``M_i`` its motion in its child's coordinates). Conjugating each
motion by the rest transforms after it, ``S_i = R_{i+1} ... R_k``, gives the same product exactly:
``rest = R_1 ... R_k`` and joint ``i`` with axis ``S_i^-1 a_i`` through ``S_i^-1 o_i`` (a rotation
about a line stays a rotation about the moved line; a slide stays a slide along the moved axis).
So :func:`plan_bodies` merges every chain of massless links (zero mass and zero rotational inertia)
joined by movable joints, each with exactly one child joint, into the body of the chain's last
link, whose inertia it takes. Nothing is floored or approximated.

The links inside a chain, and the frames on them (extra frames, links welded to them), move with
the joints before them but not those after: the pose of link ``i`` in the body is
``(R_{i+1} M_{i+1}(q_{i+1}) ... R_k M_k(q_k))^-1``, which changes with every joint after it (each
movable joint moves its child), while a site is fixed in its body. So a frame of the chain is a
MuJoCo object exactly when it is on the chain's last link (the body itself, its sites); the others
have none (MuJoCo refuses a massless moving body of their own), and :func:`unsited_frames` names
them with the joints that move them, for :func:`~bridge.backends.mujoco.model.to_mujoco`'s warning
(the mujoco engine reads them from its kinematic twin, :mod:`bridge.backends.mujoco.twin`). Links
bridge created itself (:attr:`bridge.Model.synthetic_links`, the ``"<body>__<joint>"`` links of an
MJCF body with several joints) are not named: the body's joints carry them. A massless moving link
that ends a chain or branches is left as its own body, which MuJoCo refuses, naming it and why it
was not merged, unless its inertia is floored (``bound_mass`` / ``bound_inertia``).

:func:`body_inertia` gives each body's inertia in MuJoCo's form (mass, centre of mass, principal
moments and their axes) and applies the floors and the inertia balancing (``balance_inertia``,
like MuJoCo's ``balanceinertia``) that make a model MuJoCo refuses compile, noting each change.

Joints of several coordinates (:mod:`bridge.model.joints`) become MuJoCo joints of one body too
(:func:`mujoco_joints`): a ball joint is MuJoCo's ``ball`` (``pos`` its centre), a planar joint
(MuJoCo has none) slides along its plane axes and a hinge about its normal, ``(x, y, theta)`` with
MuJoCo's velocity ``(x_dot, y_dot, theta_dot)`` in the joint frame's axes, and a free joint is
MuJoCo's ``free`` joint when MuJoCo's own is the same (on a body of the world, at the identity; a
scene's free bodies, hoisted from the fixed base's body to MuJoCo's world body with the base's other
children: :attr:`Plan.hoisted`), else three slides along the joint frame's axes and a ball: its
``qpos`` ``(p, quaternion w, x, y, z)`` and ``qvel`` ``(p_dot in the joint frame's axes, omega in the
child's)`` are then those of MuJoCo's free joint relative to the joint frame. A ball's rotation is
its coordinates in the child's axes, so a chain merges through a ball or free joint only while the
rest transforms after it do not rotate and the joints after it slide (MuJoCo refuses a rotation after
a ball in one body); and MuJoCo takes at most six DOFs in one body (``MAX_BODY_DOFS``): a chain
that would break a rule ends at the massless link before it (its body refused by MuJoCo as every
massless moving body, the reason named).

MuJoCo's compiler nests bodies at most ``MAX_DEPTH`` deep below the world (MuJoCo 4.0 fails
with "depth limit exceeded in signature computation" at depth 1024, after 1.4 s there and minutes
on deeper chains: 11 s at 2,000 links, 183 s at 5,000): ``size_problem`` (the registry's size
check of MuJoCo) and ``depth_problem`` refuse such models before anything is built.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from bridge._array import as_real
from bridge._cache import per_model
from bridge.errors import InvalidValueError
from bridge.model.building import unique_name
from bridge.model.joints import plane_axes
from bridge.model.model import Frame, Joint, JointKind, Link, Model
from bridge.model.urdf import MAX_MAGNITUDE
from bridge.spatial import Transform

__all__ = [
    "MAX_BODY_DOFS",
    "MAX_DEPTH",
    "BodyJoint",
    "BodyPlan",
    "Inertias",
    "MjJoint",
    "Plan",
    "body_inertia",
    "depth_problem",
    "lumped_of",
    "mujoco_joints",
    "plan_bodies",
    "principal",
    "size_problem",
    "unsited_frames",
]


@per_model
def lumped_of(model: Model) -> Model:
    """``model.lumped()``, made once per model (a MuJoCo engine needs it three times and ``bridge
    check`` builds a dozen engines of one model; models are immutable, so it is shared)."""
    return model.lumped()


#: mjMINVAL: MuJoCo's smallest accepted mass and principal moment of a moving body
MINVAL = 1e-15
#: the deepest body MuJoCo's compiler takes (the world's children are at depth 1; measured, MuJoCo 4.0)
MAX_DEPTH = 1023
#: the most DOFs MuJoCo's compiler takes in one body ("more than 6 dofs in body", MuJoCo 4.0)
MAX_BODY_DOFS = 6


@dataclass(frozen=True)
class BodyJoint:
    """A neutral ``joint`` in a MuJoCo body: its ``axis`` (3,) (a planar joint's normal; zero for ball
    and free joints) and a point ``pos`` (3,) of its axis (a ball's centre, the child's origin for a
    free or planar joint), both in the body frame; ``rotation`` (3, 3) the child's axes in the body
    frame (a planar joint's plane axes and a free joint's slides are its columns' images); ``names``
    the MuJoCo joints it becomes (one, or a planar's three and an emulated free joint's four: the
    first keeps the joint's name); ``native``: a free joint written as MuJoCo's free joint."""

    joint: Joint
    axis: np.ndarray
    pos: np.ndarray
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    names: tuple[str, ...] = ()
    native: bool = False


@dataclass(frozen=True)
class MjJoint:
    """One MuJoCo joint: ``type`` ("hinge", "slide", "ball", "free"), ``axis`` (3,) and ``pos``
    (3,) in the body frame, ``armature``, and ``limits`` (lower, upper) or None."""

    name: str
    type: str
    axis: np.ndarray
    pos: np.ndarray
    armature: float
    limits: tuple[float, float] | None = None


def mujoco_joints(bj: BodyJoint) -> tuple[MjJoint, ...]:
    """The MuJoCo joints of a neutral joint in its body (module docstring), in MuJoCo's order: a
    hinge or slide (with its limits when they are a non-empty range; a continuous joint has none),
    a ball, MuJoCo's free joint, a planar joint's slides along its plane axes then its hinge, an
    emulated free joint's slides along x, y, z then its ball; each with the joint's armature (MuJoCo
    applies a ball's to each of its three DOFs, a free joint's to each of its six)."""
    j, kind, a = bj.joint, bj.joint.kind, float(bj.joint.armature)
    names = bj.names or (j.name,)
    zero = np.zeros(3)
    if kind is JointKind.BALL:
        return (MjJoint(names[0], "ball", zero, bj.pos, a),)
    if kind is JointKind.FREE:
        if bj.native:
            return (MjJoint(names[0], "free", zero, zero, a),)
        R = bj.rotation
        slides = tuple(MjJoint(names[k], "slide", R[:, k].copy(), bj.pos, a) for k in range(3))
        return (*slides, MjJoint(names[3], "ball", zero, bj.pos, a))
    if kind is JointKind.PLANAR:
        e1, e2 = plane_axes(j.axis)
        R = bj.rotation
        return (
            MjJoint(names[0], "slide", R @ e1, bj.pos, a),
            MjJoint(names[1], "slide", R @ e2, bj.pos, a),
            MjJoint(names[2], "hinge", bj.axis, bj.pos, a),
        )
    lo, hi = j.limits.lower, j.limits.upper
    # (an empty range, e.g. URDF's lower = upper = 0 for "not given", is no limit: MuJoCo refuses
    # range[0] >= range[1], and limits do not enter the dynamics)
    limited = kind is not JointKind.CONTINUOUS and lo is not None and hi is not None and lo < hi
    kind_name = "slide" if kind is JointKind.PRISMATIC else "hinge"
    return (MjJoint(names[0], kind_name, bj.axis, bj.pos, a, (lo, hi) if limited else None),)


@dataclass(frozen=True)
class BodyPlan:
    """One MuJoCo body: named after ``link`` (the lumped link whose inertia it has), below the body
    of link ``parent`` (None: the world), at ``rest`` (parent body frame -> body frame at zero joint
    positions), with ``joints`` in MuJoCo's order and the massless links ``merged`` into it."""

    link: Link
    parent: str | None
    rest: Transform
    joints: tuple[BodyJoint, ...] = ()
    merged: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """The bodies of a model in MuJoCo's (depth-first) order, its sites (frames on bodies, in body
    coordinates), each merged link's body (``merged``: link -> body link) and the frames on merged
    links (``inner_frames``: links welded to them, extra frames), which no MuJoCo site can carry;
    ``hoisted``: the bodies on the fixed base's body that hang from MuJoCo's world body instead (at
    the same pose: the base is at the identity), those of a scene with MuJoCo free joints; ``split``:
    massless links a chain could not continue through, and why."""

    bodies: tuple[BodyPlan, ...]
    sites: tuple[Frame, ...]
    merged: dict[str, str]
    inner_frames: tuple[str, ...]
    hoisted: frozenset[str] = frozenset()
    split: dict[str, str] = field(default_factory=dict)

    def mujoco_parent(self, body: BodyPlan) -> str | None:
        """The link of the MuJoCo body ``body`` hangs from (None: MuJoCo's world body)."""
        return None if body.link.name in self.hoisted else body.parent


def _massless(link: Link) -> bool:
    inertia = link.inertia
    return float(inertia.mass) == 0.0 and not np.any(np.asarray(inertia.inertia_com))


def _merged_joints(joints: list[Joint]) -> tuple[Transform, tuple[BodyJoint, ...]]:
    """The rest transform and the body joints of a chain of neutral joints (module docstring)."""
    S = Transform.identity()
    out: list[BodyJoint] = []
    for j in reversed(joints):
        S_inv = S.inverse()
        R_inv = S_inv.rotation
        pos = R_inv @ np.asarray(j.axis_origin) + S_inv.translation
        out.append(BodyJoint(j, R_inv @ np.asarray(j.axis), pos, np.array(R_inv)))
        S = j.parent_H_child @ S
    return S, tuple(reversed(out))


_TURNS = (JointKind.BALL, JointKind.FREE)


def _no_rotation(H: Transform) -> bool:
    return bool(np.array_equal(np.asarray(H.rotation), np.eye(3)))


def _chain_stop(chain: list[Joint], j: Joint) -> str | None:
    """Why joint ``j`` cannot join the MuJoCo body of ``chain`` (None: it can)."""
    nv = sum(c.nv for c in chain) + j.nv
    if nv > MAX_BODY_DOFS:
        return (
            f"its joints and the next one's ({[c.name for c in chain]} and {j.name!r}) have {nv} DOFs, and "
            f"MuJoCo takes at most {MAX_BODY_DOFS} in one body"
        )
    turning = [c.name for c in chain if c.kind in _TURNS]
    if turning and j.kind is not JointKind.PRISMATIC:
        return (
            f"MuJoCo turns nothing after a ball joint in one body ({turning} then {j.name!r}, a "
            f"{j.kind.value} joint: 'ball followed by rotation')"
        )
    if turning and not _no_rotation(j.parent_H_child):
        return (
            f"the next joint's frame ({j.name!r}) is rotated, and a MuJoCo ball's coordinates are in its "
            f"body's axes ({turning} would turn about other axes)"
        )
    return None


def _is_identity(H: Transform) -> bool:
    return bool(np.array_equal(np.asarray(H.matrix), np.eye(4)))


def _native_free(model: Model, base: str, b: BodyPlan) -> bool:
    """Whether body ``b``'s joint is a free joint MuJoCo's own free joint is (module docstring)."""
    return (
        not model.floating
        and b.parent == base
        and len(b.joints) == 1
        and b.joints[0].joint.kind is JointKind.FREE
        and _is_identity(b.rest)
    )


def _named(bodies: list[BodyPlan], model: Model, native: set[str]) -> list[BodyPlan]:
    """The bodies with each joint's MuJoCo names (a planar joint's and an emulated free joint's parts
    named ``<joint>__y`` ..., unique among the model's joints) and the native free joints marked."""
    taken = set(model.joint_names)
    out = []
    for b in bodies:
        joints = []
        for bj in b.joints:
            j = bj.joint
            is_native = b.link.name in native
            if j.kind is JointKind.PLANAR:
                parts = ("y", "theta")
            elif j.kind is JointKind.FREE and not is_native:
                parts = ("y", "z", "ball")
            else:
                parts = ()
            names = [j.name]
            for p in parts:
                names.append(unique_name(f"{j.name}__{p}", taken, "_"))
                taken.add(names[-1])
            joints.append(dataclasses.replace(bj, names=tuple(names), native=is_native))
        out.append(dataclasses.replace(b, joints=tuple(joints)))
    return out


def _chain_links(lumped: Model, merge: bool) -> set[str]:
    """The lumped links a chain continues through: massless, moving, exactly one child joint."""
    if not merge:
        return set()
    return {
        link.name
        for link in lumped.links
        if link.name != lumped.base and _massless(link) and len(lumped.child_joints(link.name)) == 1
    }


def plan_bodies(model: Model, merge: bool = True, native_free: bool = True) -> Plan:
    """The MuJoCo bodies of ``model`` (see the module docstring); ``merge=False`` keeps one body per
    lumped link (one joint each); ``native_free=False`` writes every free joint as three slides and
    a ball (no body hoisted to the world body: the mujoco engine, which moves the base's body)."""
    lumped = lumped_of(model)
    through = _chain_links(lumped, merge)
    bodies = [BodyPlan(lumped.link(lumped.base), None, Transform.identity())]
    pending: dict[str, tuple[str, list[Joint]]] = {}
    merged: dict[str, str] = {}
    split: dict[str, str] = {}

    def close(parent: str, chain: list[Joint]) -> None:
        rest, body_joints = _merged_joints(chain)
        inner = tuple(c.child for c in chain[:-1])
        merged.update({name: chain[-1].child for name in inner})
        bodies.append(BodyPlan(lumped.link(chain[-1].child), parent, rest, body_joints, inner))

    # depth first over the model's movable joints: a chain's joints come one after the other
    for joint in model.depth_first_joints:
        if not joint.movable:
            continue
        j = lumped.joint(joint.name)
        parent, chain = pending.pop(j.parent, (j.parent, []))
        why = _chain_stop(chain, j) if chain else None
        if why is not None:  # the chain ends at j's parent: a massless body (MuJoCo refuses it)
            split[j.parent] = why
            close(parent, chain)
            parent, chain = j.parent, []
        chain.append(j)
        if j.child in through:
            pending[j.child] = (parent, chain)
            continue
        close(parent, chain)
    native = {b.link.name for b in bodies[1:] if native_free and _native_free(model, lumped.base, b)}
    hoisted = frozenset(b.link.name for b in bodies[1:] if b.parent == lumped.base) if native else frozenset()
    inner = tuple(f.name for f in lumped.frames if f.link in merged)
    sites = tuple(f for f in lumped.frames if f.link not in merged)
    return Plan(tuple(_named(bodies, model, native)), sites, merged, inner, hoisted, split)


def unsited_frames(model: Model, plan: Plan) -> list[str]:
    """The frames of ``model`` that no MuJoCo object carries (the links inside merged chains and the
    frames on them, its synthetic links left out), one text per link naming the joints after it in
    its body: ``"['a', 'a_tip'] on link 'a' (moved by joints ['j2', 'j3'] of body 'b')"``."""
    on_link: dict[str, list[str]] = {}
    for f in lumped_of(model).frames:
        on_link.setdefault(f.link, []).append(f.name)
    out = []
    for b in plan.bodies:
        for i, link in enumerate(b.merged):
            names = [n for n in (link, *on_link.get(link, ())) if n not in model.synthetic_links]
            if names:
                after = [bj.joint.name for bj in b.joints[i + 1 :]]
                out.append(f"{names} on link {link!r} (moved by joints {after} of body {b.link.name!r})")
    return out


def _depth_text(model: Model, depth: int, link: str) -> str | None:
    if depth <= MAX_DEPTH:
        return None
    return (
        f"MuJoCo's compiler nests bodies at most {MAX_DEPTH} deep (it fails with 'depth limit exceeded' "
        f"beyond, after seconds to minutes), and model {model.name!r} needs body {link!r} at depth {depth}"
    )


def size_problem(model: Model) -> str | None:
    """The registry's size check of MuJoCo's engine: why it refuses ``model`` (None: it takes it).
    The engine compiles the model and, when it merges links, a kinematic twin with one body per
    lumped link, whose depth is one (the base) plus the most movable joints on a path from the base."""
    depth = {model.base: 1}
    for joint in model.depth_first_joints:
        depth[joint.child] = depth[joint.parent] + (1 if joint.movable else 0)
    deepest = max(depth, key=depth.__getitem__)
    return _depth_text(model, depth[deepest], deepest)


def depth_problem(model: Model, plan: Plan) -> str | None:
    """Why MuJoCo's compiler would refuse the bodies of ``plan`` for being nested too deep (None:
    they are not)."""
    depth: dict[str, int] = {}
    deepest, most = "", 0
    for body in plan.bodies:  # parents come first (depth first)
        d = depth[body.link.name] = 1 + (0 if body.parent is None else depth[body.parent])
        if d > most:
            deepest, most = body.link.name, d
    return _depth_text(model, most, deepest)


# --------------------------------------------------------------------------- inertias
def principal(inertia_com: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments (3,) and the unit quaternion (w, x, y, z) of their axes (a proper rotation)."""
    lam, V = np.linalg.eigh(inertia_com)
    if np.linalg.det(V) < 0:
        V[:, 2] = -V[:, 2]
    quat = Transform.from_rotation_translation(V, np.zeros(3)).as_quaternion_wxyz()
    return lam, quat


def floor_value(what: str, value: object) -> float:
    """A ``bound_mass`` / ``bound_inertia`` argument as a float: 0 (none) or a floor from
    ``mjMINVAL`` to :data:`bridge.model.urdf.MAX_MAGNITUDE` (the largest value bridge reads); a
    bool, a string, a complex, NaN or anything else is an InvalidValueError."""
    b = as_real(value, what, finite=False)  # True is not 1 kg
    if not (b == 0.0 or MINVAL <= b <= MAX_MAGNITUDE):
        raise InvalidValueError(
            f"{what}: 0 (none) or a floor from {MINVAL:g} to {MAX_MAGNITUDE:g}, got {value!r}"
        )
    return b


@dataclass
class Inertias:
    """The changes :func:`body_inertia` may make (floors, balancing) and what it collects: the
    problems MuJoCo would refuse, the links whose inertia was raised or balanced."""

    bound_mass: float = 0.0
    bound_inertia: float = 0.0
    balance: bool = False
    problems: list[str] = field(default_factory=list)
    raised: list[str] = field(default_factory=list)
    balanced: list[str] = field(default_factory=list)


def _triangle_violated(lam: np.ndarray) -> bool:
    lo = np.sort(lam)
    return bool(lo[0] + lo[1] < lo[2] * (1.0 - 1e-12) - 1e-15)


def body_inertia(link: Link, moving: bool, acc: Inertias) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """MuJoCo's inertia of a link's body: mass, centre of mass (3,) and the unit quaternion (w, x,
    y, z) of the principal axes (4,), both in link coordinates, and the principal moments (3,) about
    the centre of mass. The floors and balancing of ``acc`` are applied (noted in ``acc.raised`` /
    ``acc.balanced``); what MuJoCo would still refuse is noted in ``acc.problems``."""
    inertia = link.inertia
    mass = float(inertia.mass)
    lam, iquat = principal(np.array(inertia.inertia_com))
    com = np.array(inertia.com) if mass > 0.0 else np.zeros(3)
    if mass > 0.0 and _triangle_violated(lam):  # (raising moments that satisfy A + B >= C keeps it)
        if acc.balance:  # MuJoCo's balanceinertia: the three moments become their mean
            mean = float(np.mean(lam))
            acc.balanced.append(
                f"{link.name!r} (moments {lam.tolist()} -> {mean!r}, change "
                f"{float(np.abs(lam - mean).max()):.3g} kg m^2)"
            )
            lam = np.full(3, mean)
        else:
            acc.problems.append(f"link {link.name!r}: principal moments {lam.tolist()} violate A + B >= C")
    # floors for zero masses and moments (a negative moment is an error: it stays and is refused)
    low = (lam >= -MINVAL) & (lam < acc.bound_inertia)
    if moving and (mass < acc.bound_mass or low.any()):
        was = f"mass {mass:.3g} kg, principal moments {np.round(lam, 15).tolist()}"
        acc.raised.append(f"{link.name!r} ({was})")
        mass = max(mass, acc.bound_mass)
        lam = np.where(low, acc.bound_inertia, lam)
    if moving and (mass < MINVAL or lam.min() < MINVAL):
        acc.problems.append(
            f"link {link.name!r} moves but has mass {mass:.3g} kg and principal moments "
            f"{np.round(lam, 15).tolist()} (MuJoCo needs both above 1e-15)"
        )
    return mass, com, iquat, lam
