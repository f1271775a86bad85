"""Newton's conventions: states and the generalized-velocity convention (:mod:`.state`: a base
velocity at the base link's centre of mass), model conversion through Newton's ModelBuilder
(:mod:`.model`), Newton's per-body twists (:mod:`.bodies`) and the engine (:mod:`.engine`).
``newton`` and ``warp`` are imported only when a function needs them; without them those functions
raise a BackendError naming the extra ``[newton]``."""

from .bodies import body_poses, from_body_velocities, to_body_velocities
from .model import from_newton, to_newton
from .state import NEWTON, from_newton_state, newton_dof_permutation, to_newton_state

#: Newton's per-body ``body_qd`` (..., n_links, 6) -> each link's velocity in any representation
to_newton_body_velocities = to_body_velocities
#: each link's velocity in any representation -> Newton's ``body_qd``
from_newton_body_velocities = from_body_velocities

__all__ = [
    "NEWTON",
    "body_poses",
    "from_body_velocities",
    "from_newton",
    "from_newton_body_velocities",
    "from_newton_state",
    "newton_dof_permutation",
    "to_body_velocities",
    "to_newton",
    "to_newton_body_velocities",
    "to_newton_state",
]
