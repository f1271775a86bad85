"""The mass matrices of a batch in one compiled launch (:mod:`bridge.backends.featherstone.numba_mass`),
in the user's convention, against the numpy path.

The kernel takes the states' poses and joint positions as they are and writes ``T^T H T`` for T from
a convention to Featherstone's, packed from the two conventions' declarations
(:func:`bridge.backends.featherstone.compiled.packed_change`). Reference: the numpy CRBA in
Featherstone's convention (spatial_v2's ``CRBA`` under ``numpy_only``) followed by the numpy change
of variables (``ChangeOfVariables._matrix_back_batch``). T from every registered convention (the
kernel takes any; the engine takes the three neutral ones), on iCub (icub-models) and random trees
(floating and fixed bases, prismatic joints, a shuffled DOF order), the serial (N = 5) and the
parallel kernel (N = 40); then the engine's large batches (N > CHUNK, several batch axes, joint
armature) against its chunked numpy path, and ``BRIDGE_NUMBA=0``. Tolerance: 1e-12 relative.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import bridge
import bridge.backends.registry
from bridge.backends.featherstone import CRBA, compiled, to_featherstone, to_featherstone_state
from bridge.backends.featherstone.state import FEATHERSTONE
from bridge.backends.featherstone.workspace import Workspace
from bridge.conventions.change_of_variables import change_of_variables
from bridge.conventions.convert import convention_names
from bridge.conventions.registry import convention
from bridge.robots import robot_path
from bridge.spatial.so3 import so3_exp
from tests.conventions import axioms
from tests.helpers import assert_close, random_state

pytestmark = pytest.mark.skipif(not compiled.available(), reason="numba missing or BRIDGE_NUMBA=0")

NAMES = convention_names()
MODELS = {
    "icub": bridge.load_urdf(robot_path("iCubGazeboV2_5")),
    "tree": bridge.random_model(12, seed=3),
    "fixed": bridge.random_model(10, seed=5, floating=False),
    "prismatic": bridge.random_model(8, seed=6, joint_kinds=("prismatic", "revolute")),
    "shuffled": bridge.random_model(7, seed=11),  # (a DOF order that is not the tree's)
}


def _reference(model: bridge.Model, state: bridge.State, name: str) -> np.ndarray:
    """``T^T H_F T`` by the numpy CRBA and the numpy change of variables."""
    fm = to_featherstone(model)
    xfb, q, _ = to_featherstone_state(fm, state)
    with compiled.numpy_only():
        H_F = CRBA(fm, q, xfb) if model.floating else CRBA(fm, q)
    cov = change_of_variables(model, state, convention(name).bound(model), FEATHERSTONE)
    return cov._matrix_back_batch(H_F.copy(), None)


@pytest.mark.parametrize("N", [5, 40])  # the serial and the parallel kernel
@pytest.mark.parametrize("mname", ["icub", "tree", "fixed", "prismatic", "shuffled"])
@pytest.mark.parametrize("name", NAMES)
def test_mass_matrix_in_every_convention(name: str, mname: str, N: int) -> None:
    axioms.resolved(name)
    model = MODELS[mname]
    rng = np.random.default_rng(N + NAMES.index(name))
    state = random_state(model, rng, "mixed", batch=(N,))
    ref = _reference(model, state, name)
    fm = to_featherstone(model)
    tree = Workspace.of(fm, model.floating).tree
    change = compiled.packed_change(model, convention(name))
    assert change is not None
    M = compiled.mass_matrix(
        tree, state.world_H_base.matrix, state.s, fm.dof_perm.astype(np.int64), None, change
    )
    assert_close(M, ref, 1e-12, f"{mname}: {name}")
    assert_close(M, np.swapaxes(M, -1, -2), 1e-14, "symmetric")


@pytest.mark.parametrize("mname", ["icub", "tree"])
@pytest.mark.parametrize("distance", [10.0, 1000.0])
def test_crba_far_from_the_origin(mname: str, distance: float) -> None:
    """The compiled CRBA works in world axes at the base's origin: moved ``distance`` metres away,
    the joint block is the same to 1e-12 and the whole matrix (base rows at the world's origin) the
    numpy CRBA's to 1e-12."""
    model = MODELS[mname]
    fm = to_featherstone(model)
    rng = np.random.default_rng(int(distance))
    state = random_state(model, rng, "mixed", batch=(40,))
    moved = bridge.State(
        state.world_H_base.matrix + np.pad(distance * np.array([0.6, -0.8, 0.0])[:, None], ((0, 1), (3, 0))),
        state.s, state.base_velocity, state.s_dot, "mixed",
    )  # fmt: skip
    xfb, q, _ = to_featherstone_state(fm, state)
    xfb_far, _, _ = to_featherstone_state(fm, moved)
    H, H_far = CRBA(fm, q, xfb), CRBA(fm, q, xfb_far)
    assert_close(H_far[:, 6:, 6:], H[:, 6:, 6:], 1e-12, "joint block")
    with compiled.numpy_only():
        ref = CRBA(fm, q, xfb_far)
    assert_close(H_far, ref, 1e-12, "numpy")


def _states(model: bridge.Model, batch: tuple[int, ...], seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    H = np.broadcast_to(np.eye(4), (*batch, 4, 4)).copy()
    H[..., :3, :3] = so3_exp(rng.normal(size=(*batch, 3)))
    H[..., :3, 3] = rng.normal(size=(*batch, 3))
    k = model.n_dofs
    return H, rng.uniform(-2, 2, (*batch, k)), rng.normal(size=(*batch, 6)), rng.normal(size=(*batch, k))


@pytest.mark.parametrize("rep", ["body", "inertial", "mixed"])
@pytest.mark.parametrize("floating", [True, False])
def test_engine_large_batch_with_armature(rep: str, floating: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of more than CHUNK states with two batch axes and joint armature: one launch (the
    chunked path is not taken) equal to the chunked numpy path."""
    from bridge.backends.featherstone.engine import FeatherstoneEngine

    model = bridge.random_model(9, seed=8, floating=floating, armature_probability=0.8)
    args = _states(model, (3, 350), 2)
    with compiled.numpy_only():
        ref_kd = bridge.KinDyn(model, engine="featherstone", representation=rep)
        ref_kd.set_state(*args)
        ref = ref_kd.mass_matrix()
    monkeypatch.setattr(FeatherstoneEngine, "_query", lambda *a, **k: pytest.fail("chunks were loaded"))
    kd = bridge.KinDyn(model, engine="featherstone", representation=rep)
    kd.set_state(*args)
    M = kd.mass_matrix()
    assert M.shape == (3, 350, model.nv, model.nv)
    assert_close(M, ref, 1e-12, rep)


def test_engine_large_batch_without_numba() -> None:
    """``BRIDGE_NUMBA=0``: the chunked numpy path gives the same mass matrices (iCub, MIXED)."""
    model = MODELS["icub"]
    args = _states(model, (1100,), 3)
    kd = bridge.KinDyn(model, engine="featherstone", representation="mixed")
    kd.set_state(*args)
    fast = kd.mass_matrix()
    code = (
        "import json, sys, numpy as np, bridge\n"
        "from bridge.backends.featherstone import compiled\n"
        "from bridge.robots import robot_path\n"
        "from tests.backends.test_featherstone_mass import _states\n"
        "assert not compiled.available()\n"
        "model = bridge.load_urdf(robot_path('iCubGazeboV2_5'))\n"
        "kd = bridge.KinDyn(model, engine='featherstone', representation='mixed')\n"
        "kd.set_state(*_states(model, (1100,), 3))\n"
        "M = kd.mass_matrix()\n"
        "print(json.dumps(M[::97].tolist()))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "BRIDGE_NUMBA": "0", "PYTHONPATH": root},
    )
    ref = np.array(json.loads(out.stdout.strip().splitlines()[-1]))
    assert_close(fast[::97], ref, 1e-12)


def test_mass_kernels_cached_apart() -> None:
    """The serial and the parallel kernel keep separate entries in numba's disk cache."""
    nm = pytest.importorskip("bridge.backends.featherstone.numba_mass")
    assert not nm.mass_ser.targetoptions.get("parallel") and nm.mass_par.targetoptions.get("parallel")
    assert nm.mass_ser._cache._cache_file._index_path != nm.mass_par._cache._cache_file._index_path
