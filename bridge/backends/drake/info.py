"""Drake's ``bridge info`` column: how Drake counts and orders a model.

Drake counts the world body and every link (fixed joints are weld joints, not merged), adds a
quaternion floating joint for a floating base and orders the velocities in its forest order (base
angular, base linear, then the joints depth first).
"""

from __future__ import annotations

from pydrake.multibody.plant import MultibodyPlant
from pydrake.multibody.tree import JointIndex

from bridge.backends.drake.model import quiet_drake, to_drake
from bridge.backends.drake.native import dof_slot, load_drake_urdf
from bridge.backends.drake.state import drake_layout
from bridge.backends.info import InfoColumn, LibraryInfo, counts, loader_order
from bridge.model.model import Model

__all__ = ["info_column"]

NAME = "drake"


def _joints(plant: MultibodyPlant) -> list:
    return [plant.get_joint(JointIndex(i)) for i in range(plant.num_joints())]


def _counts(plant: MultibodyPlant, floating: bool) -> dict[str, int]:
    """Drake's counts: bodies with the world, joints with welds and the floating joint, frames."""
    nv = plant.num_velocities()
    welds = sum(1 for j in _joints(plant) if j.num_velocities() == 0)
    dofs = nv - (6 if floating else 0)
    return counts(
        plant.num_bodies(), plant.num_joints(), welds, dofs, plant.num_frames(), plant.num_positions(), nv
    )


def _note(model: Model, plant: MultibodyPlant) -> str:
    kinds = sorted({j.type_name() for j in _joints(plant)})
    base = ", a quaternion_floating joint for the floating base" if model.floating else ", the base welded"
    wide = ""
    if not model.single_coordinate:
        wide = (
            "; ball joints are ball_rpy joints (q roll, pitch, yaw; v the angular velocity in the joint "
            "frame F), free joints quaternion_floating joints relative to F (q quaternion w first, then "
            "position; v angular, then linear, in F), planar joints planar joints (q = v = x, y, theta in F)"
        )
    return (
        "drake counts the 'world' body and every link as a body (fixed joints are weld joints, not "
        f"merged){base}; joint types {', '.join(kinds)}; frames: each body's own frame, the world's and "
        "the extra frames; v = (base angular velocity, base linear velocity, joints in its forest order, "
        f"depth first){wide}; the 'drake' column of the loaders' tables is Drake's own Parser (URDF, "
        "SDFormat)"
    )


def _converted(model: Model) -> tuple[InfoColumn, str]:
    """The column of ``to_drake(model)`` and the note on how Drake counts it."""
    plant = to_drake(model)
    n_fb = 6 if model.floating else 0
    order = tuple(int(i) - n_fb for i in drake_layout(model, plant).idx_v)
    meaning = "drake's v without the 6 floating-base entries"
    return InfoColumn(NAME, _counts(plant, model.floating), order, meaning), _note(model, plant)


def _parse(path: str) -> MultibodyPlant:
    """A finalized plant from Drake's own URDF ``Parser`` (its per-inertia warnings silenced)."""
    with quiet_drake():
        return load_drake_urdf(path)


def _loader(model: Model, path: str) -> tuple[InfoColumn | None, tuple[str, ...]]:
    """The column of Drake's own URDF Parser on ``path``, or None and a note if it refuses it."""
    try:
        plant = _parse(path)
    except RuntimeError as exc:
        return None, (f"drake's parser refuses the file ({str(exc).splitlines()[0]})",)
    slots = {}
    for n in model.dof_names:
        try:
            slots[n] = dof_slot(plant, n)
        except RuntimeError:  # a joint Drake's parse does not have
            continue
    base = plant.GetBodyByName(model.base) if plant.HasBodyNamed(model.base) else None
    floating = base is not None and base.is_floating_base_body()
    start = base.floating_velocities_start_in_v() if floating else plant.num_velocities()

    def offset(j, k: int) -> int:  # its place in v without the floating base's six entries
        at = j.velocity_start() + k
        return at - 6 if at > start else at

    offsets = {n: offset(j, k) for n, (j, k) in slots.items()}
    return InfoColumn(NAME, _counts(plant, floating), loader_order(model.dof_names, offsets)), ()


def info_column(model: Model, path: str | None = None) -> LibraryInfo:
    """Drake's view of ``model`` (and of its URDF file ``path`` through its own Parser)."""
    column, note = _converted(model)
    loader, refused = _loader(model, str(path)) if path is not None else (None, ())
    return LibraryInfo(column, loader, (note, *refused))
