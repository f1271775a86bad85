#!/usr/bin/env python
"""What a user's script gets: N single states of iCub in a FRESH process, bridge against raw
Pinocchio, every import, model load and compile included.

Each side is one new Python process (``python -c``), timed from its start to its exit:

* bridge: ``import bridge``, ``bridge.load_urdf("iCubGazeboV2_5")``, ``KinDyn(engine="pinocchio",
  representation=...)`` and, per state, ``kd.set_state(H, s, base_velocity, s_dot)``,
  ``kd.mass_matrix()``, ``kd.bias_forces()``, ``kd.frame_jacobian("l_sole")``;
* raw Pinocchio: ``import pinocchio``, ``buildModelFromUrdf`` (free flyer) on the same URDF,
  ``createData`` and, per state, ``crba``, ``nle`` and ``computeFrameJacobian("l_sole")`` in the
  representation's reference frame, on ready q and v (no state to set, no conversion).

Before timing, one short process per side writes Python's bytecode, numba's disk cache and
bridge's model cache (as a user's second run has them: an installation has its bytecode, and the
first run writes the caches; ``--cold`` measures the first process without numba's cache and
bridge's). Bridge's model cache (:mod:`bridge.model.cache`) lives in a temporary folder for the
run (``BRIDGE_CACHE_DIR``), not the user's. Both sides draw
the same states (numpy's generator, seeded, 64 poses cycled). The processes of one size run one
after the other, alternately bridge first and Pinocchio first, ``--repeats`` times; the ratio of
the medians is reported (the machine is shared: a burst of load hits one process, the median
drops it). The bridge side also reports where its time went (import, load,
the loop).

Run from a checkout::

    python benchmarks/default_path.py                      # this tree, 10,000 and 200,000 states
    python benchmarks/default_path.py --compare /tmp/before  # another checkout too, same run
    python benchmarks/default_path.py --states 10000 --cold  # numba's disk cache emptied first
    python benchmarks/default_path.py --states 100000 --policies  # the two fixed policies, and numba's cost

``--policies`` adds this tree under the two fixed policies, each in its own fresh processes: numpy
only (``BRIDGE_NUMBA=0``: numba never loads) and compiled from the first state
(``BRIDGE_COMPILE_AFTER=0``), and measures what numba costs a process: a fresh process taking one
state on the compiled path, against one taking it on numpy (``BRIDGE_NUMBA=0``), exit included. The
default policy cannot beat the better of the two fixed ones by much: together they bound what any
switching rule can reach.

``--cold`` runs the bridge side once with numba's cache directory and bridge's model cache moved
to empty temporary folders (``NUMBA_CACHE_DIR``, ``BRIDGE_CACHE_DIR``): the first process of a
fresh installation.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: bridge's model cache for the run (set by main): warmed by warm_up, as a user's second run finds it
_MODEL_CACHE: dict[str, str] = {}

_SETUP = """
import time, sys
t0 = time.perf_counter()
import numpy as np
N, REP, SEED = {n}, {rep!r}, 0
rng = np.random.default_rng(SEED)
"""

_STATES = """
n = {n_dofs}
quat = rng.normal(size=(64, 4)); quat /= np.linalg.norm(quat, axis=1, keepdims=True)
pos = rng.normal(size=(64, 3))
S = rng.uniform(-0.5, 0.5, size=(N, n)); SD = rng.normal(size=(N, n)); VB = rng.normal(size=(N, 6))
"""

BRIDGE = (
    _SETUP
    + """
import bridge
t1 = time.perf_counter()
model = bridge.load_urdf("iCubGazeboV2_5")
kd = bridge.KinDyn(model, engine="pinocchio", representation=REP)
t2 = time.perf_counter()
"""
    + _STATES
    + """
from bridge.spatial import Transform
poses = [Transform.from_quaternion_xyzw(quat[i], pos[i]).as_matrix() for i in range(64)]
t3 = time.perf_counter()
for i in range(N):
    kd.set_state(poses[i & 63], S[i], VB[i], SD[i])
    M = kd.mass_matrix(); h = kd.bias_forces(); J = kd.frame_jacobian("l_sole")
