"""iDynTree's own URDF loader (``ModelLoader``) and its ``KinDynComputations``, by joint names.

What iDynTree users get from a URDF: massless leaf links hanging on fixed joints become frames of
their parent link (their inertia, even a non-zero rotational one, is dropped), a massless root link
becomes a frame of its child, and the DOFs are numbered iDynTree's way.

``NATIVE`` (:class:`IDynTreeLoader`) is its side of the native-loader comparison
(:mod:`bridge.backends.native`): the reference Pinocchio's loader is compared with, findings
``massless_inertia_dropped``, ``root_link_is_frame`` and ``dof_order``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import idyntree.bindings as idyn
import numpy as np

from bridge._files import library_path
from bridge.backends.idyntree import (
    bias_forces,
    gravity_forces,
    idyntree_representation,
    mass_matrix,
    set_idyntree_state,
)
from bridge.backends.native import Cause, Loaded, Source, dof_order_cause
from bridge.conventions.frames import frame_acceleration, frame_jacobian, frame_motion
from bridge.conventions.state import State
from bridge.errors import BackendError
from bridge.model.model import Model
from bridge.spatial import DEFAULT_GRAVITY

__all__ = [
    "NATIVE",
    "IDynTreeLoader",
    "dof_names",
    "dynamics",
    "frame_link",
    "has_link",
    "load_urdf_model",
    "n_links",
]


def load_urdf_model(path: str):
    """``ModelLoader().loadModelFromFile(path)``'s model; BackendError if iDynTree refuses the file."""
    loader = idyn.ModelLoader()
    if not loader.loadModelFromFile(library_path(path)):
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


# ------------------------------------------------------------------ the native-loader comparison
def _base_change(
    model: Model, link: str, state: State
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """iDynTree's floating base ``link`` rigidly attached to bridge's base B: (world_H_link, link
    velocity (6,), T (nv, nv), T_dot nu (nv,)) with nu_link = T nu_B in ``state``'s representation
    (docs/theory.md, "Three ways to write the velocity of the base"). B and L move as one body: L's
    velocity is B's world velocity seen from L (:mod:`bridge.conventions.frames`), and ``T_dot nu``
    the change of that map along the motion (L's acceleration at zero B acceleration)."""
    B_H_L = model.forward_kinematics(np.zeros(model.n_dofs))[link].matrix  # fixed joints between
    world_H_B = state.world_H_base.matrix
    world_H_L = world_H_B @ B_H_L
    rep, v = state.representation, state.base_velocity
    A = frame_jacobian(world_H_L, frame_jacobian(world_H_B, np.eye(6), rep, "inertial"), "inertial", rep)
    v_world = frame_motion(world_H_B, v, rep, "inertial")
    a_world = frame_acceleration(world_H_B, v, np.zeros(6), rep, "inertial")
    A_dot_nu = frame_acceleration(world_H_L, v_world, a_world, "inertial", rep)
    T = np.eye(6 + model.n_dofs)
    T[:6, :6] = A
    T_dot_nu = np.concatenate([A_dot_nu, np.zeros(model.n_dofs)])
    return world_H_L, A @ v, T, T_dot_nu


@dataclass
class IDynTreeNative:
    """iDynTree's M, h, g of its own model ``im`` at states of bridge's ``model`` (floating base)."""

    im: object
    model: Model
    base_pose: None = None
    base: str = field(init=False)  # iDynTree's floating base link
    order: np.ndarray = field(init=False)  # bridge's nu indices of iDynTree's nu

    def __post_init__(self) -> None:
        self.base = self.model.base
        if not has_link(self.im, self.base):
            self.base = frame_link(self.im, self.base)
        dofs = [6 + self.model.dof_index(d) for d in dof_names(self.im)]
        self.order = np.concatenate([np.arange(6), np.array(dofs, dtype=int)])

    def dynamics(self, state: State) -> dict[str, np.ndarray]:
        """M, h, g in ``state``'s representation, moved to bridge's base and DOF order."""
        H, v_base = state.world_H_base.matrix, state.base_velocity
        if self.base != self.model.base:
            H, v_base, T, T_dot_nu = _base_change(self.model, self.base, state)
        k = self.order[6:] - 6
        out = dynamics(
            self.im,
            self.base,
            state.representation,
            H,
            state.s[k],
            v_base,
            state.s_dot[k],
            np.array(DEFAULT_GRAVITY),
        )
        o = self.order
        M, h, g = np.empty_like(out["mass_matrix"]), np.empty(len(o)), np.empty(len(o))
        M[np.ix_(o, o)], h[o], g[o] = out["mass_matrix"], out["bias_forces"], out["gravity_forces"]
        if self.base != self.model.base:  # nu_link = T nu: back to bridge's base
            M, h, g = T.T @ M @ T, T.T @ (h + M @ T_dot_nu), T.T @ g
        return {"mass_matrix": M, "bias_forces": h, "gravity_forces": g}


def _causes(native: IDynTreeNative) -> list[Cause]:
    model, im = native.model, native.im
    causes = [
        Cause(
            "massless_inertia_dropped",
            (link.name,),
            f"link {link.name!r} has zero mass but a rotational inertia; iDynTree's loader makes it a frame "
            "and drops the inertia, Pinocchio keeps it (merged into the parent body)",
            drops=(link.name,),
        )
        for link in model.links
        if link.mass == 0.0 and np.any(link.inertia.inertia_com != 0.0) and not has_link(im, link.name)
    ]
    if native.base != model.base:
        causes.append(
            Cause(
                "root_link_is_frame",
                (model.base,),
                f"iDynTree's loader made the massless root link {model.base!r} a frame of {native.base!r}, "
                "its floating base there; bridge moves states and results between the two bases",
            )
        )
    message = "the loaders number the DOFs differently; bridge maps them by joint name"
    return causes + dof_order_cause("dof_order", model, dof_names(im), message)


class IDynTreeLoader:
    """iDynTree's ``ModelLoader``: the reference of Pinocchio's loader."""

    label = "idyntree URDF loader"
    prefix = ""
    against = None
    joins = "reference"
    unexplained = "the loaders disagree beyond what bridge can explain"

    def load(self, source: Source, reference: Loaded | None = None) -> Loaded:
        wide = tuple(j.name for j in source.model.joints if j.kind.wide)
        if wide:  # (its loader prints errors for them and drops the joints: the file is not its model)
            why = (
                "iDynTree's URDF loader has no floating or planar joints (it drops them, splitting the tree)"
            )
            return Loaded(None, [Cause("idyntree_refuses", wide, why)])
        im = load_urdf_model(source.path)
        theirs = dof_names(im)
        mine = sorted(source.model.dof_names)
        if sorted(theirs) != mine:
            raise BackendError(
                f"{source.path}: the loaders see different joints (pinocchio {mine}, "
                f"idyntree {sorted(theirs)})"
            )
        native = IDynTreeNative(im, source.model)
        return Loaded(native, _causes(native), bodies=n_links(im), who="iDynTree")


NATIVE = IDynTreeLoader()
