#!/usr/bin/env python
"""Single-state cost of ``KinDyn(engine="pinocchio")`` against raw Pinocchio, per representation and
query, with the floor of a Python call and iDynTree, on iCub (icub-models ``iCubGazeboV2_5``, nv 38).

Run from a checkout::

    python benchmarks/single_state.py                # this tree
    python benchmarks/single_state.py --compare /path/to/other/checkout   # before / after

For BODY, INERTIAL and MIXED it times, in one process, interleaved (each round runs every function
once for ~``--min-time`` seconds; the best round is reported, so a burst of load from other
processes hits all sides alike and is dropped):

* ``bundle``: ``set_state`` + ``mass_matrix`` + ``bias_forces`` + ``frame_jacobian("l_sole")``;
  raw Pinocchio: ``crba`` + ``nle`` + ``computeFrameJacobian`` (in the representation's frame:
  LOCAL, WORLD or LOCAL_WORLD_ALIGNED) on its own URDF model, q and v given (no state to set);
  iDynTree: ``setRobotState`` + ``getFreeFloatingMassMatrix`` + ``generalizedBiasForces`` +
  ``getFrameFreeFloatingJacobian`` (pre-allocated outputs, read into numpy).
* each query alone at a set state: ``set_state`` (raw: nothing), M (``crba``), h (``nle``), J
  (``computeFrameJacobian``), ID (``rnea``), FD (``aba``). M, h and J are cached per state by
  KinDyn: they are timed after emptying the cache (``kd._cache.clear()``, 40 ns, included).
* the floor of each kind of call: a Python method that does nothing, called with the same
  arguments (``set_state(H, s, v, s_dot)``, ``mass_matrix()``, ``inverse_dynamics(a_b, s_ddot)``,
  ...), returning a ready array: what any Python API pays per call. Next to it, the dispatch of a
  numba function that does nothing, with two array arguments (what each compiled kernel pays), and
  for M, h and J KinDyn's own call when the result is cached (the frame name checked, the cache
  looked up: what any call through bridge's API pays).
* derivatives: ``inverse_dynamics_derivatives`` / ``forward_dynamics_derivatives`` against
  ``computeRNEADerivatives`` / ``computeABADerivatives`` on the same state.

Targets (issue 32): bundle <= 1.3x raw and >= 4x faster than iDynTree; each query <= 1.3x raw +
floor; derivatives <= 1.15x. ``--compare`` runs this script alternately on this tree and on another
checkout (``PYTHONPATH`` set to it, in fresh processes) and prints both tables and the change.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPS = ("body", "inertial", "mixed")
QUERIES = ("bundle", "set_state", "M", "h", "J", "ID", "FD", "ID derivatives", "FD derivatives")
TARGET = {"bundle": 1.3, "ID derivatives": 1.15, "FD derivatives": 1.15}


def best_rounds(fns: dict[str, object], min_time: float, rounds: int) -> dict[str, float]:
    """Best per-call time (seconds) of each function over ``rounds`` interleaved rounds."""
    numbers = {}
    for label, fn in fns.items():
        fn()
        n, t = 1, 0.0
        while True:
            start = time.perf_counter()
            for _ in range(n):
                fn()
            t = time.perf_counter() - start
            if t >= min_time / 4:
                break
            n *= 4
        numbers[label] = max(1, int(n * min_time / max(t, 1e-9)))
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for label, fn in fns.items():
            n = numbers[label]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            best[label] = min(best[label], (time.perf_counter() - start) / n)
    return best


class _Noop:
    """The floor: methods of KinDyn's signatures that do nothing."""

    def __init__(self, nv: int) -> None:
        self._out = np.zeros(nv)

    def set_state(self, H, s, v, sd, gravity=None) -> None:
        return None

    def mass_matrix(self) -> np.ndarray:
        return self._out

    def inverse_dynamics(self, base_acc, s_ddot, external_wrenches=None) -> np.ndarray:
        return self._out

    def forward_dynamics(self, joint_torques, external_wrenches=None) -> np.ndarray:
        return self._out

    def frame_jacobian(self, frame: str) -> np.ndarray:
        return self._out


def numba_floor(min_time: float, rounds: int) -> float | None:
    """Per-call time of a numba function that does nothing, with two array arguments."""
    try:
        from numba import njit
    except ImportError:
        return None

    @njit
    def nop(a, b) -> None:
        return None

    a, b = np.zeros((38, 38)), np.zeros(200)
    return best_rounds({"nop": lambda: nop(a, b)}, min_time, rounds)["nop"]


