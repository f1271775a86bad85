"""The compiled (numba) algorithms of the general engine (joints of any width) against the numpy ones.

:mod:`bridge.backends.featherstone.general_compiled` runs :func:`~bridge.backends.featherstone.
general.kinematics`, :func:`~bridge.backends.featherstone.general.rnea`,
:func:`~bridge.backends.featherstone.general.crba` and
:func:`~bridge.backends.featherstone.general.aba` as numba kernels (parallel over the batch from
``compiled.PARALLEL_MIN`` states), and the engine's mass matrix with its change of variables folded
into the kernel (the armature of planar, ball and free joints through their blocks). The numpy path
(``compiled.numpy_only()``) is the reference, 1e-12 relative (Frobenius norm of the batch): random
trees with planar, ball and free joints anywhere (and every joint kind), armature on some joints,
fixed and floating bases, every representation, external forces, N = 1, below and above the parallel
threshold and not a multiple of the blocks. (Both ABAs work in world coordinates; they differ by a
few 1e-13 on these models, as each differs from Pinocchio's.) The engine against Pinocchio is
tests/backends/test_featherstone_general.py (which runs the compiled path when numba is there).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import bridge
from bridge.backends.featherstone import compiled, general, general_compiled
from bridge.model.joints import JointKind
from tests.helpers import assert_close, random_state, wide_model

pytestmark = pytest.mark.skipif(not compiled.available(), reason="numba missing or BRIDGE_NUMBA=0")

REPS = ("body", "inertial", "mixed")
SIZES = (1, 5, 67)  # one state, serial, parallel (not a multiple of the blocks)


def _models() -> dict[str, bridge.Model]:
    kinds = ("revolute",) * 10 + ("ball", "free")
    return {
        "wide floating": wide_model(0, floating=True),
        "wide scene": wide_model(4, floating=False),
        "armed balls": bridge.random_model(12, seed=0, joint_kinds=kinds, armature_probability=0.7),
        "armed scene": bridge.random_model(
            12, seed=3, joint_kinds=("ball", "planar", "free", "prismatic"), floating=False,
            armature_probability=0.7,
        ),
    }  # fmt: skip


MODELS = _models()


def _engine(model: bridge.Model, rep: str, N: int, seed: int) -> bridge.KinDyn:
    kd = bridge.KinDyn(model, "featherstone", rep)
    kd.set_robot_state(random_state(model, np.random.default_rng(seed), rep, batch=(N,)))
    return kd


def _numpy_kinematics(engine) -> general.Kinematics:
    """The numpy kinematics at the engine's state."""
    flat = engine._flat
    return general.kinematics(engine.tree, flat.H, flat.s)


@pytest.mark.parametrize("N", SIZES)
@pytest.mark.parametrize("name", [*MODELS, "every kind"])
def test_compiled_kinematics_equals_general_kinematics(name: str, N: int) -> None:
    """Poses, world subspaces and world inertias of every joint kind (revolute, continuous,
    prismatic, fixed, planar, ball, free), 1e-12 relative per body."""
    model = MODELS.get(name) or bridge.random_model(
        14, seed=5, joint_kinds=tuple(k.value for k in JointKind), floating=False
    )
    engine = _engine(model, "inertial", N, N + 2)._engine
    kin, ref = engine._kin, _numpy_kinematics(engine)
    assert kin.packed is not None and ref.packed is None
    for i, b in enumerate(engine.tree.bodies):
        assert_close(kin.poses[i], ref.poses[i], 1e-12, f"{name} pose {b.name}")
        assert_close(kin.S[i], ref.S[i], 1e-12, f"{name} S {b.name}")
        assert_close(kin.inertias[i], ref.inertias[i], 1e-12, f"{name} inertia {b.name}")


@pytest.mark.parametrize("N", SIZES)
@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_crba_equals_general_crba(name: str, N: int) -> None:
    model = MODELS[name]
    engine = _engine(model, "body", N, N)._engine
    tree, kin, ref_kin = engine.tree, engine._kin, _numpy_kinematics(engine)
    assert kin.packed is not None  # (the compiled kinematics)
    assert_close(general_compiled.crba(tree, kin), general.crba(tree, ref_kin), 1e-12, f"{name} N={N}")
    ref_kin.packed = None
    assert_close(general_compiled.crba(tree, ref_kin), general.crba(tree, ref_kin), 1e-12, f"{name} N={N}")


