"""How each convention sees a model: counts of links/joints/frames and DOF orders (``bridge info``).

Pinocchio counts the ``universe`` body and two extra joints (universe's own and the free flyer)
and merges links joined by fixed joints into one body (kept as frames); iDynTree counts only real
links and joints, has no joint for the floating base, and may serialize DOFs in another order.
See ../shared/reference/003.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bridge.model.model import Model

__all__ = ["describe"]


def describe(model: Model, urdf_path: str | Path | None = None) -> dict:
    """Counts and DOF orders of ``model`` in bridge, Pinocchio and iDynTree.

    With ``urdf_path``, the libraries' own URDF loaders are described too (what users of each
    library get from the same file). Returns ``{"columns", "counts", "orders", "notes"}``.
    """
    import idyntree.bindings as idyn
    import pinocchio as pin

    from bridge.backends.idyntree import to_idyntree
    from bridge.backends.pinocchio import pinocchio_layout, to_pinocchio

    columns = ["bridge", "pinocchio", "idyntree"]
    pm = to_pinocchio(model)
    im = to_idyntree(model)
    n_fixed = sum(1 for j in model.joints if not j.movable)
    pin_fixed = sum(1 for f in pm.frames if f.type == pin.FrameType.FIXED_JOINT) - 1  # minus 'universe'
    counts = {
        "links / bodies": [len(model.links), pm.nbodies, im.getNrOfLinks()],
        "joints": [len(model.joints), pm.njoints, im.getNrOfJoints()],
        # Pinocchio keeps fixed joints as FIXED_JOINT frames (one of which is 'universe')
        "fixed joints": [n_fixed, pin_fixed, n_fixed],
        "DOFs": [model.n_dofs, pm.nv - (6 if model.floating else 0), im.getNrOfDOFs()],
        "frames": [len(model.frame_names), pm.nframes, im.getNrOfFrames()],
        "nq": [model.n_dofs + (7 if model.floating else 0), pm.nq, im.getNrOfPosCoords() + 7],
        "nv": [model.nv, pm.nv, im.getNrOfDOFs() + 6],
    }
    layout = pinocchio_layout(model)
    base_v = 6 if model.floating else 0
    orders: dict[str, list[int]] = {
        "bridge": list(range(model.n_dofs)),
        "pinocchio": [int(i) - base_v for i in layout.idx_v],
        "idyntree": [im.getJointIndex(name) for name in model.dof_names],
    }
    notes = [
        "pinocchio counts 'universe' as a body and adds the universe and "
        + ("free-flyer ('root_joint') joints" if model.floating else "no free-flyer joint (fixed base)")
        + "; links joined by fixed joints share one body (kept as BODY frames)",
        "pinocchio serializes DOFs depth first from the base; permutation bridge -> pinocchio: "
        + str(layout.perm.tolist()),
    ]
    if urdf_path is not None:
        path = str(urdf_path)
        own = (
            pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
            if model.floating
            else pin.buildModelFromUrdf(path)
        )
        loader = idyn.ModelLoader()
        if loader.loadModelFromFile(path):
            im2 = loader.model()
            columns += ["pinocchio URDF loader", "idyntree URDF loader"]
            own_dofs = own.nv - (6 if model.floating else 0)
            own_counts = {
                "links / bodies": [own.nbodies, im2.getNrOfLinks()],
                "joints": [own.njoints, im2.getNrOfJoints()],
                "fixed joints": [
                    sum(1 for f in own.frames if f.type == pin.FrameType.FIXED_JOINT) - 1,
                    im2.getNrOfJoints()
                    - sum(1 for i in range(im2.getNrOfJoints()) if im2.getJoint(i).getNrOfDOFs()),
                ],
                "DOFs": [own_dofs, im2.getNrOfDOFs()],
                "frames": [own.nframes, im2.getNrOfFrames()],
                "nq": [own.nq, im2.getNrOfPosCoords() + 7],
                "nv": [own.nv, im2.getNrOfDOFs() + 6],
            }
            for row, values in own_counts.items():
                counts[row] = counts[row] + values
            orders["pinocchio URDF loader"] = [
                (int(own.idx_vs[own.getJointId(n)]) - base_v) if own.existJointName(n) else -1
                for n in model.dof_names
            ]
            orders["idyntree URDF loader"] = [
                im2.getJoint(im2.getJointIndex(n)).getDOFsOffset() if im2.getJointIndex(n) >= 0 else -1
                for n in model.dof_names
            ]
            p_pin = np.array(orders["pinocchio URDF loader"])
            p_idyn = np.array(orders["idyntree URDF loader"])
            if np.all(p_pin >= 0) and np.all(p_idyn >= 0):
                perm = np.empty(model.n_dofs, dtype=int)
                perm[p_pin] = p_idyn
                notes.append(
                    "from the libraries' own loaders: v_pin[6 + i] = nu_idyntree[6 + P[i]] with P = "
                    + str(perm.tolist())
                )
    return {"columns": columns, "counts": counts, "orders": orders, "notes": notes}
