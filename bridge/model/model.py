"""The neutral multibody model: links, joints with axis and axis origin, extra frames, DOF order.

Joint semantics follow iDynTree's (docs/conventions.md, section "Model structure from one URDF",
compares the libraries' models): a joint connecting ``parent`` and ``child`` has a rest transform
``parent_H_child`` (the pose at zero position), a unit ``axis`` and an ``axis_origin``, both in
**child** coordinates. At position ``s``::

    parent_H_child(s) = parent_H_child_rest @ H(axis, axis_origin, s)

where ``H`` rotates by ``s`` about the line through ``axis_origin`` along ``axis`` (revolute,
continuous) or translates by ``s * axis`` (prismatic). A URDF gives a zero axis origin; re-rooting
the tree (:meth:`Model.with_base`) flips joints and makes it non-zero.

Joints are stored oriented away from the base link. Joints that are movable in the source but
locked by the user are stored as FIXED joints (rest transform at the locked position) that keep
their original definition in :attr:`Joint.original`, so they can be released again.

Joints of several coordinates (planar, ball and free: the joint table of
:mod:`bridge.model.joints`) move the child by ``H(q)`` of their kind; a ball joint rotates about its
``axis_origin`` (the centre), a planar joint moves in the plane normal to its ``axis``, a free joint
sets the child's pose in the joint frame. A model may hold any number of them anywhere: several free
bodies on a fixed world link (a scene), a free joint below the root. Each DOF joint has ``nq``
positions in ``s`` and ``nv`` velocities in ``s_dot`` (:attr:`Model.coordinates`).

A movable joint may carry an ``armature`` (rotor inertia reflected through the gear, as MJCF's
joint ``armature`` or Pinocchio's ``model.armature``): a constant added to the joint's diagonal
entry of the mass matrix (and ``armature * s_ddot`` to its inverse dynamics). It is not part of any
body's motion: it leaves the momentum, the centre of mass, Coriolis terms and gravity unchanged
(docs/theory.md, "Armature"). URDF has no armature: :meth:`Model.to_urdf` leaves it out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from bridge._array import as_real
from bridge.errors import InvalidValueError, ModelError, UnknownNameError
from bridge.model.gravity import checked_gravity
from bridge.model.joints import Coordinates, JointKind
from bridge.spatial import SpatialInertia, Transform

__all__ = ["Frame", "Joint", "JointKind", "JointLimits", "Link", "Model"]


@dataclass(frozen=True)
class JointLimits:
    """Joint limits as URDF states them; ``None`` where not given."""

    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None


@dataclass(frozen=True, eq=False)
class Link:
    """A rigid body; ``inertia`` is expressed in the link frame."""

    name: str
    inertia: SpatialInertia

    @property
    def mass(self) -> float:
        return float(self.inertia.mass)


@dataclass(frozen=True, eq=False)
class Joint:
    """A joint from ``parent`` to ``child`` (see the module docstring for the semantics).

    ``axis`` and ``axis_origin`` are in child coordinates; both are zero for a fixed joint.
    ``armature`` (kg m^2 for a rotational joint, kg for a prismatic one, >= 0) adds to the joint's
    diagonal entry of the mass matrix; zero for a fixed joint.
    """

    name: str
    kind: JointKind
    parent: str
    child: str
    parent_H_child: Transform
    axis: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis_origin: np.ndarray = field(default_factory=lambda: np.zeros(3))
    limits: JointLimits = field(default_factory=JointLimits)
    original: Joint | None = None  # for a locked joint: the movable joint it came from
    locked_position: float | tuple[float, ...] | None = None  # for a locked joint: where it is locked
    armature: float = 0.0

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", JointKind(self.kind))
        except ValueError:
            raise ModelError(
                f"joint {self.name!r}: unknown kind {self.kind!r}; use one of {[k.value for k in JointKind]}"
            ) from None
        armature = float(self.armature)
        if not np.isfinite(armature) or armature < 0.0:
            raise ModelError(f"joint {self.name!r}: armature must be finite and >= 0, got {self.armature!r}")
        if armature != 0.0 and not self.kind.movable:
            raise ModelError(f"joint {self.name!r}: a fixed joint has no armature (got {armature})")
        object.__setattr__(self, "armature", armature)
        axis = np.array(self.axis, dtype=np.float64).reshape(3)
        origin = np.array(self.axis_origin, dtype=np.float64).reshape(3)
        if not (np.all(np.isfinite(axis)) and np.all(np.isfinite(origin))):
            raise ModelError(f"joint {self.name!r}: axis and axis origin must be finite")
        if self.kind in (JointKind.BALL, JointKind.FREE):
            axis = np.zeros(3)  # no axis: a ball turns about its centre (axis_origin), a free joint is free
            if self.kind is JointKind.FREE:
                origin = np.zeros(3)
        elif self.kind.movable:
            n = np.linalg.norm(axis)
            if not np.isfinite(n) or n < 1e-12:
                raise ModelError(f"joint {self.name!r}: axis must be a non-zero vector, got {axis.tolist()}")
            axis = axis / n
            if self.kind is JointKind.PLANAR:
                origin = np.zeros(3)
        axis.flags.writeable = False
        origin.flags.writeable = False
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "axis_origin", origin)
        if self.locked_position is not None:
            lp = np.asarray(self.locked_position, dtype=np.float64)
            object.__setattr__(self, "locked_position", float(lp) if lp.ndim == 0 else tuple(lp.tolist()))

    @property
    def movable(self) -> bool:
        return self.kind.movable

    @property
    def nq(self) -> int:
        """Number of positions (0 fixed, 1 revolute/prismatic, 3 planar, 4 ball, 7 free)."""
        return self.kind.nq

    @property
    def nv(self) -> int:
        """Number of velocities (0 fixed, 1 revolute/prismatic, 3 planar and ball, 6 free)."""
        return self.kind.nv

    @property
    def motion_subspace(self) -> np.ndarray:
        """Velocity of child w.r.t. parent per unit joint velocity, in child coordinates: (6,) for a
        one-coordinate joint, (6, nv) for a planar, ball or free joint (:meth:`subspace`).

        Revolute: ``(axis_origin x axis, axis)``; prismatic: ``(axis, 0)``; fixed: zeros.
        """
        S = self.subspace
        return S[:, 0] if self.kind.single else (np.zeros(6) if not self.movable else S)

    @property
    def subspace(self) -> np.ndarray:
        """The motion subspace (6, nv) (:meth:`bridge.model.joints.JointSpec.subspace`)."""
        return self.kind.spec.subspace(self.axis, self.axis_origin)

    def motion(self, position: object) -> np.ndarray:
        """``child_rest_H_child(q)`` as a (..., 4, 4) array: for a one-coordinate joint ``position``
        has shape (...), for a joint of several coordinates (..., nq)."""
        q = np.asarray(position, dtype=np.float64)
        if self.kind.nq == 1 or not self.movable:
            q = q[..., None]
        return self.kind.spec.motion(q, self.axis, self.axis_origin)

    def transform(self, position: object = None) -> Transform:
        """``parent_H_child(q)``, batched over the leading axes of ``position`` (None: the neutral
        configuration)."""
        if position is None:
            position = 0.0 if self.kind.nq <= 1 else self.kind.spec.neutral()
        return Transform(self.parent_H_child.matrix @ self.motion(position), check=False)

    def reversed(self) -> Joint:
        """The same joint seen from the other side: parent and child swapped, same position sign.

        ``(C_H_D_rest H(d, o, s))^-1 = D_H_C_rest H(-C_R_D d, C_H_D o, s)``. Joints of several
        coordinates are not reversed (their coordinates are measured from the parent's side).
        """
        if self.kind.wide:
            raise ModelError(
                f"joint {self.name!r} is a {self.kind.value} joint: bridge does not re-root a model through "
                "a joint of several coordinates (choose a base on the same side of it)"
            )
        rest = self.parent_H_child
        R = rest.rotation
        axis = -(R @ self.axis) if self.movable else np.zeros(3)
        origin = rest.apply(self.axis_origin) if self.movable else np.zeros(3)
        original = self.original.reversed() if self.original is not None else None
        return dataclasses.replace(
            self,
            parent=self.child,
            child=self.parent,
            parent_H_child=rest.inverse(),
            axis=axis,
            axis_origin=origin,
            original=original,
        )

    def locked(self, position: object) -> Joint:
        """This movable joint turned into a FIXED joint at ``position`` (a number, or nq numbers for
        a joint of several coordinates; its armature stays with :attr:`original`)."""
        if not self.movable:
            raise ModelError(f"joint {self.name!r} is fixed; only movable joints can be locked")
        q = np.asarray(position, dtype=np.float64)
        if self.kind.nq != 1 and q.shape != (self.kind.nq,):
            raise ModelError(
                f"joint {self.name!r}: a {self.kind.value} joint is locked at {self.kind.nq} positions, "
                f"got {np.shape(position)}"
            )
        if self.kind.nq == 1 and q.ndim != 0:
            raise ModelError(f"joint {self.name!r}: locked position must be a number, got {position!r}")
        if not np.all(np.isfinite(q)) or not bool(self.kind.spec.check(q.reshape(-1))):
            raise ModelError(f"joint {self.name!r}: invalid locked position {np.asarray(position).tolist()}")
        return Joint(
            name=self.name,
            kind=JointKind.FIXED,
            parent=self.parent,
            child=self.child,
            parent_H_child=self.transform(q),
            limits=self.limits,
            original=self,
            locked_position=float(q) if q.ndim == 0 else tuple(q.tolist()),
        )


@dataclass(frozen=True, eq=False)
class Frame:
    """An extra frame rigidly attached to ``link`` at ``link_H_frame``."""

    name: str
    link: str
    link_H_frame: Transform


def _name_set(names: object) -> frozenset[str]:
    """``names`` (an iterable of strings, not a string) as a frozenset; a ModelError otherwise."""
    if isinstance(names, (str, bytes)):
        raise ModelError(f"synthetic_links: expected a set of link names, got {names!r}")
    try:
        out = frozenset(names)
    except TypeError:
        raise ModelError(f"synthetic_links: expected a set of link names, got {names!r}") from None
    if not all(isinstance(n, str) for n in out):
        raise ModelError(f"synthetic_links: link names must be strings, got {sorted(map(repr, out))}")
    return out


@dataclass(frozen=True, eq=False)
class Model:
    """A neutral multibody tree.

    Attributes:
        name: robot name.
        links: every link (body).
        joints: every joint, oriented away from ``base`` (locked joints are FIXED).
        frames: extra frames (every link is a frame too, see :meth:`frame_names`).
        base: the base link.
        dof_names: the DOF serialization (names of the movable joints, in order).
        floating: floating base (6 extra base DOFs) or fixed to the world at ``base``.
        synthetic_links: names of links bridge created when reading the source file rather than
            links of the file, e.g. the massless links ``"<body>__<joint>"`` that chain the joints of
            an MJCF body with several joints (:func:`bridge.from_mujoco`). Writers may leave them
            out without a warning (an MJCF body with several joints carries them); the set survives
            re-rooting, DOF selection and lumping (names no longer in the model are ignored).
        gravity: the gravity (3,) in world coordinates (m/s^2) the source file states (MJCF's
            ``<option gravity>``, an SDF world's ``<gravity>``, a library model's), read-only; None
            when not stated. It is the default gravity of every engine and query on the model
            (:func:`bridge.model.gravity.model_gravity`: ``(0, 0, -9.81)`` when None); an explicit
            ``gravity=`` still overrides it.
    """

    name: str
    links: tuple[Link, ...]
    joints: tuple[Joint, ...]
    frames: tuple[Frame, ...]
    base: str
    dof_names: tuple[str, ...]
    floating: bool = True
    synthetic_links: frozenset[str] = frozenset()
    gravity: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "synthetic_links", _name_set(self.synthetic_links))
        object.__setattr__(self, "gravity", checked_gravity(self.gravity, f"model {self.name!r}: gravity"))
        object.__setattr__(self, "links", tuple(self.links))
        object.__setattr__(self, "joints", tuple(self.joints))
        object.__setattr__(self, "frames", tuple(self.frames))
        object.__setattr__(self, "dof_names", tuple(self.dof_names))
        self._validate()

    # ------------------------------------------------------------------ validation
    def _validate(self) -> None:
        names: dict[str, str] = {}
        for kind, items in (("link", self.links), ("frame", self.frames)):
            for item in items:
                if item.name in names:
                    raise ModelError(
                        f"duplicate name {item.name!r}: used by a {names[item.name]} and a {kind}"
                    )
                names[item.name] = kind
        joint_names: set[str] = set()
        for j in self.joints:
            if j.name in joint_names:
                raise ModelError(f"duplicate joint name {j.name!r}")
            joint_names.add(j.name)
        link_set = {link.name for link in self.links}
        if self.base not in link_set:
            raise UnknownNameError("base link", self.base, sorted(link_set), where=f"model {self.name!r}")
        parents: dict[str, str] = {}
        for j in self.joints:
            for end in (j.parent, j.child):
                if end not in link_set:
                    raise ModelError(f"joint {j.name!r} refers to unknown link {end!r}")
            if j.child in parents:
                raise ModelError(
                    f"link {j.child!r} has two parent joints ({parents[j.child]!r} and {j.name!r})"
                )
            if j.child == self.base:
                raise ModelError(f"joint {j.name!r} has the base link {self.base!r} as its child")
            parents[j.child] = j.name
        # every link reachable from the base (a tree: n_links - 1 joints, no cycles)
        reached = set(self._depth_first_links())
        missing = link_set - reached
        if missing:
            raise ModelError(
                f"links not connected to the base {self.base!r}: {sorted(missing)} "
                "(several root links, or a kinematic loop)"
            )
        movable = {j.name for j in self.joints if j.movable}
        seen: set[str] = set()
        for d in self.dof_names:
            if d in seen:
                raise ModelError(f"joint {d!r} appears twice in the DOF list")
            seen.add(d)
            if d not in movable:
                if d in joint_names:
                    raise ModelError(f"joint {d!r} is fixed (or locked) and cannot be a DOF")
                raise UnknownNameError("joint", d, sorted(movable), where=f"model {self.name!r}")
        if seen != movable:
            raise ModelError(
                f"movable joints missing from the DOF list: {sorted(movable - seen)} "
                "(lock them with with_dofs instead)"
            )
        for f in self.frames:
            if f.link not in link_set:
                raise ModelError(f"frame {f.name!r} is attached to unknown link {f.link!r}")

    # ------------------------------------------------------------------ lookups
    @cached_property
    def _link_index(self) -> dict[str, Link]:
        return {link.name: link for link in self.links}

    @cached_property
    def _joint_index(self) -> dict[str, Joint]:
        return {j.name: j for j in self.joints}

    @cached_property
    def _frame_index(self) -> dict[str, Frame]:
        return {f.name: f for f in self.frames}

    @cached_property
    def _parent_joint(self) -> dict[str, Joint]:
        return {j.child: j for j in self.joints}

    @cached_property
    def _children(self) -> dict[str, list[Joint]]:
        out: dict[str, list[Joint]] = {link.name: [] for link in self.links}
        for j in self.joints:
            out.setdefault(j.parent, []).append(j)
        return out

    def link(self, name: str) -> Link:
        try:
            return self._link_index[name]
        except KeyError:
            raise UnknownNameError("link", name, self._link_index, where=f"model {self.name!r}") from None

    def joint(self, name: str) -> Joint:
        try:
            return self._joint_index[name]
        except KeyError:
            raise UnknownNameError("joint", name, self._joint_index, where=f"model {self.name!r}") from None

    def frame(self, name: str) -> Frame:
        """The frame called ``name``; a link name gives the link's own frame (identity placement)."""
        if name in self._frame_index:
            return self._frame_index[name]
        if name in self._link_index:
            return Frame(name, name, Transform.identity())
        raise UnknownNameError("frame", name, self.frame_names, where=f"model {self.name!r}")

    @property
    def link_names(self) -> tuple[str, ...]:
        return tuple(link.name for link in self.links)

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    @property
    def frame_names(self) -> tuple[str, ...]:
        """Every frame: the links first, then the extra frames."""
        return self.link_names + tuple(f.name for f in self.frames)

    def parent_joint(self, link: str) -> Joint | None:
        """The joint whose child is ``link`` (None for the base)."""
        self.link(link)
        return self._parent_joint.get(link)

    def child_joints(self, link: str) -> list[Joint]:
        self.link(link)
        return list(self._children.get(link, []))

    @cached_property
    def coordinates(self) -> Coordinates:
        """Where each DOF joint's positions and velocities sit in ``s`` and ``s_dot``
        (:class:`bridge.model.joints.Coordinates`)."""
        return Coordinates(self.dof_names, tuple(self._joint_index[d].kind for d in self.dof_names))

    @cached_property
    def n_dofs(self) -> int:
        """Number of joint velocities (the length of ``s_dot``): the number of DOF joints when every
        one has one coordinate."""
        return self.coordinates.nv

    @cached_property
    def n_positions(self) -> int:
        """Number of joint positions (the length of ``s``): ``n_dofs`` but for ball (4 positions, 3
        velocities) and free joints (7, 6)."""
        return self.coordinates.nq

    @cached_property
    def single_coordinate(self) -> bool:
        """Every DOF joint has one position and one velocity (revolute, continuous, prismatic)."""
        return self.coordinates.single

    @cached_property
    def nv(self) -> int:
        """Size of the generalized velocity: n_dofs + 6 for a floating base."""
        return self.n_dofs + (6 if self.floating else 0)

    def neutral_positions(self) -> np.ndarray:
        """The neutral joint positions ``s`` (n_positions,): zero, identity rotations."""
        parts = [k.spec.neutral() for k in self.coordinates.kinds]
        return np.concatenate(parts) if parts else np.zeros(0)

    @property
    def total_mass(self) -> float:
        return float(sum(link.mass for link in self.links))

    @property
    def movable_joints(self) -> tuple[Joint, ...]:
        """Movable joints in DOF order."""
        return tuple(self._joint_index[d] for d in self.dof_names)

    @cached_property
    def massless_dofs(self) -> tuple[str, ...]:
        """Movable joints that move no inertia, so that the mass matrix is singular: a massless
        subtree, or all of its mass on the joint axis (see :mod:`bridge.model.massless`)."""
        from bridge.model.massless import massless_dofs

        return massless_dofs(self)

    @property
    def locked_joints(self) -> dict[str, float | tuple[float, ...]]:
        """Locked joints and the positions they are locked at (nq numbers for a joint of several)."""
        return {j.name: j.locked_position for j in self.joints if j.original is not None}

    def _depth_first_links(self) -> list[str]:
        order: list[str] = []
        stack = [self.base]
        visited: set[str] = set()
        children: dict[str, list[str]] = {}
        for j in self.joints:
            children.setdefault(j.parent, []).append(j.child)
        while stack:
            name = stack.pop()
            if name in visited:
                raise ModelError(f"kinematic loop through link {name!r}")
            visited.add(name)
            order.append(name)
            stack.extend(reversed(children.get(name, [])))
        return order

    @cached_property
    def depth_first_joints(self) -> tuple[Joint, ...]:
        """Joints in depth-first order from the base (children in the order of ``joints``)."""
        out: list[Joint] = []
        stack = list(reversed(self._children.get(self.base, [])))
        while stack:
            j = stack.pop()
            out.append(j)
            stack.extend(reversed(self._children.get(j.child, [])))
        return tuple(out)

    def dof_index(self, joint: str) -> int:
        """The position of ``joint`` in ``dof_names`` (its index in s and s_dot when every DOF joint has
        one coordinate; :attr:`coordinates` gives the slices otherwise)."""
        try:
            return self.dof_names.index(joint)
        except ValueError:
            raise UnknownNameError("DOF", joint, self.dof_names, where=f"model {self.name!r}") from None

    # ------------------------------------------------------------------ kinematics (reference)
    def forward_kinematics(self, s: object) -> dict[str, Transform]:
        """``base_H_link`` for every link at joint positions ``s`` (..., n_positions), batched."""
        from bridge._array import as_float_array

        c = self.coordinates
        s = as_float_array(s, "joint positions s", (c.nq,))
        batch = s.shape[:-1]
        out = {self.base: Transform.identity(batch)}
        for j in self.depth_first_joints:
            if not j.movable:
                pos = np.zeros(batch)
            elif j.kind.nq == 1:
                pos = s[..., c.q_start[c.index[j.name]]]
            else:
                pos = s[..., c.q_slice(c.index[j.name])]
            out[j.child] = out[j.parent] @ j.transform(pos)
        return out

    def frame_placement(self, frame: str) -> tuple[str, Transform]:
        """``(link, link_H_frame)`` of any frame (a link gives itself and the identity)."""
        f = self.frame(frame)
        return f.link, f.link_H_frame

    # ------------------------------------------------------------------ derived models
    def replace(self, **changes) -> Model:
        return dataclasses.replace(self, **changes)

    def with_base(self, link: str) -> Model:
        """The same robot with ``link`` as base: joints on the path to the old base are reversed."""
        if not isinstance(link, str):
            raise ModelError(f"base link: expected a link name (str), got {link!r}")
        self.link(link)
        if link == self.base:
            return self
        path: set[str] = set()
        cur = link
        while cur != self.base:
            j = self._parent_joint[cur]
            path.add(j.name)
            cur = j.parent
        joints = tuple(j.reversed() if j.name in path else j for j in self.joints)
        return dataclasses.replace(self, joints=joints, base=link)

    def with_dofs(self, names: Sequence[str], locked: Mapping[str, object] | None = None) -> Model:
        """A model whose DOFs are ``names`` in that order.

        Movable joints (including joints locked earlier) left out are locked at ``locked[name]``
        (default: the neutral position, 0; a joint of several coordinates takes nq numbers). Naming
        a locked joint in ``names`` releases it.
        """
        try:
            names = tuple(names) if not isinstance(names, str) else None
        except TypeError:
            names = None
        if names is None or not all(isinstance(n, str) for n in names):
            raise ModelError("DOF names must be a sequence of joint names (str)")
        if locked is not None and not isinstance(locked, Mapping):
            raise ModelError(
                f"locked must be a mapping {{joint name: position}}, got {type(locked).__name__}"
            )
        locked = dict(locked or {})
        for n, value in locked.items():
            if not isinstance(n, str):
                raise ModelError(f"locked: joint names must be strings, got {n!r}")
            joint = self._joint_index.get(n)
            if joint is not None and (joint.original or joint).nq > 1:
                continue  # a joint of several coordinates: its nq numbers are checked by Joint.locked
            try:
                locked[n] = as_real(value, f"locked position of joint {n!r}")
            except InvalidValueError as exc:
                raise ModelError(str(exc)) from None
        candidates = {j.name for j in self.joints if j.movable or j.original is not None}
        for n in (*names, *locked):
            if n not in self._joint_index:
                raise UnknownNameError("joint", n, self._joint_index, where=f"model {self.name!r}")
            if n not in candidates:
                raise ModelError(f"joint {n!r} is a fixed joint and cannot be a DOF or be locked")
        both = set(names) & set(locked)
        if both:
            raise ModelError(f"joints both in the DOF list and locked: {sorted(both)}")
        joints = []
        for j in self.joints:
            free = j.original if j.original is not None else j
            if j.name in names:
                joints.append(free)
            elif free.movable:
                default = j.locked_position if j.locked_position is not None else free.kind.spec.neutral()
                position = locked.get(j.name, default)
                joints.append(free.locked(position if free.nq > 1 else np.reshape(position, ())))
            else:
                joints.append(j)
        return dataclasses.replace(self, joints=tuple(joints), dof_names=names)

    def with_fixed_base(self) -> Model:
        return dataclasses.replace(self, floating=False)

    def with_floating_base(self) -> Model:
        return dataclasses.replace(self, floating=True)

    @property
    def armature(self) -> np.ndarray:
        """(n_dofs,) the armature of each joint velocity, in DOF order (zeros when the model has none;
        a joint of several velocities has its armature on each of them, as MuJoCo's ball joints)."""
        return np.repeat(
            np.array([self._joint_index[d].armature for d in self.dof_names], dtype=np.float64),
            [self._joint_index[d].nv for d in self.dof_names],
        )

    @property
    def has_armature(self) -> bool:
        return any(j.armature != 0.0 for j in self.joints)

    def lumped(self) -> Model:
        """Merge links joined by fixed joints into one body.

        Each group of links connected by fixed (or locked) joints becomes one link named after
        the group's root link, with the summed inertia; the merged links become frames of it and
        their frames are re-attached. Locked joints are lost (they become part of a rigid body).
        """
        root_of: dict[str, str] = {}
        root_H: dict[str, Transform] = {}
        for name in self._depth_first_links():
            pj = self._parent_joint.get(name)
            if pj is not None and not pj.movable:
                root_of[name] = root_of[pj.parent]
                root_H[name] = root_H[pj.parent] @ pj.parent_H_child
            else:
                root_of[name] = name
                root_H[name] = Transform.identity()
        inertias: dict[str, SpatialInertia] = {}
        for link in self.links:
            r = root_of[link.name]
            moved = link.inertia.transformed(root_H[link.name])
            inertias[r] = inertias[r] + moved if r in inertias else moved
        links = tuple(
            Link(link.name, inertias[link.name]) for link in self.links if root_of[link.name] == link.name
        )
        frames = [
            Frame(link.name, root_of[link.name], root_H[link.name])
            for link in self.links
            if root_of[link.name] != link.name
        ]
        frames += [Frame(f.name, root_of[f.link], root_H[f.link] @ f.link_H_frame) for f in self.frames]
        joints = []
        for j in self.joints:
            if not j.movable:
                continue
            parent = root_of[j.parent]
            joints.append(
                dataclasses.replace(j, parent=parent, parent_H_child=root_H[j.parent] @ j.parent_H_child)
            )
        return dataclasses.replace(
            self, links=links, joints=tuple(joints), frames=tuple(frames), base=root_of[self.base]
        )

    def to_urdf(self) -> str:
        """URDF text of this model (see :func:`bridge.model.urdf.model_to_urdf`)."""
        from bridge.model.urdf import model_to_urdf

        return model_to_urdf(self)

    def to_sdf(self) -> str:
        """SDFormat text of this model (see :func:`bridge.model.sdf_writer.model_to_sdf`)."""
        from bridge.model.sdf_writer import model_to_sdf

        return model_to_sdf(self)

    def summary(self) -> str:
        return (
            f"Model {self.name!r}: {len(self.links)} links, {len(self.joints)} joints, "
            f"{self.n_dofs} DOFs, {len(self.frames)} extra frames, base {self.base!r}, "
            f"{'floating' if self.floating else 'fixed'} base, mass {self.total_mass:.6g} kg"
        )

    def __repr__(self) -> str:
        return f"<{self.summary()}>"
