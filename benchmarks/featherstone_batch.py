#!/usr/bin/env python
"""Per-state time of bridge's batched Featherstone algorithms next to Pinocchio.

Run from a checkout (after the README set-up)::

    python benchmarks/featherstone_batch.py            # N in 1, 64, 1024, 8192 on iCub
    python benchmarks/featherstone_batch.py --quick    # shorter timing runs
    python benchmarks/featherstone_batch.py --robot talos_reduced --sizes 1 256 4096

Algorithms (floating base, the same model for both libraries: ``bridge.to_featherstone(model)`` and
``bridge.to_pinocchio(model)`` of ``bridge.load_urdf(robot)``):

* ``RNEA``: inverse dynamics with a given base acceleration — bridge's
  :func:`~bridge.backends.featherstone.spatial_v2.IDfree` on a batch, Pinocchio's ``rnea``;
* ``CRBA``: the joint-space inertia matrix — bridge's ``CRBA(model, q, xfb)`` (full symmetric
  matrix), Pinocchio's ``crba`` (upper triangle);
* ``ABA``: forward dynamics with an unactuated base — bridge's ``FDfb``, Pinocchio's ``aba``.

For each batch size N: bridge called once on the whole batch (arrays (N, k) in, (N, k) out: the
conversions of the public API are included), by its compiled kernels (numba, parallel over the
batch on ``--threads`` threads: ``bridge.backends.featherstone.compiled``; "n/a" without numba) and
by its numpy kernels (``compiled.numpy_only()``); Pinocchio called in a Python loop over the N
states (inputs already in Pinocchio's (q, v) layout); and Pinocchio's ``rneaInParallel`` /
``abaInParallel`` (a C++ thread pool over the batch, ``--threads`` threads) where this Pinocchio
has them (Pinocchio 4.1 has no ``crbaInParallel``: "n/a"). The last column is the target ratio:
bridge (compiled, else numpy) over Pinocchio's parallel call, or over its loop where it has none
(at most 1: bridge is as fast). Before timing, bridge's results are checked against Pinocchio's
(converted through bridge's Featherstone state, acceleration and force maps) and the worst relative
difference is reported.

The implementations are timed interleaved: each of several rounds times every implementation once
(at least ~0.2 s each, 0.05 s with --quick), and each keeps its best round (time per state, garbage
collection off), so that a busy machine slows all of them alike. Output: a markdown table on stdout
and the raw numbers in ``benchmarks/results/featherstone_batch.json`` (or ``--json PATH``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import bridge
from bridge.backends.featherstone import (
    CRBA,
    FDfb,
    IDfree,
    compiled,
    featherstone_velocity_transform,
    to_featherstone,
    to_featherstone_acceleration,
    to_featherstone_force,
    to_featherstone_state,
)
from bridge.backends.pinocchio import from_pinocchio_state, pinocchio_layout, to_pinocchio
from bridge.robots import robot_path


def _best_times(fns: dict, n_states: int, min_seconds: float, rounds: int = 5) -> dict:
    """Best time per state (seconds) of each ``fns[name]()`` processing ``n_states`` states (None
    for a None entry), timed interleaved: each round runs every function once."""
    live = {k: f for k, f in fns.items() if f is not None}
    loops = {}
    for k, fn in live.items():
        fn()  # warm-up
        t0 = time.perf_counter()
        fn()
        loops[k] = max(1, int(min_seconds / max(time.perf_counter() - t0, 1e-7)))
    best = dict.fromkeys(live, float("inf"))
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for k, fn in live.items():
                t0 = time.perf_counter()
                for _ in range(loops[k]):
                    fn()
                best[k] = min(best[k], (time.perf_counter() - t0) / loops[k])
    finally:
        if gc_was:
            gc.enable()
    return {k: (best[k] / n_states if k in best else None) for k in fns}


def _numpy(fn):
    """``fn`` run by bridge's numpy kernels."""

    def run():
        with compiled.numpy_only():
            return fn()

    return run


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(1.0, np.linalg.norm(b)))


