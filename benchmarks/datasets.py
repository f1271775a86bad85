#!/usr/bin/env python
"""Datasets at scale: states per second per core for conversions and inverse-dynamics labels, the
scaling from 1 to 2 Dask workers, and peak memory against the number of states.

Run from a checkout (after the README set-up, with the ``datasets`` extra)::

    python benchmarks/datasets.py                        # every part, defaults below
    python benchmarks/datasets.py convert --states 1000000
    python benchmarks/datasets.py labels --states 100000
    python benchmarks/datasets.py scaling --states 200000
    python benchmarks/datasets.py memory --sizes 100000 1000000 10000000

Robot: iCub (icub-models ``iCubGazeboV2_5``, floating, 32 DOFs: nq = 39, nv = 38), random states
logged in MuJoCo's layout (``qpos``, ``qvel``, ``qacc``). Every measurement runs in a fresh
interpreter (a subprocess of this script), one thread for numpy, numba and Pinocchio
(``OMP_NUM_THREADS=1``, ``NUMBA_NUM_THREADS=1``), and is timed both by the wall clock and by the
process's CPU time (user, and user + system: the system time is mostly the first touch of the
output's pages): on a shared machine the CPU time is the per-core rate (states per CPU-second).

* ``convert``: MuJoCo -> Pinocchio, ``(qpos, qvel)`` -> ``(q, v)``. ``bridge.convert_states`` on
  (N, k) arrays (row-major in and out); the same conversion on columns (one array per coordinate:
  what the file pipeline does with a Parquet or CSV block, :class:`bridge.datasets.plan.StatePlan`);
  and a hand-written loop over Pinocchio's own calls (``pin.Quaternion``, its rotation, the
  joints gathered: what a user writes without bridge), on the first 20,000 states. There is no
  compiled (numba) conversion: the column algebra is a few passes over memory.
* ``labels``: inverse dynamics of N states with their accelerations, through
  ``bridge.compute(..., engine="featherstone")`` (the MuJoCo arrays converted, the labels in MIXED)
  with its compiled (numba) kernels and with its numpy kernels (``BRIDGE_NUMBA=0``), through
  ``engine="pinocchio"`` (KinDyn's batched Pinocchio path), and a hand-written loop of
  ``pin.rnea`` on states already in Pinocchio's layout (no conversion: the floor of the loop).
* ``scaling``: ``bridge.convert_dataset`` of a Parquet file of N states, MuJoCo -> Pinocchio with
  inverse-dynamics labels, in this process and on a ``LocalCluster`` of 1 and of 2 worker processes
  (the scheduler given to ``convert_dataset``), each after a warm-up conversion of 2,000 states (the
  cluster started, the workers' imports, model, KinDyn and compiled code loaded): states per
  second (wall clock), and per CPU-second of the workers (on a saturated host the wall clock does not
  show what a second free core gives; the CPU time does).
* ``memory``: ``bridge.convert_dataset`` Parquet -> Parquet, MuJoCo -> Pinocchio, of N states
  (the file made in blocks, the same 100,000 random states repeated): the peak resident memory of
  the converting process (``ru_maxrss``) against N, and the rate.

Output: markdown tables on stdout and the raw numbers in ``benchmarks/results/datasets.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROBOT = "iCubGazeboV2_5"
MB = 1024.0 * 1024.0
ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


# --------------------------------------------------------------------------- shared
def _states(n: int, seed: int = 0):
    """``(model, qpos, qvel, qacc)`` of ``n`` random iCub states in MuJoCo's layout (at most
    100,000 drawn, repeated)."""
    import numpy as np

    import bridge
    from bridge.conventions.native_state import to_native_state
    from bridge.conventions.registry import convention
    from bridge.validation.sampling import random_states

    model = bridge.load_urdf(ROBOT)
    m = min(n, 100_000)
    rng = np.random.default_rng(seed)
    q, v = to_native_state(model, random_states(model, m, rng), convention("mujoco"))
    a = rng.normal(size=v.shape)
    reps = -(-n // m)
    return model, *(np.ascontiguousarray(np.tile(x, (reps, 1))[:n]) for x in (q, v, a))


def _timed(fn) -> tuple[float, float, float]:
    """``(wall, user CPU, user + system CPU)`` seconds of ``fn()``."""
    import resource

    w, t0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    fn()
    t1 = resource.getrusage(resource.RUSAGE_SELF)
    user = t1.ru_utime - t0.ru_utime
    return time.perf_counter() - w, user, user + t1.ru_stime - t0.ru_stime


def _best(fn, rounds: int = 3) -> tuple[float, ...]:
    """The best wall and CPU times of a few calls."""
    times = [_timed(fn) for _ in range(rounds)]
    return tuple(min(t[i] for t in times) for i in range(3))


def _rates(n: int, times: tuple[float, ...]) -> dict:
    def rate(t: float) -> float:
        return n / t if t > 0 else float("inf")

    return {"wall": rate(times[0]), "cpu": rate(times[1]), "cpu+sys": rate(times[2])}


# --------------------------------------------------------------------------- workers
def _convert_worker(n: int) -> dict:
    import numpy as np
    import pinocchio as pin

    import bridge
    from bridge.backends.mujoco.state import mujoco_dof_permutation
    from bridge.backends.pinocchio.state import pinocchio_dof_permutation
    from bridge.datasets.plan import StatePlan

    model, Q, V, _ = _states(n)
    out: dict = {"states": n}
    bridge.convert_states(model, Q[:1000], V[:1000], "mujoco", "pinocchio")  # imports, plans
    out["arrays"] = _rates(n, _best(lambda: bridge.convert_states(model, Q, V, "mujoco", "pinocchio")))
    cols = {"q": list(np.ascontiguousarray(Q.T)), "v": list(np.ascontiguousarray(V.T))}
    plan = StatePlan(model, "mujoco", "pinocchio")
    rows = 1 << 16

    def columns() -> None:
        for s in range(0, n, rows):
            plan.convert({f: [c[s : s + rows] for c in cs] for f, cs in cols.items()})

    out["columns"] = _rates(n, _best(columns))
    # the hand-written loop (what a user writes): gather the joints, Pinocchio's quaternion
    inv = np.argsort(mujoco_dof_permutation(model))
    gather = inv[pinocchio_dof_permutation(model)]
    k = min(n, 20_000)
    Qk, Vk = Q[:k], V[:k]
    q_out, v_out = np.empty((k, 39)), np.empty((k, 38))

    def loop() -> None:
        for i in range(k):
            qpos, qvel = Qk[i], Vk[i]
            quat = pin.Quaternion(qpos[3], qpos[4], qpos[5], qpos[6])
            R = quat.toRotationMatrix()
            q_out[i] = np.concatenate((qpos[:3], quat.coeffs(), qpos[7:][gather]))
            v_out[i] = np.concatenate((R.T @ qvel[:3], qvel[3:6], qvel[6:][gather]))

    out["pinocchio loop"] = _rates(k, _best(loop, 2))
    ref = bridge.convert_states(model, Qk, Vk, "mujoco", "pinocchio")
    out["loop agrees"] = float(max(np.abs(ref.q - q_out).max(), np.abs(ref.v - v_out).max()))
    return out


def _labels_worker(n: int, how: str) -> dict:
    import numpy as np

    import bridge

    model, Q, V, A = _states(n)
    out: dict = {"states": n, "how": how}
    if how == "pinocchio loop":
        import pinocchio as pin

        pm = bridge.to_pinocchio(model)
        data = pm.createData()
        there = bridge.convert_states(model, Q, V, "mujoco", "pinocchio", acceleration=A)
        q, v, a = there.q, there.v, there.acceleration

        def loop() -> None:
            for i in range(n):
                pin.rnea(pm, data, q[i], v[i], a[i])

        out["rates"] = _rates(n, _best(loop, 2))
        return out
    engine = "pinocchio" if how == "pinocchio engine" else "featherstone"
    bridge.compute(
        model, (Q[:64], V[:64]), ["inverse_dynamics"], convention="mujoco", acceleration=A[:64], engine=engine
    )
    run = lambda: bridge.compute(  # noqa: E731
        model, (Q, V), ["inverse_dynamics"], convention="mujoco", acceleration=A, engine=engine
    )
    out["rates"] = _rates(n, _best(run, 2))
    out["finite"] = bool(np.isfinite(run()["inverse_dynamics"]).all())
    return out


def _write_parquet(path: Path, n: int) -> None:
    """A Parquet file of ``n`` states in MuJoCo's layout, written in blocks (the same 100,000
    states repeated)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bridge.datasets.convert import state_columns

    model, Q, V, A = _states(min(n, 100_000))
    names = [*state_columns(model, "mujoco", ("q", "v", "a"))]
    block = np.concatenate([Q, V, A], -1)
    writer = None
    done = 0
    while done < n:
        m = min(len(block), n - done)
        table = pa.table({name: np.ascontiguousarray(block[:m, j]) for j, name in enumerate(names)})
        writer = writer or pq.ParquetWriter(str(path), table.schema)
        writer.write_table(table)
        done += m
    writer.close()


