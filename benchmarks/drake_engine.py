#!/usr/bin/env python
"""The "drake" engine next to raw Drake calls, with the floor of the calls themselves.

    python benchmarks/drake_engine.py [ROBOT ...] [--reps mixed body inertial] [--json OUT]
                                      [--before BEFORE.json]

Robots: example-robot-data's solo12 and icub-models' iCubGazeboV2_5 (default). The harness, the
quantities and the floor are :mod:`engine_bench`'s. Raw Drake is the finalized plant
``bridge.to_drake(model)`` called directly with the state already in Drake's ``(q, v)`` and the
inputs in its convention, with the cheapest calls known here that give the quantities:

* bundle: ``SetPositionsAndVelocities`` + ``CalcMassMatrix`` + ``CalcForceElementsContribution``
  (gravity) + ``CalcInverseDynamics`` at Drake's zero acceleration with those forces (the bias
  forces, gravity in: cheaper than ``CalcBiasTerm`` - ``CalcGravityGeneralizedForces``, which cost
  an inverse dynamics each) + ``CalcJacobianSpatialVelocity`` (the foot's origin, world axes);
* inverse dynamics: ``SetPositionsAndVelocities`` + gravity's forces + ``CalcInverseDynamics``;
* forward dynamics: ``SetPositionsAndVelocities`` + ``CalcMassMatrix`` + the bias forces as above
  + a Cholesky solve (``scipy.linalg.cho_factor`` / ``cho_solve``).

Before timing, bridge's results are compared with raw Drake's taken to the representation. The file
is not called drake.py: that name would shadow the ``drake`` package that pydrake imports.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.linalg import cho_factor, cho_solve

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_bench import Case, main, rel

import bridge
from bridge.conventions.change_of_variables import change_of_variables
from bridge.conventions.convert import convention
from bridge.conventions.frames import frame_jacobian


def implementations(robot: str, rep: str) -> tuple[dict, dict]:
    """({quantity: {implementation: fn}}, {quantity: relative difference raw vs bridge})."""
    from pydrake.multibody.tree import JacobianWrtVariable, MultibodyForces

    case = Case(robot, rep, "drake")
    model, state = case.model, case.state
    plant = bridge.to_drake(model)
    context = plant.CreateDefaultContext()
    qv = np.concatenate(bridge.to_drake_state(model, state))
    cov = change_of_variables(model, state, convention(rep), convention("drake"))
    vdot = cov.acceleration(case.nu_dot)
    tau_d = cov.force(np.concatenate([np.zeros(model.nv - model.n_dofs), case.tau]))
    W, F, kV = plant.world_frame(), plant.GetFrameByName(case.frame), JacobianWrtVariable.kV
    forces = MultibodyForces(plant)
    zero3, zero_v = np.zeros(3), np.zeros(model.nv)

    def gravity():
        forces.SetZero()
        plant.CalcForceElementsContribution(context, forces)
        return forces

    def raw_bundle():
        plant.SetPositionsAndVelocities(context, qv)
        M = plant.CalcMassMatrix(context)
        h = plant.CalcInverseDynamics(context, zero_v, gravity())
        return M, h, plant.CalcJacobianSpatialVelocity(context, kV, F, zero3, W, W)

    def raw_inverse():
        plant.SetPositionsAndVelocities(context, qv)
        return plant.CalcInverseDynamics(context, vdot, gravity())

    def raw_forward():
        plant.SetPositionsAndVelocities(context, qv)
        M = plant.CalcMassMatrix(context)
        rhs = tau_d - plant.CalcInverseDynamics(context, zero_v, gravity())
        return cho_solve(cho_factor(M, check_finite=False), rhs, check_finite=False)

    ours = case.bridge
    Mb, hb, Jb = (x.copy() for x in ours["bundle"]())
    Mr, _, Jr = raw_bundle()
    J_frame = frame_jacobian(case.kd.frame_transform(case.frame), Jr[[3, 4, 5, 0, 1, 2]], "mixed", rep)
    check = {"M": rel(cov.matrix_back(Mr), Mb), "J": rel(cov.jacobian_back(J_frame), Jb)}
    plant.SetPositionsAndVelocities(context, qv)  # h: inverse dynamics at the representation's zero
    check["h"] = rel(cov.force_back(plant.CalcInverseDynamics(context, cov.bias_acceleration, gravity())), hb)
    check["ID"] = rel(cov.force_back(raw_inverse()), ours["inverse dynamics"]())
    check["FD"] = rel(cov.acceleration_back(raw_forward()), ours["forward dynamics"]())
    raw = {"bundle": raw_bundle, "inverse dynamics": raw_inverse, "forward dynamics": raw_forward}
    fns = {q: {"bridge": ours[q], "raw": raw[q], "floor": case.floor[q]} for q in raw}
    return fns, check


if __name__ == "__main__":
    from importlib.metadata import version

    raise SystemExit(main(__doc__.splitlines()[0], f"Drake {version('drake')}", implementations))
