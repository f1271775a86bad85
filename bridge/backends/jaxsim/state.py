"""jaxsim's state layout and generalized-velocity conventions, declared as data.

jaxsim (``JaxSimModelData.build``) takes a state as the base position ``W_p_B``, the base quaternion
``(w, x, y, z)`` of ``W_R_B``, the joint positions, the base velocity ``(linear, angular)`` in the
data's velocity representation and the joint velocities. Its three representations are the
neutral ones (``VelRepr.Body``: B, ``VelRepr.Inertial``: A, ``VelRepr.Mixed``: B[A], linear first),
so a jaxsim convention differs from bridge's representation of the same name only by jaxsim's joint
order:

* jaxsim merges the links joined by fixed joints (bridge hands it :func:`jaxsim_tree`: the links
  merged, each link frame on its joint's axis), numbers the remaining links breadth first from the
  base, the children of a link sorted by name, and gives
  each joint the index of its child link (:func:`jaxsim_dof_permutation`);
* a configuration ``q = [W_p_B; quaternion (w, x, y, z); joints]`` (the arguments of
  ``JaxSimModelData.build`` in order).

:data:`JAXSIM` is jaxsim's default (``VelRepr.Mixed``), the convention registered as ``"jaxsim"``
(its ``(q, v)`` are :func:`to_jaxsim_state`'s); :data:`JAXSIM_BODY` and :data:`JAXSIM_INERTIAL` the
other two, which the engine uses; :data:`JAXSIM_CONVENTIONS` maps each neutral representation to
its jaxsim convention and :data:`VELREPR` to the name of jaxsim's ``VelRepr`` member. A fixed base
has no base coordinates: q and v are the joints (the base pose is handed to jaxsim separately).
"""

from __future__ import annotations

import dataclasses
from collections import deque

import numpy as np

from bridge._cache import per_model
from bridge.conventions.change_of_variables import Convention
from bridge.conventions.declaration import (
    BODY_VELOCITY,
    INERTIAL_VELOCITY,
    MIXED_VELOCITY,
    Configuration,
    QuaternionOrder,
)
from bridge.conventions.native_state import from_native_state, to_native_state
from bridge.conventions.state import Representation, State
from bridge.errors import StateError
from bridge.model.joints import require_single_coordinate
from bridge.model.mimic import require_uncoupled
from bridge.model.model import Joint, JointKind, Link, Model
from bridge.model.sdf_writer import sdf_names
from bridge.model.urdf_writer import _unique
from bridge.spatial import SpatialInertia, Transform

__all__ = [
    "JAXSIM",
    "JAXSIM_BODY",
    "JAXSIM_CONVENTIONS",
    "JAXSIM_INERTIAL",
    "VELREPR",
    "from_jaxsim_state",
    "jaxsim_dof_permutation",
    "jaxsim_joint_names",
    "jaxsim_tree",
    "to_jaxsim_state",
]


#: the mass (kg) jaxsim's model gives a massless base welded to the world (jaxsim's parser drops
#: massless links): it does not move, so only the total mass and the centre of mass see it, by
#: parts in 1e20 of any real robot's
WELDED_BASE_MASS = 1e-20


@per_model
def jaxsim_tree(model: Model) -> Model:
    """The model bridge hands jaxsim (cached per model): every link frame on its joint's axis, and
    the links joined by fixed joints merged (:meth:`Model.lumped`).

    jaxsim's joints move their child link about the child frame's origin, so a rotational joint
    ``J`` whose axis misses its child's origin (a non-zero ``axis_origin`` o) is split: ``J`` moves a
    massless link ``<J>__axis`` placed at the axis origin (child axes), welded back to the child by a
    fixed joint at ``Trans(-o)``. Merging makes ``<J>__axis`` carry the child's inertia; the child
    link becomes a frame of it (``rest @ Trans(o) @ Rot(axis, s) @ Trans(-o)``, the same motion).
    A massless base welded to the world (a fixed-base MJCF model's world body) gets
    :data:`WELDED_BASE_MASS`, and the tree no gravity (the engine applies the state's).
    """
    used = set(model.frame_names) | set(model.joint_names)
    links, joints = list(model.links), []
    for j in model.joints:
        o = j.axis_origin
        if not (j.kind.rotational and np.any(o != 0.0)):
            joints.append(j)
            continue
        helper = _unique(f"{j.name}__axis", used)
        links.append(Link(helper, SpatialInertia.zero()))
        moved = dataclasses.replace(
            j,
            child=helper,
            parent_H_child=j.parent_H_child @ Transform.from_translation(o),
            axis_origin=np.zeros(3),
        )
        weld = Joint(
            _unique(f"{j.name}__axis_fixed", used),
            JointKind.FIXED,
            helper,
            j.child,
            Transform.from_translation(-o),
        )
        joints += [moved, weld]
    # (gravity: the engine's, per state; a bare <model> for jaxsim's parser, which reads no <world>)
    tree = model.replace(links=tuple(links), joints=tuple(joints), gravity=None).lumped()
    base = tree.link(tree.base)
    if not tree.floating and base.mass == 0.0:  # jaxsim's parser drops massless links, the weld too
        welded = Link(base.name, SpatialInertia(WELDED_BASE_MASS, np.zeros(3), np.zeros((3, 3))))
        tree = tree.replace(links=tuple(welded if x.name == base.name else x for x in tree.links))
    return tree