@pytest.mark.parametrize("N", SIZES)
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("name", list(MODELS))
def test_engine_mass_matrix_compiled_equals_numpy(name: str, rep: str, N: int) -> None:
    """``T^T (M + A) T`` of the kernel against ``matrix_back`` of the numpy CRBA, in every
    representation (joint blocks of planar, ball and free joints, with and without armature)."""
    model = MODELS[name]
    fast = _engine(model, rep, N, 7 * N).mass_matrix()
    with compiled.numpy_only():
        ref = _engine(model, rep, N, 7 * N).mass_matrix()
    assert_close(fast, ref, 1e-12, f"{name} {rep} N={N}")


@pytest.mark.parametrize("forces", [False, True], ids=["no forces", "forces"])
@pytest.mark.parametrize("N", SIZES)
@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_aba_equals_general_aba(name: str, N: int, forces: bool) -> None:
    model = MODELS[name]
    engine = _engine(model, "body", N, N + 1)._engine
    tree, kin = engine.tree, engine._kin
    rng = np.random.default_rng(N)
    tau = rng.normal(size=(N, model.nv))
    fext = {i: rng.normal(size=(N, 6)) for i in (1, len(tree.bodies) - 1)} if forces else None
    fast = general_compiled.aba(tree, kin, engine._nu_B, tau, engine._g, fext)
    ref = general.aba(tree, _numpy_kinematics(engine), engine._nu_B, tau, engine._g, fext)
    assert_close(fast, ref, 1e-12, f"{name} N={N}")


@pytest.mark.parametrize("N", SIZES)
@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_rnea_equals_general_rnea(name: str, N: int) -> None:
    """With and without velocities and accelerations (the bias, gravity and inverse dynamics the
    engine asks for), with and without external forces."""
    model = MODELS[name]
    engine = _engine(model, "body", N, N + 3)._engine
    tree, kin, ref_kin = engine.tree, engine._kin, _numpy_kinematics(engine)
    rng = np.random.default_rng(N)
    nu_dot = rng.normal(size=(N, model.nv))
    fext = {i: rng.normal(size=(N, 6)) for i in (1, len(tree.bodies) - 1)}
    for nu, nd, f in [(engine._nu_B, None, None), (None, None, None), (engine._nu_B, nu_dot, None),
                      (engine._nu_B, nu_dot, fext), (None, nu_dot, fext)]:  # fmt: skip
        fast = general_compiled.rnea(tree, kin, nu, nd, engine._g, f)
        ref = general.rnea(tree, ref_kin, nu, nd, engine._g, f)
        what = f"{name} N={N} nu {nu is not None} nu_dot {nd is not None} fext {f is not None}"
        assert_close(fast, ref, 1e-12, what)


@pytest.mark.parametrize("N", SIZES)
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("name", list(MODELS))
def test_engine_inverse_dynamics_compiled_equals_numpy(name: str, rep: str, N: int) -> None:
    """Bias and gravity forces, inverse dynamics with and without wrenches, in every representation."""
    model = MODELS[name]
    rng = np.random.default_rng(N)
    nb = 6 if model.floating else 0
    acc = rng.normal(size=(N, model.nv))
    base_acc, s_ddot = (acc[:, :6] if nb else None), acc[:, nb:]
    w = {model.frame_names[-1]: rng.normal(size=(N, 6))}

    def queries(kd: bridge.KinDyn) -> list[np.ndarray]:
        return [kd.bias_forces(), kd.gravity_forces(), kd.inverse_dynamics(base_acc, s_ddot),
                kd.inverse_dynamics(base_acc, s_ddot, external_wrenches=w)]  # fmt: skip

    fast = queries(_engine(model, rep, N, 5 * N))
    with compiled.numpy_only():
        ref = queries(_engine(model, rep, N, 5 * N))
    for what, x, y in zip(("h", "g", "ID", "ID wrenches"), fast, ref, strict=True):
        assert_close(x, y, 1e-12, f"{name} {rep} N={N} {what}")


