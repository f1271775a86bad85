#!/usr/bin/env python
"""The "drake" engine next to raw Drake calls: the cost of bridge's conversions around Drake.

Run from a checkout with Drake installed (``pip install -e '.[drake,bench]'``)::

    python benchmarks/drake_engine.py            # the robots of benchmarks/run.py
    python benchmarks/drake_engine.py --quick    # shorter timing runs

Implementations, at the same state as ``benchmarks/run.py`` (its robots, inputs and timer):

* ``bridge drake``: ``bridge.KinDyn(model, engine="drake", representation="mixed")``, the state given
  as bridge arrays every call;
* ``drake (raw)``: the same finalized plant (``bridge.to_drake(model)``) called directly with the
  state already in Drake's ``(q, v)`` and the acceleration / torques in its convention: the cost of
  Drake's algorithms alone. ``bundle`` = ``SetPositionsAndVelocities`` + ``CalcMassMatrix`` +
  ``CalcBiasTerm`` − ``CalcGravityGeneralizedForces`` + ``CalcJacobianSpatialVelocity``; inverse
  dynamics = ``CalcInverseDynamics`` − gravity; forward dynamics = Cholesky solve with
  ``CalcMassMatrix`` (what the engine does).

Before timing, the raw results converted to MIXED are compared with the engine's. Prints a markdown
table (and writes ``benchmarks/results/drake.md``, git-ignored). The file is not called drake.py: that
name would shadow the ``drake`` package (Drake's message types) that pydrake imports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import QUANTITIES, ROBOTS, _fmt_us, _ratio, _rel, make_inputs, measure, robot_file  # noqa: E402


def _implementations(model, robot, x) -> tuple[dict, dict, dict]:
    """(engine calls, raw calls, relative differences of the raw results from the engine's)."""
    from pydrake.multibody.tree import JacobianWrtVariable, MultibodyForces

    import bridge
    from bridge.conventions.change_of_variables import MIXED, change_of_variables
    from bridge.conventions.convert import convention

    kd = bridge.KinDyn(model, engine="drake", representation="mixed")
    frame, floating = robot.frame, model.floating
    H, s, v, sd, ba, sdd, tau = x.H, x.s, x.v, x.sd, x.base_acc, x.sdd, x.tau
    ba_arg = ba if floating else None

    def bundle():
        kd.set_state(H, s, v, sd)
        return kd.mass_matrix(), kd.bias_forces(), kd.frame_jacobian(frame)

    def inverse():
        kd.set_state(H, s, v, sd)
        return kd.inverse_dynamics(ba_arg, sdd)

    def forward():
        kd.set_state(H, s, v, sd)
        return kd.forward_dynamics(tau)

    engine = {"bundle": bundle, "inverse dynamics": inverse, "forward dynamics": forward}

    plant = bridge.to_drake(model)
    context = plant.CreateDefaultContext()
    state = bridge.State(H, s, v if floating else np.zeros(6), sd, "mixed")
    qv = np.concatenate(bridge.to_drake_state(model, state))
    cov = change_of_variables(model, state, MIXED, convention("drake"))
    nu_dot = np.concatenate([ba, sdd]) if floating else sdd
    vdot = cov.acceleration(nu_dot)
    tau_d = cov.force(np.concatenate([np.zeros(6), tau]) if floating else tau)
    W, F, kV = plant.world_frame(), plant.GetFrameByName(frame), JacobianWrtVariable.kV
    none = MultibodyForces(plant)
    zero3 = np.zeros(3)

    def raw_bundle():
        plant.SetPositionsAndVelocities(context, qv)
        M = plant.CalcMassMatrix(context)
        h = plant.CalcBiasTerm(context) - plant.CalcGravityGeneralizedForces(context)
        return M, h, plant.CalcJacobianSpatialVelocity(context, kV, F, zero3, W, W)

    def raw_inverse():
        plant.SetPositionsAndVelocities(context, qv)
        return plant.CalcInverseDynamics(context, vdot, none) - plant.CalcGravityGeneralizedForces(context)

    def raw_forward():
        plant.SetPositionsAndVelocities(context, qv)
        M = plant.CalcMassMatrix(context)
        rhs = tau_d - plant.CalcBiasTerm(context) + plant.CalcGravityGeneralizedForces(context)
        L = np.linalg.cholesky(M)
        return np.linalg.solve(L.T, np.linalg.solve(L, rhs))

    raw = {"bundle": raw_bundle, "inverse dynamics": raw_inverse, "forward dynamics": raw_forward}
    M, h, J = bundle()
    Mr, hr, Jr = raw_bundle()
    check = {
        "M": _rel(cov.matrix_back(Mr), M),
        "h": _rel(cov.force_back(hr), h),
        "J": _rel(cov.jacobian_back(Jr[[3, 4, 5, 0, 1, 2]]), J),
        "inverse dynamics": _rel(cov.force_back(raw_inverse()), inverse()),
        "forward dynamics": _rel(cov.acceleration_back(raw_forward()), forward()),
    }
    return engine, raw, check


def main(argv: list[str] | None = None) -> int:
    import bridge

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short timing runs (a smoke test)")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="output folder")
    args = parser.parse_args(argv)
    min_time, repeats = (0.02, 3) if args.quick else (0.1, 7)
    lines = [
        "| robot (n) | quantity | bridge drake [µs] | drake raw [µs] | bridge / raw |",
        "|---|---|--:|--:|--:|",
    ]
    worst = 0.0
    for robot in ROBOTS:
        model = bridge.load_urdf(
            robot_file(robot), floating=robot.floating, joints=robot.dofs, mimic="independent"
        )
        x = make_inputs(model, seed=1)
        engine, raw, check = _implementations(model, robot, x)
        worst = max(worst, *check.values())
        base = "floating" if model.floating else "fixed"
        for quantity in QUANTITIES:
            t = measure({"engine": engine[quantity], "raw": raw[quantity]}, min_time, repeats)
            e, r = t["engine"]["median"], t["raw"]["median"]
            lines.append(
                f"| {robot.label} ({model.n_dofs}, {base}) | {quantity} | {_fmt_us(e)} | {_fmt_us(r)} "
                f"| {_ratio(e, r)} |"
            )
            print(
                f"  {robot.label:6s} {quantity:17s} engine {e * 1e6:9.1f} us  raw {r * 1e6:9.1f} us",
                flush=True,
            )
    lines += ["", f"Largest relative difference of the raw results from the engine's: {worst:.1e}."]
    table = "\n".join(lines)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "drake.md").write_text(table + "\n")
    print()
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
