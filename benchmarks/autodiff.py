"""bridge's conversions inside JAX and CasADi next to the numpy path: time and ratio.

    python benchmarks/autodiff.py [--robot NAME] [--states N] [--quick]

* **Batch** (default 100,000 states, ``--quick``: 1,000): ``velocity_transform`` (T and T_dot),
  ``convert_mass_matrix`` and ``convert_bias_forces`` from MuJoCo's convention to MIXED for a batch
  of states, with the numpy path (batched arrays) and the same calls on JAX arrays under ``jax.jit``
  (CPU, float64; compiled once before timing, outputs blocked on). The ratio is numpy / JAX.
* **One state**: the same three conversions for one state, numpy against a ``casadi.Function`` of
  ``(H, s, v, s_dot, M, h)`` built from bridge's conversions on SX (and the jitted JAX function on one
  state, for reference). The ratio is the call's time / numpy's.

Both paths are compared before timing (1e-12 relative). Needs the ``jax`` and ``casadi`` extras.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import bridge
from bridge.conventions.convert import convert_bias_forces, convert_mass_matrix
from bridge.conventions.state import State
from bridge.validation.check import random_states

SOURCE, TARGET = "mujoco", "mixed"


def best_time(fn: Callable[[], object], min_time: float, repeats: int = 5) -> float:
    """The best over ``repeats`` of the mean time per call, each repeat at least ``min_time`` s."""
    fn()
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t >= min_time:
            break
        n *= 2
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def conversions(model: bridge.Model, H, s, v, sd, M, h) -> tuple:
    """T, T_dot, M and h converted from :data:`SOURCE` to :data:`TARGET` (any array type).

    ``v`` is the base velocity in MIXED; ``M`` and ``h`` are in the source convention."""
    state = State(H, s, v, sd, TARGET)
    T, T_dot = bridge.velocity_transform(model, state, SOURCE, TARGET)
    M_t = convert_mass_matrix(model, state, M, SOURCE, TARGET)
    return T, T_dot, M_t, convert_bias_forces(model, state, h, M, SOURCE, TARGET)


def inputs(model: bridge.Model, n: int) -> tuple[np.ndarray, ...]:
    """A batch of ``n`` states (MIXED) and symmetric positive-definite M, random h."""
    st = random_states(model, n, np.random.default_rng(0)).to(TARGET)
    rng = np.random.default_rng(1)
    A = rng.normal(size=(n, model.nv, model.nv))
    M = A @ np.swapaxes(A, -1, -2) + model.nv * np.eye(model.nv)
    return st.world_H_base.matrix, st.s, st.base_velocity, st.s_dot, M, rng.normal(size=(n, model.nv))


def _agree(got: tuple, ref: tuple, what: str) -> None:
    for g, r in zip(got, ref, strict=True):
        g = np.asarray(g).reshape(np.shape(r))
        if not np.allclose(g, r, rtol=0, atol=1e-12 * max(1.0, np.abs(r).max())):
            raise SystemExit(f"{what} differs from numpy by {np.abs(g - r).max():.3g}")


def batch_row(model: bridge.Model, n: int, min_time: float) -> tuple[float, float]:
    """(numpy, jitted JAX) seconds per batch of ``n`` states."""
    import jax
    import jax.numpy as jnp

    x = inputs(model, n)
    xj = tuple(jnp.asarray(a) for a in x)
    run = jax.jit(lambda *a: conversions(model, *a))
    _agree(jax.block_until_ready(run(*xj)), conversions(model, *x), "JAX batch")
    t_np = best_time(lambda: conversions(model, *x), min_time, repeats=3)
    t_jax = best_time(lambda: jax.block_until_ready(run(*xj)), min_time, repeats=3)
    return t_np, t_jax


def single_row(model: bridge.Model, min_time: float) -> tuple[float, float, float]:
    """(numpy, casadi.Function, jitted JAX) seconds per call for one state."""
    import casadi
    import jax
    import jax.numpy as jnp

    x = tuple(a[0] for a in inputs(model, 1))
    n, nv = model.n_dofs, model.nv
    sym = (
        casadi.SX.sym("H", 4, 4),
        casadi.SX.sym("s", n),
        casadi.SX.sym("v", 6),
        casadi.SX.sym("sd", n),
        casadi.SX.sym("M", nv, nv),
        casadi.SX.sym("h", nv),
    )
    fn = casadi.Function("convert", list(sym), list(conversions(model, *sym)))
    ref = conversions(model, *x)
    _agree(fn(*x), ref, "casadi.Function")
    run = jax.jit(lambda *a: conversions(model, *a))
    xj = tuple(jnp.asarray(a) for a in x)
    _agree(run(*xj), ref, "JAX single")
    t_np = best_time(lambda: conversions(model, *x), min_time)
    t_ca = best_time(lambda: fn(*x), min_time)
    t_jax = best_time(lambda: jax.block_until_ready(run(*xj)), min_time)
    return t_np, t_ca, t_jax


def _fmt(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:,.0f}" if us >= 100 else f"{us:.1f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="solo12", help="a shipped robot (default: solo12)")
    parser.add_argument("--states", type=int, default=100_000, help="batch size (default 100,000)")
    parser.add_argument("--quick", action="store_true", help="1,000 states, short timings (a smoke test)")
    args = parser.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    n = 1_000 if args.quick else args.states
    min_time = 0.01 if args.quick else 0.2
    model = bridge.load_urdf(args.robot)
    b_np, b_jax = batch_row(model, n, min_time)
    s_np, s_ca, s_jax = single_row(model, min_time)
    print(f"{args.robot} (nv = {model.nv}), {SOURCE} -> {TARGET}: velocity_transform + convert_mass_matrix")
    print(f"+ convert_bias_forces; jax {jax.__version__} (CPU, float64)\n")
    print("| what | numpy [µs] | other [µs] | ratio |")
    print("|---|--:|--:|--:|")
    print(f"| batch of {n:,}, jax.jit | {_fmt(b_np)} | {_fmt(b_jax)} | numpy / jax = {b_np / b_jax:.2f} |")
    ca = f"casadi / numpy = {s_ca / s_np:.2f}"
    print(f"| one state, casadi.Function | {_fmt(s_np)} | {_fmt(s_ca)} | {ca} |")
    print(f"| one state, jax.jit | {_fmt(s_np)} | {_fmt(s_jax)} | jax / numpy = {s_jax / s_np:.2f} |")


if __name__ == "__main__":
    main()
