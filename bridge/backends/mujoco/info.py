"""MuJoCo's ``bridge info`` column: how MuJoCo counts and orders a model.

``to_mujoco`` makes one MuJoCo body per rigid group of links (links joined by fixed joints share
the body of the group's root link; the other links and the extra frames become sites), counts the
world body, gives a floating base a free joint (``qpos = [position; quaternion w, x, y, z]``,
``qvel = [linear velocity in world; angular velocity in body]``) and orders the DOFs in body order
(depth first from the base). Given the model's file, a second column shows what MuJoCo's own
compiler makes of it (an MJCF file as MuJoCo loads it; a URDF through its URDF compiler, mesh geoms
removed, the root welded to the world).
"""

from __future__ import annotations

import numpy as np

from bridge._files import library_path
from bridge.backends.info import InfoColumn, LibraryInfo, counts, loader_order
from bridge.backends.mujoco.messages import captured_warnings
from bridge.backends.mujoco.model import is_mjcf, require_mujoco, to_mujoco
from bridge.backends.mujoco.state import mujoco_dof_permutation
from bridge.model.model import Model

__all__ = ["info_column"]

NAME = "mujoco"

_NOTE = (
    "mujoco counts the 'world' body and one body per group of links joined by fixed joints (the other "
    "links and the extra frames are sites, counted as frames with the bodies), a chain of massless "
    "links between movable joints being one body with several joints; a floating base is a "
    "free joint, qpos = [position; quaternion w, x, y, z], qvel = [linear velocity in world; angular "
    "velocity in body]; DOFs in body order (depth first); the 'mujoco' column of the loaders' tables "
    "is MuJoCo's own compiler on the file"
)


def _counts(m: object, n_free: int) -> dict[str, int]:
    """MuJoCo's counts of a compiled model: bodies with the world, joints (no fixed ones: welded
    bodies have no joint), DOFs without the free joints', frames as bodies and sites."""
    return counts(m.nbody, m.njnt, 0, m.nv - 6 * n_free, m.nbody + m.nsite, m.nq, m.nv)


def _compiled(path: str) -> object:
    """MuJoCo's compile of the file (ValueError if refused)."""
    mujoco = require_mujoco()
    if is_mjcf(path):
        with captured_warnings(mujoco):  # load_mjcf warned already
            return mujoco.MjModel.from_xml_path(library_path(path))
    from bridge.backends.mujoco.native import load_urdf_spec

    spec, _ = load_urdf_spec(path)
    return spec.compile()


def _loader(model: Model, path: str) -> tuple[InfoColumn | None, tuple[str, ...]]:
    """The column of MuJoCo's own compiler on ``path``, or None and a note if it refuses it."""
    mujoco = require_mujoco()
    try:
        m = _compiled(path)
    except ValueError as exc:
        return None, (f"mujoco's compiler refuses the file ({str(exc).strip().splitlines()[0]})",)
    n_free = int(np.sum(np.asarray(m.jnt_type) == mujoco.mjtJoint.mjJNT_FREE))
    offsets = {}
    for name in model.dof_names:
        j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
        if j >= 0:
            offsets[name] = int(m.jnt_dofadr[j]) - 6 * n_free
    return InfoColumn(NAME, _counts(m, n_free), loader_order(model.dof_names, offsets)), ()


def info_column(model: Model, path: str | None = None) -> LibraryInfo:
    """MuJoCo's view of ``model`` as ``to_mujoco`` builds it, and of its file ``path`` (URDF or MJCF)
    through MuJoCo's own compiler."""
    m = to_mujoco(model)
    n_fb = 6 if model.floating else 0
    rows = counts(m.nbody, m.njnt, 0, m.nv - n_fb, m.nbody + m.nsite, m.nq, m.nv)
    # qvel[6:] = s_dot[perm] (floating base): the position of each neutral DOF in MuJoCo's qvel
    order = tuple(np.argsort(mujoco_dof_permutation(model)).tolist())
    column = InfoColumn(NAME, rows, order, "mujoco's qvel without the 6 free-joint entries")
    loader, refused = _loader(model, str(path)) if path is not None else (None, ())
    return LibraryInfo(column, loader, (_NOTE, *refused))
