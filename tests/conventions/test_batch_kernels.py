"""The compiled batched change of variables of a matrix (:mod:`bridge.conventions.batch_kernels`)
against its numpy reference (``ChangeOfVariables._matrix_back_batch``).

Every registered convention from every neutral representation (the maps the engines take), on
random models with a floating and a fixed base and a shuffled DOF order (joint permutations), with
batches above and below the parallel launch's threshold; then hand-made ``T = blkdiag(X, P)`` with
and without a permutation, X per state, shared or the identity, several batch axes; the result in
place, into ``out`` and new; and the numpy path alone with ``BRIDGE_NUMBA=0`` (a subprocess).
Tolerance: 1e-12 relative (the two paths differ only in the order of the roundings).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bridge
import bridge.backends.registry
from bridge.conventions.change_of_variables import ChangeOfVariables, JointOrder, compiled_matrix_kernels
from bridge.conventions.convert import convention_names, velocity_change
from tests.conventions import axioms
from tests.helpers import assert_close, random_state

ROOT = Path(__file__).resolve().parents[2]

NAMES = convention_names()
REPS = ("body", "inertial", "mixed")
compiled = pytest.mark.skipif(compiled_matrix_kernels() is None, reason="numba missing or BRIDGE_NUMBA=0")


def _three_ways(cov: ChangeOfVariables, M: np.ndarray) -> list[np.ndarray]:
    """The compiled result new, into ``out`` and in place (on a copy), M left as it was."""
    before = M.copy()
    new = cov._matrix_back_compiled(M, None, False)
    out = np.full(M.shape, np.nan)
    into = cov._matrix_back_compiled(M, out, False)
    assert into is out
    np.testing.assert_array_equal(M, before)  # not written without overwrite
    mine = M.copy()
    inplace = cov._matrix_back_compiled(mine, None, True)
    assert inplace is mine
    return [new, into, inplace]


@compiled
@pytest.mark.parametrize("rep", REPS)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("batch", [(3,), (40,)])  # the serial and the parallel kernel
def test_compiled_equals_numpy_for_every_convention(
    model: bridge.Model, name: str, rep: str, batch: tuple[int, ...]
) -> None:
    axioms.resolved(name)
    if not model.single_coordinate:
        pytest.skip(
            "the compiled T^T M T takes one base block and a permutation (joints of several "
            "coordinates: the block path, checked against the dense T by the axioms)"
        )
    rng = np.random.default_rng(NAMES.index(name) * 10 + REPS.index(rep))
    state = random_state(model, rng, rep, batch=batch)
    cov = velocity_change(model, state, rep, name)
    M = rng.normal(size=(*batch, model.nv, model.nv))  # any matrix (a Coriolis matrix is not symmetric)
    ref = cov._matrix_back_batch(M.copy(), None)
    for got in _three_ways(cov, M):
        assert_close(got, ref, 1e-12, f"{rep} -> {name}")
    T = np.broadcast_to(cov.matrix(), (*batch, model.nv, model.nv))
    assert_close(cov.matrix_back(M), np.swapaxes(T, -1, -2) @ M @ T, 1e-12, "T^T M T")


def test_some_conventions_permute_the_joints(model: bridge.Model) -> None:
    """The registry sweep above meets joint permutations (the model's DOF order is shuffled)."""
    state = random_state(model, np.random.default_rng(0), "mixed")
    perms = []
    for name in NAMES:
        if not axioms.available(name) or not axioms.takes(model, name):
            continue
        perms.append(velocity_change(model, state, "mixed", name).joints.perm is not None)
    assert any(perms) and not all(perms)


def _blocks(kind: str, lead: tuple[int, ...], rng: np.random.Generator) -> np.ndarray | None:
    if kind == "per state":
        return rng.normal(size=(*lead, 6, 6))
    if kind == "shared":  # one block broadcast over the batch (stride 0)
        return np.broadcast_to(rng.normal(size=(6, 6)), (*lead, 6, 6))
    if kind == "row":  # broadcast along the first batch axis only
        return np.broadcast_to(rng.normal(size=(1, *lead[1:], 6, 6)), (*lead, 6, 6))
    return None


@compiled
@pytest.mark.parametrize("kind", ["per state", "shared", "row", "identity"])
@pytest.mark.parametrize("permuted", [False, True])
@pytest.mark.parametrize("nb", [6, 0])
@pytest.mark.parametrize("lead", [(1,), (37,), (2, 3, 5)])
def test_compiled_equals_numpy_by_hand(kind: str, permuted: bool, nb: int, lead: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(lead) + 10 * nb + permuted)
    n = 9
    joints = JointOrder(rng.permutation(n) if permuted else None, n, nb)
    X = _blocks(kind, lead, rng)
    cov = ChangeOfVariables(X, None, joints)
    M = rng.normal(size=(*lead, nb + n, nb + n))
    ref = cov._matrix_back_batch(M.copy(), None)
    for got in _three_ways(cov, M):
        assert_close(got, ref, 1e-12, f"{kind}, permuted {permuted}, nb {nb}, {lead}")
    T = np.zeros((*lead, nb + n, nb + n))
    T[..., nb:, nb:] = joints.matrix()
    if nb:
        T[..., :6, :6] = np.eye(6) if X is None else X
    assert_close(ref, np.swapaxes(T, -1, -2) @ M @ T, 1e-12, "the reference is T^T M T")


@compiled
def test_what_the_kernel_does_not_take_goes_the_numpy_way() -> None:
    """float32 matrices, strided batches and base blocks that do not broadcast to the batch."""
    rng = np.random.default_rng(5)
    joints = JointOrder(rng.permutation(4), 4, 6)
    cov = ChangeOfVariables(rng.normal(size=(8, 6, 6)), None, joints)
    M = rng.normal(size=(8, 10, 10))
    assert cov._matrix_back_compiled(M.astype(np.float32), None, False) is None
    assert cov._matrix_back_compiled(np.swapaxes(M, -1, -2), None, False) is None
    assert_close(cov.matrix_back(M.astype(np.float32)), cov._matrix_back_batch(M, None), 1e-6, "float32")
    wide = ChangeOfVariables(rng.normal(size=(2, 8, 6, 6)), None, joints)  # X has more states than M
    assert wide._matrix_back_compiled(M, None, False) is None


def test_overwrite_on_the_numpy_path_writes_in_place() -> None:
    rng = np.random.default_rng(6)
    for perm in (None, rng.permutation(5)):
        cov = ChangeOfVariables(rng.normal(size=(4, 6, 6)), None, JointOrder(perm, 5, 6))
        M = rng.normal(size=(4, 11, 11))
        ref = cov._matrix_back_batch(M.copy(), None)
        mine = M.copy()
        got = cov._matrix_back_batch(mine, None, overwrite=True)
        assert got is mine
        assert_close(got, ref, 1e-15, "in place")


_NUMPY_ONLY = """
import json, numpy as np, bridge.backends.registry
from bridge import _numba
from bridge.conventions.change_of_variables import compiled_matrix_kernels
from bridge.conventions.convert import velocity_change
from bridge.derivatives.select import compiled_kernels
from bridge.backends.featherstone import compiled
from tests.helpers import random_state
model = bridge.random_model(7, seed=11)
rng = np.random.default_rng(3)
state = random_state(model, rng, "mixed", batch=(40,))
errors = []
for name in ("featherstone", "pinocchio", "inertial"):
    cov = velocity_change(model, state, "mixed", name)
    M = rng.normal(size=(40, model.nv, model.nv))
    T = cov.matrix()
    errors.append(float(np.abs(cov.matrix_back(M) - np.swapaxes(T, -1, -2) @ M @ T).max()))
print(json.dumps({"enabled": _numba.enabled(), "kernels": compiled_matrix_kernels() is not None,
                  "derivatives": compiled_kernels() is not None, "featherstone": compiled.available(),
                  "errors": errors}))
"""


def test_without_numba_the_numpy_path_gives_the_same_numbers() -> None:
    """``BRIDGE_NUMBA=0``: every compiled path off (one decision, :func:`bridge._numba.enabled`),
    and matrix_back still T^T M T."""
    env = {**os.environ, "BRIDGE_NUMBA": "0", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", _NUMPY_ONLY], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["enabled"] is False and res["kernels"] is False
    assert res["derivatives"] is False and res["featherstone"] is False
    assert max(res["errors"]) < 1e-10
