"""The mujoco engine next to raw MuJoCo calls, with the floor of the calls themselves.

    python benchmarks/mujoco_engine.py [ROBOT ...] [--reps mixed body inertial] [--json OUT]
                                       [--before BEFORE.json]

For each robot (default: example-robot-data's solo12 and icub-models' iCubGazeboV2_5), each
representation and each of

* ``bundle``: ``set_state`` + mass matrix + bias forces + the Jacobian of one foot,
* ``inverse dynamics``: ``set_state`` + tau for a given acceleration,
* ``forward dynamics``: ``set_state`` + nu_dot for given joint torques,

three implementations are timed interleaved (one short block of calls each in turn, repeated; the
best block per call: on a machine shared with other jobs the minimum is what stays reproducible,
and the three are measured under the same conditions):

* ``bridge``: ``KinDyn(model, engine="mujoco", representation=rep)``, the state given as bridge
  arrays every call;
* ``raw``: the same MuJoCo model (``bridge.to_mujoco(model)``) called by hand with the state already
  in MuJoCo's ``(qpos, qvel)`` and the inputs in its convention, the cheapest calls that give the
  quantities: ``mj_fwdPosition`` + ``mj_fwdVelocity`` + ``mj_fullM`` + ``mj_jac`` (results read in
  place); ``mj_inverse``; ``mj_forward`` with ``qfrc_applied``;
* ``floor``: the same KinDyn calls on an engine that answers at once (a preallocated array): the
  cost of the Python calls and of KinDyn's own checks, which no engine can go below.

Before timing, bridge's results are compared with raw MuJoCo's taken to the representation
(``bridge.conventions.change_of_variables``). ``--json`` writes the times; ``--before`` adds the
times of an earlier run (another checkout, e.g. ``PYTHONPATH=../baseline``) as a column.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import mujoco
import numpy as np

import bridge
from bridge.conventions.change_of_variables import change_of_variables
from bridge.conventions.convert import convention
from bridge.conventions.frames import frame_jacobian
from bridge.robots import robot_path
from bridge.validation.check import random_states

FEET = {"solo12": "FL_FOOT", "iCubGazeboV2_5": "l_sole"}
QUANTITIES = ("bundle", "inverse dynamics", "forward dynamics")


def timed(fns: dict[str, object], calls: int, repeats: int) -> dict[str, float]:
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


def _noop_kindyn(model, rep: str, answers: dict[str, np.ndarray]) -> bridge.KinDyn:
    """A KinDyn whose engine answers every query of the benchmark at once (the floor)."""
    kd = bridge.KinDyn(model, engine="mujoco", representation=rep)
    e = kd._engine
    kd._set_single = lambda H, s, v, sd, g: True
    e.mass_matrix = lambda: answers["M"]
    e.bias_forces = lambda: answers["h"]
    e.frame_jacobian = lambda frame: answers["J"]
    kd._id_single = lambda base_acc, s_ddot: answers["ID"]
    kd._fd_single = lambda t: answers["FD"]
    return kd


def implementations(robot: str, rep: str) -> tuple[dict, dict]:
    """({quantity: {implementation: fn}}, {quantity: relative difference raw vs bridge})."""
    model = bridge.load_urdf(robot_path(robot))
    frame = FEET.get(robot, model.frame_names[-1])
    st = random_states(model, 1, np.random.default_rng(0)).to(rep)
    H, s, v, sd = st.world_H_base.matrix[0], st.s[0], st.base_velocity[0], st.s_dot[0]
    nu_dot = np.random.default_rng(1).normal(size=model.nv)
    tq = np.random.default_rng(2).normal(size=model.n_dofs)
    ba, sdd = (nu_dot[:6], nu_dot[6:]) if model.floating else (None, nu_dot)
    kd = bridge.KinDyn(model, engine="mujoco", representation=rep)

    def bundle():
        kd.set_state(H, s, v, sd)
        return kd.mass_matrix(), kd.bias_forces(), kd.frame_jacobian(frame)

    def inverse():
        kd.set_state(H, s, v, sd)
        return kd.inverse_dynamics(ba, sdd)

    def forward():
        kd.set_state(H, s, v, sd)
        return kd.forward_dynamics(tq)

    # raw MuJoCo on the same model, the inputs in its convention
    mm = bridge.to_mujoco(model)
    d = mujoco.MjData(mm)
    state = st.__class__(st.world_H_base[0], s, v, sd, rep)
    qpos, qvel = bridge.to_mujoco_state(model, state)
    cov = change_of_variables(model, state, convention(rep), convention("mujoco"))
    qacc = cov.acceleration(nu_dot if model.floating else sdd)
    applied = cov.force(np.concatenate([np.zeros(model.nv - model.n_dofs), tq]))
    M, jacp, jacr = np.zeros((mm.nv, mm.nv)), np.zeros((3, mm.nv)), np.zeros((3, mm.nv))
    bid = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_BODY, frame)
    sid = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_SITE, frame)
    point = d.xpos[bid] if bid >= 0 else d.site_xpos[sid]
    body = bid if bid >= 0 else int(mm.site_bodyid[sid])
    d_qpos, d_qvel, d_qacc, d_applied = d.qpos, d.qvel, d.qacc, d.qfrc_applied

    def raw_bundle():
        d_qpos[:], d_qvel[:] = qpos, qvel
        mujoco.mj_fwdPosition(mm, d)
        mujoco.mj_fwdVelocity(mm, d)
        mujoco.mj_fullM(mm, d, M)
        mujoco.mj_jac(mm, d, jacp, jacr, point, body)
        return M, d.qfrc_bias, jacp, jacr

    def raw_inverse():
        d_qpos[:], d_qvel[:], d_qacc[:] = qpos, qvel, qacc
        mujoco.mj_inverse(mm, d)
        return d.qfrc_inverse

    def raw_forward():
        d_qpos[:], d_qvel[:], d_applied[:] = qpos, qvel, applied
        mujoco.mj_forward(mm, d)
        return d.qacc

    answers = {"M": np.zeros((model.nv, model.nv)), "h": np.zeros(model.nv), "J": np.zeros((6, model.nv))}
    answers |= {"ID": np.zeros(model.nv), "FD": np.zeros(model.nv)}
    floor_kd = _noop_kindyn(model, rep, answers)

    def floor_bundle():
        floor_kd.set_state(H, s, v, sd)
        return floor_kd.mass_matrix(), floor_kd.bias_forces(), floor_kd.frame_jacobian(frame)

    def floor_inverse():
        floor_kd.set_state(H, s, v, sd)
        return floor_kd.inverse_dynamics(ba, sdd)

    def floor_forward():
        floor_kd.set_state(H, s, v, sd)
        return floor_kd.forward_dynamics(tq)

    # the raw results in the representation, against bridge's (MuJoCo's bias at zero qacc is not
    # the representation's: raw inverse dynamics gives h with the bias acceleration)
    Mb, hb, Jb = (x.copy() for x in bundle())
    Mr, _, Jp, Jr = (x.copy() for x in raw_bundle())
    J_frame = frame_jacobian(kd.frame_transform(frame), np.vstack([Jp, Jr]), "mixed", rep)
    check = {"M": _rel(cov.matrix_back(Mr), Mb), "J": _rel(cov.jacobian_back(J_frame), Jb)}
    d_qpos[:], d_qvel[:], d_qacc[:] = qpos, qvel, cov.bias_acceleration
    mujoco.mj_inverse(mm, d)
    check["h"] = _rel(cov.force_back(d.qfrc_inverse.copy()), hb)
    check["inverse dynamics"] = _rel(cov.force_back(raw_inverse().copy()), inverse())
    check["forward dynamics"] = _rel(cov.acceleration_back(raw_forward().copy()), forward())
    fns = {
        "bundle": {"bridge": bundle, "raw": raw_bundle, "floor": floor_bundle},
        "inverse dynamics": {"bridge": inverse, "raw": raw_inverse, "floor": floor_inverse},
        "forward dynamics": {"bridge": forward, "raw": raw_forward, "floor": floor_forward},
    }
    return fns, check


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(1.0, np.linalg.norm(b)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("robots", nargs="*", default=["solo12", "iCubGazeboV2_5"])
    p.add_argument("--reps", nargs="*", default=["mixed", "body", "inertial"])
    p.add_argument("--calls", type=int, default=200, help="calls per timed block")
    p.add_argument("--repeats", type=int, default=40, help="timed blocks per implementation")
    p.add_argument("--json", type=Path, help="write the times here")
    p.add_argument("--before", type=Path, help="times of an earlier run (--json) to show next to these")
    args = p.parse_args(argv)
    before = json.loads(args.before.read_text()) if args.before else {}
    print(f"MuJoCo {mujoco.__version__}, bridge from {Path(bridge.__file__).parent.parent}; one state a call")
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
    print(f"\nLargest relative difference of raw MuJoCo's results from bridge's: {worst:.1e}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
