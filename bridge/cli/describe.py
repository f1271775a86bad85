"""How each registered library sees a model: counts and DOF orders (what ``bridge info`` shows).

One column for bridge itself and one per installed library, each built by the library's own
``info_column`` (named by the ``info`` field of its registry record, in its backend package; the
contract is :class:`bridge.backends.info.LibraryInfo`). With the model's URDF file, a second set of
columns shows what the libraries' own URDF loaders make of the same file. Nothing here names a
library: adding a record with an ``info`` function adds its column.

DOF orders are 0-based positions of each joint in each library's joint-space vector (bridge's ``s``,
and for each library what its column's ``order_meaning`` says).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bridge.backends.info import InfoColumn, LibraryInfo
    from bridge.model.model import Model

__all__ = ["describe"]


def _bridge_column(model: Model) -> InfoColumn:
    """bridge's own column: the neutral model's links, joints, frames and DOFs (order: ``s``)."""
    from bridge.backends.info import InfoColumn, counts

    n_fixed = sum(1 for j in model.joints if not j.movable)
    nq = model.n_dofs + (7 if model.floating else 0)
    rows = counts(
        len(model.links), len(model.joints), n_fixed, model.n_dofs, len(model.frame_names), nq, model.nv
    )
    return InfoColumn("bridge", rows, tuple(range(model.n_dofs)), "bridge's s")


def _library_infos(model: Model, path: str | None, notes: list[str]) -> list[LibraryInfo]:
    """Every installed library's :class:`LibraryInfo`, in registry order (a library that refuses
    the model gets a note instead of a column)."""
    from bridge.backends.registry import LIBRARIES
    from bridge.errors import BridgeError

    infos = []
    for name, record in LIBRARIES.items():
        if record.info is None or not record.installed:
            continue
        try:
            infos.append(record.load("info")(model, path))
        except BridgeError as exc:
            notes.append(f"{name} has no column: {' '.join(str(exc).split())}")
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


def describe(model: Model, urdf_path: str | Path | None = None) -> dict:
    """Counts and DOF orders of ``model`` in bridge and in every installed registered library.

    Returns ``{"columns", "counts", "orders", "order_meanings", "notes", "loaders"}``: ``columns``
    (headers), ``counts`` (row -> one value per column), ``orders`` (column -> (n,) position of each
    DOF of ``model.dof_names``) and ``order_meanings`` for the model as bridge converts it; with
    ``urdf_path``, ``loaders`` describes what the libraries' own URDF loaders make of the same file
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
    infos = _library_infos(model, path, notes)
    notes[:0] = [note for info in infos for note in info.notes]
    loaders = [info.loader for info in infos if info.loader is not None]
    notes += _loader_permutations(loaders)
    described = _table([_bridge_column(model), *(info.column for info in infos)])
    described["notes"] = notes
    described["loaders"] = _table(loaders) if path is not None and loaders else None
    return described
