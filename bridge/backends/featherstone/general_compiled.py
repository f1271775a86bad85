"""The compiled (numba) path of the general engine's mass matrix and forward dynamics.

:class:`~.general_engine.GeneralEngine` asks :func:`mass_matrix` first: with numba installed, the
environment variable ``BRIDGE_NUMBA`` not ``0`` and outside :func:`.compiled.numpy_only`, it runs the
CRBA of :mod:`.numba_general` (parallel over the batch from :data:`.compiled.PARALLEL_MIN` states,
serial below, :func:`bridge._numba.launch`) on the world motion subspaces and inertias of
:func:`.general.kinematics`, with the engine's change of variables folded in, and returns the mass
matrices in the user's convention; otherwise None, and the numpy path (:func:`.general.crba`, then
``matrix_back``) runs. :func:`aba` likewise replaces :func:`.general.aba` (the change of variables
of the forces and accelerations stays with the engine, in numpy). Both paths give the same numbers
to rounding (the tests compare them to 1e-12).

:func:`crba` is the compiled :func:`.general.crba` itself (the neutral BODY form, no change of
variables), for the tests and benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

from bridge import _numba
from bridge._cache import per_model
from bridge.conventions.wide_change import WideChangeOfVariables

from . import compiled
from .general import GeneralTree, Kinematics

__all__ = ["PackedTree", "aba", "crba", "mass_matrix", "packed"]


def _import_kernels() -> ModuleType:
    from . import numba_general

    return numba_general


#: :mod:`.numba_general`, or None (numba missing, ``BRIDGE_NUMBA=0``, or the kernels failing to load:
#: then a :class:`bridge.BridgeWarning`); looked up once per process
_kernels = _numba.loader(
    _import_kernels, "the compiled general Featherstone kernels did not load ({}); the numpy path runs"
)


@dataclass(frozen=True, eq=False)
class PackedTree:
    """A :class:`~.general.GeneralTree` as the kernels take it: per body (depth-first, body 0 the
    base), int64 ``parent`` (-1: none), ``start`` and ``width`` (its joint's velocities
    ``start .. start + width`` in the tree's generalized velocity, width 0 to 6) and float64
    ``armature``."""

    parent: np.ndarray  # (nb,)
    start: np.ndarray  # (nb,)
    width: np.ndarray  # (nb,)
    armature: np.ndarray  # (nb,)


@per_model
def packed(tree: GeneralTree) -> PackedTree:
    """The tree's per-body data as contiguous arrays (made once per tree)."""
    i64 = np.int64
    bodies = tree.bodies
    return PackedTree(
        parent=np.array([b.parent for b in bodies], dtype=i64),
        start=np.array([b.v.start for b in bodies], dtype=i64),
        width=np.array([b.v.stop - b.v.start for b in bodies], dtype=i64),
        armature=np.array([b.armature for b in bodies], dtype=np.float64),
    )


def _available() -> ModuleType | None:
    """:mod:`.numba_general` when the compiled path is taken now, else None."""
    return _kernels() if compiled.available() else None


def _subspaces(tree: GeneralTree, kin: Kinematics) -> np.ndarray:
    """The world motion subspaces of every body side by side (N, 6, nv), the tree's velocity order."""
    N = kin.poses[0].shape[0]
    S = np.zeros((N, 6, tree.nv))
    for b, Si in zip(tree.bodies, kin.S, strict=True):
        if Si.shape[-1]:
            S[:, :, b.v] = Si
    return S


def _run(
    k: ModuleType, tree: GeneralTree, kin: Kinematics, S: np.ndarray, D: np.ndarray, col: np.ndarray
) -> np.ndarray:
    """The CRBA kernel of ``k`` on the batch (see :mod:`.numba_general` for ``S``, ``D``, ``col``)."""
    p = packed(tree)
    N = S.shape[0]
    inertias = np.ascontiguousarray(np.stack(kin.inertias, axis=1), dtype=np.float64)  # (N, nb, 6, 6)
    M = np.empty((N, tree.nv, tree.nv))
    _numba.launch(
        k.crba_par, k.crba_ser, N,
        p.parent, p.start, p.width, p.armature, col, np.ascontiguousarray(S, dtype=np.float64),
        inertias, D, M,
        minimum=compiled.PARALLEL_MIN,
    )  # fmt: skip
    return M


def crba(tree: GeneralTree, kin: Kinematics) -> np.ndarray | None:
    """:func:`.general.crba` (N, nv, nv) compiled, or None off the compiled path."""
    k = _available()
    if k is None:
        return None
    col = np.arange(tree.nv, dtype=np.int64)
    return _run(k, tree, kin, _subspaces(tree, kin), np.empty((0, 0, 6)), col)


def _joint_rows(tree: GeneralTree, change: WideChangeOfVariables, N: int) -> np.ndarray:
    """``D`` (N, nv, 6): each target velocity's row of T within its joint's block (identity rows for
    joints without a block), or (0, 0, 6) (the identity) when no joint with a block has armature."""
    armed = {b.v.start for b in tree.bodies if b.armature and b.v.stop > b.v.start}
    if not any(blk.offset in armed for blk in change.blocks):
        return np.empty((0, 0, 6))
    D = np.zeros((N, tree.nv, 6))
    for b in tree.bodies:
        k = b.v.stop - b.v.start
        if k:
            D[:, b.v, :k] = np.eye(k)
    for blk in change.blocks:
        D[:, blk.offset : blk.offset + blk.width, : blk.width] = blk.X
    return D


def mass_matrix(tree: GeneralTree, kin: Kinematics, change: object) -> np.ndarray | None:
    """``T^T (M + A) T`` (N, nv, nv): the mass matrices in the source convention of ``change`` (the
    engine's change of variables to the neutral BODY form, a
    :class:`~bridge.conventions.wide_change.WideChangeOfVariables` of a numpy batch), or None off
    the compiled path or for any other change of variables."""
    k = _available()
    if k is None or not isinstance(change, WideChangeOfVariables):
        return None
    S = change.jacobian_back(_subspaces(tree, kin))  # S_w T: the subspaces in the source's columns
    if not isinstance(S, np.ndarray):
        return None
    back = change.joints.back  # the target column of each source column
    col = np.arange(tree.nv) if back is None else np.argsort(back)
    D = _joint_rows(tree, change, S.shape[0])
    return _run(k, tree, kin, S, D, np.ascontiguousarray(col, dtype=np.int64))


def aba(
    tree: GeneralTree,
    kin: Kinematics,
    nu: np.ndarray,
    tau: np.ndarray,
    gravity: np.ndarray,
    fext: dict[int, np.ndarray] | None = None,
) -> np.ndarray | None:
    """:func:`.general.aba` (N, nv) compiled: ``nu_dot`` for the generalized forces ``tau`` (N, nv)
    at ``nu`` (N, nv) (the neutral BODY form), ``gravity`` (N, 3) and world forces ``fext``
    {body: (N, 6)}; None off the compiled path or when the result is not finite (a joint moving no
    inertia: the numpy path then says what it says in that case)."""
    k = _available()
    if k is None:
        return None
    p = packed(tree)
    S = _subspaces(tree, kin)
    N, nb = S.shape[0], len(tree.bodies)
    inertias = np.ascontiguousarray(np.stack(kin.inertias, axis=1), dtype=np.float64)  # (N, nb, 6, 6)
    a0 = np.zeros((N, 6))
    a0[:, :3] = -np.broadcast_to(gravity, (N, 3))
    F = np.zeros((N if fext else 0, nb, 6))
    for i, f in (fext or {}).items():
        F[:, i] = f
    out = np.empty((N, tree.nv))
    _numba.launch(
        k.aba_par, k.aba_ser, N,
        p.parent, p.start, p.width, p.armature, S, inertias,
        np.ascontiguousarray(nu, dtype=np.float64), np.ascontiguousarray(tau, dtype=np.float64),
        a0, F, out,
        minimum=compiled.PARALLEL_MIN,
    )  # fmt: skip
    return out if np.isfinite(out).all() else None