def kernels_only(kd, H, s, vb, sd, frame: str):
    """The bundle as bare calls, or None without the compiled path: ``(kernels only, smallest API,
    smallest API's J)``.

    ``kernels only``: the engine's compiled ``set_state`` kernel, then its compiled queries (each
    Pinocchio's call followed by the kernel that converts its result, one Python frame: the closures
    of :mod:`bridge.backends.pinocchio.compiled`), from one Python function with every argument at
    hand (no API, no checks, no cache): the floor of this design, what any Python API converting
    Pinocchio's results with compiled kernels pays before its own calls. ``smallest API``: the same
    calls behind four methods doing the least a caching API must (``set_state`` empties the cache;
    each query looks it up, computes, marks the result read-only and stores it); its J is also timed
    alone, after emptying its cache, as KinDyn's J is."""
    e = kd._engine
    kern = getattr(e, "_kern", None)
    if kern is None or getattr(e, "_mode", None) != "compiled":
        return None
    state, set_kernel = kern.states[0][0], kern.k.set_state
    queries = getattr(e, "_compiled_queries", None)
    if queries is None:  # (a checkout before the queries' namespace: bound on the engine)
        m_, h_, jac = e._mass_matrix_compiled, e._bias_forces_compiled, e._frame_jacobian_compiled
    else:
        m_, h_, jac = queries.mass_matrix, queries.bias_forces, queries.frame_jacobian

    def bundle():
        set_kernel(H, s, vb, sd, state)
        m_(), h_(), jac(frame)

    class SmallestApi:
        def __init__(self) -> None:
            self._cache: dict = {}

        def set_state(self, H, s, vb, sd) -> None:
            if set_kernel(H, s, vb, sd, state):
                self._cache = {}

        def _query(self, key, call, *args):
            value = self._cache.get(key)
            if value is None:
                value = call(*args)
                value.setflags(False)
                self._cache[key] = value
            return value

        def mass_matrix(self):
            return self._query("M", m_)

        def bias_forces(self):
            return self._query("h", h_)

        def frame_jacobian(self, frame):
            return self._query(("J", frame), jac, frame)

    api = SmallestApi()

    def smallest():
        api.set_state(H, s, vb, sd)
        api.mass_matrix(), api.bias_forces(), api.frame_jacobian(frame)

    def smallest_j():
        api._cache.clear()
        return api.frame_jacobian(frame)

    return bundle, smallest, smallest_j