def _pipeline_worker(src: str, n: int, workers: int | None, quantities: list[str]) -> dict:
    import resource

    import bridge

    model = bridge.load_urdf(ROBOT)
    out_path = Path(src).with_name(f"out-{os.getpid()}.parquet")
    t = time.perf_counter()
    c = time.process_time()
    summary = bridge.convert_dataset(
        model, src, out_path, "mujoco", "pinocchio", quantities=quantities, workers=workers
    )
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # MB (Linux: kB)
    out_path.unlink()
    return {
        "states": summary.rows,
        "workers": workers,
        "wall": wall,
        "cpu": cpu,
        "rate": n / wall,
        "peak_mb": peak,
    }


def _cluster_worker(src: str, warm: str, n: int, workers: int | None, quantities: list[str]) -> dict:
    """A file converted after a warm-up (the cluster started, the workers' imports, model, KinDyn
    and compiled code loaded): wall time, and the CPU time of the workers (and of this process)."""
    import logging
    import resource

    import bridge

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    model = bridge.load_urdf(ROBOT)
    out_path = Path(src).with_name(f"out-{os.getpid()}.parquet")
    kw = {"quantities": quantities}
    client = cluster = None
    if workers is not None:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
            silence_logs=logging.ERROR,
        )  # fmt: skip
        client = Client(cluster)
        kw["scheduler"] = cluster.scheduler_address
    bridge.convert_dataset(model, warm, out_path, "mujoco", "pinocchio", force=True, **kw)
    before = client.run(cpu) if client else {}
    here = cpu()
    t = time.perf_counter()
    bridge.convert_dataset(model, src, out_path, "mujoco", "pinocchio", force=True, **kw)
    wall = time.perf_counter() - t
    here = cpu() - here
    after = client.run(cpu) if client else {}
    spent = sum(after[w] - before[w] for w in after) if client else here
    if client:
        client.close()
        cluster.close()
    out_path.unlink()
    return {"states": n, "workers": workers, "wall": wall, "rate": n / wall, "workers_cpu": spent,
            "per_cpu_second": n / spent, "client_cpu": here}  # fmt: skip


