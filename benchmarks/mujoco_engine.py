"""The mujoco engine next to raw MuJoCo calls, with the floor of the calls themselves.

    python benchmarks/mujoco_engine.py [ROBOT ...] [--reps mixed body inertial] [--json OUT]
                                       [--before BEFORE.json]

Robots: example-robot-data's solo12 and icub-models' iCubGazeboV2_5 (default). The harness, the
quantities and the floor are :mod:`engine_bench`'s. Raw MuJoCo is ``bridge.to_mujoco(model)``
called by hand with the state already in MuJoCo's ``(qpos, qvel)`` and the inputs in its
convention, with the cheapest calls that give the quantities (results read in place):
``mj_fwdPosition`` + ``mj_fwdVelocity`` + ``mj_fullM`` + ``mj_jac`` (at the foot's origin, F[A]);
``mj_inverse``; ``mj_forward`` with ``qfrc_applied``. Before timing, bridge's results are compared
with raw MuJoCo's taken to the representation (``bridge.conventions``). Raw MuJoCo is called from
Python, through its bindings, as a user calls it, and so does bridge's engine (its compiled kernels
only convert MuJoCo's results: no compiled code calls MuJoCo's C functions).
"""

from __future__ import annotations

import sys
from pathlib import Path

import mujoco
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_bench import Case, main, rel

import bridge
from bridge.conventions.change_of_variables import change_of_variables
from bridge.conventions.convert import convention
from bridge.conventions.frames import frame_jacobian


def implementations(robot: str, rep: str) -> tuple[dict, dict]:
    """({quantity: {implementation: fn}}, {quantity: relative difference raw vs bridge})."""
    case = Case(robot, rep, "mujoco")
    model, state, frame = case.model, case.state, case.frame
    mm = bridge.to_mujoco(model)
    d = mujoco.MjData(mm)
    qpos, qvel = bridge.to_mujoco_state(model, state)
    cov = change_of_variables(model, state, convention(rep), convention("mujoco"))
    qacc = cov.acceleration(case.nu_dot)
    applied = cov.force(np.concatenate([np.zeros(model.nv - model.n_dofs), case.tau]))
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

    ours = case.bridge
    Mb, hb, Jb = (x.copy() for x in ours["bundle"]())
    Mr, _, Jp, Jr = (x.copy() for x in raw_bundle())
    J_frame = frame_jacobian(case.kd.frame_transform(frame), np.vstack([Jp, Jr]), "mixed", rep)
    check = {"M": rel(cov.matrix_back(Mr), Mb), "J": rel(cov.jacobian_back(J_frame), Jb)}
    # h: MuJoCo's inverse dynamics at the representation's zero acceleration (qacc = T_dot nu)
    d_qpos[:], d_qvel[:], d_qacc[:] = qpos, qvel, cov.bias_acceleration
    mujoco.mj_inverse(mm, d)
    check["h"] = rel(cov.force_back(d.qfrc_inverse.copy()), hb)
    check["ID"] = rel(cov.force_back(raw_inverse().copy()), ours["inverse dynamics"]())
    check["FD"] = rel(cov.acceleration_back(raw_forward().copy()), ours["forward dynamics"]())
    raw = {"bundle": raw_bundle, "inverse dynamics": raw_inverse, "forward dynamics": raw_forward}
    fns = {q: {"bridge": ours[q], "raw": raw[q], "floor": case.floor[q]} for q in raw}
    return fns, check


if __name__ == "__main__":
    raise SystemExit(main(__doc__.splitlines()[0], f"MuJoCo {mujoco.__version__}", implementations))
