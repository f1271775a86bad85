"""Coupled mimic joints as Pinocchio's own ``JointModelMimic`` joints.

A :class:`~bridge.model.mimic.CoupledModel` (``load_urdf(..., mimic="coupled")``) keeps
``s_j = k s_m + o`` for each mimic joint ``j`` of a master ``m``. Pinocchio has the same joint:
``JointModelMimic`` (what ``pin.buildModelFromUrdf(..., mimic=True)`` makes), which has no
configuration or velocity of its own and reads its master's, scaled and shifted. Its Python
bindings cannot give a new ``JointModelMimic`` its primary joint, so :func:`to_pinocchio` builds
the full model (every joint with its own DOF) and turns each mimic joint into a mimic of its master
with ``pin.transformJointIntoMimic`` (Pinocchio's own transformation, the one its documentation
shows for hand-made mimic models).

Pinocchio needs each master to come before its mimic joints in its joint numbering (ids are depth
first, parents before children). :func:`pinocchio_joint_order` is the depth-first order that
``to_pinocchio`` and the Pinocchio layout use: for a model without coupling it is
``model.depth_first_joints``; for a coupled model the subtrees below each link are visited so that
a subtree holding a master comes before the subtrees holding its mimic joints (Pinocchio's own URDF
loader does not reorder: when its depth-first order puts a mimic joint first, it refuses the file
with "The parent joint of the mimic joint is not in the kinematic tree", e.g. talos_full_v2). The
Pinocchio configuration and velocity then hold the independent DOFs only (nq, nv are the
masters'), in that order.

What Pinocchio 4.1 cannot do natively with mimic joints, the engine does otherwise
(:mod:`.coupled`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bridge.errors import BackendError
from bridge.model.model import Joint, JointKind, Model

if TYPE_CHECKING:  # pragma: no cover
    import pinocchio

__all__ = ["apply_mimics", "mimic_problem", "pinocchio_joint_order"]


def _mimics(model: Model) -> tuple:
    return tuple(getattr(model, "mimics", ()))


def _subtree_joints(model: Model, joint: Joint) -> list[Joint]:
    out, stack = [], [joint]
    while stack:
        j = stack.pop()
        out.append(j)
        stack.extend(model.child_joints(j.child))
    return out


def _order(model: Model) -> tuple[tuple[Joint, ...], str | None]:
    """(depth-first joints with masters before their mimic joints, None) or (depth first, reason)."""
    mimics = _mimics(model)
    if not mimics:
        return model.depth_first_joints, None
    master_of = {m.joint: m.master for m in mimics}
    masters = set(master_of.values())
    # per joint: the masters in its subtree (itself included) and the masters its subtree needs
    has: dict[str, set[str]] = {}
    needs: dict[str, set[str]] = {}
    for j in model.joints:
        names = [x.name for x in _subtree_joints(model, j)]
        has[j.name] = {n for n in names if n in masters}
        needs[j.name] = {master_of[n] for n in names if n in master_of}
    for m in mimics:  # a master below its own mimic joint can never come first
        if m.master in has[m.joint]:
            return model.depth_first_joints, (
                f"mimic joint {m.joint!r} is an ancestor of its master {m.master!r}"
            )
    out: list[Joint] = []

    def visit(link: str) -> str | None:
        kids = model.child_joints(link)
        # siblings: a subtree that holds a master goes before those needing it (stable otherwise)
        left = list(kids)
        while left:
            for cand in left:
                others = [x for x in left if x is not cand]
                if not any(needs[cand.name] & (has[o.name] - has[cand.name]) for o in others):
                    break
            else:
                names = ", ".join(repr(x.name) for x in left)
                return f"the subtrees of joints {names} below {link!r} mimic each other's joints"
            out.append(cand)
            left.remove(cand)
            problem = visit(cand.child)
            if problem:
                return problem
        return None

    problem = visit(model.base)
    if problem:
        return model.depth_first_joints, problem
    return tuple(out), None


def pinocchio_joint_order(model: Model) -> tuple[Joint, ...]:
    """The joints in the order ``to_pinocchio`` adds them (depth first, masters before their mimic
    joints for a coupled model; ``model.depth_first_joints`` when that is impossible)."""
    return _order(model)[0]


def mimic_problem(model: Model) -> str | None:
    """Why ``model``'s coupled mimic joints cannot be Pinocchio mimic joints, or None (they can, or
    the model has none)."""
    mimics = _mimics(model)
    if not mimics:
        return None
    for m in mimics:
        for name in (m.joint, m.master):
            if model.joint(name).kind is JointKind.CONTINUOUS:
                return (
                    f"mimic joint {m.joint!r}: joint {name!r} is continuous (Pinocchio's mimic joints "
                    "take joints with one position coordinate)"
                )
    return _order(model)[1]


def apply_mimics(pm: pinocchio.Model, model: Model) -> pinocchio.Model:
    """``pm`` (``to_pinocchio`` of the full model, joints in :func:`pinocchio_joint_order`) with each
    mimic joint turned into Pinocchio's ``JointModelMimic`` of its master (a new model)."""
    import pinocchio as pin

    problem = mimic_problem(model)
    if problem:
        raise BackendError(
            f"model {model.name!r}: the mimic joints cannot be Pinocchio mimic joints: {problem}; "
            "bridge.KinDyn(model, engine='pinocchio') still computes the coupled dynamics (the full "
            "model projected), or load the URDF with mimic='independent'"
        )
    # Pinocchio shifts the indices of the joints after each transformed one: follow by joint id
    for m in sorted(_mimics(model), key=lambda m: pm.getJointId(m.joint)):
        primary, secondary = pm.getJointId(m.master), pm.getJointId(m.joint)
        pm = pin.transformJointIntoMimic(pm, primary, secondary, float(m.multiplier), float(m.offset))
    return pm
