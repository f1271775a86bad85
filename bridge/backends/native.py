"""The protocol of a library's native-loader comparison: its own file loader next to bridge's model.

Each library that has one exposes an object ``NATIVE`` in ``bridge.backends.<lib>.native`` (named by
its registry record, ``Library.native``), a :class:`NativeLoader`. Its :meth:`~NativeLoader.load`
reads the file with the library's own loader and returns a :class:`Loaded`: a :class:`Native` (the
library's M, h, g at any state of bridge's model, in bridge's coordinates) and the :class:`Cause`\\ s
it recognises (what its loader does differently from the URDF), each with the numbers with that
cause removed. The generic comparison (:mod:`bridge.validation.native`) draws the states, measures
the errors and turns causes into findings; a backend never measures anything itself.

Coordinates of every :class:`Native`: the state's representation (BODY, INERTIAL or MIXED, base
velocity linear first), bridge's base link and DOF order (``model.dof_names``); M (nv, nv), h and g
(nv,), g the forces at zero velocity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from bridge.conventions.state import State
from bridge.model.model import Model

__all__ = [
    "QUANTITIES",
    "REFUSED",
    "Cause",
    "Loaded",
    "Native",
    "NativeLoader",
    "Source",
    "dof_order_cause",
    "loader_for",
]

#: what a native comparison compares
QUANTITIES = ("mass_matrix", "bias_forces", "gravity_forces")


class Native(Protocol):
    """A library's numbers for one file (or a variant of them, with a cause removed)."""

    #: bridge's model these numbers are compared with (the states are drawn for it)
    model: Model
    #: for a fixed-base ``model``: world_H_base (4, 4) where the library puts the base; else None
    base_pose: np.ndarray | None

    def dynamics(self, state: State) -> dict[str, np.ndarray]:
        """M, h, g (:data:`QUANTITIES`) at one state of ``model``, in bridge's coordinates."""
        ...


class _Refused:
    """The numbers of a variant the library refuses to build (no error can be measured)."""

    def __repr__(self) -> str:
        return "REFUSED"


#: a variant the library's loader or compiler refuses (its errors are None)
REFUSED = _Refused()


@dataclass(frozen=True)
class Cause:
    """One difference a library's loader makes, before the errors are measured.

    ``without``: the numbers with this cause removed (None: the cause does not change the
    dynamics; :data:`REFUSED`: the library refuses that variant). ``with_``: the numbers that show
    the cause (default: as loaded). ``quantities``: those the errors are measured on. ``drops``:
    links whose inertia this loader drops; the other side of a comparison between two loaders
    removes them (its :attr:`Loaded.drop`) for the numbers without the cause.
    """

    cause: str
    subjects: tuple[str, ...]
    message: str
    without: Native | _Refused | None = None
    with_: Native | None = None
    quantities: tuple[str, ...] = QUANTITIES
    drops: tuple[str, ...] = ()

    @property
    def measured(self) -> bool:
        """Whether the finding carries the errors with and without the cause."""
        return self.without is not None or bool(self.drops)


def dof_order_cause(cause: str, model: Model, order: Sequence[str], message: str) -> list[Cause]:
    """``[Cause]`` naming the joints whose place differs between ``model.dof_names`` and a library's
    DOF ``order`` (none when they agree)."""
    if tuple(order) == tuple(model.dof_names):
        return []
    return [Cause(cause, tuple(d for d, e in zip(model.dof_names, order, strict=False) if d != e), message)]


@dataclass(frozen=True)
class Source:
    """The file, bridge's reading of it (``load_urdf`` defaults for a URDF, the registry's reader
    for another kind) with the warnings it gave, and the file's kind ("urdf", "mjcf", ...: the
    registry's :func:`~bridge.backends.registry.file_kind`)."""

    path: str
    model: Model
    warnings: tuple[tuple[type, str], ...] = ()
    kind: str = "urdf"


@dataclass
class Loaded:
    """What a library's own loader made of a file.

    ``native`` is None when the loader refuses the file (a cause says why). ``residual``: the
    numbers with every cause removed (None: as loaded). ``drop(links)``: the numbers with the
    inertias of ``links`` removed (for the other side's ``drops``). ``bodies``: how many bodies
    (links) its model has; ``who``: the library's name in messages.
    """

    native: Native | None
    causes: list[Cause] = field(default_factory=list)
    residual: Native | _Refused | None = None
    drop: Callable[[Sequence[str]], Native] | None = None
    bodies: int = 0
    who: str = ""


class NativeLoader(Protocol):
    """A library's native-loader comparison (``NATIVE`` in its backend package)."""

    #: the engine name in reports, e.g. "drake URDF parser"
    label: str
    #: how its own findings are named: f"{prefix}unexplained", ...
    prefix: str
    #: None: compared with bridge's model; else the registered library whose own loader is the reference
    against: str | None
    #: "default" (whenever installed), "on request" (its engine named), "reference" (only as ``against``)
    joins: Literal["default", "on request", "reference"]
    #: optional: the file kinds on which a loader joining "on request" joins by default (MuJoCo's
    #: compiler on MJCF files, which no other loader reads); read with ``getattr(loader, "default_on", ())``
    default_on: tuple[str, ...]

    # optional: ``for_kind(kind) -> NativeLoader``, the loader (and label) for a file of another kind
    # than URDF (MuJoCo: its MJCF compiler); read with :func:`loader_for`
    #: the finding's message when the numbers differ with every cause removed
    unexplained: str

    def load(self, source: Source, reference: Loaded | None = None) -> Loaded:
        """Read ``source.path`` with the library's own loader (``reference``: what the loader it is
        compared with made of the file, when ``against`` is set)."""
        ...


def loader_for(loader: NativeLoader, kind: str) -> NativeLoader:
    """``loader``'s loader for a file of ``kind`` (its optional ``for_kind``; itself without one)."""
    for_kind = getattr(loader, "for_kind", None)
    return loader if for_kind is None else for_kind(kind)
