"""Featherstone's ``bridge info`` column: how bridge's own spatial_v2-style algorithms number a model.

Regular numbering, one body per movable joint (fixed joints merged into their parent body, the
merged links kept as placements); a floating base is the floatbase layout: bodies 1-6 are the free
base's six 1-DOF joints (1-5 massless) and the real joints start at body 7.
"""

from __future__ import annotations

import numpy as np

from bridge.backends.featherstone.model import to_featherstone
from bridge.backends.info import InfoColumn, LibraryInfo, counts
from bridge.model.model import Model

__all__ = ["info_column"]

NAME = "featherstone"


def _note(model: Model) -> str:
    layout = (
        "; floatbase layout: bodies 1-6 are the free base (5 massless), real joints from body 7, "
        "xfb = [quaternion w,x,y,z; position; angular, linear velocity in base coordinates]"
        if model.floating
        else "; the fixed base is body 0"
    )
    return (
        "featherstone (spatial_v2): regular numbering, one body per movable joint, axes aligned to "
        "Rx/Ry/Rz/Px/Py/Pz by the choice of joint frames" + layout
    )


def info_column(model: Model, path: str | None = None) -> LibraryInfo:
    """Featherstone's view of ``model`` (NB bodies, one joint each; it has no file loader, so
    ``path`` is not read)."""
    fm = to_featherstone(model)
    n_fb = 6 if model.floating else 0
    rows = counts(fm.NB, fm.NB, 0, fm.NB - n_fb, len(fm.placements), fm.NB, fm.NB)
    # q[k] = s[dof_perm[k]]: the position of each neutral DOF in Featherstone's q (real joints)
    order = tuple(np.argsort(np.asarray(fm.dof_perm)).tolist())
    column = InfoColumn(NAME, rows, order, "featherstone's q (real joints)")
    return LibraryInfo(column, None, (_note(model),))
