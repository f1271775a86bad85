#!/usr/bin/env python
"""How bridge's Featherstone engine scales: long chains and very large batches.

Run from a checkout (after the README set-up)::

    python benchmarks/featherstone_scale.py                       # both parts, defaults below
    python benchmarks/featherstone_scale.py chain --links 500 1000 2000 5000
    python benchmarks/featherstone_scale.py batch --sizes 1000 10000 100000 --quantities M FD

Every measurement runs in a fresh interpreter (a subprocess of this script), so that one
measurement's memory and caches do not affect the next.

* ``chain``: a serial chain of n revolute links on a floating base
  (``bridge.random_model(n, seed=0, joint_kinds=("revolute",), branching=0.0)``). It times, wall
  clock: ``KinDyn(model, engine="featherstone")`` (the construction: Featherstone model, compiled
  tree), the first ``mass_matrix()`` after a ``set_state`` (it builds the CRBA's plan: O(n^2) for a
  chain, like the matrix itself), a second ``mass_matrix()`` at another state, and
  ``forward_dynamics``; with ``--idyntree``, iDynTree's ``KinDynComputations`` construction from
  the same model (``bridge.to_idyntree``) for reference.
* ``batch``: iCub (icub-models ``iCubGazeboV2_5``, 32 DOFs, nv = 38),
  ``KinDyn(model, engine="featherstone")`` in the MIXED representation, N random states set at once
  (arrays (N, ...)); ``M`` is ``mass_matrix()``, ``FD`` is ``forward_dynamics(joint_torques)``
  (N, 32). Reported: the output's size, the peak memory *above* what the process held just before
  ``set_state`` (``ru_maxrss`` difference; the inputs are allocated before), the peak of the
  arrays allocated during the call (``tracemalloc``, a second call), and the time per state of
  ``set_state`` plus the query (the best of a few calls for N < 100,000, one call otherwise), after
  small calls (1 and 64 states) that take imports and the loading of compiled code out; then the
  times of later calls in the same process (``--repeat``, default 1; each call frees the previous
  call's result), and, in another fresh process right after, the time to write a new array
  of the mass matrices' size once (the first touch of its pages: on a virtual machine this alone
  varies from about 1 to 30 µs per state at N = 100,000 with the host's memory pressure, and bounds
  the first call from below).

Output: markdown tables on stdout and the raw numbers in
``benchmarks/results/featherstone_scale.json`` (or ``--json PATH``).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

MB = 1024.0 * 1024.0


# --------------------------------------------------------------------------- workers (subprocesses)
def _chain_worker(n: int, idyntree: bool) -> dict:
    import numpy as np

    import bridge

    model = bridge.random_model(n, seed=0, joint_kinds=("revolute",), branching=0.0)
    out: dict = {"links": n, "nv": model.nv}
    t0 = time.perf_counter()
    kd = bridge.KinDyn(model, engine="featherstone")
    out["construct"] = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    k = model.n_dofs

    def state():
        kd.set_state(np.eye(4), rng.uniform(-1, 1, k), rng.normal(size=6), rng.normal(size=k))

    state()
    t0 = time.perf_counter()
    kd.mass_matrix()
    out["first_M"] = time.perf_counter() - t0
    state()
    t0 = time.perf_counter()
    kd.mass_matrix()
    out["M"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    kd.forward_dynamics(rng.normal(size=k))
    out["FD"] = time.perf_counter() - t0
    if idyntree:
        import idyntree.bindings as idt

        t0 = time.perf_counter()
        kdc = idt.KinDynComputations()
        kdc.loadRobotModel(bridge.to_idyntree(model))
        out["idyntree_construct"] = time.perf_counter() - t0
    return out


def _batch_worker(quantity: str, N: int, robot: str, repeat: int = 1) -> dict:
    import resource
    import tracemalloc

    import numpy as np

    import bridge
    from bridge.robots import robot_path
    from bridge.spatial.so3 import so3_exp

    model = bridge.load_urdf(robot_path(robot))
    kd = bridge.KinDyn(model, engine="featherstone", representation="mixed")
    rng = np.random.default_rng(0)
    k = model.n_dofs
    H = np.zeros((N, 4, 4))
    H[:, :3, :3] = so3_exp(rng.normal(size=(N, 3)))
    H[:, :3, 3] = rng.normal(size=(N, 3))
    H[:, 3, 3] = 1.0
    s = rng.uniform(-1.0, 1.0, (N, k))
    vb = rng.normal(size=(N, 6))
    sd = rng.normal(size=(N, k))
    tau = rng.normal(size=(N, k))
    # small calls first: imports, the compiled tree and the compiled kernels (serial and parallel,
    # loaded from numba's cache) are then ready
    for n in (1, 64):
        kd.set_state(H[:n], s[:n], vb[:n], sd[:n])
        kd.mass_matrix()
        kd.forward_dynamics(tau[:n])

    def call():
        kd.set_state(H, s, vb, sd)
        if quantity == "M":
            return kd.mass_matrix()
        return kd.forward_dynamics(tau)

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    t0 = time.perf_counter()
    r = call()
    first = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    nbytes = r.nbytes
    finite = bool(np.isfinite(r).all())
    del r
    times = [first]
    if N < 100_000:
        for _ in range(4 if N >= 10_000 else 9):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
    later = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        later.append((time.perf_counter() - t0) / N * 1e6)
    tracemalloc.start()
    call()
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "quantity": quantity,
        "N": N,
        "output_MB": nbytes / MB,
        "rss_peak_extra_MB": (rss1 - rss0) / MB,
        "traced_peak_MB": traced / MB,
        "us_per_state": min(times) / N * 1e6,
        "second_us_per_state": later[0],
        "later_us_per_state": later,
        "finite": finite,
    }


def _touch_worker(N: int, robot: str) -> dict:
    """The floor of a first call: a new array of the mass matrices' size written once (its pages
    touched for the first time), in a fresh process."""
    import numpy as np

    import bridge
    from bridge.robots import robot_path

    nv = bridge.load_urdf(robot_path(robot)).nv
    t0 = time.perf_counter()
    a = np.empty((N, nv, nv))
    a.fill(1.0)
    return {"N": N, "touch_us_per_state": (time.perf_counter() - t0) / N * 1e6}


# --------------------------------------------------------------------------- driver
def _run(args: list[str]) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1], "args": args}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        kind, *rest = argv[1:]
        if kind == "chain":
            res = _chain_worker(int(rest[0]), rest[1] == "1")
        elif kind == "touch":
            res = _touch_worker(int(rest[0]), rest[1])
        else:
            res = _batch_worker(rest[0], int(rest[1]), rest[2], int(rest[3]))
        print(json.dumps(res))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", nargs="?", choices=["chain", "batch", "all"], default="all")
    parser.add_argument("--links", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    parser.add_argument("--idyntree", action="store_true", help="also time iDynTree's construction")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--quantities", nargs="+", choices=["M", "FD"], default=["M", "FD"])
    parser.add_argument("--robot", default="iCubGazeboV2_5")
    parser.add_argument(
        "--repeat", type=int, default=1, help="later calls timed in the same process (batch; default 1)"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=Path(__file__).parent / "results" / "featherstone_scale.json",
        help="where to write the raw numbers",
    )
    args = parser.parse_args(argv)
    import numpy as np

    result: dict = {"python": platform.python_version(), "numpy": np.__version__, "chain": [], "batch": []}
    if args.part in ("chain", "all"):
        print(
            "| links | nv | KinDyn construction [s] | first M [s] | M [s] | FD [s] |"
            + (" iDynTree construction [s] |" if args.idyntree else "")
        )
        print("|--:|--:|--:|--:|--:|--:|" + ("--:|" if args.idyntree else ""))
        for n in args.links:
            r = _run(["chain", str(n), "1" if args.idyntree else "0"])
            result["chain"].append(r)
            if "error" in r:
                print(f"| {n} | error: {r['error']} |")
                continue
            line = (
                f"| {n} | {r['nv']} | {r['construct']:.3f} | {r['first_M']:.3f} | {r['M']:.3f} "
                f"| {r['FD']:.3f} |"
            )
            if args.idyntree:
                line += f" {r['idyntree_construct']:.3f} |"
            print(line, flush=True)
        print()
    if args.part in ("batch", "all"):
        print(
            "| quantity | N | output [MB] | peak above start (max RSS) [MB] | peak of traced arrays [MB] "
            "| µs per state | later calls: µs per state | first touch of M's size: µs per state |"
        )
        print("|---|--:|--:|--:|--:|--:|--:|--:|")
        for q in args.quantities:
            for N in args.sizes:
                r = _run(["batch", q, str(N), args.robot, str(max(args.repeat, 1))])
                result["batch"].append(r)
                if "error" in r:
                    print(f"| {q} | {N} | error: {r['error']} |")
                    continue
                touch = _run(["touch", str(N), args.robot])  # (right after: the same memory pressure)
                r["touch_us_per_state"] = touch.get("touch_us_per_state", float("nan"))
                print(
                    f"| {q} | {N:,} | {r['output_MB']:.1f} | {r['rss_peak_extra_MB']:.0f} | "
                    f"{r['traced_peak_MB']:.0f} | {r['us_per_state']:.2f} | "
                    f"{', '.join(f'{t:.2f}' for t in r['later_us_per_state'])} | "
                    f"{r['touch_us_per_state']:.2f} |",
                    flush=True,
                )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
