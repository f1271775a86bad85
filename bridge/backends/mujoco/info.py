"""MuJoCo's ``bridge info`` column: how MuJoCo counts and orders a model.

``to_mujoco`` makes one MuJoCo body per rigid group of links (links joined by fixed joints share
the body of the group's root link; the other links and the extra frames become sites), counts the
world body, gives a floating base a free joint (``qpos = [position; quaternion w, x, y, z]``,
``qvel = [linear velocity in world; angular velocity in body]``) and orders the DOFs in body order
(depth first from the base).
"""

from __future__ import annotations

import numpy as np

from bridge.backends.info import InfoColumn, LibraryInfo, counts
from bridge.backends.mujoco.model import to_mujoco
from bridge.backends.mujoco.state import mujoco_dof_permutation
from bridge.model.model import Model

__all__ = ["info_column"]

NAME = "mujoco"

_NOTE = (
    "mujoco counts the 'world' body and one body per group of links joined by fixed joints (the other "
    "links and the extra frames are sites, counted as frames with the bodies), a chain of massless "
    "links between movable joints being one body with several joints; a floating base is a "
    "free joint, qpos = [position; quaternion w, x, y, z], qvel = [linear velocity in world; angular "
    "velocity in body]; DOFs in body order (depth first)"
)


def info_column(model: Model, path: str | None = None) -> LibraryInfo:
    """MuJoCo's view of ``model`` as ``to_mujoco`` builds it (its own URDF compiler is compared by
    ``bridge check --native``, so ``path`` is not read here)."""
    m = to_mujoco(model)
    n_fb = 6 if model.floating else 0
    rows = counts(m.nbody, m.njnt, 0, m.nv - n_fb, m.nbody + m.nsite, m.nq, m.nv)
    # qvel[6:] = s_dot[perm] (floating base): the position of each neutral DOF in MuJoCo's qvel
    order = tuple(np.argsort(mujoco_dof_permutation(model)).tolist())
    column = InfoColumn(NAME, rows, order, "mujoco's qvel without the 6 free-joint entries")
    return LibraryInfo(column, None, (_NOTE,))
