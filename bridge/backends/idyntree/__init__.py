"""iDynTree's conventions: model conversion (:mod:`.model`), ``KinDynComputations`` set-up, states
and joint-space queries (:mod:`.kindyn`), and the engine (:mod:`.engine`). iDynTree computes in the
neutral representations natively, so no change of variables is needed. ``idyntree`` itself is
imported only when a function needs it."""

from .kindyn import (
    bias_forces,
    gravity_forces,
    idyntree_representation,
    kindyn,
    mass_matrix,
    set_idyntree_state,
)
from .model import from_idyntree, to_idyntree

__all__ = [
    "bias_forces",
    "from_idyntree",
    "gravity_forces",
    "idyntree_representation",
    "kindyn",
    "mass_matrix",
    "set_idyntree_state",
    "to_idyntree",
]