def measure(args) -> dict:
    import pinocchio as pin
    from run import ROBOTS, IDynTree, PinocchioFloor, make_inputs, robot_file

    import bridge

    robot = ROBOTS[0]  # iCub
    path = robot_file(robot)
    model = bridge.load_urdf(path, floating=True, mimic="independent")
    x = make_inputs(model, seed=1)
    raw = PinocchioFloor(model, robot, path, x)
    pm, d, q, fid = raw.pm, raw.d, raw.q, raw.fid
    rng = np.random.default_rng(0)
    v, a = rng.normal(size=pm.nv), rng.normal(size=pm.nv)
    tau = np.concatenate([np.zeros(6), x.tau])
    idyn = IDynTree(model, robot, path, x).calls["bundle"]
    H, s, vb, sd, ba, sdd, tq = x.H, x.s, x.v, x.sd, x.base_acc, x.sdd, x.tau
    frame = robot.frame
    noop = _Noop(model.nv)
    out: dict = {"bridge": bridge.__file__, "nv": model.nv, "times": {}}
    compiled = None
    for rep in REPS:
        ref = {"body": pin.LOCAL, "inertial": pin.WORLD, "mixed": pin.LOCAL_WORLD_ALIGNED}[rep]
        kd = bridge.KinDyn(model, "pinocchio", rep)
        for _ in range(getattr(kd._engine, "COMPILE_AFTER", 0) + 1):  # (the compiled path, if any)
            kd.set_state(H, s, vb, sd)
        compiled = getattr(kd._engine, "_mode", None) == "compiled"

        def bundle(kd=kd):
            kd.set_state(H, s, vb, sd)
            kd.mass_matrix(), kd.bias_forces(), kd.frame_jacobian(frame)

        def one(fn, kd=kd):
            def call():
                kd._cache.clear()
                return fn()

            return call

        fns = {
            ("bundle", "bridge"): bundle,
            ("bundle", "raw"): lambda ref=ref: (
                pin.crba(pm, d, q),
                pin.nle(pm, d, q, v),
                pin.computeFrameJacobian(pm, d, q, fid, ref),
            ),
            ("bundle", "iDynTree"): idyn,
            ("bundle", "floor"): lambda: (
                noop.set_state(H, s, vb, sd),
                noop.mass_matrix(),
                noop.mass_matrix(),
                noop.frame_jacobian(frame),
            ),
            ("set_state", "bridge"): lambda kd=kd: kd.set_state(H, s, vb, sd),
            ("set_state", "floor"): lambda: noop.set_state(H, s, vb, sd),
            ("M", "bridge"): one(kd.mass_matrix),
            ("M", "raw"): lambda: pin.crba(pm, d, q),
            ("M", "floor"): noop.mass_matrix,
            ("M", "cached"): kd.mass_matrix,
            ("h", "bridge"): one(kd.bias_forces),
            ("h", "raw"): lambda: pin.nle(pm, d, q, v),
            ("h", "floor"): noop.mass_matrix,
            ("h", "cached"): kd.bias_forces,
            ("J", "bridge"): one(lambda kd=kd: kd.frame_jacobian(frame)),
            ("J", "raw"): lambda ref=ref: pin.computeFrameJacobian(pm, d, q, fid, ref),
            ("J", "floor"): lambda: noop.frame_jacobian(frame),
            ("J", "cached"): lambda kd=kd: kd.frame_jacobian(frame),
            ("ID", "bridge"): lambda kd=kd: kd.inverse_dynamics(ba, sdd),
            ("ID", "raw"): lambda: pin.rnea(pm, d, q, v, a),
            ("ID", "floor"): lambda: noop.inverse_dynamics(ba, sdd),
            ("FD", "bridge"): lambda kd=kd: kd.forward_dynamics(tq),
            ("FD", "raw"): lambda: pin.aba(pm, d, q, v, tau),
            ("FD", "floor"): lambda: noop.forward_dynamics(tq),
            ("ID derivatives", "bridge"): lambda kd=kd: kd.inverse_dynamics_derivatives(ba, sdd),
            ("ID derivatives", "raw"): lambda: pin.computeRNEADerivatives(pm, d, q, v, a),
            ("FD derivatives", "bridge"): lambda kd=kd: kd.forward_dynamics_derivatives(tq),
            ("FD derivatives", "raw"): lambda: pin.computeABADerivatives(pm, d, q, v, tau),
        }
        floors = kernels_only(kd, H, s, vb, sd, frame)
        if floors is not None:
            fns["bundle", "kernels only"], fns["bundle", "smallest API"], fns["J", "smallest API"] = floors
        t = best_rounds(fns, args.min_time, args.rounds)
        table = out["times"][rep] = {}
        for (quantity, side), value in t.items():
            table.setdefault(quantity, {})[side] = value
    out["compiled"] = compiled
    out["numba floor"] = numba_floor(args.min_time, args.rounds)
    return out


def _us(t: float | None) -> str:
    return "" if t is None else f"{t * 1e6:.2f}"


def verdict(quantity: str, t: dict) -> tuple[str, str]:
    """(the ratio shown, pass/miss) of one row."""
    b, raw, floor = t.get("bridge"), t.get("raw"), t.get("floor")
    if b is None:
        return "", ""
    if quantity == "set_state":
        return f"{b / floor:.1f}x floor", ""
    if quantity in TARGET:
        limit = TARGET[quantity] * raw
        ok = b <= limit and (quantity != "bundle" or t["iDynTree"] >= 4 * b)
        return f"{b / raw:.2f}", "yes" if ok else "no"
    limit = 1.3 * raw + floor
    return f"{b / raw:.2f} ({b / limit:.2f} of 1.3 raw + floor)", "yes" if b <= limit else "no"


