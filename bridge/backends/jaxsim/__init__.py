"""jaxsim's conventions: states and the generalized-velocity conventions (:mod:`.state`), the model
handed to jaxsim as SDFormat (:mod:`.model`), the compiled jaxsim functions (:mod:`.compiled`) and
the engine (:mod:`.engine`). ``jax`` and ``jaxsim`` are imported only when a function needs them
(then JAX runs in 64-bit floats, process-wide); without jaxsim those functions raise a BridgeError
naming the extra ``[jaxsim]``."""

from .state import (
    JAXSIM,
    JAXSIM_BODY,
    JAXSIM_CONVENTIONS,
    JAXSIM_INERTIAL,
    from_jaxsim_state,
    jaxsim_dof_permutation,
    jaxsim_joint_names,
    to_jaxsim_state,
)

__all__ = [
    "JAXSIM",
    "JAXSIM_BODY",
    "JAXSIM_CONVENTIONS",
    "JAXSIM_INERTIAL",
    "from_jaxsim_state",
    "jaxsim_dof_permutation",
    "jaxsim_joint_names",
    "to_jaxsim_state",
]
