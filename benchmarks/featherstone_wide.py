#!/usr/bin/env python
"""Per-state time of the Featherstone engine on a model with wide joints next to a one-coordinate one.

Run from a checkout (after the README set-up)::

    python benchmarks/featherstone_wide.py                    # N in 1, 1024, 4096
    python benchmarks/featherstone_wide.py --sizes 1 256 --quick

Models (floating base, MIXED representation, ``KinDyn(model, engine="featherstone")``):

* ``wide``: ``bridge.random_model(30, 2, joint_kinds=("revolute",) * 10 + ("ball", "free"))``, nv 48
  (ball and free joints among revolute ones: the general engine, :mod:`bridge.backends.featherstone.
  general_engine`);
* ``one-coordinate``: ``bridge.random_model(42, 2, joint_kinds=("revolute",))``, nv 48 (the
  level-ordered compiled kernels).

For each batch size N, the time per state of ``set_state`` alone and of ``set_state`` followed by
one query (the engine keeps a query's answer until the next state, so each call sets the state
anew): ``ID`` (``inverse_dynamics``), ``M`` (``mass_matrix``), ``FD`` (``forward_dynamics`` of joint
torques); the query's own time is the difference. Each row is timed with bridge's compiled kernels
(numba, parallel over the batch: "compiled") and with its numpy kernels only
(``compiled.numpy_only()``: the wide model's path before its compiled CRBA and ABA), interleaved in
rounds, the best round kept. The last column is the ratio wide / one-coordinate (compiled). Output: a
markdown table on stdout and the raw numbers in ``benchmarks/results/featherstone_wide.json`` (or
``--json PATH``).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import time
from pathlib import Path

import numpy as np

import bridge
from bridge.backends.featherstone import compiled
from bridge.validation.sampling import random_states

QUERIES = ("set_state", "ID", "M", "FD")


def _models() -> dict[str, bridge.Model]:
    return {
        "wide": bridge.random_model(30, 2, joint_kinds=("revolute",) * 10 + ("ball", "free")),
        "one-coordinate": bridge.random_model(42, 2, joint_kinds=("revolute",)),
    }


def _calls(model: bridge.Model, N: int) -> dict:
    """``set_state`` and ``set_state`` + each query on N random states (MIXED)."""
    rng = np.random.default_rng(0)
    kd = bridge.KinDyn(model, engine="featherstone", representation="mixed")
    state = random_states(model, N, rng)
    base_acc, acc = rng.normal(size=(N, 6)), rng.normal(size=(N, model.n_dofs))
    tau = rng.normal(size=(N, model.n_dofs))

    def with_query(query):
        def run():
            kd.set_robot_state(state)
            return query()

        return run

    return {
        "set_state": lambda: kd.set_robot_state(state),
        "ID": with_query(lambda: kd.inverse_dynamics(base_acc, acc)),
        "M": with_query(kd.mass_matrix),
        "FD": with_query(lambda: kd.forward_dynamics(tau)),
    }


def _best(fns: dict, N: int, seconds: float, rounds: int = 5) -> dict[str, float]:
    """Best time per state (seconds) of each function, timed interleaved in rounds."""
    loops = {}
    for k, fn in fns.items():
        fn()  # warm-up (compilation, numba's cache)
        t0 = time.perf_counter()
        fn()
        loops[k] = max(1, int(seconds / max(time.perf_counter() - t0, 1e-7)))
    best = dict.fromkeys(fns, float("inf"))
    gc.disable()
    try:
        for _ in range(rounds):
            for k, fn in fns.items():
                t0 = time.perf_counter()
                for _ in range(loops[k]):
                    fn()
                best[k] = min(best[k], (time.perf_counter() - t0) / loops[k] / N)
    finally:
        gc.enable()
    return best


def _numpy(fn):
    def run():
        with compiled.numpy_only():
            return fn()

    return run


def measure(sizes: list[int], seconds: float) -> list[dict]:
    rows = []
    models = _models()
    for N in sizes:
        fns = {}
        for name, model in models.items():
            for q, fn in _calls(model, N).items():
                fns[(name, "compiled", q)] = fn if compiled.available() else None
                fns[(name, "numpy", q)] = _numpy(fn)
        live = {k: f for k, f in fns.items() if f is not None}
        best = _best(live, N, seconds)
        for name, model in models.items():
            for path in ("compiled", "numpy"):
                if (name, path, "set_state") not in best:
                    continue
                t = {q: best[(name, path, q)] * 1e6 for q in QUERIES}
                rows.append({"model": name, "nv": model.nv, "path": path, "N": N, "us_per_state": t})
    return rows


def _table(rows: list[dict]) -> str:
    head = (
        "| model | nv | path | N | set_state | ID | M | FD | M (query) | FD (query) "
        "| M, FD wide / one-coordinate |"
    )
    lines = [head, "|" + "---|" * 11]
    ref = {(r["N"], r["path"]): r for r in rows if r["model"] == "one-coordinate"}
    for r in rows:
        t = r["us_per_state"]
        other = ref.get((r["N"], "compiled"))
        ratio = ""
        if r["model"] == "wide" and other is not None:
            o = other["us_per_state"]
            ratio = f"{t['M'] / o['M']:.2f}, {t['FD'] / o['FD']:.2f}"
        lines.append(
            f"| {r['model']} | {r['nv']} | {r['path']} | {r['N']} | {t['set_state']:.1f} | {t['ID']:.1f} "
            f"| {t['M']:.1f} | {t['FD']:.1f} | {t['M'] - t['set_state']:.1f} "
            f"| {t['FD'] - t['set_state']:.1f} | {ratio} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 1024, 4096])
    parser.add_argument("--quick", action="store_true", help="shorter timing runs")
    parser.add_argument(
        "--json", type=Path, default=Path(__file__).parent / "results" / "featherstone_wide.json"
    )
    args = parser.parse_args(argv)
    rows = measure(args.sizes, 0.05 if args.quick else 0.2)
    print(_table(rows))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    meta = {"machine": platform.machine(), "python": platform.python_version(), "numba": compiled.available()}
    tmp = args.json.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    tmp.replace(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