def markdown(result: dict, label: str) -> str:
    lines = [
        f"{label}: bridge {result['bridge']} (nv {result['nv']}, compiled path: {result['compiled']}); "
        f"numba no-op dispatch (2 arrays): {_us(result['numba floor'])} us",
        "",
        "| rep | query | raw Pinocchio [us] | bridge [us] | no-op floor [us] | cached call [us] "
        "| iDynTree [us] | bridge / raw | iDynTree / bridge | target met |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|:-:|",
    ]
    for rep, table in result["times"].items():
        for quantity in QUERIES:
            t = table[quantity]
            ratio, ok = verdict(quantity, t)
            idyn = t.get("iDynTree")
            vs = f"{idyn / t['bridge']:.2f}" if idyn else ""
            lines.append(
                f"| {rep} | {quantity} | {_us(t.get('raw'))} | {_us(t['bridge'])} | {_us(t.get('floor'))} "
                f"| {_us(t.get('cached'))} | {_us(idyn)} | {ratio} | {vs} | {ok} |"
            )
    lines += [
        "",
        "The bundle's floor in this design (``kernels only``: the compiled set_state kernel, then each "
        "Pinocchio call and the kernel converting its result, bare, from one Python function; "
        "``smallest API``: the same behind four methods doing the least a caching API must):",
        "",
        "| rep | raw Pinocchio [us] | kernels only [us] | smallest API [us] | bridge [us] "
        "| kernels only / raw | smallest API / raw | bridge / raw |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for rep, table in result["times"].items():
        t = table["bundle"]
        floor, api = t.get("kernels only"), t.get("smallest API")
        if floor is not None:
            api_ratio = f"{api / t['raw']:.2f}" if api else ""
            lines.append(
                f"| {rep} | {_us(t['raw'])} | {_us(floor)} | {_us(api)} | {_us(t['bridge'])} "
                f"| {floor / t['raw']:.2f} | {api_ratio} | {t['bridge'] / t['raw']:.2f} |"
            )
    lines += [
        "",
        "J through the smallest caching API (the same method, its cache emptied before each call):",
        "",
        "| rep | raw Pinocchio [us] | limit (1.3 raw + floor) [us] | smallest API [us] | bridge [us] |",
        "|---|--:|--:|--:|--:|",
    ]
    for rep, table in result["times"].items():
        t = table["J"]
        if t.get("smallest API") is not None:
            limit = 1.3 * t["raw"] + t["floor"]
            lines.append(
                f"| {rep} | {_us(t['raw'])} | {_us(limit)} | {_us(t['smallest API'])} | {_us(t['bridge'])} |"
            )
    return "\n".join(lines)


def compare(before: dict, after: dict) -> str:
    lines = [
        "| rep | query | before [us] | after [us] | before / raw | after / raw | speed-up |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for rep in REPS:
        for quantity in QUERIES:
            b, a = before["times"][rep][quantity], after["times"][rep][quantity]
            raw_b, raw_a = b.get("raw"), a.get("raw")
            rb = f"{b['bridge'] / raw_b:.2f}" if raw_b else ""
            ra = f"{a['bridge'] / raw_a:.2f}" if raw_a else ""
            lines.append(
                f"| {rep} | {quantity} | {_us(b['bridge'])} | {_us(a['bridge'])} | {rb} | {ra} "
                f"| {b['bridge'] / a['bridge']:.2f} |"
            )
    return "\n".join(lines)


def _merge(runs: list[dict]) -> dict:
    """The best of each time over runs of one side."""
    out = json.loads(json.dumps(runs[0]))
    for run in runs[1:]:
        for rep, table in run["times"].items():
            for quantity, sides in table.items():
                for side, value in sides.items():
                    mine = out["times"][rep][quantity]
                    mine[side] = min(mine[side], value)
        if run["numba floor"] is not None:
            out["numba floor"] = min(out["numba floor"], run["numba floor"])
    return out


def run_compare(args) -> int:
    sides = {"before": str(Path(args.compare).resolve()), "after": str(HERE.parent)}
    runs: dict[str, list[dict]] = {k: [] for k in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.processes):
            for label, tree in sides.items():
                path = Path(tmp) / f"{label}{i}.json"
                env = dict(os.environ, PYTHONPATH=tree)
                cmd = [sys.executable, str(Path(__file__).resolve()), "--json", str(path)]
                cmd += ["--rounds", str(args.rounds), "--min-time", str(args.min_time)]
                subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
                runs[label].append(json.loads(path.read_text()))
                print(f"  {label} run {i + 1}/{args.processes} done", flush=True)
    before, after = _merge(runs["before"]), _merge(runs["after"])
    text = "\n\n".join([markdown(before, "before"), markdown(after, "after"), compare(before, after)])
    print(text)
    if args.out:
        Path(args.out).write_text(json.dumps({"before": before, "after": after}, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (best one reported)")
    parser.add_argument("--min-time", type=float, default=0.01, help="seconds per function per round")
    parser.add_argument("--json", help="write the raw numbers (seconds) here")
    parser.add_argument("--compare", help="another checkout: before / after, alternating processes")
    parser.add_argument("--processes", type=int, default=3, help="processes per side with --compare")
    parser.add_argument("--out", help="with --compare: the numbers of both sides (JSON)")
    args = parser.parse_args(argv)
    if args.compare:
        return run_compare(args)
    result = measure(args)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    print(markdown(result, "this run"))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
