"""How each convention sees a model: counts of links/joints/frames and DOF orders (``bridge info``).

Pinocchio counts the ``universe`` body and two extra joints (universe's own and the free flyer)
and merges links joined by fixed joints into one body (kept as frames); iDynTree counts only real
links and joints, has no joint for the floating base, and may serialize DOFs in another order
(docs/conventions.md, "Model structure from one URDF"; docs/theory.md, "The change of variables T").

Drake (when installed) counts the world body and every link (fixed joints are weld joints), adds a
quaternion floating joint for a floating base and orders the velocities in its forest order.

DOF orders are 0-based positions of each joint in each library's joint-space vector: bridge's ``s``,
Pinocchio's ``v`` without its six free-flyer entries (``idx_v - 6``), iDynTree's joint positions,
Featherstone's ``q`` of the real joints and Drake's ``v`` without its six floating-base entries.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bridge.model.model import Model

__all__ = ["describe"]


def describe(model: Model, urdf_path: str | Path | None = None) -> dict:
    """Counts and DOF orders of ``model`` in bridge, Pinocchio, iDynTree, Featherstone and Drake
    (when installed).

    Returns ``{"columns", "counts", "orders", "notes", "loaders"}``: ``columns``/``counts``/``orders``
    for the model as bridge converts it; with ``urdf_path``, ``loaders`` describes what the
    libraries' own URDF loaders make of the same file (``{"columns", "counts", "orders"}``, or None
    when a loader refuses the file, with a note saying why). A coupled model (mimic joints) is
    described through its full model (every mimic joint a DOF), with a note.
    """
    import pinocchio as pin

    from bridge.backends.featherstone import to_featherstone
    from bridge.backends.idyntree import to_idyntree
    from bridge.backends.pinocchio import pinocchio_layout, to_pinocchio

    columns = ["bridge", "pinocchio", "idyntree", "featherstone"]
    coupled = getattr(model, "full", None)
    mimic_note = None
    if coupled is not None:
        mimic_note = (
            f"{len(model.mimics)} mimic joints follow their masters ({model.n_dofs} independent DOFs); "
            "the tables show the full model (mimic joints as DOFs)"
        )
        model = coupled
    pm = to_pinocchio(model)
    im = to_idyntree(model)
    fm = to_featherstone(model)
    n_fb = 6 if model.floating else 0
    n_fixed = sum(1 for j in model.joints if not j.movable)
    pin_fixed = sum(1 for f in pm.frames if f.type == pin.FrameType.FIXED_JOINT) - 1  # minus 'universe'
    # Pinocchio: one body per joint ('universe' included); Featherstone: NB bodies, one joint each
    # (floatbase: bodies 1-6 are the free base's six 1-DOF joints, 1-5 massless); fixed joints are
    # merged into their parent body in both, and the merged links become frames / placements
    counts = {
        "links / bodies": [len(model.links), pm.njoints, im.getNrOfLinks(), fm.NB],
        "joints": [len(model.joints), pm.njoints, im.getNrOfJoints(), fm.NB],
        # Pinocchio keeps fixed joints as FIXED_JOINT frames (one of which is 'universe')
        "fixed joints": [n_fixed, pin_fixed, n_fixed, 0],
        "DOFs": [model.n_dofs, pm.nv - n_fb, im.getNrOfDOFs(), fm.NB - n_fb],
        "frames": [len(model.frame_names), pm.nframes, im.getNrOfFrames(), len(fm.placements)],
        "nq": [model.n_dofs + (7 if model.floating else 0), pm.nq, im.getNrOfPosCoords() + 7, fm.NB],
        "nv": [model.nv, pm.nv, im.getNrOfDOFs() + 6, fm.NB],
    }
    layout = pinocchio_layout(model)
    base_v = 6 if model.floating else 0
    orders: dict[str, list[int]] = {
        "bridge": list(range(model.n_dofs)),
        "pinocchio": [int(i) - base_v for i in layout.idx_v],
        "idyntree": [im.getJointIndex(name) for name in model.dof_names],
        # q[k] = s[dof_perm[k]]: the position of each neutral DOF in Featherstone's q (real joints)
        "featherstone": np.argsort(np.asarray(fm.dof_perm)).tolist(),
    }
    notes = [
        "pinocchio counts 'universe' as a body and adds the universe and "
        + ("free-flyer ('root_joint') joints" if model.floating else "no free-flyer joint (fixed base)")
        + "; links joined by fixed joints share one body (kept as BODY frames)",
        "pinocchio serializes DOFs depth first from the base; permutation bridge -> pinocchio: "
        + str(layout.perm.tolist()),
        "featherstone (spatial_v2): regular numbering, one body per movable joint, axes aligned to "
        "Rx/Ry/Rz/Px/Py/Pz by the choice of joint frames"
        + (
            "; floatbase layout: bodies 1-6 are the free base (5 massless), real joints from body 7, "
            "xfb = [quaternion w,x,y,z; position; angular, linear velocity in base coordinates]"
            if model.floating
            else "; the fixed base is body 0"
        ),
    ]
    if mimic_note is not None:
        notes.append(mimic_note)
    _add_drake(model, columns, counts, orders, notes)
    loaders = None
    if urdf_path is not None:
        loaders = _describe_loaders(model, str(urdf_path), notes)
        if loaders is not None:
            _add_drake_parser(model, str(urdf_path), loaders, notes)
    return {"columns": columns, "counts": counts, "orders": orders, "notes": notes, "loaders": loaders}


def _drake_counts(plant, floating: bool) -> dict[str, int]:
    """Drake's counts: bodies with the world, joints with welds and the floating joint, frames."""
    from pydrake.multibody.tree import JointIndex

    joints = [plant.get_joint(JointIndex(i)) for i in range(plant.num_joints())]
    n_fb = 6 if floating else 0
    return {
        "links / bodies": plant.num_bodies(),
        "joints": plant.num_joints(),
        "fixed joints": sum(1 for j in joints if j.num_velocities() == 0),
        "DOFs": plant.num_velocities() - n_fb,
        "frames": plant.num_frames(),
        "nq": plant.num_positions(),
        "nv": plant.num_velocities(),
    }


