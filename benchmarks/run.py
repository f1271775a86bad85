#!/usr/bin/env python
"""Performance of bridge against the libraries a user would otherwise call directly.

Run from a checkout after the README set-up plus ``pip install -e '.[bench]'``::

    python benchmarks/run.py            # full run, a few minutes on 2 cores
    python benchmarks/run.py --quick    # shorter timing runs, for a smoke test

Robots (same machine, same run): iCub (icub-models ``iCubGazeboV2_5``, floating base), Talos
(example-robot-data ``talos_reduced``, floating base) and Panda (example-robot-data ``panda``, fixed
base). Mimic joints are loaded as independent DOFs by every library, as their own URDF loaders do.

Implementations, all at the same state, all in the MIXED representation with the model's DOF order,
except the floor:

* ``bridge``: ``bridge.KinDyn(model, engine="pinocchio", representation="mixed")``.
* ``pinocchio (floor)``: raw Pinocchio on ``pin.buildModelFromUrdf`` in its native convention (LOCAL
  base velocity, depth-first joints), the state already in its ``(q, v)``: the cost of the
  algorithms with no conversion at all. bridge cannot be faster than this.
* ``iDynTree``: ``KinDynComputations`` (MIXED) on iDynTree's own URDF loader, pre-allocated output
  buffers, frame looked up by index; outputs read into numpy.
* ``adam``: ``adam.numpy.KinDynComputations`` (MIXED).

Quantities, timed per call:

* ``bundle``: set the state, then mass matrix + bias forces + the Jacobian of one foot (iCub,
  Talos) or of the hand (Panda). The floor's "set state" is nothing (q, v are given); adam has no
  state, every call takes it.
* ``inverse dynamics``: set the state, then tau for a given generalized acceleration. adam offers no
  RNEA with accelerations: ``M nu_dot + h``.
* ``forward dynamics``: set the state, then nu_dot for given joint torques. iDynTree's
  KinDynComputations has no forward dynamics: ``M`` and ``h`` and a Cholesky solve (what bridge's
  iDynTree engine does); adam: its ``aba`` (floating base) or ``M``, ``h`` and a solve (fixed base,
  where adam's floating-base ABA is another problem).

Every number is the median over repeats (timeit, garbage collection off, warm-up first, each repeat
at least ~0.1 s of calls) of the time per call. Before timing, every implementation's results are
compared with bridge's (relative norm difference, reported in the JSON) so that the table compares
the same quantities.

Also timed: ``import bridge`` and ``bridge --help`` in fresh interpreters (best of several; the bare
interpreter start-up is reported next to them).

Outputs: a markdown table on stdout and in ``benchmarks/results/results.md``, the raw numbers in
``benchmarks/results/results.json`` (the folder is git-ignored).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.metadata as metadata
import io
import json
import platform
import shutil
import statistics
import subprocess
import sys
import timeit
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
GRAVITY = np.array([0.0, 0.0, -9.81])


@dataclass(frozen=True)
class Robot:
    label: str
    name: str  # icub-models name or example-robot-data stem
    floating: bool
    frame: str
    dofs: tuple[str, ...] | None = None  # None: every movable joint; else the others are locked at 0


ROBOTS = (
    Robot("iCub", "iCubGazeboV2_5", True, "l_sole"),
    Robot("Talos", "talos_reduced", True, "left_sole_link"),
    # the arm: the two prismatic finger joints are locked at 0 (adam 0.5 cannot build a model with
    # a prismatic joint, and a gripper is not part of an arm's dynamics loop)
    Robot("Panda", "panda", False, "panda_hand", tuple(f"panda_joint{i}" for i in range(1, 8))),
)

QUANTITIES = ("bundle", "inverse dynamics", "forward dynamics")


def robot_file(robot: Robot) -> str:
    if robot.name.startswith("iCub"):
        import icub_models

        return str(icub_models.get_model_file(robot.name))
    from bridge.robots import robot_path  # example-robot-data, found through its package metadata

    return str(robot_path(robot.name))


# --------------------------------------------------------------------------- timing
def measure(fns: dict[str, object], min_time: float, repeats: int) -> dict[str, dict[str, float]]:
    """Median and best time per call (seconds) of each ``fn()`` in ``fns``.

    timeit (garbage collection off), warm-up calls first, each repeat calibrated to last at least
    ``min_time``; the repeats of the implementations are interleaved (round robin), so that a burst
    of load from another process on the machine hits all of them alike.
    """
    timers, numbers = {}, {}
    for label, fn in fns.items():
        for _ in range(3):
            fn()
        timer = timeit.Timer(fn)
        number = 1
        while True:  # calibrate: one repeat lasts at least min_time
            elapsed = timer.timeit(number)
            if elapsed >= min_time:
                break
            number = max(number * 2, int(number * min_time / max(elapsed, 1e-9) * 1.2))
        timers[label], numbers[label] = timer, number
    times: dict[str, list[float]] = {label: [] for label in fns}
    for _ in range(repeats):
        for label, timer in timers.items():
            times[label].append(timer.timeit(numbers[label]) / numbers[label])
    return {
        label: {
            "median": statistics.median(ts),
            "best": min(ts),
            "number": numbers[label],
            "repeats": repeats,
        }
        for label, ts in times.items()
    }


def wall_time(cmd: list[str], runs: int) -> float:
    """Best wall time of ``cmd`` in a fresh process (seconds)."""
    best = float("inf")
    for _ in range(runs):
        start = timeit.default_timer()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, timeit.default_timer() - start)
    return best


# --------------------------------------------------------------------------- a state
@dataclass
class Inputs:
    H: np.ndarray  # world_H_base (4, 4)
    s: np.ndarray
    v: np.ndarray  # base velocity, MIXED (zero for a fixed base)
    sd: np.ndarray
    base_acc: np.ndarray  # MIXED (zero for a fixed base)
    sdd: np.ndarray
    tau: np.ndarray  # joint torques


def make_inputs(model, seed: int) -> Inputs:
    rng = np.random.default_rng(seed)
    n = model.n_dofs
    if model.floating:
        qu = rng.normal(size=4)
        qu /= np.linalg.norm(qu)
        from bridge.spatial import Transform

        H = Transform.from_quaternion_xyzw(qu, rng.normal(size=3)).as_matrix()
        v, base_acc = rng.normal(size=6), rng.normal(size=6)
    else:  # an arm bolted to the world origin
        H, v, base_acc = np.eye(4), np.zeros(6), np.zeros(6)
    return Inputs(
        H, rng.uniform(-1.0, 1.0, n), v, rng.normal(size=n), base_acc, rng.normal(size=n), rng.normal(size=n)
    )


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(1.0, float(np.linalg.norm(b))))


# --------------------------------------------------------------------------- implementations
class Bridge:
    label = "bridge"

    def __init__(self, model, robot: Robot, path: str, x: Inputs) -> None:
        import bridge

        self.kd = kd = bridge.KinDyn(model, engine="pinocchio", representation="mixed")
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

        self.calls = {"bundle": bundle, "inverse dynamics": inverse, "forward dynamics": forward}


class PinocchioFloor:
    label = "pinocchio (floor)"

    def __init__(self, model, robot: Robot, path: str, x: Inputs) -> None:
        import pinocchio as pin

        pm = (
            pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
            if model.floating
            else pin.buildModelFromUrdf(path)
        )
        locked = [
            pm.getJointId(name)
            for name in pm.names[1:]
            if name not in model.dof_names and name != "root_joint"
        ]
        if locked:  # other joints locked at 0, as bridge and iDynTree do
            pm = pin.buildReducedModel(pm, locked, pin.neutral(pm))
        if pm.nv != model.nv:
            raise RuntimeError(f"Pinocchio's URDF model has nv={pm.nv}, bridge's {model.nv}")
        d = pm.createData()
        nb = 6 if model.floating else 0
        # the same physical state in Pinocchio's (q, v), joints placed by name
        q, v = pin.neutral(pm), np.zeros(pm.nv)
        T = np.zeros((pm.nv, pm.nv))  # nu_pin = T nu (for the result check only)
        for k, name in enumerate(model.dof_names):
            j = pm.joints[pm.getJointId(name)]
            if j.nq == 2:  # continuous joint: (cos, sin)
                q[j.idx_q : j.idx_q + 2] = np.cos(x.s[k]), np.sin(x.s[k])
            else:
                q[j.idx_q] = x.s[k]
            v[j.idx_v] = x.sd[k]
            T[j.idx_v, nb + k] = 1.0
        if nb:
            from bridge.spatial import Transform

            R = x.H[:3, :3]
            q[:3] = x.H[:3, 3]
            q[3:7] = Transform(x.H).as_quaternion_xyzw()
            v[:3], v[3:6] = R.T @ x.v[:3], R.T @ x.v[3:]
            T[:3, :3] = T[3:6, 3:6] = R.T
        self.T = T
        fid = pm.getFrameId(robot.frame)
        a = np.random.default_rng(0).normal(size=pm.nv)
        tau = np.concatenate([np.zeros(nb), x.tau])
        local = pin.ReferenceFrame.LOCAL
        self.pm, self.d, self.q, self.fid = pm, d, q, fid

        def bundle():
            return pin.crba(pm, d, q), pin.nle(pm, d, q, v), pin.computeFrameJacobian(pm, d, q, fid, local)

        self.calls = {
            "bundle": bundle,
            "inverse dynamics": lambda: pin.rnea(pm, d, q, v, a),
            "forward dynamics": lambda: pin.aba(pm, d, q, v, tau),
        }

    def check(self, ref: dict[str, np.ndarray]) -> dict[str, float]:
        """M and J converted to MIXED with the model's DOF order, against bridge's."""
        import pinocchio as pin

        M, _, J = self.calls["bundle"]()
        T = self.T
        pin.framesForwardKinematics(self.pm, self.d, self.q)
        R_F = self.d.oMf[self.fid].rotation
        X_F = np.zeros((6, 6))
        X_F[:3, :3] = X_F[3:, 3:] = R_F  # LOCAL -> F[A]
        return {"M": _rel(T.T @ M @ T, ref["M"]), "J": _rel(X_F @ J @ T, ref["J"])}


class IDynTree:
    label = "iDynTree"

    def __init__(self, model, robot: Robot, path: str, x: Inputs) -> None:
        import idyntree.bindings as idyn

        loader = idyn.ModelLoader()
        if not loader.loadReducedModelFromFile(path, list(model.dof_names)):
            raise RuntimeError(f"iDynTree could not load {path}")
        kd = idyn.KinDynComputations()
        kd.loadRobotModel(loader.model())
        kd.setFrameVelocityRepresentation(idyn.MIXED_REPRESENTATION)
        kd.setFloatingBase(model.base)
        imodel = kd.model()
        n = model.n_dofs
        Mb = idyn.FreeFloatingMassMatrix(imodel)
        taub = idyn.FreeFloatingGeneralizedTorques(imodel)
        Jb = idyn.MatrixDynSize(6, 6 + n)
        ext = idyn.LinkWrenches(imodel)
        ext.zero()
        fidx = kd.getFrameIndex(robot.frame)
        H, s, v, sd, g = x.H, x.s, x.v, x.sd, GRAVITY
        ba, sdd = x.base_acc, x.sdd
        sl = slice(None) if model.floating else slice(6, None)
        tau_full = np.concatenate([np.zeros(6), x.tau])[sl]

        def generalized():
            return np.concatenate([taub.baseWrench().toNumPy(), taub.jointTorques().toNumPy()])

        def bundle():
            kd.setRobotState(H, s, v, sd, g)
            kd.getFreeFloatingMassMatrix(Mb)
            kd.generalizedBiasForces(taub)
            kd.getFrameFreeFloatingJacobian(fidx, Jb)
            return Mb.toNumPy()[sl, sl], generalized()[sl], Jb.toNumPy()[:, sl]

        def inverse():
            kd.setRobotState(H, s, v, sd, g)
            kd.inverseDynamics(ba, sdd, ext, taub)
            return generalized()[sl]

        def forward():
            M, h, _ = bundle_mh()
            L = np.linalg.cholesky(M)
            return np.linalg.solve(L.T, np.linalg.solve(L, tau_full - h))

        def bundle_mh():
            kd.setRobotState(H, s, v, sd, g)
            kd.getFreeFloatingMassMatrix(Mb)
            kd.generalizedBiasForces(taub)
            return Mb.toNumPy()[sl, sl], generalized()[sl], None

        self.calls = {"bundle": bundle, "inverse dynamics": inverse, "forward dynamics": forward}


def _adam_urdf(path: str, dofs: tuple[str, ...]) -> str:
    """The URDF text as adam 0.5 can read it, with the same dynamics:

    * the (identity) ``<origin>`` written out in every ``<inertial>``: adam's parser fails on an
      ``<inertial>`` without one (Talos has several), although URDF makes it optional;
    * movable joints that are not DOFs turned into fixed joints (they are locked at 0, where a
      joint's transform is its origin): adam builds every joint, and fails on prismatic ones.
    """
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    for inertial in root.iter("inertial"):
        if inertial.find("origin") is None:
            ET.SubElement(inertial, "origin", xyz="0 0 0", rpy="0 0 0")
    keep = set(dofs)
    for joint in root.iter("joint"):
        if joint.get("type") not in (None, "fixed", "floating", "planar") and joint.get("name") not in keep:
            joint.set("type", "fixed")
            for child in list(joint):
                if child.tag in ("mimic", "limit", "axis", "dynamics", "safety_controller"):
                    joint.remove(child)
    return ET.tostring(root, encoding="unicode")


class Adam:
    label = "adam"

    def __init__(self, model, robot: Robot, path: str, x: Inputs) -> None:
        from adam.core.constants import Representations
        from adam.numpy import KinDynComputations

        with contextlib.redirect_stderr(io.StringIO()):  # urdf_parser_py's "Unknown tag" chatter
            kd = KinDynComputations(
                _adam_urdf(path, model.dof_names),
                list(model.dof_names),
                gravity=np.concatenate([GRAVITY, np.zeros(3)]),
            )
        kd.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
        H, s, v, sd = x.H, x.s, x.v, x.sd
        nu_dot = np.concatenate([x.base_acc, x.sdd])
        frame = robot.frame
        sl = slice(None) if model.floating else slice(6, None)
        tau_full = np.concatenate([np.zeros(6), x.tau])[sl]

        def bundle():
            M = kd.mass_matrix(H, s)
            h = kd.bias_force(H, s, v, sd)
            J = kd.jacobian(frame, H, s)
            return M[sl, sl], h[sl], J[:, sl]

        def inverse():
            return (kd.mass_matrix(H, s) @ nu_dot + kd.bias_force(H, s, v, sd))[sl]

        if model.floating:

            def forward():
                return kd.aba(H, s, v, sd, x.tau)

        else:

            def forward():
                M = kd.mass_matrix(H, s)[sl, sl]
                h = kd.bias_force(H, s, v, sd)[sl]
                L = np.linalg.cholesky(M)
                return np.linalg.solve(L.T, np.linalg.solve(L, tau_full - h))

        self.calls = {"bundle": bundle, "inverse dynamics": inverse, "forward dynamics": forward}


IMPLEMENTATIONS = (Bridge, PinocchioFloor, IDynTree, Adam)


def _outputs(impl) -> dict[str, np.ndarray]:
    M, h, J = impl.calls["bundle"]()
    return {
        "M": np.array(M),
        "h": np.array(h),
        "J": np.array(J),
        "inverse dynamics": np.array(impl.calls["inverse dynamics"]()),
        "forward dynamics": np.array(impl.calls["forward dynamics"]()),
    }


# --------------------------------------------------------------------------- runs
def run_robot(robot: Robot, args) -> dict:
    import bridge

    path = robot_file(robot)
    model = bridge.load_urdf(path, floating=robot.floating, joints=robot.dofs, mimic="independent")
    x = make_inputs(model, seed=1)
    out: dict = {
        "robot": robot.label,
        "file": path,
        "n_dofs": model.n_dofs,
        "floating": model.floating,
        "frame": robot.frame,
        "times": {},
        "check": {},
        "missing": {},
    }
    impls = []
    for cls in IMPLEMENTATIONS:
        try:
            impls.append(cls(model, robot, path, x))
        except ImportError as exc:  # adam not installed: pip install -e '.[bench]'
            out["missing"][cls.label] = str(exc)
    ref = _outputs(impls[0])
    for impl in impls[1:]:
        if isinstance(impl, PinocchioFloor):
            out["check"][impl.label] = impl.check(ref)
        else:
            got = _outputs(impl)
            out["check"][impl.label] = {k: _rel(got[k], ref[k]) for k in ref}
    for impl in impls:
        out["times"][impl.label] = {}
    for quantity in QUANTITIES:
        measured = measure({impl.label: impl.calls[quantity] for impl in impls}, args.min_time, args.repeats)
        for label, t in measured.items():
            out["times"][label][quantity] = t
            print(f"  {robot.label:6s} {quantity:17s} {label:18s} {t['median'] * 1e6:10.1f} us", flush=True)
    return out


def run_startup(args) -> dict:
    exe = sys.executable
    script = Path(exe).with_name("bridge")
    cli = [str(script)] if script.exists() else [shutil.which("bridge") or "bridge"]
    return {
        "python -c pass": wall_time([exe, "-c", "pass"], args.startup_runs),
        "import bridge": wall_time([exe, "-c", "import bridge"], args.startup_runs),
        "bridge --help": wall_time([*cli, "--help"], args.startup_runs),
    }


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "versions": {
            d: _version(d) for d in ("bridge-dynamics", "numpy", "pin", "idyntree", "adam-robotics")
        },
    }


def _fmt_us(t: float | None) -> str:
    if t is None:
        return "n/a"
    us = t * 1e6
    return f"{us:,.0f}" if us >= 100 else f"{us:.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None else f"{a / b:.2f}"


def markdown(results: dict) -> str:
    lines = [
        "| robot (n) | quantity | bridge [µs] | pinocchio floor [µs] | iDynTree [µs] | adam [µs] "
        "| bridge / floor | iDynTree / bridge | adam / bridge |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results["robots"]:
        times = r["times"]

        def get(label, quantity, times=times):
            return times.get(label, {}).get(quantity, {}).get("median")

        for quantity in QUANTITIES:
            b, p = get("bridge", quantity), get("pinocchio (floor)", quantity)
            i, a = get("iDynTree", quantity), get("adam", quantity)
            base = "floating" if r["floating"] else "fixed"
            lines.append(
                f"| {r['robot']} ({r['n_dofs']}, {base}) | {quantity} | {_fmt_us(b)} | {_fmt_us(p)} | "
                f"{_fmt_us(i)} | {_fmt_us(a)} | {_ratio(b, p)} | {_ratio(i, b)} | {_ratio(a, b)} |"
            )
    s = results.get("startup")
    if s:
        lines += [
            "",
            "| start-up (best wall time, fresh interpreter) | seconds |",
            "|---|--:|",
            *(f"| `{k}` | {v:.3f} |" for k, v in s.items()),
        ]
    worst = {}
    for r in results["robots"]:
        for label, errs in r["check"].items():
            worst[label] = max([worst.get(label, 0.0), *errs.values()])
    if worst:
        lines += [
            "",
            "Largest relative difference from bridge's results over the robots (same quantities): "
            + ", ".join(f"{k} {v:.1e}" for k, v in worst.items())
            + ".",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short timing runs (a smoke test)")
    parser.add_argument("--robots", nargs="*", default=[r.label for r in ROBOTS], help="subset of robots")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="output folder")
    args = parser.parse_args(argv)
    args.min_time = 0.02 if args.quick else 0.1
    args.repeats = 3 if args.quick else 7
    args.startup_runs = 3 if args.quick else 7
    wanted = {name.lower() for name in args.robots}
    results: dict = {"environment": environment(), "settings": vars(args).copy(), "robots": []}
    results["settings"]["out"] = str(args.out)
    for robot in ROBOTS:
        if robot.label.lower() in wanted:
            results["robots"].append(run_robot(robot, args))
    results["startup"] = run_startup(args)
    table = markdown(results)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    env = results["environment"]
    header = (
        f"Measured {env['date']} on {env['cpu']} ({env['cores']} cores), Python {env['python']}, "
        + ", ".join(f"{k} {v}" for k, v in env["versions"].items())
        + ". Median time per call.\n\n"
    )
    (args.out / "results.md").write_text(header + table + "\n")
    print()
    print(header + table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