t4 = time.perf_counter()
print({{"import": t1 - t0, "load": t2 - t1, "loop": t4 - t3, "nv": M.shape[0], "bridge": bridge.__file__}})
"""
)

PINOCCHIO = (
    _SETUP
    + """
import pinocchio as pin
import icub_models
t1 = time.perf_counter()
pm = pin.buildModelFromUrdf(str(icub_models.get_model_file("iCubGazeboV2_5")), pin.JointModelFreeFlyer())
d = pm.createData()
fid = pm.getFrameId("l_sole")
ref = {{"body": pin.LOCAL, "inertial": pin.WORLD, "mixed": pin.LOCAL_WORLD_ALIGNED}}[REP]
t2 = time.perf_counter()
"""
    + _STATES
    + """
q, v = pin.neutral(pm), np.zeros(pm.nv)
t3 = time.perf_counter()
for i in range(N):
    k = i & 63
    q[:3] = pos[k]; q[3:7] = quat[k]; q[7:] = S[i]
    v[:6] = VB[i]; v[6:] = SD[i]
    M = pin.crba(pm, d, q); h = pin.nle(pm, d, q, v); J = pin.computeFrameJacobian(pm, d, q, fid, ref)
t4 = time.perf_counter()
print({{"import": t1 - t0, "load": t2 - t1, "loop": t4 - t3, "nv": M.shape[0]}})
"""
)


def run_side(code: str, tree: Path | None, env_extra: dict | None = None) -> tuple[float, dict]:
    """Wall time (s) of one fresh process running ``code`` (PYTHONPATH: ``tree``), and what it printed."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (an installation has its bytecode: see warm_up)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    env.update(_MODEL_CACHE)
    env.update(env_extra or {})
    # (run in the tree, or a neutral folder: ``python -c`` puts its working directory first on the path)
    cwd = str(tree) if tree is not None else tempfile.gettempdir()
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return wall, eval(out.stdout.strip().splitlines()[-1])  # (our own child's dict literal)


def warm_up(trees: dict[str, tuple[Path, dict]], rep: str) -> None:
    """One short process per side, not timed: Python's bytecode (``__pycache__``) and numba's cache
    written, as in an installation (pip compiles the bytecode; without it every process compiles
    bridge's modules from source, about 0.4 s on the shared machine)."""
    for tree, env in trees.values():
        run_side(BRIDGE.format(n=10, rep=rep, n_dofs=32), tree, env)
    run_side(PINOCCHIO.format(n=10, rep=rep, n_dofs=32), None)


def measure(trees: dict[str, tuple[Path, dict]], n: int, rep: str, repeats: int) -> dict:
    """Median wall times of each side's bridge process (a tree and its environment) and of
    Pinocchio's, alternated."""
    nd = 32  # iCubGazeboV2_5's joint DOFs (checked by the bridge side's nv)
    walls: dict[str, list[float]] = {name: [] for name in trees}
    walls["pinocchio"] = []
    parts: dict[str, list[dict]] = {name: [] for name in walls}
    for r in range(repeats):
        order = [*trees, "pinocchio"]
        if r % 2:
            order.reverse()
        for name in order:
            if name == "pinocchio":
                code, (tree, env) = PINOCCHIO.format(n=n, rep=rep, n_dofs=nd), (None, {})
            else:
                code, (tree, env) = BRIDGE.format(n=n, rep=rep, n_dofs=nd), trees[name]
            wall, info = run_side(code, tree, env)
            if info["nv"] != nd + 6:
                raise RuntimeError(f"iCub has nv={info['nv']}, expected {nd + 6}")
            if tree is not None and not info["bridge"].startswith(str(tree)):
                raise RuntimeError(f"{name}: bridge imported from {info['bridge']}, not {tree}")
            walls[name].append(wall)
            parts[name].append(info)
    result = {}
    pin = statistics.median(walls["pinocchio"])
    for name, w in walls.items():
        med = statistics.median(w)
        part = {k: statistics.median(p[k] for p in parts[name]) for k in ("import", "load", "loop")}
        result[name] = {"wall": med, "ratio": med / pin, **part}
    return result


