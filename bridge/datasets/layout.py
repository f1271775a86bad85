"""Where each coordinate of a state sits in one convention's arrays, what it means and its name.

A :class:`Layout` of a model in a convention lists the *owners* of coordinates: the floating base
(named :data:`BASE`, floating models only) first, then each DOF joint in the convention's joint
order. Each owner has its configuration entries, in the order the convention stores them, each
with its meaning (:data:`MEANINGS`: a position component, a quaternion component, an angle, its
cosine or sine, a roll-pitch-yaw angle, a one-coordinate joint's value), and its number of velocity
entries. The layout is read from the convention's declaration
(:class:`~bridge.conventions.declaration.Configuration` and its joint order), exactly as
:func:`~bridge.conventions.native_state.to_native_state` lays out ``q`` and ``v``:

* the base: position and unit quaternion (in the declared component order and place), six velocity
  entries in the declared order of their halves;
* a revolute or prismatic joint: its value; a continuous joint: its angle, or ``(cos, sin)``;
* a planar joint: ``(x, y, angle)``, or ``(x, y, cos, sin)``; three velocity entries;
* a ball joint: a unit quaternion, or roll, pitch, yaw; three velocity entries;
* a free joint: laid out as the base; six velocity entries.

A neutral representation ("body", "inertial", "mixed") has no configuration of its own: its layout
is bridge's :class:`~bridge.conventions.state.State` (position, quaternion ``(w, x, y, z)``, the
joints' neutral coordinates in the model's DOF order).

Column names (the files' headers, :mod:`bridge.datasets.columns`) are ``<owner>/<field><k>``:
``base/q0`` ... ``base/q6``, ``l_knee/q0``, ``l_knee/v0``; ``field`` is one of :data:`FIELDS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from bridge._cache import ModelCache
from bridge.conventions.declaration import BallCoordinates, Configuration, ContinuousJoint, QuaternionOrder
from bridge.conventions.registry import convention as _convention
from bridge.errors import BridgeError, DatasetError
from bridge.model.joints import JointKind
from bridge.model.model import Model

__all__ = ["BASE", "FIELDS", "MEANINGS", "Layout", "Owner", "layout"]

#: the owner name of the floating base's columns
BASE = "base"
#: the fields of a state, by column prefix: the configuration, then the velocity-sized ones
FIELDS = {"q": "configuration", "v": "velocity", "a": "acceleration", "tau": "generalized force"}
#: what a configuration entry can mean
MEANINGS = (
    "px", "py", "pz", "qw", "qx", "qy", "qz", "value", "angle", "cos", "sin", "roll", "pitch", "yaw",
)  # fmt: skip

_QUATERNION = {QuaternionOrder.WXYZ: ("qw", "qx", "qy", "qz"), QuaternionOrder.XYZW: ("qx", "qy", "qz", "qw")}
_POSITION = ("px", "py", "pz")


@dataclass(frozen=True)
class Owner:
    """The coordinates of the base or of one DOF joint in a layout.

    Attributes:
        name: :data:`BASE` or the joint's name.
        kind: the joint's kind (the base: ``JointKind.FREE``).
        q: the meaning of each configuration entry, in the convention's order.
        nv: the number of velocity entries.
        dof: the joint's position among the model's DOF joints (None for the base).
    """

    name: str
    kind: JointKind
    q: tuple[str, ...]
    nv: int
    dof: int | None

    def columns(self, field: str) -> tuple[str, ...]:
        """The column names of this owner's entries of ``field`` (``q``, ``v``, ``a`` or ``tau``)."""
        width = len(self.q) if field == "q" else self.nv
        return tuple(f"{self.name}/{field}{k}" for k in range(width))


def _pose(config: Configuration) -> tuple[str, ...]:
    quat = _QUATERNION[config.quaternion]
    return (*quat, *_POSITION) if config.quaternion_first else (*_POSITION, *quat)