def jaxsim_joint_names(model: Model) -> tuple[str, ...]:
    """The movable joints of ``model`` in jaxsim's order: breadth first over the links of
    :func:`jaxsim_tree` from the base, the children of a link by their SDF name (Python's string
    order; :func:`bridge.model.sdf_writer.sdf_names`)."""
    require_uncoupled(model, "jaxsim's q and v")
    require_single_coordinate(model, "jaxsim")
    lumped = jaxsim_tree(model)
    sdf_link = sdf_names(lumped)[0]  # jaxsim sorts its links by their SDF names
    children: dict[str, list] = {}
    for j in lumped.joints:
        children.setdefault(j.parent, []).append(j)
    order: list[str] = []
    queue = deque([lumped.base])
    while queue:
        link = queue.popleft()
        for j in sorted(children.get(link, ()), key=lambda j: sdf_link[j.child]):
            order.append(j.name)
            queue.append(j.child)
    return tuple(order)


def jaxsim_dof_permutation(model: Model) -> np.ndarray:
    """``perm`` with ``v_jaxsim_joints = s_dot[perm]`` (jaxsim's joint order)."""
    index = {d: i for i, d in enumerate(model.dof_names)}
    return np.array([index[name] for name in jaxsim_joint_names(model)], dtype=np.intp)


#: jaxsim's configuration: base position, quaternion (w, x, y, z), joints
CONFIGURATION = Configuration(QuaternionOrder.WXYZ, quaternion_first=False)

#: jaxsim's generalized velocity in ``VelRepr.Mixed`` (its default): B[A] linear first
JAXSIM = Convention("jaxsim", MIXED_VELOCITY, joint_order=jaxsim_dof_permutation, configuration=CONFIGURATION)
#: ... in ``VelRepr.Body``: B, linear first
JAXSIM_BODY = Convention(
    "jaxsim_body", BODY_VELOCITY, joint_order=jaxsim_dof_permutation, configuration=CONFIGURATION
)
#: ... in ``VelRepr.Inertial``: A, linear first
JAXSIM_INERTIAL = Convention(
    "jaxsim_inertial", INERTIAL_VELOCITY, joint_order=jaxsim_dof_permutation, configuration=CONFIGURATION
)

#: the jaxsim convention of each neutral representation
JAXSIM_CONVENTIONS: dict[Representation, Convention] = {
    Representation.BODY: JAXSIM_BODY,
    Representation.INERTIAL: JAXSIM_INERTIAL,
    Representation.MIXED: JAXSIM,
}

#: the name of jaxsim's ``VelRepr`` member of each neutral representation
VELREPR: dict[Representation, str] = {
    Representation.BODY: "Body",
    Representation.INERTIAL: "Inertial",
    Representation.MIXED: "Mixed",
}


def to_jaxsim_state(
    model: Model, state: State, representation: object = "mixed"
) -> tuple[np.ndarray, np.ndarray]:
    """Neutral state -> jaxsim ``(q, v)`` with the base velocity in ``representation`` (default
    MIXED, jaxsim's ``VelRepr.Mixed``: :data:`JAXSIM`), batched (..., nq), (..., nv):
    ``q = [W_p_B; quaternion (w, x, y, z); joints]``, ``v = [linear; angular; joints]``, joints in
    jaxsim's order (a fixed base: the joints only)."""
    if not isinstance(model, Model) or not isinstance(state, State):
        raise StateError("to_jaxsim_state expects a bridge Model and a bridge State")
    return to_native_state(model, state, JAXSIM_CONVENTIONS[Representation.parse(representation)])


def from_jaxsim_state(
    model: Model, q: object, v: object, representation: object = "mixed", native: object = "mixed"
) -> State:
    """jaxsim ``(q, v)`` with the base velocity in ``native`` (default MIXED, :data:`JAXSIM`) ->
    neutral State in ``representation`` (a fixed base at the identity pose)."""
    if not isinstance(model, Model):
        raise StateError(f"from_jaxsim_state expects a bridge Model first, got {type(model).__name__}")
    convention = JAXSIM_CONVENTIONS[Representation.parse(native)]
    return from_native_state(model, q, v, convention, Representation.parse(representation))
