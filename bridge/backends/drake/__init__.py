"""Drake's conventions: model conversion (:mod:`.model`), states and the generalized-velocity
convention (:mod:`.state`), the engine (:mod:`.engine`) and Drake's own URDF parser next to
bridge's loader (:mod:`.native`). ``pydrake`` itself is imported only when a function needs it;
without it those functions raise a BackendError naming the extra ``[drake]``."""

from .model import BASE_WELD, FLOATING_JOINT, WORLD_H_BASE, from_drake, set_world_H_base, to_drake
from .state import DRAKE, DrakeLayout, drake_dof_permutation, drake_layout, from_drake_state, to_drake_state

__all__ = [
    "BASE_WELD",
    "DRAKE",
    "FLOATING_JOINT",
    "WORLD_H_BASE",
    "DrakeLayout",
    "drake_dof_permutation",
    "drake_layout",
    "from_drake",
    "from_drake_state",
    "set_world_H_base",
    "to_drake",
    "to_drake_state",
]
