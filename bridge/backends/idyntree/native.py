"""iDynTree's own URDF loader (``ModelLoader``) and its ``KinDynComputations``, by joint names.

What iDynTree users get from a URDF: massless leaf links hanging on fixed joints become frames of
their parent link (their inertia, even a non-zero rotational one, is dropped), a massless root link
becomes a frame of its child, and the DOFs are numbered iDynTree's way.
"""

from __future__ import annotations

import idyntree.bindings as idyn
import numpy as np

from bridge.backends.idyntree import (
    bias_forces,
    gravity_forces,
    idyntree_representation,
    mass_matrix,
    set_idyntree_state,
)
from bridge.errors import BackendError

__all__ = ["dof_names", "dynamics", "frame_link", "has_link", "load_urdf_model", "n_links"]


def load_urdf_model(path: str):
    """``ModelLoader().loadModelFromFile(path)``'s model; BackendError if iDynTree refuses the file."""
    loader = idyn.ModelLoader()
    if not loader.loadModelFromFile(str(path)):
        raise BackendError(f"{path}: iDynTree's URDF loader refuses the file")
    return loader.model().copy()


def dof_names(im) -> list[str]:
    """The 1-DOF joints in iDynTree's DOF order."""
    joints = [(im.getJoint(j).getDOFsOffset(), im.getJointName(j)) for j in range(im.getNrOfJoints())]
    return [name for offset, name in sorted(joints) if im.getJoint(im.getJointIndex(name)).getNrOfDOFs() == 1]


def has_link(im, name: str) -> bool:
    return name in {im.getLinkName(i) for i in range(im.getNrOfLinks())}  # no error printed if absent


def n_links(im) -> int:
    return im.getNrOfLinks()


def frame_link(im, name: str) -> str | None:
    """The link an additional frame is attached to (None if iDynTree has no such frame)."""
    for index in range(im.getNrOfLinks(), im.getNrOfFrames()):
        if im.getFrameName(index) == name:
            return im.getLinkName(im.getFrameLink(index))
    return None


def dynamics(
    im,
    base: str,
    representation: object,
    world_H_base: np.ndarray,
    s: np.ndarray,
    base_velocity: np.ndarray,
    s_dot: np.ndarray,
    gravity: np.ndarray,
) -> dict[str, np.ndarray]:
    """M, h, g of ``KinDynComputations`` on ``im`` with floating base ``base`` (iDynTree DOF order)."""
    kd = idyn.KinDynComputations()
    if not (kd.loadRobotModel(im) and kd.setFloatingBase(base)):
        raise BackendError(f"iDynTree cannot use link {base!r} as floating base")
    kd.setFrameVelocityRepresentation(idyntree_representation(representation))
    set_idyntree_state(kd, world_H_base, s, base_velocity, s_dot, gravity)
    kd.getWorldTransform(base)  # refresh the kinematics before the gravity forces
    return {
        "mass_matrix": mass_matrix(kd),
        "bias_forces": bias_forces(kd),
        "gravity_forces": gravity_forces(kd),
    }