def _meanings(kind: JointKind, config: Configuration) -> tuple[str, ...]:
    """A joint's configuration entries as ``config`` stores them (native_wide's widths)."""
    angle = ("cos", "sin") if config.continuous is ContinuousJoint.COS_SIN else ("angle",)
    if kind is JointKind.CONTINUOUS:
        return angle
    if kind is JointKind.PLANAR:
        return ("px", "py", *angle)
    if kind is JointKind.BALL:
        if config.ball is BallCoordinates.RPY:
            return ("roll", "pitch", "yaw")
        return _QUATERNION[config.quaternion]
    if kind is JointKind.FREE:
        return _pose(config)
    return ("value",)


@dataclass(frozen=True, eq=False)
class Layout:
    """A model's coordinates in one convention (module docstring).

    Attributes:
        model: the model's name.
        convention: the convention's name.
        owners: the base (floating models) and the DOF joints, in the convention's order.
        configuration: the convention's declared configuration (the neutral one for a neutral
            representation).
    """

    model: str
    convention: str
    owners: tuple[Owner, ...]
    configuration: Configuration

    @property
    def floating(self) -> bool:
        return bool(self.owners) and self.owners[0].name == BASE and self.owners[0].dof is None

    @cached_property
    def nq(self) -> int:
        return sum(len(o.q) for o in self.owners)

    @cached_property
    def nv(self) -> int:
        return sum(o.nv for o in self.owners)

    def width(self, field: str) -> int:
        """The number of entries of ``field`` (nq for ``q``, nv otherwise)."""
        return self.nq if field == "q" else self.nv

    def columns(self, field: str) -> tuple[str, ...]:
        """Every column name of ``field``, in the convention's order."""
        if field not in FIELDS:
            raise DatasetError(f"unknown field {field!r}: one of {', '.join(FIELDS)}")
        return tuple(name for o in self.owners for name in o.columns(field))

    @cached_property
    def q_offsets(self) -> tuple[int, ...]:
        """Each owner's first configuration entry (and nq at the end)."""
        out, at = [], 0
        for o in self.owners:
            out.append(at)
            at += len(o.q)
        return (*out, at)

    @cached_property
    def v_offsets(self) -> tuple[int, ...]:
        """Each owner's first velocity entry (and nv at the end)."""
        out, at = [], 0
        for o in self.owners:
            out.append(at)
            at += o.nv
        return (*out, at)

    @cached_property
    def index(self) -> dict[str, int]:
        """Owner name -> its position in :attr:`owners`."""
        return {o.name: i for i, o in enumerate(self.owners)}


_CACHE = ModelCache()


def layout(model: Model, convention: object) -> Layout:
    """The :class:`Layout` of ``model`` in ``convention`` (a name or a Convention; cached per model
    and convention). Raises :class:`~bridge.errors.DatasetError` when a DOF joint is named like the
    base's columns."""
    conv = _convention(convention)
    per_model = _CACHE.of(model)
    found = per_model.get(conv.name)
    if found is not None:
        return found
    config = conv.configuration if conv.configuration is not None else Configuration()
    coords = model.coordinates
    if model.floating and BASE in coords.index:
        raise DatasetError(
            f"model {model.name!r}: a joint is named {BASE!r}, like the floating base's columns "
            f"({BASE}/q0, ...); rename the joint"
        )
    try:
        perm = conv.permutation(model)
    except BridgeError:
        raise
    except Exception as exc:  # a library that cannot build the model (its own exception type)
        raise DatasetError(
            f"convention {conv.name!r} cannot lay out model {model.name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    order = range(len(coords.names)) if perm is None else perm.tolist()
    owners = [Owner(BASE, JointKind.FREE, _pose(config), 6, None)] if model.floating else []
    for k in order:
        kind = coords.kinds[k]
        owners.append(Owner(coords.names[k], kind, _meanings(kind, config), kind.nv, k))
    found = Layout(model.name, conv.name, tuple(owners), config)
    return per_model.setdefault(conv.name, found)
