"""What MuJoCo's compiler would refuse in :func:`~bridge.backends.mujoco.model.to_mujoco`'s model (or
computes otherwise: an armature on free and planar joints), and what the conversion changed or leaves
out: the UnsupportedError and the BridgeWarnings, each naming the links (floored or balanced
inertias, massless links that could not be merged, frames no MuJoCo object can carry:
:mod:`bridge.backends.mujoco.bodies`)."""

from __future__ import annotations

import warnings

import numpy as np

from bridge.backends.mujoco.bodies import Inertias, Plan, lumped_of, unsited_frames
from bridge.errors import BridgeWarning, UnsupportedError
from bridge.model.model import JointKind, Model

__all__ = [
    "refuse_problems",
    "refuse_wide_armature",
    "unmerged_reasons",
    "warn_changed",
    "warn_unsited_frames",
]


def unmerged_reasons(model: Model, plan: Plan) -> list[str]:
    """Why each massless moving body was not merged into the next one (it branches or ends)."""
    lumped = lumped_of(model)
    out = []
    for b in plan.bodies[1:]:
        inertia = b.link.inertia
        if float(inertia.mass) == 0.0 and not np.any(np.asarray(inertia.inertia_com)):
            n = len(lumped.child_joints(b.link.name))
            why = plan.split.get(b.link.name)
            if why is None and n == 0:
                why = "it has no child joint"
            elif why is None:
                why = f"it has {n} child joints (one body has one chain)"
            out.append(f"massless link {b.link.name!r} cannot be merged into the next MuJoCo body: {why}")
    return out


def refuse_problems(model: Model, problems: list[str]) -> None:
    """Raise UnsupportedError listing what MuJoCo would refuse (with the options' hint), if anything."""
    if not problems:
        return
    hints = []
    if any("moves but has mass" in p for p in problems):
        hints.append(
            "to_mujoco(model, bound_mass=..., bound_inertia=...) raises masses and moments to floors, "
            "like MuJoCo's boundmass/boundinertia, at the cost of exactness"
        )
    if any("A + B >= C" in p for p in problems):
        hints.append(
            "to_mujoco(model, balance_inertia=True) replaces such moments by their mean, like MuJoCo's "
            "balanceinertia, at the cost of exactness"
        )
    hint = f" ({'; '.join(hints)})" if hints else ""
    raise UnsupportedError(
        f"model {model.name!r} cannot be compiled by MuJoCo: " + "; ".join(problems) + hint
    )


def warn_changed(model: Model, acc: Inertias, stacklevel: int) -> None:
    """The BridgeWarnings naming the links whose inertia was raised to the floors or balanced."""
    if acc.raised:
        warnings.warn(
            f"model {model.name!r}: MuJoCo needs positive masses and moments of moving bodies; raised "
            f"to bound_mass={acc.bound_mass:g} kg, bound_inertia={acc.bound_inertia:g} kg m^2 on links "
            + ", ".join(acc.raised)
            + ": the MuJoCo model's mass matrix and inverse dynamics differ from the model's by terms of"
            " that size, its forward dynamics by up to that size over the smallest eigenvalue of the"
            " mass matrix",
            BridgeWarning,
            stacklevel=stacklevel + 1,
        )
    if acc.balanced:
        warnings.warn(
            f"model {model.name!r}: principal moments violating A + B >= C (MuJoCo refuses them) "
            "replaced by their mean (balance_inertia, like MuJoCo's balanceinertia) on links "
            + ", ".join(acc.balanced)
            + ": the MuJoCo model's dynamics differ from the model's by terms of that size",
            BridgeWarning,
            stacklevel=stacklevel + 1,
        )


def warn_unsited_frames(model: Model, plan: Plan, stacklevel: int) -> None:
    """The BridgeWarning naming the frames the MuJoCo model has no object for, if any."""
    unsited = unsited_frames(model, plan)
    if unsited:
        warnings.warn(
            f"model {model.name!r}: frames on massless links inside chains of joints merged into one "
            "MuJoCo body are not sites of the MuJoCo model: " + "; ".join(unsited) + ". Each moves with "
            "the joints after its link in the chain, and a site is fixed in its body (bridge's mujoco "
            "engine reads them from its kinematic twin; a link with a mass of its own stays a body)",
            BridgeWarning,
            stacklevel=stacklevel + 1,
        )


def refuse_wide_armature(model: Model) -> None:
    """UnsupportedError naming the free and planar joints with an armature: MuJoCo adds it in its own
    coordinates, bridge's model (and Pinocchio) in the child's axes."""
    named = [j.name for j in model.joints if j.armature and j.kind in (JointKind.FREE, JointKind.PLANAR)]
    if named:
        raise UnsupportedError(
            f"model {model.name!r}: armature on free or planar joints {named}: MuJoCo adds a joint's "
            "armature to the mass matrix in its own coordinates (a free joint's and a planar joint's linear "
            "velocity in the joint frame's axes), bridge's model to the joint's velocity in the child's axes "
            "(as Pinocchio does): the mass matrices agree, the bias forces differ by armature * (omega x v). "
            "Set these joints' armature to 0 to write the model to MuJoCo"
        )
