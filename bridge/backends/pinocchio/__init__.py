"""Pinocchio's conventions: model conversion (:mod:`.model`), states and the generalized-velocity
convention (:mod:`.state`), and the engine (:mod:`.engine`, with its single-state hot path in
:mod:`.single`). ``pinocchio`` itself is imported only when a function needs it."""

from .model import ROOT_JOINT, from_pinocchio, to_pinocchio
from .state import (
    PINOCCHIO,
    PinocchioLayout,
    from_pinocchio_state,
    pinocchio_dof_permutation,
    pinocchio_layout,
    to_pinocchio_state,
)

__all__ = [
    "PINOCCHIO",
    "ROOT_JOINT",
    "PinocchioLayout",
    "from_pinocchio",
    "from_pinocchio_state",
    "pinocchio_dof_permutation",
    "pinocchio_layout",
    "to_pinocchio",
    "to_pinocchio_state",
]
