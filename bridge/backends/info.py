"""The contract of a library's ``bridge info`` column.

Each library's backend package has an ``info.py`` whose ``info_column(model, path=None)`` (named by
the ``info`` field of its :class:`~bridge.backends.registry.Library` record) returns a
:class:`LibraryInfo`: how the library counts and orders the model as bridge converts it, and, given
the model's URDF file, how the library's own URDF loader reads that file. ``bridge info`` builds its
tables from these, one column per installed library, without knowing any library by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bridge.errors import InvalidValueError

__all__ = ["ROWS", "InfoColumn", "LibraryInfo", "counts", "loader_order", "velocity_offsets"]

#: the rows of the counts tables, top to bottom; every column gives each of them
ROWS: tuple[str, ...] = ("links / bodies", "joints", "fixed joints", "DOFs", "frames", "nq", "nv")


@dataclass(frozen=True)
class InfoColumn:
    """One library's view of a model: a column of the counts table and of the DOF-order table.

    Attributes:
        name: the column header ("pinocchio", "pinocchio URDF loader", ...).
        counts: row of :data:`ROWS` -> the library's count (bodies, joints, DOFs, frames, nq, nv).
        order: (n,) for each DOF of the model, in the model's ``dof_names`` order, its 0-based
            position in the library's joint-space vector (base entries left out); -1 where the
            library has no such joint.
        order_meaning: what ``order`` indexes, for the table's caption (e.g. "pinocchio's v without
            the 6 free-flyer entries (idx_v - 6)").
    """

    name: str
    counts: Mapping[str, int]
    order: tuple[int, ...]
    order_meaning: str = ""

    def __post_init__(self) -> None:
        if tuple(self.counts) != ROWS:
            raise InvalidValueError(
                f"info column {self.name!r}: counts must give the rows {ROWS} in order, "
                f"not {tuple(self.counts)}"
            )
        object.__setattr__(self, "counts", {row: int(v) for row, v in self.counts.items()})
        object.__setattr__(self, "order", tuple(int(i) for i in self.order))


@dataclass(frozen=True)
class LibraryInfo:
    """What a library's ``info_column`` returns.

    Attributes:
        column: the model as bridge converts it for the library.
        loader: the file as the library's own URDF loader reads it (None: no path given, no loader,
            or the loader refuses the file, which a note then says).
        notes: library specifics, one sentence each (how it counts bodies, joints, frames; its
            layout; why its loader refused the file). Plain text: the command line escapes markup.
    """

    column: InfoColumn
    loader: InfoColumn | None = None
    notes: tuple[str, ...] = ()


def counts(
    bodies: int, joints: int, fixed_joints: int, dofs: int, frames: int, nq: int, nv: int
) -> dict[str, int]:
    """A column's counts by row of :data:`ROWS` (DOFs: joint DOFs, base left out; nq, nv: with the base)."""
    return dict(zip(ROWS, (bodies, joints, fixed_joints, dofs, frames, nq, nv), strict=True))


def loader_order(dof_names: Sequence[str], offsets: Mapping[str, int]) -> tuple[int, ...]:
    """(n,) the offset of each of ``dof_names`` in a loader's joint-space vector (-1 if absent)."""
    return tuple(int(offsets.get(name, -1)) for name in dof_names)


def velocity_offsets(model: object, perm: Sequence[int] | None) -> tuple[int, ...]:
    """(n,) the offset of each DOF joint of ``model`` (``dof_names`` order) in a joint-space velocity
    (base entries left out) whose joints are ``model``'s DOF joints permuted by ``perm``
    (``native[i] = model[perm[i]]``, None: the model's order), each taking its ``nv`` entries: the
    position of a joint's first entry (a ball's three, a free joint's six)."""
    widths = [k.nv for k in model.coordinates.kinds]
    order = range(len(widths)) if perm is None else [int(k) for k in perm]
    out = [0] * len(widths)
    at = 0
    for k in order:
        out[k] = at
        at += widths[k]
    return tuple(out)
