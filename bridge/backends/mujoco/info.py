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

from bridge._files import library_path
from bridge.backends.info import InfoColumn, LibraryInfo, counts, loader_order, velocity_offsets
from bridge.backends.mujoco.messages import captured_warnings
from bridge.backends.mujoco.model import is_mjcf, require_mujoco, to_mujoco
from bridge.backends.mujoco.state import MUJOCO
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
_WIDE_NOTE = (
    "mujoco: a ball joint is MuJoCo's ball (qpos its quaternion w, x, y, z, qvel the angular velocity in "
    "the child's axes); a free joint on the fixed base at the identity is MuJoCo's free joint, another "
    "is three slides along its frame's axes and a ball in one body, a planar joint two slides along its "
    "plane axes and a hinge about its normal (each counted as MuJoCo joints; qvel [p_dot in the joint "
    "frame's axes; omega in the child's] and (x_dot, y_dot, theta_dot))"
)


def _counts(m: object, n_base: int) -> dict[str, int]:
    """MuJoCo's counts of a compiled model: bodies with the world, joints (no fixed ones: welded
    bodies have no joint), DOFs without the floating base's, frames as bodies and sites."""
    return counts(m.nbody, m.njnt, 0, m.nv - n_base, m.nbody + m.nsite, m.nq, m.nv)


def _compiled(path: str) -> object:
    """MuJoCo's compile of the file (ValueError if refused)."""
    mujoco = require_mujoco()
    if is_mjcf(path):
        with captured_warnings(mujoco):  # load_mjcf warned already
            return mujoco.MjModel.from_xml_path(library_path(path))
    from bridge.backends.mujoco.native import load_urdf_spec

    spec, _ = load_urdf_spec(path)
    return spec.compile()


def _offsets(m: object, model: Model, n_base: int) -> dict[str, int]:
    """{DOF joint: the dof address of the MuJoCo joint of its name (a planar or emulated free joint's
    first part keeps it) minus the base's entries} for the model's joints MuJoCo has."""
    from bridge.backends.mujoco.native import joint_id

    out = {}
    for name in model.dof_names:
        j = joint_id(m, name)
        if j >= 0:
            out[name] = int(m.jnt_dofadr[j]) - n_base
    return out


def _loader(model: Model, path: str) -> tuple[InfoColumn | None, tuple[str, ...]]:
    """The column of MuJoCo's own compiler on ``path``, or None and a note if it refuses it."""
    try:
        m = _compiled(path)
    except ValueError as exc:
        return None, (f"mujoco's compiler refuses the file ({str(exc).strip().splitlines()[0]})",)
    n_base = 6 if model.floating else 0  # (a scene's free joints are DOFs of bridge's model)
    offsets = _offsets(m, model, n_base)
    return InfoColumn(NAME, _counts(m, n_base), loader_order(model.dof_names, offsets)), ()


def info_column(model: Model, path: str | None = None) -> LibraryInfo:
    """MuJoCo's view of ``model`` as ``to_mujoco`` builds it, and of its file ``path`` (URDF or MJCF)
    through MuJoCo's own compiler."""
    m = to_mujoco(model)
    n_base = 6 if model.floating else 0
    # the position of each neutral DOF joint's first entry in MuJoCo's qvel, base entries left out
    order = velocity_offsets(model, MUJOCO.permutation(model))
    column = InfoColumn(NAME, _counts(m, n_base), order, "mujoco's qvel without the 6 free-joint entries")
    loader, refused = _loader(model, str(path)) if path is not None else (None, ())
    notes = (_NOTE,) if model.single_coordinate else (_NOTE, _WIDE_NOTE)
    return LibraryInfo(column, loader, (*notes, *refused))