def _states(model, pm, N: int, rng: np.random.Generator):
    """Random Pinocchio states (N, nq), (N, nv) x3 and the matching Featherstone arrays."""
    import pinocchio as pin

    lo = np.maximum(pm.lowerPositionLimit, -np.pi)
    hi = np.minimum(pm.upperPositionLimit, np.pi)
    lo[:3], hi[:3] = -1.0, 1.0
    Q = np.stack([pin.randomConfiguration(pm, lo, hi) for _ in range(N)])
    V, A, T = (rng.normal(size=(N, pm.nv)) for _ in range(3))
    T[:, :6] = 0.0  # the base is unactuated in ABA
    st = from_pinocchio_state(model, Q, V, "body")
    xfb, q, qd = to_featherstone_state(model, st)
    lay = pinocchio_layout(model)
    inv = np.argsort(lay.perm)
    nd = np.concatenate([A[:, :6], A[:, 6:][:, inv]], axis=1)  # BODY acceleration, model DOF order
    a_fb, qdd = to_featherstone_acceleration(model, st, nd)
    tau_q = to_featherstone_force(model, st, np.concatenate([T[:, :6], T[:, 6:][:, inv]], axis=1))[1]
    return dict(Q=Q, V=V, A=A, T=T, st=st, xfb=xfb, q=q, qd=qd, a_fb=a_fb, qdd=qdd, tau=tau_q, inv=inv)


def _check(model, fm, pm, s) -> dict[str, float]:
    """Worst relative difference bridge vs Pinocchio on the batch ``s``."""
    import pinocchio as pin

    data = pm.createData()
    N = s["Q"].shape[0]
    inv = s["inv"]
    # RNEA: Pinocchio's (LOCAL base wrench, joints) -> neutral BODY order -> Featherstone
    tau_pin = np.stack([pin.rnea(pm, data, s["Q"][i], s["V"][i], s["A"][i]).copy() for i in range(N)])
    tau_neutral = np.concatenate([tau_pin[:, :6], tau_pin[:, 6:][:, inv]], axis=1)
    f_ref, t_ref = to_featherstone_force(model, s["st"], tau_neutral)
    f_fb, tau = IDfree(fm, s["xfb"], s["q"], s["qd"], s["a_fb"], s["qdd"])
    rnea = max(_rel(f_fb, f_ref), _rel(tau, t_ref))
    # CRBA: H_F back to the neutral BODY representation and compared with Pinocchio's M
    ft = featherstone_velocity_transform(model, s["st"])
    M = ft.matrix_back(CRBA(fm, s["q"], s["xfb"]))
    M_pin = np.stack([pin.crba(pm, data, s["Q"][i]).copy() for i in range(N)])
    M_pin = np.triu(M_pin) + np.swapaxes(np.triu(M_pin, 1), -1, -2)
    idx = np.concatenate([np.arange(6), 6 + inv])
    crba = _rel(M, M_pin[:, idx[:, None], idx[None, :]])
    # ABA: Pinocchio's LOCAL acceleration -> Featherstone (a_fb, qdd)
    a_pin = np.stack([pin.aba(pm, data, s["Q"][i], s["V"][i], s["T"][i]).copy() for i in range(N)])
    nd = np.concatenate([a_pin[:, :6], a_pin[:, 6:][:, inv]], axis=1)
    a_ref, qdd_ref = to_featherstone_acceleration(model, s["st"], nd)
    xdfb, qdd = FDfb(fm, s["xfb"], s["q"], s["qd"], s["tau"])
    aba = max(_rel(xdfb[:, 7:], a_ref), _rel(qdd, qdd_ref))
    return {"RNEA": rnea, "CRBA": crba, "ABA": aba}


