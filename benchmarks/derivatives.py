"""Cost of KinDyn's dynamics derivatives on iCub and solo12 against Pinocchio's own derivative
calls, the difference fallback and automatic differentiation.

Run: ``PYTHONPATH=. python benchmarks/derivatives.py [--quick] [--robots NAME ...]``. For each robot
(default: icub-models' iCubGazeboV2_5, nv 38, and example-robot-data's solo12, nv 18) and
representation it prints the best per-call time (interleaved repetitions, so both sides see the
same machine load) of Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives`` on the
same (q, v, a), of the floor of any wrapper returning fresh arrays (that call plus one copy of its
three (nv, nv) results, which the next call overwrites: ``np.concatenate``), and of
``KinDyn.inverse_dynamics_derivatives`` / ``forward_dynamics_derivatives`` (engine "pinocchio",
one unbatched state, which includes Pinocchio's call; the chain rule compiled by numba when it is
installed, numpy with ``BRIDGE_NUMBA=0``). The states are set as a loop over states sets them
after its first derivative call (with numba, the engine's compiled single-state path). Then, for
the first robot, in MIXED: a batch of 100 states per state against ``computeRNEADerivatives`` in
a Python loop, the difference fallback of the "featherstone" and "idyntree" engines, and Drake's
AutoDiffXd (``plant.ToAutoDiffXd()``: inverse dynamics minus gravity with derivative seeds on
``(q, v, v_dot)``, in Drake's own coordinates, gradient width ``nq + 2 nv``; seeding and
extracting the gradient included, no mapping to bridge's tangent), and adam's jax derivatives if
jax imports. ``--skip-others`` leaves those out.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import bridge
from bridge.robots import robot_path


def best(fns, n: int = 300, rounds: int = 10, clock=time.thread_time) -> list[float]:
    """Best per-call time (us) of each function, rounds interleaved. The clock is the thread's CPU
    time: on a loaded machine the time the process waits descheduled is not counted (the wall
    clock, ``time.perf_counter``, counted it and moved the ratios by 2x between runs)."""
    out = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t = clock()
            for _ in range(n):
                fn()
            out[i] = min(out[i], (clock() - t) / n * 1e6)
    return out


def drake_autodiff(model: bridge.Model, state: bridge.State, nu_dot: np.ndarray):
    """A function computing Drake's inverse dynamics and its AutoDiffXd gradient (nv, nq + 2 nv) at
    ``state`` (None if pydrake is missing)."""
    try:
        from pydrake.autodiffutils import AutoDiffXd, ExtractGradient, InitializeAutoDiff
        from pydrake.multibody.tree import MultibodyForces_
    except ImportError:
        return None
    from bridge.backends.drake import to_drake

    plant = to_drake(model).ToAutoDiffXd()
    ctx = plant.CreateDefaultContext()
    q0, v0 = bridge.to_drake_state(model, state)
    nq, nv = plant.num_positions(), plant.num_velocities()
    width = nq + 2 * nv
    x = np.concatenate([q0, v0, nu_dot])  # (the acceleration's order does not matter for timing)
    seed = np.eye(width)
    forces = MultibodyForces_[AutoDiffXd](plant)

    def run() -> np.ndarray:
        xs = InitializeAutoDiff(x, seed)[:, 0]
        plant.SetPositions(ctx, xs[:nq])
        plant.SetVelocities(ctx, xs[nq : nq + nv])
        tau = plant.CalcInverseDynamics(ctx, xs[nq + nv :], forces) - plant.CalcGravityGeneralizedForces(ctx)
        return ExtractGradient(tau)

    return run


def adam_jax(path: str, model: bridge.Model):
    """A function computing the jit-compiled forward-mode Jacobian of adam's (jax) inverse dynamics
    ``M(s) nu_dot + h(s, nu)`` in MIXED with respect to ``(s, nu, nu_dot)`` at a fixed base pose
    (None if jax does not import)."""
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        from adam.jax import KinDynComputations
    except Exception:
        return None
    joints = list(model.joint_names)
    kd = KinDynComputations(str(path), joints)
    H = jnp.eye(4)

    def inverse_dynamics(s, nu, nu_dot):
        return kd.mass_matrix(H, s) @ nu_dot + kd.bias_force(H, s, nu[:6], nu[6:])

    jac = jax.jit(jax.jacfwd(inverse_dynamics, argnums=(0, 1, 2)))
    rng = np.random.default_rng(0)
    s, nu, nu_dot = rng.normal(size=model.n_dofs), rng.normal(size=model.nv), rng.normal(size=model.nv)
    try:
        jax.block_until_ready(jac(s, nu, nu_dot))
    except Exception as exc:  # e.g. an adam release that does not run on this jax
        print(f"mixed     adam jax failed: {type(exc).__name__}: {exc}")
        return None
    return lambda: jax.block_until_ready(jac(s, nu, nu_dot))


def main() -> None:
    import pinocchio as pin

    from bridge.derivatives.single import compiled_kernels

    quick = "--quick" in sys.argv
    robots = ["iCubGazeboV2_5", "solo12"]
    if "--robots" in sys.argv:
        robots = [a for a in sys.argv[sys.argv.index("--robots") + 1 :] if not a.startswith("--")]
    if compiled_kernels() is None:
        print("chain rule: numpy (numba not installed, or BRIDGE_NUMBA=0)")
    else:
        import numba

        print(f"chain rule: compiled kernels (numba {numba.__version__}; BRIDGE_NUMBA=0 for numpy)")
    rounds = 9 if quick else 21
    for robot in robots:
        path = robot_path(robot)
        model = bridge.load_urdf(path, check_inertia=False)
        rng = np.random.default_rng(0)
        n = model.n_dofs
        for rep in ("body", "inertial", "mixed"):
            quat = rng.normal(size=4)
            H = bridge.Transform.from_quaternion_xyzw(quat / np.linalg.norm(quat), rng.normal(size=3)).matrix
            s, sd, vb = rng.uniform(-0.5, 0.5, n), rng.normal(size=n), rng.normal(size=6)
            kd = bridge.KinDyn(model, "pinocchio", rep)
            a, tq = rng.normal(size=model.nv), rng.normal(size=n)
            ba, sdd = a[:6].copy(), a[6:].copy()
            kd.set_state(H, s, vb, sd)  # as a loop over states: a state, its derivatives, the next state
            kd.inverse_dynamics_derivatives(ba, sdd)
            kd.set_state(H, s, vb, sd)
            q, v = bridge.to_pinocchio_state(model, kd.state)
            pm = kd._engine.pm
            d = pm.createData()
            tau = np.concatenate([np.zeros(6), tq])
            args = (pm, d, q, v)

            def rnea_copy(args=args, a=a) -> np.ndarray:
                dq, dv, M = pin.computeRNEADerivatives(*args, a)
                return np.concatenate((dq, dv, M.T)).reshape(3, *M.shape)

            def aba_copy(args=args, tau=tau, shape=(3, pm.nv, pm.nv)) -> np.ndarray:
                return np.concatenate(pin.computeABADerivatives(*args, tau)).reshape(shape)

            t = best(
                [
                    lambda args=args, a=a: pin.computeRNEADerivatives(*args, a),
                    rnea_copy,
                    lambda kd=kd, ba=ba, sdd=sdd: kd.inverse_dynamics_derivatives(ba, sdd),
                    lambda args=args, tau=tau: pin.computeABADerivatives(*args, tau),
                    aba_copy,
                    lambda kd=kd, tq=tq: kd.forward_dynamics_derivatives(tq),
                ],
                rounds=rounds,
            )
            print(
                f"{robot:14s} {rep:9s} computeRNEADerivatives {t[0]:6.2f} us (+copy {t[1]:6.2f})  KinDyn ID "
                f"derivatives {t[2]:6.2f} us ({t[2] / t[0]:.3f}x; {t[2] / t[1]:.3f}x the floor) | "
                f"computeABADerivatives {t[3]:6.2f} us (+copy {t[4]:6.2f})  KinDyn FD derivatives "
                f"{t[5]:6.2f} us ({t[5] / t[3]:.3f}x; {t[5] / t[4]:.3f}x the floor)"
            )
        if robot != robots[0] or "--skip-others" in sys.argv:
            continue
        others(pin, path, model, kd, pm, d, a, rng, rounds, t[2])


def others(pin, path, model, kd, pm, d, a, rng, rounds: int, t_id: float) -> None:
    """The batch of 100 states, the difference fallbacks, Drake's AutoDiffXd and adam (MIXED, ``kd``
    at its state; ``t_id`` its ID derivatives' time)."""
    n = model.n_dofs
    # a batch of states (MIXED): per state, against Pinocchio's call in a Python loop
    N = 100
    st = bridge.State(
        bridge.Transform.exp(rng.normal(size=(N, 6))), rng.uniform(-0.5, 0.5, (N, n)),
        rng.normal(size=(N, 6)), rng.normal(size=(N, n)), "mixed",
    )  # fmt: skip
    kdb = bridge.KinDyn(model, "pinocchio", "mixed")
    kdb.set_robot_state(st)
    A = rng.normal(size=(N, model.nv))
    qs, vs = bridge.to_pinocchio_state(model, st)  # (N, nq), (N, nv)

    def pin_loop() -> None:
        for i in range(N):
            pin.computeRNEADerivatives(pm, d, qs[i], vs[i], A[i])

    tb = best([pin_loop, lambda: kdb.inverse_dynamics_derivatives(A[:, :6], A[:, 6:])], n=3, rounds=rounds)
    print(
        f"mixed     batch of {N}: computeRNEADerivatives (Python loop) {tb[0] / N:6.1f} us/state  "
        f"KinDyn ID derivatives {tb[1] / N:6.1f} us/state ({tb[1] / tb[0]:.2f}x)"
    )
    for engine in ("featherstone", "idyntree"):
        kd2 = bridge.KinDyn(model, engine, "mixed")
        kd2.set_robot_state(kd.state)
        t2 = best([lambda kd2=kd2, a=a: kd2.inverse_dynamics_derivatives(a[:6], a[6:])], n=3, rounds=3)[0]
        print(
            f"mixed     {engine} (difference fallback) ID derivatives {t2 / 1e3:.2f} ms "
            f"({t2 / t_id:.0f}x the analytical path)"
        )
    run = drake_autodiff(model, kd.state, a)
    if run is None:
        print("mixed     Drake AutoDiffXd: pydrake not installed")
    else:
        t3 = best([run], n=3, rounds=5)[0]
        print(
            f"mixed     Drake AutoDiffXd ID derivatives {t3 / 1e3:.2f} ms "
            f"({t3 / t_id:.0f}x the analytical path)"
        )
    jac = adam_jax(path, model)
    if jac is None:
        print("mixed     adam jax: not timed")
    else:
        t4 = best([jac], n=20, rounds=5)[0]
        print(f"mixed     adam jax (jit jacfwd of rnea) {t4:.1f} us ({t4 / t_id:.1f}x the analytical path)")


if __name__ == "__main__":
    main()