def numba_cost(rep: str, repeats: int) -> float:
    """What numba costs a process: the median wall time of a fresh bridge process taking one state
    on the compiled path (``BRIDGE_COMPILE_AFTER=0``: numba and the kernels the path calls loaded,
    and the exit after them), less that of one taking it on numpy (``BRIDGE_NUMBA=0``), alternated."""
    code = BRIDGE.format(n=1, rep=rep, n_dofs=32)
    sides = {"numba": {"BRIDGE_COMPILE_AFTER": "0"}, "numpy": {"BRIDGE_NUMBA": "0"}}
    walls: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(repeats):
        for name, env in sides.items():
            walls[name].append(run_side(code, HERE.parent, env)[0])
    return statistics.median(walls["numba"]) - statistics.median(walls["numpy"])


def cold(tree: Path, n: int, rep: str) -> dict:
    """The bridge side once with an empty numba cache (a fresh installation's first process), then
    once more with the cache that process wrote."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as models:
        env = {"NUMBA_CACHE_DIR": cache, "BRIDGE_CACHE_DIR": models}
        first = run_side(BRIDGE.format(n=n, rep=rep, n_dofs=32), tree, env)
        second = run_side(BRIDGE.format(n=n, rep=rep, n_dofs=32), tree, env)
    return {"first": {"wall": first[0], **first[1]}, "cached": {"wall": second[0], **second[1]}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--states", type=int, nargs="+", default=[10_000, 200_000])
    p.add_argument("--representation", default="mixed", choices=("body", "inertial", "mixed"))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--compare", type=Path, help="another checkout, measured in the same run")
    p.add_argument("--cold", action="store_true", help="also: the first process with no numba cache")
    p.add_argument(
        "--policies",
        action="store_true",
        help="also: numpy only, compiled from the first state, numba's cost",
    )
    p.add_argument("--json", type=Path, help="write the numbers here too")
    args = p.parse_args()
    here: tuple[Path, dict] = (HERE.parent, {})
    trees = {"this tree": here}
    if args.compare is not None:
        trees = {"before": (args.compare.resolve(), {}), "this tree": here}
    if args.policies:
        trees["numpy only"] = (HERE.parent, {"BRIDGE_NUMBA": "0"})
        trees["compiled"] = (HERE.parent, {"BRIDGE_COMPILE_AFTER": "0"})
    report: dict = {}
    with tempfile.TemporaryDirectory() as models:
        _MODEL_CACHE["BRIDGE_CACHE_DIR"] = models
        warm_up(trees, args.representation)
        if args.policies:
            report["numba"] = numba_cost(args.representation, args.repeats)
            print(
                f"numba's fixed cost per process (one state compiled against one on numpy, exit included): "
                f"{report['numba']:.2f} s"
            )
        for n in args.states:
            _size(report, trees, n, args)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


def _size(report: dict, trees: dict[str, Path], n: int, args: argparse.Namespace) -> None:
    """Measure and print one number of states."""
    res = measure(trees, n, args.representation, args.repeats)
    report[str(n)] = res
    what = f"{n:,} single states of iCub ({args.representation})"
    print(f"\n{what}, fresh process, median of {args.repeats}")
    print(f"{'':<12}{'wall s':>8}{'x raw':>8}{'import':>9}{'load':>8}{'loop':>8}")
    for name, r in res.items():
        row = f"{name:<12}{r['wall']:>8.2f}{r['ratio']:>8.2f}{r['import']:>9.2f}{r['load']:>8.2f}"
        print(f"{row}{r['loop']:>8.2f}")
    if args.cold:
        c = cold(HERE.parent, n, args.representation)
        report[f"{n} cold"] = c
        for k, r in c.items():
            row = f"{'cold ' + k:<12}{r['wall']:>8.2f}{'':>8}{r['import']:>9.2f}{r['load']:>8.2f}"
            print(f"{row}{r['loop']:>8.2f}")


if __name__ == "__main__":
    main()
