#!/usr/bin/env python
"""The "jaxsim" engine next to raw jitted jaxsim calls: the cost of bridge's conversions around jaxsim.

Run from a checkout with jaxsim installed (``pip install -e '.[jaxsim,bench]'``)::

    python benchmarks/jaxsim_engine.py            # the robots of benchmarks/run.py
    python benchmarks/jaxsim_engine.py --quick    # shorter timing runs

Implementations, one state (the robots, inputs and timer of ``benchmarks/run.py``), MIXED:

* ``bridge jaxsim``: ``bridge.KinDyn(model, engine="jaxsim", representation="mixed")``, the state
  given as bridge arrays every call (``set_state``), then the quantity as a numpy array;
* ``jaxsim (raw)``: ``jax.jit`` of ``JaxSimModelData.build`` and the jaxsim function on the same
  ``JaxSimModel`` (``to_jaxsim(model)``), the state already in jaxsim's layout, the result turned
  into a numpy array: mass matrix ``free_floating_mass_matrix``, bias forces
  ``free_floating_bias_forces``, forward dynamics ``forward_dynamics_aba``.

The engine evaluates M, h and g together (one compiled bundle per state), so its mass matrix pays
for h and g too. The compilation (once per model, representation and batch size) is timed apart.
Before timing, the raw results converted to bridge's order are compared with the engine's. Prints a
markdown table (and writes ``benchmarks/results/jaxsim.md``, git-ignored). The file is not called
jaxsim.py: that name would shadow the ``jaxsim`` package.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import ROBOTS, _fmt_us, _ratio, _rel, make_inputs, measure, robot_file  # noqa: E402

QUANTITIES = ("mass matrix", "bias forces", "forward dynamics")


def _implementations(model, x) -> tuple[dict, dict, dict, dict]:
    """(engine calls, raw calls, relative differences of the raw results, compilation seconds)."""
    import jax
    import jaxsim.api as js
    from jaxsim import VelRepr

    import bridge
    from bridge.backends.jaxsim import to_jaxsim_state
    from bridge.backends.jaxsim.model import to_jaxsim
    from bridge.conventions.change_of_variables import NEUTRAL, JointOrder
    from bridge.conventions.convert import convention
    from bridge.conventions.state import Representation

    floating = model.floating
    H, s, v, sd, tau = x.H, x.s, x.v if floating else np.zeros(6), x.sd, x.tau
    kd = bridge.KinDyn(model, engine="jaxsim", representation="mixed")
    nb = 0 if floating else 6

    def mass():
        kd.set_state(H, s, v, sd)
        return kd.mass_matrix()

    def bias():
        kd.set_state(H, s, v, sd)
        return kd.bias_forces()

    tau_full = np.concatenate([np.zeros(6), tau]) if floating else tau

    def forward():
        kd.set_state(H, s, v, sd)
        return kd.forward_dynamics(tau_full)

    engine = {"mass matrix": mass, "bias forces": bias, "forward dynamics": forward}
    seconds = {}
    for name, fn in engine.items():
        start = time.perf_counter()
        fn()
        seconds[name] = time.perf_counter() - start

    m = to_jaxsim(model)
    q, nu = to_jaxsim_state(model, bridge.State(H, s, v, sd, "mixed"))
    if not floating:  # the base pose from the state, no base velocity (as the engine does)
        q = np.concatenate([H[:3, 3], bridge.Transform(H).as_quaternion_wxyz(), q])
        nu = np.concatenate([np.zeros(6), nu])
    order = JointOrder.between(model, NEUTRAL[Representation.MIXED], convention("jaxsim"))
    perm = order.perm if order.perm is not None else np.arange(model.n_dofs)
    tau_js = tau[perm]

    def data(q, nu):
        return js.data.JaxSimModelData.build(
            model=m,
            base_position=q[:3],
            base_quaternion=q[3:7],
            joint_positions=q[7:],
            base_linear_velocity=nu[:3],
            base_angular_velocity=nu[3:6],
            joint_velocities=nu[6:],
            velocity_representation=VelRepr.Mixed,
        )

    jit_m = jax.jit(lambda q, nu: js.model.free_floating_mass_matrix(m, data(q, nu)))
    jit_h = jax.jit(lambda q, nu: js.model.free_floating_bias_forces(m, data(q, nu)))
    jit_fd = jax.jit(lambda q, nu, t: js.model.forward_dynamics_aba(m, data(q, nu), joint_forces=t))
    raw = {
        "mass matrix": lambda: np.asarray(jit_m(q, nu)),
        "bias forces": lambda: np.asarray(jit_h(q, nu)),
        "forward dynamics": lambda: np.concatenate([np.asarray(a) for a in jit_fd(q, nu, tau_js)]),
    }
    for fn in raw.values():
        fn()
    back = np.concatenate([np.arange(nb, 6), 6 + np.argsort(perm)])
    check = {
        "mass matrix": _rel(raw["mass matrix"]()[np.ix_(back, back)], mass()),
        "bias forces": _rel(raw["bias forces"]()[back], bias()),
        "forward dynamics": _rel(raw["forward dynamics"]()[back], forward()),
    }
    return engine, raw, check, seconds


def main(argv: list[str] | None = None) -> int:
    import bridge

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short timing runs (a smoke test)")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="output folder")
    args = parser.parse_args(argv)
    min_time, repeats = (0.02, 3) if args.quick else (0.1, 7)
    lines = [
        "| robot (n) | quantity | bridge jaxsim [µs] | jaxsim raw [µs] | bridge / raw | first call [s] |",
        "|---|---|--:|--:|--:|--:|",
    ]
    worst = 0.0
    for robot in ROBOTS:
        model = bridge.load_urdf(
            robot_file(robot), floating=robot.floating, joints=robot.dofs, mimic="independent"
        )
        x = make_inputs(model, seed=1)
        engine, raw, check, seconds = _implementations(model, x)
        worst = max(worst, *check.values())
        base = "floating" if model.floating else "fixed"
        for quantity in QUANTITIES:
            t = measure({"engine": engine[quantity], "raw": raw[quantity]}, min_time, repeats)
            e, r = t["engine"]["median"], t["raw"]["median"]
            lines.append(
                f"| {robot.label} ({model.n_dofs}, {base}) | {quantity} | {_fmt_us(e)} | {_fmt_us(r)} "
                f"| {_ratio(e, r)} | {seconds[quantity]:.1f} |"
            )
            print(
                f"  {robot.label:6s} {quantity:17s} engine {e * 1e6:9.1f} us  raw {r * 1e6:9.1f} us",
                flush=True,
            )
    lines += ["", f"Largest relative difference of the raw results from the engine's: {worst:.1e}."]
    table = "\n".join(lines)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "jaxsim.md").write_text(table + "\n")
    print()
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
