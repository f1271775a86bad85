"""Pinocchio's ``bridge info`` column: how Pinocchio counts and orders a model.

Pinocchio counts the ``universe`` body and two extra joints (universe's own and the free flyer),
merges links joined by fixed joints into one body (kept as frames) and serializes the DOFs depth
first from the base (docs/conventions.md, "Model structure from one URDF").
"""

from __future__ import annotations

import pinocchio as pin

from bridge._files import library_path
from bridge.backends.info import InfoColumn, LibraryInfo, counts, loader_order, velocity_offsets
from bridge.backends.pinocchio.model import to_pinocchio
from bridge.backends.pinocchio.state import PINOCCHIO
from bridge.model.model import Model

__all__ = ["info_column"]

NAME = "pinocchio"


def _counts(pm: pin.Model, floating: bool) -> dict[str, int]:
    """Pinocchio's counts: one body per joint ('universe' included); fixed joints are FIXED_JOINT
    frames (one of which is 'universe')."""
    fixed = sum(1 for f in pm.frames if f.type == pin.FrameType.FIXED_JOINT) - 1
    return counts(pm.nbodies, pm.njoints, fixed, pm.nv - (6 if floating else 0), pm.nframes, pm.nq, pm.nv)


def _converted(model: Model) -> InfoColumn:
    """The column of ``to_pinocchio(model)``."""
    pm = to_pinocchio(model)
    order = velocity_offsets(model, PINOCCHIO.permutation(model))
    meaning = "pinocchio's v without the 6 free-flyer entries (idx_v - 6)"
    return InfoColumn(NAME, _counts(pm, model.floating), tuple(order), meaning)


def _perm(model: Model) -> list[int]:
    """``perm`` with ``pinocchio_joints[i] = model_joints[perm[i]]``."""
    perm = PINOCCHIO.permutation(model)
    return list(range(len(model.dof_names))) if perm is None else perm.tolist()


def _notes(model: Model) -> tuple[str, ...]:
    joints = "free-flyer ('root_joint') joints" if model.floating else "no free-flyer joint (fixed base)"
    return (
        f"pinocchio counts 'universe' as a body and adds the universe and {joints}; links joined by "
        "fixed joints share one body (kept as BODY frames)",
        "pinocchio serializes DOFs depth first from the base; permutation bridge -> pinocchio: "
        + str(_perm(model)),
    )


def _loader(model: Model, path: str) -> tuple[InfoColumn | None, tuple[str, ...]]:
    """The column of ``pin.buildModelFromUrdf(path)`` (with a free flyer for a floating model), or
    None and a note when Pinocchio's loader refuses the file."""
    try:
        own = (
            pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
            if model.floating
            else pin.buildModelFromUrdf(path)
        )
    except (ValueError, RuntimeError) as exc:
        return None, (f"pinocchio's URDF loader refuses the file ({str(exc).splitlines()[0]})",)
    n_fb = 6 if model.floating else 0
    offsets = {n: int(own.idx_vs[own.getJointId(n)]) - n_fb for n in model.dof_names if own.existJointName(n)}
    order = loader_order(model.dof_names, offsets)
    return InfoColumn("pinocchio URDF loader", _counts(own, model.floating), order), ()


def info_column(model: Model, path: str | None = None) -> LibraryInfo:
    """Pinocchio's view of ``model`` (and of its URDF file ``path`` through its own loader)."""
    loader, refused = _loader(model, library_path(path)) if path is not None else (None, ())
    return LibraryInfo(_converted(model), loader, _notes(model) + refused)
