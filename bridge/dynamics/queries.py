"""The KinDyn queries offered as stateless functions (:mod:`bridge.dynamics.functional`); a module of its
own so that ``import bridge`` can name them without importing the engines."""

__all__ = ["QUERIES"]

#: the KinDyn queries offered as stateless functions
QUERIES = (
    "mass_matrix",
    "bias_forces",
    "gravity_forces",
    "coriolis_matrix",
    "coriolis_forces",
    "inverse_dynamics",
    "forward_dynamics",
    "frame_transform",
    "frame_velocity",
    "frame_jacobian",
    "frame_bias_acc",
    "frame_acceleration",
    "relative_transform",
    "relative_jacobian",
    "com_position",
    "com_velocity",
    "com_jacobian",
    "centroidal_momentum",
    "centroidal_momentum_matrix",
    "total_momentum",
    "total_momentum_jacobian",
    "frame_jacobian_derivative",
    "inverse_dynamics_derivatives",
    "forward_dynamics_derivatives",
)
