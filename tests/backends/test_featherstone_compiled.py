"""The compiled (numba) Featherstone kernels against the numpy kernels, and parallel against serial.

:mod:`bridge.backends.featherstone.compiled` runs the batched RNEA, CRBA and ABA as numba kernels
(parallel over the batch) when numba is installed; :func:`~bridge.backends.featherstone.compiled.
numpy_only` switches back to the numpy kernels, the reference here. Models: iCub (icub-models) and
random trees (bridge.model.random: fixed and floating, branched and serial, revolute and prismatic
joints, massless links); batch shapes with several leading axes, N = 1, and N not a multiple of the
kernels' groups of states (16) nor of their blocks.

Tolerances: 1e-12 relative (Frobenius norm of the batch) for ID, H and C. Forward dynamics compare
to 1e-10: the numpy ABA works in world coordinates, where the rounding of the articulated inertias
grows with the bodies' distance from the world origin (on iCub it agrees with Pinocchio to about
6e-14, the compiled ABA, in world-aligned coordinates at the base's origin, to about 2e-15; the two
differ by up to about 2e-12 in the largest entry); the compiled ABA is also checked against
``H^-1 (tau - C)`` at 1e-10, 10 m from the origin, and for invariance under moving the robot by 1 km
(1e-12).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

import bridge
from bridge.backends.featherstone import (
    CRBA,
    ID,
    FDab,
    FDfb,
    HandC,
    HandCfree,
    IDfree,
    compiled,
    to_featherstone,
)
from bridge.robots import robot_path
from bridge.spatial.so3 import so3_exp
from tests.helpers import assert_close

pytestmark = pytest.mark.skipif(not compiled.available(), reason="numba missing or BRIDGE_NUMBA=0")


@contextmanager
def _serial() -> Iterator[None]:
    """Every batch through the serial kernels."""
    old = compiled.PARALLEL_MIN
    compiled.PARALLEL_MIN = 1 << 62
    try:
        yield
    finally:
        compiled.PARALLEL_MIN = old


def _models() -> dict[str, bridge.Model]:
    return {
        "icub": bridge.load_urdf(robot_path("iCubGazeboV2_5")),
        "tree": bridge.random_model(12, seed=3),
        "chain": bridge.random_model(9, seed=4, branching=0.0),
        "fixed": bridge.random_model(10, seed=5, floating=False),
        "prismatic": bridge.random_model(8, seed=6, joint_kinds=("prismatic", "revolute")),
    }


MODELS = _models()


def _fb_inputs(fm, batch: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray]:
    n = fm.NB - 6
    quat = rng.normal(size=(*batch, 4))
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    xfb = np.concatenate([quat, rng.normal(size=(*batch, 3)), rng.normal(size=(*batch, 6))], axis=-1)
    return {
        "xfb": xfb,
        "q": rng.uniform(-1.5, 1.5, (*batch, n)),
        "qd": rng.normal(size=(*batch, n)),
        "qdd": rng.normal(size=(*batch, n)),
        "tau": rng.normal(size=(*batch, n)),
        "a_fb": rng.normal(size=(*batch, 6)),
    }


def _floating(fm, x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    f_fb, tau = IDfree(fm, x["xfb"], x["q"], x["qd"], x["a_fb"], x["qdd"])
    H, C = HandCfree(fm, x["xfb"], x["q"], x["qd"])
    xdfb, qdd = FDfb(fm, x["xfb"], x["q"], x["qd"], x["tau"])
    return {
        "f_fb": f_fb,
        "tau": tau,
        "H": H,
        "C": C,
        "H_only": CRBA(fm, x["q"], x["xfb"]),
        "xdfb": xdfb,
        "qdd": qdd,
    }


def _fixed(fm, batch: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray]:
    q, qd, qdd = (rng.uniform(-1.5, 1.5, (*batch, fm.NB)) for _ in range(3))
    H, C = HandC(fm, q, qd)
    return {"tau": ID(fm, q, qd, qdd), "H": H, "C": C, "H_only": CRBA(fm, q), "qdd": FDab(fm, q, qd, qdd)}


def _run(model: bridge.Model, batch: tuple[int, ...], seed: int = 0) -> dict[str, np.ndarray]:
    fm = to_featherstone(model)
    rng = np.random.default_rng(seed)
    if model.floating:
        return _floating(fm, _fb_inputs(fm, batch, rng))
    return _fixed(fm, batch, rng)


def _tol(key: str) -> float:
    return 1e-10 if key in ("qdd", "xdfb") else 1e-12


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("batch", [(), (1,), (37,), (2, 3, 7), (1033,)])
def test_compiled_equals_numpy(name: str, batch: tuple[int, ...]) -> None:
    """Every batched algorithm: the compiled kernels (parallel from 32 states) give the numpy
    kernels' numbers, with the batch's shape."""
    model = MODELS[name]
    fast = _run(model, batch)
    with compiled.numpy_only():
        ref = _run(model, batch)
    for key, r in ref.items():
        assert fast[key].shape == r.shape, key
        assert_close(fast[key], r, _tol(key), f"{name} {key} {batch}")


@pytest.mark.parametrize("name", ["icub", "tree", "fixed"])
@pytest.mark.parametrize("N", [1, 5, 16, 33, 100, 1031])
def test_parallel_equals_serial(name: str, N: int) -> None:
    """The parallel kernels (blocks of states over numba's threads) give the serial kernels'
    numbers, for N = 1 and N not a multiple of the groups of 16 states or of the blocks."""
    model = MODELS[name]
    par = _run(model, (N,), seed=N)
    with _serial():
        ser = _run(model, (N,), seed=N)
    for key, r in ser.items():
        assert_close(par[key], r, 1e-12, f"{name} {key} N={N}")


@pytest.mark.parametrize("name", ["icub", "tree", "chain"])
def test_compiled_aba_solves_the_mass_matrix(name: str) -> None:
    """The compiled ABA's accelerations solve ``H [a_fb; qdd] = [0; tau] - C`` (HandCfree)."""
    model = MODELS[name]
    fm = to_featherstone(model)
    x = _fb_inputs(fm, (50,), np.random.default_rng(7))
    xdfb, qdd = FDfb(fm, x["xfb"], x["q"], x["qd"], x["tau"])
    H, C = HandCfree(fm, x["xfb"], x["q"], x["qd"])
    rhs = np.concatenate([np.zeros((50, 6)), x["tau"]], axis=-1) - C
    nd = np.linalg.solve(H, rhs[..., None])[..., 0]
    assert_close(np.concatenate([xdfb[:, 7:], qdd], axis=-1), nd, 1e-10)


def _moved(x: dict[str, np.ndarray], d: np.ndarray) -> dict[str, np.ndarray]:
    """The floating-base inputs ``x`` of :func:`_fb_inputs` with the robot moved by ``d`` (3,): the
    same motion (the base's spatial velocity at the world origin changes by ``d x w``)."""
    y = {k: v.copy() for k, v in x.items()}
    y["xfb"][..., 4:7] += d
    y["xfb"][..., 10:13] += np.cross(d, y["xfb"][..., 7:10])
    return y


@pytest.mark.parametrize("name", ["icub", "tree"])
def test_compiled_aba_far_from_the_origin(name: str) -> None:
    """10 m from the world's origin, the compiled ABA still gives the numpy ABA's accelerations and
    solves the mass matrix (both to 1e-10; the world-coordinate base velocity of the inputs grows
    ill-conditioned with the distance: about 1e-9 at 100 m, for every method)."""
    fm = to_featherstone(MODELS[name])
    x = _moved(_fb_inputs(fm, (50,), np.random.default_rng(11)), np.array([6.0, -8.0, 0.0]))
    xdfb, qdd = FDfb(fm, x["xfb"], x["q"], x["qd"], x["tau"])
    with compiled.numpy_only():
        xdfb_ref, qdd_ref = FDfb(fm, x["xfb"], x["q"], x["qd"], x["tau"])
    assert_close(xdfb, xdfb_ref, 1e-10, "xdfb")
    assert_close(qdd, qdd_ref, 1e-10, "qdd")
    H, C = HandCfree(fm, x["xfb"], x["q"], x["qd"])
    rhs = np.concatenate([np.zeros((50, 6)), x["tau"]], axis=-1) - C
    nd = np.linalg.solve(H, rhs[..., None])[..., 0]
    assert_close(np.concatenate([xdfb[:, 7:], qdd], axis=-1), nd, 1e-10)


@pytest.mark.parametrize("name", ["icub", "chain"])
def test_compiled_aba_translation_invariant(name: str) -> None:
    """The compiled ABA works at the base's origin: the same motion 1 km away gives the same joint
    accelerations and the same base acceleration (moved back to the first place) to 1e-12 (the
    numpy ABA, at the world's origin, to about 1e-7 there)."""
    fm = to_featherstone(MODELS[name])
    x = _fb_inputs(fm, (40,), np.random.default_rng(12))
    d = np.array([600.0, -800.0, 0.0])
    y = _moved(x, d)
    xdfb, qdd = FDfb(fm, x["xfb"], x["q"], x["qd"], x["tau"])
    xdfb_far, qdd_far = FDfb(fm, y["xfb"], y["q"], y["qd"], y["tau"])
    assert_close(qdd_far, qdd, 1e-12, "qdd")
    a = xdfb_far[:, 7:].copy()
    a[:, 3:] -= np.cross(d, a[:, :3])
    assert_close(a, xdfb[:, 7:], 1e-12, "base acceleration")


@pytest.mark.parametrize("floating", [True, False])
def test_engine_armature_and_wrenches(floating: bool) -> None:
    """The featherstone engine with joint armature (compiled path) and with external wrenches
    (the numpy path: the compiled kernels take none) equals the numpy kernels, on rotated bases
    (a fixed base's gravity enters in its own coordinates)."""
    model = bridge.random_model(
        7, seed=8, floating=floating, massless_probability=0.0, armature_probability=0.8
    )
    rng = np.random.default_rng(1)
    N, k = 40, model.n_dofs
    H = np.broadcast_to(np.eye(4), (N, 4, 4)).copy()
    H[:, :3, :3] = so3_exp(rng.normal(size=(N, 3)))
    H[:, :3, 3] = rng.normal(size=(N, 3))
    s, sd, tau = rng.normal(size=(N, k)), rng.normal(size=(N, k)), rng.normal(size=(N, k))
    vb, nd = rng.normal(size=(N, 6)), rng.normal(size=(N, 6 + k))
    frame = model.links[-1].name
    base_acc = nd[:, :6] if floating else None
    wrench = {frame: rng.normal(size=(N, 6))}

    def quantities() -> list[np.ndarray]:
        kd = bridge.KinDyn(model, engine="featherstone", representation="mixed")
        kd.set_state(H, s, vb, sd)
        return [
            kd.mass_matrix(),
            kd.bias_forces(),
            kd.forward_dynamics(tau),
            kd.inverse_dynamics(base_acc, nd[:, 6:]),
            kd.inverse_dynamics(base_acc, nd[:, 6:], wrench),
            kd.forward_dynamics(tau, wrench),
        ]

    fast = quantities()
    with compiled.numpy_only():
        ref = quantities()
    for i, (a, b) in enumerate(zip(fast, ref, strict=True)):
        assert_close(a, b, 1e-10 if i in (2, 5) else 1e-12, f"quantity {i}")


@pytest.mark.parametrize("rep", ["body", "inertial", "mixed"])
@pytest.mark.parametrize("name", ["icub", "tree", "fixed"])
@pytest.mark.parametrize("N", [5, 40, 1100])  # the chunk path; one launch (one batch; two chunks)
def test_engine_mass_matrix_changed_within_the_crba(
    name: str, rep: str, N: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled CRBA writes each state's matrix in the representation as it makes it (``T^T H
    T``; N = 5: the loaded batch's CRBA with the change of variables' X per state, from 32 states the
    one launch of ``numba_mass``): the numpy CRBA followed by the change of variables' numpy path
    gives the same numbers."""
    from bridge.conventions.change_of_variables import ChangeOfVariables

    model = MODELS[name]
    rng = np.random.default_rng(N)
    H = np.broadcast_to(np.eye(4), (N, 4, 4)).copy()
    H[:, :3, :3] = so3_exp(rng.normal(size=(N, 3)))
    H[:, :3, 3] = rng.normal(size=(N, 3))
    k = model.n_dofs
    args = (H, rng.uniform(-1.5, 1.5, (N, k)), rng.normal(size=(N, 6)), rng.normal(size=(N, k)))
    kd = bridge.KinDyn(model, engine="featherstone", representation=rep)
    kd.set_state(*args)
    fast = kd.mass_matrix()
    ref_kd = bridge.KinDyn(model, engine="featherstone", representation=rep)
    monkeypatch.setattr(ChangeOfVariables, "_matrix_back_compiled", lambda *a: None)  # its numpy path
    with compiled.numpy_only():
        ref_kd.set_state(*args)
        ref = ref_kd.mass_matrix()
    assert_close(fast, ref, 1e-12, f"{name} {rep} N={N}")


def test_numpy_path_without_numba() -> None:
    """``BRIDGE_NUMBA=0`` (as without numba): the numpy kernels run and give the same numbers."""
    code = (
        "import numpy as np, bridge\n"
        "from bridge.backends.featherstone import IDfree, compiled, to_featherstone\n"
        "assert not compiled.available()\n"
        "m = to_featherstone(bridge.random_model(6, seed=1))\n"
        "r = np.random.default_rng(0)\n"
        "f, t = IDfree(m, np.r_[1, 0, 0, 0, 0, 0, 0, r.normal(size=6)], *r.normal(size=(2, m.NB - 6)),\n"
        "              r.normal(size=6), r.normal(size=m.NB - 6))\n"
        "print(repr(np.concatenate([f, t]).tolist()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_env(BRIDGE_NUMBA="0")
    )
    got = np.array(eval(out.stdout))  # our own repr of a list of floats
    m = to_featherstone(bridge.random_model(6, seed=1))
    r = np.random.default_rng(0)
    f, t = IDfree(
        m, np.r_[1, 0, 0, 0, 0, 0, 0, r.normal(size=6)], *r.normal(size=(2, m.NB - 6)),
        r.normal(size=6), r.normal(size=m.NB - 6),
    )  # fmt: skip
    assert_close(got, np.concatenate([f, t]), 1e-12)


def _env(**extra: str) -> dict[str, str]:
    import os

    return {**os.environ, **extra}


@pytest.mark.parametrize("name", ["rnea", "crba", "aba"])
def test_serial_and_parallel_kernels_cached_apart(name: str) -> None:
    """The serial and the parallel kernel of one algorithm keep separate entries in numba's disk
    cache (under one entry, whichever compiled first was loaded for both: the "serial" kernel ran
    numba's threads, and the parallel one could be serial)."""
    nk = pytest.importorskip("bridge.backends.featherstone.numba_kernels")
    ser, par = getattr(nk, f"{name}_ser"), getattr(nk, f"{name}_par")
    assert not ser.targetoptions.get("parallel") and par.targetoptions.get("parallel")
    assert ser._cache._cache_file._index_path != par._cache._cache_file._index_path