def _time_size(model, fm, pm, data, pool, threads: int, N: int, rng, min_seconds: float) -> dict:
    """Per-state times (seconds) of every implementation for one batch size."""
    import pinocchio as pin

    s = _states(model, pm, N, rng)
    Q, V, A, T = s["Q"], s["V"], s["A"], s["T"]
    QT, VT, AT, TT = (np.asfortranarray(x.T) for x in (Q, V, A, T))
    xfb, q, qd, a_fb, qdd, tau = (s[k] for k in ("xfb", "q", "qd", "a_fb", "qdd", "tau"))

    def pin_loop(fn, *arrays):
        def run():
            for i in range(N):
                fn(pm, data, *(x[i] for x in arrays))

        return run

    def parallel(name: str, *arrays):
        fn = getattr(pin, name, None)
        if pool is None or fn is None:
            return None
        return lambda: fn(threads, pool, *arrays)

    def impls(bridge_fn, loop, par):
        return _best_times(
            {
                "bridge compiled": bridge_fn if compiled.available() else None,
                "bridge numpy": _numpy(bridge_fn),
                "pinocchio loop": loop,
                "pinocchio parallel": par,
            },
            N,
            min_seconds,
        )

    return {
        "RNEA": impls(
            lambda: IDfree(fm, xfb, q, qd, a_fb, qdd),
            pin_loop(pin.rnea, Q, V, A),
            parallel("rneaInParallel", QT, VT, AT),
        ),
        "CRBA": impls(lambda: CRBA(fm, q, xfb), pin_loop(pin.crba, Q), parallel("crbaInParallel", QT)),
        "ABA": impls(
            lambda: FDfb(fm, xfb, q, qd, tau),
            pin_loop(pin.aba, Q, V, T),
            parallel("abaInParallel", QT, VT, TT),
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="iCubGazeboV2_5", help="robot name (bridge.robots)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 8192], help="batch sizes N")
    parser.add_argument("--quick", action="store_true", help="short timing runs")
    parser.add_argument(
        "--threads", type=int, default=os.cpu_count() or 1, help="threads of numba and of Pinocchio's pool"
    )
    parser.add_argument(
        "--mimic-independent",
        action="store_true",
        help="load mimic joints as independent DOFs (as Pinocchio and iDynTree do; e.g. talos, romeo)",
    )
    parser.add_argument(
        "--allow-nonphysical", action="store_true", help="accept non-physical inertias (e.g. anymal)"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=Path(__file__).parent / "results" / "featherstone_batch.json",
        help="where to write the raw numbers",
    )
    args = parser.parse_args(argv)

    import pinocchio as pin

    model = bridge.load_urdf(
        robot_path(args.robot),
        mimic="independent" if args.mimic_independent else "error",
        check_inertia=not args.allow_nonphysical,
    )
    if not model.floating:  # pragma: no cover - the default robots are floating
        raise SystemExit(f"{args.robot}: this benchmark needs a floating-base robot")
    fm = to_featherstone(model)
    pm = to_pinocchio(model)
    data = pm.createData()
    threads = args.threads
    if compiled.available():
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    pool = pin.ModelPool(pm, threads) if hasattr(pin, "ModelPool") else None
    min_seconds = 0.05 if args.quick else 0.2
    rng = np.random.default_rng(0)

    check = _check(model, fm, pm, _states(model, pm, 16, rng))
    rows = []
    for N in args.sizes:
        timings = _time_size(model, fm, pm, data, pool, threads, N, rng, min_seconds)
        for algo, t in timings.items():
            rows.append(
                {"N": N, "algorithm": algo, **{k: (None if v is None else v * 1e6) for k, v in t.items()}}
            )
            print(
                f"N={N:5d} {algo}: " + ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in t.items() if v),
                file=sys.stderr,
            )

    def fmt(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.2f}"

    lines = [
        f"Per-state time (microseconds) on {args.robot} (nq = {pm.nq}, nv = {pm.nv}, {fm.NB} Featherstone "
        f"bodies), pinocchio {pin.__version__}, numpy {np.__version__}, {threads} thread(s) on "
        f"{os.cpu_count()} CPU(s)",
        "",
        "| N | algorithm | bridge compiled | bridge numpy | Pinocchio, Python loop | Pinocchio *InParallel | "
        "bridge / Pinocchio (target <= 1) |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ours = r["bridge compiled"] if r["bridge compiled"] is not None else r["bridge numpy"]
        ref = r["pinocchio parallel"] if r["pinocchio parallel"] is not None else r["pinocchio loop"]
        lines.append(
            f"| {r['N']} | {r['algorithm']} | {fmt(r['bridge compiled'])} | {fmt(r['bridge numpy'])} | "
            f"{fmt(r['pinocchio loop'])} | {fmt(r['pinocchio parallel'])} | {ours / ref:.2f} |"
        )
    lines.append("")
    lines.append(
        "Agreement with Pinocchio (worst relative difference, 16 states): "
        + ", ".join(f"{k} {v:.1e}" for k, v in check.items())
    )
    print("\n".join(lines))
    out = {
        "robot": args.robot,
        "nq": pm.nq,
        "nv": pm.nv,
        "featherstone_bodies": fm.NB,
        "threads": threads,
        "pinocchio": pin.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "quick": args.quick,
        "unit": "microseconds per state",
        "agreement": check,
        "rows": rows,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
