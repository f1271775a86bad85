"""iDynTree's ``bridge info`` column: how iDynTree counts and orders a model.

iDynTree counts only real links and joints (fixed ones included), has no joint for the floating
base, and may serialize the DOFs in another order than bridge (its joint serialization).
"""

from __future__ import annotations

import idyntree.bindings as idyn

from bridge._files import library_path
from bridge.backends.idyntree.model import to_idyntree
from bridge.backends.info import InfoColumn, LibraryInfo, counts, loader_order
from bridge.model.model import Model

__all__ = ["info_column"]

NAME = "idyntree"


def _counts(im, n_fixed: int) -> dict[str, int]:
    """iDynTree's counts of an ``iDynTree.Model`` (nq and nv with a 7/6-coordinate floating base)."""
    n_dofs = im.getNrOfDOFs()
    n_q = im.getNrOfPosCoords() + 7
    return counts(im.getNrOfLinks(), im.getNrOfJoints(), n_fixed, n_dofs, im.getNrOfFrames(), n_q, n_dofs + 6)


def _converted(model: Model) -> InfoColumn:
    """The column of ``to_idyntree(model)``."""
    im = to_idyntree(model)
    n_fixed = sum(1 for j in model.joints if not j.movable)
    order = tuple(im.getJointIndex(name) for name in model.dof_names)
    return InfoColumn(NAME, _counts(im, n_fixed), order, "idyntree's joint positions")


def _loader(model: Model, path: str) -> tuple[InfoColumn | None, tuple[str, ...]]:
    """The column of iDynTree's ``ModelLoader`` on ``path``, or None and a note if it refuses it."""
    loader = idyn.ModelLoader()
    if not loader.loadModelFromFile(path):
        return None, ("idyntree's URDF loader refuses the file",)
    im = loader.model()
    n_joints = im.getNrOfJoints()
    n_fixed = n_joints - sum(1 for i in range(n_joints) if im.getJoint(i).getNrOfDOFs())
    offsets = {
        n: im.getJoint(im.getJointIndex(n)).getDOFsOffset()
        for n in model.dof_names
        if im.getJointIndex(n) >= 0
    }
    order = loader_order(model.dof_names, offsets)
    return InfoColumn("idyntree URDF loader", _counts(im, n_fixed), order), ()


def info_column(model: Model, path: str | None = None) -> LibraryInfo:
    """iDynTree's view of ``model`` (and of its URDF file ``path`` through its own loader)."""
    loader, refused = _loader(model, library_path(path)) if path is not None else (None, ())
    return LibraryInfo(_converted(model), loader, refused)