WORKERS = {
    "convert": _convert_worker,
    "labels": _labels_worker,
    "pipeline": _pipeline_worker,
    "cluster": _cluster_worker,
}


def _run(name: str, *args, env: dict | None = None) -> dict:
    """One worker in a fresh interpreter, one thread each; its JSON answer."""
    code = f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import datasets as b; " \
        f"print(json.dumps(b.WORKERS[{name!r}](*{list(args)!r})))"  # fmt: skip
    full = {**os.environ, **ONE_THREAD, **(env or {})}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full)
    if res.returncode:
        raise RuntimeError(f"{name}{args}: {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- parts
def part_convert(states: int) -> dict:
    r = _run("convert", states)
    print(f"\n### Conversion, MuJoCo -> Pinocchio, iCub, {states:,} states (one thread)\n")
    print("| implementation | states/s per core (user CPU) | (user + system CPU) | states/s (wall) |")
    print("|---|---:|---:|---:|")
    labels = (
        ("arrays", "`bridge.convert_states`, (N, k) arrays"),
        ("columns", "the plan on columns (files)"),
        ("pinocchio loop", "hand-written loop of Pinocchio calls"),
    )
    for key, label in labels:
        print(f"| {label} | {r[key]['cpu']:,.0f} | {r[key]['cpu+sys']:,.0f} | {r[key]['wall']:,.0f} |")
    print(f"\n(the loop agrees with bridge to {r['loop agrees']:.1e})")
    return r


def part_labels(states: int) -> dict:
    rows = {
        "featherstone, compiled": _run("labels", states, "featherstone"),
        "featherstone, numpy": _run("labels", states, "featherstone", env={"BRIDGE_NUMBA": "0"}),
        "pinocchio engine": _run("labels", states, "pinocchio engine"),
        "pinocchio loop": _run("labels", states, "pinocchio loop"),
    }
    print(f"\n### Inverse-dynamics labels, iCub, {states:,} states (one thread)\n")
    print("| implementation | states/s per core (user CPU) | (user + system CPU) | states/s (wall) |")
    print("|---|---:|---:|---:|")
    for key, r in rows.items():
        label = {
            "featherstone, compiled": "`bridge.compute`, featherstone, compiled (numba)",
            "featherstone, numpy": "`bridge.compute`, featherstone, numpy (`BRIDGE_NUMBA=0`)",
            "pinocchio engine": "`bridge.compute`, engine pinocchio",
            "pinocchio loop": "hand-written loop of `pin.rnea` (states already in Pinocchio's layout)",
        }[key]
        rates = r["rates"]
        print(f"| {label} | {rates['cpu']:,.0f} | {rates['cpu+sys']:,.0f} | {rates['wall']:,.0f} |")
    return rows


def part_scaling(states: int, folder: Path) -> dict:
    src, warm = folder / "scaling.parquet", folder / "warm.parquet"
    _write_parquet(src, states)
    _write_parquet(warm, 2_000)
    q = ["inverse_dynamics"]
    rows = {
        "this process": _run("cluster", str(src), str(warm), states, None, q),
        "1 worker": _run("cluster", str(src), str(warm), states, 1, q),
        "2 workers": _run("cluster", str(src), str(warm), states, 2, q),
    }
    print(
        f"\n### Scaling: a Parquet file of {states:,} iCub states, MuJoCo -> Pinocchio + inverse dynamics\n"
    )
    print("| where | states/s (wall) | speed-up over 1 worker | states per CPU-second of the workers |")
    print("|---|---:|---:|---:|")
    one = rows["1 worker"]["rate"]
    for key, r in rows.items():
        print(f"| {key} | {r['rate']:,.0f} | {r['rate'] / one:.2f} | {r['per_cpu_second']:,.0f} |")
    src.unlink()
    warm.unlink()
    return rows


def part_memory(sizes: list[int], folder: Path) -> dict:
    rows = {}
    for n in sizes:
        src = folder / f"memory-{n}.parquet"
        _write_parquet(src, n)
        rows[n] = _run("pipeline", str(src), n, None, [])
        rows[n]["file_mb"] = src.stat().st_size / MB
        src.unlink()
    print("\n### Peak memory: Parquet -> Parquet, MuJoCo -> Pinocchio, iCub\n")
    print("| states | input file (MB) | peak resident memory (MB) | states/s (wall) |")
    print("|---:|---:|---:|---:|")
    for n, r in rows.items():
        print(f"| {n:,} | {r['file_mb']:,.0f} | {r['peak_mb']:,.0f} | {r['rate']:,.0f} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "part", nargs="?", default="all", choices=["all", "convert", "labels", "scaling", "memory"]
    )
    parser.add_argument(
        "--states", type=int, default=None, help="states (convert 1e6, labels 1e5, scaling 2e5)"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    parser.add_argument(
        "--folder", type=Path, default=None, help="where the Parquet files go (default: a temp dir)"
    )
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "results" / "datasets.json")
    args = parser.parse_args(argv)
    out: dict = {"machine": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()}
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(tmp)
        if args.part in ("all", "convert"):
            out["convert"] = part_convert(args.states or 1_000_000)
        if args.part in ("all", "labels"):
            out["labels"] = part_labels(args.states or 100_000)
        if args.part in ("all", "scaling"):
            out["scaling"] = part_scaling(args.states or 200_000, folder)
        if args.part in ("all", "memory"):
            out["memory"] = part_memory(args.sizes, folder)
    out["load_after"] = os.getloadavg()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2, default=str))
    print(f"\nload average {out['load']} -> {out['load_after']}; raw numbers in {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
