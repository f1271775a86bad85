"""The mujoco engine next to raw MuJoCo calls: time per state and the ratio (bridge's overhead).

    python benchmarks/mujoco_engine.py [ROBOT ...] [--states N]

For each robot (default: solo12 and iCubGazeboV2_5): set one state and compute the mass matrix,
bias forces, inverse dynamics and forward dynamics in the MIXED representation through
``KinDyn(engine="mujoco")``, against the same MuJoCo calls made by hand on ``to_mujoco(model)``
(``mj_forward`` + ``mj_fullM``; ``mj_inverse``; ``mj_forward`` with ``qfrc_applied``) in MuJoCo's
own coordinates.
"""

from __future__ import annotations

import argparse
import time

import mujoco
import numpy as np

import bridge
from bridge.robots import robot_path
from bridge.validation.check import random_states


def per_call(fn, n: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def run(robot: str, states: int) -> list[tuple[str, float, float]]:
    model = bridge.load_urdf(robot_path(robot))
    st = random_states(model, 1, np.random.default_rng(0))
    H, s, v, sd = st.world_H_base.matrix[0], st.s[0], st.base_velocity[0], st.s_dot[0]
    a = np.random.default_rng(1).normal(size=model.nv)
    tq = np.random.default_rng(2).normal(size=model.n_dofs)
    kd = bridge.KinDyn(model, engine="mujoco", representation="mixed")
    mm = bridge.to_mujoco(model)
    d = mujoco.MjData(mm)
    qpos, qvel = bridge.to_mujoco_state(model, st)
    M = np.zeros((mm.nv, mm.nv))

    def raw_set():
        d.qpos[:], d.qvel[:] = qpos[0], qvel[0]

    def raw_M():
        raw_set()
        mujoco.mj_forward(mm, d)
        mujoco.mj_fullM(mm, d, M)
        return d.qfrc_bias

    def raw_id():
        raw_set()
        d.qacc[:] = a
        mujoco.mj_inverse(mm, d)

    def raw_fd():
        raw_set()
        d.qfrc_applied[6:] = tq
        mujoco.mj_forward(mm, d)

    def kd_M():
        kd.set_state(H, s, v, sd)
        kd.mass_matrix()
        kd.bias_forces()

    def kd_id():
        kd.set_state(H, s, v, sd)
        kd.inverse_dynamics(a[:6], a[6:])

    def kd_fd():
        kd.set_state(H, s, v, sd)
        kd.forward_dynamics(tq)

    rows = []
    for label, ours, raw in (
        ("M + h", kd_M, raw_M),
        ("inverse dynamics", kd_id, raw_id),
        ("forward dynamics", kd_fd, raw_fd),
    ):
        rows.append((label, per_call(ours, states), per_call(raw, states)))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("robots", nargs="*", default=["solo12", "iCubGazeboV2_5"])
    p.add_argument("--states", type=int, default=200)
    args = p.parse_args(argv)
    print(f"MuJoCo {mujoco.__version__}; one state per call, MIXED representation")
    print("| robot | quantity | KinDyn mujoco (us) | raw MuJoCo (us) | ratio |")
    print("| --- | --- | ---: | ---: | ---: |")
    for robot in args.robots:
        for label, ours, raw in run(robot, args.states):
            print(f"| {robot} | {label} | {ours * 1e6:.1f} | {raw * 1e6:.1f} | {ours / raw:.1f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
