"""bridge: make rigid-body dynamics agree across libraries and conventions.

Heavy parts (the backends and the libraries they wrap) are imported lazily, so ``import bridge``
stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bridge.backends import registry as _registry  # (registers every library's conventions)
from bridge.dynamics.queries import QUERIES as _FUNCTIONAL  # the names of bridge.dynamics.functional
from bridge.errors import (
    BackendError,
    BridgeError,
    BridgeWarning,
    DatasetError,
    FileAccessError,
    InertiaError,
    InvalidValueError,
    MimicJointWarning,
    ModelError,
    ModelFileNotFoundError,
    ModelTooLargeError,
    NonPhysicalInertiaWarning,
    SDFError,
    SDFWarning,
    ShapeError,
    SingularMassMatrixError,
    StateError,
    ThreadOwnershipError,
    UnknownNameError,
    UnsupportedError,
    URDFError,
    URDFWarning,
)
from bridge.spatial import Force, Motion, SpatialInertia, Transform

__version__ = "0.1.0"


# public name -> module that defines it (imported on first access); the libraries' names
# (bridge.to_pinocchio, bridge.load_mjcf, ...) come from their registry records' ``public``
# (bridge.backends.registry.public_names), so a library registered at run time adds its own
_LAZY = {
    "Model": "bridge.model.model",
    "Link": "bridge.model.model",
    "Joint": "bridge.model.model",
    "JointKind": "bridge.model.model",
    "JointLimits": "bridge.model.model",
    "Frame": "bridge.model.model",
    "load_urdf": "bridge.model.urdf",
    "load_sdf": "bridge.model.sdf",
    "random_model": "bridge.model.random",
    "set_budget": "bridge.backends.limits",
    "Representation": "bridge.conventions.state",
    "State": "bridge.conventions.state",
    "velocity_transform": "bridge.conventions.convert",
    "velocity_change": "bridge.conventions.convert",
    "ChangeOfVariables": "bridge.conventions.change_of_variables",
    "Convention": "bridge.conventions.change_of_variables",
    "load_model": "bridge.backends.files",
    "KinDyn": "bridge.dynamics.kindyn",
    # stateless queries (bridge.dynamics.functional): bridge.mass_matrix(model, state, engine=...), ...
    **{name: "bridge.dynamics.functional" for name in _FUNCTIONAL},
    "convert_velocity": "bridge.conventions.convert",
    "convert_acceleration": "bridge.conventions.convert",
    "convert_jacobian": "bridge.conventions.convert",
    "convert_generalized_force": "bridge.conventions.convert",
    "convert_mass_matrix": "bridge.conventions.convert",
    "convert_bias_forces": "bridge.conventions.convert",
    "convert_dynamics_derivatives": "bridge.derivatives.convert",
    "casadi_velocity_transform": "bridge.conventions.casadi_functions",
    "casadi_mass_matrix": "bridge.conventions.casadi_functions",
    "casadi_bias_forces": "bridge.conventions.casadi_functions",
    "casadi_jacobian": "bridge.conventions.casadi_functions",
    "integrate": "bridge.dynamics.integration",
    "cross_validate": "bridge.validation.check",
    # datasets: many states between libraries' layouts, labels, files (extra [datasets] for files/Dask)
    "convert_states": "bridge.datasets.convert",
    "NativeStates": "bridge.datasets.convert",
    "state_columns": "bridge.datasets.convert",
    "compute": "bridge.datasets.labels",
    "convert_dataset": "bridge.datasets.pipeline",
    "robot_names": "bridge.robots",
    "robot_path": "bridge.robots",
}

__all__ = [
    "BackendError",
    "BridgeError",
    "BridgeWarning",
    "FileAccessError",
    "DatasetError",
    "Force",
    "InertiaError",
    "InvalidValueError",
    "MimicJointWarning",
    "ModelError",
    "ModelFileNotFoundError",
    "ModelTooLargeError",
    "Motion",
    "NonPhysicalInertiaWarning",
    "SDFError",
    "SDFWarning",
    "ShapeError",
    "SingularMassMatrixError",
    "SpatialInertia",
    "StateError",
    "ThreadOwnershipError",
    "Transform",
    "URDFError",
    "URDFWarning",
    "UnknownNameError",
    "UnsupportedError",
    *sorted({**_LAZY, **_registry.public_names()}),
]


#: submodules reachable as attributes after ``import bridge`` (imported on first access)
_SUBMODULES = {"robots"}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"bridge.{name}")
    module = _LAZY.get(name) or _registry.public_names().get(name)
    if module is None:
        raise AttributeError(f"module 'bridge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_registry.public_names()) | _SUBMODULES)


if TYPE_CHECKING:  # pragma: no cover
    from bridge.backends.limits import set_budget  # noqa: F401
    from bridge.model.model import Frame, Joint, JointKind, JointLimits, Link, Model  # noqa: F401
    from bridge.model.random import random_model  # noqa: F401
    from bridge.model.urdf import load_urdf  # noqa: F401
