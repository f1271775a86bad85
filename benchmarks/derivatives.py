"""Cost of KinDyn's dynamics derivatives on iCub against Pinocchio's own derivative calls.

Run: ``PYTHONPATH=. python benchmarks/derivatives.py``. For each representation it prints the best
per-call time (interleaved repetitions, so both sides see the same machine load) of Pinocchio's
``computeRNEADerivatives`` / ``computeABADerivatives`` on the same (q, v, a) and of
``KinDyn.inverse_dynamics_derivatives`` / ``forward_dynamics_derivatives`` (engine "pinocchio",
one unbatched state, which includes Pinocchio's call), then the difference fallback of the
"featherstone" and "idyntree" engines in MIXED.
"""

from __future__ import annotations

import time

import numpy as np

import bridge
from bridge.robots import robot_path


def best(fns, n: int = 300, rounds: int = 10) -> list[float]:
    """Best per-call time (us) of each function, rounds interleaved."""
    out = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            out[i] = min(out[i], (time.perf_counter() - t) / n * 1e6)
    return out


def main() -> None:
    import pinocchio as pin

    model = bridge.load_urdf(robot_path("iCubGazeboV2_5"), check_inertia=False)
    rng = np.random.default_rng(0)
    n = model.n_dofs
    for rep in ("body", "inertial", "mixed"):
        quat = rng.normal(size=4)
        H = bridge.Transform.from_quaternion_xyzw(quat / np.linalg.norm(quat), rng.normal(size=3)).matrix
        s, sd, vb = rng.uniform(-0.5, 0.5, n), rng.normal(size=n), rng.normal(size=6)
        kd = bridge.KinDyn(model, "pinocchio", rep)
        kd.set_state(H, s, vb, sd)
        a, tq = rng.normal(size=model.nv), rng.normal(size=n)
        q, v = bridge.to_pinocchio_state(model, kd.state)
        pm = kd._engine.pm
        d = pm.createData()
        tau = np.concatenate([np.zeros(6), tq])
        args = (pm, d, q, v)
        t = best(
            [
                lambda args=args, a=a: pin.computeRNEADerivatives(*args, a),
                lambda kd=kd, a=a: kd.inverse_dynamics_derivatives(a[:6], a[6:]),
                lambda args=args, tau=tau: pin.computeABADerivatives(*args, tau),
                lambda kd=kd, tq=tq: kd.forward_dynamics_derivatives(tq),
            ]
        )
        print(
            f"{rep:9s} computeRNEADerivatives {t[0]:6.1f} us  KinDyn ID derivatives {t[1]:6.1f} us "
            f"({t[1] / t[0]:.2f}x) | computeABADerivatives {t[2]:6.1f} us  KinDyn FD derivatives "
            f"{t[3]:6.1f} us ({t[3] / t[2]:.2f}x)"
        )
    for engine in ("featherstone", "idyntree"):
        kd2 = bridge.KinDyn(model, engine, "mixed")
        kd2.set_robot_state(kd.state)
        t2 = best([lambda kd2=kd2, a=a: kd2.inverse_dynamics_derivatives(a[:6], a[6:])], n=3, rounds=3)[0]
        print(
            f"mixed     {engine} (difference fallback) ID derivatives {t2 / 1e3:.2f} ms "
            f"({t2 / t[1]:.0f}x the analytical path)"
        )


if __name__ == "__main__":
    main()
