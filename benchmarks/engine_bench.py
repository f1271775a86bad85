"""The harness of ``mujoco_engine.py`` and ``drake_engine.py``: a library engine of bridge next to
the same library called by hand, and the floor of the calls themselves.

For each robot, representation and quantity (``bundle`` = ``set_state`` + mass matrix + bias forces
+ one foot's Jacobian; ``inverse dynamics`` and ``forward dynamics``, each after ``set_state``),
three implementations are timed interleaved: one short block of calls each in turn, repeated, the
best block per call (on a machine shared with other jobs the minimum is what stays reproducible,
and the three are measured under the same conditions):

* ``bridge``: ``KinDyn(model, engine=..., representation=rep)``, the state given as arrays every call;
* ``raw``: the library on the same model with the state and inputs already in its own convention,
  the cheapest calls that give the quantities (each script says which);
* ``floor``: the same KinDyn calls on that engine answering at once (a preallocated array): the
  cost of the Python calls and of KinDyn's own checks, which no engine goes below.

``--json`` writes the times; ``--before`` adds those of an earlier run (another checkout, e.g.
``PYTHONPATH=../baseline python benchmarks/mujoco_engine.py --json before.json``) as two columns.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import bridge
from bridge.robots import robot_path
from bridge.validation.check import random_states

#: robots and the foot whose Jacobian the bundle takes
FEET = {"solo12": "FL_FOOT", "iCubGazeboV2_5": "l_sole"}
QUANTITIES = ("bundle", "inverse dynamics", "forward dynamics")


class Case:
    """One robot in one representation: the model, a state, inputs and bridge's three calls."""

    def __init__(self, robot: str, rep: str, engine: str) -> None:
        self.model = model = bridge.load_urdf(robot_path(robot))
        self.rep, self.frame = rep, FEET.get(robot, model.frame_names[-1])
        st = random_states(model, 1, np.random.default_rng(0)).to(rep)
        self.state = bridge.State(st.world_H_base[0], st.s[0], st.base_velocity[0], st.s_dot[0], rep)
        self.args = (st.world_H_base.matrix[0], st.s[0], st.base_velocity[0], st.s_dot[0])
        self.nu_dot = np.random.default_rng(1).normal(size=model.nv)
        self.tau = np.random.default_rng(2).normal(size=model.n_dofs)
        n = model.n_dofs
        self.base_acc = self.nu_dot[:6] if model.floating else None
        self.s_ddot = self.nu_dot[-n:] if n else self.nu_dot[:0]
        self.kd = bridge.KinDyn(model, engine=engine, representation=rep)
        self.bridge = self.calls(self.kd)
        self.floor = self.calls(self._noop(engine))

    def calls(self, kd: bridge.KinDyn) -> dict[str, Callable]:
        """The three quantities through ``kd``."""
        H, s, v, sd = self.args
        frame, ba, sdd, tq = self.frame, self.base_acc, self.s_ddot, self.tau

        def bundle():
            kd.set_state(H, s, v, sd)
            return kd.mass_matrix(), kd.bias_forces(), kd.frame_jacobian(frame)

        def inverse():
            kd.set_state(H, s, v, sd)
            return kd.inverse_dynamics(ba, sdd)

        def forward():
            kd.set_state(H, s, v, sd)
            return kd.forward_dynamics(tq)

        return {"bundle": bundle, "inverse dynamics": inverse, "forward dynamics": forward}

    def _noop(self, engine: str) -> bridge.KinDyn:
        """A KinDyn whose engine answers every query of the benchmark at once (the floor)."""
        nv = self.model.nv
        M, h, J, x = np.zeros((nv, nv)), np.zeros(nv), np.zeros((6, nv)), np.zeros(nv)
        kd = bridge.KinDyn(self.model, engine=engine, representation=self.rep)
        e = kd._engine
        kd._set_single = lambda H, s, v, sd, g: True
        e.mass_matrix, e.bias_forces, e.frame_jacobian = (lambda: M), (lambda: h), (lambda frame: J)
        kd._id_single = lambda base_acc, s_ddot: x
        kd._fd_single = lambda t: x
        return kd


def timed(fns: dict[str, Callable], calls: int, repeats: int) -> dict[str, float]:
    """Time per call of each function in its best block, the functions timed in turn, ``repeats``
    blocks of ``calls`` calls each."""
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - t) / calls)
    return {k: min(v) for k, v in samples.items()}


def rel(a: np.ndarray, b: np.ndarray) -> float:
    """``|a - b| / max(1, |b|)`` (Frobenius)."""
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(1.0, np.linalg.norm(b)))


def steady_state() -> None:
    """Time the engines as a long loop runs them: their compiled kernels (numba), which a process
    loads only after ``COMPILE_AFTER`` states (:data:`bridge.backends.single.COMPILE_AFTER`), from
    the first state on (a checkout without the rule is left as it is)."""
    try:
        from bridge.backends.single import LibrarySingleState
    except ImportError:  # pragma: no cover - an older checkout
        return
    LibrarySingleState.COMPILE_AFTER = 0


def main(
    description: str,
    library: str,
    implementations: Callable[[str, str], tuple[dict, dict]],
    argv: list[str] | None = None,
) -> int:
    """Parse the command line, time every case and print the table (``implementations(robot, rep)``
    gives ``({quantity: {"bridge"|"raw"|"floor": fn}}, {what: relative difference})``)."""
    steady_state()
    p = argparse.ArgumentParser(description=description)
    p.add_argument("robots", nargs="*", default=list(FEET))
    p.add_argument("--reps", nargs="*", default=["mixed", "body", "inertial"])
    p.add_argument("--calls", type=int, default=50, help="calls per timed block")
    p.add_argument("--repeats", type=int, default=100, help="timed blocks per implementation")
    p.add_argument("--json", type=Path, help="write the times here")
    p.add_argument("--before", type=Path, help="times of an earlier run (--json) to show next to these")
    args = p.parse_args(argv)
    before = json.loads(args.before.read_text()) if args.before else {}
    print(f"{library}, bridge from {Path(bridge.__file__).parent.parent}; one state a call, best block")
    head = "| robot | rep | quantity | raw (us) | floor (us) | bridge (us) | bridge / raw "
    head += "| (bridge - floor) / raw |"
    sep = "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"
    if before:
        head += " before (us) | before / raw |"
        sep += " ---: | ---: |"
    print(head)
    print(sep)
    out, worst = {}, 0.0
    for robot in args.robots:
        for rep in args.reps:
            fns, check = implementations(robot, rep)
            worst = max(worst, *check.values())
            for quantity in QUANTITIES:
                t = timed(fns[quantity], args.calls, args.repeats)
                key = f"{robot}/{rep}/{quantity}"
                out[key] = t
                r, f, b = t["raw"], t["floor"], t["bridge"]
                line = (
                    f"| {robot} | {rep} | {quantity} | {r * 1e6:.1f} | {f * 1e6:.1f} | {b * 1e6:.1f} "
                    f"| {b / r:.2f}x | {(b - f) / r:.2f}x |"
                )
                if key in before:
                    old = before[key]["bridge"]
                    line += f" {old * 1e6:.1f} | {old / r:.2f}x |"
                print(line, flush=True)
    print(f"\nLargest relative difference of the raw results from bridge's: {worst:.1e}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0