@pytest.mark.parametrize("N", SIZES)
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("name", list(MODELS))
def test_engine_forward_dynamics_compiled_equals_numpy(name: str, rep: str, N: int) -> None:
    model = MODELS[name]
    rng = np.random.default_rng(N)
    tau = rng.normal(size=(N, model.n_dofs))
    w = {model.frame_names[-1]: rng.normal(size=(N, 6))}
    kd = _engine(model, rep, N, 3 * N)
    fast = kd.forward_dynamics(tau), kd.forward_dynamics(tau, external_wrenches=w)
    with compiled.numpy_only():
        kd = _engine(model, rep, N, 3 * N)
        ref = kd.forward_dynamics(tau), kd.forward_dynamics(tau, external_wrenches=w)
    assert_close(fast[0], ref[0], 1e-12, f"{name} {rep} N={N}")
    assert_close(fast[1], ref[1], 1e-12, f"{name} {rep} N={N} wrenches")


def test_aba_without_inertia_at_a_joint_leaves_it_to_the_numpy_path() -> None:
    """A wide joint moving no inertia (D singular): no compiled result (None), so the engine gives
    what the numpy ABA gives in that case."""
    model = MODELS["wide floating"]
    engine = _engine(model, "body", 40, 0)._engine
    tree, kin = engine.tree, engine._kin
    leaf = max(i for i, b in enumerate(tree.bodies) if b.v.stop - b.v.start > 1 and i not in {
        b.parent for b in tree.bodies
    })  # fmt: skip
    kin.inertias[leaf][...] = 0.0  # (in place: a view into the packed inertias on the compiled path)
    tau = np.ones((40, model.nv))
    assert general_compiled.aba(tree, kin, engine._nu_B, tau, engine._g) is None


@pytest.mark.parametrize("name", ["armed balls", "armed scene"])
def test_armature_on_a_joint_block_is_folded_in(name: str) -> None:
    """These models reach the kernel's armature through a joint's block (``D_i^T a_i D_i``)."""
    model = MODELS[name]
    engine = _engine(model, "mixed", 3, 0)._engine
    D = general_compiled._joint_rows(engine.tree, engine._ft, 3)
    assert D.shape == (3, model.nv, 6)


def test_batch_axes_and_serial_kernel() -> None:
    """A batch of shape (2, 3) (the serial kernel) equals its states one by one."""
    model = MODELS["wide floating"]
    state = random_state(model, np.random.default_rng(2), "mixed", batch=(2, 3))
    kd = bridge.KinDyn(model, "featherstone", "mixed")
    kd.set_robot_state(state)
    M = kd.mass_matrix()
    assert M.shape == (2, 3, model.nv, model.nv)
    for i in range(2):
        for j in range(3):
            one = bridge.KinDyn(model, "featherstone", "mixed")
            one.set_state(
                state.world_H_base[i, j], state.s[i, j], state.base_velocity[i, j], state.s_dot[i, j]
            )
            assert_close(one.mass_matrix(), M[i, j], 1e-12, f"state {i, j}")


def test_numpy_path_without_numba() -> None:
    """``BRIDGE_NUMBA=0`` (as without numba): the compiled path is not taken and the engine's mass
    matrix is the numpy one."""
    code = (
        "import numpy as np, bridge\n"
        "from bridge.backends.featherstone import general_compiled\n"
        "from tests.helpers import random_state, wide_model\n"
        "m = wide_model(0)\n"
        "kd = bridge.KinDyn(m, 'featherstone', 'mixed')\n"
        "kd.set_robot_state(random_state(m, np.random.default_rng(1), 'mixed', batch=(40,)))\n"
        "e = kd._engine\n"
        "assert general_compiled.mass_matrix(e.tree, e._kin, e._ft) is None\n"
        "print(repr(kd.mass_matrix().ravel().tolist()))\n"
    )
    env = {**os.environ, "BRIDGE_NUMBA": "0"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    got = np.array(eval(out.stdout))  # our own repr of a list of floats
    model = wide_model(0)
    kd = bridge.KinDyn(model, "featherstone", "mixed")
    kd.set_robot_state(random_state(model, np.random.default_rng(1), "mixed", batch=(40,)))
    assert_close(got, kd.mass_matrix().ravel(), 1e-12)


@pytest.mark.parametrize("name", ["kinematics", "rnea", "crba", "aba"])
def test_serial_and_parallel_kernels_cached_apart(name: str) -> None:
    nk = pytest.importorskip("bridge.backends.featherstone.numba_general")
    ser, par = getattr(nk, f"{name}_ser"), getattr(nk, f"{name}_par")
    assert not ser.targetoptions.get("parallel") and par.targetoptions.get("parallel")
    assert ser._cache._cache_file._index_path != par._cache._cache_file._index_path
