"""Featherstone (spatial_v2 / RBDL) models: the data structure and the conversions to and from the
neutral Model (MATLAB ``.mat`` files: :mod:`.mat`).

A :class:`FeatherstoneModel` holds spatial_v2's fields (bodies numbered 1..NB):

* ``NB``; ``parent[i - 1]`` the parent of body i (0 = the fixed world), regular numbering
  ``parent[i - 1] < i``;
* ``jtype[i - 1]`` in ``'Rx', 'Ry', 'Rz', 'Px', 'Py', 'Pz'``: joint i rotates about / slides along
  that axis of its frame;
* ``Xtree[i - 1]`` (6x6, angular first): ``plux(E, r)`` from the parent body's frame to joint i's
  predecessor frame; body i's frame is joint i's successor frame, so the motion transform from the
  parent to body i is ``Xup = XJ(q_i) @ Xtree[i - 1]`` with ``XJ = plux(rk(q), 0)`` (revolute) or
  ``plux(1, q e_k)`` (prismatic);
* ``I[i - 1]`` (6x6, angular first) body i's spatial inertia in its own frame;
* ``gravity`` (3,) in the fixed-world frame.

A floating base is laid out as spatial_v2's ``floatbase`` does: bodies 1-5 are massless placeholders
(joints Px, Py, Pz, Rx, Ry in a chain with identity Xtree), body 6 (joint Rz, identity Xtree) is the
floating base and the robot's joints are bodies 7..NB. FDfb/IDfb-style functions replace bodies
1-6 by one free body.

:func:`to_featherstone` chooses every joint frame J at the neutral joint's axis origin, oriented so
that the axis is J's +x, +y or +z (the child link's axes when the axis is already +x/+y/+z; a
rotation otherwise, e.g. 180 degrees about another axis for -z). Fixed (and locked) joints merge
the child into its parent body (as :meth:`bridge.Model.lumped`); merged links and every frame are
kept as *placements* ``(body, body_H_frame)``. For a fixed base (``model.floating == False``) the
base link is the fixed world (body 0): it contributes no dynamics, its inertia is kept as
metadata (``base_inertia``) so the centre of mass still counts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

import numpy as np

from bridge._array import as_float_array
from bridge._cache import ModelCache
from bridge.errors import ModelError, ShapeError, UnknownNameError, UnsupportedError
from bridge.model.gravity import gravity_or, model_gravity
from bridge.model.joints import require_single_coordinate
from bridge.model.model import Frame, Joint, JointKind, Link, Model
from bridge.spatial import DEFAULT_GRAVITY, SpatialInertia, Transform, rotation_between
from bridge.spatial.conventions import reorder_matrix, transform_from_plux, transform_to_plux

__all__ = [
    "FLOATBASE_JTYPES",
    "JTYPES",
    "FeatherstoneModel",
    "base_placement",
    "floatbase",
    "from_featherstone",
    "normalise_jtype",
    "to_featherstone",
]

#: joint types spatial_v2 knows and bridge supports
JTYPES = ("Rx", "Ry", "Rz", "Px", "Py", "Pz")
#: joint types of bodies 1..6 of a floating-base model (the floatbase layout)
FLOATBASE_JTYPES = ("Px", "Py", "Pz", "Rx", "Ry", "Rz")
_AXIS_TOL = 1e-12
_LAYOUT_TOL = 1e-14


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class FeatherstoneModel:
    """A spatial_v2 model plus bridge metadata (see the module docstring for the fields' meaning).

    Attributes:
        NB: number of bodies.
        parent: ``parent[i - 1]`` is body i's parent (0 = fixed world), tuple of NB ints.
        jtype: joint type of each body, tuple of NB strings among :data:`JTYPES`.
        Xtree: (NB, 6, 6) angular-first Plücker transforms, parent body frame -> joint predecessor.
        I: (NB, 6, 6) angular-first spatial inertias in body coordinates.
        gravity: (3,) gravity in the fixed-world frame.
        name: robot name.
        body_names: per body, the neutral link that is the body's root ("" for floatbase placeholders).
        joint_names: per body, the neutral joint name ("" for floatbase placeholders).
        joint_kinds: per body, "revolute", "continuous" or "prismatic" ("" for placeholders).
        dof_names: the neutral DOF order (names of the real joints).
        dof_perm: (n,) int, ``q[k] = s[dof_perm[k]]``: neutral DOF order -> Featherstone q order
            of the real joints (bodies 7..NB for a floating base, 1..NB for a fixed one).
        placements: ``{name: (body, body_H_frame)}`` for every neutral link and frame (body 0 is the
            fixed world, i.e. the base link of a fixed-base model).
        base: the neutral base link.
        base_inertia: (6, 6) angular-first inertia welded to the fixed world (fixed base only; zero
            otherwise), in base-link coordinates.
        floating: floatbase layout (bodies 1-6 are the free base); detected from the fields when
            not given.
    """

    NB: int
    parent: tuple[int, ...]
    jtype: tuple[str, ...]
    Xtree: np.ndarray
    I: np.ndarray  # noqa: E741 - spatial_v2's field name
    gravity: np.ndarray = field(default_factory=lambda: np.array(DEFAULT_GRAVITY))
    name: str = "robot"
    body_names: tuple[str, ...] = ()
    joint_names: tuple[str, ...] = ()
    joint_kinds: tuple[str, ...] = ()
    dof_names: tuple[str, ...] = ()
    dof_perm: np.ndarray | None = None
    placements: Mapping[str, tuple[int, Transform]] = field(default_factory=dict)
    base: str = ""
    base_inertia: np.ndarray = field(default_factory=lambda: np.zeros((6, 6)))
    floating: bool | None = None

    def __post_init__(self) -> None:
        NB = int(self.NB)
        if NB < 0:
            raise ModelError(f"Featherstone model {self.name!r}: NB must be >= 0, got {self.NB}")
        object.__setattr__(self, "NB", NB)
        parent = tuple(int(p) for p in self.parent)
        jtype = tuple(normalise_jtype(j, i + 1, self.name) for i, j in enumerate(self.jtype))
        if len(parent) != NB or len(jtype) != NB:
            raise ModelError(
                f"Featherstone model {self.name!r}: NB = {NB} but {len(parent)} parents and "
                f"{len(jtype)} joint types"
            )
        for i, p in enumerate(parent, start=1):
            if not 0 <= p < i:
                raise ModelError(
                    f"Featherstone model {self.name!r}: body {i} has parent {p}; spatial_v2 needs "
                    f"regular numbering 0 <= parent(i) < i"
                )
        Xtree = np.array(self.Xtree, dtype=np.float64).reshape(-1, 6, 6) if NB else np.zeros((0, 6, 6))
        inertia = np.array(self.I, dtype=np.float64).reshape(-1, 6, 6) if NB else np.zeros((0, 6, 6))
        if Xtree.shape != (NB, 6, 6) or inertia.shape != (NB, 6, 6):
            raise ShapeError(
                f"Featherstone model {self.name!r}: Xtree and I must be (NB, 6, 6) = ({NB}, 6, 6), "
                f"got {Xtree.shape} and {inertia.shape}"
            )
        if not (np.all(np.isfinite(Xtree)) and np.all(np.isfinite(inertia))):
            raise ModelError(f"Featherstone model {self.name!r}: Xtree or I contains NaN or inf")
        for i in range(NB):  # raises if not a Plücker motion transform
            try:
                transform_from_plux(Xtree[i])
            except Exception as exc:
                raise ModelError(f"Featherstone model {self.name!r}: Xtree of body {i + 1}: {exc}") from None
        g = np.array(self.gravity, dtype=np.float64).reshape(-1)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ShapeError(f"Featherstone model {self.name!r}: gravity must be a finite 3-vector, got {g}")
        object.__setattr__(self, "parent", parent)
        object.__setattr__(self, "jtype", jtype)
        object.__setattr__(self, "Xtree", _readonly(Xtree))
        object.__setattr__(self, "I", _readonly(inertia))
        object.__setattr__(self, "gravity", _readonly(g))
        object.__setattr__(self, "base_inertia", _readonly(np.reshape(self.base_inertia, (6, 6))))
        if self.floating is None:
            object.__setattr__(self, "floating", _is_floatbase_layout(parent, jtype, Xtree, inertia))
        elif self.floating and not _is_floatbase_layout(parent, jtype, Xtree, inertia):
            raise ModelError(
                f"Featherstone model {self.name!r}: floating=True needs the floatbase layout (bodies 1-6 "
                "joints Px, Py, Pz, Rx, Ry, Rz in a chain with identity Xtree, bodies 1-5 massless)"
            )
        n_real = NB - (6 if self.floating else 0)
        for attr in ("body_names", "joint_names", "joint_kinds"):
            val = tuple(str(x) for x in getattr(self, attr))
            if val and len(val) != NB:
                raise ModelError(
                    f"Featherstone model {self.name!r}: {attr} has {len(val)} entries, NB = {NB}"
                )
            object.__setattr__(self, attr, val)
        object.__setattr__(self, "dof_names", tuple(str(x) for x in self.dof_names))
        perm = np.arange(n_real) if self.dof_perm is None else np.asarray(self.dof_perm, dtype=np.intp)
        if perm.shape != (n_real,) or not np.array_equal(np.sort(perm), np.arange(n_real)):
            raise ModelError(
                f"Featherstone model {self.name!r}: dof_perm must be a permutation of {n_real} joints"
            )
        perm = perm.copy()
        perm.flags.writeable = False
        object.__setattr__(self, "dof_perm", perm)
        places = {}
        for name, (body, pose) in dict(self.placements).items():
            body = int(body)
            if not 0 <= body <= NB:
                raise ModelError(
                    f"Featherstone model {self.name!r}: placement {name!r} on unknown body {body}"
                )
            places[str(name)] = (body, pose if isinstance(pose, Transform) else Transform(pose))
        object.__setattr__(self, "placements", MappingProxyType(places))

    # ------------------------------------------------------------------ derived
    @property
    def n_real(self) -> int:
        """Number of real joints (bodies 7..NB for a floating base, 1..NB for a fixed one)."""
        return self.NB - (6 if self.floating else 0)

    @property
    def n_dofs(self) -> int:
        """Number of neutral DOFs (the real joints), so a FeatherstoneModel sizes a bridge State."""
        return self.n_real

    @property
    def n_positions(self) -> int:
        """The same: spatial_v2's joints have one coordinate each."""
        return self.n_real

    #: spatial_v2's joints have one coordinate each (the neutral models standing for it do too)
    single_coordinate = True

    @property
    def first_real(self) -> int:
        """Index of the first real-joint body (7 for a floating base, 1 otherwise)."""
        return 7 if self.floating else 1

    @cached_property
    def total_mass(self) -> float:
        """Mass of every body plus the mass welded to the fixed world."""
        return float(
            np.trace(self.I[:, 3:, 3:], axis1=1, axis2=2).sum() / 3.0
            + self.base_inertia[3:, 3:].trace() / 3.0
        )

    def placement(self, name: str) -> tuple[int, Transform]:
        """``(body, body_H_frame)`` of a neutral link or frame name (body 0 is the fixed world)."""
        try:
            return self.placements[name]
        except KeyError:
            raise UnknownNameError(
                "frame", name, self.placements, where=f"Featherstone model {self.name!r}"
            ) from None

    def with_gravity(self, gravity: object) -> FeatherstoneModel:
        """The same model with another gravity vector (3,)."""
        import dataclasses

        return dataclasses.replace(self, gravity=np.array(gravity, dtype=np.float64))

    def spatial_v2_fields(self) -> dict[str, object]:
        """The plain spatial_v2 fields: NB, parent (1-based), jtype, Xtree and I (lists of 6x6), gravity."""
        return {
            "NB": self.NB,
            "parent": list(self.parent),
            "jtype": list(self.jtype),
            "Xtree": [x.copy() for x in self.Xtree],
            "I": [x.copy() for x in self.I],
            "gravity": self.gravity.copy(),
        }

    def __repr__(self) -> str:
        kind = "floating" if self.floating else "fixed"
        return f"FeatherstoneModel({self.name!r}, NB={self.NB}, {kind} base)"


#: joint codes of spatial_v2 that bridge does not model, and what they are
UNSUPPORTED_JTYPES = {
    "H": "helical",
    "r": "planar revolute",
    "px": "planar prismatic",
    "py": "planar prismatic",
}


def normalise_jtype(j: object, body: int, name: str) -> str:
    """The joint code of body ``body`` (1-based) as one of :data:`JTYPES`: a string (``'R'`` and
    ``'P'`` are spatial_v2's shorthands for ``'Rz'`` and ``'Pz'``) or a mapping with a ``'code'`` entry
    (a struct as spatial_v2's ``jcalc`` accepts). Raises :class:`~bridge.UnsupportedError` naming the
    body and the code for anything else (helical, planar, unknown codes)."""
    if isinstance(j, Mapping) and "code" in j:
        j = j["code"]
    s = str(j).strip()
    s = {"R": "Rz", "P": "Pz"}.get(s, s)
    if len(s) == 2 and s[0] in "RP" and s[1] in "xyzXYZ":
        s = s[0] + s[1].lower()
    if s not in JTYPES:
        what = UNSUPPORTED_JTYPES.get(s, "unknown")
        raise UnsupportedError(
            f"Featherstone model {name!r}: body {body} has joint code {s!r} ({what}), which bridge does "
            f"not model; supported: {', '.join(JTYPES)} (and 'R', 'P' for 'Rz', 'Pz')"
        )
    return s


def _is_floatbase_layout(parent, jtype, Xtree, inertia) -> bool:
    if len(parent) < 6:
        return False
    if tuple(parent[:6]) != (0, 1, 2, 3, 4, 5) or tuple(jtype[:6]) != FLOATBASE_JTYPES:
        return False
    if np.max(np.abs(Xtree[:6] - np.eye(6))) > _LAYOUT_TOL:
        return False
    if np.max(np.abs(inertia[:5])) != 0.0:
        return False
    # the placeholders carry nothing but the chain: the robot hangs from body 6 and later
    return all(p >= 6 for p in parent[6:])


# --------------------------------------------------------------------------- neutral -> Featherstone
def joint_frame_rotation(axis: np.ndarray) -> tuple[int, np.ndarray]:
    """``(k, child_R_J)``: the joint-frame orientation whose axis k (0, 1, 2 = x, y, z) is ``axis``.

    +x/+y/+z give the identity; -x/-y/-z a 180 degree rotation about another axis; any other
    direction the minimal rotation from ``±e_k`` (k the largest component, so the rotation is well
    conditioned), composed with the 180 degree flip for a negative component.
    """
    d = np.asarray(axis, dtype=np.float64)
    d = d / np.linalg.norm(d)
    k = int(np.argmax(np.abs(d)))
    e = np.zeros(3)
    e[k] = 1.0
    flip = np.diag([1.0, 1.0, 1.0])
    # 180 degrees about the next axis: maps e_k to -e_k
    flip[k, k] = -1.0
    flip[(k + 2) % 3, (k + 2) % 3] = -1.0
    if np.max(np.abs(d - e)) < _AXIS_TOL:
        return k, np.eye(3)
    if np.max(np.abs(d + e)) < _AXIS_TOL:
        return k, flip
    if d[k] > 0:
        return k, rotation_between(e, d)
    return k, rotation_between(-e, d) @ flip


#: to_featherstone's model at each model's own gravity
_CACHE = ModelCache()


def to_featherstone(model: Model, gravity: object = None) -> FeatherstoneModel:
    """The spatial_v2 model of a neutral ``model`` (cached per model for its own gravity: None, the
    default, is the model's, its file's, else ``(0, 0, -9.81)``).

    See the module docstring for the layout. Bodies are numbered depth first from the base (so
    Featherstone's q order is the depth-first joint order; ``dof_perm`` maps the model's DOF order
    to it). The result's ``placements`` give, for every neutral link and frame, its body and pose
    in the body frame. spatial_v2 has no mimic joints: a coupled model
    (``load_urdf(..., mimic="coupled")``) converts as its full model ``model.full`` (every mimic
    joint a body with its own q), whose states are ``model.full_positions(s)`` etc.
    """
    if not isinstance(model, Model):
        raise ModelError(f"to_featherstone expects a bridge.Model, got {type(model).__name__}")
    model = getattr(model, "full", None) or model  # a coupled model: its full model
    require_single_coordinate(model, "spatial_v2's model (joint types Rx, ..., Pz)")
    g = as_float_array(gravity_or(gravity, model), "to_featherstone: gravity", (3,))
    if g.shape != (3,):
        raise ShapeError(f"to_featherstone: gravity: expected shape (3,), got {g.shape}")
    default = np.array_equal(g, model_gravity(model))
    if not default:
        return _build(model, g)
    kept = _CACHE.of(model)
    if "model" not in kept:
        kept.setdefault("model", _build(model, g))
    return kept["model"]


def _build(model: Model, gravity: np.ndarray) -> FeatherstoneModel:
    lumped = model.lumped()
    floating = model.floating
    offset = 6 if floating else 0
    ident = Transform.identity()
    # link -> (body index, body_H_link)
    body_of: dict[str, tuple[int, Transform]] = {lumped.base: (offset, ident)}
    parent, jtype, Xtree, inertia = [], [], [], []
    body_names, joint_names, joint_kinds = [], [], []
    if floating:
        for i, jt in enumerate(FLOATBASE_JTYPES):
            parent.append(i)
            jtype.append(jt)
            Xtree.append(np.eye(6))
            inertia.append(np.zeros((6, 6)))
            body_names.append("")
            joint_names.append("")
            joint_kinds.append("")
        inertia[5] = reorder_matrix(lumped.link(lumped.base).inertia.as_matrix())
        body_names[5] = lumped.base
    for joint in lumped.depth_first_joints:
        if not joint.movable:  # pragma: no cover - lumped() keeps only movable joints
            raise ModelError(f"joint {joint.name!r}: unexpected fixed joint after lumping")
        k, child_R_J = joint_frame_rotation(joint.axis)
        child_H_J = Transform.from_rotation_translation(child_R_J, joint.axis_origin, check=False)
        J_H_child = child_H_J.inverse()
        pbody, pbody_H_plink = body_of[joint.parent]
        pbody_H_J0 = pbody_H_plink @ joint.parent_H_child @ child_H_J
        index = len(parent) + 1
        parent.append(pbody)
        jtype.append(("P" if joint.kind is JointKind.PRISMATIC else "R") + "xyz"[k])
        Xtree.append(transform_to_plux(pbody_H_J0))
        inertia.append(reorder_matrix(lumped.link(joint.child).inertia.transformed(J_H_child).as_matrix()))
        body_names.append(joint.child)
        joint_names.append(joint.name)
        joint_kinds.append(joint.kind.value)
        body_of[joint.child] = (index, J_H_child)
    placements: dict[str, tuple[int, Transform]] = {}
    for link in lumped.links:
        placements[link.name] = body_of[link.name]
    for frame in lumped.frames:
        body, body_H_link = body_of[frame.link]
        placements[frame.name] = (body, body_H_link @ frame.link_H_frame)
    first = offset + 1
    dof_index = {d: i for i, d in enumerate(model.dof_names)}
    perm = [dof_index[joint_names[b - 1]] for b in range(first, len(parent) + 1)]
    base_inertia = np.zeros((6, 6))
    if not floating:
        base_inertia = reorder_matrix(lumped.link(lumped.base).inertia.as_matrix())
    return FeatherstoneModel(
        NB=len(parent),
        parent=tuple(parent),
        jtype=tuple(jtype),
        Xtree=np.array(Xtree).reshape(-1, 6, 6),
        I=np.array(inertia).reshape(-1, 6, 6),
        gravity=gravity,
        name=model.name,
        body_names=tuple(body_names),
        joint_names=tuple(joint_names),
        joint_kinds=tuple(joint_kinds),
        dof_names=model.dof_names,
        dof_perm=np.array(perm, dtype=np.intp),
        placements=placements,
        base=model.base,
        base_inertia=base_inertia,
        floating=floating,
    )


def floatbase(fmodel: FeatherstoneModel) -> FeatherstoneModel:
    """A floating-base model from a fixed-base one whose body 1 is the only child of the world.

    Body 1's joint (and its Xtree) is replaced by the floatbase chain: bodies 1-5 are massless
    placeholders, body 6 is the old body 1 (its frame is the floating base frame) and the other
    bodies are renumbered i -> i + 5.
    """
    roots = [i for i, p in enumerate(fmodel.parent, start=1) if p == 0]
    if fmodel.floating or roots != [1]:
        raise ModelError(
            f"floatbase: model {fmodel.name!r} must be a fixed-base model whose body 1 is the only child "
            f"of the world (children of the world: {roots})"
        )
    NB = fmodel.NB + 5
    parent = [0, 1, 2, 3, 4, 5] + [p + 5 for p in fmodel.parent[1:]]
    jtype = list(FLOATBASE_JTYPES) + list(fmodel.jtype[1:])
    Xtree = np.concatenate([np.broadcast_to(np.eye(6), (6, 6, 6)), fmodel.Xtree[1:]])
    inertia = np.concatenate([np.zeros((5, 6, 6)), fmodel.I])

    def shifted(names: tuple[str, ...]) -> tuple[str, ...]:
        return ("",) * 5 + names if names else ()

    placements = {n: (b + 5 if b > 0 else 6, H) for n, (b, H) in fmodel.placements.items()}
    joint_names = shifted(fmodel.joint_names)
    joint_kinds = shifted(fmodel.joint_kinds)
    if joint_names:
        joint_names = (*joint_names[:5], "", *joint_names[6:])
        joint_kinds = (*joint_kinds[:5], "", *joint_kinds[6:])
    perm = None
    if fmodel.dof_names and len(fmodel.dof_names) == fmodel.NB and joint_names:
        dofs = [d for d in fmodel.dof_names if d != fmodel.joint_names[0]]
        idx = {d: i for i, d in enumerate(dofs)}
        perm = np.array([idx[n] for n in joint_names[6:]], dtype=np.intp)
        dof_names = tuple(dofs)
    else:
        dof_names = ()
    return FeatherstoneModel(
        NB=NB,
        parent=tuple(parent),
        jtype=tuple(jtype),
        Xtree=Xtree,
        I=inertia,
        gravity=fmodel.gravity,
        name=fmodel.name,
        body_names=shifted(fmodel.body_names),
        joint_names=joint_names,
        joint_kinds=joint_kinds,
        dof_names=dof_names,
        dof_perm=perm,
        placements=placements,
        base=fmodel.body_names[0] if fmodel.body_names else fmodel.base,
        floating=True,
    )


# --------------------------------------------------------------------------- Featherstone -> neutral
def base_placement(fmodel: FeatherstoneModel) -> Transform:
    """``body_H_base``: the pose of the base link of ``from_featherstone(fmodel)`` in the frame of its
    body (body 6, the floating base, for a floatbase layout; the fixed world, body 0, otherwise).

    The identity for :func:`to_featherstone` exports; for :func:`floatbase` of a fixed-base export the
    base is the old first joint's child link, whose frame need not be body 6's (the joint frame).
    """
    b = 6 if fmodel.floating else 0
    name = (fmodel.body_names[b - 1] if (b >= 1 and fmodel.body_names) else fmodel.base) or f"body{b}"
    pl = fmodel.placements.get(name)
    return pl[1] if pl is not None and pl[0] == b else Transform.identity()


def _inertia_from_af(I_af: np.ndarray, where: str) -> SpatialInertia:
    try:
        return SpatialInertia.from_matrix(reorder_matrix(I_af))
    except Exception as exc:
        raise ModelError(f"{where}: not a spatial inertia ({exc})") from None


def from_featherstone(fmodel: FeatherstoneModel) -> Model:
    """A neutral Model with the same dynamics as ``fmodel``.

    Links are named after the metadata (``body_names``) when present, else ``body1``, ``body2``, ...
    (``body0`` for the link welded to the world of a fixed-base model); joints after
    ``joint_names`` or ``joint1``, ... Each link's frame is the placement of its own name when the
    metadata has one (so every link and frame keeps its pose), else the body frame; joint axes come
    from ``jtype`` and rest transforms from ``Xtree``. Extra placements become frames. A floatbase
    layout gives a floating-base model whose base is body 6.
    """
    if not isinstance(fmodel, FeatherstoneModel):
        raise ModelError(f"from_featherstone expects a FeatherstoneModel, got {type(fmodel).__name__}")
    floating = bool(fmodel.floating)
    first = fmodel.first_real
    base_body = 6 if floating else 0
    names = {}
    for b in range(base_body, fmodel.NB + 1):
        meta = fmodel.body_names[b - 1] if (b >= 1 and fmodel.body_names) else ""
        if b == 0:
            meta = fmodel.base
        names[b] = meta or f"body{b}"
    if len(set(names.values())) != len(names):
        raise ModelError(f"Featherstone model {fmodel.name!r}: duplicate body names {sorted(names.values())}")
    # body_H_link of each body's link: its own placement if the metadata has it
    body_H_link: dict[int, Transform] = {}
    for b, n in names.items():
        pl = fmodel.placements.get(n)
        body_H_link[b] = pl[1] if pl is not None and pl[0] == b else Transform.identity()
    links = []
    for b, n in names.items():
        I_af = fmodel.base_inertia if b == 0 else fmodel.I[b - 1]
        inertia = _inertia_from_af(I_af, f"Featherstone model {fmodel.name!r}, body {b}")
        links.append(Link(n, inertia.transformed(body_H_link[b].inverse())))
    joints = []
    for b in range(first, fmodel.NB + 1):
        jt = fmodel.jtype[b - 1]
        k = "xyz".index(jt[1])
        p = fmodel.parent[b - 1]
        if floating and p < 6:
            raise ModelError(f"Featherstone model {fmodel.name!r}: body {b} hangs from placeholder body {p}")
        kind = fmodel.joint_kinds[b - 1] if fmodel.joint_kinds and fmodel.joint_kinds[b - 1] else None
        if kind is None:
            kind = "prismatic" if jt[0] == "P" else "revolute"
        if (kind == "prismatic") != (jt[0] == "P"):
            raise ModelError(
                f"Featherstone model {fmodel.name!r}: body {b} joint kind {kind!r} vs jtype {jt!r}"
            )
        jname = (fmodel.joint_names[b - 1] if fmodel.joint_names else "") or f"joint{b}"
        pbody_H_J0 = transform_from_plux(fmodel.Xtree[b - 1])
        link_H_body = body_H_link[b].inverse()
        rest = body_H_link[p].inverse() @ pbody_H_J0 @ body_H_link[b]
        axis = link_H_body.rotation[:, k]
        origin = link_H_body.translation
        joints.append(
            Joint(jname, kind, names[p], names[b], rest, axis=axis.copy(), axis_origin=origin.copy())
        )
    frames = []
    link_names = set(names.values())
    for n, (b, pose) in fmodel.placements.items():
        if n in link_names:
            continue
        if floating and 0 < b < 6:
            raise ModelError(f"Featherstone model {fmodel.name!r}: placement {n!r} on placeholder body {b}")
        bb = base_body if (floating and b == 0) else b
        frames.append(Frame(n, names[bb], body_H_link[bb].inverse() @ pose))
    real_joints = tuple(j.name for j in joints)
    dof_names = fmodel.dof_names if set(fmodel.dof_names) == set(real_joints) else real_joints
    return Model(
        fmodel.name, tuple(links), tuple(joints), tuple(frames), names[base_body], dof_names, floating
    )
