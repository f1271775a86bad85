"""Newton's ``bridge info`` column: how Newton counts and orders ``to_newton(model)``.

Newton counts every link as a body (fixed joints stay fixed joints, nothing merged), adds a free
joint (floating base) or a fixed joint (fixed base) from the world to the base, keeps no extra
frames, and orders ``joint_qd`` as its articulation's joints: the base's six entries (COM velocity,
angular velocity, world axes), then the joints depth first.
"""

from __future__ import annotations

import numpy as np

from bridge.backends.info import InfoColumn, LibraryInfo, counts, velocity_offsets
from bridge.backends.newton.model import require_newton, to_newton
from bridge.backends.newton.state import NEWTON
from bridge.model.model import Model

__all__ = ["info_column"]

NAME = "newton"


def info_column(model: Model, path: str | None = None) -> LibraryInfo:
    """Newton's view of ``model`` (Newton's own URDF importer is not compared: ``path`` unused)."""
    newton, _ = require_newton()
    nm = to_newton(model)
    types = nm.joint_type.numpy()
    fixed = int(np.sum(types == int(newton.JointType.FIXED)))
    nb = 6 if model.floating else 0
    nq, nv = nm.joint_coord_count, nm.joint_dof_count
    column_counts = counts(nm.body_count, nm.joint_count, fixed, nv - nb, 0, nq, nv)
    order = velocity_offsets(model, NEWTON.permutation(model))
    meaning = "newton's joint_qd without the 6 free-joint entries"
    column = InfoColumn(NAME, column_counts, order, meaning)
    note = (
        "newton counts every link as a body and every joint, plus a free joint (floating base) or a "
        "fixed joint (fixed base) from the world to the base; no extra frames; joint_q = (base origin, "
        "quaternion x,y,z,w, joints), joint_qd = (velocity of the base's centre of mass, angular "
        "velocity, both in world axes, then the joints depth first); float32"
    )
    return LibraryInfo(column, None, (note,))
