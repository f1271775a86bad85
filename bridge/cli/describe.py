"""How each registered library sees a model: counts and DOF orders (what ``bridge info`` shows).

One column for bridge itself and one per installed library, each built by the library's own
``info_column`` (named by the ``info`` field of its registry record, in its backend package; the
contract is :class:`bridge.backends.info.LibraryInfo`). With the model's URDF file, a second set of
columns shows what the libraries' own URDF loaders make of the same file. Nothing here names a
library: adding a record with an ``info`` function adds its column.

DOF orders are 0-based positions of each joint in each library's joint-space vector (bridge's ``s``,
and for each library what its column's ``order_meaning`` says). The conventions table is read from
each library's declared :class:`~bridge.conventions.convention.Convention` (its ``BaseVelocity`` and
``Configuration``), not written by hand. A library whose own loader does not read the file's kind
(``Library.loads``: Pinocchio's and iDynTree's URDF loaders on an MJCF file) has no loader column,
with a note.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.backends.info import InfoColumn, LibraryInfo
    from bridge.model.model import Model

__all__ = ["CONVENTION_ROWS", "describe"]


def _bridge_column(model: Model) -> InfoColumn:
    """bridge's own column: the neutral model's links, joints, frames and DOFs (order: ``s``)."""
    from bridge.backends.info import InfoColumn, counts, velocity_offsets

    n_fixed = sum(1 for j in model.joints if not j.movable)
    nq = model.n_positions + (7 if model.floating else 0)
    rows = counts(
        len(model.links), len(model.joints), n_fixed, model.n_dofs, len(model.frame_names), nq, model.nv
    )
    return InfoColumn("bridge", rows, velocity_offsets(model, None), "bridge's s_dot")


def _widths(model: Model) -> list[str]:
    """``"kind nq/nv"`` of each DOF joint (``dof_names`` order)."""
    return [f"{k.value} {k.nq}/{k.nv}" for k in model.coordinates.kinds]


def _library_infos(model: Model, path: str | None, notes: list[str]) -> list[LibraryInfo]:
    """Every installed library's :class:`LibraryInfo`, in registry order (a library that refuses
    the model gets a note instead of a column; the file goes only to the libraries whose own loader
    reads its kind, the others get a note)."""
    import warnings

    from bridge.backends.registry import LIBRARIES
    from bridge.errors import BridgeError, BridgeWarning
    from bridge.model.formats import input_kind

    kind = input_kind(path) if path is not None else None
    infos = []
    for name, record in LIBRARIES.items():
        if record.info is None or not record.installed:
            continue
        own = path if kind in record.loads else None
        if path is not None and own is None and record.loads:
            reads = " and ".join(k.upper() for k in record.loads)
            notes.append(f"{name}'s own loader reads {reads}, not {kind.upper()}: no loader column")
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", BridgeWarning)
                infos.append(record.load("info")(model, own))
        except BridgeError as exc:
            notes.append(f"{name} has no column: {' '.join(str(exc).split())}")
        # (what a column's conversion warns about is a note of that library, not a Python warning
        # printed with a source line; the libraries' own warnings are their business)
        notes += [f"{name}: {w.message}" for w in caught if issubclass(w.category, BridgeWarning)]
    return infos


def _table(columns: list[InfoColumn]) -> dict:
    """``{"columns", "counts", "orders", "order_meanings"}`` of some columns (counts by row)."""
    from bridge.backends.info import ROWS

    return {
        "columns": [c.name for c in columns],
        "counts": {row: [c.counts[row] for c in columns] for row in ROWS},
        "orders": {c.name: list(c.order) for c in columns},
        "order_meanings": [c.order_meaning for c in columns if c.order_meaning],
    }


def _loader_permutations(loaders: list[InfoColumn]) -> list[str]:
    """Notes relating the first loader's DOF order to each other loader's (where both have every DOF)."""
    import numpy as np

    complete = [c for c in loaders if c.order and min(c.order) >= 0]
    notes = []
    for other in complete[1:]:
        perm = np.empty(len(other.order), dtype=int)
        perm[list(complete[0].order)] = other.order
        notes.append(
            f"from the libraries' own loaders: the i-th joint velocity of '{complete[0].name}' is the "
            f"P[i]-th of '{other.name}' (base entries left out) with P = {perm.tolist()}"
        )
    return notes


#: the rows of the conventions table
CONVENTION_ROWS = (
    "base velocity",
    "linear half",
    "angular half",
    "q layout",
    "quaternion",
    "continuous joint",
)

_POINTS = {"base_origin": "base origin", "world_origin": "world origin (spatial)"}


def _convention_cells(conv: Any) -> list[str]:
    """The cells of one declared Convention, in :data:`CONVENTION_ROWS` order."""
    v, c = conv.velocity, conv.configuration
    first = "angular first" if v.ordering.value.startswith("angular") else "linear first"
    halves = [
        f"[{first.split()[0][:3]}; {'lin' if first.startswith('ang') else 'ang'}] ({first})",
        f"{_POINTS.get(v.point.value, v.point.value)}, {v.linear_axes.value} axes",
        f"{v.angular_axes.value} axes",
    ]
    if c is None:
        return [*halves, "-", "-", "-"]
    quat = ",".join(c.quaternion.value)
    layout = "[quat; pos; joints]" if c.quaternion_first else "[pos; quat; joints]"
    return [*halves, layout, quat, "cos, sin" if c.continuous.value == "cos_sin" else "angle"]


def _conventions(notes: list[str]) -> dict:
    """``{"columns", "rows"}``: each installed library's declared conventions (registry order);
    a library declaring none gets a note."""
    from bridge.backends.registry import LIBRARIES, resolve

    columns: list[str] = []
    rows: dict[str, list[str]] = {row: [] for row in CONVENTION_ROWS}
    for name, record in LIBRARIES.items():
        if record.info is None or not record.installed:
            continue
        if not record.conventions:
            notes.append(f"{name} declares no convention of its own: it takes bridge's representations")
        for conv_name, target in record.conventions.items():
            columns.append(conv_name)
            for row, cell in zip(CONVENTION_ROWS, _convention_cells(resolve(target)), strict=True):
                rows[row].append(cell)
    return {"columns": columns, "rows": rows}


def describe(model: Model, urdf_path: str | Path | None = None) -> dict:
    """Counts and DOF orders of ``model`` in bridge and in every installed registered library.

    Returns ``{"columns", "counts", "orders", "order_meanings", "notes", "loaders", "conventions",
    "widths"}``: ``widths`` (None when every joint has one coordinate) ``"kind nq/nv"`` of each DOF
    joint;
    ``conventions`` (``{"columns", "rows"}``, row of :data:`CONVENTION_ROWS` -> one text per
    column) the libraries' declared velocity and configuration layouts; ``columns``
    (headers), ``counts`` (row -> one value per column), ``orders`` (column -> (n,) position of each
    DOF of ``model.dof_names``) and ``order_meanings`` for the model as bridge converts it; with
    ``urdf_path`` (a URDF or MJCF file), ``loaders`` describes what the libraries' own loaders make
    of the same file
    (the same keys; None when no loader takes the file, with notes saying why). A coupled model
    (mimic joints) is described through its full model (every mimic joint a DOF), with a note.
    """
    notes: list[str] = []
    full = getattr(model, "full", None)
    if full is not None:
        notes.append(
            f"{len(model.mimics)} mimic joints follow their masters ({model.n_dofs} independent DOFs); "
            "the tables show the full model (mimic joints as DOFs)"
        )
        model = full
    path = None if urdf_path is None else str(urdf_path)
    if not model.single_coordinate:
        notes.append(
            "joints of several coordinates (the 'kind nq/nv' column): each takes nq entries of s and nv "
            "of s_dot (a ball 4/3: a unit quaternion w, x, y, z; a free joint 7/6; a planar joint 3/3); "
            "the orders give the position of each joint's first velocity entry"
        )
    infos = _library_infos(model, path, notes)
    notes[:0] = [note for info in infos for note in info.notes]
    loaders = [info.loader for info in infos if info.loader is not None]
    notes += _loader_permutations(loaders)
    described = _table([_bridge_column(model), *(info.column for info in infos)])
    described["conventions"] = _conventions(notes)
    described["widths"] = None if model.single_coordinate else _widths(model)
    described["notes"] = notes
    described["loaders"] = _table(loaders) if path is not None and loaders else None
    return described