def _add_drake(model: Model, columns: list, counts: dict, orders: dict, notes: list[str]) -> None:
    """A "drake" column (``to_drake(model)``) when Drake is installed."""
    import importlib.util

    if importlib.util.find_spec("pydrake") is None:
        return
    from pydrake.multibody.tree import JointIndex

    from bridge.backends.drake import to_drake
    from bridge.backends.drake.state import drake_layout

    plant = to_drake(model)
    columns.append("drake")
    for row, value in _drake_counts(plant, model.floating).items():
        counts[row].append(value)
    base_v = 6 if model.floating else 0
    orders["drake"] = [int(i) - base_v for i in drake_layout(model, plant).idx_v]
    kinds = sorted({plant.get_joint(JointIndex(i)).type_name() for i in range(plant.num_joints())})
    notes.append(
        "drake counts the 'world' body and every link as a body (fixed joints are weld joints, not "
        "merged)"
        + (", a quaternion_floating joint for the floating base" if model.floating else ", the base welded")
        + f"; joint types {', '.join(kinds)}; frames: each body's own frame, the world's and the "
        "extra frames; v = (base angular velocity, base linear velocity, joints in its forest order, "
        "depth first); the 'drake' column of the loaders' tables is Drake's own URDF Parser"
    )


def _add_drake_parser(model: Model, path: str, loaders: dict, notes: list[str]) -> None:
    """A "drake" column (Drake's own URDF ``Parser``) in ``loaders`` when Drake is installed and its
    Parser takes the file."""
    import importlib.util
    import logging

    if importlib.util.find_spec("pydrake") is None:
        return
    from bridge.validation.drake_native import load_drake_urdf

    logger = logging.getLogger("drake")  # its parser warns per non-physical inertia
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        plant = load_drake_urdf(path)
    except RuntimeError as exc:
        notes.append(f"drake's URDF parser refuses the file ({str(exc).splitlines()[0]})")
        return
    finally:
        logger.setLevel(level)
    floating = (
        plant.num_velocities()
        - sum(plant.GetJointByName(d).num_velocities() for d in model.dof_names if plant.HasJointNamed(d))
        == 6
    )
    loaders["columns"].append("drake")  # its multibody Parser (a short header: 80 columns)
    for row, value in _drake_counts(plant, floating).items():
        loaders["counts"][row].append(value)
    base_v = 6 if floating else 0
    loaders["orders"]["drake"] = [
        plant.GetJointByName(n).velocity_start() - base_v if plant.HasJointNamed(n) else -1
        for n in model.dof_names
    ]


def _describe_loaders(model: Model, path: str, notes: list[str]) -> dict | None:
    """Counts and DOF orders from Pinocchio's and iDynTree's own URDF loaders (None if one refuses)."""
    import idyntree.bindings as idyn
    import pinocchio as pin

    base_v = 6 if model.floating else 0
    try:
        own = (
            pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
            if model.floating
            else pin.buildModelFromUrdf(path)
        )
    except (ValueError, RuntimeError) as exc:
        notes.append(f"pinocchio's URDF loader refuses the file ({str(exc).splitlines()[0]})")
        return None
    loader = idyn.ModelLoader()
    if not loader.loadModelFromFile(path):
        notes.append("idyntree's URDF loader refuses the file")
        return None
    im2 = loader.model()
    own_dofs = own.nv - base_v
    counts = {
        "links / bodies": [own.nbodies, im2.getNrOfLinks()],
        "joints": [own.njoints, im2.getNrOfJoints()],
        "fixed joints": [
            sum(1 for f in own.frames if f.type == pin.FrameType.FIXED_JOINT) - 1,
            im2.getNrOfJoints() - sum(1 for i in range(im2.getNrOfJoints()) if im2.getJoint(i).getNrOfDOFs()),
        ],
        "DOFs": [own_dofs, im2.getNrOfDOFs()],
        "frames": [own.nframes, im2.getNrOfFrames()],
        "nq": [own.nq, im2.getNrOfPosCoords() + 7],
        "nv": [own.nv, im2.getNrOfDOFs() + 6],
    }
    orders = {
        "pinocchio URDF loader": [
            (int(own.idx_vs[own.getJointId(n)]) - base_v) if own.existJointName(n) else -1
            for n in model.dof_names
        ],
        "idyntree URDF loader": [
            im2.getJoint(im2.getJointIndex(n)).getDOFsOffset() if im2.getJointIndex(n) >= 0 else -1
            for n in model.dof_names
        ],
    }
    p_pin = np.array(orders["pinocchio URDF loader"])
    p_idyn = np.array(orders["idyntree URDF loader"])
    if p_pin.size and np.all(p_pin >= 0) and np.all(p_idyn >= 0):
        perm = np.empty(model.n_dofs, dtype=int)
        perm[p_pin] = p_idyn
        notes.append(
            "from the libraries' own loaders: v_pin[6 + i] = nu_idyntree[6 + P[i]] with P = "
            + str(perm.tolist())
        )
    return {"columns": ["pinocchio URDF loader", "idyntree URDF loader"], "counts": counts, "orders": orders}
