"""MuJoCo's conventions: model conversion and MJCF loading (:mod:`.model`), states and the
generalized-velocity convention (:mod:`.state`), and the engine (:mod:`.engine`). ``mujoco`` itself
is imported only when a function needs it (the ``[mujoco]`` extra)."""

from .model import (
    FREE_JOINT,
    from_mujoco,
    load_mjcf,
    mujoco_body_name,
    site_frame_name,
    to_mujoco,
)
from .state import MUJOCO, from_mujoco_state, mujoco_base_maps, mujoco_dof_permutation, to_mujoco_state

__all__ = [
    "FREE_JOINT",
    "MUJOCO",
    "from_mujoco",
    "from_mujoco_state",
    "load_mjcf",
    "mujoco_base_maps",
    "mujoco_body_name",
    "mujoco_dof_permutation",
    "site_frame_name",
    "to_mujoco",
    "to_mujoco_state",
]
