"""Newton's conventions: states and the generalized-velocity convention (:mod:`.state`: a base
velocity at the base link's centre of mass), model conversion through Newton's ModelBuilder
(:mod:`.model`), Newton's per-body twists (:mod:`.bodies`) and the engine (:mod:`.engine`).
``newton`` and ``warp`` are imported only when a function needs them; without them those functions
raise a BackendError naming the extra ``[newton]``."""

from .state import NEWTON, from_newton_state, newton_dof_permutation, to_newton_state

__all__ = ["NEWTON", "from_newton_state", "newton_dof_permutation", "to_newton_state"]
